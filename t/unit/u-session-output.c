#include "compat.h"
#include "session/session.h"

#include <setjmp.h>
#include <cmocka.h>

/*
 * session_result_add_output() with res->keep (session_exec.keep_bytes,
 * issue 22): what a head-and-tail caller gets is the same as with the
 * default 8 MiB, for every length around the seed's 16,384-byte cut and
 * for chunks of every size, while out/err never hold more than keep.
 */

/* byte i of a test stream: a pattern that does not repeat soon */
static char stream_byte(size_t i, int stream)
{
	return (char)('a' + (i * 7 + i / 26 + (size_t)stream) % 26);
}

/* Add len bytes of both streams to res in chunks of chunk bytes. */
static void feed(struct session_result *res, size_t len, size_t chunk)
{
	char *buf = malloc(len + 1);

	for (int s = 1; s <= 2; s++) {
		for (size_t i = 0; i < len; i++)
			buf[i] = stream_byte(i, s);
		for (size_t off = 0; off < len; off += chunk)
			session_result_add_output(res, s, buf + off,
						  len - off < chunk ? len - off
								    : chunk);
	}
	free(buf);
}

static void check_same(size_t len, size_t chunk)
{
	struct session_result all, kept;

	session_result_init(&all);
	session_result_init(&kept);
	kept.keep = SESSION_KEEP_HEAD_TAIL;
	feed(&all, len, chunk);
	feed(&kept, len, chunk);
	assert_true(kept.out.len <= SESSION_KEEP_HEAD_TAIL);
	assert_true(kept.err.len <= SESSION_KEEP_HEAD_TAIL);
	assert_int_equal(kept.out_total, len);
	assert_int_equal(kept.err_total, len);
	/* a byte not kept says so at once */
	assert_int_equal(kept.out_truncated, len > SESSION_KEEP_HEAD_TAIL);
	assert_int_equal(session_result_head_tail(&all),
			 session_result_head_tail(&kept));
	assert_int_equal(all.out.len, kept.out.len);
	assert_memory_equal(all.out.buf, kept.out.buf, all.out.len);
	assert_int_equal(all.err.len, kept.err.len);
	assert_memory_equal(all.err.buf, kept.err.buf, all.err.len);
	assert_int_equal(all.out_truncated, kept.out_truncated);
	assert_int_equal(all.err_truncated, kept.err_truncated);
	session_result_release(&all);
	session_result_release(&kept);
}

static void test_keep_head_tail(void **state)
{
	static const size_t lens[] = { 0,     1,     8191,  8192,  8193,
				       16383, 16384, 16385, 24576, 100000 };
	static const size_t chunks[] = { 1, 100, 8191, 8192, 8193, 65536 };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++)
		for (size_t j = 0; j < ARRAY_SIZE(chunks); j++)
			check_same(lens[i], chunks[j]);
}

static void test_keep_marker(void **state)
{
	struct session_result r;
	char want[64];
	int n;

	(void)state;
	session_result_init(&r);
	r.keep = SESSION_KEEP_HEAD_TAIL;
	feed(&r, 1000000, 4096);
	assert_int_equal(r.out.len, SESSION_KEEP_HEAD_TAIL);
	assert_int_equal(session_result_head_tail(&r), 1);
	/* every byte written counts, not just those kept */
	n = snprintf(want, sizeof(want), "\n... [%d bytes elided] ...\n",
		     1000000 - 16384);
	assert_int_equal(r.out.len, 8192 + n + 8192);
	assert_memory_equal(r.out.buf + 8192, want, n);
	assert_int_equal(r.out.buf[0], stream_byte(0, 1));
	assert_int_equal(r.out.buf[r.out.len - 1], stream_byte(999999, 1));
	assert_int_equal(r.out.buf[8192 + n], stream_byte(1000000 - 8192, 1));
	session_result_release(&r);
}

static void test_keep_default(void **state)
{
	struct session_result r;

	(void)state;
	/* 0 is the upstream 8 MiB; so is anything larger */
	session_result_init(&r);
	feed(&r, (9u << 20), 1u << 20);
	assert_int_equal(r.out.len, 8u << 20);
	assert_int_equal(r.out_truncated, 1);
	session_result_release(&r);
	session_result_init(&r);
	r.keep = (size_t)1 << 30;
	feed(&r, (9u << 20), 1u << 20);
	assert_int_equal(r.out.len, 8u << 20);
	assert_int_equal(r.out_total, 9u << 20);
	session_result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep_head_tail),
		cmocka_unit_test(test_keep_marker),
		cmocka_unit_test(test_keep_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
