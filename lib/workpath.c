#include "compat.h"
#include "usage.h"
#include "workpath.h"

#include <sys/stat.h>

int workpath_clean(const char *path, struct strbuf *out)
{
	size_t base = out->len;
	const char *p = path;

	while (*p) {
		const char *seg = p;
		size_t n;

		while (*p && *p != '/')
			p++;
		n = p - seg;
		if (*p == '/')
			p++;
		if (!n || (n == 1 && seg[0] == '.'))
			continue;
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			char *slash;

			if (out->len == base)
				return -1;
			slash = memrchr(out->buf + base, '/', out->len - base);
			strbuf_setlen(out, slash ? (size_t)(slash - out->buf)
						 : base);
			continue;
		}
		if (out->len > base)
			strbuf_addch(out, '/');
		strbuf_add(out, seg, n);
	}
	return 0;
}

int workpath_sandbox(const char *what, const char *path, struct strbuf *rel,
		     int *dir)
{
	size_t base = rel->len;
	const char *p = path;

	if (!*path)
		return error("%s: the path is empty; write '.' or '/app' for "
			     "/app itself",
			     what);
	if (*path == '/') {
		if (!skip_prefix(path, "/app", &p) || (*p && *p != '/'))
			return error("%s: '%s' is outside /app: a path in a "
				     "sandbox is relative to /app or under it",
				     what, path);
		if (*p)
			p++;
	}
	while (*p) {
		const char *seg = p;
		size_t n;

		while (*p && *p != '/')
			p++;
		n = p - seg;
		if (*p == '/')
			p++;
		if (!n || (n == 2 && seg[0] == '.' && seg[1] == '.')) {
			strbuf_setlen(rel, base);
			return error(n ? "%s: '%s' has a '..' segment: a path "
					 "in a sandbox stays under /app"
				       : "%s: '%s' has an empty segment",
				     what, path);
		}
		if (n == 1 && seg[0] == '.')
			continue;
		if (rel->len > base)
			strbuf_addch(rel, '/');
		strbuf_add(rel, seg, n);
	}
	if (dir)
		*dir = path[strlen(path) - 1] == '/';
	return 0;
}

int workpath_within(const char *root, const char *path)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return path[0] == '/';
	return !strncmp(root, path, n) && (path[n] == '\0' || path[n] == '/');
}

/* Resolve a path whose last existing component may be a dangling link. */
static int resolve_existing(const char *root, const char *full,
			    struct strbuf *out, int depth)
{
	struct strbuf prefix = STRBUF_INIT, rest = STRBUF_INIT;
	char *real = NULL;
	int ret = -1;
	size_t cut = strlen(full);

	if (depth > 40)
		return -1; /* symlink loop */
	strbuf_addstr(&prefix, full);
	/* find the longest prefix that realpath() can resolve */
	for (;;) {
		real = realpath(prefix.buf, NULL);
		if (real)
			break;
		{
			char *slash = strrchr(prefix.buf, '/');
			if (!slash || slash == prefix.buf) {
				strbuf_setlen(&prefix, 1);
				real = realpath("/", NULL);
				cut = 0;
				break;
			}
			strbuf_setlen(&prefix, slash - prefix.buf);
			cut = prefix.len;
		}
	}
	strbuf_addstr(&rest, full + cut);
	if (!real)
		goto out;
	/* the first missing component may be a dangling symlink */
	if (rest.len > 1) {
		const char *seg = rest.buf + 1;
		const char *end = strchr(seg, '/');
		struct strbuf link = STRBUF_INIT, target = STRBUF_INIT;
		struct stat st;

		strbuf_addf(&link, "%s/%.*s", strcmp(real, "/") ? real : "",
			    end ? (int)(end - seg) : (int)strlen(seg), seg);
		if (!lstat(link.buf, &st) && S_ISLNK(st.st_mode)) {
			char buf[PATH_MAX];
			ssize_t n = readlink(link.buf, buf, sizeof(buf) - 1);
			struct strbuf joined = STRBUF_INIT;

			if (n < 0) {
				strbuf_release(&link);
				goto out;
			}
			buf[n] = '\0';
			if (buf[0] == '/')
				strbuf_addstr(&target, buf);
			else
				strbuf_addf(&target, "%s/%s", real, buf);
			if (end)
				strbuf_addstr(&target, end);
			/* lexical clean of the absolute target */
			strbuf_addch(&joined, '/');
			if (workpath_clean(target.buf + 1, &joined) < 0) {
				strbuf_release(&joined);
				strbuf_release(&target);
				strbuf_release(&link);
				goto out;
			}
			ret = resolve_existing(root, joined.buf, out,
					       depth + 1);
			strbuf_release(&joined);
			strbuf_release(&target);
			strbuf_release(&link);
			goto out;
		}
		strbuf_release(&link);
	}
	if (strcmp(real, "/"))
		strbuf_addstr(out, real);
	strbuf_addbuf(out, &rest);
	if (!out->len)
		strbuf_addch(out, '/');
	ret = 0;
out:
	free(real);
	strbuf_release(&prefix);
	strbuf_release(&rest);
	return ret;
}

int workpath_resolve(const char *root, const char *path, struct strbuf *abs,
		     struct strbuf *rel)
{
	struct strbuf clean = STRBUF_INIT, full = STRBUF_INIT;
	struct strbuf resolved = STRBUF_INIT;
	int ret = -1;

	while (*path == '/')
		path++;
	if (workpath_clean(path, &clean) < 0)
		goto out;
	strbuf_addstr(&full, root);
	if (clean.len) {
		if (strcmp(root, "/"))
			strbuf_addch(&full, '/');
		strbuf_addbuf(&full, &clean);
	}
	if (resolve_existing(root, full.buf, &resolved, 0) < 0)
		goto out;
	if (!workpath_within(root, resolved.buf))
		goto out;
	strbuf_addbuf(abs, &resolved);
	if (rel) {
		size_t n = strcmp(root, "/") ? strlen(root) : 0;
		const char *r = resolved.buf + n;
		strbuf_addstr(rel, *r ? r : "/");
	}
	ret = 0;
out:
	strbuf_release(&clean);
	strbuf_release(&full);
	strbuf_release(&resolved);
	return ret;
}
