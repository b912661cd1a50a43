#include "compat.h"
#include "local/cgroup.h"
#include "usage.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define CPU_PERIOD_US 100000

static const char *const ctl_names[CGROUP_NR_CTL] = { "memory", "pids", "cpu" };

/* a v1 file that proves the directory is that controller's hierarchy */
static const char *const v1_probe[CGROUP_NR_CTL] = { "memory.limit_in_bytes",
						     "pids.max",
						     "cpu.cfs_quota_us" };

/*
 * While cgroup_create_why() runs, setup errors go to this buffer
 * instead of error() (one thread at a time per buffer).
 */
static __thread struct strbuf *why_buf;

static int PRINTF_LIKE(2, 3) setup_error(int with_errno, const char *fmt, ...)
{
	int e = errno;
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	if (with_errno)
		strbuf_addf(&msg, ": %s", strerror(e));
	if (why_buf) {
		strbuf_reset(why_buf);
		strbuf_addbuf(why_buf, &msg);
	} else {
		error("%s", msg.buf);
	}
	strbuf_release(&msg);
	errno = e;
	return -1;
}

const char *cgroup_ctl_name(enum cgroup_ctl c)
{
	return c < CGROUP_NR_CTL ? ctl_names[c] : "?";
}

const char *cgroup_layout_name(enum cgroup_layout l)
{
	switch (l) {
	case CGROUP_LAYOUT_V1:
		return "v1";
	case CGROUP_LAYOUT_V2:
		return "v2";
	case CGROUP_LAYOUT_HYBRID:
		return "hybrid";
	default:
		return "none";
	}
}

static int path_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

static int fs_is(const char *path, long magic)
{
	struct statfs sf;

	return !statfs(path, &sf) && (long)sf.f_type == magic;
}

/* parse a v2 cgroup.controllers (or subtree_control) line into bits */
static unsigned parse_ctl_list(const char *s)
{
	unsigned bits = 0;

	while (*s) {
		size_t n;
		int c;

		while (*s == ' ' || *s == '\n' || *s == '+')
			s++;
		n = strcspn(s, " \n");
		for (c = 0; c < CGROUP_NR_CTL; c++)
			if (strlen(ctl_names[c]) == n &&
			    !strncmp(s, ctl_names[c], n))
				bits |= CGROUP_BIT(c);
		s += n;
	}
	return bits;
}

static unsigned read_ctl_file(const char *dir, const char *file)
{
	struct strbuf path = STRBUF_INIT, sb = STRBUF_INIT;
	unsigned bits = 0;

	strbuf_addf(&path, "%s/%s", dir, file);
	if (strbuf_read_file(&sb, path.buf, 128) >= 0)
		bits = parse_ctl_list(sb.buf);
	strbuf_release(&path);
	strbuf_release(&sb);
	return bits;
}

int cgroup_host_detect(struct cgroup_host *host)
{
	const char *env = getenv("GOSBX_CGROUP_ROOT");
	const char *root = env && *env ? env : "/sys/fs/cgroup";
	struct strbuf sb = STRBUF_INIT;
	int c, have_v1 = 0;

	memset(host, 0, sizeof(*host));
	host->root = xstrdup(root);

	strbuf_addf(&sb, "%s/cgroup.controllers", root);
	if (path_exists(sb.buf)) {
		host->v2_path = xstrdup(root);
	} else {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s/unified/cgroup.controllers", root);
		if (path_exists(sb.buf)) {
			strbuf_reset(&sb);
			strbuf_addf(&sb, "%s/unified", root);
			host->v2_path = strbuf_detach(&sb, NULL);
		}
	}
	if (host->v2_path) {
		if (!fs_is(host->v2_path, CGROUP2_SUPER_MAGIC))
			host->fake = 1;
		host->v2_ctls =
			read_ctl_file(host->v2_path, "cgroup.controllers");
	}

	for (c = 0; c < CGROUP_NR_CTL; c++) {
		const char *dir = ctl_names[c];

		if (host->v2_path && !strcmp(host->v2_path, root))
			break; /* pure v2: no v1 hierarchies below it */
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s/%s/%s", root, dir, v1_probe[c]);
		if (!path_exists(sb.buf) && c == CGROUP_CPU) {
			dir = "cpu,cpuacct";
			strbuf_reset(&sb);
			strbuf_addf(&sb, "%s/%s/%s", root, dir, v1_probe[c]);
		}
		if (!path_exists(sb.buf)) {
			/* a real v1 root may lack the probe (pids has none) */
			strbuf_reset(&sb);
			strbuf_addf(&sb, "%s/%s", root, dir);
			if (!fs_is(sb.buf, CGROUP_SUPER_MAGIC))
				continue;
			strbuf_addstr(&sb, "/cgroup.procs");
			if (!path_exists(sb.buf))
				continue;
		}
		if (host->v2_ctls & CGROUP_BIT(c))
			continue; /* a controller lives in one hierarchy */
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s/%s", root, dir);
		if (!fs_is(sb.buf, CGROUP_SUPER_MAGIC))
			host->fake = 1;
		host->v1_path[c] = strbuf_detach(&sb, NULL);
		have_v1 = 1;
	}
	if (host->fake && !(env && *env))
		host->fake = 0; /* never fake the real /sys/fs/cgroup */

	if (host->v2_path && !strcmp(host->v2_path, root))
		host->layout = CGROUP_LAYOUT_V2;
	else if (host->v2_path && have_v1)
		host->layout = CGROUP_LAYOUT_HYBRID;
	else if (have_v1)
		host->layout = CGROUP_LAYOUT_V1;
	else if (host->v2_path)
		host->layout = CGROUP_LAYOUT_HYBRID;
	else
		host->layout = CGROUP_LAYOUT_NONE;

	if (host->v1_path[CGROUP_MEMORY]) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s/memory.memsw.limit_in_bytes",
			    host->v1_path[CGROUP_MEMORY]);
		host->v1_memsw = path_exists(sb.buf);
	}
	strbuf_release(&sb);
	return 0;
}

void cgroup_host_release(struct cgroup_host *host)
{
	int c;

	free(host->root);
	free(host->v2_path);
	for (c = 0; c < CGROUP_NR_CTL; c++)
		free(host->v1_path[c]);
	memset(host, 0, sizeof(*host));
}

int cgroup_host_version(const struct cgroup_host *host, enum cgroup_ctl c)
{
	if (host->v2_ctls & CGROUP_BIT(c))
		return 2;
	if (host->v1_path[c])
		return 1;
	return 0;
}

void cgroup_host_explain(const struct cgroup_host *host, enum cgroup_ctl c,
			 struct strbuf *out)
{
	if (host->v2_path)
		strbuf_addf(out, "v2 at '%s' has %s", host->v2_path,
			    host->v2_ctls & CGROUP_BIT(c) ? "it" : "none");
	else
		strbuf_addstr(out, "no v2 hierarchy");
	strbuf_addf(out, ", v1 %s",
		    host->v1_path[c] ? "mounted" : "not mounted");
}

void cgroup_host_describe(const struct cgroup_host *host, struct strbuf *out)
{
	int c, first = 1;

	strbuf_addf(out, "%s", cgroup_layout_name(host->layout));
	if (host->v2_path) {
		strbuf_addf(out, "; v2 at %s with controllers:", host->v2_path);
		for (c = 0; c < CGROUP_NR_CTL; c++)
			if (host->v2_ctls & CGROUP_BIT(c))
				strbuf_addf(out, " %s", ctl_names[c]);
		if (!(host->v2_ctls & ((1u << CGROUP_NR_CTL) - 1)))
			strbuf_addstr(out, " (none)");
	}
	for (c = 0; c < CGROUP_NR_CTL; c++) {
		if (!host->v1_path[c])
			continue;
		strbuf_addf(out, "%s%s", first ? "; v1: " : ", ",
			    host->v1_path[c]);
		first = 0;
	}
}

void cgroup_init(struct cgroup *cg)
{
	memset(cg, 0, sizeof(*cg));
}

void cgroup_release(struct cgroup *cg)
{
	int c;

	free(cg->v2);
	for (c = 0; c < CGROUP_NR_CTL; c++)
		free(cg->v1[c]);
	free(cg->unit);
	cgroup_init(cg);
}

int cgroup_in_use(const struct cgroup *cg)
{
	int c;

	if (cg->v2)
		return 1;
	for (c = 0; c < CGROUP_NR_CTL; c++)
		if (cg->v1[c])
			return 1;
	return 0;
}

/*
 * Write a value to an interface file. Returns 0, or -1 with errno set.
 * In a fake tree the file is created.
 */
static int write_file(const char *dir, const char *file, const char *val,
		      int fake)
{
	struct strbuf path = STRBUF_INIT;
	int fd, ret = 0;

	strbuf_addf(&path, "%s/%s", dir, file);
	fd = open(path.buf,
		  O_WRONLY | O_CLOEXEC | (fake ? O_CREAT | O_TRUNC : 0), 0644);
	strbuf_release(&path);
	if (fd < 0)
		return -1;
	if (write_in_full(fd, val, strlen(val)) < 0)
		ret = -1;
	if (close(fd) && !ret)
		ret = -1;
	return ret;
}

static int write_limit(const char *dir, const char *file, const char *val,
		       enum cgroup_ctl c, int fake)
{
	if (!write_file(dir, file, val, fake))
		return 0;
	return setup_error(1,
			   "cannot create sandbox: cgroup %s controller: "
			   "cannot write '%s' to '%s/%s'",
			   ctl_names[c], val, dir, file);
}

static int make_dir(const char *path, enum cgroup_ctl c)
{
	if (!mkdir(path, 0755) || errno == EEXIST)
		return 0;
	return setup_error(1,
			   "cannot create sandbox: cgroup %s controller: "
			   "cannot create '%s'",
			   ctl_names[c], path);
}

/* make sure the v2 group `dir` delegates `need` to its children */
static int v2_enable(const char *dir, unsigned need, int fake)
{
	unsigned have = read_ctl_file(dir, "cgroup.subtree_control");
	int c;

	for (c = 0; c < CGROUP_NR_CTL; c++) {
		struct strbuf val = STRBUF_INIT;
		int r;

		if (!(need & CGROUP_BIT(c)) || (have & CGROUP_BIT(c)))
			continue;
		if (fake) {
			/* a regular file: append to the list it holds */
			struct strbuf path = STRBUF_INIT;

			strbuf_addf(&path, "%s/cgroup.subtree_control", dir);
			strbuf_read_file(&val, path.buf, 64);
			strbuf_release(&path);
			strbuf_trim(&val);
			strbuf_addf(&val, "%s%s", val.len ? " " : "",
				    ctl_names[c]);
		} else {
			strbuf_addf(&val, "+%s", ctl_names[c]);
		}
		r = write_file(dir, "cgroup.subtree_control", val.buf, fake);
		strbuf_release(&val);
		if (r)
			return setup_error(
				1,
				"cannot create sandbox: cgroup %s controller: "
				"cannot enable it in "
				"'%s/cgroup.subtree_control'",
				ctl_names[c], dir);
	}
	return 0;
}

static void fmt_i64(char *buf, size_t len, int64_t v)
{
	xsnprintf(buf, len, "%" PRId64, v);
}

static int write_limits_v2(const char *dir, unsigned ctls,
			   const struct cgroup_limits *lim, int fake)
{
	char buf[64];

	if (ctls & CGROUP_BIT(CGROUP_MEMORY)) {
		fmt_i64(buf, sizeof(buf), lim->memory_bytes);
		if (write_limit(dir, "memory.max", buf, CGROUP_MEMORY, fake))
			return -1;
		/* absent without swap accounting: then there is no swap */
		if (write_file(dir, "memory.swap.max", "0", fake) &&
		    errno != ENOENT)
			return write_limit(dir, "memory.swap.max", "0",
					   CGROUP_MEMORY, fake);
	}
	if (ctls & CGROUP_BIT(CGROUP_PIDS)) {
		fmt_i64(buf, sizeof(buf), lim->pids);
		if (write_limit(dir, "pids.max", buf, CGROUP_PIDS, fake))
			return -1;
	}
	if (ctls & CGROUP_BIT(CGROUP_CPU)) {
		int64_t quota = (int64_t)(lim->cpus * CPU_PERIOD_US + 0.5);

		if (quota < 1000)
			quota = 1000; /* the kernel's minimum, 1 ms */
		xsnprintf(buf, sizeof(buf), "%" PRId64 " %d", quota,
			  CPU_PERIOD_US);
		if (write_limit(dir, "cpu.max", buf, CGROUP_CPU, fake))
			return -1;
	}
	return 0;
}

static int write_limits_v1(enum cgroup_ctl c, const char *dir,
			   const struct cgroup_limits *lim, int memsw, int fake)
{
	char buf[64];

	switch (c) {
	case CGROUP_MEMORY:
		fmt_i64(buf, sizeof(buf), lim->memory_bytes);
		if (write_limit(dir, "memory.limit_in_bytes", buf, c, fake))
			return -1;
		if (memsw && write_limit(dir, "memory.memsw.limit_in_bytes",
					 buf, c, fake))
			return -1;
		return 0;
	case CGROUP_PIDS:
		fmt_i64(buf, sizeof(buf), lim->pids);
		return write_limit(dir, "pids.max", buf, c, fake);
	case CGROUP_CPU: {
		int64_t quota = (int64_t)(lim->cpus * CPU_PERIOD_US + 0.5);

		if (quota < 1000)
			quota = 1000;
		xsnprintf(buf, sizeof(buf), "%d", CPU_PERIOD_US);
		if (write_limit(dir, "cpu.cfs_period_us", buf, c, fake))
			return -1;
		fmt_i64(buf, sizeof(buf), quota);
		return write_limit(dir, "cpu.cfs_quota_us", buf, c, fake);
	}
	default:
		return setup_error(0, "cgroup: unknown controller %d", (int)c);
	}
}

static int limit_set(const struct cgroup_limits *lim, enum cgroup_ctl c)
{
	switch (c) {
	case CGROUP_MEMORY:
		return lim->memory_bytes > 0;
	case CGROUP_PIDS:
		return lim->pids > 0;
	case CGROUP_CPU:
		return lim->cpus > 0;
	default:
		return 0;
	}
}

static int valid_component(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

static int create(const struct cgroup_host *host, const char *parent,
		  const char *name, unsigned want,
		  const struct cgroup_limits *lim, struct cgroup *cg);

int cgroup_create(const struct cgroup_host *host, const char *parent,
		  const char *name, unsigned want,
		  const struct cgroup_limits *lim, struct cgroup *cg)
{
	return cgroup_create_why(host, parent, name, want, lim, cg, NULL);
}

int cgroup_create_why(const struct cgroup_host *host, const char *parent,
		      const char *name, unsigned want,
		      const struct cgroup_limits *lim, struct cgroup *cg,
		      struct strbuf *why)
{
	int ret;

	why_buf = why;
	ret = create(host, parent, name, want, lim, cg);
	why_buf = NULL;
	return ret;
}

static int create(const struct cgroup_host *host, const char *parent,
		  const char *name, unsigned want,
		  const struct cgroup_limits *lim, struct cgroup *cg)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned v2_need = 0;
	int c;

	if (!valid_component(name))
		return setup_error(0, "cgroup: invalid group name '%s'",
				   name ? name : "");
	if (!parent || !*parent)
		parent = "gosbx";
	if (!valid_component(parent))
		return setup_error(0, "cgroup: invalid parent group '%s'",
				   parent);
	cg->fake = host->fake;

	for (c = 0; c < CGROUP_NR_CTL; c++) {
		if (!(want & CGROUP_BIT(c)) || !limit_set(lim, c))
			continue;
		switch (cgroup_host_version(host, c)) {
		case 2:
			v2_need |= CGROUP_BIT(c);
			break;
		case 1:
			break;
		default:
			strbuf_addf(&sb,
				    "cannot create sandbox: cgroup %s "
				    "controller not available (",
				    ctl_names[c]);
			cgroup_host_explain(host, c, &sb);
			strbuf_addch(&sb, ')');
			setup_error(0, "%s", sb.buf);
			goto fail;
		}
	}

	if (v2_need) {
		strbuf_reset(&sb);
		if (v2_enable(host->v2_path, v2_need, host->fake))
			goto fail;
		strbuf_addf(&sb, "%s/%s", host->v2_path, parent);
		if (make_dir(sb.buf, CGROUP_MEMORY) ||
		    v2_enable(sb.buf, v2_need, host->fake))
			goto fail;
		strbuf_addf(&sb, "/%s", name);
		if (make_dir(sb.buf, CGROUP_MEMORY))
			goto fail;
		free(cg->v2); /* reusing a cg rewrites its limits */
		cg->v2 = strbuf_detach(&sb, NULL);
		if (write_limits_v2(cg->v2, v2_need, lim, host->fake))
			goto fail;
	}
	for (c = 0; c < CGROUP_NR_CTL; c++) {
		if (!(want & CGROUP_BIT(c)) || !limit_set(lim, c) ||
		    cgroup_host_version(host, c) != 1)
			continue;
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s/%s", host->v1_path[c], parent);
		if (make_dir(sb.buf, c))
			goto fail;
		strbuf_addf(&sb, "/%s", name);
		if (make_dir(sb.buf, c))
			goto fail;
		free(cg->v1[c]);
		cg->v1[c] = strbuf_detach(&sb, NULL);
		if (write_limits_v1(c, cg->v1[c], lim, host->v1_memsw,
				    host->fake))
			goto fail;
	}
	strbuf_release(&sb);
	return 0;

fail:
	strbuf_release(&sb);
	cgroup_destroy(cg, 2000);
	cgroup_release(cg);
	return -1;
}

static int join_one(const char *dir)
{
	char path[PATH_MAX];
	int fd, n;

	n = snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, "0", 1) != 1) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

int cgroup_join_self(const struct cgroup *cg)
{
	int c;

	if (cg->v2 && join_one(cg->v2))
		return -1;
	for (c = 0; c < CGROUP_NR_CTL; c++)
		if (cg->v1[c] && join_one(cg->v1[c]))
			return -1;
	return 0;
}

/* find "key N" in a flat keyed file; 0 with *out, -1 if absent */
static int keyed_value(const char *text, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ' ') {
			*out = strtoull(p + klen + 1, NULL, 10);
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

int cgroup_oom_kills(const struct cgroup *cg, uint64_t *out)
{
	struct strbuf path = STRBUF_INIT, sb = STRBUF_INIT;
	int ret = 0;

	*out = 0;
	if (cg->v2) {
		strbuf_addf(&path, "%s/memory.events", cg->v2);
		if (strbuf_read_file(&sb, path.buf, 256) < 0) {
			if (errno != ENOENT)
				ret = error_errno("cannot read '%s'", path.buf);
		} else if (keyed_value(sb.buf, "oom_kill", out)) {
			ret = error("no oom_kill counter in '%s'", path.buf);
		}
	} else if (cg->v1[CGROUP_MEMORY]) {
		strbuf_addf(&path, "%s/memory.oom_control",
			    cg->v1[CGROUP_MEMORY]);
		if (strbuf_read_file(&sb, path.buf, 256) < 0) {
			ret = error_errno("cannot read '%s'", path.buf);
		} else if (keyed_value(sb.buf, "oom_kill", out)) {
			/* kernels before 4.13: count limit hits instead */
			strbuf_reset(&path);
			strbuf_reset(&sb);
			strbuf_addf(&path, "%s/memory.failcnt",
				    cg->v1[CGROUP_MEMORY]);
			if (strbuf_read_file(&sb, path.buf, 64) < 0)
				ret = error_errno("cannot read '%s'", path.buf);
			else
				*out = strtoull(sb.buf, NULL, 10);
		}
	}
	strbuf_release(&path);
	strbuf_release(&sb);
	return ret;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * SIGKILL every pid listed in dir/cgroup.procs. Returns how many were
 * listed, or -1 if the file cannot be read (the group is gone, or
 * going: 0).
 */
static int kill_listed(const char *dir)
{
	struct strbuf path = STRBUF_INIT, sb = STRBUF_INIT;
	const char *p;
	int n = 0;

	strbuf_addf(&path, "%s/cgroup.procs", dir);
	if (strbuf_read_file(&sb, path.buf, 256) < 0) {
		/* ENODEV: another process removed it while we read */
		n = errno == ENOENT || errno == ENODEV ? 0 : -1;
		goto out;
	}
	for (p = sb.buf; *p;) {
		char *end;
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		if (pid > 0) {
			kill((pid_t)pid, SIGKILL);
			n++;
		}
		p = end;
		while (*p == '\n' || *p == ' ')
			p++;
	}
out:
	strbuf_release(&path);
	strbuf_release(&sb);
	return n;
}

int cgroup_kill_all(const struct cgroup *cg, int timeout_ms)
{
	uint64_t deadline = monotonic_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	const char *dirs[CGROUP_NR_CTL + 1];
	size_t nr = 0, i;
	int c;

	if (cg->fake)
		return 0; /* no processes in a test tree */
	if (cg->v2) {
		dirs[nr++] = cg->v2;
		/* kills the whole subtree at once (Linux 5.14+) */
		if (write_file(cg->v2, "cgroup.kill", "1", 0) &&
		    errno != ENOENT)
			warning_errno("cannot write '%s/cgroup.kill'", cg->v2);
	}
	for (c = 0; c < CGROUP_NR_CTL; c++)
		if (cg->v1[c])
			dirs[nr++] = cg->v1[c];

	for (;;) {
		int left = 0;

		for (i = 0; i < nr; i++) {
			int n = kill_listed(dirs[i]);

			if (n < 0)
				return error_errno("cannot read "
						   "'%s/cgroup.procs'",
						   dirs[i]);
			left += n;
		}
		if (!left)
			return 0;
		if (monotonic_ms() >= deadline)
			return error("%d process(es) still alive in cgroup "
				     "'%s' after SIGKILL",
				     left, dirs[0]);
		sleep_ms(10);
	}
}

/* in a fake tree, remove the regular files so rmdir can succeed */
static void unlink_fake_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_type == DT_REG)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

static int remove_group(const char *dir, int fake, int unit, uint64_t deadline)
{
	if (fake)
		unlink_fake_files(dir);
	for (;;) {
		if (!rmdir(dir) || errno == ENOENT)
			return 0;
		/* systemd removes its scope itself once it is empty */
		if (unit && (errno == EACCES || errno == EPERM))
			return 0;
		if (errno != EBUSY || monotonic_ms() >= deadline)
			return error_errno("cannot remove cgroup '%s'", dir);
		sleep_ms(10);
	}
}

int cgroup_destroy(const struct cgroup *cg, int timeout_ms)
{
	uint64_t deadline = monotonic_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int c, ret = 0;

	if (!cgroup_in_use(cg))
		return 0;
	if (cgroup_kill_all(cg, timeout_ms))
		ret = -1;
	if (cg->v2 && remove_group(cg->v2, cg->fake, !!cg->unit, deadline))
		ret = -1;
	for (c = 0; c < CGROUP_NR_CTL; c++)
		if (cg->v1[c] && remove_group(cg->v1[c], cg->fake, 0, deadline))
			ret = -1;
	return ret;
}

void cgroup_state_format(const struct cgroup *cg, struct strbuf *out)
{
	int c;

	if (cg->v2)
		strbuf_addf(out, "v2 %s\n", cg->v2);
	for (c = 0; c < CGROUP_NR_CTL; c++)
		if (cg->v1[c])
			strbuf_addf(out, "%s %s\n", ctl_names[c], cg->v1[c]);
	if (cg->unit)
		strbuf_addf(out, "unit %s\n", cg->unit);
	if (cg->fake)
		strbuf_addstr(out, "fake 1\n");
}

static void set_str(char **dst, const char *s, size_t len)
{
	free(*dst);
	*dst = xstrndup(s, len);
}

int cgroup_state_parse(struct cgroup *cg, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *eol = strchrnul(p, '\n');
		const char *sp = memchr(p, ' ', eol - p);
		size_t klen = sp ? (size_t)(sp - p) : (size_t)(eol - p);
		const char *val = sp ? sp + 1 : eol;
		size_t vlen = eol - val;
		int c, absolute = vlen && *val == '/';

		if (klen == 2 && !strncmp(p, "v2", 2)) {
			if (!absolute)
				goto bad;
			set_str(&cg->v2, val, vlen);
		} else if (klen == 4 && !strncmp(p, "unit", 4)) {
			if (!vlen)
				goto bad;
			set_str(&cg->unit, val, vlen);
		} else if (klen == 4 && !strncmp(p, "fake", 4)) {
			cg->fake = vlen == 1 && *val == '1';
		} else {
			for (c = 0; c < CGROUP_NR_CTL; c++) {
				if (strlen(ctl_names[c]) != klen ||
				    strncmp(p, ctl_names[c], klen))
					continue;
				if (!absolute)
					goto bad;
				set_str(&cg->v1[c], val, vlen);
			}
		}
		p = *eol ? eol + 1 : eol;
		continue;
	bad:
		return error("invalid cgroup state line '%.*s'", (int)(eol - p),
			     p);
	}
	return 0;
}
