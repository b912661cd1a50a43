/*
 * The sandboxd REST API (KEP-539.2) of agent-sandbox v1.0.3, by its
 * OpenAPI contract packages/sandboxd/spec/filesystem/v1/filesystem.yaml:
 * GET, HEAD, PUT and DELETE /v1/files/<path>, GET /v1/health and GET
 * /v1/metadata, served on the listener of --sandboxd-rest beside the
 * runtime's own API (Documentation/gosbx-runtime.txt "SANDBOXD").
 *
 * Facts taken from upstream's server (pkg/server/filesystem.go, not
 * its code): errors are {"code","message"} with gRPC-style codes; the
 * sandbox root is our workdir and a path resolves under it as
 * workpath_resolve() does (".." lexically, then links; an escape is 403
 * PERMISSION_DENIED); PUT writes a temp file and renames it, answers
 * 204; DELETE without recursive=true answers 409 CONFLICT for a
 * non-empty directory, and for the root itself; recursive=true on the
 * root empties it. One difference: DELETE removes a symlink itself,
 * never its target (as rm(1) does).
 */
#include "compat.h"
#include "dir.h"
#include "json.h"
#include "runtime.h"
#include "strbuf.h"
#include "workpath.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

extern char **environ;

/* upstream's default MetadataEnvPrefix */
#define SANDBOXD_ENV_PREFIX "SANDBOX_"

static const char *code_of(unsigned status)
{
	switch (status) {
	case 400:
	case 415:
		return "INVALID_ARGUMENT";
	case 401:
		return "UNAUTHENTICATED";
	case 403:
		return "PERMISSION_DENIED";
	case 404:
		return "NOT_FOUND";
	case 405:
		return "UNIMPLEMENTED";
	case 409:
		return "CONFLICT";
	case 413:
		return "RESOURCE_EXHAUSTED";
	case 503:
		return "UNAVAILABLE";
	}
	return "INTERNAL";
}

void sandboxd_error_body(struct strbuf *out, unsigned status, const char *msg)
{
	strbuf_addstr(out, "{\"code\":");
	json_add_str(out, code_of(status));
	strbuf_addstr(out, ",\"message\":");
	json_add_str(out, msg);
	strbuf_addch(out, '}');
}

static enum MHD_Result sbx_error(struct MHD_Connection *c, struct request *r,
				 unsigned status, const char *fmt, ...)
	PRINTF_LIKE(4, 5);
static enum MHD_Result sbx_error(struct MHD_Connection *c, struct request *r,
				 unsigned status, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT, body = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	sandboxd_error_body(&body, status, msg.buf);
	strbuf_release(&msg);
	return reply_json(c, r, status, &body);
}

static enum MHD_Result sbx_denied(struct MHD_Connection *c, struct request *r)
{
	return sbx_error(c, r, 403,
			 "path traversal outside sandbox root is forbidden");
}

/* 403 for EACCES and EPERM, 404 for a missing path, else 500 */
static enum MHD_Result sbx_errno(struct MHD_Connection *c, struct request *r,
				 int err)
{
	if (err == EACCES || err == EPERM)
		return sbx_error(c, r, 403, "permission denied");
	if (err == ENOENT || err == ENOTDIR)
		return sbx_error(c, r, 404,
				 "path does not exist within the sandbox");
	return sbx_error(c, r, 500, "%s", strerror(err));
}

void sandboxd_route(struct request *r, const char *method, const char *url)
{
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");

	r->route = R_NONE;
	if (starts_with(url, "/v1/files/")) {
		if (get)
			r->route = R_SBX_GET;
		else if (!strcmp(method, "PUT"))
			r->route = R_SBX_PUT;
		else if (!strcmp(method, "DELETE"))
			r->route = R_SBX_DELETE;
		else
			r->status = 405;
		return;
	}
	if (!strcmp(url, "/v1/health") || !strcmp(url, "/v1/metadata")) {
		if (get)
			r->route =
				url[4] == 'h' ? R_SBX_HEALTH : R_SBX_METADATA;
		else
			r->status = 405;
		return;
	}
	r->status = 404;
}

/* One FileEntry of a DirectoryListing; 0, or -1 to leave it out. */
static int add_entry(struct strbuf *out, int dfd, const char *dir,
		     const char *name)
{
	struct stat st;
	struct tm tm;
	char when[32];

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (S_ISLNK(st.st_mode)) {
		/* a link's type is its target's; escaping or broken: none */
		struct strbuf p = STRBUF_INIT, abs = STRBUF_INIT;
		int bad;

		strbuf_addf(&p, "%s/%s", dir, name);
		bad = workpath_resolve(rt.root, p.buf, &abs, NULL) < 0 ||
		      stat(abs.buf, &st) < 0;
		strbuf_release(&p);
		strbuf_release(&abs);
		if (bad)
			return -1;
	}
	gmtime_r(&st.st_mtim.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	strbuf_addstr(out, "{\"name\":");
	json_add_str(out, name);
	strbuf_addf(out,
		    ",\"size\":%lld,\"type\":\"%s\",\"modified_at\":\"%s\","
		    "\"mode\":\"%04o\"}",
		    (long long)st.st_size,
		    S_ISDIR(st.st_mode) ? "directory" : "file", when,
		    (unsigned)(st.st_mode & 0777));
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* GET on a directory: a DirectoryListing, entries by name; takes fd. */
static enum MHD_Result sbx_list(struct MHD_Connection *c, struct request *r,
				const char *path, int fd)
{
	struct strbuf body = STRBUF_INIT;
	struct strvec names = STRVEC_INIT;
	struct dirent *de;
	DIR *dir = fdopendir(fd);
	int n = 0;

	if (!dir) {
		int e = errno;
		close(fd);
		return sbx_errno(c, r, e);
	}
	while ((de = readdir(dir)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			strvec_push(&names, de->d_name);
	if (names.nr)
		qsort(names.v, names.nr, sizeof(*names.v), cmp_str);
	strbuf_addstr(&body, "{\"path\":");
	if (*path != '/') {
		struct strbuf p = STRBUF_INIT;
		strbuf_addf(&p, "/%s", path);
		json_add_str(&body, p.buf);
		strbuf_release(&p);
	} else {
		json_add_str(&body, path);
	}
	strbuf_addstr(&body, ",\"entries\":[");
	for (size_t i = 0; i < names.nr; i++) {
		size_t mark = body.len;

		if (n)
			strbuf_addch(&body, ',');
		if (add_entry(&body, dirfd(dir), path, names.v[i]) < 0)
			strbuf_setlen(&body, mark);
		else
			n++;
	}
	strbuf_addstr(&body, "]}");
	closedir(dir);
	strvec_clear(&names);
	return reply_json(c, r, 200, &body);
}

static enum MHD_Result sbx_get(struct MHD_Connection *c, struct request *r,
			       const char *path)
{
	struct stat st;
	int fd = open_workpath(path, &st);

	if (fd == -2)
		return sbx_denied(c, r);
	if (fd < 0)
		return sbx_errno(c, r, errno);
	if (S_ISDIR(st.st_mode))
		return sbx_list(c, r, path, fd);
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return sbx_error(c, r, 403, "not a regular file");
	}
	return serve_file_fd(c, r, fd, &st);
}

/* "mode" of PUT: ^0[0-7]{3}$, default 0644. -1 when malformed. */
static int parse_mode(const char *s)
{
	if (!s || !*s)
		return 0644;
	if (strlen(s) != 4 || s[0] != '0')
		return -1;
	for (int i = 1; i < 4; i++)
		if (s[i] < '0' || s[i] > '7')
			return -1;
	return (int)strtol(s, NULL, 8);
}

/* The body of a multipart PUT is whole and had a 'file' part: 0, or -1. */
static int multipart_done(struct request *r, struct strbuf *err)
{
	if (!r->pp && !r->bad_multipart)
		return 0; /* a raw body */
	if (r->bad_multipart || MHD_destroy_post_processor(r->pp) != MHD_YES) {
		r->pp = NULL;
		strbuf_addstr(err, "invalid multipart body");
		return -1;
	}
	r->pp = NULL;
	if (!r->saw_file_part) {
		strbuf_addstr(err, "multipart body is missing the required "
				   "\"file\" part");
		return -1;
	}
	return 0;
}

static enum MHD_Result sbx_put(struct MHD_Connection *c, struct request *r,
			       const char *path)
{
	const char *arg =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mode");
	struct strbuf abs = STRBUF_INIT, err = STRBUF_INIT;
	enum MHD_Result ret;
	int mode = parse_mode(arg);
	struct stat st;

	if (mode < 0) {
		ret = sbx_error(c, r, 400, "mode \"%s\" must match %s", arg,
				"^0[0-7]{3}$");
		goto out;
	}
	if (workpath_resolve(rt.root, path, &abs, NULL) < 0) {
		ret = sbx_denied(c, r);
		goto out;
	}
	if (!stat(abs.buf, &st) && S_ISDIR(st.st_mode)) {
		ret = sbx_error(c, r, 400, "target path is a directory");
		goto out;
	}
	if (multipart_done(r, &err) < 0) {
		ret = sbx_error(c, r, 400, "%s", err.buf);
		goto out;
	}
	if (r->too_large) {
		ret = sbx_error(c, r, 413, "file too large (limit %llu bytes)",
				(unsigned long long)UPSTREAM_UPLOAD_LIMIT);
		goto out;
	}
	if (r->write_failed) {
		ret = sbx_error(c, r, 500, "cannot store file: %s",
				strerror(r->write_failed));
		goto out;
	}
	if (mkdir_leading(abs.buf, 0755) < 0 ||
	    commit_spool(r, abs.buf, mode) < 0) {
		ret = errno == EISDIR || errno == ENOTDIR
			      ? sbx_error(c, r, 400, "%s", strerror(errno))
			      : sbx_errno(c, r, errno);
		goto out;
	}
	ret = reply(c, r, 204,
		    MHD_create_response_from_buffer(0, NULL,
						    MHD_RESPMEM_PERSISTENT));
out:
	strbuf_release(&abs);
	strbuf_release(&err);
	return ret;
}

/* Go's strconv.ParseBool, as upstream reads "recursive": 0/1, -1 bad */
static int parse_bool(const char *s)
{
	static const char *const yes[] = {
		"1", "t", "T", "TRUE", "true", "True"
	};
	static const char *const no[] = { "0",	   "f",	    "F",
					  "FALSE", "false", "False" };

	if (!s || !*s)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcmp(s, yes[i]))
			return 1;
		if (!strcmp(s, no[i]))
			return 0;
	}
	return -1;
}

/* DELETE ?recursive=true on the root: remove what it holds. */
static int empty_root(void)
{
	struct strbuf p = STRBUF_INIT;
	struct dirent *de;
	DIR *dir = opendir(rt.root);
	int ret = 0;

	if (!dir)
		return -1;
	while (!ret && (de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		strbuf_reset(&p);
		strbuf_addf(&p, "%s/%s", rt.root, de->d_name);
		ret = remove_tree(p.buf);
	}
	closedir(dir);
	strbuf_release(&p);
	return ret;
}

static enum MHD_Result sbx_delete(struct MHD_Connection *c, struct request *r,
				  const char *path)
{
	const char *arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						      "recursive");
	struct strbuf abs = STRBUF_INIT;
	enum MHD_Result ret;
	int recursive = parse_bool(arg), rc;
	struct stat st;

	/* through links, as GET: a path that leads out is refused */
	if (workpath_resolve(rt.root, path, &abs, NULL) < 0) {
		ret = sbx_denied(c, r);
		goto out;
	}
	strbuf_reset(&abs);
	rc = resolve_leaf(path, &abs, NULL);
	if (rc == -1) {
		ret = sbx_denied(c, r);
		goto out;
	}
	if (rc == 0 && lstat(abs.buf, &st) < 0) {
		ret = sbx_errno(c, r, errno);
		goto out;
	}
	if (recursive < 0) {
		ret = sbx_error(c, r, 400, "recursive \"%s\" must be a boolean",
				arg);
		goto out;
	}
	if (rc == -2 && !recursive) {
		ret = sbx_error(c, r, 409,
				"cannot delete the sandbox root; pass "
				"recursive=true to clear its contents");
		goto out;
	}
	if (rc == -2)
		rc = empty_root();
	else if (recursive)
		rc = remove_tree(abs.buf);
	else
		rc = S_ISDIR(st.st_mode) ? rmdir(abs.buf) : unlink(abs.buf);
	if (rc < 0 && (errno == ENOTEMPTY || errno == EEXIST))
		ret = sbx_error(c, r, 409,
				"directory is not empty; pass recursive=true "
				"to remove it");
	else if (rc < 0)
		ret = sbx_errno(c, r, errno);
	else
		ret = reply(c, r, 204,
			    MHD_create_response_from_buffer(
				    0, NULL, MHD_RESPMEM_PERSISTENT));
out:
	strbuf_release(&abs);
	return ret;
}

static enum MHD_Result sbx_health(struct MHD_Connection *c, struct request *r)
{
	struct strbuf body = STRBUF_INIT;

	strbuf_addf(&body, "{\"status\":\"ok\",\"uptime_seconds\":%" PRIu64 "}",
		    (monotonic_ms() - rt.started_ms) / 1000);
	return reply_json(c, r, 200, &body);
}

/*
 * The SANDBOX_* variables of our environment, without any whose name
 * holds a marker of a secret (upstream's list, metadata.go): untrusted
 * code in the sandbox may read this endpoint.
 */
static int sensitive(const char *name, size_t len)
{
	static const char *const marks[] = { "TOKEN",  "SECRET", "PASSWORD",
					     "PASSWD", "CRED",	 "KEY",
					     "AUTH",   "BEARER", "PRIVATE",
					     "CERT" };
	struct strbuf up = STRBUF_INIT;
	int hit = 0;

	for (size_t i = 0; i < len; i++)
		strbuf_addch(&up, toupper((unsigned char)name[i]));
	for (size_t i = 0; i < ARRAY_SIZE(marks) && !hit; i++)
		hit = !!strstr(up.buf, marks[i]);
	strbuf_release(&up);
	return hit;
}

static enum MHD_Result sbx_metadata(struct MHD_Connection *c, struct request *r)
{
	struct strbuf body = STRBUF_INIT;
	struct strvec vars = STRVEC_INIT;
	int n = 0;

	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');

		if (eq && starts_with(*e, SANDBOXD_ENV_PREFIX) &&
		    !sensitive(*e, eq - *e))
			strvec_push(&vars, *e);
	}
	if (vars.nr)
		qsort(vars.v, vars.nr, sizeof(*vars.v), cmp_str);
	strbuf_addstr(&body, "{\"env\":{");
	for (size_t i = 0; i < vars.nr; i++) {
		const char *eq = strchr(vars.v[i], '=');

		strbuf_addstr(&body, n++ ? "," : "");
		json_add_string(&body, vars.v[i], eq - vars.v[i]);
		strbuf_addch(&body, ':');
		json_add_str(&body, eq + 1);
	}
	strbuf_addstr(&body, "}}");
	strvec_clear(&vars);
	return reply_json(c, r, 200, &body);
}

enum MHD_Result handle_sandboxd(struct MHD_Connection *c, struct request *r)
{
	/* "/v1/files/<path>": the path value after the route's '/' */
	const char *path = "";

	skip_prefix(r->url, "/v1/files/", &path);

	switch (r->route) {
	case R_SBX_GET:
		return sbx_get(c, r, path);
	case R_SBX_PUT:
		return sbx_put(c, r, path);
	case R_SBX_DELETE:
		return sbx_delete(c, r, path);
	case R_SBX_HEALTH:
		return sbx_health(c, r);
	case R_SBX_METADATA:
		return sbx_metadata(c, r);
	default:
		break;
	}
	if (r->bad_path)
		return sbx_error(c, r, 400, "path must not contain NUL bytes");
	return sbx_error(c, r, r->status ? r->status : 404,
			 r->status == 405 ? "method not allowed" : "not found");
}
