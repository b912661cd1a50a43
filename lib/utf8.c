#include "compat.h"
#include "utf8.h"

size_t utf8_seq_len(const unsigned char *s, size_t len)
{
	unsigned char c;

	if (!len)
		return 0;
	c = s[0];
	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0;
	if (c < 0xe0) {
		if (len < 2 || (s[1] & 0xc0) != 0x80)
			return 0;
		return 2;
	}
	if (c < 0xf0) {
		if (len < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && s[1] < 0xa0)
			return 0; /* overlong */
		if (c == 0xed && s[1] >= 0xa0)
			return 0; /* surrogate */
		return 3;
	}
	if (c < 0xf5) {
		if (len < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (s[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && s[1] < 0x90)
			return 0; /* overlong */
		if (c == 0xf4 && s[1] >= 0x90)
			return 0; /* above U+10FFFF */
		return 4;
	}
	return 0;
}

int utf8_is_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		size_t n;

		/* fast path over ASCII, eight bytes at a time */
		while (i + 8 <= len) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			if (w & 0x8080808080808080ULL)
				break;
			i += 8;
		}
		if (i >= len)
			break;
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		n = utf8_seq_len(p + i, len - i);
		if (!n)
			return 0;
		i += n;
	}
	return 1;
}

static int second_byte_ok(unsigned char lead, unsigned char b)
{
	if (lead == 0xe0)
		return b >= 0xa0 && b <= 0xbf;
	if (lead == 0xed)
		return b >= 0x80 && b <= 0x9f;
	if (lead == 0xf0)
		return b >= 0x90 && b <= 0xbf;
	if (lead == 0xf4)
		return b >= 0x80 && b <= 0x8f;
	return (b & 0xc0) == 0x80;
}

size_t utf8_incomplete_tail(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t back = 1; back <= 3 && back <= len; back++) {
		unsigned char c = p[len - back];
		size_t need;

		if ((c & 0xc0) == 0x80)
			continue; /* continuation byte: look further back */
		if (c >= 0xc2 && c < 0xe0)
			need = 2;
		else if (c >= 0xe0 && c < 0xf0)
			need = 3;
		else if (c >= 0xf0 && c < 0xf5)
			need = 4;
		else
			return 0;
		if (need <= back)
			return 0; /* complete, or not our business */
		if (back >= 2 && !second_byte_ok(c, p[len - back + 1]))
			return 0;
		return back;
	}
	return 0;
}

void utf8_sanitize_into(struct strbuf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;

	strbuf_grow(out, len);
	while (i < len) {
		size_t n = p[i] < 0x80 ? 1 : utf8_seq_len(p + i, len - i);

		if (n) {
			i += n;
			continue;
		}
		strbuf_add(out, s + run, i - run);
		strbuf_add(out, "\xef\xbf\xbd", 3);
		i++;
		run = i;
	}
	strbuf_add(out, s + run, len - run);
}

size_t utf8_cut(const char *s, size_t len, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n, back;

	if (max >= len)
		return len;
	n = max;
	/* step back over continuation bytes to a sequence start */
	for (back = 0; back < 3 && n > 0 && (p[n] & 0xc0) == 0x80; back++)
		n--;
	if (n < max) {
		size_t l = utf8_seq_len(p + n, len - n);

		/*
		 * Cut before the character only if max falls inside it;
		 * if it ends before max, p[max] is a stray continuation
		 * byte and so are the ones between (invalid bytes: cut
		 * anywhere).
		 */
		if (l && n + l > max)
			return n;
		return max;
	}
	return max;
}

/* A character to escape at s (n: its valid length, 0 if invalid)? */
static int escape_here(const unsigned char *s, size_t n, unsigned flags)
{
	if (!n)
		return 1;
	if (n == 1) {
		if (*s == '\n' || *s == '\t')
			return !(flags & UTF8_ESCAPE_KEEP_LINES);
		return *s < 0x20 || *s == 0x7f;
	}
	/* C1 controls: U+0080..U+009F are c2 80..c2 9f */
	return n == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

int utf8_needs_escape(const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq_len(p + i, len - i);

		if (escape_here(p + i, n, flags))
			return 1;
		i += n;
	}
	return 0;
}

void utf8_escape_into(struct strbuf *out, const char *s, size_t len,
		      unsigned flags)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq_len(p + i, len - i);
		unsigned char c = p[i];

		if ((flags & UTF8_ESCAPE_QUOTE) && (c == '"' || c == '\\')) {
			strbuf_addch(out, '\\');
			strbuf_addch(out, (char)c);
			i++;
			continue;
		}
		if (!escape_here(p + i, n, flags)) {
			strbuf_add(out, s + i, n);
			i += n;
			continue;
		}
		if (n == 2) { /* C1 */
			strbuf_addf(out, "\\u00%c%c", hex[p[i + 1] >> 4],
				    hex[p[i + 1] & 15]);
			i += 2;
			continue;
		}
		switch (c) {
		case '\n':
			strbuf_addstr(out, "\\n");
			break;
		case '\r':
			strbuf_addstr(out, "\\r");
			break;
		case '\t':
			strbuf_addstr(out, "\\t");
			break;
		case '\a':
			strbuf_addstr(out, "\\a");
			break;
		case '\b':
			strbuf_addstr(out, "\\b");
			break;
		case '\f':
			strbuf_addstr(out, "\\f");
			break;
		case '\v':
			strbuf_addstr(out, "\\v");
			break;
		default:
			strbuf_addf(out, "\\x%c%c", hex[c >> 4], hex[c & 15]);
		}
		i++;
	}
}
