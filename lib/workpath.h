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

/* True if path equals root or lies under it (string prefix + '/'). */
int workpath_within(const char *root, const char *path);

#endif /* WORKPATH_H */
