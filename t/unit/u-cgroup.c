#include "compat.h"
#include "local/cgroup.h"
#include "strbuf.h"
#include "usage.h"

#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>

/*
 * lib/local/cgroup.c against fake cgroup trees in a temp dir
 * (GOSBX_CGROUP_ROOT): layout detection, the files written for v2 and
 * v1 limits, OOM counters, state persistence and removal.
 */

static char root[256];
static struct strbuf errors = STRBUF_INIT;

static void capture(const char *prefix, const char *msg, void *data)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
}

static void put(const char *rel, const char *content)
{
	struct strbuf path = STRBUF_INIT;
	FILE *fp;
	char *slash;

	strbuf_addf(&path, "%s/%s", root, rel);
	/* create the parent directories */
	for (slash = strchr(path.buf + strlen(root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path.buf, 0755);
		*slash = '/';
	}
	fp = fopen(path.buf, "w");
	assert_non_null(fp);
	fputs(content, fp);
	fclose(fp);
	strbuf_release(&path);
}

static char *get(const char *rel)
{
	struct strbuf path = STRBUF_INIT, sb = STRBUF_INIT;

	strbuf_addf(&path, "%s/%s", root, rel);
	if (strbuf_read_file(&sb, path.buf, 64) < 0) {
		strbuf_release(&path);
		strbuf_release(&sb);
		return NULL;
	}
	strbuf_release(&path);
	strbuf_trim(&sb);
	return strbuf_detach(&sb, NULL);
}

static void assert_file(const char *rel, const char *want)
{
	char *got = get(rel);

	if (!got)
		fail_msg("missing file '%s'", rel);
	assert_string_equal(got, want);
	free(got);
}

static int exists(const char *rel)
{
	struct strbuf path = STRBUF_INIT;
	struct stat st;
	int r;

	strbuf_addf(&path, "%s/%s", root, rel);
	r = !stat(path.buf, &st);
	strbuf_release(&path);
	return r;
}

static int setup(void **state)
{
	xsnprintf(root, sizeof(root), "%s/u-cgroup.XXXXXX",
		  getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		return -1;
	setenv("GOSBX_CGROUP_ROOT", root, 1);
	strbuf_reset(&errors);
	set_error_routine(capture, NULL);
	return 0;
}

static int teardown(void **state)
{
	struct strbuf cmd = STRBUF_INIT;
	int r;

	set_error_routine(NULL, NULL);
	strbuf_addf(&cmd, "rm -rf '%s'", root);
	r = system(cmd.buf);
	strbuf_release(&cmd);
	strbuf_release(&errors);
	unsetenv("GOSBX_CGROUP_ROOT");
	return r ? -1 : 0;
}

static void test_v2_limits(void **state)
{
	struct cgroup_host host;
	struct cgroup cg;
	struct cgroup_limits lim = { 64 << 20, 100, 1.5 };
	uint64_t n = 99;
	char *want;

	put("cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma\n");
	put("cgroup.subtree_control", "io\n");
	cgroup_host_detect(&host);
	assert_int_equal(host.layout, CGROUP_LAYOUT_V2);
	assert_true(host.fake);
	assert_int_equal(cgroup_host_version(&host, CGROUP_MEMORY), 2);
	assert_int_equal(cgroup_host_version(&host, CGROUP_PIDS), 2);
	assert_int_equal(cgroup_host_version(&host, CGROUP_CPU), 2);

	cgroup_init(&cg);
	assert_int_equal(cgroup_create(&host, NULL, "c1", ~0u, &lim, &cg), 0);
	want = xstrdup(root);
	assert_non_null(cg.v2);
	assert_true(starts_with(cg.v2, want));
	assert_true(ends_with(cg.v2, "/gosbx/c1"));
	assert_null(cg.v1[CGROUP_MEMORY]);
	free(want);

	/* controllers enabled at the root and in gosbx/ */
	assert_file("cgroup.subtree_control", "io memory pids cpu");
	assert_file("gosbx/cgroup.subtree_control", "memory pids cpu");
	assert_file("gosbx/c1/memory.max", "67108864");
	assert_file("gosbx/c1/memory.swap.max", "0");
	assert_file("gosbx/c1/pids.max", "100");
	assert_file("gosbx/c1/cpu.max", "150000 100000");

	/* OOM counter from memory.events */
	put("gosbx/c1/memory.events",
	    "low 0\nhigh 0\nmax 7\noom 3\noom_kill 2\noom_group_kill 0\n");
	assert_int_equal(cgroup_oom_kills(&cg, &n), 0);
	assert_int_equal(n, 2);

	/* joining writes "0" to cgroup.procs */
	put("gosbx/c1/cgroup.procs", "");
	assert_int_equal(cgroup_join_self(&cg), 0);
	assert_file("gosbx/c1/cgroup.procs", "0");

	assert_int_equal(cgroup_destroy(&cg, 1000), 0);
	assert_false(exists("gosbx/c1"));
	assert_true(exists("gosbx"));
	cgroup_release(&cg);
	cgroup_host_release(&host);
}

static void test_v2_only_some_limits(void **state)
{
	struct cgroup_host host;
	struct cgroup cg;
	struct cgroup_limits lim = { 0, 42, 0 };

	put("cgroup.controllers", "memory pids cpu\n");
	put("cgroup.subtree_control", "");
	cgroup_host_detect(&host);
	cgroup_init(&cg);
	assert_int_equal(cgroup_create(&host, "other", "c2", ~0u, &lim, &cg),
			 0);
	assert_file("other/c2/pids.max", "42");
	assert_false(exists("other/c2/memory.max"));
	assert_false(exists("other/c2/cpu.max"));
	assert_file("other/cgroup.subtree_control", "pids");
	/* fractional CPUs are rounded to microseconds of quota */
	lim.cpus = 0.25;
	assert_int_equal(cgroup_create(&host, "other", "c2",
				       CGROUP_BIT(CGROUP_CPU), &lim, &cg),
			 0);
	assert_file("other/c2/cpu.max", "25000 100000");
	assert_int_equal(cgroup_destroy(&cg, 1000), 0);
	cgroup_release(&cg);
	cgroup_host_release(&host);
}

static void test_v2_without_controllers_fails(void **state)
{
	struct cgroup_host host;
	struct cgroup cg;
	struct cgroup_limits lim = { 64 << 20, 0, 0 };

	put("cgroup.controllers", "cpuset io\n");
	cgroup_host_detect(&host);
	assert_int_equal(host.layout, CGROUP_LAYOUT_V2);
	assert_int_equal(cgroup_host_version(&host, CGROUP_MEMORY), 0);
	cgroup_init(&cg);
	assert_int_equal(cgroup_create(&host, NULL, "c3", ~0u, &lim, &cg), -1);
	assert_non_null(strstr(errors.buf, "cgroup memory controller not "
					   "available"));
	assert_non_null(strstr(errors.buf, "has none, v1 not mounted"));
	assert_false(exists("gosbx/c3"));
	assert_false(cgroup_in_use(&cg));
	cgroup_release(&cg);
	cgroup_host_release(&host);
}

static void test_hybrid_v1_limits(void **state)
{
	struct cgroup_host host;
	struct cgroup cg;
	struct cgroup_limits lim = { 32 << 20, 64, 0.5 };
	struct strbuf desc = STRBUF_INIT;
	uint64_t n = 99;

	put("unified/cgroup.controllers", "");
	put("memory/memory.limit_in_bytes", "9223372036854771712\n");
	put("memory/memory.memsw.limit_in_bytes", "9223372036854771712\n");
	put("pids/pids.max", "max\n");
	put("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
	cgroup_host_detect(&host);
	assert_int_equal(host.layout, CGROUP_LAYOUT_HYBRID);
	assert_true(host.v1_memsw);
	assert_int_equal(cgroup_host_version(&host, CGROUP_MEMORY), 1);
	assert_int_equal(cgroup_host_version(&host, CGROUP_PIDS), 1);
	assert_int_equal(cgroup_host_version(&host, CGROUP_CPU), 1);
	assert_true(ends_with(host.v1_path[CGROUP_CPU], "/cpu,cpuacct"));
	cgroup_host_describe(&host, &desc);
	assert_true(starts_with(desc.buf, "hybrid; v2 at "));
	assert_non_null(strstr(desc.buf, "(none)"));
	strbuf_release(&desc);

	cgroup_init(&cg);
	assert_int_equal(cgroup_create(&host, NULL, "c4", ~0u, &lim, &cg), 0);
	assert_null(cg.v2);
	assert_file("memory/gosbx/c4/memory.limit_in_bytes", "33554432");
	assert_file("memory/gosbx/c4/memory.memsw.limit_in_bytes", "33554432");
	assert_file("pids/gosbx/c4/pids.max", "64");
	assert_file("cpu,cpuacct/gosbx/c4/cpu.cfs_period_us", "100000");
	assert_file("cpu,cpuacct/gosbx/c4/cpu.cfs_quota_us", "50000");

	put("memory/gosbx/c4/memory.oom_control",
	    "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
	assert_int_equal(cgroup_oom_kills(&cg, &n), 0);
	assert_int_equal(n, 3);
	/* old kernels: no oom_kill line, memory.failcnt instead */
	put("memory/gosbx/c4/memory.oom_control",
	    "oom_kill_disable 0\nunder_oom 0\n");
	put("memory/gosbx/c4/memory.failcnt", "5\n");
	assert_int_equal(cgroup_oom_kills(&cg, &n), 0);
	assert_int_equal(n, 5);

	assert_int_equal(cgroup_destroy(&cg, 1000), 0);
	assert_false(exists("memory/gosbx/c4"));
	assert_false(exists("pids/gosbx/c4"));
	assert_false(exists("cpu,cpuacct/gosbx/c4"));
	cgroup_release(&cg);
	cgroup_host_release(&host);
}

static void test_v1_without_memsw(void **state)
{
	struct cgroup_host host;
	struct cgroup cg;
	struct cgroup_limits lim = { 1 << 20, 0, 0 };

	put("memory/memory.limit_in_bytes", "max\n");
	cgroup_host_detect(&host);
	assert_int_equal(host.layout, CGROUP_LAYOUT_V1);
	assert_false(host.v1_memsw);
	assert_int_equal(cgroup_host_version(&host, CGROUP_PIDS), 0);
	cgroup_init(&cg);
	assert_int_equal(cgroup_create(&host, NULL, "c5", ~0u, &lim, &cg), 0);
	assert_file("memory/gosbx/c5/memory.limit_in_bytes", "1048576");
	assert_false(exists("memory/gosbx/c5/memory.memsw.limit_in_bytes"));
	assert_int_equal(cgroup_destroy(&cg, 1000), 0);
	cgroup_release(&cg);

	/* an explicit pids limit cannot be applied: nothing is left */
	lim.pids = 10;
	cgroup_init(&cg);
	assert_int_equal(cgroup_create(&host, NULL, "c6", ~0u, &lim, &cg), -1);
	assert_non_null(strstr(errors.buf, "cgroup pids controller not "
					   "available (no v2 hierarchy, v1 not "
					   "mounted)"));
	assert_false(exists("memory/gosbx/c6"));
	cgroup_release(&cg);
	cgroup_host_release(&host);
}

static void test_empty_root(void **state)
{
	struct cgroup_host host;

	cgroup_host_detect(&host);
	assert_int_equal(host.layout, CGROUP_LAYOUT_NONE);
	assert_null(host.v2_path);
	assert_int_equal(cgroup_host_version(&host, CGROUP_MEMORY), 0);
	cgroup_host_release(&host);
}

static void test_bad_names(void **state)
{
	struct cgroup_host host;
	struct cgroup cg;
	struct cgroup_limits lim = { 1 << 20, 0, 0 };

	put("cgroup.controllers", "memory\n");
	cgroup_host_detect(&host);
	cgroup_init(&cg);
	assert_int_equal(cgroup_create(&host, NULL, "../x", ~0u, &lim, &cg),
			 -1);
	assert_int_equal(cgroup_create(&host, NULL, "..", ~0u, &lim, &cg), -1);
	assert_int_equal(cgroup_create(&host, "a/b", "x", ~0u, &lim, &cg), -1);
	assert_int_equal(cgroup_create(&host, NULL, "", ~0u, &lim, &cg), -1);
	assert_false(cgroup_in_use(&cg));
	cgroup_host_release(&host);
}

static void test_create_why_captures(void **state)
{
	struct cgroup_host host;
	struct cgroup cg;
	struct cgroup_limits lim = { 1 << 20, 0, 0 };
	struct strbuf why = STRBUF_INIT;

	put("cgroup.controllers", "memory\n");
	put("cgroup.subtree_control/x", ""); /* a directory: not writable */
	cgroup_host_detect(&host);
	cgroup_init(&cg);
	assert_int_equal(
		cgroup_create_why(&host, NULL, "c7", ~0u, &lim, &cg, &why), -1);
	assert_true(starts_with(why.buf, "cannot create sandbox: cgroup "
					 "memory controller: cannot enable"));
	assert_string_equal(errors.buf, ""); /* nothing printed */
	assert_false(cgroup_in_use(&cg));
	/* without a buffer the same failure is an error() */
	assert_int_equal(cgroup_create(&host, NULL, "c7", ~0u, &lim, &cg), -1);
	assert_non_null(strstr(errors.buf, "error: cannot create sandbox"));
	strbuf_release(&why);
	cgroup_release(&cg);
	cgroup_host_release(&host);
}

static void test_state_roundtrip(void **state)
{
	struct cgroup cg, back;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

	cgroup_init(&cg);
	cg.v2 = xstrdup("/sys/fs/cgroup/gosbx/x");
	cg.v1[CGROUP_PIDS] = xstrdup("/sys/fs/cgroup/pids/gosbx/x");
	cg.unit = xstrdup("gosbx-x.scope");
	cgroup_state_format(&cg, &a);
	assert_string_equal(a.buf, "v2 /sys/fs/cgroup/gosbx/x\n"
				   "pids /sys/fs/cgroup/pids/gosbx/x\n"
				   "unit gosbx-x.scope\n");
	cgroup_init(&back);
	/* unknown keys of the caller are ignored */
	strbuf_insert(&a, 0, "claim x\n", 8);
	assert_int_equal(cgroup_state_parse(&back, a.buf), 0);
	cgroup_state_format(&back, &b);
	assert_string_equal(b.buf, "v2 /sys/fs/cgroup/gosbx/x\n"
				   "pids /sys/fs/cgroup/pids/gosbx/x\n"
				   "unit gosbx-x.scope\n");
	assert_int_equal(cgroup_state_parse(&back, "memory relative\n"), -1);
	assert_int_equal(cgroup_state_parse(&back, "v2 \n"), -1);
	cgroup_release(&cg);
	cgroup_release(&back);
	strbuf_release(&a);
	strbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_v2_limits, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_v2_only_some_limits, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_v2_without_controllers_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hybrid_v1_limits, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_v1_without_memsw, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_empty_root, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_names, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_create_why_captures, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_state_roundtrip, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
