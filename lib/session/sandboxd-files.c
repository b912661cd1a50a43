/*
 * The url backend's files on sandboxd (session/sandboxd.h): the REST
 * files API of agent-sandbox v1.0.3 (packages/sandboxd/spec/filesystem/
 * v1/filesystem.yaml), used as upstream's Go SDK does (clients/go/
 * sandbox files.go): GET /v1/files/<path> reads a file or lists a
 * directory (a DirectoryListing: name, size, type, modified_at, mode of
 * each entry), HEAD says which of the two a path is, PUT writes one
 * file atomically with its parents and ?mode=0NNN.
 *
 * The API has no archive: a push walks the local tree and PUTs each
 * file, streamed from its descriptor; a fetch lists the remote tree
 * and builds the tar here (tar_writer, lib/tarball.h) while each file
 * streams in, so neither holds a whole file in memory. What the API
 * cannot carry is refused by name: symlinks, and directory modes (new
 * directories are the server's 0755).
 */
#include "compat.h"
#include "http.h"
#include "json.h"
#include "session/sandboxd.h"
#include "session/session.h"
#include "strbuf.h"
#include "tarball.h"
#include "usage.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

/* the largest directory listing taken, bytes */
#define LISTING_MAX ((size_t)16 << 20)
/* a placeholder PUT and removed again: an empty directory */
#define KEEP_NAME ".gosbx-keep"

static void files_path(struct strbuf *sb, const char *rel)
{
	strbuf_addstr(sb, "/v1/files/");
	http_pct_encode_path(sb, rel);
}

/* error() for a failed answer about rel: the server's message */
static int answer_error(const char *what, const char *rel,
			const struct http_resp *resp)
{
	struct strbuf why = STRBUF_INIT;

	http_error_text(&why, resp->status, &resp->body);
	if (resp->status == 403)
		error("cannot %s '%s' in the sandbox: %s (sandboxd refuses "
		      "paths outside its root)",
		      what, rel, why.buf);
	else if (resp->status == 404)
		error("cannot %s '%s' in the sandbox: no such file or "
		      "directory (%s)",
		      what, rel, why.buf);
	else
		error("cannot %s '%s' in the sandbox: %s", what, rel, why.buf);
	strbuf_release(&why);
	return -1;
}

/*
 * PUT rel: len bytes from fd (>= 0) or at data, with mode & 0777.
 * 0 or -1 with error().
 */
static int put_file(struct session *s, const char *rel, int fd,
		    const void *data, size_t len, unsigned mode)
{
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	struct strbuf path = STRBUF_INIT, q = STRBUF_INIT;
	char m[8];
	int ret = 0;

	files_path(&path, rel);
	snprintf(m, sizeof(m), "0%03o", mode & 0777);
	http_query_add(&q, "mode", m);
	req.method = "PUT";
	req.path = path.buf;
	req.query = q.buf;
	req.content_type = "application/octet-stream";
	if (fd >= 0) {
		req.read_body = http_read_fd;
		req.read_data = &fd;
	} else {
		req.body = data ? data : "";
	}
	req.body_len = len;
	if (http_request(s->http, &req, &resp) < 0)
		ret = -1;
	else if (resp.status / 100 != 2)
		ret = answer_error("write", rel, &resp);
	strbuf_release(&path);
	strbuf_release(&q);
	http_resp_release(&resp);
	return ret;
}

/* DELETE rel (not recursive). 0 or -1 with error(). */
static int delete_file(struct session *s, const char *rel)
{
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	struct strbuf path = STRBUF_INIT;
	int ret = 0;

	files_path(&path, rel);
	req.method = "DELETE";
	req.path = path.buf;
	if (http_request(s->http, &req, &resp) < 0)
		ret = -1;
	else if (resp.status / 100 != 2)
		ret = answer_error("remove", rel, &resp);
	strbuf_release(&path);
	http_resp_release(&resp);
	return ret;
}

int sandboxd_write_files(struct session *s, const struct session_file *files,
			 size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (put_file(s, files[i].path, -1, files[i].data, files[i].len,
			     0644) < 0)
			return -1;
	return 0;
}

/* ---- push: a local tree, file by file ---- */

static int push_tree(struct session *s, struct strbuf *local,
		     struct strbuf *remote);

static int push_regular(struct session *s, const char *local,
			const char *remote)
{
	struct stat st;
	int fd = open(local, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	int ret;

	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = error_errno("cannot read '%s'", local);
	} else {
		ret = put_file(s, remote, fd, NULL, (size_t)st.st_size,
			       st.st_mode);
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int push_dir(struct session *s, struct strbuf *local,
		    struct strbuf *remote)
{
	DIR *d = opendir(local->buf);
	struct dirent *de;
	char **names = NULL;
	size_t nr = 0, alloc = 0, llen = local->len, rlen = remote->len;
	int ret = 0;

	if (!d)
		return error_errno("cannot read '%s'", local->buf);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		ALLOC_GROW(names, nr + 1, alloc);
		names[nr++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (nr)
		qsort(names, nr, sizeof(*names), name_cmp);
	if (!nr) {
		/* the API makes directories only as a file's parents */
		strbuf_addstr(remote, "/" KEEP_NAME);
		ret = put_file(s, remote->buf, -1, NULL, 0, 0600);
		if (!ret)
			ret = delete_file(s, remote->buf);
		strbuf_setlen(remote, rlen);
	}
	for (size_t i = 0; i < nr && !ret; i++) {
		strbuf_addf(local, "/%s", names[i]);
		strbuf_addf(remote, "/%s", names[i]);
		ret = push_tree(s, local, remote);
		strbuf_setlen(local, llen);
		strbuf_setlen(remote, rlen);
	}
	for (size_t i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	return ret;
}

static int push_tree(struct session *s, struct strbuf *local,
		     struct strbuf *remote)
{
	struct stat st;

	if (lstat(local->buf, &st) < 0)
		return error_errno("cannot read '%s'", local->buf);
	if (S_ISREG(st.st_mode))
		return push_regular(s, local->buf, remote->buf);
	if (S_ISDIR(st.st_mode))
		return push_dir(s, local, remote);
	if (S_ISLNK(st.st_mode))
		return error("cannot copy the symlink '%s': sandboxd's files "
			     "API cannot make symlinks",
			     local->buf);
	warning("skipping '%s': not a file, directory or symlink", local->buf);
	return 0;
}

/* the name a path is stored under: its base name, of its real path for
 * "." and ".." (tar_write_local()'s rule) */
static void base_name(const char *path, struct strbuf *out)
{
	struct strbuf p = STRBUF_INIT;
	const char *slash;
	char *real = NULL;

	strbuf_addstr(&p, path);
	while (p.len > 1 && p.buf[p.len - 1] == '/')
		strbuf_setlen(&p, p.len - 1);
	slash = strrchr(p.buf, '/');
	slash = slash ? slash + 1 : p.buf;
	if ((!strcmp(slash, ".") || !strcmp(slash, "..")) &&
	    (real = realpath(p.buf, NULL))) {
		slash = strrchr(real, '/');
		slash = slash ? slash + 1 : real;
	}
	strbuf_addstr(out, slash);
	free(real);
	strbuf_release(&p);
}

int sandboxd_push(struct session *s, const char *const *paths, size_t nr,
		  const char *dir)
{
	struct strbuf local = STRBUF_INIT, remote = STRBUF_INIT;
	int ret = 0;

	for (size_t i = 0; i < nr && !ret; i++) {
		strbuf_reset(&local);
		strbuf_reset(&remote);
		strbuf_addstr(&local, paths[i]);
		if (dir && *dir)
			strbuf_addf(&remote, "%s/", dir);
		base_name(paths[i], &remote);
		if (!remote.len || remote.buf[remote.len - 1] == '/')
			ret = error("cannot copy '%s': it has no name",
				    paths[i]);
		else
			ret = push_tree(s, &local, &remote);
	}
	strbuf_release(&local);
	strbuf_release(&remote);
	return ret;
}

/* ---- fetch: a remote tree as a tar ---- */

struct fetch {
	struct session *s;
	struct tar_writer *w;
	struct strbuf err;
	volatile sig_atomic_t *cancel;
	int fd;
	uint64_t written, max; /* archive bytes; max 0: no bound */
	int over, write_failed;
	uint64_t got; /* bytes of the current file */
	uint64_t size;
};

static int sink_write(const void *buf, size_t len, void *data)
{
	struct fetch *f = data;

	if (f->max && len > f->max - f->written) {
		f->over = 1;
		return -1;
	}
	f->written += len;
	if (write_in_full(f->fd, buf, len) < 0) {
		f->write_failed = errno ? errno : EIO;
		return -1;
	}
	return 0;
}

/* "2026-01-02T03:04:05Z" (RFC 3339 in UTC, as both servers write it) */
static int64_t parse_mtime(const char *s)
{
	struct tm tm = { 0 };
	const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	time_t t;

	if (!end)
		return 0;
	t = timegm(&tm);
	return t == (time_t)-1 ? 0 : (int64_t)t;
}

static unsigned parse_mode(const char *s, unsigned dflt)
{
	char *end;
	unsigned long m;

	if (!s || !*s)
		return dflt;
	m = strtoul(s, &end, 8);
	return *end || m > 07777 ? dflt : (unsigned)(m & 0777);
}

/*
 * GET /v1/files/<rel> (filesystem.yaml) into resp, at most max bytes of
 * body: 0 on 200, else -1 with the error said as "cannot <what> '<shown>'
 * in the sandbox" (answer_error()). The caller releases resp either way.
 */
static int files_get(struct session *s, const char *rel, size_t max,
		     const char *what, const char *shown,
		     struct http_resp *resp)
{
	struct http_req req = { 0 };
	struct strbuf path = STRBUF_INIT;
	int ret = -1;

	files_path(&path, rel);
	req.path = path.buf;
	req.max_body = max;
	if (http_request(s->http, &req, resp) < 0)
		goto out;
	if (resp->status != 200) {
		answer_error(what, shown, resp);
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&path);
	return ret;
}

/*
 * GET rel as a listing into *out (a DirectoryListing's entries array,
 * owned by *root). 0, or -1 with error().
 */
static int list_dir(struct session *s, const char *rel, json_t **root,
		    json_t **entries)
{
	struct http_resp resp = HTTP_RESP_INIT;
	struct strbuf err = STRBUF_INIT;
	int ret = -1;

	*root = NULL;
	if (files_get(s, rel, LISTING_MAX, "list", *rel ? rel : ".", &resp))
		goto out;
	*root = json_parse(resp.body.buf, resp.body.len, &err);
	*entries = *root ? json_object_get(*root, "entries") : NULL;
	if (!*entries || !json_is_array(*entries)) {
		error("sandboxd's listing of '%s' is not a "
		      "DirectoryListing%s%s",
		      *rel ? rel : ".", err.len ? ": " : "", err.buf);
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&err);
	http_resp_release(&resp);
	return ret;
}

static int file_data(const char *buf, size_t len, void *data)
{
	struct fetch *f = data;

	if (len > f->size - f->got)
		return -1; /* grew: checked below */
	f->got += len;
	return tar_writer_data(f->w, buf, len) < 0 ? -1 : 0;
}

static int fetch_file(struct fetch *f, const char *rel, uint64_t size)
{
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	struct strbuf path = STRBUF_INIT;
	int rc, ret = -1;

	files_path(&path, rel);
	req.path = path.buf;
	req.on_data = file_data;
	req.on_data_arg = f;
	req.cancel = f->cancel;
	f->got = 0;
	f->size = size;
	rc = http_request(f->s->http, &req, &resp);
	if (rc == HTTP_ABORTED) {
		if (!(f->cancel && *f->cancel) && !f->over && !f->write_failed)
			error("'%s' grew while it was copied", rel);
	} else if (rc < 0) {
		; /* said */
	} else if (resp.status != 200) {
		answer_error("read", rel, &resp);
	} else if (f->got != size) {
		error("'%s' shrank while it was copied (%" PRIu64 " of %" PRIu64
		      " bytes)",
		      rel, f->got, size);
	} else {
		ret = 0;
	}
	strbuf_release(&path);
	http_resp_release(&resp);
	return ret;
}

static int fetch_tree(struct fetch *f, struct strbuf *rel, const json_t *e);

/* the entries of directory rel (whose entry is in the tar already) */
static int fetch_dir(struct fetch *f, struct strbuf *rel)
{
	json_t *root, *entries, *e;
	size_t i, len = rel->len;
	int ret = 0;

	if (list_dir(f->s, rel->buf, &root, &entries) < 0) {
		json_decref(root);
		return -1;
	}
	json_array_foreach (entries, i, e) {
		const char *name =
			json_string_value(json_object_get(e, "name"));

		if (!name || !*name || strchr(name, '/') ||
		    !strcmp(name, ".") || !strcmp(name, "..")) {
			ret = error("sandboxd listed an entry of '%s' that is "
				    "not a name",
				    rel->buf);
			break;
		}
		if (rel->len)
			strbuf_addch(rel, '/');
		strbuf_addstr(rel, name);
		ret = fetch_tree(f, rel, e);
		strbuf_setlen(rel, len);
		if (ret)
			break;
	}
	json_decref(root);
	return ret;
}

/* rel described by its listing entry e: into the tar */
static int fetch_tree(struct fetch *f, struct strbuf *rel, const json_t *e)
{
	const char *type = json_string_value(json_object_get(e, "type"));
	unsigned mode =
		parse_mode(json_string_value(json_object_get(e, "mode")), 0644);
	int64_t mtime = parse_mtime(
		json_string_value(json_object_get(e, "modified_at")));
	int64_t size = 0;

	if (f->cancel && *f->cancel)
		return -1;
	if (type && !strcmp(type, "directory")) {
		if (tar_writer_dir(f->w, rel->buf, mode, mtime) < 0)
			return -1;
		return fetch_dir(f, rel);
	}
	if (!type || strcmp(type, "file") ||
	    json_object_int(e, "size", &size) < 0 || size < 0)
		return error("sandboxd listed '%s' without a type and size",
			     rel->buf);
	if (tar_writer_file(f->w, rel->buf, mode, mtime, (uint64_t)size) < 0)
		return -1;
	return fetch_file(f, rel->buf, (uint64_t)size);
}

/*
 * The listing entry of rel in its parent's listing into *entry (owned
 * by *root). HEAD first: a refused path (403) or a missing one (404)
 * gets the server's own answer.
 */
static int find_entry(struct session *s, const char *rel, json_t **root,
		      json_t **entry)
{
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	struct strbuf path = STRBUF_INIT, parent = STRBUF_INIT;
	const char *slash = strrchr(rel, '/'), *name = slash ? slash + 1 : rel;
	json_t *entries, *e;
	size_t i;
	int ret = -1;

	*root = *entry = NULL;
	files_path(&path, rel);
	req.method = "HEAD";
	req.path = path.buf;
	if (http_request(s->http, &req, &resp) < 0)
		goto out;
	if (resp.status != 200) {
		answer_error("read", rel, &resp);
		goto out;
	}
	if (slash)
		strbuf_add(&parent, rel, (size_t)(slash - rel));
	if (list_dir(s, parent.buf, root, &entries) < 0)
		goto out;
	json_array_foreach (entries, i, e) {
		const char *n = json_string_value(json_object_get(e, "name"));

		if (n && !strcmp(n, name)) {
			*entry = e;
			ret = 0;
			goto out;
		}
	}
	error("cannot read '%s' in the sandbox: sandboxd does not list it "
	      "(a symlink that leaves its root?)",
	      rel);
out:
	strbuf_release(&path);
	strbuf_release(&parent);
	http_resp_release(&resp);
	return ret;
}

int sandboxd_get(struct session *s, const char *path, size_t max_bytes,
		 struct strbuf *out)
{
	struct http_resp resp = HTTP_RESP_INIT;
	int ret = -1;

	if (files_get(s, path, max_bytes, "get", path, &resp))
		goto out;
	/* filesystem.yaml: a directory is a JSON DirectoryListing */
	if (starts_with(resp.content_type.buf, "application/json")) {
		error("cannot get '%s': a directory", path);
		goto out;
	}
	strbuf_addbuf(out, &resp.body);
	ret = 0;
out:
	http_resp_release(&resp);
	return ret;
}

int sandboxd_fetch_archive(struct session *s, const char *path, int fd,
			   uint64_t max_bytes, volatile sig_atomic_t *cancel)
{
	struct fetch f = {
		.s = s, .cancel = cancel, .fd = fd, .max = max_bytes
	};
	struct strbuf rel = STRBUF_INIT;
	json_t *root = NULL, *entry = NULL;
	int ret = -1;

	strbuf_init(&f.err, 0);
	if (path && strcmp(path, "."))
		strbuf_addstr(&rel, path);
	if (rel.len && find_entry(s, rel.buf, &root, &entry) < 0)
		goto out;
	f.w = tar_writer_open(sink_write, &f, &f.err);
	if (!f.w) {
		error("%s", f.err.buf);
		goto out;
	}
	ret = rel.len ? fetch_tree(&f, &rel, entry) : fetch_dir(&f, &rel);
	if (tar_writer_close(f.w, !ret) < 0 && !ret)
		ret = -1;
	if (cancel && *cancel) {
		ret = 1;
	} else if (f.over) {
		error("the archive of '%s' is larger than %" PRIu64 " bytes",
		      rel.len ? rel.buf : ".", max_bytes);
		ret = SESSION_FETCH_TOO_LARGE;
	} else if (f.write_failed) {
		errno = f.write_failed;
		ret = error_errno("cannot write the archive of '%s'",
				  rel.len ? rel.buf : ".");
	} else if (ret && f.err.len) {
		error("%s", f.err.buf);
	}
out:
	json_decref(root);
	strbuf_release(&rel);
	strbuf_release(&f.err);
	return ret;
}
