#ifndef STRBUF_H
#define STRBUF_H

#include "compat.h"

/*
 * A growing, always NUL-terminated byte buffer (git's strbuf idea).
 * `buf` may hold NUL bytes; `len` is the byte count without the final
 * NUL. Initialise with STRBUF_INIT or strbuf_init(); free with
 * strbuf_release(). All growth dies on out-of-memory.
 */
struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT                                                            \
	{                                                                      \
		0, 0, strbuf_slopbuf                                           \
	}

void strbuf_init(struct strbuf *sb, size_t hint);
/* Free the memory and reset to the empty state. */
void strbuf_release(struct strbuf *sb);
/* Hand the buffer to the caller (who frees it); sb is reset. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
/* Make room for `extra` more bytes. */
void strbuf_grow(struct strbuf *sb, size_t extra);
/* Set the length (bytes); dies if len does not fit the allocation. */
void strbuf_setlen(struct strbuf *sb, size_t len);
#define strbuf_reset(sb) strbuf_setlen((sb), 0)
static inline size_t strbuf_avail(const struct strbuf *sb)
{
	return sb->alloc ? sb->alloc - sb->len - 1 : 0;
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addbuf(struct strbuf *sb, const struct strbuf *other);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) PRINTF_LIKE(2, 3);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/*
 * Remove `len` bytes at offset `pos`, or insert `len` bytes of data
 * there (data must not point into sb). A range past the end of sb is a
 * programming error: they die (exit 128) instead of corrupting memory.
 */
void strbuf_remove(struct strbuf *sb, size_t pos, size_t len);
void strbuf_insert(struct strbuf *sb, size_t pos, const void *data, size_t len);

void strbuf_rtrim(struct strbuf *sb);
void strbuf_ltrim(struct strbuf *sb);
void strbuf_trim(struct strbuf *sb);
/* Append a newline unless empty or already ending with one. */
void strbuf_complete_line(struct strbuf *sb);
int strbuf_starts_with(const struct strbuf *sb, const char *prefix);

/*
 * Append everything readable from fd until EOF; hint is the expected
 * size in bytes (0: 8 KiB). Returns the number of bytes read, or -1
 * with errno set (what was read stays in sb).
 */
ssize_t strbuf_read_fd(struct strbuf *sb, int fd, size_t hint);
/*
 * Append the contents of the file at path. Returns bytes read or -1
 * with errno set; no message is printed.
 */
ssize_t strbuf_read_file(struct strbuf *sb, const char *path, size_t hint);
/*
 * Read one line (without its newline) from fp into sb, replacing its
 * contents. Returns 0, or EOF at end of file with nothing read.
 */
int strbuf_getline(struct strbuf *sb, FILE *fp);

/* True if s starts with prefix; *out (if given) points past it. */
int skip_prefix(const char *s, const char *prefix, const char **out);
int starts_with(const char *s, const char *prefix);
int ends_with(const char *s, const char *suffix);

#endif /* STRBUF_H */
