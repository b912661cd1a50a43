/*
 * File endpoints of gosbx-runtime: the upstream /upload, /download,
 * /list, /exists (Documentation/protocol/runtime-api.md), and the `archive` and
 * `files` extensions. Every client path goes through workpath_resolve() so
 * nothing outside the workdir is read or written.
 */
#include "compat.h"
#include "dir.h"
#include "dl/dl.h"
#include "exec.h"
#include "http-checks.h"
#include "json.h"
#include "log.h"
#include "runtime.h"
#include "tarball.h"
#include "usage.h"
#include "workpath.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

/*
 * A temp file in the workdir's file system for a body being received.
 * O_TMPFILE keeps it invisible (and gone if we crash) until linked.
 */
static int open_spool(struct request *r)
{
	struct strbuf path = STRBUF_INIT;
	int fd;

	fd = open(rt.root, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	if (fd >= 0) {
		r->spool_fd = fd;
		return 0;
	}
	strbuf_addf(&path, "%s/.gosbx-tmp-XXXXXX", rt.root);
	fd = mkostemp(path.buf, O_CLOEXEC);
	if (fd < 0) {
		strbuf_release(&path);
		return -1;
	}
	fchmod(fd, 0644);
	r->spool_fd = fd;
	r->spool_path = strbuf_detach(&path, NULL);
	return 0;
}

void request_release_spool(struct request *r)
{
	if (r->pp) {
		MHD_destroy_post_processor(r->pp);
		r->pp = NULL;
	}
	if (r->spool_fd >= 0)
		close(r->spool_fd);
	r->spool_fd = -1;
	if (r->spool_path) {
		unlink(r->spool_path);
		free(r->spool_path);
		r->spool_path = NULL;
	}
	free(r->upload_name);
	r->upload_name = NULL;
}

static void spool_write(struct request *r, const char *data, size_t len)
{
	if (r->too_large || r->write_failed)
		return;
	if (r->spooled + len > UPSTREAM_UPLOAD_LIMIT) {
		r->too_large = 1;
		return;
	}
	if (r->spool_fd < 0 && open_spool(r) < 0) {
		r->write_failed = errno ? errno : EIO;
		return;
	}
	if (write_in_full(r->spool_fd, data, len) < 0) {
		r->write_failed = errno ? errno : EIO;
		return;
	}
	r->spooled += len;
}

static enum MHD_Result post_iterator(void *cls, enum MHD_ValueKind kind,
				     const char *key, const char *filename,
				     const char *content_type,
				     const char *transfer_encoding,
				     const char *data, uint64_t off,
				     size_t size)
{
	struct request *r = cls;

	if (strcmp(key, "file"))
		return MHD_YES; /* other fields are ignored, as upstream */
	if (!r->saw_file_part) {
		r->saw_file_part = 1;
		r->upload_name = xstrdup(filename ? filename : "");
	}
	/* only the first 'file' part counts: a later one restarts at 0 */
	if (off != r->spooled)
		return MHD_YES;
	if (size)
		spool_write(r, data, size);
	return MHD_YES;
}

int upload_begin(struct MHD_Connection *c, struct request *r)
{
	const char *ct =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");

	/* sandboxd's PUT takes a raw body or a form with a 'file' part */
	if (r->route == R_UPLOAD ||
	    (r->route == R_SBX_PUT &&
	     http_content_type_is(ct, "multipart/form-data"))) {
		r->pp = MHD_create_post_processor(c, 64 * 1024, post_iterator,
						  r);
		if (!r->pp)
			r->bad_multipart = 1;
		return 0;
	}
	return 0;
}

int upload_take(struct request *r, const char *data, size_t len)
{
	if (r->route == R_UPLOAD || r->pp || r->bad_multipart) {
		if (!r->pp || r->bad_multipart)
			return 0;
		if (MHD_post_process(r->pp, data, len) != MHD_YES)
			r->bad_multipart = 1;
		return 0;
	}
	spool_write(r, data, len);
	return 0;
}

int commit_spool(struct request *r, const char *dest, int mode)
{
	if (r->spool_fd < 0 && open_spool(r) < 0)
		return -1; /* an empty body */
	if (mode >= 0 && fchmod(r->spool_fd, mode) < 0)
		return -1;
	if (fsync(r->spool_fd) < 0)
		return -1;
	if (r->spool_path) {
		if (rename(r->spool_path, dest) < 0)
			return -1;
		free(r->spool_path);
		r->spool_path = NULL;
		return 0;
	}
	/* an O_TMPFILE: link it under a temp name, then rename */
	{
		struct strbuf proc = STRBUF_INIT, tmp = STRBUF_INIT;
		int ret = -1;

		strbuf_addf(&proc, "/proc/self/fd/%d", r->spool_fd);
		for (int i = 0; i < 100 && ret < 0; i++) {
			strbuf_reset(&tmp);
			strbuf_addf(&tmp, "%s.gosbx-tmp-%d-%d", dest,
				    (int)getpid(), rand());
			if (!linkat(AT_FDCWD, proc.buf, AT_FDCWD, tmp.buf,
				    AT_SYMLINK_FOLLOW))
				ret = 0;
			else if (errno != EEXIST)
				break;
		}
		if (!ret && rename(tmp.buf, dest) < 0) {
			int e = errno;
			unlink(tmp.buf);
			errno = e;
			ret = -1;
		}
		strbuf_release(&proc);
		strbuf_release(&tmp);
		return ret;
	}
}

static enum MHD_Result reply_too_large(struct MHD_Connection *c,
				       struct request *r)
{
	return reply_error(c, r, 413, "file too large (limit %llu bytes)",
			   (unsigned long long)UPSTREAM_UPLOAD_LIMIT);
}

enum MHD_Result handle_upload_done(struct MHD_Connection *c, struct request *r)
{
	struct strbuf dest = STRBUF_INIT, body = STRBUF_INIT;
	const char *base;
	enum MHD_Result ret;

	if (r->bad_multipart || !r->pp)
		return reply_error(c, r, 400, "invalid multipart form: %s",
				   "expected multipart/form-data with a "
				   "'file' part");
	/* a body that stopped inside a part is not an upload */
	if (MHD_destroy_post_processor(r->pp) != MHD_YES) {
		r->pp = NULL;
		return reply_error(c, r, 400, "invalid multipart form: %s",
				   "the body ends inside a part");
	}
	r->pp = NULL;
	if (!r->saw_file_part)
		return reply_error(c, r, 400, "missing file part 'file'");
	if (r->too_large)
		return reply_too_large(c, r);
	base = strrchr(r->upload_name, '/');
	base = base ? base + 1 : r->upload_name;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return reply_error(c, r, 400, "invalid filename");
	if (r->write_failed)
		return reply_error(c, r, 500, "cannot store upload: %s",
				   strerror(r->write_failed));
	strbuf_addf(&dest, "%s/%s", rt.root, base);
	if (commit_spool(r, dest.buf, -1) < 0) {
		ret = reply_error(c, r, errno == EISDIR ? 400 : 500,
				  "cannot write '%s': %s", base,
				  strerror(errno));
		goto out;
	}
	strbuf_addstr(&body, "{\"filename\":");
	json_add_str(&body, base);
	strbuf_addf(&body, ",\"size\":%" PRIu64 "}", r->spooled);
	ret = reply_json(c, r, 200, &body);
out:
	strbuf_release(&dest);
	return ret;
}

static enum MHD_Result reply_denied(struct MHD_Connection *c, struct request *r)
{
	return reply_error(c, r, 403,
			   "access denied: path must be within workdir");
}

/* Parse "bytes=a-b" for a file of size bytes. 0 ok, -1 unsatisfiable. */
static int parse_range(const char *h, uint64_t size, uint64_t *off,
		       uint64_t *len)
{
	unsigned long long a, b;
	char *end;

	if (!skip_prefix(h, "bytes=", &h) || strchr(h, ','))
		return -1;
	if (*h == '-') {
		b = strtoull(h + 1, &end, 10);
		if (end == h + 1 || *end || !b)
			return -1;
		if (b > size)
			b = size;
		*off = size - b;
		*len = b;
		return size ? 0 : -1;
	}
	a = strtoull(h, &end, 10);
	if (end == h || *end != '-' || a >= size)
		return -1;
	h = end + 1;
	if (!*h) {
		b = size - 1;
	} else {
		b = strtoull(h, &end, 10);
		if (end == h || *end || b < a)
			return -1;
		if (b >= size)
			b = size - 1;
	}
	*off = a;
	*len = b - a + 1;
	return 0;
}

int open_workpath(const char *path, struct stat *st)
{
	struct strbuf abs = STRBUF_INIT;
	int fd, e;

	if (workpath_resolve(rt.root, path, &abs, NULL) < 0) {
		strbuf_release(&abs);
		return -2;
	}
	fd = open(abs.buf, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	strbuf_release(&abs);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

enum MHD_Result handle_download(struct MHD_Connection *c, struct request *r,
				const char *path)
{
	struct stat st;
	int fd = open_workpath(path, &st);

	if (fd == -2)
		return reply_denied(c, r);
	if (fd < 0)
		return reply_error(c, r, 404, "file not found");
	if (!S_ISREG(st.st_mode)) {
		int dir = S_ISDIR(st.st_mode);
		close(fd);
		if (dir)
			return reply_error(c, r, 400, "path is a directory");
		return reply_error(c, r, 400, "path is not a regular file");
	}
	return serve_file_fd(c, r, fd, &st);
}

enum MHD_Result serve_file_fd(struct MHD_Connection *c, struct request *r,
			      int fd, const struct stat *st)
{
	struct MHD_Response *resp;
	const char *range;
	uint64_t off = 0, len;
	unsigned status = 200;

	len = st->st_size;
	range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Range");
	if (range) {
		if (parse_range(range, st->st_size, &off, &len) < 0) {
			char cr[64];
			close(fd);
			snprintf(cr, sizeof(cr), "bytes */%llu",
				 (unsigned long long)st->st_size);
			resp = MHD_create_response_from_buffer(
				0, NULL, MHD_RESPMEM_PERSISTENT);
			MHD_add_response_header(resp, "Content-Range", cr);
			return reply(c, r, 416, resp);
		}
		status = 206;
	}
	resp = MHD_create_response_from_fd_at_offset64(len, fd, off);
	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type",
				"application/octet-stream");
	MHD_add_response_header(resp, "Accept-Ranges", "bytes");
	if (status == 206) {
		char cr[96];
		snprintf(cr, sizeof(cr), "bytes %llu-%llu/%llu",
			 (unsigned long long)off,
			 (unsigned long long)(off + len - 1),
			 (unsigned long long)st->st_size);
		MHD_add_response_header(resp, "Content-Range", cr);
	}
	return reply(c, r, status, resp);
}

struct list_entry {
	char *name;
	struct stat st;
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct list_entry *)a)->name,
		      ((const struct list_entry *)b)->name);
}

enum MHD_Result handle_list(struct MHD_Connection *c, struct request *r,
			    const char *path)
{
	struct strbuf abs = STRBUF_INIT, body = STRBUF_INIT;
	struct list_entry *e = NULL;
	size_t nr = 0, alloc = 0;
	struct dirent *de;
	DIR *dir;
	int dfd;

	if (workpath_resolve(rt.root, path, &abs, NULL) < 0) {
		strbuf_release(&abs);
		return reply_denied(c, r);
	}
	dir = opendir(abs.buf);
	strbuf_release(&abs);
	if (!dir) {
		if (errno == ENOTDIR)
			return reply_error(c, r, 400,
					   "path is not a directory");
		return reply_error(c, r, 404, "directory not found");
	}
	dfd = dirfd(dir);
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		ALLOC_GROW(e, nr + 1, alloc);
		if (fstatat(dfd, de->d_name, &e[nr].st, AT_SYMLINK_NOFOLLOW))
			continue;
		e[nr].name = xstrdup(de->d_name);
		nr++;
	}
	closedir(dir);
	if (nr)
		qsort(e, nr, sizeof(*e), cmp_entry);
	strbuf_addch(&body, '[');
	for (size_t i = 0; i < nr; i++) {
		double mtime =
			e[i].st.st_mtim.tv_sec + e[i].st.st_mtim.tv_nsec / 1e9;
		strbuf_addf(&body,
			    "%s{\"mod_time\":%.6f,\"name\":", i ? "," : "",
			    mtime);
		json_add_str(&body, e[i].name);
		strbuf_addf(&body, ",\"size\":%lld,\"type\":\"%s\"}",
			    (long long)e[i].st.st_size,
			    S_ISDIR(e[i].st.st_mode) ? "directory" : "file");
		free(e[i].name);
	}
	strbuf_addch(&body, ']');
	free(e);
	return reply_json(c, r, 200, &body);
}

enum MHD_Result handle_exists(struct MHD_Connection *c, struct request *r,
			      const char *path)
{
	struct strbuf abs = STRBUF_INIT, rel = STRBUF_INIT;
	struct strbuf body = STRBUF_INIT;
	struct stat st;
	int exists;

	if (workpath_resolve(rt.root, path, &abs, &rel) < 0) {
		strbuf_release(&abs);
		strbuf_release(&rel);
		return reply_denied(c, r);
	}
	exists = !stat(abs.buf, &st);
	strbuf_addf(&body,
		    "{\"exists\":%s,\"path\":", exists ? "true" : "false");
	json_add_string(&body, rel.buf, rel.len);
	strbuf_addch(&body, '}');
	strbuf_release(&abs);
	strbuf_release(&rel);
	return reply_json(c, r, 200, &body);
}

int resolve_leaf(const char *path, struct strbuf *abs, struct strbuf *rel)
{
	struct strbuf clean = STRBUF_INIT, parent = STRBUF_INIT;
	const char *slash, *leaf;
	int ret = -1;

	while (*path == '/')
		path++;
	if (workpath_clean(path, &clean) < 0)
		goto out;
	if (!clean.len) {
		ret = -2;
		goto out;
	}
	slash = strrchr(clean.buf, '/');
	leaf = slash ? slash + 1 : clean.buf;
	if (slash)
		strbuf_add(&parent, clean.buf, slash - clean.buf);
	if (workpath_resolve(rt.root, parent.buf, abs, rel) < 0)
		goto out;
	strbuf_addf(abs, "%s%s", strcmp(abs->buf, "/") ? "/" : "", leaf);
	if (rel)
		strbuf_addf(rel, "%s%s", strcmp(rel->buf, "/") ? "/" : "",
			    leaf);
	ret = 0;
out:
	strbuf_release(&clean);
	strbuf_release(&parent);
	return ret;
}

enum MHD_Result handle_file_put(struct MHD_Connection *c, struct request *r,
				const char *path)
{
	struct strbuf abs = STRBUF_INIT, rel = STRBUF_INIT;
	struct strbuf body = STRBUF_INIT;
	enum MHD_Result ret;
	int rc = resolve_leaf(path, &abs, &rel);

	if (rc == -2) {
		ret = reply_error(c, r, 400, "path must name a file");
		goto out;
	}
	if (rc < 0) {
		ret = reply_denied(c, r);
		goto out;
	}
	/* an existing link at the leaf must not point out of the workdir */
	{
		struct strbuf through = STRBUF_INIT;
		struct stat st;
		int out_of_bounds =
			!lstat(abs.buf, &st) && S_ISLNK(st.st_mode) &&
			workpath_resolve(rt.root, path, &through, NULL) < 0;
		strbuf_release(&through);
		if (out_of_bounds) {
			ret = reply_denied(c, r);
			goto out;
		}
	}
	if (r->too_large) {
		ret = reply_too_large(c, r);
		goto out;
	}
	if (r->write_failed) {
		ret = reply_error(c, r, 500, "cannot store file: %s",
				  strerror(r->write_failed));
		goto out;
	}
	if (mkdir_leading(abs.buf, 0755) < 0 ||
	    commit_spool(r, abs.buf, -1) < 0) {
		ret = reply_error(
			c, r, errno == EISDIR || errno == ENOTDIR ? 400 : 500,
			"cannot write '%s': %s", rel.buf, strerror(errno));
		goto out;
	}
	strbuf_addstr(&body, "{\"path\":");
	json_add_string(&body, rel.buf, rel.len);
	strbuf_addf(&body, ",\"size\":%" PRIu64 "}", r->spooled);
	ret = reply_json(c, r, 200, &body);
out:
	strbuf_release(&abs);
	strbuf_release(&rel);
	return ret;
}

enum MHD_Result handle_file_delete(struct MHD_Connection *c, struct request *r,
				   const char *path)
{
	struct strbuf abs = STRBUF_INIT, rel = STRBUF_INIT;
	struct strbuf body = STRBUF_INIT;
	enum MHD_Result ret;
	struct stat st;
	int rc = resolve_leaf(path, &abs, &rel);

	if (rc == -2) {
		ret = reply_error(c, r, 400, "refusing to delete the workdir");
		goto out;
	}
	if (rc < 0) {
		ret = reply_denied(c, r);
		goto out;
	}
	if (lstat(abs.buf, &st) < 0) {
		ret = reply_error(c, r, 404, "file not found");
		goto out;
	}
	if (remove_tree(abs.buf) < 0) {
		ret = reply_error(c, r, 500, "cannot delete '%s': %s", rel.buf,
				  strerror(errno));
		goto out;
	}
	strbuf_addstr(&body, "{\"path\":");
	json_add_string(&body, rel.buf, rel.len);
	strbuf_addstr(&body, ",\"deleted\":true}");
	ret = reply_json(c, r, 200, &body);
out:
	strbuf_release(&abs);
	strbuf_release(&rel);
	return ret;
}

enum MHD_Result handle_archive_in(struct MHD_Connection *c, struct request *r)
{
	const char *dir =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "dir");
	/* mtime=now: files get the time they are written (tarball.h) */
	const char *mtime =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mtime");
	struct strbuf err = STRBUF_INIT, body = STRBUF_INIT;
	struct tar_stats st = { 0 };
	const char *no_lib;
	enum MHD_Result ret;
	int rc;

	if (r->too_large)
		return reply_too_large(c, r);
	if (mtime && strcmp(mtime, "now"))
		return reply_error(c, r, 400,
				   "invalid mtime '%s': expected 'now'", mtime);
	/* loaded on first use (lib/dl/dl.h): a server-side failure, not 400 */
	no_lib = dl_archive_error();
	if (no_lib)
		return reply_error(c, r, 500, "%s", no_lib);
	if (r->write_failed)
		return reply_error(c, r, 500, "cannot store archive: %s",
				   strerror(r->write_failed));
	if (r->spool_fd < 0)
		return reply_error(c, r, 400, "invalid archive: empty body");
	/*
	 * libarchive may run a decompressor as a child of ours: keep the
	 * orphan reaper and the stray killer (lib/exec.h) away from it.
	 */
	exec_reaper_hold();
	rc = lseek(r->spool_fd, 0, SEEK_SET) < 0 ||
	     tar_extract_safe(r->spool_fd, rt.root, dir ? dir : "",
			      mtime ? TAR_EXTRACT_TOUCH : 0, &st, &err) < 0;
	exec_reaper_release();
	if (rc) {
		ret = reply_error(c, r, 400, "%s", err.buf);
		strbuf_release(&err);
		return ret;
	}
	strbuf_release(&err);
	strbuf_addf(&body, "{\"files\":%llu,\"bytes\":%llu}",
		    (unsigned long long)st.files, (unsigned long long)st.bytes);
	return reply_json(c, r, 200, &body);
}

struct tar_out_job {
	int fd;
	char *relpath;
};

static int pipe_write(const void *buf, size_t len, void *data)
{
	struct tar_out_job *job = data;

	return write_in_full(job->fd, buf, len) < 0 ? -1 : 0;
}

static void *tar_out_thread(void *arg)
{
	struct tar_out_job *job = arg;
	struct strbuf err = STRBUF_INIT;

	if (tar_write_path(rt.root, job->relpath, pipe_write, job, &err) < 0)
		log_msg(LOG_WARN, "archive download failed", "error", err.buf);
	strbuf_release(&err);
	close(job->fd);
	free(job->relpath);
	free(job);
	return NULL;
}

enum MHD_Result handle_archive_out(struct MHD_Connection *c, struct request *r)
{
	const char *path =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "path");
	struct strbuf abs = STRBUF_INIT, rel = STRBUF_INIT;
	struct MHD_Response *resp;
	struct tar_out_job *job;
	struct stat st;
	pthread_t th;
	pthread_attr_t attr;
	const char *no_lib;
	int fds[2];

	/* before the 200: the tar is written once the answer has started */
	no_lib = dl_archive_error();
	if (no_lib)
		return reply_error(c, r, 500, "%s", no_lib);
	if (workpath_resolve(rt.root, path ? path : "", &abs, &rel) < 0) {
		strbuf_release(&abs);
		strbuf_release(&rel);
		return reply_denied(c, r);
	}
	if (lstat(abs.buf, &st) < 0) {
		strbuf_release(&abs);
		strbuf_release(&rel);
		return reply_error(c, r, 404, "file not found");
	}
	strbuf_release(&abs);
	if (pipe2(fds, O_CLOEXEC) < 0) {
		strbuf_release(&rel);
		return reply_error(c, r, 500, "cannot create pipe: %s",
				   strerror(errno));
	}
	job = xcalloc(1, sizeof(*job));
	job->fd = fds[1];
	/* "/a/b" -> "a/b"; "/" -> "" */
	job->relpath = xstrdup(rel.buf + 1);
	strbuf_release(&rel);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, tar_out_thread, job)) {
		pthread_attr_destroy(&attr);
		close(fds[0]);
		close(fds[1]);
		free(job->relpath);
		free(job);
		return reply_error(c, r, 500, "cannot start archive writer");
	}
	pthread_attr_destroy(&attr);
	resp = MHD_create_response_from_pipe(fds[0]);
	if (!resp) {
		close(fds[0]);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "application/x-tar");
	return reply(c, r, 200, resp);
}
