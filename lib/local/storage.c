#include "compat.h"
#include "dir.h"
#include "run-command.h"
#include "local/storage.h"
#include "usage.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>

#define MKFS_TIMEOUT_MS 60000
#define LOOP_TRIES 16

const char *storage_quota_name(enum storage_quota q)
{
	return q == STORAGE_QUOTA_LOOP ? "loop" : "none";
}

void storage_init(struct storage *st)
{
	memset(st, 0, sizeof(*st));
	strbuf_init(&st->root, 0);
	strbuf_init(&st->app, 0);
	strbuf_init(&st->home, 0);
	strbuf_init(&st->tmp, 0);
	strbuf_init(&st->skipped, 0);
}

void storage_release(struct storage *st)
{
	strbuf_release(&st->root);
	strbuf_release(&st->app);
	strbuf_release(&st->home);
	strbuf_release(&st->tmp);
	strbuf_release(&st->skipped);
	storage_init(st);
}

/* mkfs.ext4 on PATH, else where Debian and others keep it */
static int find_mkfs(struct strbuf *out)
{
	const char *path = getenv("PATH");
	struct strbuf dirs = STRBUF_INIT;
	const char *p;
	int ret = -1;

	strbuf_addf(&dirs, "%s:/usr/sbin:/sbin", path ? path : "");
	for (p = dirs.buf; *p;) {
		const char *end = strchrnul(p, ':');
		size_t len = out->len;
		struct stat st;

		if (end > p && *p == '/') {
			strbuf_add(out, p, end - p);
			strbuf_addstr(out, "/mkfs.ext4");
			if (!stat(out->buf, &st) && S_ISREG(st.st_mode) &&
			    !access(out->buf, X_OK)) {
				ret = 0;
				break;
			}
			strbuf_setlen(out, len);
		}
		p = *end ? end + 1 : end;
	}
	strbuf_release(&dirs);
	return ret;
}

enum storage_quota storage_quota_available(struct strbuf *why)
{
	struct strbuf mkfs = STRBUF_INIT;
	const char *no = getenv("GOSBX_NO_LOOP");
	enum storage_quota q = STORAGE_QUOTA_NONE;

	if (geteuid())
		strbuf_addstr(why, "a normal user cannot mount a file system "
				   "image (it needs root)");
	else if (no && *no && strcmp(no, "0"))
		strbuf_addstr(why, "GOSBX_NO_LOOP is set");
	else if (access("/dev/loop-control", R_OK | W_OK))
		strbuf_addf(why, "no loop devices: /dev/loop-control: %s",
			    strerror(errno));
	else if (find_mkfs(&mkfs))
		strbuf_addstr(why, "mkfs.ext4 not found (install e2fsprogs)");
	else
		q = STORAGE_QUOTA_LOOP;
	strbuf_release(&mkfs);
	return q;
}

void storage_paths(struct storage *st, const char *dir)
{
	strbuf_reset(&st->root);
	strbuf_reset(&st->app);
	strbuf_reset(&st->home);
	strbuf_reset(&st->tmp);
	strbuf_addf(&st->root, "%s/fs", dir);
	strbuf_addf(&st->app, "%s/app", st->root.buf);
	strbuf_addf(&st->home, "%s/home", st->root.buf);
}

/* mkfs.ext4 the sparse file img of bytes (created; must not exist) */
static int format_image(const char *img, int64_t bytes)
{
	struct strbuf mkfs = STRBUF_INIT, out = STRBUF_INIT;
	const char *argv[] = { NULL,
			       "-q",
			       "-F",
			       "-O",
			       "^has_journal,^resize_inode",
			       "-m",
			       "0",
			       "-L",
			       "gosbx",
			       "-E",
			       "lazy_itable_init=1,lazy_journal_init=1,"
			       "nodiscard,root_owner=0:0",
			       img,
			       NULL };
	int fd, status, ret = -1;

	fd = open(img, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		error_errno("cannot create sandbox: disk quota: cannot create "
			    "'%s'",
			    img);
		goto out;
	}
	if (ftruncate(fd, (off_t)bytes) < 0) {
		error_errno("cannot create sandbox: disk quota: cannot size "
			    "'%s'",
			    img);
		close(fd);
		goto out;
	}
	close(fd);
	if (find_mkfs(&mkfs)) {
		error("cannot create sandbox: disk quota: mkfs.ext4 not found "
		      "(install e2fsprogs)");
		goto out;
	}
	argv[0] = mkfs.buf;
	status = run_capture(argv, &out, MKFS_TIMEOUT_MS);
	if (!exited_ok(status)) {
		strbuf_trim(&out);
		error("cannot create sandbox: disk quota: mkfs.ext4 '%s' "
		      "failed: %s",
		      img, out.len ? out.buf : "(no message)");
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&mkfs);
	strbuf_release(&out);
	return ret;
}

/* copy the data of from to to, keeping holes; to ends up size bytes */
static int copy_sparse(int from, int to, off_t size)
{
	off_t data = 0;

	for (;;) {
		off_t hole, in, out;

		data = lseek(from, data, SEEK_DATA);
		if (data < 0)
			break;
		hole = lseek(from, data, SEEK_HOLE);
		if (hole < 0)
			return -1;
		in = out = data;
		while (in < hole) {
			ssize_t n = copy_file_range(from, &in, to, &out,
						    (size_t)(hole - in), 0);

			if (n < 0)
				return -1;
			if (!n) {
				errno = EIO;
				return -1;
			}
		}
		data = hole;
	}
	if (errno != ENXIO)
		return -1;
	return ftruncate(to, size);
}

/*
 * True if the file system of fd reports the holes of a sparse file
 * (SEEK_HOLE before the end of a file that has fewer blocks than bytes).
 */
static int holes_known(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return 0;
	if ((int64_t)st.st_blocks * 512 >= (int64_t)st.st_size)
		return 1; /* not sparse: nothing to lose */
	return lseek(fd, 0, SEEK_HOLE) < st.st_size;
}

/*
 * The claim's image: a copy of the formatted template of its size in
 * template_dir (made once with mkfs.ext4, ~30 ms; without a journal
 * or the blocks reserved for growing it, a 10 GiB image has ~230 KiB of
 * data to copy), or formatted in place without a template directory.
 */
static int make_image(const char *img, int64_t bytes, const char *template_dir)
{
	struct strbuf tpl = STRBUF_INIT, tmp = STRBUF_INIT;
	int from = -1, to = -1, ret = -1;

	if (!template_dir)
		return format_image(img, bytes);
	/* the name says how it was made: change it with the mkfs options */
	strbuf_addf(&tpl, "%s/ext4-v2-%" PRId64 ".img", template_dir, bytes);
	if (access(tpl.buf, F_OK)) {
		if (mkdir_p(template_dir, 0700) < 0) {
			error_errno("cannot create sandbox: disk quota: "
				    "cannot create '%s'",
				    template_dir);
			goto out;
		}
		/* one name per thread: sessions of one gosbx mcp --http */
		strbuf_addf(&tmp, "%s.%d.%ld.tmp", tpl.buf, (int)getpid(),
			    (long)syscall(SYS_gettid));
		unlink(tmp.buf);
		if (format_image(tmp.buf, bytes))
			goto out;
		/* another process may have made it meanwhile: same thing */
		if (rename(tmp.buf, tpl.buf) < 0) {
			error_errno("cannot create sandbox: disk quota: "
				    "cannot rename '%s'",
				    tmp.buf);
			goto out;
		}
	}
	from = open(tpl.buf, O_RDONLY | O_CLOEXEC);
	if (from >= 0 && !holes_known(from)) {
		/* copying would write every zero: format in place instead */
		ret = format_image(img, bytes);
		goto out;
	}
	to = open(img, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (from < 0 || to < 0 || copy_sparse(from, to, (off_t)bytes) < 0) {
		error_errno("cannot create sandbox: disk quota: cannot copy "
			    "'%s' to '%s'",
			    tpl.buf, img);
		goto out;
	}
	ret = 0;
out:
	if (from >= 0)
		close(from);
	if (to >= 0)
		close(to);
	if (tmp.len)
		unlink(tmp.buf);
	strbuf_release(&tpl);
	strbuf_release(&tmp);
	return ret;
}

/*
 * Attach img to a free loop device that detaches itself once unused
 * (LO_FLAGS_AUTOCLEAR). Returns an open descriptor of the device with
 * its path in dev, or -1 with error().
 */
static int loop_attach(const char *img, struct strbuf *dev)
{
	int ctl, img_fd, fd = -1, tries;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return error_errno("cannot create sandbox: disk quota: "
				   "/dev/loop-control");
	img_fd = open(img, O_RDWR | O_CLOEXEC);
	if (img_fd < 0) {
		error_errno("cannot create sandbox: disk quota: '%s'", img);
		close(ctl);
		return -1;
	}
	for (tries = 0; tries < LOOP_TRIES; tries++) {
		struct loop_config lc;
		int n = ioctl(ctl, LOOP_CTL_GET_FREE);

		if (n < 0) {
			error_errno("cannot create sandbox: disk quota: no "
				    "free loop device");
			break;
		}
		strbuf_reset(dev);
		strbuf_addf(dev, "/dev/loop%d", n);
		fd = open(dev->buf, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			error_errno("cannot create sandbox: disk quota: '%s'",
				    dev->buf);
			break;
		}
		memset(&lc, 0, sizeof(lc));
		lc.fd = (unsigned)img_fd;
		lc.info.lo_flags = LO_FLAGS_AUTOCLEAR;
		if (!ioctl(fd, LOOP_CONFIGURE, &lc))
			break;
		if (errno == EINVAL || errno == ENOTTY) {
			/* before Linux 5.8: two steps */
			struct loop_info64 info;

			memset(&info, 0, sizeof(info));
			info.lo_flags = LO_FLAGS_AUTOCLEAR;
			if (!ioctl(fd, LOOP_SET_FD, img_fd)) {
				if (!ioctl(fd, LOOP_SET_STATUS64, &info))
					break;
				ioctl(fd, LOOP_CLR_FD, 0);
			}
		}
		/* another process took it between the two calls: retry */
		if (errno != EBUSY) {
			error_errno("cannot create sandbox: disk quota: "
				    "cannot attach '%s' to '%s'",
				    img, dev->buf);
			close(fd);
			fd = -1;
			break;
		}
		close(fd);
		fd = -1;
	}
	if (fd < 0 && tries == LOOP_TRIES)
		error("cannot create sandbox: disk quota: every free loop "
		      "device was taken by others (%d tries)",
		      LOOP_TRIES);
	close(img_fd);
	close(ctl);
	return fd;
}

static int make_dir(const char *path, mode_t mode, const struct storage_opts *o)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return error_errno("cannot create sandbox: storage: cannot "
				   "create '%s'",
				   path);
	if ((o->owner != (uid_t)-1 || o->group != (gid_t)-1) &&
	    chown(path, o->owner, o->group) < 0)
		return error_errno("cannot create sandbox: storage: cannot "
				   "chown '%s'",
				   path);
	return 0;
}

/* bytes the file system of path can still give an unprivileged user */
static int64_t free_bytes(const char *path)
{
	struct statvfs vfs;

	if (statvfs(path, &vfs) < 0)
		return -1;
	return (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
}

static int refuse_space(const char *dir, int64_t bytes, int64_t avail)
{
	return error("cannot create sandbox: disk quota: the claim's disk of "
		     "%" PRId64 " MiB is reserved on the host, and the file "
		     "system of '%s' has %" PRId64 " MiB free; pass a smaller "
		     "--disk=<size>, or free space there",
		     bytes >> 20, dir, avail >> 20);
}

/*
 * Reserve every block of the image on the host (fallocate: unwritten
 * extents, nothing is written). A sparse image promises more than the
 * host holds: when the host's file system fills, the loop device's
 * writes fail after the sandbox's write() succeeded and what it wrote
 * is lost (issue 17). Reserved, the sandbox's file system is full when
 * its quota is, and its writer gets ENOSPC; the host's free space is
 * no longer its business. A file system without fallocate (EOPNOTSUPP)
 * keeps the image sparse once the free space was checked.
 */
static int reserve_image(const char *img, const char *dir, int64_t bytes,
			 int64_t avail)
{
	int fd = open(img, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return error_errno("cannot create sandbox: disk quota: "
				   "cannot open '%s'",
				   img);
	if (fallocate(fd, 0, 0, (off_t)bytes) < 0 && errno != EOPNOTSUPP) {
		if (errno == ENOSPC || errno == EDQUOT)
			ret = refuse_space(dir, bytes, avail);
		else
			ret = error_errno("cannot create sandbox: disk quota: "
					  "cannot reserve %" PRId64 " MiB for "
					  "'%s'",
					  bytes >> 20, img);
	}
	close(fd);
	return ret;
}

static int mount_image(struct storage *st, const char *dir,
		       const char *template_dir)
{
	struct strbuf img = STRBUF_INIT, dev = STRBUF_INIT;
	int64_t avail = free_bytes(dir);
	int fd = -1, ret = -1;

	strbuf_addf(&img, "%s/disk.img", dir);
	if (avail >= 0 && avail < st->disk_bytes) {
		refuse_space(dir, st->disk_bytes, avail);
		goto out;
	}
	if (make_image(img.buf, st->disk_bytes, template_dir) ||
	    reserve_image(img.buf, dir, st->disk_bytes, avail))
		goto out;
	fd = loop_attach(img.buf, &dev);
	if (fd < 0)
		goto out;
	if (mount(dev.buf, st->root.buf, "ext4", MS_NOSUID | MS_NODEV,
		  "noinit_itable")) {
		error_errno("cannot create sandbox: disk quota: cannot mount "
			    "'%s' (%s) on '%s'",
			    img.buf, dev.buf, st->root.buf);
		ioctl(fd, LOOP_CLR_FD, 0);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd); /* autoclear: the mount holds the device now */
	strbuf_release(&img);
	strbuf_release(&dev);
	return ret;
}

/*
 * The disk of a claim that asked for none: STORAGE_DEFAULT_DISK, or
 * half of what the host file system of dir has free when that is less
 * (it is reserved: see reserve_image()), with a warning; never less
 * than STORAGE_MIN_DEFAULT_DISK (then the refusal says what is free).
 */
static int64_t default_disk(const char *dir)
{
	int64_t avail = free_bytes(dir), half;

	if (avail < 0 || avail / 2 >= STORAGE_DEFAULT_DISK)
		return STORAGE_DEFAULT_DISK;
	half = (avail / 2) & ~(((int64_t)1 << 20) - 1);
	if (half < STORAGE_MIN_DEFAULT_DISK)
		return STORAGE_MIN_DEFAULT_DISK;
	warning("the claim's disk is %" PRId64 " MiB, not the default %" PRId64
		" MiB: half of what the file system of '%s' has free; "
		"--disk=<size> asks for a size",
		half >> 20, STORAGE_DEFAULT_DISK >> 20, dir);
	return half;
}

int storage_create(struct storage *st, const char *dir,
		   const struct storage_opts *o)
{
	struct strbuf why = STRBUF_INIT;
	enum storage_quota avail;
	int ret = -1;

	storage_paths(st, dir);
	st->quota = STORAGE_QUOTA_NONE;
	st->disk_bytes = 0;
	strbuf_reset(&st->skipped);
	if (o->disk_bytes > 0 && o->disk_bytes < STORAGE_MIN_DISK) {
		error("cannot create sandbox: disk quota: %" PRId64 " bytes "
		      "is below the minimum of %" PRId64 " MiB",
		      o->disk_bytes, STORAGE_MIN_DISK >> 20);
		goto out;
	}
	if (mkdir(st->root.buf, 0755) < 0 && errno != EEXIST) {
		error_errno("cannot create sandbox: storage: cannot create "
			    "'%s'",
			    st->root.buf);
		goto out;
	}
	if (o->disk_bytes >= 0) {
		avail = storage_quota_available(&why);
		if (avail == STORAGE_QUOTA_LOOP) {
			st->quota = STORAGE_QUOTA_LOOP;
			st->disk_bytes = o->disk_bytes ? o->disk_bytes
						       : default_disk(dir);
			if (mount_image(st, dir, o->template_dir))
				goto out;
		} else if (o->disk_explicit) {
			error("cannot create sandbox: disk quota: %s; use "
			      "--disk=0 to run without a disk quota",
			      why.buf);
			goto out;
		} else {
			strbuf_addf(&st->skipped, "no disk quota (%s)",
				    why.buf);
		}
	}
	if (make_dir(st->app.buf, 0755, o) || make_dir(st->home.buf, 0755, o))
		goto fail;
	if (st->quota == STORAGE_QUOTA_LOOP) {
		strbuf_addf(&st->tmp, "%s/tmp", st->root.buf);
		if (make_dir(st->tmp.buf, 0755, o))
			goto fail;
	}
	ret = 0;
	goto out;
fail:
	storage_unmount(dir);
out:
	strbuf_release(&why);
	return ret;
}

/* undo the octal escapes of /proc/self/mountinfo ("\040" for ' ') */
static void unescape(struct strbuf *sb)
{
	size_t i, j = 0;

	for (i = 0; i < sb->len; i++) {
		if (sb->buf[i] == '\\' && i + 3 < sb->len &&
		    sb->buf[i + 1] >= '0' && sb->buf[i + 1] <= '3') {
			sb->buf[j++] = (char)((sb->buf[i + 1] - '0') * 64 +
					      (sb->buf[i + 2] - '0') * 8 +
					      (sb->buf[i + 3] - '0'));
			i += 3;
		} else {
			sb->buf[j++] = sb->buf[i];
		}
	}
	strbuf_setlen(sb, j);
}

static int longer_first(const void *a, const void *b)
{
	size_t la = strlen(*(char *const *)a), lb = strlen(*(char *const *)b);

	return la < lb ? 1 : la > lb ? -1 : 0;
}

int storage_unmount(const char *dir)
{
	struct strbuf info = STRBUF_INIT, prefix = STRBUF_INIT;
	struct strbuf mp = STRBUF_INIT;
	char **list = NULL, *real;
	size_t n = 0, alloc = 0, i;
	const char *p;
	int ret = 0;

	real = realpath(dir, NULL);
	if (!real)
		return 0; /* gone: nothing can be mounted there */
	strbuf_addf(&prefix, "%s/", real);
	if (strbuf_read_file(&info, "/proc/self/mountinfo", 4096) < 0) {
		ret = error_errno("cannot read /proc/self/mountinfo");
		goto out;
	}
	/* "id parent major:minor root mountpoint options ..." */
	for (p = info.buf; *p;) {
		const char *eol = strchrnul(p, '\n'), *f = p;
		int field;

		for (field = 0; field < 4 && f < eol; field++) {
			f = memchr(f, ' ', eol - f);
			if (!f)
				break;
			f++;
		}
		if (f && f < eol && field == 4) {
			const char *end = memchr(f, ' ', eol - f);

			strbuf_reset(&mp);
			strbuf_add(&mp, f, (end ? end : eol) - f);
			unescape(&mp);
			if (starts_with(mp.buf, prefix.buf)) {
				ALLOC_GROW(list, n + 1, alloc);
				list[n++] = xstrdup(mp.buf);
			}
		}
		p = *eol ? eol + 1 : eol;
	}
	if (n)
		qsort(list, n, sizeof(*list), longer_first);
	for (i = 0; i < n; i++)
		if (umount2(list[i], MNT_DETACH | UMOUNT_NOFOLLOW) < 0 &&
		    errno != EINVAL && errno != ENOENT)
			ret = error_errno("cannot unmount '%s'", list[i]);
out:
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	free(real);
	strbuf_release(&info);
	strbuf_release(&prefix);
	strbuf_release(&mp);
	return ret;
}
