#include "compat.h"
#include "kube/kube.h"
#include "strbuf.h"

#include <jansson.h>

#include <setjmp.h>
#include <cmocka.h>

/*
 * Unit tests of the limit checks of the kube backend (lib/kube/kube.h):
 * kube_parse_quantity() and kube_pod_spec_check_limits(). Pure
 * functions, no server.
 */

#define GI (1024.0 * 1024 * 1024)
#define MI (1024.0 * 1024)

static double q(const char *s)
{
	double v = -12345;

	if (kube_parse_quantity(s, &v) < 0)
		fail_msg("kube_parse_quantity(\"%s\") failed", s);
	return v;
}

static void bad(const char *s)
{
	double v = -12345;

	if (kube_parse_quantity(s, &v) == 0)
		fail_msg("kube_parse_quantity(\"%s\") took it: %g", s, v);
	assert_true(v == -12345); /* *out untouched */
}

static void test_quantity_plain(void **state)
{
	assert_true(q("0") == 0);
	assert_true(q("2") == 2);
	assert_true(q("128974848") == 128974848);
	assert_true(q("0.5") == 0.5);
	assert_true(q(".5") == 0.5);
	assert_true(q("2.") == 2);
	assert_true(q("+3") == 3);
	assert_true(q("-1") == -1);
	assert_true(q("9007199254740992") == 9007199254740992.0);
}

static void test_quantity_binary(void **state)
{
	assert_true(q("512Mi") == 512 * MI);
	assert_true(q("2Gi") == 2 * GI);
	assert_true(q("1.5Gi") == 1.5 * GI);
	assert_true(q("1Ki") == 1024);
	assert_true(q("0.5Ki") == 512);
	assert_true(q("1Ti") == 1024 * GI);
	assert_true(q("1Pi") == 1024 * 1024 * GI);
	assert_true(q("1Ei") == 1024.0 * 1024 * 1024 * GI);
}

static void test_quantity_decimal(void **state)
{
	assert_true(q("1G") == 1e9);
	assert_true(q("500M") == 500e6);
	assert_true(q("1.1G") == 1100000000.0);
	assert_true(q("1k") == 1000);
	assert_true(q("2T") == 2e12);
	assert_true(q("1P") == 1e15);
	assert_true(q("1E") == 1e18);
	/* milli: CPU */
	assert_true(q("250m") == 0.25);
	assert_true(q("100m") == 0.1);
	assert_true(q("1500m") == 1.5);
	assert_true(q("1m") == 0.001);
	assert_true(q("5u") == 5e-6);
	assert_true(q("7n") == 7e-9);
}

static void test_quantity_exponent(void **state)
{
	assert_true(q("129e6") == 129000000);
	assert_true(q("129E6") == 129000000);
	assert_true(q("1e3") == 1000);
	assert_true(q("1e+3") == 1000);
	assert_true(q("25e-2") == 0.25);
	assert_true(q("1.5e9") == 1.5e9);
	assert_true(q("1e-400") == 0);
}

static void test_quantity_garbage(void **state)
{
	bad(NULL);
	bad("");
	bad("Gi");
	bad("-");
	bad(".");
	bad("+.");
	bad("abc");
	bad("2 Gi");
	bad(" 2Gi");
	bad("2Gi ");
	bad("2gi"); /* suffixes are case-sensitive */
	bad("2GB");
	bad("2g");
	bad("2K"); /* kilo is lower case "k" */
	bad("2Ki2");
	bad("2i");
	bad("2mi"); /* no milli-binary */
	bad("1e");
	bad("1e+");
	bad("1e1.5"); /* fractional exponents are not taken */
	bad("1e3Mi");
	bad("1..5");
	bad("1.5.");
	bad("0x10");
	bad("inf");
	bad("nan");
	bad("1e999"); /* beyond a double */
	bad("1e99999999999999999999");
	bad("--1");
	bad("1,5");
}

/* A pod spec from JSON text. */
static json_t *spec(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		fail_msg("bad test JSON: %s: %s", e.text, text);
	return j;
}

/* kube_pod_spec_check_limits() on text; why/need in the buffers. */
static struct strbuf why = STRBUF_INIT, need = STRBUF_INIT;

static int check(const char *text, int64_t mem, double cpus)
{
	json_t *j = spec(text);
	int r;

	strbuf_reset(&why);
	strbuf_reset(&need);
	r = kube_pod_spec_check_limits(j, mem, cpus, &why, &need);
	json_decref(j);
	if (r == 0) {
		assert_int_equal(why.len, 0);
		assert_int_equal(need.len, 0);
	} else {
		assert_int_equal(r, 1);
		assert_true(why.len > 0);
		assert_true(need.len > 0);
	}
	return r;
}

#define ONE(lim)                                                               \
	"{\"containers\":[{\"name\":\"runtime\",\"image\":\"x\","              \
	"\"resources\":{\"limits\":" lim "}}]}"

static void test_check_memory(void **state)
{
	int64_t m512 = 512LL << 20;

	/* 2Gi template, 512 MiB asked: refused, with what and how */
	assert_int_equal(
		check(ONE("{\"memory\":\"2Gi\",\"cpu\":\"2\"}"), m512, 0), 1);
	assert_string_equal(why.buf, "container 'runtime' has memory limit "
				     "2Gi, above the 512Mi asked");
	assert_string_equal(need.buf, "resources.limits.memory at most 512Mi "
				      "in every container");
	/* equal or less: fine */
	assert_int_equal(check(ONE("{\"memory\":\"512Mi\"}"), m512, 0), 0);
	assert_int_equal(check(ONE("{\"memory\":\"256Mi\"}"), m512, 0), 0);
	assert_int_equal(check(ONE("{\"memory\":\"536870912\"}"), m512, 0), 0);
	assert_int_equal(check(ONE("{\"memory\":536870912}"), m512, 0), 0);
	assert_int_equal(check(ONE("{\"memory\":\"0.5Gi\"}"), m512, 0), 0);
	/* one byte more, decimal units */
	assert_int_equal(check(ONE("{\"memory\":536870913}"), m512, 0), 1);
	assert_int_equal(check(ONE("{\"memory\":\"500M\"}"), m512, 0), 0);
	assert_int_equal(check(ONE("{\"memory\":\"537M\"}"), m512, 0), 1);
	assert_string_equal(why.buf, "container 'runtime' has memory limit "
				     "537M, above the 512Mi asked");
	/* an odd size is shown in bytes */
	assert_int_equal(check(ONE("{\"memory\":\"1Gi\"}"), 1000000, 0), 1);
	assert_string_equal(why.buf, "container 'runtime' has memory limit "
				     "1Gi, above the 1000000 asked");
	/* memory not asked: no check at all */
	assert_int_equal(check(ONE("{}"), 0, 0), 0);
	assert_int_equal(check(ONE("{}"), -1, -1), 0);
}

static void test_check_missing(void **state)
{
	int64_t m = 1LL << 30;

	assert_int_equal(
		check("{\"containers\":[{\"name\":\"runtime\"}]}", m, 0), 1);
	assert_string_equal(why.buf, "container 'runtime' has no memory "
				     "limit (1Gi asked)");
	assert_int_equal(check(ONE("{\"cpu\":\"1\"}"), m, 0), 1);
	assert_string_equal(why.buf, "container 'runtime' has no memory "
				     "limit (1Gi asked)");
	/* limit 0 means none to the kubelet */
	assert_int_equal(check(ONE("{\"memory\":\"0\"}"), m, 0), 1);
	assert_string_equal(why.buf, "container 'runtime' has memory limit "
				     "0, which sets none (1Gi asked)");
	assert_int_equal(check(ONE("{\"memory\":\"lots\"}"), m, 0), 1);
	assert_string_equal(why.buf, "container 'runtime' has an unreadable "
				     "memory limit 'lots'");
	assert_int_equal(check(ONE("{\"memory\":true}"), m, 0), 1);
	assert_int_equal(check("{\"containers\":[]}", m, 0), 1);
	assert_string_equal(why.buf, "the pod template has no containers");
	assert_int_equal(check("{}", m, 0), 1);
}

static void test_check_every_container(void **state)
{
	const char *two =
		"{\"containers\":[{\"name\":\"runtime\",\"resources\":"
		"{\"limits\":{\"memory\":\"256Mi\",\"cpu\":\"500m\"}}},"
		"{\"name\":\"sidecar\",\"resources\":{\"limits\":"
		"{\"memory\":\"1Gi\",\"cpu\":\"250m\"}}}]}";

	assert_int_equal(check(two, 512LL << 20, 0), 1);
	assert_string_equal(why.buf, "container 'sidecar' has memory limit "
				     "1Gi, above the 512Mi asked");
	assert_int_equal(check(two, 1LL << 30, 0), 0);
	assert_int_equal(check(two, 0, 0.5), 0);
	assert_int_equal(check(two, 0, 0.25), 1);
	assert_string_equal(why.buf, "container 'runtime' has cpu limit "
				     "500m, above the 0.25 asked");
	assert_string_equal(need.buf, "resources.limits.cpu at most 0.25 in "
				      "every container");
	/* both asked: memory is reported first */
	assert_int_equal(check(two, 512LL << 20, 0.25), 1);
	assert_true(strstr(why.buf, "memory"));
	assert_int_equal(check(two, 1LL << 30, 0.5), 0);
}

static void test_check_cpu(void **state)
{
	assert_int_equal(check(ONE("{\"cpu\":\"2\"}"), 0, 1), 1);
	assert_string_equal(why.buf, "container 'runtime' has cpu limit 2, "
				     "above the 1 asked");
	assert_int_equal(check(ONE("{\"cpu\":\"2\"}"), 0, 2), 0);
	assert_int_equal(check(ONE("{\"cpu\":2}"), 0, 2), 0);
	assert_int_equal(check(ONE("{\"cpu\":\"1500m\"}"), 0, 1.5), 0);
	assert_int_equal(check(ONE("{\"cpu\":\"1501m\"}"), 0, 1.5), 1);
	assert_int_equal(check(ONE("{\"cpu\":\"0.1\"}"), 0, 0.1), 0);
	assert_int_equal(check(ONE("{\"cpu\":\"100m\"}"), 0, 0.1), 0);
	assert_int_equal(check(ONE("{\"cpu\":\"1.1\"}"), 0, 1.1), 0);
	assert_int_equal(check(ONE("{\"cpu\":0.5}"), 0, 0.5), 0);
	assert_int_equal(check(ONE("{\"memory\":\"1Gi\"}"), 0, 0.5), 1);
	assert_string_equal(why.buf, "container 'runtime' has no cpu limit "
				     "(0.5 asked)");
	/* a tiny quantity rounds up to 1m, as Kubernetes does */
	assert_int_equal(check(ONE("{\"cpu\":\"1n\"}"), 0, 0.001), 0);
	assert_int_equal(check(ONE("{\"cpu\":\"1001u\"}"), 0, 0.001), 1);
}

static void test_check_pod_level(void **state)
{
	/* a pod-level limit within the asked one bounds the containers */
	const char *pod = "{\"resources\":{\"limits\":{\"memory\":\"512Mi\"}},"
			  "\"containers\":[{\"name\":\"runtime\"}]}";
	const char *big = "{\"resources\":{\"limits\":{\"memory\":\"4Gi\"}},"
			  "\"containers\":[{\"name\":\"runtime\"}]}";

	assert_int_equal(check(pod, 512LL << 20, 0), 0);
	assert_int_equal(check(pod, 256LL << 20, 0), 1);
	assert_string_equal(why.buf, "container 'runtime' has no memory "
				     "limit (256Mi asked)");
	assert_int_equal(check(big, 512LL << 20, 0), 1);
	/* ... but says nothing about the CPU */
	assert_int_equal(check(pod, 0, 1), 1);
}

static int teardown(void **state)
{
	strbuf_release(&why);
	strbuf_release(&need);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantity_plain),
		cmocka_unit_test(test_quantity_binary),
		cmocka_unit_test(test_quantity_decimal),
		cmocka_unit_test(test_quantity_exponent),
		cmocka_unit_test(test_quantity_garbage),
		cmocka_unit_test(test_check_memory),
		cmocka_unit_test(test_check_missing),
		cmocka_unit_test(test_check_every_container),
		cmocka_unit_test(test_check_cpu),
		cmocka_unit_test(test_check_pod_level),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
