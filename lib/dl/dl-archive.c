#include "compat.h"
#include "dl/dl.h"
#include "usage.h"

#include <archive.h>
#include <archive_entry.h>
#include <pthread.h>

/*
 * libarchive, loaded on the first call of any function below (lib/dl/dl.h).
 * Every libarchive function gosbx uses (lib/tarball.c and its unit test
 * t/unit/u-tarball.c) is defined here with the prototype of <archive.h>
 * or <archive_entry.h>, and calls the library's own through a pointer of
 * the same type (__typeof__), so a prototype that does not match the
 * header does not compile.
 */

#define SONAME "libarchive.so.13"
#define PACKAGE "libarchive13"

/* The symbols resolved at load time: one X(name) per function. */
#define ARCHIVE_SYMBOLS(X)                                                     \
	X(archive_entry_acl_clear)                                             \
	X(archive_entry_clear)                                                 \
	X(archive_entry_filetype)                                              \
	X(archive_entry_free)                                                  \
	X(archive_entry_gid)                                                   \
	X(archive_entry_gname)                                                 \
	X(archive_entry_hardlink)                                              \
	X(archive_entry_mtime)                                                 \
	X(archive_entry_new)                                                   \
	X(archive_entry_pathname)                                              \
	X(archive_entry_perm)                                                  \
	X(archive_entry_set_fflags)                                            \
	X(archive_entry_set_filetype)                                          \
	X(archive_entry_set_gid)                                               \
	X(archive_entry_set_hardlink)                                          \
	X(archive_entry_set_mtime)                                             \
	X(archive_entry_set_pathname)                                          \
	X(archive_entry_set_perm)                                              \
	X(archive_entry_set_rdev)                                              \
	X(archive_entry_set_size)                                              \
	X(archive_entry_set_symlink)                                           \
	X(archive_entry_set_uid)                                               \
	X(archive_entry_size)                                                  \
	X(archive_entry_sparse_add_entry)                                      \
	X(archive_entry_symlink)                                               \
	X(archive_entry_uid)                                                   \
	X(archive_entry_uname)                                                 \
	X(archive_entry_xattr_clear)                                           \
	X(archive_error_string)                                                \
	X(archive_read_data)                                                   \
	X(archive_read_data_block)                                             \
	X(archive_read_data_skip)                                              \
	X(archive_read_free)                                                   \
	X(archive_read_new)                                                    \
	X(archive_read_next_header)                                            \
	X(archive_read_open_fd)                                                \
	X(archive_read_open_filename)                                          \
	X(archive_read_open_memory)                                            \
	X(archive_read_support_filter_all)                                     \
	X(archive_read_support_format_empty)                                   \
	X(archive_read_support_format_gnutar)                                  \
	X(archive_read_support_format_tar)                                     \
	X(archive_set_error)                                                   \
	X(archive_version_details)                                             \
	X(archive_write_add_filter)                                            \
	X(archive_write_add_filter_none)                                       \
	X(archive_write_close)                                                 \
	X(archive_write_data)                                                  \
	X(archive_write_data_block)                                            \
	X(archive_write_disk_new)                                              \
	X(archive_write_disk_set_options)                                      \
	X(archive_write_finish_entry)                                          \
	X(archive_write_free)                                                  \
	X(archive_write_header)                                                \
	X(archive_write_new)                                                   \
	X(archive_write_open)                                                  \
	X(archive_write_open_filename)                                         \
	X(archive_write_set_format_pax_restricted)

DL_LOADER(ARCHIVE_SYMBOLS)

const char *dl_archive_error(void)
{
	return loaded() ? NULL : load_error;
}

const char *dl_archive_version(const char **why)
{
	if (loaded())
		return fn.archive_version_details();
	*why = load_error;
	return NULL;
}

/* A constructor: NULL and the reason reported when not loaded. */
#define SHIM_NEW(type, name)                                                   \
	type *name(void)                                                       \
	{                                                                      \
		if (!loaded()) {                                               \
			error("%s", load_error);                               \
			return NULL;                                           \
		}                                                              \
		return fn.name();                                              \
	}

/* the shims below are macro calls: keep them as written */
/* clang-format off */
SHIM_NEW(struct archive, archive_read_new)
SHIM_NEW(struct archive, archive_write_new)
SHIM_NEW(struct archive, archive_write_disk_new)
SHIM_NEW(struct archive_entry, archive_entry_new)

/* struct archive */

SHIM(const char *, archive_error_string, (struct archive *a), (a),
     load_error)

void archive_set_error(struct archive *a, int err, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	if (!loaded())
		return;
	/* libarchive has no va_list variant: format here */
	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt ? fmt : "", ap);
	va_end(ap);
	fn.archive_set_error(a, err, "%s", msg.buf);
	strbuf_release(&msg);
}

SHIM(la_ssize_t, archive_read_data, (struct archive *a, void *buf, size_t n),
     (a, buf, n), ARCHIVE_FATAL)
SHIM(int, archive_read_data_block,
     (struct archive *a, const void **buf, size_t *size, la_int64_t *offset),
     (a, buf, size, offset), ARCHIVE_FATAL)
SHIM(int, archive_read_data_skip, (struct archive *a), (a), ARCHIVE_FATAL)
SHIM(int, archive_read_free, (struct archive *a), (a), ARCHIVE_FATAL)
SHIM(int, archive_read_next_header,
     (struct archive *a, struct archive_entry **e), (a, e), ARCHIVE_FATAL)
SHIM(int, archive_read_open_fd, (struct archive *a, int fd, size_t block),
     (a, fd, block), ARCHIVE_FATAL)
SHIM(int, archive_read_open_filename,
     (struct archive *a, const char *file, size_t block), (a, file, block),
     ARCHIVE_FATAL)
SHIM(int, archive_read_open_memory,
     (struct archive *a, const void *buf, size_t size), (a, buf, size),
     ARCHIVE_FATAL)
SHIM(int, archive_read_support_filter_all, (struct archive *a), (a),
     ARCHIVE_FATAL)
SHIM(int, archive_read_support_format_empty, (struct archive *a), (a),
     ARCHIVE_FATAL)
SHIM(int, archive_read_support_format_gnutar, (struct archive *a), (a),
     ARCHIVE_FATAL)
SHIM(int, archive_read_support_format_tar, (struct archive *a), (a),
     ARCHIVE_FATAL)
SHIM(int, archive_write_add_filter, (struct archive *a, int code), (a, code),
     ARCHIVE_FATAL)
SHIM(int, archive_write_add_filter_none, (struct archive *a), (a),
     ARCHIVE_FATAL)
SHIM(int, archive_write_close, (struct archive *a), (a), ARCHIVE_FATAL)
SHIM(la_ssize_t, archive_write_data,
     (struct archive *a, const void *buf, size_t n), (a, buf, n),
     ARCHIVE_FATAL)
SHIM(la_ssize_t, archive_write_data_block,
     (struct archive *a, const void *buf, size_t n, la_int64_t offset),
     (a, buf, n, offset), ARCHIVE_FATAL)
SHIM(int, archive_write_disk_set_options, (struct archive *a, int flags),
     (a, flags), ARCHIVE_FATAL)
SHIM(int, archive_write_finish_entry, (struct archive *a), (a),
     ARCHIVE_FATAL)
SHIM(int, archive_write_free, (struct archive *a), (a), ARCHIVE_FATAL)
SHIM(int, archive_write_header, (struct archive *a, struct archive_entry *e),
     (a, e), ARCHIVE_FATAL)
SHIM(int, archive_write_open,
     (struct archive *a, void *data, archive_open_callback *open_cb,
      archive_write_callback *write_cb, archive_close_callback *close_cb),
     (a, data, open_cb, write_cb, close_cb), ARCHIVE_FATAL)
SHIM(int, archive_write_open_filename, (struct archive *a, const char *file),
     (a, file), ARCHIVE_FATAL)
SHIM(int, archive_write_set_format_pax_restricted, (struct archive *a), (a),
     ARCHIVE_FATAL)

/* struct archive_entry */

SHIM_VOID(archive_entry_acl_clear, (struct archive_entry *e), (e))
SHIM(struct archive_entry *, archive_entry_clear, (struct archive_entry *e),
     (e), NULL)
SHIM(mode_t, archive_entry_filetype, (struct archive_entry *e), (e), 0)
SHIM_VOID(archive_entry_free, (struct archive_entry *e), (e))
SHIM(la_int64_t, archive_entry_gid, (struct archive_entry *e), (e), 0)
SHIM(const char *, archive_entry_gname, (struct archive_entry *e), (e), NULL)
SHIM(const char *, archive_entry_hardlink, (struct archive_entry *e), (e),
     NULL)
SHIM(time_t, archive_entry_mtime, (struct archive_entry *e), (e), 0)
SHIM(const char *, archive_entry_pathname, (struct archive_entry *e), (e),
     NULL)
SHIM(mode_t, archive_entry_perm, (struct archive_entry *e), (e), 0)
SHIM_VOID(archive_entry_set_fflags,
	  (struct archive_entry *e, unsigned long set, unsigned long clear),
	  (e, set, clear))
SHIM_VOID(archive_entry_set_filetype, (struct archive_entry *e, unsigned t),
	  (e, t))
SHIM_VOID(archive_entry_set_gid, (struct archive_entry *e, la_int64_t g),
	  (e, g))
SHIM_VOID(archive_entry_set_hardlink, (struct archive_entry *e, const char *l),
	  (e, l))
SHIM_VOID(archive_entry_set_mtime, (struct archive_entry *e, time_t t, long ns),
	  (e, t, ns))
SHIM_VOID(archive_entry_set_pathname, (struct archive_entry *e, const char *p),
	  (e, p))
SHIM_VOID(archive_entry_set_perm, (struct archive_entry *e, mode_t m), (e, m))
SHIM_VOID(archive_entry_set_rdev, (struct archive_entry *e, dev_t d), (e, d))
SHIM_VOID(archive_entry_set_size, (struct archive_entry *e, la_int64_t s),
	  (e, s))
SHIM_VOID(archive_entry_set_symlink, (struct archive_entry *e, const char *l),
	  (e, l))
SHIM_VOID(archive_entry_set_uid, (struct archive_entry *e, la_int64_t u),
	  (e, u))
SHIM(la_int64_t, archive_entry_size, (struct archive_entry *e), (e), 0)
SHIM_VOID(archive_entry_sparse_add_entry,
	  (struct archive_entry *e, la_int64_t off, la_int64_t len),
	  (e, off, len))
SHIM(const char *, archive_entry_symlink, (struct archive_entry *e), (e),
     NULL)
SHIM(la_int64_t, archive_entry_uid, (struct archive_entry *e), (e), 0)
SHIM(const char *, archive_entry_uname, (struct archive_entry *e), (e), NULL)
SHIM_VOID(archive_entry_xattr_clear, (struct archive_entry *e), (e))
/* clang-format on */
