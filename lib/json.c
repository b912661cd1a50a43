#include "compat.h"
#include "json.h"
#include "utf8.h"

json_t *json_parse(const char *buf, size_t len, struct strbuf *err)
{
	json_error_t e;
	json_t *v = json_loadb(buf, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);

	if (!v && err)
		strbuf_addf(err, "%s (line %d, column %d)", e.text, e.line,
			    e.column);
	return v;
}

static int dump_cb(const char *buf, size_t size, void *data)
{
	strbuf_add(data, buf, size);
	return 0;
}

int json_dump_into(struct strbuf *out, const json_t *v)
{
	return json_dump_callback(v, dump_cb, out,
				  JSON_COMPACT | JSON_ENCODE_ANY |
					  JSON_PRESERVE_ORDER);
}

/* 1 for bytes that need an escape in a JSON string */
/* clang-format off */
static const unsigned char needs_escape[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* '"' */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* '\\' */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0x80 and up: checked for UTF-8 validity */
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};
/* clang-format on */

/*
 * Non-zero if any of the eight bytes in w needs a look: below 0x20,
 * '"', '\\' or 0x80 and up (the "has zero byte" bit trick; a false
 * alarm only sends the word to the byte-by-byte path).
 */
static inline uint64_t word_needs_look(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL;
	const uint64_t high = 0x8080808080808080ULL;
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');

	return ((w - ones * 0x20) | (q - ones) | (b - ones) | w) & high;
}

/*
 * The escaper; with strict, invalid UTF-8 makes it stop, restore out
 * and return -1 instead of writing U+FFFD.
 */
static int add_string(struct strbuf *out, const char *s, size_t len, int strict)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0, start = out->len;

	strbuf_grow(out, len + 2);
	strbuf_addch(out, '"');
	while (i < len) {
		unsigned char c;
		size_t n;

		if (i + 8 <= len) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			if (!word_needs_look(w)) {
				i += 8;
				continue;
			}
		}
		c = p[i];
		if (!needs_escape[c]) {
			i++;
			continue;
		}
		if (needs_escape[c] == 2) {
			n = utf8_seq_len(p + i, len - i);
			if (n) {
				i += n;
				continue;
			}
			if (strict) {
				strbuf_setlen(out, start);
				return -1;
			}
			strbuf_add(out, s + run, i - run);
			strbuf_add(out, "\xef\xbf\xbd", 3);
			run = ++i;
			continue;
		}
		strbuf_add(out, s + run, i - run);
		switch (c) {
		case '"':
			strbuf_add(out, "\\\"", 2);
			break;
		case '\\':
			strbuf_add(out, "\\\\", 2);
			break;
		case '\n':
			strbuf_add(out, "\\n", 2);
			break;
		case '\r':
			strbuf_add(out, "\\r", 2);
			break;
		case '\t':
			strbuf_add(out, "\\t", 2);
			break;
		case '\b':
			strbuf_add(out, "\\b", 2);
			break;
		case '\f':
			strbuf_add(out, "\\f", 2);
			break;
		default: {
			char u[6] = { '\\', 'u',	 '0',
				      '0',  hex[c >> 4], hex[c & 15] };
			strbuf_add(out, u, 6);
		}
		}
		run = ++i;
	}
	strbuf_add(out, s + run, len - run);
	strbuf_addch(out, '"');
	return 0;
}

void json_add_string(struct strbuf *out, const char *s, size_t len)
{
	add_string(out, s, len, 0);
}

int json_add_string_strict(struct strbuf *out, const char *s, size_t len)
{
	return add_string(out, s, len, 1);
}

const char *json_object_str(const json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int json_object_int(const json_t *obj, const char *key, int64_t *out)
{
	json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v))
		return -1;
	*out = json_integer_value(v);
	return 1;
}

int json_object_bool(const json_t *obj, const char *key, int *out)
{
	json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return -1;
	*out = json_is_true(v);
	return 1;
}

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void base64_encode_into(struct strbuf *out, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i;
	char *o;

	strbuf_grow(out, (len + 2) / 3 * 4);
	o = out->buf + out->len;
	for (i = 0; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | p[i + 1] << 8 | p[i + 2];
		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 63];
		*o++ = b64[(v >> 6) & 63];
		*o++ = b64[v & 63];
	}
	if (len - i == 1) {
		uint32_t v = (uint32_t)p[i] << 16;
		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 63];
		*o++ = '=';
		*o++ = '=';
	} else if (len - i == 2) {
		uint32_t v = (uint32_t)p[i] << 16 | p[i + 1] << 8;
		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 63];
		*o++ = b64[(v >> 6) & 63];
		*o++ = '=';
	}
	strbuf_setlen(out, o - out->buf);
}

static int b64_value(int c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? (int)(p - b64) : -1;
}

int base64_decode_into(struct strbuf *out, const char *s, size_t len)
{
	size_t start = out->len, pad = 0, i;
	uint32_t acc = 0;
	int bits = 0;

	while (len && s[len - 1] == '=') {
		len--;
		pad++;
	}
	/* padding, when present, completes the last group of four */
	if (pad && (pad > 2 || (len + pad) % 4))
		return -1;
	for (i = 0; i < len; i++) {
		int v = b64_value((unsigned char)s[i]);
		if (v < 0)
			goto bad;
		acc = acc << 6 | v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			strbuf_addch(out, (acc >> bits) & 0xff);
		}
	}
	if (bits >= 6)
		goto bad;
	return 0;
bad:
	strbuf_setlen(out, start);
	return -1;
}
