#include "compat.h"
#include "dir.h"
#include "local/uidpool.h"
#include "usage.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

/* --- the range ---------------------------------------------------- */

/*
 * The "gosbx:<first>:<count>" line of a subid file: 1, 0 when there is
 * none, -1 with the reason appended to why.
 */
static int subid_line(const char *file, uint32_t *base, uint32_t *count,
		      struct strbuf *why)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;
	int ret = 0;

	if (strbuf_read_file(&sb, file, 1024) < 0) {
		if (errno == ENOENT) {
			strbuf_release(&sb);
			return 0;
		}
		strbuf_addf(why, "cannot read '%s': %s", file, strerror(errno));
		strbuf_release(&sb);
		return -1;
	}
	for (p = sb.buf; *p;) {
		const char *eol = strchrnul(p, '\n');
		unsigned long long b, n;
		char *end;

		if (!strncmp(p, "gosbx:", 6)) {
			errno = 0;
			b = strtoull(p + 6, &end, 10);
			if (*end == ':')
				n = strtoull(end + 1, &end, 10);
			else
				n = 0;
			if (errno || end != eol || !b || !n ||
			    b + n > UINT32_MAX) {
				strbuf_addf(why, "'%s': invalid line '%.*s'",
					    file, (int)(eol - p), p);
				ret = -1;
				break;
			}
			*base = (uint32_t)b;
			*count = (uint32_t)n;
			ret = 1;
			break;
		}
		p = *eol ? eol + 1 : eol;
	}
	strbuf_release(&sb);
	return ret;
}

static int read_range(struct uidpool_range *r, struct strbuf *why)
{
	uint32_t ucount = 0, gcount = 0;
	int u, g = 0;

	memset(r, 0, sizeof(*r));
	u = subid_line("/etc/subuid", &r->uid_base, &ucount, why);
	if (u >= 0)
		g = subid_line("/etc/subgid", &r->gid_base, &gcount, why);
	if (u < 0 || g < 0)
		return -1;
	if (u != g) {
		strbuf_addf(why, "a 'gosbx' range is in %s but not in %s",
			    u ? "/etc/subuid" : "/etc/subgid",
			    u ? "/etc/subgid" : "/etc/subuid");
		return -1;
	}
	if (!u) {
		r->uid_base = r->gid_base = UIDPOOL_DEFAULT_BASE;
		r->count = UIDPOOL_DEFAULT_COUNT;
		r->source = "the built-in range";
		return 0;
	}
	r->count = ucount < gcount ? ucount : gcount;
	r->source = "/etc/subuid and /etc/subgid";
	return 0;
}

int uidpool_range(struct uidpool_range *r)
{
	struct strbuf why = STRBUF_INIT;
	int ret = read_range(r, &why) ? error("%s", why.buf) : 0;

	strbuf_release(&why);
	return ret;
}

/* --- reservations ------------------------------------------------- */

struct reservation {
	pid_t owner, sandbox;
	uint64_t owner_start, sandbox_start;
};

static void reservation_path(uid_t uid, struct strbuf *out)
{
	strbuf_reset(out);
	strbuf_addf(out, "%s/%u", UIDPOOL_DIR, (unsigned)uid);
}

/* 1 with *res, 0 when there is none (or it cannot be read) */
static int reservation_read(uid_t uid, struct reservation *res)
{
	struct strbuf path = STRBUF_INIT, sb = STRBUF_INIT;
	const char *p;
	int ret = 1;

	memset(res, 0, sizeof(*res));
	reservation_path(uid, &path);
	if (strbuf_read_file(&sb, path.buf, 128) < 0) {
		ret = 0;
		goto out;
	}
	for (p = sb.buf; *p;) {
		const char *eol = strchrnul(p, '\n');
		int pid = 0;
		unsigned long long start = 0;

		if (sscanf(p, "owner %d %llu", &pid, &start) == 2) {
			res->owner = pid;
			res->owner_start = start;
		} else if (sscanf(p, "sandbox %d %llu", &pid, &start) == 2) {
			res->sandbox = pid;
			res->sandbox_start = start;
		}
		p = *eol ? eol + 1 : eol;
	}
out:
	strbuf_release(&path);
	strbuf_release(&sb);
	return ret;
}

static int reservation_write(uid_t uid, const struct reservation *res,
			     struct strbuf *why)
{
	struct strbuf path = STRBUF_INIT, tmp = STRBUF_INIT, sb = STRBUF_INIT;
	int fd, ret = -1;

	reservation_path(uid, &path);
	strbuf_addf(&tmp, "%s.tmp", path.buf);
	strbuf_addf(&sb, "owner %d %" PRIu64 "\n", (int)res->owner,
		    res->owner_start);
	if (res->sandbox > 0)
		strbuf_addf(&sb, "sandbox %d %" PRIu64 "\n", (int)res->sandbox,
			    res->sandbox_start);
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write_in_full(fd, sb.buf, sb.len) < 0 || close(fd)) {
		strbuf_addf(why, "cannot write '%s': %s", tmp.buf,
			    strerror(errno));
		goto out;
	}
	if (rename(tmp.buf, path.buf)) {
		strbuf_addf(why, "cannot rename '%s': %s", tmp.buf,
			    strerror(errno));
		unlink(tmp.buf);
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&path);
	strbuf_release(&tmp);
	strbuf_release(&sb);
	return ret;
}

static int same_process(pid_t pid, uint64_t start)
{
	uint64_t now = pid > 0 ? proc_start_time(pid) : 0;

	return now && now == start;
}

static int reservation_live(const struct reservation *res)
{
	return same_process(res->owner, res->owner_start) ||
	       same_process(res->sandbox, res->sandbox_start);
}

/*
 * Lock the pool directory: returns the lock's descriptor, or -1 with
 * the reason appended to why.
 */
static int pool_lock(struct strbuf *why)
{
	struct strbuf path = STRBUF_INIT;
	int fd = -1;

	if (geteuid()) {
		strbuf_addstr(why, "the uid pool is for root only");
		goto out;
	}
	if (mkdir_p("/run/gosbx", 0755) || mkdir_p(UIDPOOL_DIR, 0700) ||
	    chmod(UIDPOOL_DIR, 0700)) {
		strbuf_addf(why, "cannot create '%s': %s", UIDPOOL_DIR,
			    strerror(errno));
		goto out;
	}
	strbuf_addstr(&path, UIDPOOL_DIR "/lock");
	fd = open(path.buf, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		strbuf_addf(why, "cannot open '%s': %s", path.buf,
			    strerror(errno));
		goto out;
	}
	while (flock(fd, LOCK_EX) < 0) {
		if (errno == EINTR)
			continue;
		strbuf_addf(why, "cannot lock '%s': %s", path.buf,
			    strerror(errno));
		close(fd);
		fd = -1;
		break;
	}
out:
	strbuf_release(&path);
	return fd;
}

static void pool_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* drops the flock */
}

/* mark the ids of one "Uid:"/"Gid:" line of /proc/<pid>/status */
static void mark_ids(const char *line, uint32_t base, uint32_t count,
		     unsigned char *used)
{
	const char *p = line;
	int i;

	for (i = 0; i < 4; i++) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);

		if (end == p)
			break;
		if (v >= base && v - base < count)
			used[(v - base) / 8] |= 1u << ((v - base) % 8);
		p = end;
	}
}

/* the ids of the range that a process on the host has */
static void scan_processes(const struct uidpool_range *r, unsigned char *used)
{
	struct strbuf path = STRBUF_INIT, sb = STRBUF_INIT;
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *p;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		strbuf_reset(&path);
		strbuf_addf(&path, "/proc/%s/status", de->d_name);
		strbuf_reset(&sb);
		if (strbuf_read_file(&sb, path.buf, 2048) < 0)
			continue; /* gone meanwhile */
		/*
		 * a zombie runs nothing and holds nothing (isolate_alive()
		 * counts it as ended too): where the host's init is slow to
		 * reap, a suspended sandbox's own would keep its uid from it
		 */
		if (strstr(sb.buf, "\nState:\tZ"))
			continue;
		p = strstr(sb.buf, "\nUid:");
		if (p)
			mark_ids(p + 5, r->uid_base, r->count, used);
		p = strstr(sb.buf, "\nGid:");
		if (p)
			mark_ids(p + 5, r->gid_base, r->count, used);
	}
	closedir(d);
	strbuf_release(&path);
	strbuf_release(&sb);
}

/* known to the user or group database (NSS) */
static int id_known(uid_t uid, gid_t gid)
{
	char buf[4096];
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;

	getpwuid_r(uid, &pw, buf, sizeof(buf), &pwp);
	if (pwp)
		return 1;
	getgrgid_r(gid, &gr, buf, sizeof(buf), &grp);
	return grp != NULL;
}

/*
 * Reserve the n-th id of r for the calling process if it is free.
 * Returns 1 when reserved, 0 when in use, -1 with why on failure.
 */
static int try_reserve(const struct uidpool_range *r, const unsigned char *used,
		       uint32_t n, struct strbuf *why)
{
	uid_t u = r->uid_base + n;
	gid_t g = r->gid_base + n;
	struct reservation res;
	int have;

	if (used[n / 8] & (1u << (n % 8)))
		return 0;
	have = reservation_read(u, &res);
	if (have < 0 || (have && reservation_live(&res)))
		return 0;
	if (id_known(u, g))
		return 0;
	memset(&res, 0, sizeof(res));
	res.owner = getpid();
	res.owner_start = proc_start_time(res.owner);
	if (reservation_write(u, &res, why))
		return -1;
	return 1;
}

/*
 * uidpool_reserve() and uidpool_reserve_id(): want (uid_t)-1 takes any
 * free id, else only want.
 */
static int reserve(uid_t want, uid_t *uid, gid_t *gid)
{
	struct uidpool_range r;
	struct strbuf why = STRBUF_INIT;
	unsigned char *used = NULL;
	uint32_t first, i, tries;
	int lock = -1, ret = -1, got = 0;

	if (read_range(&r, &why))
		goto out;
	lock = pool_lock(&why);
	if (lock < 0)
		goto out;
	used = xcalloc(r.count / 8 + 1, 1);
	scan_processes(&r, used);
	tries = r.count;
	if (want != (uid_t)-1) {
		if (want < r.uid_base || want - r.uid_base >= r.count) {
			strbuf_addf(&why,
				    "host uid %u is not in the range "
				    "%u-%u (%s)",
				    (unsigned)want, r.uid_base,
				    r.uid_base + r.count - 1, r.source);
			goto out;
		}
		first = want - r.uid_base;
		tries = 1;
	} else if (getrandom(&first, sizeof(first), 0) != sizeof(first)) {
		/* start anywhere: a uid given back is not handed out at once */
		first = (uint32_t)monotonic_us();
	}
	first %= r.count;
	for (i = 0; i < tries && !got; i++) {
		uint32_t n = (first + i) % r.count;

		got = try_reserve(&r, used, n, &why);
		if (got < 0)
			goto out;
		if (got) {
			*uid = r.uid_base + n;
			*gid = r.gid_base + n;
			ret = 0;
		}
	}
	if (got)
		goto out;
	if (want != (uid_t)-1)
		strbuf_addf(&why, "host uid %u is in use", (unsigned)want);
	else
		strbuf_addf(&why,
			    "all %u host uids of the range %u-%u (%s) are in "
			    "use",
			    r.count, r.uid_base, r.uid_base + r.count - 1,
			    r.source);
out:
	if (ret)
		error("cannot create sandbox: uid: %s", why.buf);
	free(used);
	pool_unlock(lock);
	strbuf_release(&why);
	return ret;
}

int uidpool_reserve(uid_t *uid, gid_t *gid)
{
	return reserve((uid_t)-1, uid, gid);
}

int uidpool_reserve_id(uid_t uid, gid_t *gid)
{
	uid_t got;

	return reserve(uid, &got, gid);
}

int uidpool_bind(uid_t uid, pid_t pid, uint64_t start)
{
	struct reservation res;
	struct strbuf why = STRBUF_INIT;
	int lock = pool_lock(&why), ret = -1;

	if (lock < 0)
		goto out;
	if (reservation_read(uid, &res) != 1 || res.owner != getpid()) {
		strbuf_addf(&why, "uid %u is not reserved by this process",
			    (unsigned)uid);
		goto out;
	}
	res.sandbox = pid;
	res.sandbox_start = start;
	ret = reservation_write(uid, &res, &why);
out:
	if (ret)
		error("cannot create sandbox: uid: %s", why.buf);
	pool_unlock(lock);
	strbuf_release(&why);
	return ret;
}

void uidpool_release(uid_t uid, pid_t pid, uint64_t start)
{
	struct reservation res;
	struct strbuf path = STRBUF_INIT;
	int lock = pool_lock(&path), mine;

	if (lock < 0)
		goto out;
	if (reservation_read(uid, &res) != 1)
		goto out;
	if (pid > 0)
		mine = res.sandbox == pid && res.sandbox_start == start;
	else
		mine = res.owner == getpid() && res.sandbox <= 0;
	if (mine) {
		reservation_path(uid, &path);
		unlink(path.buf);
	}
out:
	strbuf_release(&path);
	pool_unlock(lock);
}

int uidpool_count_live(size_t *nr)
{
	struct uidpool_range r;
	struct dirent *de;
	DIR *d;

	*nr = 0;
	if (uidpool_range(&r))
		return -1;
	d = opendir(UIDPOOL_DIR);
	if (!d)
		return errno == ENOENT
			       ? 0
			       : error_errno("cannot read '%s'", UIDPOOL_DIR);
	while ((de = readdir(d))) {
		struct reservation res;
		char *end;
		unsigned long u = strtoul(de->d_name, &end, 10);

		if (*end || end == de->d_name || u < r.uid_base ||
		    u - r.uid_base >= r.count)
			continue;
		if (reservation_read((uid_t)u, &res) == 1 &&
		    reservation_live(&res))
			(*nr)++;
	}
	closedir(d);
	return 0;
}
