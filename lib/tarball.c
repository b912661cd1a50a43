#include "compat.h"
#include "exec.h"
#include "tarball.h"
#include "dl/dl.h"
#include "strvec.h"
#include "usage.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <search.h>
#include <sys/stat.h>

#define TAR_BLOCK (64 * 1024)

/*
 * Report one line into err (or through error() when err is NULL).
 * Always returns -1.
 */
static int PRINTF_LIKE(2, 3) fail(struct strbuf *err, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	if (err)
		strbuf_addbuf(err, &msg);
	else
		error("%s", msg.buf);
	strbuf_release(&msg);
	return -1;
}

/*
 * libarchive is loaded on first use (lib/dl/dl.h): when it cannot be, say
 * why into err rather than letting its constructors fail as if out of
 * memory. Returns 0 or -1.
 */
static int need_libarchive(struct strbuf *err)
{
	const char *why = dl_archive_error();

	return why ? fail(err, "%s", why) : 0;
}

/*
 * File names are bytes, UTF-8 for everything gosbx writes, whatever the
 * caller's locale. libarchive, though, converts names between the
 * locale's charset and the UTF-8 of pax headers, and a process is in the
 * C locale (ASCII) until it calls setlocale(): any name that is not
 * ASCII then failed with "Can't translate pathname". So each public
 * function below runs its libarchive calls with the thread's LC_CTYPE
 * set to a UTF-8 locale (uselocale(3): the thread only, nothing global),
 * and names that are valid UTF-8 travel as pax "path" records; other
 * bytes are stored raw with hdrcharset=BINARY (libarchive's ARCHIVE_WARN,
 * which is accepted), and read back as the same bytes.
 */
static locale_t utf8_ctype;
static pthread_once_t utf8_ctype_once = PTHREAD_ONCE_INIT;

static void utf8_ctype_init(void)
{
	/* C.UTF-8 is built into glibc 2.35 and later; else try others */
	static const char *const names[] = { "C.UTF-8", "C.utf8",
					     "en_US.UTF-8" };

	for (size_t i = 0; i < ARRAY_SIZE(names) && !utf8_ctype; i++)
		utf8_ctype = newlocale(LC_CTYPE_MASK, names[i], (locale_t)0);
}

/* Enter the UTF-8 LC_CTYPE; returns what names_leave() restores. */
static locale_t names_enter(void)
{
	pthread_once(&utf8_ctype_once, utf8_ctype_init);
	return utf8_ctype ? uselocale(utf8_ctype) : (locale_t)0;
}

static void names_leave(locale_t old)
{
	if (old)
		uselocale(old);
}

/*
 * Split a relative path into its components, dropping empty and "."
 * ones. Returns 0, 1 if the path is absolute, 2 if a component is "..".
 */
static int split_path(const char *path, struct strvec *out)
{
	const char *p = path;

	if (*p == '/')
		return 1;
	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t len = end - p;

		if (len == 2 && p[0] == '.' && p[1] == '.')
			return 2;
		if (len && !(len == 1 && p[0] == '.')) {
			char *c = xstrndup(p, len);

			strvec_push(out, c);
			free(c);
		}
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* Append component c to the '/' separated relative path sb. */
static void path_push(struct strbuf *sb, const char *c)
{
	if (sb->len)
		strbuf_addch(sb, '/');
	strbuf_addstr(sb, c);
}

/* Drop the last component of sb; returns -1 if sb is already empty. */
static int path_pop(struct strbuf *sb)
{
	char *slash;

	if (!sb->len)
		return -1;
	slash = strrchr(sb->buf, '/');
	strbuf_setlen(sb, slash ? (size_t)(slash - sb->buf) : 0);
	return 0;
}

/* -------------------------------------------------------------------- */
/* Safe extraction                                                       */

/* What a path will be once the entries seen so far are extracted. */
enum node_type { NODE_NONE = 0, NODE_DIR, NODE_FILE, NODE_LINK, NODE_OTHER };

struct node {
	char *path; /* physical path relative to root */
	enum node_type type;
	/*
	 * A directory the archive creates where the disk has something
	 * else (a symlink, a file): nothing on disk is below it.
	 */
	int fresh;
};

/* The plan for one archive entry, made in the first pass. */
struct plan {
	char *orig; /* the entry's name in the archive */
	char *path; /* absolute destination; NULL: skip entry */
	char *link; /* absolute hard link target or NULL */
};

/* A symlink whose target is checked once all entries are known. */
struct pending_link {
	char *name; /* entry name, for messages */
	char *dir;  /* physical directory of the link, rel. root */
	char *target;
};

struct extract {
	const char *root;
	size_t root_len;
	struct strbuf tgt; /* physical target dir, relative to root */
	void *tree;	   /* tsearch tree of struct node */
	struct plan *plan;
	size_t plan_nr, plan_alloc;
	struct pending_link *links;
	size_t links_nr, links_alloc;
	struct strbuf *err;
};

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct node *)a)->path,
		      ((const struct node *)b)->path);
}

static void node_free(void *p)
{
	struct node *n = p;

	free(n->path);
	free(n);
}

static struct node *map_find(struct extract *x, const char *path)
{
	struct node key = { (char *)path, NODE_NONE, 0 };
	struct node **found = tfind(&key, &x->tree, node_cmp);

	return found ? *found : NULL;
}

static enum node_type map_get(struct extract *x, const char *path)
{
	struct node *n = map_find(x, path);

	return n ? n->type : NODE_NONE;
}

/*
 * Record what path will be after extraction (fresh: see struct node).
 * Returns 0, or -1 when out of memory.
 */
static int map_set(struct extract *x, const char *path, enum node_type t,
		   int fresh)
{
	struct node *n = xcalloc(1, sizeof(*n));
	struct node **slot;

	n->path = xstrdup(path);
	n->type = t;
	n->fresh = fresh;
	slot = tsearch(n, &x->tree, node_cmp);
	if (!slot) {
		node_free(n);
		return -1;
	}
	if (*slot != n) {
		(*slot)->fresh = t == NODE_DIR && ((*slot)->fresh || fresh);
		(*slot)->type = t;
		node_free(n);
	}
	return 0;
}

/* root + "/" + rel (or root alone when rel is empty) into sb. */
static void abs_path(struct extract *x, const char *rel, struct strbuf *sb)
{
	strbuf_reset(sb);
	strbuf_addstr(sb, x->root);
	if (*rel) {
		if (x->root_len && x->root[x->root_len - 1] != '/')
			strbuf_addch(sb, '/');
		strbuf_addstr(sb, rel);
	}
}

/*
 * What is on disk at rel (not following a final symlink). NODE_NONE if
 * nothing is there; -1 on another lstat error (errno set).
 */
static int disk_type(struct extract *x, const char *rel)
{
	struct strbuf p = STRBUF_INIT;
	const char *slash;
	struct stat st;
	int ret;

	/* below a directory the archive puts in place of a non-directory */
	for (slash = strchr(rel, '/'); slash; slash = strchr(slash + 1, '/')) {
		struct node *n;

		strbuf_reset(&p);
		strbuf_add(&p, rel, slash - rel);
		n = map_find(x, p.buf);
		if (n && n->fresh) {
			strbuf_release(&p);
			return NODE_NONE;
		}
	}
	abs_path(x, rel, &p);
	if (lstat(p.buf, &st) < 0)
		ret = (errno == ENOENT || errno == ENOTDIR) ? NODE_NONE : -1;
	else if (S_ISDIR(st.st_mode))
		ret = NODE_DIR;
	else if (S_ISREG(st.st_mode))
		ret = NODE_FILE;
	else if (S_ISLNK(st.st_mode))
		ret = NODE_LINK;
	else
		ret = NODE_OTHER;
	strbuf_release(&p);
	return ret;
}

/* Type of rel after the entries planned so far: archive, then disk. */
static int final_type(struct extract *x, const char *rel)
{
	enum node_type t = map_get(x, rel);

	return t != NODE_NONE ? (int)t : disk_type(x, rel);
}

/* Is the absolute, real path inside (or equal to) root? */
static int inside_root(struct extract *x, const char *real)
{
	if (!strcmp(x->root, "/") || !strcmp(real, x->root))
		return 1;
	return starts_with(real, x->root) && real[x->root_len] == '/';
}

/*
 * An existing symlink at rel (relative to root) that we are about to go
 * through: replace rel by where it points, relative to root. Returns 0,
 * or -1 with *why set when it dangles or leaves root.
 */
static int follow_disk_link(struct extract *x, struct strbuf *rel,
			    const char **why)
{
	struct strbuf p = STRBUF_INIT;
	char *real;
	struct stat st;
	int ret = -1;

	abs_path(x, rel->buf, &p);
	real = realpath(p.buf, NULL);
	if (!real) {
		*why = "goes through a symlink that cannot be resolved";
		goto out;
	}
	if (!inside_root(x, real)) {
		*why = "goes through a symlink that leaves the workdir";
		goto out;
	}
	if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
		*why = "a parent is not a directory";
		goto out;
	}
	strbuf_reset(rel);
	if (strcmp(real, x->root)) {
		const char *r = real + x->root_len;

		while (*r == '/')
			r++;
		strbuf_addstr(rel, r);
	}
	/*
	 * The symlink led us somewhere the archive itself changes: be
	 * conservative and refuse unless every prefix stays a directory.
	 */
	ret = 0;
	if (rel->len) {
		struct strbuf pre = STRBUF_INIT;
		const char *s = rel->buf;

		while (!ret) {
			const char *end = strchrnul(s, '/');
			enum node_type t;

			strbuf_reset(&pre);
			strbuf_add(&pre, rel->buf, end - rel->buf);
			t = map_get(x, pre.buf);
			if (t != NODE_NONE && t != NODE_DIR) {
				*why = "goes through a path the archive "
				       "replaces";
				ret = -1;
			}
			if (!*end)
				break;
			s = end + 1;
		}
		strbuf_release(&pre);
	}
out:
	free(real);
	strbuf_release(&p);
	return ret;
}

/*
 * Walk the directory components comps[0..n) from the physical directory
 * start (relative to root), as extraction will: the result in out is the
 * physical directory, relative to root. Returns 0, or -1 with *why set.
 */
static int resolve_dir(struct extract *x, const char *start, const char **comps,
		       size_t n, struct strbuf *out, const char **why)
{
	size_t i;

	strbuf_reset(out);
	strbuf_addstr(out, start);
	for (i = 0; i < n; i++) {
		int t;

		path_push(out, comps[i]);
		t = map_get(x, out->buf);
		if (t == NODE_DIR)
			continue;
		if (t == NODE_LINK) {
			*why = "goes through a symlink in the archive";
			return -1;
		}
		if (t != NODE_NONE) {
			*why = "a parent is not a directory";
			return -1;
		}
		t = disk_type(x, out->buf);
		if (t == NODE_NONE || t == NODE_DIR)
			continue;
		if (t == NODE_LINK) {
			if (follow_disk_link(x, out, why) < 0)
				return -1;
			continue;
		}
		*why = t < 0 ? "cannot inspect a parent directory"
			     : "a parent is not a directory";
		return -1;
	}
	return 0;
}

static int refuse(struct extract *x, const char *name, const char *why)
{
	return fail(x->err, "refusing entry '%s': %s", name, why);
}

/* The size check that keeps libarchive away from chdir(). */
static int too_long(struct extract *x, const char *rel)
{
	return x->root_len + 1 + strlen(rel) >= PATH_MAX;
}

static void plan_add(struct extract *x, const char *orig, const char *rel,
		     const char *link_rel)
{
	struct plan *p;
	struct strbuf sb = STRBUF_INIT;

	ALLOC_GROW(x->plan, x->plan_nr + 1, x->plan_alloc);
	p = &x->plan[x->plan_nr++];
	p->orig = xstrdup(orig);
	p->path = NULL;
	p->link = NULL;
	if (rel) {
		abs_path(x, rel, &sb);
		p->path = xstrdup(sb.buf);
	}
	if (link_rel) {
		abs_path(x, link_rel, &sb);
		p->link = xstrdup(sb.buf);
	}
	strbuf_release(&sb);
}

static const char *type_refusal(mode_t type)
{
	switch (type) {
	case AE_IFCHR:
	case AE_IFBLK:
		return "device files are not allowed";
	case AE_IFIFO:
		return "fifos are not allowed";
	case AE_IFSOCK:
		return "sockets are not allowed";
	default:
		return "unsupported entry type";
	}
}

/*
 * Check a hard link entry's target; on success *rel_out is its physical
 * path relative to root. Returns 0 or -1 (reported).
 */
static int check_hardlink(struct extract *x, const char *name,
			  const char *target, struct strbuf *rel_out)
{
	struct strvec comps = STRVEC_INIT;
	struct strbuf msg = STRBUF_INIT;
	const char *why = NULL;
	int r, ret = -1;

	r = split_path(target, &comps);
	if (!*target)
		why = "empty hard link target";
	else if (r == 1)
		why = "hard link target is absolute";
	else if (r == 2)
		why = "hard link target leaves the target directory";
	else if (!comps.nr)
		why = "hard link target is not a regular file";
	if (why)
		goto out;
	if (resolve_dir(x, x->tgt.buf, comps.v, comps.nr - 1, rel_out, &why) <
	    0) {
		strbuf_addf(&msg, "hard link target %s", why);
		why = msg.buf;
		goto out;
	}
	path_push(rel_out, comps.v[comps.nr - 1]);
	r = final_type(x, rel_out->buf);
	if (r != NODE_FILE) {
		strbuf_addf(&msg,
			    "hard link target '%s' is not an earlier "
			    "entry or an existing regular file",
			    target);
		why = msg.buf;
		goto out;
	}
	ret = 0;
out:
	if (why)
		refuse(x, name, why);
	strbuf_release(&msg);
	strvec_clear(&comps);
	return ret;
}

/*
 * Walk a symlink target from the link's directory dir (relative to
 * root). Lexically it must stay inside root. With x set (once all
 * entries are known), lexical resolution is only trusted if no ".."
 * follows a component that is itself a symlink (in the archive or on
 * disk): such targets are refused too. Returns NULL or why it is not.
 */
static const char *walk_link_target(struct extract *x, const char *dir,
				    const char *target)
{
	struct strbuf cur = STRBUF_INIT;
	const char *p = target;
	const char *why = NULL;
	int through_link = 0;

	strbuf_addstr(&cur, dir);
	while (*p && !why) {
		const char *end = strchrnul(p, '/');
		size_t len = end - p;

		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (through_link)
				why = "symlink target uses '..' after "
				      "another symlink";
			else if (path_pop(&cur) < 0)
				why = "symlink target leaves the workdir";
		} else if (len && !(len == 1 && p[0] == '.')) {
			if (cur.len)
				strbuf_addch(&cur, '/');
			strbuf_add(&cur, p, len);
			if (x && *end && final_type(x, cur.buf) == NODE_LINK)
				through_link = 1;
		}
		p = *end ? end + 1 : end;
	}
	strbuf_release(&cur);
	return why;
}

/* Check and plan one entry of the first pass. Returns 0 or -1. */
static int check_entry(struct extract *x, struct archive_entry *e)
{
	const char *name = archive_entry_pathname(e);
	const char *hardlink = archive_entry_hardlink(e);
	mode_t type = archive_entry_filetype(e);
	struct strvec comps = STRVEC_INIT;
	struct strbuf rel = STRBUF_INIT, link_rel = STRBUF_INIT;
	const char *why = NULL;
	int now, old, r, ret = -1;

	if (!name)
		return fail(x->err, "refusing entry: name cannot be decoded");
	r = split_path(name, &comps);
	if (!*name)
		why = "empty name";
	else if (r == 1)
		why = "absolute path";
	else if (r == 2)
		why = "path leaves the target directory";
	else if (!hardlink && type != AE_IFREG && type != AE_IFDIR &&
		 type != AE_IFLNK)
		why = type_refusal(type);
	else if (!comps.nr && (hardlink || type != AE_IFDIR))
		why = "empty name";
	if (why)
		goto refused;
	if (!comps.nr) {
		/* "./": the target directory itself */
		plan_add(x, name, NULL, NULL);
		ret = 0;
		goto out;
	}

	if (resolve_dir(x, x->tgt.buf, comps.v, comps.nr - 1, &rel, &why) < 0)
		goto refused;
	path_push(&rel, comps.v[comps.nr - 1]);
	if (too_long(x, rel.buf)) {
		why = "path too long";
		goto refused;
	}
	old = final_type(x, rel.buf);
	if (old < 0) {
		why = "cannot inspect the existing file";
		goto refused;
	}
	if (old == NODE_DIR && (hardlink || type != AE_IFDIR)) {
		why = "a directory exists at this path";
		goto refused;
	}

	if (hardlink) {
		if (check_hardlink(x, name, hardlink, &link_rel) < 0)
			goto out;
		if (!strcmp(link_rel.buf, rel.buf)) {
			why = "hard link to itself";
			goto refused;
		}
		now = NODE_FILE;
	} else if (type == AE_IFLNK) {
		const char *target = archive_entry_symlink(e);
		struct pending_link *pl;

		strbuf_addbuf(&link_rel, &rel);
		path_pop(&link_rel);
		if (!target || !*target)
			why = "empty symlink target";
		else if (*target == '/')
			why = "symlink target is absolute";
		else
			why = walk_link_target(NULL, link_rel.buf, target);
		if (why)
			goto refused;
		ALLOC_GROW(x->links, x->links_nr + 1, x->links_alloc);
		pl = &x->links[x->links_nr++];
		pl->name = xstrdup(name);
		pl->target = xstrdup(target);
		pl->dir = strbuf_detach(&link_rel, NULL);
		now = NODE_LINK;
	} else {
		now = type == AE_IFDIR ? NODE_DIR : NODE_FILE;
	}
	if (map_set(x, rel.buf, now, now == NODE_DIR && old != NODE_DIR) < 0) {
		why = "out of memory";
		goto refused;
	}
	plan_add(x, name, rel.buf, hardlink ? link_rel.buf : NULL);
	ret = 0;
	goto out;

refused:
	refuse(x, name, why);
out:
	strbuf_release(&rel);
	strbuf_release(&link_rel);
	strvec_clear(&comps);
	return ret;
}

static int check_link_target(struct extract *x, struct pending_link *pl)
{
	const char *why = walk_link_target(x, pl->dir, pl->target);

	return why ? refuse(x, pl->name, why) : 0;
}

static struct archive *open_reader(int fd, struct strbuf *err)
{
	struct archive *a;

	if (need_libarchive(err) < 0)
		return NULL;
	if (lseek(fd, 0, SEEK_SET) < 0) {
		fail(err, "cannot rewind archive: %s", strerror(errno));
		return NULL;
	}
	a = archive_read_new();
	if (!a) {
		fail(err, "out of memory");
		return NULL;
	}
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_gnutar(a);
	archive_read_support_format_empty(a);
	if (archive_read_open_fd(a, fd, 10240) != ARCHIVE_OK) {
		fail(err, "invalid archive: %s", archive_error_string(a));
		archive_read_free(a);
		return NULL;
	}
	return a;
}

/* First pass: read and check every entry and its data. */
static int scan_archive(struct extract *x, int fd)
{
	struct archive *a = open_reader(fd, x->err);
	struct archive_entry *e;
	size_t i;
	int r, ret = -1;

	if (!a)
		return -1;
	for (;;) {
		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			fail(x->err, "invalid archive: %s",
			     archive_error_string(a));
			goto out;
		}
		if (check_entry(x, e) < 0)
			goto out;
		/* reading through the data proves it is all there */
		if (archive_read_data_skip(a) < ARCHIVE_WARN) {
			fail(x->err, "invalid archive: %s",
			     archive_error_string(a));
			goto out;
		}
	}
	for (i = 0; i < x->links_nr; i++)
		if (check_link_target(x, &x->links[i]) < 0)
			goto out;
	ret = 0;
out:
	archive_read_free(a);
	return ret;
}

static int copy_data(struct archive *in, struct archive *out, const char *name,
		     struct strbuf *err)
{
	const void *buf;
	size_t size;
	la_int64_t off;
	int r;

	for (;;) {
		r = archive_read_data_block(in, &buf, &size, &off);
		if (r == ARCHIVE_EOF)
			return 0;
		if (r < ARCHIVE_WARN)
			return fail(err, "invalid archive: %s",
				    archive_error_string(in));
		if (archive_write_data_block(out, buf, size, off) <
		    ARCHIVE_WARN)
			return fail(err, "cannot extract '%s': %s", name,
				    archive_error_string(out));
	}
}

/* Second pass: write every planned entry. */
static int extract_archive(struct extract *x, int fd, struct tar_stats *st,
			   unsigned flags)
{
	struct archive *a = open_reader(fd, x->err);
	struct archive *disk = NULL;
	struct archive_entry *e;
	size_t i = 0;
	int r, ret = -1;

	if (!a)
		return -1;
	exec_umask_hold();
	disk = archive_write_disk_new();
	exec_umask_release();
	if (!disk) {
		fail(x->err, "out of memory");
		goto out;
	}
	/*
	 * No ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS: the names given to
	 * libarchive are the absolute, checked destinations (no chdir).
	 */
	archive_write_disk_set_options(
		disk,
		ARCHIVE_EXTRACT_SECURE_SYMLINKS |
			ARCHIVE_EXTRACT_SECURE_NODOTDOT |
			/* holes stay holes; runs of zeros become holes */
			ARCHIVE_EXTRACT_SPARSE |
			(flags & TAR_EXTRACT_TOUCH ? 0 : ARCHIVE_EXTRACT_TIME) |
			ARCHIVE_EXTRACT_PERM);
	for (;; i++) {
		struct plan *p;
		const char *name;
		mode_t type;

		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			fail(x->err, "invalid archive: %s",
			     archive_error_string(a));
			goto out;
		}
		name = archive_entry_pathname(e);
		if (i >= x->plan_nr || !name || strcmp(name, x->plan[i].orig)) {
			fail(x->err, "archive changed while being extracted");
			goto out;
		}
		p = &x->plan[i];
		if (!p->path)
			continue;
		type = archive_entry_filetype(e);
		archive_entry_set_pathname(e, p->path);
		if (p->link)
			archive_entry_set_hardlink(e, p->link);
		archive_entry_set_perm(e, archive_entry_perm(e) & 0777);
		archive_entry_acl_clear(e);
		archive_entry_xattr_clear(e);
		archive_entry_set_fflags(e, 0, 0);
		exec_umask_hold();
		r = archive_write_header(disk, e);
		exec_umask_release();
		if (r < ARCHIVE_WARN) {
			fail(x->err, "cannot extract '%s': %s", p->orig,
			     archive_error_string(disk));
			goto out;
		}
		if (archive_entry_size(e) > 0 &&
		    copy_data(a, disk, p->orig, x->err) < 0)
			goto out;
		exec_umask_hold();
		r = archive_write_finish_entry(disk);
		exec_umask_release();
		if (r < ARCHIVE_WARN) {
			fail(x->err, "cannot extract '%s': %s", p->orig,
			     archive_error_string(disk));
			goto out;
		}
		if (p->link || type == AE_IFLNK) {
			st->files++;
		} else if (type == AE_IFREG) {
			st->files++;
			st->bytes += archive_entry_size(e);
		}
	}
	if (i != x->plan_nr) {
		fail(x->err, "archive changed while being extracted");
		goto out;
	}
	if (archive_write_close(disk) < ARCHIVE_WARN) {
		fail(x->err, "cannot extract: %s", archive_error_string(disk));
		goto out;
	}
	ret = 0;
out:
	if (disk)
		archive_write_free(disk);
	archive_read_free(a);
	return ret;
}

/* mkdir -p of the physical target (relative to root). */
static int make_target(struct extract *x)
{
	struct strbuf p = STRBUF_INIT;
	const char *s = x->tgt.buf;
	int ret = 0;

	while (*s && !ret) {
		const char *end = strchrnul(s, '/');

		abs_path(x, x->tgt.buf, &p);
		strbuf_setlen(&p, p.len - strlen(end));
		if (mkdir(p.buf, 0755) < 0 && errno != EEXIST)
			ret = fail(x->err, "cannot create directory '%.*s': %s",
				   (int)(end - x->tgt.buf), x->tgt.buf,
				   strerror(errno));
		s = *end ? end + 1 : end;
	}
	strbuf_release(&p);
	return ret;
}

static int extract_safe(int fd, const char *root, const char *subdir,
			unsigned flags, struct tar_stats *st,
			struct strbuf *err)
{
	struct extract x = { 0 };
	struct strvec comps = STRVEC_INIT;
	struct tar_stats dummy;
	const char *why = NULL;
	size_t i;
	int r, ret = -1;

	if (!st)
		st = &dummy;
	st->files = st->bytes = 0;
	x.root = root;
	x.root_len = strlen(root);
	x.err = err;
	strbuf_init(&x.tgt, 0);
	if (*root != '/')
		return fail(err, "workdir '%s' is not absolute", root);

	r = split_path(subdir ? subdir : "", &comps);
	if (r == 1)
		why = "absolute path";
	else if (r == 2)
		why = "path leaves the workdir";
	else if (resolve_dir(&x, "", comps.v, comps.nr, &x.tgt, &why) < 0)
		;
	else if (too_long(&x, x.tgt.buf))
		why = "path too long";
	if (why) {
		fail(err, "invalid directory '%s': %s", subdir, why);
		goto out;
	}

	if (scan_archive(&x, fd) < 0)
		goto out;
	if (make_target(&x) < 0)
		goto out;
	ret = extract_archive(&x, fd, st, flags);
out:
	for (i = 0; i < x.plan_nr; i++) {
		free(x.plan[i].orig);
		free(x.plan[i].path);
		free(x.plan[i].link);
	}
	free(x.plan);
	for (i = 0; i < x.links_nr; i++) {
		free(x.links[i].name);
		free(x.links[i].dir);
		free(x.links[i].target);
	}
	free(x.links);
	tdestroy(x.tree, node_free);
	strbuf_release(&x.tgt);
	strvec_clear(&comps);
	return ret;
}

int tar_extract_safe(int fd, const char *root, const char *subdir,
		     unsigned flags, struct tar_stats *st, struct strbuf *err)
{
	locale_t old = names_enter();
	int ret = extract_safe(fd, root, subdir, flags, st, err);

	names_leave(old);
	return ret;
}

/* -------------------------------------------------------------------- */
/* Writing tar streams                                                   */

struct tar_out {
	struct archive *a;
	tar_write_fn fn;
	void *data;
	int aborted;
	int warn_skipped; /* warn about skipped special files */
	struct strbuf *err;
	char *buf;		 /* TAR_BLOCK bytes */
	struct archive_entry *e; /* reused for every entry */
};

static la_ssize_t out_write(struct archive *a, void *cd, const void *buf,
			    size_t len)
{
	struct tar_out *o = cd;

	if (o->fn(buf, len, o->data) < 0) {
		o->aborted = 1;
		archive_set_error(a, EPIPE, "write aborted");
		return -1;
	}
	return len;
}

static int out_fail(struct tar_out *o, const char *what)
{
	if (o->aborted)
		return fail(o->err, "write aborted");
	return fail(o->err, "cannot write tar entry '%s': %s", what,
		    archive_error_string(o->a));
}

static int out_open(struct tar_out *o, tar_write_fn fn, void *data,
		    struct strbuf *err)
{
	memset(o, 0, sizeof(*o));
	o->fn = fn;
	o->data = data;
	o->err = err;
	if (need_libarchive(err) < 0)
		return -1;
	o->a = archive_write_new();
	o->e = archive_entry_new();
	if (!o->a || !o->e) {
		if (o->a)
			archive_write_free(o->a);
		archive_entry_free(o->e);
		return fail(err, "out of memory");
	}
	archive_write_set_format_pax_restricted(o->a);
	archive_write_add_filter_none(o->a);
	if (archive_write_open(o->a, o, NULL, out_write, NULL) != ARCHIVE_OK) {
		fail(err, "cannot start tar stream: %s",
		     archive_error_string(o->a));
		archive_write_free(o->a);
		archive_entry_free(o->e);
		return -1;
	}
	o->buf = xmalloc(TAR_BLOCK);
	return 0;
}

/* Finish the stream (ok: no error so far) and free everything. */
static int out_close(struct tar_out *o, int ok)
{
	int ret = ok ? 0 : -1;

	if (ok && archive_write_close(o->a) != ARCHIVE_OK)
		ret = o->aborted ? fail(o->err, "write aborted")
				 : fail(o->err, "cannot finish tar stream: %s",
					archive_error_string(o->a));
	archive_write_free(o->a);
	archive_entry_free(o->e);
	free(o->buf);
	return ret;
}

/* o->e, cleared and filled for name from st. */
static struct archive_entry *new_entry(struct tar_out *o, const char *name,
				       const struct stat *st, mode_t type)
{
	struct archive_entry *e = archive_entry_clear(o->e);

	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, st->st_mode & 0777);
	archive_entry_set_mtime(e, st->st_mtime, 0);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_size(e, 0);
	return e;
}

static int add_at(struct tar_out *o, int dirfd, const char *name,
		  struct strbuf *path);

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Add the children of the directory open at fd (taken over and closed)
 * with names prefix + child. prefix is restored before returning.
 */
static int add_children(struct tar_out *o, int fd, struct strbuf *prefix)
{
	struct strvec names = STRVEC_INIT;
	size_t len = prefix->len, i;
	struct dirent *d;
	DIR *dir = fdopendir(fd);
	int ret = 0;

	if (!dir) {
		close(fd);
		return fail(o->err, "cannot read directory '%s': %s",
			    prefix->len ? prefix->buf : ".", strerror(errno));
	}
	errno = 0;
	while ((d = readdir(dir))) {
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			strvec_push(&names, d->d_name);
		errno = 0;
	}
	if (errno) {
		ret = fail(o->err, "cannot read directory '%s': %s",
			   prefix->len ? prefix->buf : ".", strerror(errno));
		goto out;
	}
	qsort(names.v, names.nr, sizeof(*names.v), name_cmp);
	for (i = 0; i < names.nr && !ret; i++) {
		strbuf_setlen(prefix, len);
		strbuf_addstr(prefix, names.v[i]);
		ret = add_at(o, dirfd(dir), names.v[i], prefix);
	}
out:
	strbuf_setlen(prefix, len);
	strvec_clear(&names);
	closedir(dir);
	return ret;
}

/*
 * The data regions of a file with holes, found with SEEK_DATA and
 * SEEK_HOLE, as the entry's sparse map (pax GNU.sparse 1.0, which
 * libarchive writes and every tar reads): a 1 TiB file of holes is a
 * few blocks of tar, not 1 TiB of zeros. Returns the number of regions
 * (0: no hole, or the file system cannot say: write it whole), or -1
 * when it has more than TAR_SPARSE_MAX regions (written whole too: a
 * map that size is a burden to every reader).
 */
#define TAR_SPARSE_MAX 4096
struct sparse_region {
	off_t off, len;
};

static int sparse_regions(int fd, off_t size, struct sparse_region **out)
{
	struct sparse_region *r = NULL;
	size_t nr = 0, alloc = 0;
	off_t pos = 0, data, hole;

	*out = NULL;
	hole = lseek(fd, 0, SEEK_HOLE);
	if (hole < 0 || hole >= size)
		return 0;
	while (pos < size) {
		data = lseek(fd, pos, SEEK_DATA);
		if (data < 0 || data >= size)
			break; /* ENXIO: holes up to the end */
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || hole > size)
			hole = size;
		if (nr == TAR_SPARSE_MAX) {
			free(r);
			return -1;
		}
		ALLOC_GROW(r, nr + 1, alloc);
		r[nr].off = data;
		r[nr++].len = hole - data;
		pos = hole;
	}
	/* a last empty region at the end: the size of a file that ends in a
	 * hole */
	ALLOC_GROW(r, nr + 1, alloc);
	r[nr].off = size;
	r[nr++].len = 0;
	*out = r;
	return (int)nr;
}

/* Write len bytes of fd from off as entry data (archive_write_data). */
static int copy_region(struct tar_out *o, int fd, off_t off, off_t len,
		       const char *path)
{
	if (lseek(fd, off, SEEK_SET) < 0)
		return fail(o->err, "cannot read '%s': %s", path,
			    strerror(errno));
	while (len > 0) {
		size_t want = len < TAR_BLOCK ? (size_t)len : TAR_BLOCK;
		ssize_t n = xread(fd, o->buf, want);

		if (n < 0)
			return fail(o->err, "cannot read '%s': %s", path,
				    strerror(errno));
		if (!n)
			return 1; /* shrunk: finish_entry pads with zeros */
		if (archive_write_data(o->a, o->buf, n) < 0)
			return out_fail(o, path), -1;
		len -= n;
	}
	return 0;
}

/*
 * The data of a sparse entry: libarchive's pax writer takes the whole
 * file's bytes in order and keeps those of the data regions, so a hole
 * is passed as zeros that it skips (never reads); a static zero block
 * goes in for it, 1 MiB a call.
 */
static int write_sparse(struct tar_out *o, int fd,
			const struct sparse_region *r, int nr, const char *path)
{
	static const char zeros[1 << 20];
	off_t pos = 0;

	for (int i = 0; i < nr; i++) {
		int rc;

		while (pos < r[i].off) {
			off_t gap = r[i].off - pos;
			size_t k = gap < (off_t)sizeof(zeros) ? (size_t)gap
							      : sizeof(zeros);

			if (archive_write_data(o->a, zeros, k) < 0)
				return out_fail(o, path), -1;
			pos += (off_t)k;
		}
		rc = copy_region(o, fd, r[i].off, r[i].len, path);
		if (rc)
			return rc < 0 ? -1 : 0;
		pos = r[i].off + r[i].len;
	}
	return 0;
}

static int add_file(struct tar_out *o, int dirfd, const char *name,
		    const char *path)
{
	struct archive_entry *e;
	struct sparse_region *regions = NULL;
	int nr_regions;
	struct stat st;
	off_t left;
	int fd, ret = -1;

	fd = openat(dirfd, name,
		    O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return fail(o->err, "cannot open '%s': %s", path,
			    strerror(errno));
	if (fstat(fd, &st) < 0) {
		fail(o->err, "cannot stat '%s': %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = 0; /* replaced by something else meanwhile */
		goto out;
	}
	e = new_entry(o, path, &st, AE_IFREG);
	archive_entry_set_size(e, st.st_size);
	nr_regions = sparse_regions(fd, st.st_size, &regions);
	for (int i = 0; i < nr_regions; i++)
		archive_entry_sparse_add_entry(e, regions[i].off,
					       regions[i].len);
	if (archive_write_header(o->a, e) < ARCHIVE_WARN) {
		out_fail(o, path);
		goto out;
	}
	if (nr_regions > 0) {
		if (write_sparse(o, fd, regions, nr_regions, path) < 0)
			goto out;
		left = 0;
	} else if (lseek(fd, 0, SEEK_SET) < 0) {
		fail(o->err, "cannot read '%s': %s", path, strerror(errno));
		goto out;
	}
	for (left = nr_regions > 0 ? 0 : st.st_size; left > 0;) {
		size_t want = left < TAR_BLOCK ? (size_t)left : TAR_BLOCK;
		ssize_t n = xread(fd, o->buf, want);

		if (n < 0) {
			fail(o->err, "cannot read '%s': %s", path,
			     strerror(errno));
			goto out;
		}
		if (!n)
			break; /* shrunk: finish_entry pads with zeros */
		if (archive_write_data(o->a, o->buf, n) < 0) {
			out_fail(o, path);
			goto out;
		}
		left -= n;
	}
	if (archive_write_finish_entry(o->a) < ARCHIVE_WARN) {
		out_fail(o, path);
		goto out;
	}
	ret = 0;
out:
	free(regions);
	close(fd);
	return ret;
}

/* Add the object name in dirfd as path (and, for a directory, below). */
static int add_at(struct tar_out *o, int dirfd, const char *name,
		  struct strbuf *path)
{
	struct archive_entry *e;
	struct stat st;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return fail(o->err, "cannot stat '%s': %s", path->buf,
			    strerror(errno));
	if (S_ISREG(st.st_mode))
		return add_file(o, dirfd, name, path->buf);
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

		if (n < 0)
			return fail(o->err, "cannot read symlink '%s': %s",
				    path->buf, strerror(errno));
		target[n] = '\0';
		e = new_entry(o, path->buf, &st, AE_IFLNK);
		archive_entry_set_symlink(e, target);
		if (archive_write_header(o->a, e) < ARCHIVE_WARN)
			return out_fail(o, path->buf);
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (o->warn_skipped)
			warning("skipping '%s': not a regular file, "
				"directory or symlink",
				path->buf);
		return 0;
	}
	fd = openat(dirfd, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail(o->err, "cannot open directory '%s': %s", path->buf,
			    strerror(errno));
	e = new_entry(o, path->buf, &st, AE_IFDIR);
	if (archive_write_header(o->a, e) < ARCHIVE_WARN) {
		close(fd);
		return out_fail(o, path->buf);
	}
	strbuf_addch(path, '/');
	return add_children(o, fd, path);
}

static int write_path(const char *root, const char *relpath,
		      tar_write_fn write_fn, void *data, struct strbuf *err)
{
	struct strvec comps = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT, dir = STRBUF_INIT;
	struct tar_out o;
	char *real = NULL;
	size_t root_len = strlen(root), i;
	int r, fd = -1, ok = 0;

	r = split_path(relpath ? relpath : "", &comps);
	if (*root != '/')
		return fail(err, "workdir '%s' is not absolute", root);
	if (r) {
		fail(err, "invalid path '%s': %s", relpath,
		     r == 1 ? "absolute path" : "path leaves the workdir");
		goto out;
	}
	/* The parent directory, physically, must stay inside root. */
	strbuf_addstr(&dir, root);
	for (i = 0; i + 1 < comps.nr; i++) {
		strbuf_addch(&dir, '/');
		strbuf_addstr(&dir, comps.v[i]);
	}
	real = realpath(dir.buf, NULL);
	if (!real) {
		fail(err, "cannot access '%s': %s",
		     relpath && *relpath ? relpath : ".", strerror(errno));
		goto out;
	}
	while (root_len > 1 && root[root_len - 1] == '/')
		root_len--;
	if (strncmp(real, root, root_len) ||
	    (real[root_len] && real[root_len] != '/' && root_len > 1)) {
		fail(err,
		     "invalid path '%s': goes through a symlink that "
		     "leaves the workdir",
		     relpath);
		goto out;
	}
	fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fail(err, "cannot open '%s': %s", real, strerror(errno));
		goto out;
	}
	if (out_open(&o, write_fn, data, err) < 0)
		goto out;
	if (!comps.nr) {
		r = add_children(&o, fd, &path);
		fd = -1;
	} else {
		for (i = 0; i < comps.nr; i++) {
			if (i)
				strbuf_addch(&path, '/');
			strbuf_addstr(&path, comps.v[i]);
		}
		r = add_at(&o, fd, comps.v[comps.nr - 1], &path);
	}
	ok = out_close(&o, !r) == 0;
out:
	if (fd >= 0)
		close(fd);
	free(real);
	strbuf_release(&path);
	strbuf_release(&dir);
	strvec_clear(&comps);
	return ok ? 0 : -1;
}

int tar_write_path(const char *root, const char *relpath, tar_write_fn write_fn,
		   void *data, struct strbuf *err)
{
	locale_t old = names_enter();
	int ret = write_path(root, relpath, write_fn, data, err);

	names_leave(old);
	return ret;
}

static int write_local(const char *const *paths, size_t nr,
		       tar_write_fn write_fn, void *data, struct strbuf *err)
{
	struct tar_out o;
	struct strbuf dir = STRBUF_INIT, base = STRBUF_INIT;
	size_t i;
	int r = 0;

	if (out_open(&o, write_fn, data, err) < 0)
		return -1;
	o.warn_skipped = 1;
	for (i = 0; i < nr && !r; i++) {
		const char *p = paths[i], *slash;
		char *real = NULL;
		size_t len = strlen(p);
		int fd;

		while (len > 1 && p[len - 1] == '/')
			len--;
		strbuf_reset(&dir);
		strbuf_add(&dir, p, len);
		slash = strrchr(dir.buf, '/');
		strbuf_reset(&base);
		strbuf_addstr(&base, slash ? slash + 1 : dir.buf);
		if (!len || !strcmp(base.buf, ".") || !strcmp(base.buf, "..") ||
		    !strcmp(dir.buf, "/")) {
			real = realpath(len ? dir.buf : ".", NULL);
			if (!real) {
				r = fail(err, "cannot access '%s': %s", p,
					 strerror(errno));
				break;
			}
			if (!strcmp(real, "/")) {
				free(real);
				r = fail(err, "cannot archive '/'");
				break;
			}
			strbuf_reset(&dir);
			strbuf_addstr(&dir, real);
			free(real);
			slash = strrchr(dir.buf, '/');
			strbuf_reset(&base);
			strbuf_addstr(&base, slash + 1);
		}
		/* dir becomes the parent directory of base */
		if (!slash)
			strbuf_reset(&dir);
		else
			strbuf_setlen(&dir, slash - dir.buf);
		if (!dir.len)
			strbuf_addstr(&dir, slash ? "/" : ".");
		fd = open(dir.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			r = fail(err, "cannot open '%s': %s", dir.buf,
				 strerror(errno));
			break;
		}
		r = add_at(&o, fd, base.buf, &base);
		close(fd);
	}
	strbuf_release(&dir);
	strbuf_release(&base);
	return out_close(&o, !r);
}

int tar_write_local(const char *const *paths, size_t nr, tar_write_fn write_fn,
		    void *data, struct strbuf *err)
{
	locale_t old = names_enter();
	int ret = write_local(paths, nr, write_fn, data, err);

	names_leave(old);
	return ret;
}

/* -------------------------------------------------------------------- */
/* The seed's upload tar                                                 */

/* ---- tar_writer: entries from elsewhere ---- */

struct tar_writer {
	struct tar_out o;
	uint64_t left; /* bytes the current file still takes */
};

struct tar_writer *tar_writer_open(tar_write_fn write_fn, void *data,
				   struct strbuf *err)
{
	struct tar_writer *w = xcalloc(1, sizeof(*w));

	if (out_open(&w->o, write_fn, data, err) < 0) {
		free(w);
		return NULL;
	}
	return w;
}

static int writer_entry(struct tar_writer *w, const char *name, mode_t type,
			unsigned perm, int64_t mtime, uint64_t size)
{
	struct stat st = { 0 };
	struct archive_entry *e;

	if (archive_write_finish_entry(w->o.a) < ARCHIVE_WARN)
		return out_fail(&w->o, name);
	st.st_mode = perm & 0777;
	st.st_mtime = (time_t)mtime;
	e = new_entry(&w->o, name, &st, type);
	archive_entry_set_size(e, (la_int64_t)size);
	if (archive_write_header(w->o.a, e) < ARCHIVE_WARN)
		return out_fail(&w->o, name);
	w->left = size;
	return 0;
}

int tar_writer_dir(struct tar_writer *w, const char *name, unsigned perm,
		   int64_t mtime)
{
	return writer_entry(w, name, AE_IFDIR, perm, mtime, 0);
}

int tar_writer_file(struct tar_writer *w, const char *name, unsigned perm,
		    int64_t mtime, uint64_t size)
{
	return writer_entry(w, name, AE_IFREG, perm, mtime, size);
}

int tar_writer_data(struct tar_writer *w, const void *buf, size_t len)
{
	if (len > w->left)
		return fail(w->o.err, "more data than the entry's size");
	if (len && archive_write_data(w->o.a, buf, len) < 0)
		return out_fail(&w->o, "data");
	w->left -= len;
	return 0;
}

int tar_writer_close(struct tar_writer *w, int ok)
{
	int ret;

	if (!w)
		return -1;
	ret = out_close(&w->o, ok);
	free(w);
	return ret;
}

static int seed_path_check(const char *path, struct strbuf *err)
{
	const char *p = path, *why = NULL;

	if (!*path)
		why = "empty path";
	else if (*path == '/')
		why = "absolute path";
	while (!why) {
		const char *end = strchrnul(p, '/');
		size_t len = end - p;

		if (!len)
			why = "empty segment";
		else if (len == 1 && p[0] == '.')
			why = "'.' segment";
		else if (len == 2 && p[0] == '.' && p[1] == '.')
			why = "'..' segment";
		if (!*end)
			break;
		p = end + 1;
	}
	if (why)
		return fail(err, "invalid path '%s': %s", path, why);
	return 0;
}

static int file_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct tar_file *const *)a)->path,
		      (*(const struct tar_file *const *)b)->path);
}

static la_ssize_t sb_write(struct archive *a, void *cd, const void *buf,
			   size_t len)
{
	strbuf_add(cd, buf, len);
	return len;
}

/*
 * Write the header of one seed entry, using e (cleared first). A name
 * that is not valid UTF-8 is stored raw (ARCHIVE_WARN: see
 * names_enter()).
 */
static int seed_header(struct archive *a, struct archive_entry *e,
		       const char *name, mode_t type, mode_t perm, size_t size,
		       const struct timespec *mtime)
{
	archive_entry_clear(e);
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, perm);
	if (mtime)
		archive_entry_set_mtime(e, mtime->tv_sec, mtime->tv_nsec);
	else
		archive_entry_set_mtime(e, 0, 0);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_size(e, size);
	return archive_write_header(a, e) >= ARCHIVE_WARN ? 0 : -1;
}

static int build_seed(const struct tar_file *files, size_t nr,
		      const struct timespec *mtime, struct strbuf *out,
		      struct strbuf *err)
{
	const struct tar_file **sorted = NULL;
	struct strbuf tmp = STRBUF_INIT, dir = STRBUF_INIT;
	struct archive *a = NULL;
	struct archive_entry *e = NULL;
	const char *prev = NULL;
	size_t i;
	int ret = -1;

	for (i = 0; i < nr; i++)
		if (seed_path_check(files[i].path, err) < 0)
			return -1;
	sorted = xcalloc(nr ? nr : 1, sizeof(*sorted));
	for (i = 0; i < nr; i++)
		sorted[i] = &files[i];
	qsort(sorted, nr, sizeof(*sorted), file_cmp);
	for (i = 0; i < nr; i++) {
		const char *p = sorted[i]->path, *s;

		if (i && !strcmp(p, sorted[i - 1]->path)) {
			fail(err, "invalid path '%s': given twice", p);
			goto out;
		}
		for (s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
			struct tar_file key = { 0 };
			const struct tar_file *kp = &key;

			strbuf_reset(&dir);
			strbuf_add(&dir, p, s - p);
			key.path = dir.buf;
			if (bsearch(&kp, sorted, nr, sizeof(*sorted),
				    file_cmp)) {
				fail(err,
				     "invalid path '%s': '%s' is also a "
				     "file",
				     p, dir.buf);
				goto out;
			}
		}
	}

	if (need_libarchive(err) < 0)
		goto out;
	a = archive_write_new();
	e = archive_entry_new();
	if (!a || !e) {
		fail(err, "out of memory");
		goto out;
	}
	archive_write_set_format_pax_restricted(a);
	archive_write_add_filter_none(a);
	if (archive_write_open(a, &tmp, NULL, sb_write, NULL) != ARCHIVE_OK)
		goto lafail;
	for (i = 0; i < nr; i++) {
		const struct tar_file *f = sorted[i];
		const char *s;

		/* parents not already written for the previous file */
		for (s = strchr(f->path, '/'); s; s = strchr(s + 1, '/')) {
			size_t dl = s - f->path + 1;

			if (prev && !strncmp(prev, f->path, dl))
				continue;
			strbuf_reset(&dir);
			strbuf_add(&dir, f->path, dl);
			if (seed_header(a, e, dir.buf, AE_IFDIR, 0755, 0,
					mtime) < 0)
				goto lafail;
		}
		if (seed_header(a, e, f->path, AE_IFREG, 0644, f->len, mtime) <
		    0)
			goto lafail;
		if (f->len && archive_write_data(a, f->data, f->len) !=
				      (la_ssize_t)f->len)
			goto lafail;
		if (archive_write_finish_entry(a) != ARCHIVE_OK)
			goto lafail;
		prev = f->path;
	}
	if (archive_write_close(a) != ARCHIVE_OK)
		goto lafail;
	strbuf_addbuf(out, &tmp);
	ret = 0;
	goto out;
lafail:
	fail(err, "cannot build tar: %s", archive_error_string(a));
out:
	if (a)
		archive_write_free(a);
	archive_entry_free(e);
	free(sorted);
	strbuf_release(&tmp);
	strbuf_release(&dir);
	return ret;
}

int tar_build_seed(const struct tar_file *files, size_t nr,
		   const struct timespec *mtime, struct strbuf *out,
		   struct strbuf *err)
{
	locale_t old = names_enter();
	int ret = build_seed(files, nr, mtime, out, err);

	names_leave(old);
	return ret;
}
