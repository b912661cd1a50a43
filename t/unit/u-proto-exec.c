/*
 * lib/proto/exec-events: what gosbx-runtime encodes, gosbx decodes to
 * the same bytes, and a hostile line is refused with a reason; the
 * interactive channel's framing and control messages (proto/channel.h).
 */
#include "compat.h"
#include "proto/channel.h"
#include "proto/exec-events.h"
#include "strvec.h"

#include <setjmp.h>
#include <signal.h>
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

/* Encode one output event, check it is one line, decode it back. */
static void roundtrip(enum exec_stream stream, const char *buf, size_t len,
		      int64_t offset, const char *want_member)
{
	struct strbuf line = STRBUF_INIT, err = STRBUF_INIT;
	struct exec_event ev = EXEC_EVENT_INIT;

	exec_event_add_output(&line, stream, buf, len, offset);
	assert_true(line.len > 1);
	assert_int_equal(line.buf[line.len - 1], '\n');
	assert_null(memchr(line.buf, '\n', line.len - 1));
	assert_non_null(strstr(line.buf, want_member));
	assert_int_equal(exec_event_parse(&ev, line.buf, line.len - 1, &err),
			 0);
	assert_int_equal(ev.type, stream == EXEC_STDOUT ? EXEC_EVENT_STDOUT
							: EXEC_EVENT_STDERR);
	assert_int_equal(exec_event_stream(ev.type), (int)stream);
	assert_int_equal(ev.offset, offset);
	assert_int_equal(ev.data.len, len);
	assert_memory_equal(ev.data.buf, buf, len);
	exec_event_release(&ev);
	strbuf_release(&line);
	strbuf_release(&err);
}

static void test_output_roundtrip(void **state)
{
	static const char nul[] = "a\0b";
	static const char bad_utf8[] = "caf\xc3";
	char buf[512];

	roundtrip(EXEC_STDOUT, "hello\n", 6, -1, "\"data\":\"hello\\n\"");
	roundtrip(EXEC_STDERR, "\xc3\xa9t\xc3\xa9", 6, -1, "\"data\"");
	/* NUL and controls are valid UTF-8: text, escaped */
	roundtrip(EXEC_STDOUT, nul, 3, -1, "\\u0000");
	/* a cut character travels as base64, bytes intact */
	roundtrip(EXEC_STDOUT, bad_utf8, 4, -1, "\"b64\":\"Y2Fmww==\"");
	/* a job's events carry the offset of their first byte */
	roundtrip(EXEC_STDERR, "x", 1, 12345678901, "\"offset\":12345678901");
	roundtrip(EXEC_STDOUT, bad_utf8, 4, 0, "\"offset\":0,\"b64\"");
	for (int i = 0; i < 200; i++) {
		size_t len = 1 + rnd() % sizeof(buf);

		for (size_t k = 0; k < len; k++)
			buf[k] = (char)rnd();
		roundtrip(i & 1 ? EXEC_STDERR : EXEC_STDOUT, buf, len,
			  i & 2 ? (int64_t)rnd() : -1, "\"type\"");
	}
}

static void test_empty_output_is_no_event(void **state)
{
	struct strbuf line = STRBUF_INIT;

	exec_event_add_output(&line, EXEC_STDOUT, "", 0, -1);
	assert_int_equal(line.len, 0);
	strbuf_release(&line);
}

static void test_other_events_roundtrip(void **state)
{
	struct strbuf line = STRBUF_INIT;
	struct exec_event ev = EXEC_EVENT_INIT;
	struct exec_result res;
	int64_t v;

	exec_event_add_simple(&line, EXEC_EVENT_HEARTBEAT);
	assert_string_equal(line.buf, "{\"type\":\"heartbeat\"}\n");
	assert_int_equal(exec_event_parse(&ev, line.buf, line.len - 1, NULL),
			 0);
	assert_int_equal(ev.type, EXEC_EVENT_HEARTBEAT);

	strbuf_reset(&line);
	exec_event_add_simple(&line, EXEC_EVENT_STARTED);
	assert_int_equal(exec_event_parse(&ev, line.buf, line.len - 1, NULL),
			 0);
	assert_int_equal(ev.type, EXEC_EVENT_STARTED);

	strbuf_reset(&line);
	exec_event_add_trimmed(&line, 100, 4096);
	assert_int_equal(exec_event_parse(&ev, line.buf, line.len - 1, NULL),
			 0);
	assert_int_equal(ev.type, EXEC_EVENT_TRIMMED);
	assert_int_equal(ev.bytes, 100);
	assert_int_equal(ev.offset, 4096);

	exec_result_init(&res);
	res.exit_code = 137;
	res.reason = "timeout";
	res.signal = 9;
	res.duration_ms = 1500;
	res.out_truncated = 1; /* streamed whole: the event says false */
	strbuf_reset(&line);
	exec_event_begin_exit(&line, &res);
	strbuf_addstr(&line, ",\"output_bytes\":7");
	exec_event_end_exit(&line, 1);
	assert_int_equal(exec_event_parse(&ev, line.buf, line.len - 1, NULL),
			 0);
	assert_int_equal(ev.type, EXEC_EVENT_EXIT);
	assert_int_equal(json_object_int(ev.json, "exit_code", &v), 1);
	assert_int_equal(v, 137);
	assert_string_equal(json_object_str(ev.json, "reason"), "timeout");
	assert_int_equal(json_object_int(ev.json, "signal", &v), 1);
	assert_int_equal(v, 9);
	assert_int_equal(json_object_int(ev.json, "output_bytes", &v), 1);
	assert_int_equal(v, 7);
	assert_true(
		json_is_false(json_object_get(ev.json, "stdout_truncated")));

	/* the channel's status message: the same event, no newline */
	strbuf_reset(&line);
	exec_event_begin_exit(&line, &res);
	exec_event_end_exit(&line, 0);
	assert_int_equal(line.buf[line.len - 1], '}');
	assert_int_equal(exec_event_parse(&ev, line.buf, line.len, NULL), 0);
	assert_int_equal(ev.type, EXEC_EVENT_EXIT);

	exec_result_release(&res);
	exec_event_release(&ev);
	strbuf_release(&line);
}

/* Parse s, expect rc, a set or unset name, and err containing want. */
static void expect(const char *s, size_t len, int rc, int named,
		   const char *want)
{
	struct strbuf err = STRBUF_INIT;
	struct exec_event ev = EXEC_EVENT_INIT;

	assert_int_equal(exec_event_parse(&ev, s, len, &err), rc);
	if (named)
		assert_non_null(ev.name);
	else
		assert_null(ev.name);
	if (!strstr(err.buf, want))
		fail_msg("'%s': error '%s' lacks '%s'", s, err.buf, want);
	exec_event_release(&ev);
	strbuf_release(&err);
}
#define EXPECT(s, rc, named, want) expect(s, strlen(s), rc, named, want)

static void test_hostile_lines(void **state)
{
	static const char bad_utf8[] =
		"{\"type\":\"stdout\",\"data\":\"\xff\"}";
	static const char nul_in_type[] = "{\"type\":\"std\\u0000out\"}";
	struct strbuf big = STRBUF_INIT;

	/* not an event at all: the stream is broken (no name) */
	EXPECT("", -1, 0, "not JSON");
	EXPECT("{\"type\":\"stdout\",\"data\":\"abc", -1, 0, "not JSON");
	EXPECT("{\"type\":\"stdout\"} trailing", -1, 0, "not JSON");
	EXPECT(bad_utf8, -1, 0, "not JSON");
	EXPECT("[\"stdout\"]", -1, 0, "not a JSON object");
	EXPECT("{\"data\":\"x\"}", -1, 0, "without a string \"type\"");
	EXPECT("{\"type\":7}", -1, 0, "without a string \"type\"");
	/* a known type with wrong members: named, so a reader can go on */
	EXPECT("{\"type\":\"stdout\"}", -1, 1, "\"data\" or \"b64\"");
	EXPECT("{\"type\":\"stderr\",\"data\":5}", -1, 1, "\"data\"");
	EXPECT("{\"type\":\"stdout\",\"b64\":\"!!!!\"}", -1, 1, "bad base64");
	EXPECT("{\"type\":\"stdout\",\"b64\":\"YWJj\\nZA==\"}", -1, 1,
	       "bad base64");
	EXPECT("{\"type\":\"stdout\",\"data\":\"\",\"offset\":\"1\"}", -1, 1,
	       "non-integer \"offset\"");
	EXPECT("{\"type\":\"exit\",\"exit_code\":\"0\"}", -1, 1,
	       "non-integer \"exit_code\"");
	EXPECT("{\"type\":\"trimmed\",\"bytes\":1.5}", -1, 1,
	       "non-integer \"bytes\"");
	/* a newer runtime's event: skipped, named in err, escaped */
	EXPECT("{\"type\":\"progress\",\"pct\":50}", 1, 1,
	       "unknown event type 'progress'");
	EXPECT("{\"type\":\"\\u001b[31m\"}", 1, 1, "unknown event type '\\");
	expect(nul_in_type, sizeof(nul_in_type) - 1, 1, 1,
	       "unknown event type");
	/* type names are exact */
	EXPECT("{\"type\":\"STDOUT\",\"data\":\"x\"}", 1, 1, "'STDOUT'");

	/* over the bound: refused before any parsing */
	strbuf_addstr(&big, "{\"type\":\"stdout\",\"data\":\"");
	while (big.len <= EXEC_EVENT_LINE_MAX)
		strbuf_addstr(&big, "aaaaaaaaaaaaaaaa");
	strbuf_addstr(&big, "\"}");
	expect(big.buf, big.len, -1, 0, "over 8388608 bytes");
	strbuf_release(&big);
}

/* A truncated line: every proper prefix of a good event is refused. */
static void test_truncated(void **state)
{
	struct strbuf line = STRBUF_INIT;
	struct exec_event ev = EXEC_EVENT_INIT;

	exec_event_add_output(&line, EXEC_STDOUT, "abc\xff", 4, 99);
	strbuf_setlen(&line, line.len - 1);
	for (size_t n = 0; n < line.len; n++)
		assert_int_equal(exec_event_parse(&ev, line.buf, n, NULL), -1);
	assert_int_equal(exec_event_parse(&ev, line.buf, line.len, NULL), 0);
	exec_event_release(&ev);
	strbuf_release(&line);
}

/* One event reused for many lines: nothing of the last one stays. */
static void test_reuse(void **state)
{
	static const char a[] = "{\"type\":\"stdout\",\"data\":\"one\"}";
	static const char b[] = "{\"type\":\"stderr\",\"b64\":\"dHdv\"}";
	static const char c[] = "{\"type\":\"heartbeat\"}";
	struct exec_event ev = EXEC_EVENT_INIT;

	assert_int_equal(exec_event_parse(&ev, a, sizeof(a) - 1, NULL), 0);
	assert_int_equal(exec_event_parse(&ev, b, sizeof(b) - 1, NULL), 0);
	assert_int_equal(ev.type, EXEC_EVENT_STDERR);
	assert_int_equal(ev.data.len, 3);
	assert_memory_equal(ev.data.buf, "two", 3);
	assert_int_equal(exec_event_parse(&ev, c, sizeof(c) - 1, NULL), 0);
	assert_int_equal(ev.data.len, 0);
	assert_int_equal(ev.offset, -1);
	exec_event_release(&ev);
}

struct lines {
	struct strvec got;
	int stop_at; /* fn fails on this line (1-based), 0 never */
};

static int collect(const char *text, size_t len, void *data)
{
	struct lines *l = data;
	struct strbuf sb = STRBUF_INIT;

	strbuf_add(&sb, text, len);
	strvec_push(&l->got, sb.buf);
	strbuf_release(&sb);
	return l->stop_at && (int)l->got.nr == l->stop_at ? -1 : 0;
}

/* A stream cut anywhere gives the same lines; blank lines are none. */
static void test_split(void **state)
{
	static const char s[] = "{\"a\":1}\n\n{\"b\":22}\n{\"c\":333}\n{\"d\"";

	for (size_t cut = 0; cut <= sizeof(s) - 1; cut++) {
		struct lines l = { STRVEC_INIT, 0 };
		struct strbuf line = STRBUF_INIT;

		assert_int_equal(
			exec_event_split(&line, s, cut, 64, collect, &l), 0);
		assert_int_equal(exec_event_split(&line, s + cut,
						  sizeof(s) - 1 - cut, 64,
						  collect, &l),
				 0);
		assert_int_equal(l.got.nr, 3);
		assert_string_equal(l.got.v[0], "{\"a\":1}");
		assert_string_equal(l.got.v[1], "{\"b\":22}");
		assert_string_equal(l.got.v[2], "{\"c\":333}");
		/* the unfinished last line waits for more */
		assert_string_equal(line.buf, "{\"d\"");
		strvec_clear(&l.got);
		strbuf_release(&line);
	}
}

static void test_split_bounds(void **state)
{
	struct lines l = { STRVEC_INIT, 0 };
	struct strbuf line = STRBUF_INIT;

	/* exactly max bytes is a line; one more, in pieces, is not */
	assert_int_equal(exec_event_split(&line, "abcd\n", 5, 4, collect, &l),
			 0);
	assert_int_equal(l.got.nr, 1);
	assert_int_equal(exec_event_split(&line, "abc", 3, 4, collect, &l), 0);
	assert_int_equal(exec_event_split(&line, "de", 2, 4, collect, &l),
			 EXEC_EVENT_OVERLONG);
	assert_true(line.len <= 4);
	/* an endless line without a newline is refused too */
	strbuf_reset(&line);
	assert_int_equal(exec_event_split(&line, "abcdefgh", 8, 4, collect, &l),
			 EXEC_EVENT_OVERLONG);
	assert_int_equal(l.got.nr, 1);
	/* the reader stops the split: nothing after that line is read */
	strvec_clear(&l.got);
	strbuf_reset(&line);
	l.stop_at = 2;
	assert_int_equal(
		exec_event_split(&line, "a\nb\nc\n", 6, 4, collect, &l), -1);
	assert_int_equal(l.got.nr, 2);
	strvec_clear(&l.got);
	strbuf_release(&line);
}

static void test_channel_frames(void **state)
{
	struct strbuf m = STRBUF_INIT;
	const void *payload;
	size_t plen;
	unsigned ch;

	exec_channel_frame(&m, EXEC_CH_STDIN, "ab\0c", 4);
	assert_int_equal(m.len, 5);
	assert_memory_equal(m.buf, "\0ab\0c", 5);
	assert_int_equal(exec_channel_split(m.buf, m.len, &ch, &payload, &plen),
			 0);
	assert_int_equal(ch, EXEC_CH_STDIN);
	assert_int_equal(plen, 4);
	assert_memory_equal(payload, "ab\0c", 4);

	/* an empty stdout message (a heartbeat) is one byte */
	strbuf_reset(&m);
	exec_channel_frame(&m, EXEC_CH_STDOUT, NULL, 0);
	assert_int_equal(m.len, 1);
	assert_int_equal(exec_channel_split(m.buf, m.len, &ch, &payload, &plen),
			 0);
	assert_int_equal(ch, 1);
	assert_int_equal(plen, 0);

	/* hostile: no channel byte; a channel byte nobody knows */
	assert_int_equal(exec_channel_split("", 0, &ch, &payload, &plen), -1);
	assert_int_equal(exec_channel_split("\xff!", 2, &ch, &payload, &plen),
			 0);
	assert_int_equal(ch, 255);
	assert_string_equal(EXEC_CHANNEL_PROTOCOL, "gosbx.exec.v1");
	strbuf_release(&m);
}

/* Parse a control message's text into c; err gets the reason. */
static int control_parse_text(const char *text, struct exec_control *c,
			      struct strbuf *err)
{
	json_t *j = json_parse(text, strlen(text), NULL);
	int rc;

	strbuf_reset(err);
	rc = exec_control_parse(j, c, err);
	json_decref(j);
	return rc;
}

static void test_control_roundtrip(void **state)
{
	struct strbuf m = STRBUF_INIT, err = STRBUF_INIT;
	struct exec_control c;

	exec_control_add_resize(&m, 65535, 1);
	assert_int_equal(control_parse_text(m.buf, &c, &err), 0);
	assert_int_equal(c.type, EXEC_CONTROL_RESIZE);
	assert_int_equal(c.cols, 65535);
	assert_int_equal(c.rows, 1);

	strbuf_reset(&m);
	exec_control_add_signal(&m, "INT");
	assert_int_equal(control_parse_text(m.buf, &c, &err), 0);
	assert_int_equal(c.type, EXEC_CONTROL_SIGNAL);
	assert_int_equal(c.signo, SIGINT);

	strbuf_reset(&m);
	exec_control_add_eof(&m);
	assert_int_equal(control_parse_text(m.buf, &c, &err), 0);
	assert_int_equal(c.type, EXEC_CONTROL_EOF);

	assert_int_equal(control_parse_text("{\"type\":\"start\","
					    "\"command\":\"true\"}",
					    &c, &err),
			 0);
	assert_int_equal(c.type, EXEC_CONTROL_START);
	strbuf_release(&m);
	strbuf_release(&err);
}

static void test_control_hostile(void **state)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "[1]", "JSON object with a \"type\"" },
		{ "{\"cols\":3}", "JSON object with a \"type\"" },
		{ "{\"type\":\"resize\",\"cols\":80}", "cols and rows" },
		{ "{\"type\":\"resize\",\"cols\":0,\"rows\":24}",
		  "cols and rows" },
		{ "{\"type\":\"resize\",\"cols\":65536,\"rows\":24}",
		  "from 1 to 65535" },
		{ "{\"type\":\"resize\",\"cols\":\"80\",\"rows\":24}",
		  "cols and rows" },
		{ "{\"type\":\"signal\"}", "one of HUP, INT" },
		{ "{\"type\":\"signal\",\"signal\":\"SIGINT\"}", "one of" },
		{ "{\"type\":\"signal\",\"signal\":9}", "one of" },
		{ "{\"type\":\"reboot\"}",
		  "unknown control message type 'reboot'" },
	};
	struct strbuf err = STRBUF_INIT;
	struct exec_control c;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(control_parse_text(bad[i].text, &c, &err), -1);
		if (!strstr(err.buf, bad[i].want))
			fail_msg("'%s': error '%s' lacks '%s'", bad[i].text,
				 err.buf, bad[i].want);
	}
	/* not JSON at all: j is NULL */
	strbuf_reset(&err);
	assert_int_equal(exec_control_parse(NULL, &c, &err), -1);
	assert_non_null(strstr(err.buf, "\"type\""));
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_roundtrip),
		cmocka_unit_test(test_empty_output_is_no_event),
		cmocka_unit_test(test_other_events_roundtrip),
		cmocka_unit_test(test_hostile_lines),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_reuse),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_split_bounds),
		cmocka_unit_test(test_channel_frames),
		cmocka_unit_test(test_control_roundtrip),
		cmocka_unit_test(test_control_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
