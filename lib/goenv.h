#ifndef GOENV_H
#define GOENV_H

#include "compat.h"
#include "strbuf.h"

/*
 * `go env` of a go binary, asked once and kept: in memory for the
 * process (an MCP server opens many sandboxes) and on disk for the
 * next gosbx, so that `gosbx open`, `gosbx resume` and netd do not
 * each spend 6-12 ms on a go process (issue 20: resume in <= 50 ms).
 *
 * One run answers every name of GOENV_NAMES: `<go> env -json
 * <names>` with the caller's environment but GOTOOLCHAIN=local (this
 * go, not the one a go.mod or GOTOOLCHAIN would switch to) in "/" (no
 * go.mod, go.work or toolchain line of the caller's directory
 * matters).
 *
 * The disk copy is $XDG_CACHE_HOME/gosbx/goenv/<hash> (or
 * ~/.cache/gosbx/goenv; GOSBX_GOENV_CACHE=off: none), one file per
 * key. The key is everything the answer depends on, compared in full,
 * not only by its hash:
 *   - the go binary's real path, device, inode, size and mtime (ns);
 *   - the same of $GOROOT/go.env next to it (the release's defaults)
 *     and of the user's go env file ($GOENV, else
 *     $XDG_CONFIG_HOME/go/env, else ~/.config/go/env), or their
 *     absence: `go env -w` changes the answer and the key;
 *   - every GO*, CGO_* variable of the environment, HOME and
 *     XDG_CONFIG_HOME.
 * A go that is a script reading other files than these is asked once
 * per change of its own file only; gosbx's own callers take the
 * binary the sandbox runs.
 */

/* The names one run answers (a NULL-terminated list). */
extern const char *const GOENV_NAMES[];

/*
 * The value of name (one of GOENV_NAMES) for the go binary at go (an
 * absolute path, or a name looked up on PATH), appended to out ("" for
 * an unset variable). Thread-safe. Returns 0, or -1 with the reason
 * appended to why (the go could not run, failed or answered no JSON;
 * a name not in GOENV_NAMES) and out untouched. Prints nothing.
 */
int goenv_get(const char *go, const char *name, struct strbuf *out,
	      struct strbuf *why);

/*
 * The values of names (each one of GOENV_NAMES, n of them) for go,
 * one a line, in order, appended to out: the format of `go env NAME...`.
 * 0 or -1 with why, as goenv_get().
 */
int goenv_lines(const char *go, const char *const *names, size_t n,
		struct strbuf *out, struct strbuf *why);

#endif /* GOENV_H */
