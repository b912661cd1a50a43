/*
 * `go env`, asked once per go and environment (goenv.h).
 */
#include "compat.h"
#include "dir.h"
#include "goenv.h"
#include "json.h"
#include "run-command.h"
#include "strvec.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>

extern char **environ;

const char *const GOENV_NAMES[] = {
	"GOVERSION", "GOOS",	  "GOARCH",    "GOROOT",    "GOPROXY",
	"GOSUMDB",   "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOINSECURE",
	"GOAUTH",    "GOVCS",	  "GOENV",     "GOFLAGS",   NULL,
};

/* what the answer may take, at most: the answer is a few hundred bytes */
#define GOENV_TIMEOUT_MS 10000
#define GOENV_FILE_MAX (64 * 1024)
#define GOENV_MAGIC "gosbx goenv 1\n"

static int known_name(const char *name)
{
	size_t i;

	for (i = 0; GOENV_NAMES[i]; i++)
		if (!strcmp(GOENV_NAMES[i], name))
			return 1;
	return 0;
}

/* go as an absolute path: itself, or found on PATH. 0 or -1. */
static int locate(const char *go, struct strbuf *out)
{
	const char *path = getenv("PATH"), *p;

	if (strchr(go, '/')) {
		strbuf_addstr(out, go);
		return 0;
	}
	for (p = path ? path : ""; *p;) {
		size_t n = strcspn(p, ":");

		if (n) {
			strbuf_reset(out);
			strbuf_add(out, p, n);
			strbuf_addf(out, "/%s", go);
			if (!access(out->buf, X_OK))
				return 0;
		}
		p += n + (p[n] == ':');
	}
	strbuf_reset(out);
	return -1;
}

/* "<label> <path> <dev> <ino> <size> <mtime s.ns>" or "... none" */
static void key_file(struct strbuf *key, const char *label, const char *path)
{
	struct stat st;

	strbuf_addf(key, "%s %s", label, path);
	if (stat(path, &st) < 0)
		strbuf_addstr(key, " none\n");
	else
		strbuf_addf(key, " %llu %llu %lld %lld.%09ld\n",
			    (unsigned long long)st.st_dev,
			    (unsigned long long)st.st_ino,
			    (long long)st.st_size, (long long)st.st_mtim.tv_sec,
			    st.st_mtim.tv_nsec);
}

static int env_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int env_matters(const char *e)
{
	return (starts_with(e, "GO") && !starts_with(e, "GOTOOLCHAIN=")) ||
	       starts_with(e, "CGO_") || starts_with(e, "HOME=") ||
	       starts_with(e, "XDG_CONFIG_HOME=");
}

/*
 * The key of goenv.h for the go at real path bin into key: lines of
 * text. 0, or -1 when a value holds a newline (no disk copy then).
 */
static int make_key(const char *bin, struct strbuf *key)
{
	struct strvec env = STRVEC_INIT;
	struct strbuf p = STRBUF_INIT;
	const char *v, *home = getenv("HOME");
	char *slash;
	size_t i;
	int ret = 0;

	key_file(key, "go", bin);
	/* <GOROOT>/bin/go: the release's defaults in <GOROOT>/go.env */
	strbuf_addstr(&p, bin);
	for (i = 0; i < 2 && (slash = strrchr(p.buf, '/')); i++)
		strbuf_setlen(&p, slash - p.buf);
	strbuf_addstr(&p, "/go.env");
	key_file(key, "goroot-env", p.buf);
	strbuf_reset(&p);
	if ((v = getenv("GOENV")) && *v)
		strbuf_addstr(&p, v);
	else if ((v = getenv("XDG_CONFIG_HOME")) && *v == '/')
		strbuf_addf(&p, "%s/go/env", v);
	else if (home && *home == '/')
		strbuf_addf(&p, "%s/.config/go/env", home);
	if (p.len && strcmp(p.buf, "off"))
		key_file(key, "user-env", p.buf);
	for (i = 0; environ[i]; i++)
		if (env_matters(environ[i]))
			strvec_push(&env, environ[i]);
	qsort(env.v, env.nr, sizeof(*env.v), env_cmp);
	for (i = 0; i < env.nr; i++)
		strbuf_addf(key, "env %s\n", env.v[i]);
	if (memchr(key->buf, '\0', key->len) || strstr(key->buf, "\n\n"))
		ret = -1;
	for (i = 0; i < env.nr; i++)
		if (strchr(env.v[i], '\n'))
			ret = -1;
	strvec_clear(&env);
	strbuf_release(&p);
	return ret;
}

/* 64-bit FNV-1a of the key, to name its file */
static uint64_t fnv1a64(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* the disk copy's file for key, or -1 when there is none to use */
static int cache_file(const struct strbuf *key, struct strbuf *out)
{
	const char *off = getenv("GOSBX_GOENV_CACHE");
	const char *c = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (off && !strcmp(off, "off"))
		return -1;
	if (c && *c == '/')
		strbuf_addf(out, "%s/gosbx/goenv", c);
	else if (home && *home == '/')
		strbuf_addf(out, "%s/.cache/gosbx/goenv", home);
	else
		return -1;
	strbuf_addf(out, "/%016llx",
		    (unsigned long long)fnv1a64(key->buf, key->len));
	return 0;
}

/* The JSON of the disk copy at file when its key is key, else NULL. */
static json_t *cache_read(const char *file, const struct strbuf *key)
{
	struct strbuf sb = STRBUF_INIT;
	size_t head = strlen(GOENV_MAGIC);
	json_t *j = NULL;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return NULL;
	if (strbuf_read_fd(&sb, fd, 1024) >= 0 && sb.len < GOENV_FILE_MAX &&
	    sb.len > head + key->len + 1 &&
	    !memcmp(sb.buf, GOENV_MAGIC, head) &&
	    !memcmp(sb.buf + head, key->buf, key->len) &&
	    sb.buf[head + key->len] == '\n')
		j = json_parse(sb.buf + head + key->len + 1,
			       sb.len - head - key->len - 1, NULL);
	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	close(fd);
	strbuf_release(&sb);
	return j;
}

/* Keep the answer on disk; a failure only costs the next process. */
static void cache_write(const char *file, const struct strbuf *key,
			const struct strbuf *answer)
{
	struct strbuf tmp = STRBUF_INIT, dir = STRBUF_INIT;
	const char *slash = strrchr(file, '/');
	int fd;

	strbuf_add(&dir, file, slash - file);
	if (mkdir_p(dir.buf, 0700) < 0)
		goto out;
	strbuf_addf(&tmp, "%s.%d.tmp", file, (int)getpid());
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		goto out;
	if (write_in_full(fd, GOENV_MAGIC, strlen(GOENV_MAGIC)) < 0 ||
	    write_in_full(fd, key->buf, key->len) < 0 ||
	    write_in_full(fd, "\n", 1) < 0 ||
	    write_in_full(fd, answer->buf, answer->len) < 0 || close(fd) < 0 ||
	    rename(tmp.buf, file) < 0)
		unlink(tmp.buf);
out:
	strbuf_release(&tmp);
	strbuf_release(&dir);
}

/* Run `<bin> env -json <GOENV_NAMES>`; its JSON object, or NULL + why. */
static json_t *ask_go(const char *bin, struct strbuf *answer,
		      struct strbuf *why)
{
	struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
	struct strbuf msg = STRBUF_INIT;
	json_t *j = NULL;
	size_t i;
	int status;

	strvec_push(&argv, bin);
	strvec_push(&argv, "env");
	strvec_push(&argv, "-json");
	for (i = 0; GOENV_NAMES[i]; i++)
		strvec_push(&argv, GOENV_NAMES[i]);
	for (i = 0; environ[i]; i++)
		if (!starts_with(environ[i], "GOTOOLCHAIN="))
			strvec_push(&env, environ[i]);
	strvec_push(&env, "GOTOOLCHAIN=local");
	status = run_capture_in((const char *const *)argv.v,
				(const char *const *)env.v, "/", answer,
				GOENV_TIMEOUT_MS);
	if (!exited_ok(status)) {
		strbuf_trim(answer);
		strbuf_addf(why, "'%s env' failed%s%.200s", bin,
			    answer->len ? ": " : "", answer->buf);
	} else if (!(j = json_parse(answer->buf, answer->len, &msg)) ||
		   !json_is_object(j)) {
		strbuf_addf(why, "'%s env -json' answered no JSON object%s%s",
			    bin, msg.len ? ": " : "", msg.buf);
		json_decref(j);
		j = NULL;
	}
	strvec_clear(&argv);
	strvec_clear(&env);
	strbuf_release(&msg);
	return j;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct strbuf mem_key = STRBUF_INIT;
static json_t *mem_json;

/* The answer for go under the lock: borrowed from mem_json, or NULL. */
static json_t *answer_locked(const char *go, struct strbuf *why)
{
	struct strbuf bin = STRBUF_INIT, key = STRBUF_INIT;
	struct strbuf file = STRBUF_INIT, answer = STRBUF_INIT;
	char real[PATH_MAX];
	json_t *j = NULL;
	int on_disk;

	if (locate(go, &bin) < 0) {
		strbuf_addf(why, "no '%s' on PATH", go);
		goto out;
	}
	if (!realpath(bin.buf, real)) {
		strbuf_addf(why, "'%s': %s", bin.buf, strerror(errno));
		goto out;
	}
	on_disk = !make_key(real, &key) && !cache_file(&key, &file);
	if (mem_json && key.len == mem_key.len &&
	    !memcmp(key.buf, mem_key.buf, key.len)) {
		j = mem_json;
		goto out;
	}
	if (!on_disk || !(j = cache_read(file.buf, &key))) {
		j = ask_go(real, &answer, why);
		if (j && on_disk)
			cache_write(file.buf, &key, &answer);
	}
	if (j) {
		json_decref(mem_json);
		mem_json = j;
		strbuf_reset(&mem_key);
		strbuf_addbuf(&mem_key, &key);
	}
out:
	strbuf_release(&bin);
	strbuf_release(&key);
	strbuf_release(&file);
	strbuf_release(&answer);
	return j;
}

int goenv_lines(const char *go, const char *const *names, size_t n,
		struct strbuf *out, struct strbuf *why)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j;
	size_t i;
	int ret = -1;

	for (i = 0; i < n; i++)
		if (!known_name(names[i])) {
			strbuf_addf(why, "goenv: '%s' is not asked", names[i]);
			return -1;
		}
	pthread_mutex_lock(&lock);
	j = answer_locked(go, why);
	if (j) {
		for (i = 0; i < n; i++) {
			const char *v = json_object_str(j, names[i]);

			strbuf_addf(&sb, "%s\n", v ? v : "");
		}
		strbuf_addbuf(out, &sb);
		ret = 0;
	}
	pthread_mutex_unlock(&lock);
	strbuf_release(&sb);
	return ret;
}

int goenv_get(const char *go, const char *name, struct strbuf *out,
	      struct strbuf *why)
{
	struct strbuf sb = STRBUF_INIT;
	int ret = goenv_lines(go, &name, 1, &sb, why);

	if (!ret)
		strbuf_add(out, sb.buf, sb.len - 1);
	strbuf_release(&sb);
	return ret;
}
