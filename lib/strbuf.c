#include "compat.h"
#include "strbuf.h"
#include "usage.h"

#include <ctype.h>
#include <fcntl.h>

char strbuf_slopbuf[1];

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->alloc = sb->len = 0;
	sb->buf = strbuf_slopbuf;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *res;

	strbuf_grow(sb, 0);
	res = sb->buf;
	if (len)
		*len = sb->len;
	strbuf_init(sb, 0);
	return res;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	int new_buf = !sb->alloc;
	size_t want;

	if (extra > SIZE_MAX - sb->len - 1)
		die("strbuf_grow: size overflow");
	want = sb->len + extra + 1;
	if (new_buf)
		sb->buf = NULL;
	if (want > sb->alloc) {
		size_t a = sb->alloc ? sb->alloc : 64;
		while (a < want)
			a = a < SIZE_MAX / 2 ? a * 2 : want;
		sb->buf = xrealloc(sb->buf, a);
		sb->alloc = a;
	}
	if (new_buf)
		sb->buf[0] = '\0';
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (!sb->alloc) {
		if (len)
			die("strbuf_setlen: beyond the buffer");
		return;
	}
	if (len >= sb->alloc)
		die("strbuf_setlen: beyond the buffer");
	sb->len = len;
	sb->buf[len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	strbuf_setlen(sb, sb->len + len);
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	strbuf_grow(sb, 1);
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void strbuf_addbuf(struct strbuf *sb, const struct strbuf *other)
{
	strbuf_add(sb, other->buf, other->len);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	if (!strbuf_avail(sb))
		strbuf_grow(sb, 64);
	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		die("strbuf_vaddf: formatting error");
	if ((size_t)n > strbuf_avail(sb)) {
		strbuf_grow(sb, n);
		n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
		if (n < 0)
			die("strbuf_vaddf: formatting error");
	}
	strbuf_setlen(sb, sb->len + n);
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_remove(struct strbuf *sb, size_t pos, size_t len)
{
	if (pos > sb->len || len > sb->len - pos)
		die("strbuf_remove: out of range");
	memmove(sb->buf + pos, sb->buf + pos + len, sb->len - pos - len);
	strbuf_setlen(sb, sb->len - len);
}

void strbuf_insert(struct strbuf *sb, size_t pos, const void *data, size_t len)
{
	if (pos > sb->len)
		die("strbuf_insert: out of range");
	if (!len)
		return;
	strbuf_grow(sb, len);
	memmove(sb->buf + pos + len, sb->buf + pos, sb->len - pos);
	memcpy(sb->buf + pos, data, len);
	strbuf_setlen(sb, sb->len + len);
}

void strbuf_rtrim(struct strbuf *sb)
{
	while (sb->len > 0 && isspace((unsigned char)sb->buf[sb->len - 1]))
		sb->len--;
	if (sb->alloc)
		sb->buf[sb->len] = '\0';
}

void strbuf_ltrim(struct strbuf *sb)
{
	size_t i = 0;

	while (i < sb->len && isspace((unsigned char)sb->buf[i]))
		i++;
	if (i)
		strbuf_remove(sb, 0, i);
}

void strbuf_trim(struct strbuf *sb)
{
	strbuf_rtrim(sb);
	strbuf_ltrim(sb);
}

void strbuf_complete_line(struct strbuf *sb)
{
	if (sb->len && sb->buf[sb->len - 1] != '\n')
		strbuf_addch(sb, '\n');
}

int strbuf_starts_with(const struct strbuf *sb, const char *prefix)
{
	size_t n = strlen(prefix);

	return sb->len >= n && !memcmp(sb->buf, prefix, n);
}

ssize_t strbuf_read_fd(struct strbuf *sb, int fd, size_t hint)
{
	size_t start = sb->len;

	strbuf_grow(sb, hint ? hint : 8192);
	for (;;) {
		ssize_t n;

		if (strbuf_avail(sb) < 4096)
			strbuf_grow(sb, sb->alloc);
		n = xread(fd, sb->buf + sb->len, strbuf_avail(sb));
		if (n < 0)
			return -1;
		if (!n)
			break;
		strbuf_setlen(sb, sb->len + n);
	}
	return sb->len - start;
}

ssize_t strbuf_read_file(struct strbuf *sb, const char *path, size_t hint)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	int e;

	if (fd < 0)
		return -1;
	n = strbuf_read_fd(sb, fd, hint);
	e = errno;
	close(fd);
	errno = e;
	return n;
}

int strbuf_getline(struct strbuf *sb, FILE *fp)
{
	int c;

	strbuf_reset(sb);
	while ((c = getc(fp)) != EOF) {
		if (c == '\n')
			return 0;
		strbuf_addch(sb, c);
	}
	return sb->len ? 0 : EOF;
}

int skip_prefix(const char *s, const char *prefix, const char **out)
{
	size_t n = strlen(prefix);

	if (strncmp(s, prefix, n))
		return 0;
	if (out)
		*out = s + n;
	return 1;
}

int starts_with(const char *s, const char *prefix)
{
	return skip_prefix(s, prefix, NULL);
}

int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}
