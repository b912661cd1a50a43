#ifndef STORAGE_H
#define STORAGE_H

#include "compat.h"
#include "strbuf.h"

/*
 * A local claim's writable storage on the host: everything a sandbox
 * may write lives here and nowhere else (Documentation/technical/design.md
 * "Backends": a claim writes only its own cache layer; issue 9 findings 4 and
 * 10).
 *
 * Layout under the claim directory <dir>:
 *   disk.img   the claim's file system image (quota "loop" only): an
 *              ext4 image of --disk bytes, made with mkfs.ext4
 *              (or copied from such an image made once, see
 *              storage_opts.template_dir)
 *   fs/        the storage: the image mounted (nosuid, nodev) on the
 *              host, or a plain directory (quota "none")
 *     app/     /app, the working directory
 *     home/    /home/sandbox: HOME, GOPATH, the Go build cache
 *              (.cache/go-build) and module cache (go/pkg/mod)
 *     tmp/     /tmp (quota "loop" only)
 *
 * The Go caches are the claim's own: no cache is shared between claims,
 * so nothing one sandbox builds or writes can reach another's build.
 * There is no shared layer (Debian's bwrap 0.8 has no overlay mounts;
 * with Go 1.19's precompiled standard library a new claim's first
 * `go run hello.go` costs ~0.1 s more than with a warm cache; newer Go
 * compiles the standard packages it needs once per claim).
 *
 * Quota kinds (storage_quota_available()):
 *   loop: as root, where /dev/loop-control and mkfs.ext4 exist: /app,
 *         /tmp and HOME (so the caches) share one file system of
 *         disk_bytes; a full disk gives ENOSPC to the writer. Every
 *         block of the image is reserved on the host when the claim is
 *         made (fallocate, nothing written; issue 17: a sparse image
 *         lost what a sandbox wrote once the host's disk filled), so
 *         the host's free space never reaches into a sandbox; a claim
 *         whose disk the host cannot hold is refused at open with how
 *         much is free. A claim that asked for no size gets
 *         STORAGE_DEFAULT_DISK, or half of the free space when that is
 *         less (with a warning), and STORAGE_MIN_DEFAULT_DISK at
 *         least. On a file system without fallocate the image stays
 *         sparse after that check.
 *   none: elsewhere (a normal user cannot mount a block file system):
 *         /app and HOME are directories on the host's file system
 *         without a limit; /tmp is a tmpfs inside the sandbox of the
 *         size isolate.h gives it (ISOLATE_TMPFS_MAX or half the memory
 *         limit, whichever is smaller), so that a full /tmp gives ENOSPC
 *         and can never use the whole memory limit. An explicit disk
 *         quota fails closed.
 *
 * Environment: GOSBX_NO_LOOP=1 makes root behave as if loop devices
 * were not usable (tests of the "none" kind).
 */

/*
 * 2 GiB: every block is reserved on the host (issue 17), so the default
 * decides how many claims a disk holds: with 10 GiB, 7 claims took 70 of
 * 75 GB free and t4110's 20 MCP sessions at once were refused from the
 * 13th on; --disk asks for more
 */
#define STORAGE_DEFAULT_DISK ((int64_t)2 << 30) /* bytes */
#define STORAGE_MIN_DISK ((int64_t)16 << 20)	/* bytes */
/* a default disk is half the host's free space at most, and this at least */
#define STORAGE_MIN_DEFAULT_DISK ((int64_t)256 << 20) /* bytes */

enum storage_quota {
	STORAGE_QUOTA_NONE, /* plain directories, no quota */
	STORAGE_QUOTA_LOOP, /* a loop-mounted ext4 image per claim */
};

/* "none", "loop" */
const char *storage_quota_name(enum storage_quota q);

struct storage_opts {
	/* the quota in bytes; 0: STORAGE_DEFAULT_DISK; < 0: none */
	int64_t disk_bytes;
	/* the user asked for disk_bytes: it never degrades */
	int disk_explicit;
	/*
	 * Host owner given to app/, home/ and tmp/ (the sandbox's host
	 * uid and gid); (uid_t)-1 / (gid_t)-1 leave the creator's.
	 */
	uid_t owner;
	gid_t group;
	/*
	 * Where formatted images are kept to be copied (one per size,
	 * made once; created if missing); NULL: mkfs.ext4 every image.
	 */
	const char *template_dir;
};

#define STORAGE_OPTS_INIT                                                      \
	{                                                                      \
		0, 0, (uid_t)-1, (gid_t)-1, NULL                               \
	}

struct storage {
	enum storage_quota quota;
	int64_t disk_bytes;    /* the quota (loop), 0 without one */
	struct strbuf root;    /* <dir>/fs */
	struct strbuf app;     /* <dir>/fs/app */
	struct strbuf home;    /* <dir>/fs/home */
	struct strbuf tmp;     /* <dir>/fs/tmp; empty: /tmp is a tmpfs */
	struct strbuf skipped; /* a default quota not applied, and why */
};

void storage_init(struct storage *st);
void storage_release(struct storage *st);

/*
 * The quota kind this process can apply, with the reason on why (for
 * "none": what is missing). Checks: effective uid 0, GOSBX_NO_LOOP,
 * /dev/loop-control readable and writable, mkfs.ext4 on PATH or in
 * /usr/sbin, /sbin.
 */
enum storage_quota storage_quota_available(struct strbuf *why);

/*
 * Create the storage of a new claim in the existing directory dir
 * (absolute; the claim directory) as described above. With quota
 * "loop": make disk.img (a copy of the template of its size, else
 * truncated to the quota and formatted with mkfs.ext4), attach it to a
 * free loop device (LOOP_CONFIGURE, autoclear) and mount it on fs/
 * nosuid,nodev. The image is reserved first: "the claim's disk of N MiB
 * is reserved on the host, and the file system of '<dir>' has M MiB
 * free" when it cannot be. A default quota this process cannot apply (kind
 * "none") is described in st->skipped for the caller's one warning; an
 * explicit one fails. Returns 0, or -1 with error("cannot create
 * sandbox: disk quota: <cause>"); on failure nothing stays mounted
 * (the caller removes dir). st must be initialised.
 */
int storage_create(struct storage *st, const char *dir,
		   const struct storage_opts *o);

/*
 * The paths of an existing claim's storage (no check, nothing made):
 * for readers such as `gosbx claims --size`.
 */
void storage_paths(struct storage *st, const char *dir);

/*
 * Unmount every mount under dir (the claim's fs/ and anything below
 * it), deepest first, lazily (MNT_DETACH): the file system goes away
 * once no sandbox uses it, and the loop device with it. Call after
 * the sandbox was killed, before removing dir. Nothing mounted is
 * success. Returns 0, or -1 with error() for a mount that stays.
 */
int storage_unmount(const char *dir);

#endif /* STORAGE_H */
