#include "compat.h"
#include "strvec.h"

#include <setjmp.h>
#include <cmocka.h>

static void check_terminated(const struct strvec *sv)
{
	assert_non_null(sv->v);
	assert_null(sv->v[sv->nr]);
	for (size_t i = 0; i < sv->nr; i++)
		assert_non_null(sv->v[i]);
}

static void test_init(void **state)
{
	struct strvec a = STRVEC_INIT, b;

	strvec_init(&b);
	check_terminated(&a);
	check_terminated(&b);
	assert_int_equal(a.nr, 0);
	strvec_clear(&a);
	strvec_pop(&a);
	check_terminated(&a);
	assert_int_equal(a.nr, 0);
	strvec_clear(&b);
}

static void test_push_copies(void **state)
{
	struct strvec sv = STRVEC_INIT;
	char buf[16] = "first";
	const char *ret;

	ret = strvec_push(&sv, buf);
	assert_ptr_equal(ret, sv.v[0]);
	assert_ptr_not_equal(ret, buf);
	memcpy(buf, "XXXXX", 5);
	assert_string_equal(sv.v[0], "first");
	ret = strvec_pushf(&sv, "%s-%d", "n", 42);
	assert_string_equal(ret, "n-42");
	assert_ptr_equal(ret, sv.v[1]);
	strvec_push(&sv, "");
	assert_int_equal(sv.nr, 3);
	assert_string_equal(sv.v[2], "");
	check_terminated(&sv);
	strvec_clear(&sv);
	check_terminated(&sv);
	assert_int_equal(sv.nr, 0);
	/* usable again after clear */
	strvec_push(&sv, "x");
	assert_string_equal(sv.v[0], "x");
	check_terminated(&sv);
	strvec_clear(&sv);
}

static void test_many(void **state)
{
	struct strvec sv = STRVEC_INIT;
	int i;

	for (i = 0; i < 1000; i++) {
		strvec_pushf(&sv, "arg%d", i);
		check_terminated(&sv);
	}
	assert_int_equal(sv.nr, 1000);
	for (i = 0; i < 1000; i++) {
		char want[16];
		xsnprintf(want, sizeof(want), "arg%d", i);
		assert_string_equal(sv.v[i], want);
	}
	for (i = 0; i < 600; i++)
		strvec_pop(&sv);
	assert_int_equal(sv.nr, 400);
	check_terminated(&sv);
	assert_string_equal(sv.v[399], "arg399");
	strvec_push(&sv, "new");
	assert_string_equal(sv.v[400], "new");
	check_terminated(&sv);
	strvec_clear(&sv);
}

static void test_pushv_pop(void **state)
{
	struct strvec sv = STRVEC_INIT;
	const char *items[] = { "sh", "-c", "echo hi", NULL };
	const char *none[] = { NULL };

	strvec_pushv(&sv, none);
	assert_int_equal(sv.nr, 0);
	check_terminated(&sv);
	strvec_push(&sv, "env");
	strvec_pushv(&sv, items);
	assert_int_equal(sv.nr, 4);
	assert_string_equal(sv.v[0], "env");
	assert_string_equal(sv.v[3], "echo hi");
	assert_ptr_not_equal(sv.v[1], items[0]);
	check_terminated(&sv);
	strvec_pop(&sv);
	assert_int_equal(sv.nr, 3);
	assert_null(sv.v[3]);
	strvec_pop(&sv);
	strvec_pop(&sv);
	strvec_pop(&sv);
	strvec_pop(&sv); /* popping an empty vector is a no-op */
	assert_int_equal(sv.nr, 0);
	check_terminated(&sv);
	/* pushv of the vector's own (copied) contents */
	strvec_pushv(&sv, items);
	strvec_pushv(&sv, items);
	assert_int_equal(sv.nr, 6);
	assert_string_equal(sv.v[5], "echo hi");
	strvec_clear(&sv);
}

static void test_detach(void **state)
{
	struct strvec sv = STRVEC_INIT;
	const char **v;

	v = strvec_detach(&sv);
	assert_non_null(v);
	assert_null(v[0]);
	free(v);
	check_terminated(&sv);

	strvec_push(&sv, "a");
	strvec_push(&sv, "b");
	v = strvec_detach(&sv);
	assert_int_equal(sv.nr, 0);
	check_terminated(&sv);
	assert_string_equal(v[0], "a");
	assert_string_equal(v[1], "b");
	assert_null(v[2]);
	/* sv no longer owns them: a new push does not disturb v */
	strvec_push(&sv, "c");
	assert_string_equal(v[0], "a");
	strvec_clear(&sv);
	for (size_t i = 0; v[i]; i++)
		free((char *)v[i]);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_push_copies),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_pushv_pop),
		cmocka_unit_test(test_detach),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
