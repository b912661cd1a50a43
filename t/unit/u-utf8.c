#include "compat.h"
#include "utf8.h"

#include <setjmp.h>
#include <cmocka.h>

#define U(s) ((const unsigned char *)(s))

/*
 * An independent reference decoder, by code point ranges (RFC 3629
 * section 4): the length of the valid sequence at s, or 0.
 */
static size_t ref_len(const unsigned char *s, size_t len)
{
	uint32_t cp, min;
	size_t n;

	if (!len)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static size_t encode(uint32_t cp, unsigned char *o)
{
	if (cp < 0x80) {
		o[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = 0xc0 | cp >> 6;
		o[1] = 0x80 | (cp & 63);
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = 0xe0 | cp >> 12;
		o[1] = 0x80 | ((cp >> 6) & 63);
		o[2] = 0x80 | (cp & 63);
		return 3;
	}
	o[0] = 0xf0 | cp >> 18;
	o[1] = 0x80 | ((cp >> 12) & 63);
	o[2] = 0x80 | ((cp >> 6) & 63);
	o[3] = 0x80 | (cp & 63);
	return 4;
}

static uint32_t rnd_state = 12345;
static uint32_t rnd(void)
{
	/* xorshift32: deterministic, so failures reproduce */
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

static uint32_t random_scalar(void)
{
	for (;;) {
		uint32_t cp;

		switch (rnd() % 4) {
		case 0:
			cp = rnd() % 0x80;
			break;
		case 1:
			cp = 0x80 + rnd() % (0x800 - 0x80);
			break;
		case 2:
			cp = 0x800 + rnd() % (0x10000 - 0x800);
			break;
		default:
			cp = 0x10000 + rnd() % (0x110000 - 0x10000);
		}
		if (cp < 0xd800 || cp > 0xdfff)
			return cp;
	}
}

/*
 * Random valid UTF-8 into buf (at most max bytes); bounds[] gets 1 at
 * every character boundary (0..len). Returns len.
 */
static size_t random_valid(unsigned char *buf, size_t max, char *bounds)
{
	size_t len = 0, want = rnd() % max;

	memset(bounds, 0, max + 1);
	bounds[0] = 1;
	while (len + 4 <= want) {
		len += encode(random_scalar(), buf + len);
		bounds[len] = 1;
	}
	return len;
}

/* Random bytes with a bias towards (broken) UTF-8 pieces. */
static size_t random_mess(unsigned char *buf, size_t max)
{
	size_t len = 0, want = rnd() % max;

	while (len + 4 <= want) {
		unsigned char tmp[4];
		size_t n;

		switch (rnd() % 5) {
		case 0:
			buf[len++] = rnd() & 0xff;
			break;
		case 1:
			buf[len++] = 0x80 | (rnd() & 0x7f);
			break;
		case 2: /* a truncated sequence */
			n = encode(random_scalar(), tmp);
			n = n > 1 ? 1 + rnd() % (n - 1) : 1;
			memcpy(buf + len, tmp, n);
			len += n;
			break;
		default:
			len += encode(random_scalar(), buf + len);
		}
	}
	return len;
}

static void test_seq_len_valid(void **state)
{
	assert_int_equal(utf8_seq_len(U("a"), 1), 1);
	assert_int_equal(utf8_seq_len(U("\0"), 1), 1);
	assert_int_equal(utf8_seq_len(U("\x7f"), 1), 1);
	assert_int_equal(utf8_seq_len(U("\xc2\x80"), 2), 2);	 /* U+0080 */
	assert_int_equal(utf8_seq_len(U("\xc3\xa9x"), 3), 2);	 /* é */
	assert_int_equal(utf8_seq_len(U("\xdf\xbf"), 2), 2);	 /* U+07FF */
	assert_int_equal(utf8_seq_len(U("\xe0\xa0\x80"), 3), 3); /* U+0800 */
	assert_int_equal(utf8_seq_len(U("\xe2\x82\xac"), 3), 3); /* € */
	assert_int_equal(utf8_seq_len(U("\xed\x9f\xbf"), 3), 3); /* U+D7FF */
	assert_int_equal(utf8_seq_len(U("\xee\x80\x80"), 3), 3); /* U+E000 */
	assert_int_equal(utf8_seq_len(U("\xef\xbf\xbf"), 3), 3); /* U+FFFF */
	assert_int_equal(utf8_seq_len(U("\xf0\x90\x80\x80"), 4), 4);
	assert_int_equal(utf8_seq_len(U("\xf0\x9f\x98\x80"), 4), 4); /* 😀 */
	assert_int_equal(utf8_seq_len(U("\xf4\x8f\xbf\xbf"), 4), 4);
}

static void test_seq_len_invalid(void **state)
{
	/* overlong forms */
	assert_int_equal(utf8_seq_len(U("\xc0\x80"), 2), 0);
	assert_int_equal(utf8_seq_len(U("\xc1\xbf"), 2), 0);
	assert_int_equal(utf8_seq_len(U("\xe0\x80\x80"), 3), 0);
	assert_int_equal(utf8_seq_len(U("\xe0\x9f\xbf"), 3), 0);
	assert_int_equal(utf8_seq_len(U("\xf0\x80\x80\x80"), 4), 0);
	assert_int_equal(utf8_seq_len(U("\xf0\x8f\xbf\xbf"), 4), 0);
	/* surrogates */
	assert_int_equal(utf8_seq_len(U("\xed\xa0\x80"), 3), 0);
	assert_int_equal(utf8_seq_len(U("\xed\xbf\xbf"), 3), 0);
	/* above U+10FFFF */
	assert_int_equal(utf8_seq_len(U("\xf4\x90\x80\x80"), 4), 0);
	assert_int_equal(utf8_seq_len(U("\xf5\x80\x80\x80"), 4), 0);
	assert_int_equal(utf8_seq_len(U("\xf7\xbf\xbf\xbf"), 4), 0);
	assert_int_equal(utf8_seq_len(U("\xf8\x88\x80\x80\x80"), 5), 0);
	assert_int_equal(utf8_seq_len(U("\xff"), 1), 0);
	assert_int_equal(utf8_seq_len(U("\xfe"), 1), 0);
	/* lone continuation bytes */
	assert_int_equal(utf8_seq_len(U("\x80"), 1), 0);
	assert_int_equal(utf8_seq_len(U("\xbf"), 1), 0);
	/* bad continuation */
	assert_int_equal(utf8_seq_len(U("\xc3("), 2), 0);
	assert_int_equal(utf8_seq_len(U("\xc3\xc3"), 2), 0);
	assert_int_equal(utf8_seq_len(U("\xe2\x82("), 3), 0);
	assert_int_equal(utf8_seq_len(U("\xe2(\xac"), 3), 0);
	assert_int_equal(utf8_seq_len(U("\xf0\x9f\x98("), 4), 0);
	assert_int_equal(utf8_seq_len(U("\xf0\x9f(\x80"), 4), 0);
	/* truncated: cut short by len, even if the buffer goes on */
	assert_int_equal(utf8_seq_len(U("\xc3\xa9"), 1), 0);
	assert_int_equal(utf8_seq_len(U("\xe2\x82\xac"), 2), 0);
	assert_int_equal(utf8_seq_len(U("\xe2\x82\xac"), 1), 0);
	assert_int_equal(utf8_seq_len(U("\xf0\x9f\x98\x80"), 3), 0);
	assert_int_equal(utf8_seq_len(U("\xf0\x9f\x98\x80"), 2), 0);
	assert_int_equal(utf8_seq_len(U("\xf0\x9f\x98\x80"), 1), 0);
	/* an empty range starts nothing; s[0] must not be read */
	assert_int_equal(utf8_seq_len(U("a"), 0), 0);
	{
		unsigned char *one = malloc(1);

		*one = 'a';
		assert_int_equal(utf8_seq_len(one + 1, 0), 0);
		free(one);
	}
}

static void test_seq_len_exhaustive(void **state)
{
	/* every 1..3 byte pattern and all 4-byte patterns with a sample */
	unsigned char b[4];

	for (unsigned a = 0; a < 256; a++) {
		b[0] = a;
		assert_int_equal(utf8_seq_len(b, 1), ref_len(b, 1));
		for (unsigned c = 0; c < 256; c++) {
			b[1] = c;
			assert_int_equal(utf8_seq_len(b, 2), ref_len(b, 2));
			for (unsigned d = 0x70; d < 0xd0; d++) {
				b[2] = d;
				assert_int_equal(utf8_seq_len(b, 3),
						 ref_len(b, 3));
				b[3] = 0x80 + (a ^ c ^ d) % 0x50;
				if (utf8_seq_len(b, 4) != ref_len(b, 4))
					fail_msg("%02x %02x %02x %02x", b[0],
						 b[1], b[2], b[3]);
			}
		}
	}
}

static void test_is_valid(void **state)
{
	char buf[64];

	assert_true(utf8_is_valid("", 0));
	assert_true(utf8_is_valid("plain ascii, long enough for words", 34));
	assert_true(utf8_is_valid("a\0b", 3));
	assert_true(utf8_is_valid("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80",
				  16));
	assert_false(utf8_is_valid("\xc3", 1));
	assert_false(utf8_is_valid("abc\xc3\xa9\xa9", 6));
	assert_false(utf8_is_valid("\xed\xa0\x80", 3));
	/* the length bounds the check: a cut character is invalid */
	assert_false(utf8_is_valid("ab\xe2\x82\xac", 4));
	assert_true(utf8_is_valid("ab\xe2\x82\xac", 2));
	/* one bad byte at every offset, around the 8-byte fast path */
	for (size_t len = 1; len <= sizeof(buf); len++) {
		for (size_t at = 0; at < len; at++) {
			memset(buf, 'x', len);
			buf[at] = (char)0xff;
			if (utf8_is_valid(buf, len))
				fail_msg("0xff at %zu of %zu", at, len);
			buf[at] = (char)0x7f;
			assert_true(utf8_is_valid(buf, len));
		}
	}
}

static void test_is_valid_random(void **state)
{
	unsigned char buf[300];

	for (int iter = 0; iter < 20000; iter++) {
		size_t len = random_mess(buf, sizeof(buf));
		int want = 1;

		for (size_t i = 0; i < len;) {
			size_t n = ref_len(buf + i, len - i);
			if (!n) {
				want = 0;
				break;
			}
			i += n;
		}
		assert_int_equal(!!utf8_is_valid((char *)buf, len), want);
	}
}

static void check_tail(const char *ch)
{
	size_t n = strlen(ch);
	char buf[16];

	/* every proper cut of the character, with text before it */
	for (size_t k = 1; k < n; k++) {
		memcpy(buf, "ab", 2);
		memcpy(buf + 2, ch, k);
		assert_int_equal(utf8_incomplete_tail(buf, 2 + k), k);
		assert_int_equal(utf8_incomplete_tail(ch, k), k);
	}
	memcpy(buf, "ab", 2);
	memcpy(buf + 2, ch, n);
	assert_int_equal(utf8_incomplete_tail(buf, 2 + n), 0);
	assert_int_equal(utf8_incomplete_tail(ch, n), 0);
	/* a complete character followed by the start of another */
	memcpy(buf + 2 + n, ch, 1);
	assert_int_equal(utf8_incomplete_tail(buf, 3 + n), 1);
}

static void test_incomplete_tail(void **state)
{
	check_tail("\xc3\xa9");
	check_tail("\xe2\x82\xac");
	check_tail("\xf0\x9f\x98\x80");
	check_tail("\xf4\x8f\xbf\xbf");
	assert_int_equal(utf8_incomplete_tail("", 0), 0);
	assert_int_equal(utf8_incomplete_tail("abc", 3), 0);
	/* invalid tails: nothing to wait for */
	assert_int_equal(utf8_incomplete_tail("\x80", 1), 0);
	assert_int_equal(utf8_incomplete_tail("a\xbf\xbf", 3), 0);
	assert_int_equal(utf8_incomplete_tail("\xc3\xa9\xa9", 3), 0);
	assert_int_equal(utf8_incomplete_tail("\xff", 1), 0);
	assert_int_equal(utf8_incomplete_tail("\xc0", 1), 0);
	assert_int_equal(utf8_incomplete_tail("\xc1", 1), 0);
	assert_int_equal(utf8_incomplete_tail("\xf5", 1), 0);
	assert_int_equal(utf8_incomplete_tail("\xe0\x80", 2), 0);
	assert_int_equal(utf8_incomplete_tail("\xe0\x9f", 2), 0);
	assert_int_equal(utf8_incomplete_tail("\xed\xa0", 2), 0);
	assert_int_equal(utf8_incomplete_tail("\xf0\x80", 2), 0);
	assert_int_equal(utf8_incomplete_tail("\xf0\x8f\xbf", 3), 0);
	assert_int_equal(utf8_incomplete_tail("\xf4\x90", 2), 0);
	assert_int_equal(utf8_incomplete_tail("\xf4\x90\x80", 3), 0);
	assert_int_equal(utf8_incomplete_tail("\xf0\x9f\x98\x80\x80", 5), 0);
	/* the edges of the special second-byte ranges are accepted */
	assert_int_equal(utf8_incomplete_tail("\xe0\xa0", 2), 2);
	assert_int_equal(utf8_incomplete_tail("\xed\x9f", 2), 2);
	assert_int_equal(utf8_incomplete_tail("\xf0\x90", 2), 2);
	assert_int_equal(utf8_incomplete_tail("\xf4\x8f\xbf", 3), 3);
}

static void test_incomplete_tail_random(void **state)
{
	unsigned char buf[200];
	char bounds[201];

	for (int iter = 0; iter < 3000; iter++) {
		size_t len = random_valid(buf, sizeof(buf), bounds);

		for (size_t n = 0; n <= len; n++) {
			size_t last = n;
			while (!bounds[last])
				last--;
			/*
			 * A prefix of valid text: the tail is exactly the
			 * part of the character that was cut.
			 */
			if (utf8_incomplete_tail((char *)buf, n) != n - last)
				fail_msg("iter %d cut %zu", iter, n);
		}
	}
}

static void sanitize_n(const char *in, size_t len, const char *want,
		       size_t wlen)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "<");
	utf8_sanitize_into(&sb, in, len);
	assert_memory_equal(sb.buf, "<", 1);
	assert_int_equal(sb.len - 1, wlen);
	assert_memory_equal(sb.buf + 1, want, wlen);
	strbuf_release(&sb);
}

/* want is a string literal, possibly with NULs */
#define sanitize(in, len, want) sanitize_n(in, len, want, sizeof(want) - 1)

#define R "\xef\xbf\xbd"

static void test_sanitize(void **state)
{
	sanitize("", 0, "");
	sanitize("plain", 5, "plain");
	sanitize("h\xc3\xa9", 3, "h\xc3\xa9");
	sanitize("\xff", 1, R);
	sanitize("a\xff"
		 "b",
		 3, "a" R "b");
	/* one replacement per bad byte, as Go's encoding/json */
	sanitize("\xe2\x82", 2, R R);
	sanitize("\xe2\x82x", 3, R R "x");
	sanitize("\xf0\x9f\x98", 3, R R R);
	sanitize("\xc0\x80", 2, R R);
	sanitize("\xed\xa0\x80", 3, R R R);
	sanitize("\xf4\x90\x80\x80", 4, R R R R);
	sanitize("\x80\x80\xc3\xa9\x80", 5, R R "\xc3\xa9" R);
	/* U+FFFD itself is valid and kept */
	sanitize(R, 3, R);
	/* NUL is valid UTF-8 */
	sanitize("a\0b", 3, "a\0b");
}

static void test_sanitize_random(void **state)
{
	unsigned char buf[300];
	struct strbuf got = STRBUF_INIT, want = STRBUF_INIT;

	for (int iter = 0; iter < 20000; iter++) {
		size_t len = random_mess(buf, sizeof(buf));

		strbuf_reset(&got);
		strbuf_reset(&want);
		for (size_t i = 0; i < len;) {
			size_t n = ref_len(buf + i, len - i);
			if (n) {
				strbuf_add(&want, buf + i, n);
				i += n;
			} else {
				strbuf_addstr(&want, R);
				i++;
			}
		}
		utf8_sanitize_into(&got, (char *)buf, len);
		assert_int_equal(got.len, want.len);
		assert_memory_equal(got.buf, want.buf, want.len);
		assert_true(utf8_is_valid(got.buf, got.len));
	}
	strbuf_release(&got);
	strbuf_release(&want);
}

static void test_cut(void **state)
{
	static const char s[] = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";
	/* boundaries: 0 1 3 6 10 11 */
	static const size_t want[] = { 0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10, 11 };
	size_t len = sizeof(s) - 1;

	for (size_t max = 0; max <= len; max++)
		assert_int_equal(utf8_cut(s, len, max), want[max]);
	assert_int_equal(utf8_cut(s, len, len + 5), len);
	assert_int_equal(utf8_cut(s, len, SIZE_MAX), len);
	assert_int_equal(utf8_cut("", 0, 0), 0);
	/* invalid bytes are not characters: cut anywhere among them */
	assert_int_equal(utf8_cut("\x80\x80\x80\x80\x80", 5, 3), 3);
	assert_int_equal(utf8_cut("\xff\xff\xff", 3, 2), 2);
	assert_int_equal(utf8_cut("\xe2\x82x", 3, 1), 1);
	/* stray continuation bytes after a character are not inside it */
	assert_int_equal(utf8_cut("\xc3\xa9\x80\x80z", 5, 3), 3);
	assert_int_equal(utf8_cut("\xc3\xa9\x80\x80z", 5, 4), 4);
	assert_int_equal(utf8_cut("\xc3\xa9\x80\x80z", 5, 1), 0);
}

static void test_cut_random(void **state)
{
	unsigned char buf[200];
	char bounds[201];

	for (int iter = 0; iter < 3000; iter++) {
		size_t len = random_valid(buf, sizeof(buf), bounds);

		for (size_t max = 0; max <= len + 1; max++) {
			size_t n = utf8_cut((char *)buf, len, max);
			size_t best = max > len ? len : max;

			while (!bounds[best])
				best--;
			/* valid, and the largest boundary <= max */
			if (n != best || !utf8_is_valid((char *)buf, n))
				fail_msg("iter %d max %zu: %zu, want %zu", iter,
					 max, n, best);
		}
	}
}

struct ecase {
	const char *in;
	size_t len;
	unsigned flags;
	const char *out;
};

static void test_escape(void **state)
{
#define E(s, f, o)                                                             \
	{                                                                      \
		s, sizeof(s) - 1, f, o                                         \
	}
	static const struct ecase c[] = {
		E("plain text", 0, "plain text"),
		E("h\xc3\xa9llo \xe2\x82\xac", 0, "h\xc3\xa9llo \xe2\x82\xac"),
		/* a terminal attack: clear screen, title, cursor moves */
		E("\x1b[2J\x1b]0;pwned\a", 0, "\\x1b[2J\\x1b]0;pwned\\a"),
		E("a\nb\tc\r", 0, "a\\nb\\tc\\r"),
		E("a\nb\tc\r", UTF8_ESCAPE_KEEP_LINES, "a\nb\tc\\r"),
		E("\b\f\v\x7f\x01", 0, "\\b\\f\\v\\x7f\\x01"),
		E("nul\0byte", 0, "nul\\x00byte"),
		/* C1: the 8-bit CSI and the rest of U+0080..U+009F */
		E("\xc2\x9b"
		  "2J\xc2\x80",
		  0, "\\u009b2J\\u0080"),
		E("\xc2\xa0nbsp", 0, "\xc2\xa0nbsp"),
		/* invalid UTF-8, byte by byte */
		E("bad\xff\xc3", 0, "bad\\xff\\xc3"),
		E("\xed\xa0\x80", 0, "\\xed\\xa0\\x80"),
		E("q\"\\", 0, "q\"\\"),
		E("q\"\\", UTF8_ESCAPE_QUOTE, "q\\\"\\\\"),
	};
#undef E
	struct strbuf sb = STRBUF_INIT, again = STRBUF_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		strbuf_reset(&sb);
		utf8_escape_into(&sb, c[i].in, c[i].len, c[i].flags);
		if (strcmp(sb.buf, c[i].out))
			fail_msg("case %zu: got '%s' want '%s'", i, sb.buf,
				 c[i].out);
		assert_int_equal(
			utf8_needs_escape(c[i].in, c[i].len,
					  c[i].flags & ~UTF8_ESCAPE_QUOTE),
			!!strcmp(c[i].in, c[i].out) &&
				!(c[i].flags & UTF8_ESCAPE_QUOTE));
		/* what came out is safe: escaping it again keeps it */
		assert_false(utf8_needs_escape(sb.buf, sb.len, c[i].flags));
		strbuf_reset(&again);
		utf8_escape_into(&again, sb.buf, sb.len,
				 c[i].flags & ~UTF8_ESCAPE_QUOTE);
		assert_string_equal(again.buf, sb.buf);
	}
	strbuf_release(&sb);
	strbuf_release(&again);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seq_len_valid),
		cmocka_unit_test(test_seq_len_invalid),
		cmocka_unit_test(test_seq_len_exhaustive),
		cmocka_unit_test(test_is_valid),
		cmocka_unit_test(test_is_valid_random),
		cmocka_unit_test(test_incomplete_tail),
		cmocka_unit_test(test_incomplete_tail_random),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_sanitize_random),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_cut_random),
		cmocka_unit_test(test_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
