#include "compat.h"

#include <pthread.h>
#include <setjmp.h>
#include <time.h>
#include <cmocka.h>

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* The three units read one clock: each agrees with the finer one. */
static void test_monotonic_units(void **state)
{
	uint64_t ns = monotonic_ns(), us = monotonic_us(), ms = monotonic_ms();

	assert_true(us >= ns / 1000);
	assert_true(ms >= ns / 1000000);
	assert_true(ms <= monotonic_ns() / 1000000);
	assert_true(us <= monotonic_us());
}

/*
 * deadline_in_ms() gives now + ms on the clock asked for, with the
 * nanoseconds normalized (pthread_cond_timedwait() rejects
 * tv_nsec >= 1e9 with EINVAL), across second boundaries.
 */
static void test_deadline(void **state)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	static const uint64_t ms[] = { 0, 1, 999, 1000, 1500, 86400001 };

	for (size_t c = 0; c < ARRAY_SIZE(clocks); c++) {
		for (size_t i = 0; i < ARRAY_SIZE(ms); i++) {
			struct timespec before, after, d;

			clock_gettime(clocks[c], &before);
			deadline_in_ms(&d, clocks[c], ms[i]);
			clock_gettime(clocks[c], &after);
			assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000);
			assert_true(ts_ns(&d) >=
				    ts_ns(&before) + (int64_t)ms[i] * 1000000);
			assert_true(ts_ns(&d) <=
				    ts_ns(&after) + (int64_t)ms[i] * 1000000);
		}
	}
}

/* A wait on the deadline times out after about that long, not at once. */
static void test_deadline_wait(void **state)
{
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
	struct timespec d;
	uint64_t t0 = monotonic_ms();
	int rc;

	pthread_mutex_lock(&mu);
	deadline_in_ms(&d, CLOCK_REALTIME, 150);
	do
		rc = pthread_cond_timedwait(&cond, &mu, &d);
	while (rc == 0);
	pthread_mutex_unlock(&mu);
	assert_int_equal(rc, ETIMEDOUT);
	assert_true(monotonic_ms() - t0 >= 140);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monotonic_units),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_deadline_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
