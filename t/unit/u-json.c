#include "compat.h"
#include "json.h"
#include "utf8.h"

#include <setjmp.h>
#include <cmocka.h>

static uint32_t rnd_state = 2463534242u;
static uint32_t rnd(void)
{
	/* xorshift32: deterministic, so failures reproduce */
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

static void test_parse_ok(void **state)
{
	struct strbuf err = STRBUF_INIT;
	static const char nul[] = "\"a\\u0000b\"";
	json_t *v;

	v = json_parse("{\"a\": [1, 2.5, \"x\"], \"b\": null}", 31, &err);
	assert_non_null(v);
	assert_true(json_is_object(v));
	assert_int_equal(json_array_size(json_object_get(v, "a")), 3);
	json_decref(v);
	/* any value, not just arrays and objects */
	v = json_parse("42", 2, &err);
	assert_true(json_is_integer(v));
	assert_int_equal(json_integer_value(v), 42);
	json_decref(v);
	/* the length bounds the input: no NUL terminator needed */
	v = json_parse("[1]garbage", 3, &err);
	assert_true(json_is_array(v));
	json_decref(v);
	/* \u0000 inside strings is allowed */
	v = json_parse(nul, sizeof(nul) - 1, &err);
	assert_non_null(v);
	assert_int_equal(json_string_length(v), 3);
	assert_memory_equal(json_string_value(v), "a\0b", 3);
	json_decref(v);
	assert_string_equal(err.buf, "");
	strbuf_release(&err);
}

static void parse_error(const char *in, int line, int col_min)
{
	struct strbuf err = STRBUF_INIT;
	const char *p;
	int l, c;

	strbuf_addstr(&err, "prefix: ");
	assert_null(json_parse(in, strlen(in), &err));
	assert_true(starts_with(err.buf, "prefix: "));
	p = strstr(err.buf, " (line ");
	assert_non_null(p);
	assert_int_equal(sscanf(p, " (line %d, column %d)", &l, &c), 2);
	assert_true(ends_with(err.buf, ")"));
	if (l != line || c < col_min)
		fail_msg("'%s': %s", in, err.buf);
	strbuf_release(&err);
}

static void test_parse_errors(void **state)
{
	parse_error("", 1, 0);
	parse_error("[1,", 1, 3);
	parse_error("{\n  \"a\": x\n}", 2, 7);
	parse_error("[1]\n\n\n x", 4, 1);
	parse_error("{\"a\" 1}", 1, 5);
	parse_error("\"\xff\"", 1, 0);
	parse_error("[1] [2]", 1, 4);
	/* a NULL err is fine */
	assert_null(json_parse("nope", 4, NULL));
}

static void test_dump_into(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *v = json_object();

	json_object_set_new(v, "z", json_integer(1));
	json_object_set_new(v, "a", json_string("x\"y"));
	json_object_set_new(v, "m", json_array());
	strbuf_addstr(&sb, ">");
	assert_int_equal(json_dump_into(&sb, v), 0);
	/* compact, insertion order */
	assert_string_equal(sb.buf, ">{\"z\":1,\"a\":\"x\\\"y\",\"m\":[]}");
	json_decref(v);
	strbuf_reset(&sb);
	v = json_string("solo");
	assert_int_equal(json_dump_into(&sb, v), 0);
	assert_string_equal(sb.buf, "\"solo\"");
	json_decref(v);
	strbuf_release(&sb);
}

static void add_string(const char *in, size_t len, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "x");
	json_add_string(&sb, in, len);
	if (strcmp(sb.buf + 1, want))
		fail_msg("got %s, want %s", sb.buf + 1, want);
	strbuf_release(&sb);
}

#define ADD(lit, want) add_string(lit, sizeof(lit) - 1, want)

static void test_add_string(void **state)
{
	ADD("", "\"\"");
	ADD("plain text", "\"plain text\"");
	ADD("say \"hi\"", "\"say \\\"hi\\\"\"");
	ADD("C:\\dir", "\"C:\\\\dir\"");
	ADD("a\nb\rc\td", "\"a\\nb\\rc\\td\"");
	ADD("\b\f", "\"\\b\\f\"");
	ADD("\x01", "\"\\u0001\"");
	ADD("\x1f\x7f", "\"\\u001f\x7f\""); /* DEL needs no escape (RFC 8259) */
	ADD("a\0b", "\"a\\u0000b\"");
	ADD("/", "\"/\"");
	/* valid multibyte text is kept as is */
	ADD("h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	    "\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	/* each invalid byte becomes one U+FFFD */
	ADD("\xff", "\"\xef\xbf\xbd\"");
	ADD("a\xe2\x82", "\"a\xef\xbf\xbd\xef\xbf\xbd\"");
	ADD("\xc0\x80\"", "\"\xef\xbf\xbd\xef\xbf\xbd\\\"\"");
	ADD("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	{
		struct strbuf sb = STRBUF_INIT;

		json_add_str(&sb, "k");
		strbuf_addch(&sb, ':');
		json_add_str(&sb, "\t");
		assert_string_equal(sb.buf, "\"k\":\"\\t\"");
		strbuf_release(&sb);
	}
}

static void test_add_string_roundtrip(void **state)
{
	unsigned char buf[256];
	struct strbuf out = STRBUF_INIT, want = STRBUF_INIT;

	for (int iter = 0; iter < 20000; iter++) {
		size_t len = rnd() % sizeof(buf);
		json_error_t e;
		json_t *v;

		for (size_t i = 0; i < len; i++) {
			uint32_t r = rnd();
			/* mostly text, some controls, quotes, high bytes */
			switch (r % 8) {
			case 0:
				buf[i] = (r >> 8) & 0x1f;
				break;
			case 1:
				buf[i] = "\"\\/\x7f"[(r >> 8) % 4];
				break;
			case 2:
			case 3:
				buf[i] = 0x80 | ((r >> 8) & 0x7f);
				break;
			case 4:
				buf[i] = 0xc2 + (r >> 8) % 0x33;
				break;
			default:
				buf[i] = (r >> 8) & 0xff;
			}
		}
		strbuf_reset(&out);
		strbuf_reset(&want);
		json_add_string(&out, (char *)buf, len);
		for (size_t i = 0; i < out.len; i++)
			assert_true((unsigned char)out.buf[i] >= 0x20);
		v = json_loadb(out.buf, out.len,
			       JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
		if (!v)
			fail_msg("iter %d: %s: %s", iter, e.text, out.buf);
		assert_true(json_is_string(v));
		utf8_sanitize_into(&want, (char *)buf, len);
		assert_int_equal(json_string_length(v), want.len);
		assert_memory_equal(json_string_value(v), want.buf, want.len);
		json_decref(v);
	}
	strbuf_release(&out);
	strbuf_release(&want);
}

static void test_object_accessors(void **state)
{
	static const char doc[] =
		"{\"i\": 5, \"neg\": -9007199254740993, \"f\": 1.5, "
		"\"s\": \"str\", \"t\": true, \"fa\": false, \"n\": null, "
		"\"zero\": 0, \"o\": {}, \"a\": [1]}";
	json_t *o = json_parse(doc, sizeof(doc) - 1, NULL);
	int64_t i = 77;
	int b = 77;

	assert_non_null(o);
	assert_int_equal(json_object_int(o, "i", &i), 1);
	assert_int_equal(i, 5);
	assert_int_equal(json_object_int(o, "neg", &i), 1);
	assert_true(i == -9007199254740993LL);
	assert_int_equal(json_object_int(o, "zero", &i), 1);
	assert_int_equal(i, 0);
	i = 77;
	assert_int_equal(json_object_int(o, "missing", &i), 0);
	assert_int_equal(json_object_int(o, "n", &i), 0);
	assert_int_equal(json_object_int(o, "f", &i), -1);
	assert_int_equal(json_object_int(o, "s", &i), -1);
	assert_int_equal(json_object_int(o, "t", &i), -1);
	assert_int_equal(json_object_int(o, "o", &i), -1);
	assert_int_equal(i, 77);

	assert_int_equal(json_object_bool(o, "t", &b), 1);
	assert_int_equal(b, 1);
	assert_int_equal(json_object_bool(o, "fa", &b), 1);
	assert_int_equal(b, 0);
	b = 77;
	assert_int_equal(json_object_bool(o, "missing", &b), 0);
	assert_int_equal(json_object_bool(o, "n", &b), 0);
	assert_int_equal(json_object_bool(o, "zero", &b), -1);
	assert_int_equal(json_object_bool(o, "s", &b), -1);
	assert_int_equal(b, 77);

	assert_string_equal(json_object_str(o, "s"), "str");
	assert_null(json_object_str(o, "i"));
	assert_null(json_object_str(o, "n"));
	assert_null(json_object_str(o, "missing"));
	assert_null(json_object_str(o, "a"));
	json_decref(o);

	/* not an object at all */
	o = json_integer(3);
	assert_int_equal(json_object_int(o, "i", &i), 0);
	assert_null(json_object_str(o, "s"));
	json_decref(o);
}

struct b64case {
	const char *plain, *enc;
};

static void test_base64_vectors(void **state)
{
	/* RFC 4648 section 10 */
	static const struct b64case v[] = {
		{ "", "" },
		{ "f", "Zg==" },
		{ "fo", "Zm8=" },
		{ "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" },
		{ "foobar", "Zm9vYmFy" },
	};
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		size_t n = strlen(v[i].enc);

		strbuf_reset(&sb);
		base64_encode_into(&sb, v[i].plain, strlen(v[i].plain));
		assert_string_equal(sb.buf, v[i].enc);
		strbuf_reset(&sb);
		assert_int_equal(base64_decode_into(&sb, v[i].enc, n), 0);
		assert_string_equal(sb.buf, v[i].plain);
		/* padding is optional */
		while (n && v[i].enc[n - 1] == '=')
			n--;
		strbuf_reset(&sb);
		assert_int_equal(base64_decode_into(&sb, v[i].enc, n), 0);
		assert_string_equal(sb.buf, v[i].plain);
	}
	strbuf_reset(&sb);
	base64_encode_into(&sb, "\xfb\xff\xbf", 3);
	assert_string_equal(sb.buf, "+/+/");
	strbuf_release(&sb);
}

static void test_base64_bad(void **state)
{
	static const char *const bad[] = {
		"Z",	 "Zm9vY", "Zm9v!",   "Zm 9v", "Zm9v\n", "Zg=a",
		"Zg===", "Zm9=v", "=",	     "==",    "====",	"Zm9v====",
		"Zg=",	 "Zm8==", "Zm9vYg=", "-_8=",  "Zm9v=",	"Z===",
	};
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		strbuf_reset(&sb);
		strbuf_addstr(&sb, "keep");
		if (base64_decode_into(&sb, bad[i], strlen(bad[i])) != -1)
			fail_msg("'%s' accepted", bad[i]);
		/* nothing is appended on failure */
		assert_string_equal(sb.buf, "keep");
	}
	/* a NUL inside the input is not base64 */
	assert_int_equal(base64_decode_into(&sb, "Zm\0v", 4), -1);
	strbuf_release(&sb);
}

static void test_base64_roundtrip(void **state)
{
	unsigned char buf[101];
	struct strbuf enc = STRBUF_INIT, dec = STRBUF_INIT;

	for (int iter = 0; iter < 20; iter++) {
		for (size_t len = 0; len <= 100; len++) {
			for (size_t i = 0; i < len; i++)
				buf[i] = rnd() & 0xff;
			strbuf_reset(&enc);
			strbuf_reset(&dec);
			strbuf_addstr(&enc, "pre");
			base64_encode_into(&enc, buf, len);
			assert_int_equal(enc.len - 3, (len + 2) / 3 * 4);
			assert_int_equal(strlen(enc.buf), enc.len);
			strbuf_addch(&dec, '>');
			assert_int_equal(base64_decode_into(&dec, enc.buf + 3,
							    enc.len - 3),
					 0);
			assert_int_equal(dec.len, len + 1);
			assert_memory_equal(dec.buf + 1, buf, len);
		}
	}
	strbuf_release(&enc);
	strbuf_release(&dec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_dump_into),
		cmocka_unit_test(test_add_string),
		cmocka_unit_test(test_add_string_roundtrip),
		cmocka_unit_test(test_object_accessors),
		cmocka_unit_test(test_base64_vectors),
		cmocka_unit_test(test_base64_bad),
		cmocka_unit_test(test_base64_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
