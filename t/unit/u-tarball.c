#include "compat.h"
#include "strbuf.h"
#include "strvec.h"
#include "tarball.h"

#include <setjmp.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <locale.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>

/*
 * Scratch layout of every test (under a fresh mkdtemp directory S):
 *   S/root     the workdir given to tar_extract_safe (realpath'd)
 *   S/outside  a directory next to it that must never change
 *   S/in.tar   the archive under test
 */
struct scratch {
	char *top;
	struct strbuf root, outside, tarpath;
};

static void mkfile(const char *path, const char *data, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write_in_full(fd, data, strlen(data)),
			 (ssize_t)strlen(data));
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static char *slurp(const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, path, 0) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

static void assert_file(const char *dir, const char *rel, const char *data)
{
	struct strbuf p = STRBUF_INIT;
	char *got;

	strbuf_addf(&p, "%s/%s", dir, rel);
	got = slurp(p.buf);
	if (!got)
		fail_msg("missing file '%s'", p.buf);
	assert_string_equal(got, data);
	free(got);
	strbuf_release(&p);
}

static int exists(const char *dir, const char *rel)
{
	struct strbuf p = STRBUF_INIT;
	struct stat st;
	int r;

	strbuf_addf(&p, "%s/%s", dir, rel);
	r = lstat(p.buf, &st) == 0;
	strbuf_release(&p);
	return r;
}

static mode_t mode_of(const char *dir, const char *rel)
{
	struct strbuf p = STRBUF_INIT;
	struct stat st;

	strbuf_addf(&p, "%s/%s", dir, rel);
	assert_int_equal(lstat(p.buf, &st), 0);
	strbuf_release(&p);
	return st.st_mode;
}

static int setup(void **state)
{
	struct scratch *s = calloc(1, sizeof(*s));
	char tmpl[] = "/tmp/u-tarball-XXXXXX";
	struct strbuf p = STRBUF_INIT;

	assert_non_null(mkdtemp(tmpl));
	s->top = realpath(tmpl, NULL);
	assert_non_null(s->top);
	strbuf_init(&s->root, 0);
	strbuf_init(&s->outside, 0);
	strbuf_init(&s->tarpath, 0);
	strbuf_addf(&s->root, "%s/root", s->top);
	strbuf_addf(&s->outside, "%s/outside", s->top);
	strbuf_addf(&s->tarpath, "%s/in.tar", s->top);
	assert_int_equal(mkdir(s->root.buf, 0755), 0);
	assert_int_equal(mkdir(s->outside.buf, 0755), 0);
	strbuf_addf(&p, "%s/keep.txt", s->root.buf);
	mkfile(p.buf, "keep\n", 0644);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/secret", s->outside.buf);
	mkfile(p.buf, "secret\n", 0600);
	strbuf_release(&p);
	*state = s;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	struct scratch *s = *state;

	nftw(s->top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(s->top);
	strbuf_release(&s->root);
	strbuf_release(&s->outside);
	strbuf_release(&s->tarpath);
	free(s);
	return 0;
}

/*
 * A listing of everything under dir: one line per object with its
 * path, type, mode, size, link target and contents, sorted.
 */
static void snapshot_dir(const char *dir, const char *rel, struct strbuf *out)
{
	struct strbuf p = STRBUF_INIT;
	struct strvec names = STRVEC_INIT;
	struct dirent *d;
	DIR *dh;
	size_t i;

	strbuf_addf(&p, "%s%s%s", dir, *rel ? "/" : "", rel);
	dh = opendir(p.buf);
	assert_non_null(dh);
	while ((d = readdir(dh)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			strvec_push(&names, d->d_name);
	closedir(dh);
	for (i = 0; i < names.nr; i++)
		for (size_t j = i + 1; j < names.nr; j++)
			if (strcmp(names.v[i], names.v[j]) > 0) {
				const char *t = names.v[i];

				names.v[i] = names.v[j];
				names.v[j] = t;
			}
	for (i = 0; i < names.nr; i++) {
		struct strbuf child = STRBUF_INIT, full = STRBUF_INIT;
		struct stat st;

		strbuf_addf(&child, "%s%s%s", rel, *rel ? "/" : "", names.v[i]);
		strbuf_addf(&full, "%s/%s", dir, child.buf);
		assert_int_equal(lstat(full.buf, &st), 0);
		strbuf_addf(out, "%s %o %lld", child.buf, (unsigned)st.st_mode,
			    (long long)st.st_size);
		if (S_ISLNK(st.st_mode)) {
			char t[PATH_MAX];
			ssize_t n = readlink(full.buf, t, sizeof(t) - 1);

			assert_true(n >= 0);
			t[n] = '\0';
			strbuf_addf(out, " -> %s\n", t);
		} else if (S_ISREG(st.st_mode)) {
			char *c = slurp(full.buf);

			assert_non_null(c);
			strbuf_addf(out, " [%s]\n", c);
			free(c);
		} else {
			strbuf_addch(out, '\n');
			if (S_ISDIR(st.st_mode))
				snapshot_dir(dir, child.buf, out);
		}
		strbuf_release(&child);
		strbuf_release(&full);
	}
	strvec_clear(&names);
	strbuf_release(&p);
}

static void snapshot(struct scratch *s, struct strbuf *out)
{
	strbuf_reset(out);
	strbuf_addstr(out, "root:\n");
	snapshot_dir(s->root.buf, "", out);
	strbuf_addstr(out, "outside:\n");
	snapshot_dir(s->outside.buf, "", out);
}

/* One entry of a hand-made archive. */
struct tent {
	const char *name;
	char type;	 /* f file, d dir, l symlink, h hard link,
			    c char device, p fifo */
	const char *arg; /* file data, or link target */
	mode_t mode;	 /* 0: 0644 for files, 0755 for dirs */
	time_t mtime;
};

/* Write entries into path as a tar, through the given filter. */
static void build_tar(const char *path, int filter, const struct tent *t,
		      size_t nr)
{
	struct archive *a = archive_write_new();
	size_t i;

	assert_non_null(a);
	assert_int_equal(archive_write_set_format_pax_restricted(a),
			 ARCHIVE_OK);
	assert_int_equal(archive_write_add_filter(a, filter), ARCHIVE_OK);
	assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
	for (i = 0; i < nr; i++) {
		struct archive_entry *e = archive_entry_new();
		size_t len = 0;

		archive_entry_set_pathname(e, t[i].name);
		archive_entry_set_mtime(e, t[i].mtime ? t[i].mtime : 1000000,
					0);
		switch (t[i].type) {
		case 'f':
			len = strlen(t[i].arg);
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, t[i].mode ? t[i].mode : 0644);
			archive_entry_set_size(e, len);
			break;
		case 'd':
			archive_entry_set_filetype(e, AE_IFDIR);
			archive_entry_set_perm(e, t[i].mode ? t[i].mode : 0755);
			break;
		case 'l':
			archive_entry_set_filetype(e, AE_IFLNK);
			archive_entry_set_perm(e, 0777);
			archive_entry_set_symlink(e, t[i].arg);
			break;
		case 'h':
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, 0644);
			archive_entry_set_hardlink(e, t[i].arg);
			break;
		case 'c':
			archive_entry_set_filetype(e, AE_IFCHR);
			archive_entry_set_perm(e, 0666);
			archive_entry_set_rdev(e, makedev(1, 3));
			break;
		case 'p':
			archive_entry_set_filetype(e, AE_IFIFO);
			archive_entry_set_perm(e, 0644);
			break;
		default:
			fail_msg("bad type %c", t[i].type);
		}
		assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
		if (len)
			assert_int_equal(archive_write_data(a, t[i].arg, len),
					 (la_ssize_t)len);
		archive_entry_free(e);
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
}

static int open_tar(struct scratch *s)
{
	int fd = open(s->tarpath.buf, O_RDONLY);

	assert_true(fd >= 0);
	return fd;
}

/* Extract S/in.tar; returns tar_extract_safe's result. */
static int extract(struct scratch *s, const char *subdir, struct tar_stats *st,
		   struct strbuf *err)
{
	int fd = open_tar(s), r;

	r = tar_extract_safe(fd, s->root.buf, subdir, 0, st, err);
	close(fd);
	return r;
}

/*
 * Build the archive, extract it, expect a refusal whose message holds
 * `want`, and nothing changed in root or outside.
 */
static void expect_refused(struct scratch *s, const char *subdir,
			   const struct tent *t, size_t nr, const char *want)
{
	struct strbuf before = STRBUF_INIT, after = STRBUF_INIT;
	struct strbuf err = STRBUF_INIT;
	struct tar_stats st = { 99, 99 };

	build_tar(s->tarpath.buf, ARCHIVE_FILTER_NONE, t, nr);
	snapshot(s, &before);
	assert_int_equal(extract(s, subdir, &st, &err), -1);
	if (!strstr(err.buf, want))
		fail_msg("error '%s' does not contain '%s'", err.buf, want);
	assert_null(strchr(err.buf, '\n'));
	snapshot(s, &after);
	assert_string_equal(before.buf, after.buf);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.bytes, 0);
	strbuf_release(&before);
	strbuf_release(&after);
	strbuf_release(&err);
}

#define REFUSED(s, t, want) expect_refused(s, NULL, t, ARRAY_SIZE(t), want)

static void test_refuse_dotdot(void **state)
{
	struct scratch *s = *state;
	struct tent t[] = {
		{ "ok.txt", 'f', "fine\n" },
		{ "../x", 'f', "escaped\n" },
	};
	struct tent t2[] = {
		{ "ok.txt", 'f', "fine\n" },
		{ "a/../../x", 'f', "escaped\n" },
	};
	struct tent t3[] = {
		{ "a/b/../c", 'f', "not even inside\n" },
	};

	REFUSED(s, t,
		"refusing entry '../x': path leaves the target "
		"directory");
	assert_false(exists(s->top, "x"));
	REFUSED(s, t2, "refusing entry 'a/../../x': path leaves");
	REFUSED(s, t3, "refusing entry 'a/b/../c'");
}

static void test_refuse_absolute(void **state)
{
	struct scratch *s = *state;
	struct strbuf abs = STRBUF_INIT;
	struct tent t[] = {
		{ "ok.txt", 'f', "fine\n" },
		{ NULL, 'f', "escaped\n" },
	};
	struct tent t2[] = {
		{ "/etc/gosbx-u-tarball-x", 'f', "escaped\n" },
	};

	strbuf_addf(&abs, "%s/x", s->outside.buf);
	t[1].name = abs.buf;
	REFUSED(s, t, "': absolute path");
	assert_false(exists(s->outside.buf, "x"));
	REFUSED(s, t2, "refusing entry '/etc/gosbx-u-tarball-x': absolute");
	assert_false(exists("/etc", "gosbx-u-tarball-x"));
	strbuf_release(&abs);
}

static void test_refuse_symlinks(void **state)
{
	struct scratch *s = *state;
	struct tent abs_then_file[] = {
		{ "evil", 'l', "/etc" },
		{ "evil/passwd", 'f', "root::0:0::/:/bin/sh\n" },
	};
	struct tent up_then_file[] = {
		{ "evil", 'l', "../.." },
		{ "evil/x", 'f', "escaped\n" },
	};
	struct tent abs_alone[] = {
		{ "ok.txt", 'f', "fine\n" },
		{ "l", 'l', "/etc/passwd" },
	};
	struct tent inside_then_file[] = {
		{ "d", 'd' },
		{ "evil", 'l', "d" },
		{ "evil/x", 'f', "through a link\n" },
	};
	struct tent deep_up[] = {
		{ "a/b/l", 'l', "../../../outside/secret" },
	};
	struct tent empty_target[] = {
		{ "l", 'l', "" },
	};

	REFUSED(s, abs_then_file,
		"refusing entry 'evil': symlink target "
		"is absolute");
	REFUSED(s, up_then_file,
		"refusing entry 'evil': symlink target "
		"leaves the workdir");
	REFUSED(s, abs_alone,
		"refusing entry 'l': symlink target is "
		"absolute");
	REFUSED(s, inside_then_file,
		"refusing entry 'evil/x': goes "
		"through a symlink in the archive");
	REFUSED(s, deep_up, "refusing entry 'a/b/l': symlink target leaves");
	REFUSED(s, empty_target, "refusing entry 'l': empty symlink target");
}

/* evil -> .. style: allowed inside root, but never written through */
static void test_refuse_link_to_parent(void **state)
{
	struct scratch *s = *state;
	struct tent through[] = {
		{ "evil", 'l', ".." },
		{ "evil/x", 'f', "escaped\n" },
	};
	struct tent chained[] = {
		{ "d", 'l', ".." },
		{ "e", 'l', "d/../secret" },
	};
	/* the order of the two links must not matter */
	struct tent chained_rev[] = {
		{ "e", 'l', "d/../secret" },
		{ "d", 'l', ".." },
	};

	expect_refused(s, "sub", through, ARRAY_SIZE(through),
		       "refusing entry 'evil/x': goes through a symlink");
	/* "..": from root itself that leaves root */
	REFUSED(s, through, "refusing entry 'evil': symlink target leaves");
	expect_refused(s, "sub", chained, ARRAY_SIZE(chained),
		       "refusing entry 'e': symlink target uses '..' after "
		       "another symlink");
	expect_refused(s, "sub", chained_rev, ARRAY_SIZE(chained_rev),
		       "refusing entry 'e': symlink target uses '..'");
}

static void test_refuse_hardlinks(void **state)
{
	struct scratch *s = *state;
	struct tent abs[] = {
		{ "ok.txt", 'f', "fine\n" },
		{ "pw", 'h', "/etc/passwd" },
	};
	struct tent up[] = {
		{ "h", 'h', "../outside/secret" },
	};
	struct tent missing[] = {
		{ "h", 'h', "nope.txt" },
	};
	struct tent later[] = {
		{ "h", 'h', "f.txt" },
		{ "f.txt", 'f', "data\n" },
	};
	struct tent to_dir[] = {
		{ "d", 'd' },
		{ "h", 'h', "d" },
	};

	REFUSED(s, abs, "refusing entry 'pw': hard link target is absolute");
	REFUSED(s, up, "refusing entry 'h': hard link target leaves");
	REFUSED(s, missing,
		"refusing entry 'h': hard link target "
		"'nope.txt' is not an earlier entry or an existing regular "
		"file");
	REFUSED(s, later, "refusing entry 'h': hard link target 'f.txt'");
	REFUSED(s, to_dir, "refusing entry 'h': hard link target 'd'");
}

static void test_refuse_special(void **state)
{
	struct scratch *s = *state;
	struct tent chr[] = {
		{ "ok.txt", 'f', "fine\n" },
		{ "null", 'c' },
	};
	struct tent fifo[] = {
		{ "ok.txt", 'f', "fine\n" },
		{ "pipe", 'p' },
	};

	REFUSED(s, chr,
		"refusing entry 'null': device files are not "
		"allowed");
	REFUSED(s, fifo, "refusing entry 'pipe': fifos are not allowed");
}

/* An existing symlink in root that leaves it must not be written through */
static void test_refuse_existing_link(void **state)
{
	struct scratch *s = *state;
	struct strbuf p = STRBUF_INIT;
	struct tent t[] = {
		{ "ok.txt", 'f', "fine\n" },
		{ "out/secret", 'f', "overwritten\n" },
	};
	struct tent t2[] = {
		{ "out/new", 'f', "new\n" },
	};
	struct tent t3[] = {
		{ "rel/new", 'f', "new\n" },
	};

	strbuf_addf(&p, "%s/out", s->root.buf);
	assert_int_equal(symlink(s->outside.buf, p.buf), 0);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/rel", s->root.buf);
	assert_int_equal(symlink("../outside", p.buf), 0);
	REFUSED(s, t,
		"refusing entry 'out/secret': goes through a symlink "
		"that leaves the workdir");
	REFUSED(s, t2, "refusing entry 'out/new'");
	REFUSED(s, t3, "refusing entry 'rel/new'");
	assert_file(s->outside.buf, "secret", "secret\n");
	/* as the target directory itself */
	expect_refused(s, "out", t2, ARRAY_SIZE(t2),
		       "invalid directory 'out': goes through a symlink");
	expect_refused(s, "../outside", t2, ARRAY_SIZE(t2),
		       "invalid directory '../outside'");
	expect_refused(s, "/tmp", t2, ARRAY_SIZE(t2),
		       "invalid directory '/tmp': absolute path");
	strbuf_release(&p);
}

/* gzip, zstd, xz and bzip2 compressed archives with nested trees */
static void check_filter(struct scratch *s, int filter)
{
	struct strbuf err = STRBUF_INIT;
	struct tar_stats st = { 0 };
	struct tent t[] = {
		{ "./", 'd' },
		{ "./d/", 'd', NULL, 0750 },
		{ "./d/e/f.txt", 'f', "nested\n", 0600, 1234567 },
		{ "./top.txt", 'f', "top\n" },
		{ "lnk", 'l', "d/e/f.txt" },
		{ "hl", 'h', "d/e/f.txt" },
	};
	struct stat sb;
	struct strbuf p = STRBUF_INIT;

	build_tar(s->tarpath.buf, filter, t, ARRAY_SIZE(t));
	assert_int_equal(extract(s, "", &st, &err), 0);
	assert_string_equal(err.buf, "");
	assert_file(s->root.buf, "d/e/f.txt", "nested\n");
	assert_file(s->root.buf, "top.txt", "top\n");
	assert_file(s->root.buf, "lnk", "nested\n");
	assert_file(s->root.buf, "hl", "nested\n");
	assert_file(s->root.buf, "keep.txt", "keep\n");
	assert_int_equal(mode_of(s->root.buf, "d") & 07777, 0750);
	assert_int_equal(mode_of(s->root.buf, "d/e") & 07777, 0755);
	assert_int_equal(mode_of(s->root.buf, "d/e/f.txt") & 07777, 0600);
	assert_true(S_ISLNK(mode_of(s->root.buf, "lnk")));
	strbuf_addf(&p, "%s/d/e/f.txt", s->root.buf);
	assert_int_equal(stat(p.buf, &sb), 0);
	assert_int_equal(sb.st_mtime, 1234567);
	assert_int_equal(sb.st_nlink, 2);
	/* f.txt, top.txt, lnk, hl */
	assert_int_equal(st.files, 4);
	assert_int_equal(st.bytes, strlen("nested\n") + strlen("top\n"));
	strbuf_release(&p);
	strbuf_release(&err);
}

static void test_gzip(void **state)
{
	check_filter(*state, ARCHIVE_FILTER_GZIP);
}

static void test_zstd(void **state)
{
	check_filter(*state, ARCHIVE_FILTER_ZSTD);
}

static void test_xz(void **state)
{
	check_filter(*state, ARCHIVE_FILTER_XZ);
}

static void test_bzip2(void **state)
{
	check_filter(*state, ARCHIVE_FILTER_BZIP2);
}

static void test_overwrite(void **state)
{
	struct scratch *s = *state;
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	struct tar_stats st;
	struct tent t[] = {
		{ "keep.txt", 'f', "new\n" },
		{ "link", 'f', "replaced the link\n" },
		{ "suid", 'f', "#!/bin/sh\n", 06755 },
		{ "sticky", 'd', NULL, 01777 },
	};

	/* an existing symlink is replaced, not followed */
	strbuf_addf(&p, "%s/link", s->root.buf);
	assert_int_equal(symlink("../outside/secret", p.buf), 0);
	build_tar(s->tarpath.buf, ARCHIVE_FILTER_NONE, t, ARRAY_SIZE(t));
	assert_int_equal(extract(s, NULL, &st, &err), 0);
	assert_file(s->root.buf, "keep.txt", "new\n");
	assert_true(S_ISREG(mode_of(s->root.buf, "link")));
	assert_file(s->root.buf, "link", "replaced the link\n");
	assert_file(s->outside.buf, "secret", "secret\n");
	assert_int_equal(mode_of(s->root.buf, "suid") & 07777, 0755);
	assert_int_equal(mode_of(s->root.buf, "sticky") & 07777, 0777);
	/* twice: everything is replaced again */
	assert_int_equal(extract(s, NULL, &st, &err), 0);
	assert_int_equal(st.files, 3);
	strbuf_release(&p);
	strbuf_release(&err);
}

/*
 * A directory entry replaces an existing symlink (it is not followed),
 * and what comes below it lands in the new directory.
 */
static void test_dir_replaces_link(void **state)
{
	struct scratch *s = *state;
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	struct strbuf before = STRBUF_INIT, after = STRBUF_INIT;
	struct tar_stats st;
	struct tent t[] = {
		{ "a", 'd' },
		{ "a/secret", 'f', "inside\n" },
		{ "a/sub", 'f', "a file, though outside/sub is a dir\n" },
	};

	strbuf_addf(&p, "%s/sub", s->outside.buf);
	assert_int_equal(mkdir(p.buf, 0755), 0);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/a", s->root.buf);
	assert_int_equal(symlink(s->outside.buf, p.buf), 0);
	strbuf_addstr(&before, "outside:\n");
	snapshot_dir(s->outside.buf, "", &before);
	build_tar(s->tarpath.buf, ARCHIVE_FILTER_NONE, t, ARRAY_SIZE(t));
	assert_int_equal(extract(s, NULL, &st, &err), 0);
	assert_string_equal(err.buf, "");
	assert_true(S_ISDIR(mode_of(s->root.buf, "a")));
	assert_file(s->root.buf, "a/secret", "inside\n");
	assert_file(s->root.buf, "a/sub",
		    "a file, though outside/sub is a dir\n");
	strbuf_addstr(&after, "outside:\n");
	snapshot_dir(s->outside.buf, "", &after);
	assert_string_equal(before.buf, after.buf);
	strbuf_release(&p);
	strbuf_release(&err);
	strbuf_release(&before);
	strbuf_release(&after);
}

/* A file where a directory is would fail half-way: refuse up front. */
static void test_refuse_dir_replaced(void **state)
{
	struct scratch *s = *state;
	struct strbuf p = STRBUF_INIT;
	struct tent t[] = {
		{ "ok.txt", 'f', "fine\n" },
		{ "dir", 'f', "a file\n" },
	};
	struct tent t2[] = {
		{ "keep.txt/x", 'f', "under a file\n" },
	};

	strbuf_addf(&p, "%s/dir", s->root.buf);
	assert_int_equal(mkdir(p.buf, 0755), 0);
	REFUSED(s, t, "refusing entry 'dir': a directory exists");
	REFUSED(s, t2,
		"refusing entry 'keep.txt/x': a parent is not a "
		"directory");
	strbuf_release(&p);
}

static void test_corrupt(void **state)
{
	struct scratch *s = *state;
	struct strbuf before = STRBUF_INIT, after = STRBUF_INIT;
	struct strbuf err = STRBUF_INIT, data = STRBUF_INIT;
	struct tar_stats st;
	struct tent t[] = {
		{ "first.txt", 'f', "the first entry is complete\n" },
		{ "big.txt", 'f', NULL },
	};
	int fd, i;

	/* garbage */
	fd = open(s->tarpath.buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	for (i = 0; i < 100; i++)
		strbuf_addstr(&data, "this is not a tar archive at all\n");
	assert_int_equal(write_in_full(fd, data.buf, data.len),
			 (ssize_t)data.len);
	close(fd);
	snapshot(s, &before);
	assert_int_equal(extract(s, NULL, &st, &err), -1);
	assert_true(starts_with(err.buf, "invalid archive: "));

	/* a gzip'd tar cut in the middle of its second file */
	strbuf_reset(&data);
	for (i = 0; i < 20000; i++)
		strbuf_addf(&data, "line %d of a long file\n", i);
	t[1].arg = data.buf;
	build_tar(s->tarpath.buf, ARCHIVE_FILTER_GZIP, t, ARRAY_SIZE(t));
	{
		struct stat sb;

		assert_int_equal(stat(s->tarpath.buf, &sb), 0);
		assert_int_equal(truncate(s->tarpath.buf, sb.st_size / 2), 0);
	}
	strbuf_reset(&err);
	assert_int_equal(extract(s, NULL, &st, &err), -1);
	assert_true(starts_with(err.buf, "invalid archive: "));
	snapshot(s, &after);
	assert_string_equal(before.buf, after.buf);
	assert_false(exists(s->root.buf, "first.txt"));
	strbuf_release(&before);
	strbuf_release(&after);
	strbuf_release(&err);
	strbuf_release(&data);
}

static void test_subdir(void **state)
{
	struct scratch *s = *state;
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	struct tar_stats st;
	struct tent t[] = {
		{ "f.txt", 'f', "in sub\n" },
		{ "up", 'l', "../../keep.txt" },
		{ "h", 'h', "f.txt" },
	};
	struct tent t2[] = {
		{ "x.txt", 'f', "through an inside link\n" },
	};

	build_tar(s->tarpath.buf, ARCHIVE_FILTER_GZIP, t, ARRAY_SIZE(t));
	assert_int_equal(extract(s, "a/./b/", &st, &err), 0);
	assert_file(s->root.buf, "a/b/f.txt", "in sub\n");
	assert_file(s->root.buf, "a/b/up", "keep\n");
	assert_file(s->root.buf, "a/b/h", "in sub\n");
	assert_false(exists(s->root.buf, "f.txt"));
	assert_int_equal(st.files, 3);
	assert_int_equal(st.bytes, 7);

	/* a symlink inside root is followed to where it points */
	strbuf_addf(&p, "%s/alias", s->root.buf);
	assert_int_equal(symlink("a/b", p.buf), 0);
	build_tar(s->tarpath.buf, ARCHIVE_FILTER_NONE, t2, ARRAY_SIZE(t2));
	assert_int_equal(extract(s, "alias", &st, &err), 0);
	assert_file(s->root.buf, "a/b/x.txt", "through an inside link\n");
	assert_true(S_ISLNK(mode_of(s->root.buf, "alias")));
	strbuf_release(&p);
	strbuf_release(&err);
}

static void test_empty_archive(void **state)
{
	struct scratch *s = *state;
	struct strbuf err = STRBUF_INIT;
	struct tar_stats st = { 1, 1 };

	build_tar(s->tarpath.buf, ARCHIVE_FILTER_NONE, NULL, 0);
	assert_int_equal(extract(s, NULL, &st, &err), 0);
	assert_int_equal(st.files, 0);
	strbuf_release(&err);
}

/* ------------------------------------------------------------------ */

static int fd_write(const void *buf, size_t len, void *data)
{
	return write_in_full(*(int *)data, buf, len) < 0 ? -1 : 0;
}

struct abort_after {
	size_t left;
	size_t calls;
};

static int abort_write(const void *buf, size_t len, void *data)
{
	struct abort_after *a = data;

	a->calls++;
	if (len > a->left)
		return -1;
	a->left -= len;
	return 0;
}

/* Names (with type letter) of the entries of the tar at path. */
static void list_tar(const char *path, struct strbuf *out)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;

	archive_read_support_format_tar(a);
	assert_int_equal(archive_read_open_filename(a, path, 10240),
			 ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		mode_t t = archive_entry_filetype(e);

		strbuf_addf(out, "%s %c\n", archive_entry_pathname(e),
			    t == AE_IFDIR   ? 'd'
			    : t == AE_IFLNK ? 'l'
					    : 'f');
		assert_int_equal(archive_entry_uid(e), 0);
	}
	archive_read_free(a);
}

static void make_tree(const char *top)
{
	struct strbuf p = STRBUF_INIT;
	struct strbuf big = STRBUF_INIT;
	struct timeval tv[2] = { { 1500000000, 0 }, { 1500000000, 0 } };
	int i;

	for (i = 0; i < 20000; i++)
		strbuf_addf(&big, "%08d\n", i); /* 180000 bytes */
	strbuf_addf(&p, "%s/proj", top);
	assert_int_equal(mkdir(p.buf, 0750), 0);
	strbuf_addstr(&p, "/sub");
	assert_int_equal(mkdir(p.buf, 0755), 0);
	strbuf_addstr(&p, "/b.txt");
	mkfile(p.buf, "bee\n", 0640);
	assert_int_equal(utimes(p.buf, tv), 0);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/proj/a-b.txt", top);
	mkfile(p.buf, "dash\n", 0644);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/proj/big.bin", top);
	mkfile(p.buf, big.buf, 0755);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/proj/link", top);
	assert_int_equal(symlink("sub/b.txt", p.buf), 0);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/proj/fifo", top);
	assert_int_equal(mkfifo(p.buf, 0644), 0);
	strbuf_release(&p);
	strbuf_release(&big);
}

static void test_write_path_roundtrip(void **state)
{
	struct scratch *s = *state;
	struct strbuf p = STRBUF_INIT, names = STRBUF_INIT;
	struct strbuf err = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT;
	struct tar_stats st;
	char *dst;
	int fd;

	make_tree(s->root.buf);
	fd = open(s->tarpath.buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(
		tar_write_path(s->root.buf, "proj", fd_write, &fd, &err), 0);
	close(fd);
	list_tar(s->tarpath.buf, &names);
	assert_string_equal(names.buf, "proj/ d\n"
				       "proj/a-b.txt f\n"
				       "proj/big.bin f\n"
				       "proj/link l\n"
				       "proj/sub/ d\n"
				       "proj/sub/b.txt f\n");

	/* extract into a fresh root and compare the trees */
	strbuf_addf(&p, "%s/dst", s->top);
	assert_int_equal(mkdir(p.buf, 0755), 0);
	dst = strbuf_detach(&p, NULL);
	fd = open_tar(s);
	assert_int_equal(tar_extract_safe(fd, dst, NULL, 0, &st, &err), 0);
	close(fd);
	assert_int_equal(st.files, 4);
	assert_int_equal(st.bytes, 180000 + 4 + 5);
	strbuf_addf(&p, "%s/proj/fifo", s->root.buf);
	unlink(p.buf);
	snapshot_dir(s->root.buf, "proj", &a);
	snapshot_dir(dst, "proj", &b);
	assert_string_equal(a.buf, b.buf);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/proj/sub/b.txt", dst);
	{
		struct stat sb;

		assert_int_equal(stat(p.buf, &sb), 0);
		assert_int_equal(sb.st_mtime, 1500000000);
	}

	/* the whole root: no "./" prefix */
	strbuf_reset(&names);
	fd = open(s->tarpath.buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(tar_write_path(s->root.buf, ".", fd_write, &fd, &err),
			 0);
	close(fd);
	list_tar(s->tarpath.buf, &names);
	assert_true(starts_with(names.buf, "keep.txt f\nproj/ d\n"));

	/* one file, one symlink */
	strbuf_reset(&names);
	fd = open(s->tarpath.buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(
		tar_write_path(s->root.buf, "proj/./link", fd_write, &fd, &err),
		0);
	close(fd);
	list_tar(s->tarpath.buf, &names);
	assert_string_equal(names.buf, "proj/link l\n");
	assert_string_equal(err.buf, "");

	free(dst);
	strbuf_release(&p);
	strbuf_release(&names);
	strbuf_release(&err);
	strbuf_release(&a);
	strbuf_release(&b);
}

/* Names that ustar cannot hold: long ones, and bytes beyond ASCII. */
static void test_write_path_odd_names(void **state)
{
	struct scratch *s = *state;
	struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	struct tar_stats st;
	int fd, i;

	strbuf_addf(&p, "%s/caf\xc3\xa9-\xff.txt", s->root.buf);
	mkfile(p.buf, "latin\n", 0644);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/", s->root.buf);
	for (i = 0; i < 5; i++) {
		strbuf_addstr(&p, "a-rather-long-directory-name-for-ustar/");
		assert_int_equal(mkdir(p.buf, 0755), 0);
	}
	strbuf_addstr(&p, "and-a-file-name-that-alone-is-longer-than-one-"
			  "hundred-bytes-which-ustar-cannot-store-in-its-name");
	mkfile(p.buf, "deep\n", 0644);
	strbuf_addstr(&p, "-link");
	assert_int_equal(symlink("../../../../../keep.txt", p.buf), 0);

	fd = open(s->tarpath.buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(tar_write_path(s->root.buf, "", fd_write, &fd, &err),
			 0);
	close(fd);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/dst", s->top);
	assert_int_equal(mkdir(p.buf, 0755), 0);
	fd = open_tar(s);
	assert_int_equal(tar_extract_safe(fd, p.buf, NULL, 0, &st, &err), 0);
	close(fd);
	assert_string_equal(err.buf, "");
	assert_int_equal(st.files, 4);
	snapshot_dir(s->root.buf, "", &a);
	snapshot_dir(p.buf, "", &b);
	assert_string_equal(a.buf, b.buf);
	strbuf_release(&p);
	strbuf_release(&err);
	strbuf_release(&a);
	strbuf_release(&b);
}

static void test_write_path_errors(void **state)
{
	struct scratch *s = *state;
	struct strbuf err = STRBUF_INIT, p = STRBUF_INIT;
	struct abort_after ab = { 30000, 0 };
	int fd = -1;

	make_tree(s->root.buf);
	assert_int_equal(
		tar_write_path(s->root.buf, "../outside", fd_write, &fd, &err),
		-1);
	assert_true(strstr(err.buf, "path leaves the workdir") != NULL);
	strbuf_reset(&err);
	assert_int_equal(
		tar_write_path(s->root.buf, "nope", fd_write, &fd, &err), -1);
	assert_true(strstr(err.buf, "'nope'") != NULL);
	/* through a symlink leaving root */
	strbuf_addf(&p, "%s/out", s->root.buf);
	assert_int_equal(symlink(s->outside.buf, p.buf), 0);
	strbuf_reset(&err);
	assert_int_equal(
		tar_write_path(s->root.buf, "out/secret", fd_write, &fd, &err),
		-1);
	assert_true(strstr(err.buf, "leaves the workdir") != NULL);
	/* the client goes away half-way through the big file */
	strbuf_reset(&err);
	assert_int_equal(
		tar_write_path(s->root.buf, "proj", abort_write, &ab, &err),
		-1);
	assert_string_equal(err.buf, "write aborted");
	strbuf_release(&err);
	strbuf_release(&p);
}

/* ------------------------------------------------------------------ */

static void build_seed(const struct tar_file *f, size_t nr, struct strbuf *out)
{
	struct strbuf err = STRBUF_INIT;

	assert_int_equal(tar_build_seed(f, nr, NULL, out, &err), 0);
	assert_string_equal(err.buf, "");
	strbuf_release(&err);
}

static void test_seed(void **state)
{
	struct scratch *s = *state;
	struct tar_file files[] = {
		{ "z", "zed", 3 },
		{ "b.txt", "bee\n", 4 },
		{ "a/c.txt", "sea\n", 4 },
		{ "a/b/d.txt", "dee\n", 4 },
		{ "a.txt", "", 0 },
		{ "go/cmd/main.go", "package main\n", 13 },
		{ "long/name/a-file-name-that-is-far-too-long-for-the-one-"
		  "hundred-bytes-of-a-ustar-name-field-so-pax-is-needed.txt",
		  "long\n", 5 },
	};
	struct tar_file rev[ARRAY_SIZE(files)];
	static const char *want[][3] = {
		{ "a.txt", "f" },
		{ "a/", "d" },
		{ "a/b/", "d" },
		{ "a/b/d.txt", "f" },
		{ "a/c.txt", "f" },
		{ "b.txt", "f" },
		{ "go/", "d" },
		{ "go/cmd/", "d" },
		{ "go/cmd/main.go", "f" },
		{ "long/", "d" },
		{ "long/name/", "d" },
		{ "long/name/a-file-name-that-is-far-too-long-for-the-one-"
		  "hundred-bytes-of-a-ustar-name-field-so-pax-is-needed.txt",
		  "f" },
		{ "z", "f" },
	};
	struct strbuf one = STRBUF_INIT, two = STRBUF_INIT;
	struct archive *a;
	struct archive_entry *e;
	size_t i, n = 0;

	build_seed(files, ARRAY_SIZE(files), &one);
	for (i = 0; i < ARRAY_SIZE(files); i++)
		rev[i] = files[ARRAY_SIZE(files) - 1 - i];
	build_seed(rev, ARRAY_SIZE(rev), &two);
	assert_int_equal(one.len, two.len);
	assert_memory_equal(one.buf, two.buf, one.len);
	assert_int_equal(one.len % 512, 0);

	a = archive_read_new();
	archive_read_support_format_tar(a);
	assert_int_equal(archive_read_open_memory(a, one.buf, one.len),
			 ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		int dir = want[n][1][0] == 'd';

		assert_true(n < ARRAY_SIZE(want));
		assert_string_equal(archive_entry_pathname(e), want[n][0]);
		assert_int_equal(archive_entry_filetype(e),
				 dir ? AE_IFDIR : AE_IFREG);
		assert_int_equal(archive_entry_perm(e), dir ? 0755 : 0644);
		assert_int_equal(archive_entry_mtime(e), 0);
		assert_int_equal(archive_entry_uid(e), 0);
		assert_int_equal(archive_entry_gid(e), 0);
		assert_true(!archive_entry_uname(e) ||
			    !*archive_entry_uname(e));
		assert_true(!archive_entry_gname(e) ||
			    !*archive_entry_gname(e));
		if (!strcmp(want[n][0], "go/cmd/main.go")) {
			char buf[64];
			la_ssize_t r = archive_read_data(a, buf, sizeof(buf));

			assert_int_equal(r, 13);
			assert_memory_equal(buf, "package main\n", 13);
		}
		n++;
	}
	assert_int_equal(n, ARRAY_SIZE(want));
	archive_read_free(a);

	/* and it extracts */
	{
		int fd = open(s->tarpath.buf, O_WRONLY | O_CREAT | O_TRUNC,
			      0644);

		assert_int_equal(write_in_full(fd, one.buf, one.len),
				 (ssize_t)one.len);
		close(fd);
		assert_int_equal(extract(s, NULL, NULL, NULL), 0);
		assert_file(s->root.buf, "go/cmd/main.go", "package main\n");
	}
	strbuf_release(&one);
	strbuf_release(&two);
}

static void test_seed_invalid(void **state)
{
	static const char *bad[][2] = {
		{ "", "invalid path '': empty path" },
		{ "/etc/passwd", "invalid path '/etc/passwd': absolute path" },
		{ "a//b", "invalid path 'a//b': empty segment" },
		{ "a/", "invalid path 'a/': empty segment" },
		{ "./a", "invalid path './a': '.' segment" },
		{ "a/../b", "invalid path 'a/../b': '..' segment" },
		{ "..", "invalid path '..': '..' segment" },
	};
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct tar_file f[2] = { { "ok.txt", "x", 1 }, { NULL, "y", 1 } };
	struct tar_file dup[2] = { { "a/b", "x", 1 }, { "a/b", "y", 1 } };
	struct tar_file both[2] = { { "a", "x", 1 }, { "a/b", "y", 1 } };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		f[1].path = bad[i][0];
		strbuf_reset(&err);
		assert_int_equal(tar_build_seed(f, 2, NULL, &out, &err), -1);
		assert_string_equal(err.buf, bad[i][1]);
		assert_int_equal(out.len, 0);
	}
	strbuf_reset(&err);
	assert_int_equal(tar_build_seed(dup, 2, NULL, &out, &err), -1);
	assert_string_equal(err.buf, "invalid path 'a/b': given twice");
	strbuf_reset(&err);
	assert_int_equal(tar_build_seed(both, 2, NULL, &out, &err), -1);
	assert_string_equal(err.buf, "invalid path 'a/b': 'a' is also a file");
	assert_int_equal(out.len, 0);
	strbuf_release(&out);
	strbuf_release(&err);
}

/* Write tar bytes to S/in.tar. */
static void save_tar(struct scratch *s, const struct strbuf *tar)
{
	int fd = open(s->tarpath.buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write_in_full(fd, tar->buf, tar->len),
			 (ssize_t)tar->len);
	close(fd);
}

/*
 * UTF-8 names and names that are not UTF-8 at all, in this process's
 * C locale (it never calls setlocale): stored and extracted unchanged,
 * and the caller's locale is left as it was.
 */
static void test_seed_names(void **state)
{
	struct scratch *s = *state;
	struct tar_file files[] = {
		{ "\xc3\xa9.txt", "e\n", 2 },		       /* é.txt */
		{ "\xe6\x95\xb0\xe6\x8d\xae/x.go", "x\n", 2 }, /* 数据/x.go */
		{ "raw/\xff\xfe.bin", "r\n", 2 },
	};
	static const struct tent utf8[] = {
		{ "\xc3\xa9/", 'd', NULL, 0, 0 },
		{ "\xc3\xa9/\xe6\x95\xb0.txt", 'f', "u\n", 0, 0 },
	};
	struct strbuf tar = STRBUF_INIT, err = STRBUF_INIT;
	locale_t before = uselocale((locale_t)0), utf8_locale;
	size_t binary = 0;

	assert_int_equal(
		tar_build_seed(files, ARRAY_SIZE(files), NULL, &tar, &err), 0);
	assert_string_equal(err.buf, "");
	assert_true(uselocale((locale_t)0) == before);
	/* UTF-8 names are pax path records; only the raw name is BINARY */
	assert_non_null(memmem(tar.buf, tar.len, " path=\xc3\xa9.txt\n",
			       strlen(" path=\xc3\xa9.txt\n")));
	for (const char *p = tar.buf;
	     (p = memmem(p, tar.buf + tar.len - p, "hdrcharset=BINARY", 17));
	     p++)
		binary++;
	assert_int_equal(binary, 1);
	save_tar(s, &tar);
	assert_int_equal(extract(s, NULL, NULL, &err), 0);
	assert_string_equal(err.buf, "");
	assert_true(uselocale((locale_t)0) == before);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		assert_file(s->root.buf, files[i].path, files[i].data);

	/* a pax tar with UTF-8 path records from elsewhere (GNU tar's kind) */
	utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	if (!utf8_locale) {
		print_message("skipping the foreign tar: no C.UTF-8 locale\n");
	} else {
		uselocale(utf8_locale);
		build_tar(s->tarpath.buf, ARCHIVE_FILTER_NONE, utf8,
			  ARRAY_SIZE(utf8));
		uselocale(before);
		freelocale(utf8_locale);
		assert_int_equal(extract(s, NULL, NULL, &err), 0);
		assert_string_equal(err.buf, "");
		assert_file(s->root.buf, "\xc3\xa9/\xe6\x95\xb0.txt", "u\n");
	}
	strbuf_release(&tar);
	strbuf_release(&err);
}

static time_t mtime_of(const char *dir, const char *rel)
{
	struct strbuf p = STRBUF_INIT;
	struct stat st;

	strbuf_addf(&p, "%s/%s", dir, rel);
	assert_int_equal(lstat(p.buf, &st), 0);
	strbuf_release(&p);
	return st.st_mtime;
}

/*
 * The seed tar's mtime is the one given (0 without one), restored on
 * extraction; TAR_EXTRACT_TOUCH gives the time of the extraction.
 */
static void test_seed_mtime(void **state)
{
	struct scratch *s = *state;
	struct tar_file files[] = { { "d/a.txt", "a", 1 } };
	struct timespec when = { 1700000000, 5 };
	struct strbuf tar = STRBUF_INIT, err = STRBUF_INIT;
	int fd;
	time_t t0;

	assert_int_equal(tar_build_seed(files, 1, &when, &tar, &err), 0);
	save_tar(s, &tar);
	assert_int_equal(extract(s, NULL, NULL, &err), 0);
	assert_int_equal(mtime_of(s->root.buf, "d/a.txt"), 1700000000);
	assert_int_equal(mtime_of(s->root.buf, "d"), 1700000000);

	strbuf_reset(&tar);
	assert_int_equal(tar_build_seed(files, 1, NULL, &tar, &err), 0);
	save_tar(s, &tar);
	assert_int_equal(extract(s, NULL, NULL, &err), 0);
	assert_int_equal(mtime_of(s->root.buf, "d/a.txt"), 0);

	t0 = time(NULL);
	fd = open_tar(s);
	assert_int_equal(tar_extract_safe(fd, s->root.buf, NULL,
					  TAR_EXTRACT_TOUCH, NULL, &err),
			 0);
	close(fd);
	assert_string_equal(err.buf, "");
	assert_true(mtime_of(s->root.buf, "d/a.txt") >= t0);
	assert_true(mtime_of(s->root.buf, "d/a.txt") <= time(NULL));
	strbuf_release(&tar);
	strbuf_release(&err);
}

/* ------------------------------------------------------------------ */

static void test_write_local(void **state)
{
	struct scratch *s = *state;
	struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT, p = STRBUF_INIT;
	struct strbuf err = STRBUF_INIT, names = STRBUF_INIT;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	struct tar_stats st;
	const char *paths[2];
	int fd;

	strbuf_addf(&src, "%s/src", s->top);
	strbuf_addf(&dst, "%s/dst", s->top);
	assert_int_equal(mkdir(src.buf, 0755), 0);
	assert_int_equal(mkdir(dst.buf, 0755), 0);
	make_tree(src.buf);
	strbuf_addf(&p, "%s/single.txt", src.buf);
	mkfile(p.buf, "single\n", 0600);

	strbuf_reset(&p);
	strbuf_addf(&p, "%s/proj/", src.buf); /* trailing slash */
	paths[0] = p.buf;
	paths[1] = NULL;
	{
		struct strbuf q = STRBUF_INIT;

		strbuf_addf(&q, "%s/single.txt", src.buf);
		paths[1] = q.buf;
		fd = open(s->tarpath.buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		assert_int_equal(tar_write_local(paths, 2, fd_write, &fd, &err),
				 0);
		close(fd);
		strbuf_release(&q);
	}
	list_tar(s->tarpath.buf, &names);
	assert_string_equal(names.buf, "proj/ d\n"
				       "proj/a-b.txt f\n"
				       "proj/big.bin f\n"
				       "proj/link l\n"
				       "proj/sub/ d\n"
				       "proj/sub/b.txt f\n"
				       "single.txt f\n");
	fd = open_tar(s);
	assert_int_equal(tar_extract_safe(fd, dst.buf, NULL, 0, &st, &err), 0);
	close(fd);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/proj/fifo", src.buf);
	unlink(p.buf);
	snapshot_dir(src.buf, "", &a);
	snapshot_dir(dst.buf, "", &b);
	assert_string_equal(a.buf, b.buf);
	assert_int_equal(mode_of(dst.buf, "proj") & 0777, 0750);
	assert_int_equal(mode_of(dst.buf, "single.txt") & 0777, 0600);

	/* a missing path */
	paths[0] = "/nonexistent/gosbx-u-tarball";
	fd = open(s->tarpath.buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	strbuf_reset(&err);
	assert_int_equal(tar_write_local(paths, 1, fd_write, &fd, &err), -1);
	close(fd);
	assert_true(strstr(err.buf, "/nonexistent") != NULL);

	strbuf_release(&src);
	strbuf_release(&dst);
	strbuf_release(&p);
	strbuf_release(&err);
	strbuf_release(&names);
	strbuf_release(&a);
	strbuf_release(&b);
}

/* push of local files whose names are UTF-8, or not UTF-8 at all */
static void test_write_local_names(void **state)
{
	struct scratch *s = *state;
	struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT, p = STRBUF_INIT;
	struct strbuf err = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT;
	const char *paths[1];
	int fd;

	strbuf_addf(&src, "%s/src", s->top);
	strbuf_addf(&dst, "%s/dst", s->top);
	assert_int_equal(mkdir(src.buf, 0755), 0);
	assert_int_equal(mkdir(dst.buf, 0755), 0);
	strbuf_addf(&p, "%s/\xe6\x95\xb0\xe6\x8d\xae", src.buf);
	assert_int_equal(mkdir(p.buf, 0755), 0);
	strbuf_addstr(&p, "/\xc3\xa9.txt");
	mkfile(p.buf, "e\n", 0644);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/\xe6\x95\xb0\xe6\x8d\xae/\xff.bin", src.buf);
	mkfile(p.buf, "raw\n", 0644);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/\xe6\x95\xb0\xe6\x8d\xae", src.buf);
	paths[0] = p.buf;
	fd = open(s->tarpath.buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(tar_write_local(paths, 1, fd_write, &fd, &err), 0);
	close(fd);
	assert_string_equal(err.buf, "");
	fd = open_tar(s);
	assert_int_equal(tar_extract_safe(fd, dst.buf, NULL, 0, NULL, &err), 0);
	close(fd);
	assert_string_equal(err.buf, "");
	snapshot_dir(src.buf, "", &a);
	snapshot_dir(dst.buf, "", &b);
	assert_string_equal(a.buf, b.buf);
	assert_file(dst.buf, "\xe6\x95\xb0\xe6\x8d\xae/\xc3\xa9.txt", "e\n");
	assert_file(dst.buf, "\xe6\x95\xb0\xe6\x8d\xae/\xff.bin", "raw\n");
	strbuf_release(&src);
	strbuf_release(&dst);
	strbuf_release(&p);
	strbuf_release(&err);
	strbuf_release(&a);
	strbuf_release(&b);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_refuse_dotdot),
		T(test_refuse_absolute),
		T(test_refuse_symlinks),
		T(test_refuse_link_to_parent),
		T(test_refuse_hardlinks),
		T(test_refuse_special),
		T(test_refuse_existing_link),
		T(test_refuse_dir_replaced),
		T(test_dir_replaces_link),
		T(test_gzip),
		T(test_zstd),
		T(test_xz),
		T(test_bzip2),
		T(test_overwrite),
		T(test_corrupt),
		T(test_subdir),
		T(test_empty_archive),
		T(test_write_path_roundtrip),
		T(test_write_path_odd_names),
		T(test_write_path_errors),
		T(test_seed),
		T(test_seed_invalid),
		T(test_seed_names),
		T(test_seed_mtime),
		T(test_write_local_names),
		T(test_write_local),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
