/*
 * The shared, read-only build cache of the standard library (gostd.h).
 */
#include "compat.h"
#include "dir.h"
#include "goenv.h"
#include "local/gostd.h"
#include "run-command.h"
#include "strvec.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

/*
 * The trusted step: std built with the sandboxes' settings (isolate.c
 * build_bwrap_args(): CGO_ENABLED=0, GOFLAGS=-buildvcs=false, no go
 * env file) into <dir>.tmp, readable by every sandbox uid, then moved
 * into place in one rename. $1 the layer directory, $2 the go binary.
 */
static const char build_script[] =
	"set -e\n"
	"rm -rf \"$1.tmp\" \"$1.home\"\n"
	"mkdir -p \"$1.tmp\" \"$1.home\"\n"
	"HOME=\"$1.home\" GOCACHE=\"$1.tmp\" \"$2\" build std\n"
	"rm -rf \"$1.home\"\n"
	"chmod -R a+rX \"$1.tmp\"\n"
	"mv \"$1.tmp\" \"$1\"\n";

/* 32-bit FNV-1a, to name a GOROOT path in a directory name */
static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* the layer's name for go: "<GOVERSION>-<GOOS>-<GOARCH>-<hash>" */
static int layer_name(const char *go, struct strbuf *out)
{
	static const char *const names[] = { "GOVERSION", "GOOS", "GOARCH",
					     "GOROOT" };
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	struct strvec lines = STRVEC_INIT;
	int ret = -1;

	if (!goenv_lines(go, names, ARRAY_SIZE(names), &sb, &why)) {
		char *p = sb.buf, *nl;

		while ((nl = strchr(p, '\n'))) {
			*nl = '\0';
			strvec_push(&lines, p);
			p = nl + 1;
		}
	}
	if (lines.nr == 4 && starts_with(lines.v[0], "go") &&
	    lines.v[3][0] == '/' && !strchr(lines.v[0], '/') &&
	    !strchr(lines.v[1], '/') && !strchr(lines.v[2], '/')) {
		strbuf_addf(out, "%s-%s-%s-%08x", lines.v[0], lines.v[1],
			    lines.v[2], fnv1a(lines.v[3]));
		ret = 0;
	}
	strbuf_release(&sb);
	strbuf_release(&why);
	strvec_clear(&lines);
	return ret;
}

static int base_dir(struct strbuf *out)
{
	const char *c = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	const char *env = getenv("GOSBX_GOSTD_DIR");

	if (env && !strcmp(env, "off"))
		return -1;
	if (env && *env == '/')
		strbuf_addstr(out, env);
	else if (c && *c == '/')
		strbuf_addf(out, "%s/gosbx/gostd", c);
	else if (home && *home == '/')
		strbuf_addf(out, "%s/.cache/gosbx/gostd", home);
	else
		return -1;
	return 0;
}

/*
 * The build, in a grandchild of its own session (nobody waits for
 * it), at a low priority, holding <dir>.lock so that one runs at once.
 * Async-signal-safe calls only after fork.
 */
static void start_build(const char *go, const char *dir)
{
	struct strbuf lock = STRBUF_INIT, log = STRBUF_INIT;
	const char *argv[] = { "/bin/sh", "-c", build_script, "sh",
			       dir,	  go,	NULL };
	static const char *const envp[] = { "PATH=/usr/bin:/bin",
					    "GOENV=off",
					    "CGO_ENABLED=0",
					    "GOFLAGS=-buildvcs=false",
					    "GOTOOLCHAIN=local",
					    "LANG=C.UTF-8",
					    NULL };
	int status;
	pid_t pid;

	strbuf_addf(&lock, "%s.lock", dir);
	strbuf_addf(&log, "%s.log", dir);
	pid = fork();
	if (!pid) {
		int lfd, out;

		if (setsid() < 0 || fork() != 0)
			_exit(0);
		/*
		 * not the caller's directory: the build outlives the
		 * caller, and would keep its directory (or a mount under
		 * it) busy and pass for one of its processes
		 */
		if (chdir("/") < 0)
			_exit(1);
		lfd = open(lock.buf, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0)
			_exit(0);
		/* held across exec: the lock lives as long as the build */
		fcntl(lfd, F_SETFD, 0);
		out = open(log.buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (out < 0)
			_exit(1);
		dup2(out, 1);
		dup2(out, 2);
		close(0);
		open("/dev/null", O_RDONLY);
		umask(022);
		setpriority(PRIO_PROCESS, 0, 10);
		execve(argv[0], (char *const *)argv, (char *const *)envp);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	strbuf_release(&lock);
	strbuf_release(&log);
}

int gostd_layer_find(const char *go, struct strbuf *dir)
{
	struct strbuf name = STRBUF_INIT, base = STRBUF_INIT;
	struct stat st;
	int ret = 0;

	strbuf_reset(dir);
	if (layer_name(go, &name) < 0 || base_dir(&base) < 0)
		goto out;
	strbuf_addf(dir, "%s/%s", base.buf, name.buf);
	ret = !stat(dir->buf, &st) && S_ISDIR(st.st_mode);
out:
	strbuf_release(&name);
	strbuf_release(&base);
	return ret;
}

int gostd_layer(const char *go, struct strbuf *dir)
{
	struct strbuf base = STRBUF_INIT;
	int ret = gostd_layer_find(go, dir);

	if (ret || !dir->len)
		return ret;
	/* the layer's parent, for start_build()'s lock and log */
	strbuf_addbuf(&base, dir);
	strbuf_setlen(&base, strrchr(base.buf, '/') - base.buf);
	if (!mkdir_p(base.buf, 0755))
		start_build(go, dir->buf);
	strbuf_reset(dir);
	strbuf_release(&base);
	return 0;
}
