#ifndef WORKPATH_H
#define WORKPATH_H

#include "compat.h"
#include "strbuf.h"

/*
 * Resolving a client-supplied path under the runtime's workdir, by the
 * rules of Documentation/protocol/runtime-api.md ("Paths in /download, /list,
 * /exists"): leading slashes stripped, joined to the workdir, "." and ".."
 * resolved, existing symlinks resolved, and refused if the result
 * leaves the workdir.
 *
 * root: the workdir as realpath(3) gives it (absolute, no trailing
 *       slash unless it is "/").
 * path: the already percent-decoded request path.
 * abs:  receives the resolved absolute path (appended).
 * rel:  if not NULL, receives "/" + the resolved path relative to root
 *       ("/" for the root itself), as the upstream /exists answers.
 * Returns 0, or -1 (nothing printed, abs and rel untouched) if the
 * path leaves the workdir, or a chain of dangling symlinks is more
 * than 40 deep or cannot be read (a symlink loop is refused: fail
 * closed). ".." is applied lexically before symlinks, as Go's
 * filepath.Join does. A dangling symlink is resolved lexically through
 * its target. Missing components are allowed (the result may not
 * exist).
 */
int workpath_resolve(const char *root, const char *path, struct strbuf *abs,
		     struct strbuf *rel);

/*
 * Lexically clean a relative path: drop empty and "." segments, apply
 * "..". Returns 0 with the result appended to out (no leading or
 * trailing slash; "" for the root), or -1 if ".." climbs above the
 * start.
 */
int workpath_clean(const char *path, struct strbuf *out);

/*
 * The one rule for naming a place in a sandbox on gosbx's command line
 * (gosbx push --to, gosbx exec --cwd/-w and -f <local>:<dest>, gosbx cp
 * <claim>:<path>; Documentation/gosbx-cp.txt "PATHS IN A SANDBOX"): a path
 * is relative to /app, or absolute under /app ("/app" itself is /app),
 * with or without a trailing '/'; "." segments are dropped ("." and "./"
 * are /app). Judged from the text alone, so it is the same on every
 * backend.
 *
 * what:  how the path was given, for the error, e.g. "option '--cwd'".
 * path:  the path as the user wrote it.
 * rel:   receives (appended) the path relative to /app, without leading
 *        or trailing '/', "" for /app itself: what session_check_path()
 *        and the runtime take when it is not "".
 * dir:   if not NULL, set to 1 when path ends in '/' (a directory to put
 *        things into), else 0.
 * Returns 0, or -1 with error() (rel untouched) when path is empty,
 * absolute outside /app, or has a ".." or an empty ("a//b") segment.
 */
int workpath_sandbox(const char *what, const char *path, struct strbuf *rel,
		     int *dir);

/* True if path equals root or lies under it (string prefix + '/'). */
int workpath_within(const char *root, const char *path);

#endif /* WORKPATH_H */
