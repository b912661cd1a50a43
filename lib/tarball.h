#ifndef TARBALL_H
#define TARBALL_H

#include "compat.h"
#include "strbuf.h"

#include <time.h>

/*
 * Tar streams over libarchive: safe extraction for gosbx-runtime's
 * `POST /v1/archive`, tar output for `GET /v1/archive` and `gosbx push`,
 * and the seed client's multi-file upload tar
 * (Documentation/protocol/runtime-api.md, "How the seed's client ships several
 * files" and extension `archive`).
 *
 * Nothing here changes the working directory, so every function may run
 * in several threads at once (each call uses its own libarchive
 * objects). One caveat: libarchive's archive_write_disk (used by
 * tar_extract_safe) reads the umask with umask(0) + umask(old) for each
 * entry, so a thread that creates a file or forks at that instant sees
 * umask 0; code that cares (e.g. children of exec) sets its umask or
 * modes explicitly.
 *
 * Names: file names are bytes, taken and written as they are, whatever
 * the caller's locale: libarchive's conversions run under a UTF-8
 * LC_CTYPE of the calling thread only (uselocale(3)), so UTF-8 names
 * ("\u00e9.txt", "\u6570\u636e/x.go") are stored as pax "path" records
 * that any tar reads, and names that are not valid UTF-8 are stored
 * raw (pax hdrcharset=BINARY) and read back unchanged.
 *
 * Errors: each function returns 0 or -1. On -1 it appends one line
 * (no "error: " prefix, no newline) to `err` when `err` is not NULL,
 * and otherwise reports it with error(). libarchive is loaded on the
 * first call (lib/dl/dl.h); when it cannot be, every function fails with
 * "libarchive.so.13 could not be loaded: <reason>; install libarchive13".
 */

struct tar_stats {
	/* regular files, symlinks and hard links written */
	uint64_t files;
	/* sum of the sizes of the regular files written, in bytes */
	uint64_t bytes;
};

/*
 * A write callback: consume len bytes at buf. Return 0 (or any value
 * >= 0) to continue, < 0 to abort the stream (e.g. the client went
 * away); the tar function then returns -1.
 */
typedef int (*tar_write_fn)(const void *buf, size_t len, void *data);

/* flags of tar_extract_safe() */
/*
 * Do not restore the archive's modification times: files and
 * directories get the time they are written, as `tar -m` does (the
 * `mtime=now` of POST /v1/archive, gosbx-runtime(1)): what a later
 * `go test` (its test cache keys files on mtime and size) and make(1)
 * must see for files gosbx writes, rather than the seed tar's 0.
 */
#define TAR_EXTRACT_TOUCH (1u << 0)

/*
 * Extract the tar archive held in `fd` under root/subdir, refusing any
 * entry that could write outside root (extension `archive`).
 *
 * fd:     a seekable file with the whole archive (plain tar, or tar
 *         compressed with gzip, zstd, xz, bzip2...; pax, ustar, gnu
 *         and v7 tar formats). It is read from offset 0 (twice) and
 *         left open; its offset is unspecified afterwards.
 * root:   absolute, already realpath'd path of the workdir.
 * subdir: directory relative to root to extract into; "" or NULL is
 *         root itself. It must not be absolute, contain "..", or go
 *         through a symlink that leaves root; it is created with its
 *         missing parents (mode 0755) when needed.
 * flags:  0 or TAR_EXTRACT_TOUCH.
 * st:     if not NULL, set to what was written (also on failure: what
 *         was written before the failure).
 *
 * First every entry is checked, then everything is extracted; if any
 * entry is refused nothing is written and err says which and why, e.g.
 * "refusing entry '../x': path leaves the target directory". Refused:
 * empty names, absolute names, names with a ".." component; symlinks
 * with an empty or absolute target, or one that (resolved lexically
 * from the link's directory, and through symlinks it goes through
 * before a "..") leaves root; hard links whose target is absolute, has
 * "..", or is neither a regular file earlier in the archive nor an
 * existing regular file inside root; devices, fifos, sockets and
 * unknown types; entries whose path goes through a symlink created by
 * the archive, or through an existing symlink that leaves root (an
 * existing symlink inside root is followed: the entry is written where
 * it points); a non-directory in place of a parent directory; a file
 * in place of an existing directory; paths of PATH_MAX bytes or more.
 *
 * Existing files are replaced (an existing symlink is replaced, never
 * followed). Modes are kept & 0777 (setuid, setgid, sticky dropped),
 * modification times are restored (unless TAR_EXTRACT_TOUCH),
 * ownership never is. A "./" entry
 * for the target directory itself is skipped.
 *
 * Returns 0, or -1 with err filled: a refused entry, a corrupt archive
 * ("invalid archive: <libarchive message>"), or a failure while
 * writing (then earlier entries may have been written).
 */
int tar_extract_safe(int fd, const char *root, const char *subdir,
		     unsigned flags, struct tar_stats *st, struct strbuf *err);

/*
 * Stream a tar (pax restricted: ustar, with pax headers only where
 * ustar cannot hold a value) of root/relpath through write_fn (extension
 * `archive`, `GET /v1/archive?path=`).
 *
 * root:     absolute, realpath'd workdir.
 * relpath:  file or directory relative to root; "" or "." is the whole
 *           root. No absolute path, no ".."; it must not go through a
 *           symlink that leaves root. If it names a symlink, the tar
 *           holds that symlink.
 * write_fn: receives the tar bytes in order (in blocks of up to 10240
 *           bytes); data is passed through unchanged.
 *
 * Entry names are relative to root ("dir/", "dir/a.txt"; for the whole
 * root the children appear at top level without "./"). Directories are
 * walked depth first, each directory's entries sorted by name (strcmp),
 * so equal trees give equal streams. Symlinks are stored as symlinks
 * (never followed), sockets, fifos and devices are skipped silently.
 * Modes & 0777 and mtimes (seconds) are kept; uid/gid are 0 with no
 * names. File data is read in 64 KiB blocks (memory stays bounded); a
 * file that shrinks while read is padded with zero bytes.
 *
 * Returns 0, or -1 with err filled (bad relpath, unreadable file,
 * write_fn < 0: "write aborted").
 */
int tar_write_path(const char *root, const char *relpath, tar_write_fn write_fn,
		   void *data, struct strbuf *err);

/* One file of the seed client's upload map. */
struct tar_file {
	const char *path; /* relative path, '/' separated */
	const char *data; /* contents (may hold NUL bytes) */
	size_t len;	  /* bytes of data */
};

/*
 * Build the seed client's multi-file upload tar
 * (Documentation/protocol/runtime-api.md "How the seed's client ships several
 * files") into out (appended; the caller releases it).
 *
 * Paths are validated as the seed does: not empty, not absolute, no
 * empty, "." or ".." segment; also no duplicate, and no path that is
 * both a file and a parent directory of another. Entries are sorted by
 * name (strcmp); before each file come its parent directories not yet
 * written, as "dir/" with mode 0755; files have mode 0644. Every entry
 * has uid/gid 0 and no user/group names, and the modification time
 * mtime (seconds and nanoseconds; the nanoseconds are stored only where
 * a pax header is written anyway), or 0 when mtime is NULL as the seed
 * does, so the same input always gives the same bytes.
 *
 * Returns 0, or -1 with err filled (e.g. "invalid path 'a//b': empty
 * segment") and out unchanged.
 */
int tar_build_seed(const struct tar_file *files, size_t nr,
		   const struct timespec *mtime, struct strbuf *out,
		   struct strbuf *err);

/*
 * Stream a tar of local files and directory trees for `gosbx push`.
 * Each of the nr paths is stored under its base name, like
 * `tar -C $(dirname p) -c $(basename p)` ("." and ".." use the base name
 * of their real path); a path that is a symlink is stored as that
 * symlink. Directories are walked depth first, entries sorted by name;
 * regular files, directories and symlinks are stored with mode & 0777
 * and mtime kept, uid/gid 0, no user/group names; other types are
 * skipped with a warning(). Same streaming and memory bounds as
 * tar_write_path().
 *
 * Returns 0, or -1 with err filled (missing path, unreadable file,
 * write_fn < 0).
 */
int tar_write_local(const char *const *paths, size_t nr, tar_write_fn write_fn,
		    void *data, struct strbuf *err);

/*
 * A tar stream built entry by entry, for archives whose files come from
 * elsewhere (the sandboxd files API, lib/session/sandboxd.c): the same
 * format as tar_write_path() (pax restricted, uid/gid 0, no names).
 *
 * tar_writer_open(): start a stream through write_fn; returns the
 * writer (freed by tar_writer_close()), or NULL with err filled.
 * tar_writer_dir(): a directory entry name ("a/b/"'s "a/b"), perm & 0777,
 * mtime in seconds since the epoch.
 * tar_writer_file(): a regular file of size bytes; its data follows
 * with tar_writer_data() calls, size bytes in all; fewer are padded
 * with zero bytes by the next entry or tar_writer_close(), more are
 * refused (-1).
 * tar_writer_close(): with ok, finish the stream (end blocks); free the
 * writer either way. Returns 0, or -1 with err filled.
 *
 * Each returns 0, or -1 with err filled (write_fn < 0: "write aborted").
 */
struct tar_writer;
struct tar_writer *tar_writer_open(tar_write_fn write_fn, void *data,
				   struct strbuf *err);
int tar_writer_dir(struct tar_writer *w, const char *name, unsigned perm,
		   int64_t mtime);
int tar_writer_file(struct tar_writer *w, const char *name, unsigned perm,
		    int64_t mtime, uint64_t size);
int tar_writer_data(struct tar_writer *w, const void *buf, size_t len);
int tar_writer_close(struct tar_writer *w, int ok);

#endif /* TARBALL_H */
