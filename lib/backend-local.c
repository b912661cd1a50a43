/*
 * The local backend: a sandbox is a claim directory plus a resident
 * gosbx-runtime inside bubblewrap, seccomp and cgroups (isolate.h),
 * listening on a unix socket in the claim directory.
 */
#include "compat.h"
#include "claims.h"
#include "doctor.h"
#include "backend-local.h"
#include "dir.h"
#include "http.h"
#include "isolate.h"
#include "session.h"
#include "storage.h"
#include "usage.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#define DEFAULT_TTL_MS (3600 * 1000)
#define READY_TIMEOUT_MS 15000
#define SANDBOX_RUN_DIR "/run/gosbx"
#define SANDBOX_RUNTIME "/opt/gosbx/gosbx-runtime"

struct local_state {
	struct strbuf dir; /* the claim directory */
	int run_fd;	   /* O_PATH descriptor of dir/run, or -1 */
	struct isolate_handle h;
	int have_handle;
	uint64_t oom_before;
};

const char *local_claim_status_name(enum local_claim_status s)
{
	switch (s) {
	case LOCAL_CLAIM_READY:
		return "ready";
	case LOCAL_CLAIM_EXPIRED:
		return "expired";
	default:
		return "dead";
	}
}

int local_claims_dir(struct strbuf *out)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");

	if (state && *state == '/')
		strbuf_addf(out, "%s/gosbx/claims", state);
	else if (home && *home)
		strbuf_addf(out, "%s/.local/state/gosbx/claims", home);
	else
		return error("cannot find the state directory: neither "
			     "XDG_STATE_HOME nor HOME is set");
	return 0;
}

int local_find_runtime(struct strbuf *out)
{
	const char *env = getenv("GOSBX_RUNTIME");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		if (access(env, X_OK) < 0)
			return error_errno("GOSBX_RUNTIME '%s'", env);
		strbuf_addstr(out, env);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			struct strbuf p = STRBUF_INIT;
			strbuf_add(&p, self, slash - self + 1);
			strbuf_addstr(&p, "gosbx-runtime");
			if (!access(p.buf, X_OK)) {
				strbuf_addbuf(out, &p);
				strbuf_release(&p);
				return 0;
			}
			strbuf_release(&p);
		}
	}
	{
		const char *path = getenv("PATH");
		struct strbuf p = STRBUF_INIT;

		while (path && *path) {
			const char *colon = strchrnul(path, ':');
			strbuf_reset(&p);
			strbuf_add(&p, path, colon - path);
			strbuf_addstr(&p, "/gosbx-runtime");
			if (!access(p.buf, X_OK)) {
				strbuf_addbuf(out, &p);
				strbuf_release(&p);
				return 0;
			}
			path = *colon ? colon + 1 : colon;
		}
		strbuf_release(&p);
	}
	return error("cannot find gosbx-runtime (install it next to gosbx, "
		     "on PATH, or set GOSBX_RUNTIME)");
}

/* "key value" lines of the meta file */
static const char *meta_get(const char *text, const char *key,
			    struct strbuf *val)
{
	size_t klen = strlen(key);
	const char *p = text;

	strbuf_reset(val);
	while (p && *p) {
		const char *eol = strchrnul(p, '\n');
		if (!strncmp(p, key, klen) && p[klen] == ' ') {
			strbuf_add(val, p + klen + 1, eol - p - klen - 1);
			return val->buf;
		}
		p = *eol ? eol + 1 : NULL;
	}
	return NULL;
}

static int64_t meta_int(const char *text, const char *key, int64_t def)
{
	struct strbuf v = STRBUF_INIT;
	int64_t n = def;

	if (meta_get(text, key, &v))
		n = strtoll(v.buf, NULL, 10);
	strbuf_release(&v);
	return n;
}

static int write_file_atomic(const char *path, const char *data, size_t len)
{
	struct strbuf tmp = STRBUF_INIT;
	int fd, ret = -1;

	strbuf_addf(&tmp, "%s.tmp", path);
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		error_errno("cannot write '%s'", tmp.buf);
		goto out;
	}
	if (write_in_full(fd, data, len) < 0 || close(fd) < 0) {
		error_errno("cannot write '%s'", tmp.buf);
		unlink(tmp.buf);
		goto out;
	}
	if (rename(tmp.buf, path) < 0) {
		error_errno("cannot rename '%s'", tmp.buf);
		unlink(tmp.buf);
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&tmp);
	return ret;
}

/* five random characters that read well */
static void add_random(struct strbuf *out)
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	unsigned char rnd[5];

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		uint64_t t = monotonic_us() ^ (uint64_t)getpid() << 20;
		memcpy(rnd, &t, sizeof(rnd));
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		strbuf_addch(out, alphabet[rnd[i] % (sizeof(alphabet) - 1)]);
}

static void generate_name(struct strbuf *out)
{
	strbuf_addstr(out, "sandbox-");
	add_random(out);
}

static void log_tail(const char *path, struct strbuf *out)
{
	struct strbuf log = STRBUF_INIT;
	const char *start;
	int lines = 0;

	if (strbuf_read_file(&log, path, 0) <= 0)
		goto out;
	strbuf_rtrim(&log);
	start = log.buf + log.len;
	while (start > log.buf && lines < 3) {
		start--;
		if (*start == '\n')
			lines++;
	}
	if (*start == '\n')
		start++;
	strbuf_addstr(out, start);
out:
	strbuf_release(&log);
}

/*
 * The host path of the runtime's socket. A unix socket address holds at
 * most 107 bytes, and claims can live deep in the file system: past
 * that, the socket is reached through /proc/self/fd/<fd of run/>, a
 * short name for the same directory.
 */
static int socket_path(struct local_state *ls, struct strbuf *out)
{
	struct sockaddr_un sun;

	strbuf_reset(out);
	strbuf_addf(out, "%s/run/runtime.sock", ls->dir.buf);
	if (out->len < sizeof(sun.sun_path))
		return 0;
	if (ls->run_fd < 0) {
		struct strbuf run = STRBUF_INIT;

		strbuf_addf(&run, "%s/run", ls->dir.buf);
		ls->run_fd = open(run.buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
		strbuf_release(&run);
		if (ls->run_fd < 0)
			return error_errno("cannot open '%s/run'", ls->dir.buf);
	}
	strbuf_reset(out);
	strbuf_addf(out, "/proc/self/fd/%d/runtime.sock", ls->run_fd);
	return 0;
}

static int socket_ready(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, ok;

	if (strlen(path) >= sizeof(sun.sun_path))
		return 0;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	ok = !connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	return ok;
}

static int connect_runtime(struct session *s, struct local_state *ls)
{
	struct http_client_opts ho = { 0 };
	struct strbuf sock = STRBUF_INIT;

	if (socket_path(ls, &sock) < 0) {
		strbuf_release(&sock);
		return -1;
	}
	ho.unix_socket = sock.buf;
	ho.connect_timeout_ms = 5000;
	s->http = http_client_new("http://localhost", &ho);
	strbuf_release(&sock);
	return s->http ? 0 : -1;
}

static enum local_claim_status claim_status(const char *dir, const char *meta,
					    struct isolate_handle *h)
{
	struct strbuf marker = STRBUF_INIT;
	enum local_claim_status st;

	if (isolate_state_parse(h, meta) == 0 && isolate_alive(h)) {
		st = LOCAL_CLAIM_READY;
	} else {
		strbuf_addf(&marker, "%s/run/expired", dir);
		st = access(marker.buf, F_OK) ? LOCAL_CLAIM_DEAD
					      : LOCAL_CLAIM_EXPIRED;
	}
	strbuf_release(&marker);
	return st;
}

static int reattach(struct session *s, struct local_state *ls, const char *name)
{
	struct strbuf meta = STRBUF_INIT, path = STRBUF_INIT;
	int ret = -1;

	strbuf_addf(&path, "%s/meta", ls->dir.buf);
	if (strbuf_read_file(&meta, path.buf, 0) < 0) {
		if (errno == ENOENT)
			error("no such claim '%s'", name);
		else
			error_errno("cannot read '%s'", path.buf);
		goto out;
	}
	isolate_handle_init(&ls->h);
	ls->have_handle = 1;
	switch (claim_status(ls->dir.buf, meta.buf, &ls->h)) {
	case LOCAL_CLAIM_READY:
		break;
	case LOCAL_CLAIM_EXPIRED:
		error("claim '%s' expired after being idle for its TTL; "
		      "remove it with 'gosbx close %s'",
		      name, name);
		goto out;
	default: {
		struct strbuf log = STRBUF_INIT, tail = STRBUF_INIT;
		strbuf_addf(&log, "%s/runtime.log", ls->dir.buf);
		log_tail(log.buf, &tail);
		error("claim '%s' is dead: its runtime is gone%s%s; remove it "
		      "with 'gosbx close %s'",
		      name, tail.len ? ", last log: " : "", tail.buf, name);
		strbuf_release(&log);
		strbuf_release(&tail);
		goto out;
	}
	}
	s->claim = xstrdup(name);
	ret = connect_runtime(s, ls);
out:
	strbuf_release(&meta);
	strbuf_release(&path);
	return ret;
}

static void touch_claim(const char *dir)
{
	struct strbuf p = STRBUF_INIT;
	int fd;

	strbuf_addf(&p, "%s/last-used", dir);
	fd = open(p.buf, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
	strbuf_release(&p);
}

/*
 * As root the sandbox runs as a host uid of its own (isolate.h): reserve
 * it and give it run/; the claim's storage (app/, home/ with the Go
 * caches, tmp/) is given to it by storage_create() (storage.h).
 */
static int give_claim(struct isolate_config *cfg, const char *dir)
{
	/* app/, home/ and tmp/ are storage_create()'s (owner, group) */
	static const char *const subdirs[] = { "run" };
	struct strbuf p = STRBUF_INIT;
	size_t i;
	int ret = -1;

	if (isolate_reserve_ids(cfg) < 0)
		return -1;
	if (cfg->host_uid == geteuid())
		return 0;
	for (i = 0; i < ARRAY_SIZE(subdirs); i++) {
		strbuf_reset(&p);
		strbuf_addf(&p, "%s/%s", dir, subdirs[i]);
		if (mkdir(p.buf, 0755) < 0 && errno != EEXIST) {
			error_errno("cannot create '%s'", p.buf);
			goto out;
		}
		if (isolate_chown_tree(cfg, p.buf) < 0)
			goto out;
	}
	ret = 0;
out:
	strbuf_release(&p);
	return ret;
}

static int create_claim(struct session *s, struct local_state *ls,
			const struct session_opts *o, const char *name)
{
	struct isolate_config cfg;
	struct strbuf p = STRBUF_INIT, runtime = STRBUF_INIT;
	struct strbuf meta = STRBUF_INIT, sock = STRBUF_INIT;
	struct strbuf cgname = STRBUF_INIT;
	struct storage_opts so = STORAGE_OPTS_INIT;
	struct strbuf templates = STRBUF_INIT;
	struct storage st;
	int64_t ttl = o->ttl_ms > 0 ? o->ttl_ms : DEFAULT_TTL_MS;
	int log_fd = -1, ret = -1, created = 0;
	uint64_t deadline;

	storage_init(&st);
	if (local_find_runtime(&runtime) < 0)
		return -1;
	if (mkdir(ls->dir.buf, 0700) < 0) {
		if (errno == EEXIST)
			error("claim '%s' already exists", name);
		else
			error_errno("cannot create claim directory '%s'",
				    ls->dir.buf);
		goto out;
	}
	created = 1;
	strbuf_addf(&p, "%s/run", ls->dir.buf);
	if (mkdir(p.buf, 0755) < 0) {
		error_errno("cannot create '%s'", p.buf);
		goto out;
	}
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/runtime.log", ls->dir.buf);
	log_fd = open(p.buf, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (log_fd < 0) {
		error_errno("cannot create '%s'", p.buf);
		goto out;
	}

	isolate_config_init(&cfg);
	if (give_claim(&cfg, ls->dir.buf) < 0) {
		isolate_config_release(&cfg);
		goto out;
	}
	/*
	 * /app, HOME (the Go caches) and /tmp: the claim's own storage,
	 * owned by the sandbox's host ids (as root a uid of its own)
	 */
	if (cfg.host_uid != geteuid()) {
		so.owner = cfg.host_uid;
		so.group = cfg.host_gid;
	}
	so.disk_bytes = o->disk_bytes;
	so.disk_explicit = o->disk_bytes > 0;
	/* formatted images to copy: <state>/gosbx/disk-templates */
	if (!local_claims_dir(&templates)) {
		strbuf_setlen(&templates, templates.len - strlen("claims"));
		strbuf_addstr(&templates, "disk-templates");
		so.template_dir = templates.buf;
	}
	if (storage_create(&st, ls->dir.buf, &so) < 0) {
		isolate_config_release(&cfg);
		goto out;
	}

	/*
	 * Cgroups (and systemd scopes) live in one namespace for the whole
	 * machine while claim names are only unique per state directory:
	 * a random suffix keeps two claims of the same name (other users,
	 * other XDG_STATE_HOME) from sharing, and killing, one group.
	 */
	strbuf_addf(&cgname, "%s-", name);
	add_random(&cgname);
	cfg.claim_name = cgname.buf;
	cfg.claim_dir = st.app.buf;
	cfg.home_dir = st.home.buf;
	cfg.tmp_dir = st.tmp.len ? st.tmp.buf : NULL;
	cfg.default_skipped = st.skipped.len ? st.skipped.buf : NULL;
	cfg.network = o->network;
	cfg.die_with_parent = 0;
	cfg.memory_bytes = o->memory_bytes < 0 ? 0
			   : o->memory_bytes   ? o->memory_bytes
					       : SESSION_DEFAULT_MEMORY;
	cfg.memory_explicit = o->memory_set && o->memory_bytes > 0;
	cfg.pids = o->pids < 0 ? 0 : o->pids ? o->pids : SESSION_DEFAULT_PIDS;
	cfg.pids_explicit = o->pids_set && o->pids > 0;
	cfg.cpus = o->cpus < 0	 ? 0
		   : o->cpus > 0 ? o->cpus
				 : SESSION_DEFAULT_CPUS;
	cfg.cpus_explicit = o->cpus_set && o->cpus > 0;
	strvec_pushf(&cfg.ro_binds, "%s:" SANDBOX_RUNTIME, runtime.buf);
	strvec_pushf(&cfg.rw_binds, "%s/run:" SANDBOX_RUN_DIR, ls->dir.buf);
	strvec_push(&cfg.argv, SANDBOX_RUNTIME);
	strvec_push(&cfg.argv, "--addr=unix:" SANDBOX_RUN_DIR "/runtime.sock");
	strvec_push(&cfg.argv, "--workdir=/app");
	strvec_pushf(&cfg.argv, "--idle-timeout=%" PRId64 "ms", ttl);
	strvec_push(&cfg.argv, "--expired-file=" SANDBOX_RUN_DIR "/expired");
	strvec_push(&cfg.argv, "--shutdown-grace=1s");
	cfg.stdin_fd = -1;
	cfg.stdout_fd = log_fd;
	cfg.stderr_fd = log_fd;
	/* sanitizer builds: keep their reports in the log */
	if (getenv("ASAN_OPTIONS"))
		strvec_pushf(&cfg.env, "ASAN_OPTIONS=%s",
			     getenv("ASAN_OPTIONS"));
	if (getenv("UBSAN_OPTIONS"))
		strvec_pushf(&cfg.env, "UBSAN_OPTIONS=%s",
			     getenv("UBSAN_OPTIONS"));

	isolate_handle_init(&ls->h);
	ls->have_handle = 1;
	if (isolate_spawn(&cfg, &ls->h) < 0) {
		isolate_config_release(&cfg);
		ls->have_handle = 0;
		goto out;
	}
	isolate_config_release(&cfg);

	strbuf_addf(&meta,
		    "name %s\ncreated %lld\nttl_ms %" PRId64
		    "\nnetwork %d\nkeep %d\npurpose %s\n",
		    name, (long long)time(NULL), ttl, o->network, o->keep,
		    o->purpose ? o->purpose : "");
	isolate_state_format(&ls->h, &meta);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/meta", ls->dir.buf);
	if (write_file_atomic(p.buf, meta.buf, meta.len) < 0)
		goto out;
	touch_claim(ls->dir.buf);

	/* wait for the runtime's socket */
	if (socket_path(ls, &sock) < 0)
		goto out;
	deadline = monotonic_ms() + READY_TIMEOUT_MS;
	for (unsigned spins = 0;; spins++) {
		int status;

		if (socket_ready(sock.buf))
			break;
		if (isolate_wait(&ls->h, 0, &status) == 1 ||
		    monotonic_ms() > deadline) {
			struct strbuf tail = STRBUF_INIT;
			strbuf_reset(&p);
			strbuf_addf(&p, "%s/runtime.log", ls->dir.buf);
			log_tail(p.buf, &tail);
			error("cannot create sandbox: the runtime %s%s%s",
			      monotonic_ms() > deadline
				      ? "did not start in time"
				      : "exited at start",
			      tail.len ? ": " : "", tail.buf);
			strbuf_release(&tail);
			goto out;
		}
		usleep(spins < 50 ? 200 : 2000);
	}
	s->claim = xstrdup(name);
	ret = connect_runtime(s, ls);
out:
	if (log_fd >= 0)
		close(log_fd);
	if (ret < 0 && created) {
		if (ls->have_handle)
			isolate_release(&ls->h);
		ls->have_handle = 0;
		storage_unmount(ls->dir.buf);
		remove_tree(ls->dir.buf);
	}
	storage_release(&st);
	strbuf_release(&templates);
	strbuf_release(&p);
	strbuf_release(&runtime);
	strbuf_release(&meta);
	strbuf_release(&sock);
	strbuf_release(&cgname);
	return ret;
}

static void local_state_free(struct session *s)
{
	struct local_state *ls = s->backend;

	if (!ls)
		return;
	if (ls->have_handle)
		isolate_handle_free(&ls->h);
	if (ls->run_fd >= 0)
		close(ls->run_fd);
	strbuf_release(&ls->dir);
	free(ls);
	s->backend = NULL;
}

static int local_open(struct session *s, const struct session_opts *o)
{
	struct local_state *ls = xcalloc(1, sizeof(*ls));
	struct strbuf name = STRBUF_INIT;
	int ret;

	strbuf_init(&ls->dir, 0);
	ls->run_fd = -1;
	s->backend = ls;
	if (o->claim)
		strbuf_addstr(&name, o->claim);
	else if (o->name)
		strbuf_addstr(&name, o->name);
	else
		generate_name(&name);
	if (session_check_claim_name(name.buf) < 0 ||
	    local_claims_dir(&ls->dir) < 0 || mkdir_p(ls->dir.buf, 0700) < 0) {
		if (errno)
			error_errno("cannot create '%s'", ls->dir.buf);
		ret = -1;
		goto out;
	}
	strbuf_addf(&ls->dir, "/%s", name.buf);
	if (o->claim)
		ret = reattach(s, ls, name.buf);
	else
		ret = create_claim(s, ls, o, name.buf);
out:
	if (ret < 0)
		local_state_free(s);
	strbuf_release(&name);
	return ret;
}

static int delete_dir_claim(const char *dir, const char *name)
{
	struct strbuf meta = STRBUF_INIT, p = STRBUF_INIT;
	struct isolate_handle h;
	int ret = 0;

	strbuf_addf(&p, "%s/meta", dir);
	isolate_handle_init(&h);
	if (strbuf_read_file(&meta, p.buf, 0) >= 0 &&
	    !isolate_state_parse(&h, meta.buf)) {
		if (isolate_release(&h) < 0)
			ret = -1;
	} else {
		isolate_handle_free(&h);
	}
	if (storage_unmount(dir) < 0)
		ret = -1;
	if (remove_tree(dir) < 0)
		ret = error("cannot remove claim directory '%s'", dir);
	strbuf_release(&meta);
	strbuf_release(&p);
	return ret;
}

static int local_destroy(struct session *s)
{
	struct local_state *ls = s->backend;
	int ret;

	if (!ls)
		return 0;
	if (ls->have_handle) {
		/* isolate_release() kills, reaps and removes cgroups */
		ret = isolate_release(&ls->h);
		ls->have_handle = 0;
		if (storage_unmount(ls->dir.buf) < 0)
			ret = -1;
		if (remove_tree(ls->dir.buf) < 0)
			ret = error("cannot remove claim directory '%s'",
				    ls->dir.buf);
	} else {
		ret = delete_dir_claim(ls->dir.buf, s->claim);
	}
	local_state_free(s);
	return ret;
}

static void local_detach(struct session *s)
{
	local_state_free(s);
}

static void local_touch(struct session *s)
{
	struct local_state *ls = s->backend;

	if (ls)
		touch_claim(ls->dir.buf);
}

static void local_exec_hook(struct session *s, int after,
			    struct session_result *res)
{
	struct local_state *ls = s->backend;
	uint64_t n = 0;

	if (!ls || !ls->have_handle)
		return;
	if (!after) {
		if (isolate_oom_kills(&ls->h, &ls->oom_before) < 0)
			ls->oom_before = UINT64_MAX;
		return;
	}
	if (ls->oom_before == UINT64_MAX ||
	    (strcmp(res->reason, "signaled") && strcmp(res->reason, "exited")))
		return;
	if (!(res->signal == 9 || res->exit_code == 137))
		return;
	if (!isolate_oom_kills(&ls->h, &n) && n > ls->oom_before)
		res->reason = "oom";
}

static int local_op_delete(const struct session_opts *opts, const char *name);
static int local_op_keep(const struct session_opts *opts, const char *name);
static int local_op_delete_all(const struct session_opts *opts,
			       void (*closed)(const char *name, void *data),
			       void *data);

const struct backend_ops backend_local = {
	.name = "local",
	.delete_claim = local_op_delete,
	.keep_claim = local_op_keep,
	.delete_all = local_op_delete_all,
	.open = local_open,
	.destroy = local_destroy,
	.detach = local_detach,
	.touch = local_touch,
	.exec_hook = local_exec_hook,
	.list = local_claims_print,
	.prune = local_claims_prune,
	.doctor = doctor_local,
};

int local_claim_delete(const char *name)
{
	struct strbuf dir = STRBUF_INIT;
	struct stat st;
	int ret = -1;

	if (session_check_claim_name(name) < 0 || local_claims_dir(&dir) < 0)
		goto out;
	strbuf_addf(&dir, "/%s", name);
	if (lstat(dir.buf, &st) < 0 || !S_ISDIR(st.st_mode)) {
		error("no such claim '%s'", name);
		goto out;
	}
	ret = delete_dir_claim(dir.buf, name);
out:
	strbuf_release(&dir);
	return ret;
}

static int64_t tree_bytes;
static int add_bytes(const char *path, const struct stat *st, int flag,
		     struct FTW *ftw)
{
	if (flag == FTW_F || flag == FTW_SL || flag == FTW_D)
		tree_bytes += (int64_t)st->st_blocks * 512;
	return 0;
}

static int cmp_info(const void *a, const void *b)
{
	return strcmp(((const struct local_claim_info *)a)->name,
		      ((const struct local_claim_info *)b)->name);
}

int local_claims_list(struct local_claim_info **out, size_t *nr, int with_size)
{
	struct strbuf dir = STRBUF_INIT, p = STRBUF_INIT;
	struct strbuf meta = STRBUF_INIT, v = STRBUF_INIT;
	struct local_claim_info *list = NULL;
	size_t n = 0, alloc = 0;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	*nr = 0;
	if (local_claims_dir(&dir) < 0)
		return -1;
	d = opendir(dir.buf);
	if (!d) {
		int ret = 0;

		if (errno != ENOENT)
			ret = error_errno("cannot read '%s'", dir.buf);
		strbuf_release(&dir);
		return ret;
	}
	while ((de = readdir(d))) {
		struct local_claim_info *c;
		struct isolate_handle h;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		strbuf_reset(&p);
		strbuf_addf(&p, "%s/%s/meta", dir.buf, de->d_name);
		strbuf_reset(&meta);
		if (strbuf_read_file(&meta, p.buf, 0) < 0)
			continue; /* being created or deleted */
		ALLOC_GROW(list, n + 1, alloc);
		c = &list[n++];
		memset(c, 0, sizeof(*c));
		c->name = xstrdup(de->d_name);
		c->created = meta_int(meta.buf, "created", 0);
		c->ttl_ms = meta_int(meta.buf, "ttl_ms", DEFAULT_TTL_MS);
		c->network = meta_int(meta.buf, "network", 0);
		c->keep = meta_int(meta.buf, "keep", 0);
		c->purpose =
			xstrdup(meta_get(meta.buf, "purpose", &v) ? v.buf : "");
		strbuf_reset(&p);
		strbuf_addf(&p, "%s/%s", dir.buf, de->d_name);
		isolate_handle_init(&h);
		c->status = claim_status(p.buf, meta.buf, &h);
		isolate_handle_free(&h);
		strbuf_addstr(&p, "/last-used");
		c->last_used = !stat(p.buf, &st) ? st.st_mtime : c->created;
		c->app_bytes = -1;
		if (with_size) {
			struct storage sto;

			strbuf_setlen(&p, p.len - strlen("/last-used"));
			storage_init(&sto);
			storage_paths(&sto, p.buf);
			tree_bytes = 0;
			nftw(sto.app.buf, add_bytes, 16, FTW_PHYS);
			storage_release(&sto);
			c->app_bytes = tree_bytes;
		}
	}
	closedir(d);
	if (n)
		qsort(list, n, sizeof(*list), cmp_info);
	*out = list;
	*nr = n;
	strbuf_release(&dir);
	strbuf_release(&p);
	strbuf_release(&meta);
	strbuf_release(&v);
	return 0;
}

void local_claims_free(struct local_claim_info *c, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		free(c[i].name);
		free(c[i].purpose);
	}
	free(c);
}

/* ---- backend_ops that work on claims without a session ---- */

static int local_op_delete(const struct session_opts *opts, const char *name)
{
	(void)opts;
	return local_claim_delete(name);
}

/* --disconnect: nothing to drop, the claim only has to exist */
static int local_op_keep(const struct session_opts *opts, const char *name)
{
	struct strbuf dir = STRBUF_INIT;
	struct stat st;
	int ret = -1;

	(void)opts;
	if (local_claims_dir(&dir) < 0)
		goto out;
	strbuf_addf(&dir, "/%s", name);
	if (lstat(dir.buf, &st) < 0 || !S_ISDIR(st.st_mode)) {
		error("no such claim '%s'", name);
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&dir);
	return ret;
}

static int local_op_delete_all(const struct session_opts *opts,
			       void (*closed)(const char *name, void *data),
			       void *data)
{
	struct local_claim_info *list;
	size_t nr;
	int ret = 0;

	(void)opts;
	if (local_claims_list(&list, &nr, 0) < 0)
		return -1;
	for (size_t i = 0; i < nr; i++) {
		if (local_claim_delete(list[i].name) < 0)
			ret = -1;
		else if (closed)
			closed(list[i].name, data);
	}
	local_claims_free(list, nr);
	return ret;
}
