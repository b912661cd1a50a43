#ifndef RUN_COMMAND_H
#define RUN_COMMAND_H

#include "compat.h"
#include "strbuf.h"

/*
 * Run argv (no shell; argv[0] looked up on PATH unless it holds a '/')
 * with stdin from /dev/null and stdout and stderr appended to out (at
 * most 64 KiB kept), for at most timeout_ms (0: no limit; then it is
 * killed with SIGKILL). For the short probes of doctor and isolate
 * (`bwrap --version`, `go version`, ...): commands in sandboxes use
 * lib/exec.h instead. Returns the wait status, or -1 if it could not
 * be started. Prints nothing.
 */
int run_capture(const char *const *argv, struct strbuf *out, int timeout_ms);

/*
 * run_capture() with the environment env (a NULL-terminated list of
 * "K=V"; NULL: gosbx's own) in directory dir (NULL: the current one;
 * one that cannot be entered gives the status of exit 127).
 */
int run_capture_in(const char *const *argv, const char *const *env,
		   const char *dir, struct strbuf *out, int timeout_ms);

/* True if a wait status says the command exited 0. */
int exited_ok(int status);

#endif /* RUN_COMMAND_H */
