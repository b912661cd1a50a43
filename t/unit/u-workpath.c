#include "compat.h"
#include "workpath.h"

#include <fcntl.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <cmocka.h>

static char root[PATH_MAX], outside[PATH_MAX];
static char root_tmp[] = "/tmp/u-workpath-root-XXXXXX";
static char out_tmp[] = "/tmp/u-workpath-out-XXXXXX";

static void mkfile(const char *dir, const char *name)
{
	struct strbuf p = STRBUF_INIT;
	int fd;

	strbuf_addf(&p, "%s/%s", dir, name);
	fd = open(p.buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	close(fd);
	strbuf_release(&p);
}

static void mkdir_in(const char *dir, const char *name)
{
	struct strbuf p = STRBUF_INIT;

	strbuf_addf(&p, "%s/%s", dir, name);
	assert_int_equal(mkdir(p.buf, 0755), 0);
	strbuf_release(&p);
}

/* Make dir/name a symlink to target ("%R" at its start means root). */
static void mklink(const char *dir, const char *name, const char *target)
{
	struct strbuf p = STRBUF_INIT, t = STRBUF_INIT;

	strbuf_addf(&p, "%s/%s", dir, name);
	if (skip_prefix(target, "%R", &target))
		strbuf_addstr(&t, root);
	else if (skip_prefix(target, "%O", &target))
		strbuf_addstr(&t, outside);
	strbuf_addstr(&t, target);
	if (symlink(t.buf, p.buf))
		fail_msg("symlink %s -> %s: %s", p.buf, t.buf, strerror(errno));
	strbuf_release(&p);
	strbuf_release(&t);
}

static int setup(void **state)
{
	struct strbuf s = STRBUF_INIT;
	char *r;

	if (!mkdtemp(root_tmp) || !mkdtemp(out_tmp))
		return -1;
	/* the root as realpath(3) gives it, as the header requires */
	r = realpath(root_tmp, NULL);
	xsnprintf(root, sizeof(root), "%s", r);
	free(r);
	r = realpath(out_tmp, NULL);
	xsnprintf(outside, sizeof(outside), "%s", r);
	free(r);

	mkfile(root, "file.txt");
	mkfile(root, "b");
	mkdir_in(root, "a");
	mkdir_in(root, "dir");
	strbuf_addf(&s, "%s/dir", root);
	mkfile(s.buf, "inner.txt");
	mklink(s.buf, "up_link", "../b");
	mklink(s.buf, "escape", "../../");
	mklink(s.buf, "dangling_here", "gone");
	strbuf_release(&s);

	/* inside, relative and absolute */
	mklink(root, "link_rel", "dir");
	mklink(root, "link_abs", "%R/dir");
	mklink(root, "link_file", "file.txt");
	mklink(root, "link_root", ".");
	mklink(root, "link_dotdot_in", "dir/../a");
	/* outside */
	mklink(root, "link_to_etc", "/etc");
	mklink(root, "link_up2", "../..");
	mklink(root, "link_abs_out", "/");
	mklink(root, "link_outside_dir", "%O");
	/* dangling, pointing inside and outside */
	mklink(root, "dangling_in", "nonexistent");
	mklink(root, "dangling_in_abs", "%R/missing/deeper");
	mklink(root, "dangling_chain", "dangling_in");
	mklink(root, "dangling_out", "/nonexistent-u-workpath/x");
	mklink(root, "dangling_out_rel", "../nonexistent-u-workpath");
	mklink(root, "dangling_out_chain", "dangling_out");
	/* loops */
	mklink(root, "loop1", "loop2");
	mklink(root, "loop2", "loop1");
	mklink(root, "self_loop", "self_loop");
	/* out of the root and back in */
	mklink(outside, "back_to_root", "%R");
	mklink(root, "out_then_in", "%O/back_to_root/file.txt");
	mklink(root, "dangling_out_then_in", "%O/back_to_root/newname");
	strbuf_addf(&s, "../%s/b", strrchr(root, '/') + 1);
	mklink(root, "rel_out_and_back", s.buf);
	strbuf_release(&s);
	/* dangling, through a link that leaves */
	mklink(root, "dangling_via_etc", "link_to_etc/nonexistent-u-wp");
	mklink(root, "dangling_via_outside", "link_outside_dir/newfile");
	mklink(root, "dir with space", "dir/");
	return 0;
}

static int teardown(void **state)
{
	struct strbuf cmd = STRBUF_INIT;
	int r;

	strbuf_addf(&cmd, "rm -rf '%s' '%s'", root, outside);
	r = system(cmd.buf);
	strbuf_release(&cmd);
	return r;
}

/* want_rel NULL: the path must be refused */
static void check(const char *path, const char *want_rel)
{
	struct strbuf abs = STRBUF_INIT, rel = STRBUF_INIT;
	struct strbuf want_abs = STRBUF_INIT;
	int r;

	strbuf_addstr(&abs, "A:");
	strbuf_addstr(&rel, "R:");
	r = workpath_resolve(root, path, &abs, &rel);
	if (!want_rel) {
		if (r != -1)
			fail_msg("'%s' resolved to '%s' (rel '%s')", path,
				 abs.buf + 2, rel.buf + 2);
		/* nothing appended on failure */
		assert_string_equal(abs.buf, "A:");
		assert_string_equal(rel.buf, "R:");
		goto out;
	}
	if (r)
		fail_msg("'%s' refused, want '%s'", path, want_rel);
	strbuf_addf(&want_abs, "A:%s%s", root,
		    strcmp(want_rel, "/") ? want_rel : "");
	if (strcmp(rel.buf + 2, want_rel) || strcmp(abs.buf, want_abs.buf))
		fail_msg("'%s' -> '%s' / '%s', want '%s' / '%s'", path,
			 abs.buf + 2, rel.buf + 2, want_abs.buf + 2, want_rel);
	/* rel is optional */
	strbuf_reset(&abs);
	strbuf_addstr(&abs, "A:");
	assert_int_equal(workpath_resolve(root, path, &abs, NULL), 0);
	assert_string_equal(abs.buf, want_abs.buf);
out:
	strbuf_release(&abs);
	strbuf_release(&rel);
	strbuf_release(&want_abs);
}

static void test_resolve_lexical(void **state)
{
	check("", "/");
	check("/", "/");
	check("///", "/");
	check(".", "/");
	check("//x", "/x");
	check("file.txt", "/file.txt");
	check("/file.txt", "/file.txt");
	check("a/../b", "/b");
	check("./dir//inner.txt/", "/dir/inner.txt");
	check("dir/..", "/");
	check("missing", "/missing");
	check("missing/deeper/x", "/missing/deeper/x");
	check("a/missing/../b", "/a/b");
	check("file.txt/x", "/file.txt/x");
	check("...", "/...");
	check("../x", NULL);
	check("/../x", NULL);
	check("..", NULL);
	check("a/../../x", NULL);
	check("a/../..", NULL);
}

static void test_resolve_links_inside(void **state)
{
	check("link_rel", "/dir");
	check("link_rel/inner.txt", "/dir/inner.txt");
	check("link_rel/missing", "/dir/missing");
	check("link_abs", "/dir");
	check("link_abs/inner.txt", "/dir/inner.txt");
	check("link_file", "/file.txt");
	check("dir/up_link", "/b");
	check("link_root", "/");
	check("link_root/file.txt", "/file.txt");
	check("link_root/link_root/link_rel", "/dir");
	check("link_dotdot_in", "/a");
	/* lexical ".." applies before symlinks, as upstream's Join/Clean */
	check("link_rel/../b", "/b");
	check("out_then_in", "/file.txt");
	check("link_outside_dir/back_to_root/b", "/b");
	check("rel_out_and_back", "/b");
	check("dir with space/inner.txt", "/dir/inner.txt");
}

static void test_resolve_links_outside(void **state)
{
	check("link_to_etc", NULL);
	check("link_to_etc/passwd", NULL);
	check("link_to_etc/nonexistent-u-workpath", NULL);
	check("link_up2", NULL);
	check("link_up2/etc", NULL);
	check("link_abs_out", NULL);
	check("link_abs_out/etc/passwd", NULL);
	check("dir/escape", NULL);
	check("dir/escape/x", NULL);
	check("link_outside_dir", NULL);
	check("link_outside_dir/newfile", NULL);
}

static void test_resolve_dangling(void **state)
{
	check("dangling_in", "/nonexistent");
	check("dangling_in/sub/file", "/nonexistent/sub/file");
	check("dangling_in_abs", "/missing/deeper");
	check("dangling_chain", "/nonexistent");
	check("dir/dangling_here", "/dir/gone");
	check("link_rel/dangling_here", "/dir/gone");
	check("dangling_out_then_in", "/newname");
	check("dangling_out", NULL);
	check("dangling_out_rel", NULL);
	check("dangling_out_chain", NULL);
	check("dangling_out/more", NULL);
	check("dangling_via_etc", NULL);
	check("dangling_via_outside", NULL);
}

static void test_resolve_loops(void **state)
{
	/* refused (fail closed), not an endless recursion */
	check("loop1", NULL);
	check("loop2/x", NULL);
	check("self_loop", NULL);
	check("self_loop/a/b", NULL);
}

static void test_resolve_root_slash(void **state)
{
	struct strbuf abs = STRBUF_INIT, rel = STRBUF_INIT;

	assert_int_equal(workpath_resolve("/", "tmp", &abs, &rel), 0);
	assert_string_equal(abs.buf, "/tmp");
	assert_string_equal(rel.buf, "/tmp");
	strbuf_reset(&abs);
	strbuf_reset(&rel);
	assert_int_equal(workpath_resolve("/", "", &abs, &rel), 0);
	assert_string_equal(abs.buf, "/");
	assert_string_equal(rel.buf, "/");
	strbuf_reset(&abs);
	strbuf_reset(&rel);
	assert_int_equal(
		workpath_resolve("/", "nonexistent-u-wp/x", &abs, &rel), 0);
	assert_string_equal(abs.buf, "/nonexistent-u-wp/x");
	assert_string_equal(rel.buf, "/nonexistent-u-wp/x");
	strbuf_release(&abs);
	strbuf_release(&rel);
}

static void clean(const char *in, const char *want)
{
	struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_addstr(&sb, "pre/x");
	r = workpath_clean(in, &sb);
	if (!want) {
		if (r != -1)
			fail_msg("'%s' cleaned to '%s'", in, sb.buf + 5);
		assert_string_equal(sb.buf, "pre/x");
	} else {
		if (r || strcmp(sb.buf + 5, want))
			fail_msg("'%s' -> %d '%s', want '%s'", in, r,
				 sb.buf + 5, want);
		assert_memory_equal(sb.buf, "pre/x", 5);
	}
	strbuf_release(&sb);
}

static void test_clean(void **state)
{
	clean("", "");
	clean(".", "");
	clean("./", "");
	clean("a", "a");
	clean("a/b", "a/b");
	clean("a//b/", "a/b");
	clean("/a/b", "a/b");
	clean("./a/./b/.", "a/b");
	clean("a/../b", "b");
	clean("a/b/../../c", "c");
	clean("a/b/../c/../d", "a/d");
	clean("a/..", "");
	clean("...", "...");
	clean("a/..b/.c", "a/..b/.c");
	clean("..", NULL);
	clean("../a", NULL);
	clean("a/../..", NULL);
	clean("a/../../b", NULL);
	clean("a/b/../../..", NULL);
}

static void test_within(void **state)
{
	assert_true(workpath_within("/app", "/app"));
	assert_true(workpath_within("/app", "/app/x"));
	assert_true(workpath_within("/app", "/app/x/y"));
	assert_false(workpath_within("/app", "/apple"));
	assert_false(workpath_within("/app", "/apple/x"));
	assert_false(workpath_within("/app", "/ap"));
	assert_false(workpath_within("/app", "/"));
	assert_false(workpath_within("/app", ""));
	assert_false(workpath_within("/app", "app"));
	assert_false(workpath_within("/app/x", "/app"));
	assert_true(workpath_within("/", "/"));
	assert_true(workpath_within("/", "/etc"));
	assert_false(workpath_within("/", "etc"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_lexical),
		cmocka_unit_test(test_resolve_links_inside),
		cmocka_unit_test(test_resolve_links_outside),
		cmocka_unit_test(test_resolve_dangling),
		cmocka_unit_test(test_resolve_loops),
		cmocka_unit_test(test_resolve_root_slash),
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_within),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
