#include "compat.h"
#include "mcp/mcp-format.h"

#include <setjmp.h>
#include <cmocka.h>

#define RULE "\xe2\x94\x80\xe2\x94\x80"
#define FFFD "\xef\xbf\xbd"

static void check_duration(int64_t ms, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	mcp_format_duration(&sb, ms);
	if (strcmp(sb.buf, want))
		print_error("duration %lld ms: got '%s', want '%s'\n",
			    (long long)ms, sb.buf, want);
	assert_string_equal(sb.buf, want);
	strbuf_release(&sb);
}

/* the values Go's time.Duration.String() gives for these durations */
static void test_duration(void **state)
{
	check_duration(0, "0s");
	check_duration(1, "1ms");
	check_duration(47, "47ms");
	check_duration(999, "999ms");
	check_duration(1000, "1s");
	check_duration(1001, "1.001s");
	check_duration(1010, "1.01s");
	check_duration(1500, "1.5s");
	check_duration(12345, "12.345s");
	check_duration(59999, "59.999s");
	check_duration(60000, "1m0s");
	check_duration(60250, "1m0.25s");
	check_duration(61000, "1m1s");
	check_duration(90000, "1m30s");
	check_duration(3599999, "59m59.999s");
	check_duration(3600000, "1h0m0s");
	check_duration(7200000, "2h0m0s");
	check_duration(7384005, "2h3m4.005s");
	check_duration(-1500, "-1.5s");
	check_duration(-47, "-47ms");
	check_duration(INT64_MAX, "2562047788015h12m55.807s");
	check_duration(INT64_MIN, "-2562047788015h12m55.808s");
}

static void test_round(void **state)
{
	assert_int_equal(mcp_round_ns_to_ms(0), 0);
	assert_int_equal(mcp_round_ns_to_ms(499999), 0);
	assert_int_equal(mcp_round_ns_to_ms(500000), 1);
	assert_int_equal(mcp_round_ns_to_ms(1499999), 1);
	assert_int_equal(mcp_round_ns_to_ms(1500000), 2);
	assert_int_equal(mcp_round_ns_to_ms(-500000), -1);
	assert_int_equal(mcp_round_ns_to_ms(-499999), 0);
	assert_int_equal(mcp_round_ns_to_ms(47123456), 47);
}

static void check_result(const struct mcp_run_text *r, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	mcp_format_result(&sb, r);
	if (strcmp(sb.buf, want))
		print_error("got:\n%s\nwant:\n%s\n", sb.buf, want);
	assert_int_equal(sb.len, strlen(want));
	assert_memory_equal(sb.buf, want, sb.len);
	strbuf_release(&sb);
}

#define TEXT(o, e) (o), sizeof(o) - 1, (e), sizeof(e) - 1

static void test_result_layout(void **state)
{
	struct mcp_run_text both = { 0, 47, TEXT("hi\n", "warn\n"), 0, 0 };
	struct mcp_run_text out_only = { 0, 1500, TEXT("hi\n", ""), 0, 0 };
	struct mcp_run_text err_only = { 2, 120,
					 TEXT("", "# x\n./main.go:2:14: "
						  "undefined: broken\n"),
					 0, 0 };
	struct mcp_run_text none = { 0, 0, TEXT("", ""), 0, 0 };
	struct mcp_run_text no_nl = { 1, 61000, TEXT("a\nb", "c"), 0, 0 };

	check_result(&both, "exit=0  (47ms)\n\n" RULE " stdout " RULE
			    "\nhi\n\n" RULE " stderr " RULE "\nwarn\n");
	check_result(&out_only,
		     "exit=0  (1.5s)\n\n" RULE " stdout " RULE "\nhi\n");
	check_result(&err_only, "exit=2  (120ms)\n\n" RULE " stderr " RULE
				"\n# x\n./main.go:2:14: undefined: broken\n");
	check_result(&none, "exit=0  (0s)\n\n(no output)\n");
	check_result(&no_nl, "exit=1  (1m1s)\n\n" RULE " stdout " RULE
			     "\na\nb\n\n" RULE " stderr " RULE "\nc\n");
}

static void test_result_empty_lines(void **state)
{
	/* a stream that is only "\n" is not empty: it is printed as is */
	struct mcp_run_text nl = { 0, 5, TEXT("\n", ""), 0, 0 };
	/* a NUL byte is text too */
	struct mcp_run_text nul = { 0, 5, TEXT("a\0b", ""), 0, 0 };
	struct strbuf sb = STRBUF_INIT;
	static const char want_nul[] =
		"exit=0  (5ms)\n\n" RULE " stdout " RULE "\na\0b\n";

	check_result(&nl, "exit=0  (5ms)\n\n" RULE " stdout " RULE "\n\n");
	mcp_format_result(&sb, &nul);
	assert_int_equal(sb.len, sizeof(want_nul) - 1);
	assert_memory_equal(sb.buf, want_nul, sb.len);
	strbuf_release(&sb);
}

static void test_result_truncated(void **state)
{
	struct mcp_run_text r = { -1, 3600000, TEXT("o", "e"), 1, 0 };

	check_result(&r,
		     "exit=-1  (1h0m0s)  [truncated: stdout]\n\n" RULE
		     " stdout " RULE "\no\n\n" RULE " stderr " RULE "\ne\n");
	r.out_truncated = 0;
	r.err_truncated = 1;
	check_result(&r,
		     "exit=-1  (1h0m0s)  [truncated: stderr]\n\n" RULE
		     " stdout " RULE "\no\n\n" RULE " stderr " RULE "\ne\n");
	r.out_truncated = 1;
	check_result(&r,
		     "exit=-1  (1h0m0s)  [truncated: stdout, stderr]\n\n" RULE
		     " stdout " RULE "\no\n\n" RULE " stderr " RULE "\ne\n");
}

static void test_result_timed_out(void **state)
{
	struct mcp_run_text r = { -1, 300004, TEXT("", ""), 0, 0 };
	struct mcp_run_text t = { -1, 1002, TEXT("partial\n", ""), 1, 0 };

	r.timed_out_ms = 300000;
	check_result(&r, "exit=-1  (5m0.004s)  [timed out after 5m0s]\n\n"
			 "(no output)\n");
	t.timed_out_ms = 1000;
	check_result(&t, "exit=-1  (1.002s)  [timed out after 1s]  "
			 "[truncated: stdout]\n\n" RULE " stdout " RULE
			 "\npartial\n");
}

static void test_stream_short(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *big = malloc(16384);

	assert_int_equal(mcp_format_stream(&sb, "abc", 3), 0);
	assert_string_equal(sb.buf, "abc");
	strbuf_reset(&sb);
	/* exactly 16,384 bytes: kept whole */
	memset(big, 'x', 16384);
	assert_int_equal(mcp_format_stream(&sb, big, 16384), 0);
	assert_int_equal(sb.len, 16384);
	assert_memory_equal(sb.buf, big, 16384);
	free(big);
	strbuf_release(&sb);
}

static void test_stream_head_tail(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len = 20000;
	char *big = malloc(len);
	static const char marker[] = "\n... [3616 bytes elided] ...\n";

	for (size_t i = 0; i < len; i++)
		big[i] = 'a' + i % 26;
	assert_int_equal(mcp_format_stream(&sb, big, len), 1);
	assert_int_equal(sb.len, 8192 + strlen(marker) + 8192);
	assert_memory_equal(sb.buf, big, 8192);
	assert_memory_equal(sb.buf + 8192, marker, strlen(marker));
	assert_memory_equal(sb.buf + 8192 + strlen(marker), big + len - 8192,
			    8192);
	/* one byte over the limit */
	strbuf_reset(&sb);
	assert_int_equal(mcp_format_stream(&sb, big, 16385), 1);
	assert_non_null(strstr(sb.buf, "\n... [1 bytes elided] ...\n"));
	free(big);
	strbuf_release(&sb);
}

static void test_stream_utf8(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len = 20000;
	char *big = malloc(len);

	/* one replacement per invalid byte; valid sequences kept */
	assert_int_equal(mcp_format_stream(&sb,
					   "a\xff\xfe"
					   "b\xc3\xa9\xe2",
					   7),
			 0);
	assert_string_equal(sb.buf, "a" FFFD FFFD "b\xc3\xa9" FFFD);
	strbuf_reset(&sb);

	/*
	 * The cuts are by bytes (the seed's), sanitising comes after:
	 * a two-byte character across the head cut loses its halves.
	 */
	memset(big, 'x', len);
	big[8191] = '\xc3';
	big[8192] = '\xa9';
	assert_int_equal(mcp_format_stream(&sb, big, len), 1);
	assert_memory_equal(sb.buf + 8191, FFFD "\n... [3616 bytes elided]",
			    sizeof(FFFD "\n... [3616 bytes elided]") - 1);
	assert_true(sb.len == 8191 + 3 + 29 + 8192);
	free(big);
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_round),
		cmocka_unit_test(test_result_layout),
		cmocka_unit_test(test_result_empty_lines),
		cmocka_unit_test(test_result_truncated),
		cmocka_unit_test(test_result_timed_out),
		cmocka_unit_test(test_stream_short),
		cmocka_unit_test(test_stream_head_tail),
		cmocka_unit_test(test_stream_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
