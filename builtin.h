#ifndef BUILTIN_H
#define BUILTIN_H

#include "compat.h"
#include "parse-options.h"
#include "session/session.h"

#include <signal.h>

/*
 * How to add a command `gosbx foo`:
 *   1. write builtin/foo.c with
 *        int cmd_foo(int argc, const char **argv, struct gosbx_ctx *ctx);
 *      argv[0] is "foo"; options are parsed with parse_options() and an
 *      option table; the return value is the exit status;
 *   2. declare it below;
 *   3. add { "foo", cmd_foo, flags, "one-line summary" } to commands[]
 *      in gosbx.c, keeping the table alphabetical;
 *   4. write Documentation/gosbx-foo.txt (its SYNOPSIS must match
 *      `gosbx foo -h`; t0001 checks) and tests in t/.
 * A command is listed in `gosbx -h` only once it works.
 */

/* Global state the dispatcher prepares for a command. */
struct gosbx_ctx {
	const char *backend; /* "local", "kube" or "url"; never NULL */
	/*
	 * the backend's ops (lib/session/session.h): commands ask its caps and
	 * ops, never its name; never NULL once dispatched
	 */
	const struct backend_ops *ops;
	const char *url; /* runtime base URL for the url backend */
	int verbose;

	/*
	 * The session options the global options set: the kube backend's
	 * (kubeconfig, context, namespace, template, warm_pool,
	 * api_version, gateway, api_url, router_token, open_timeout_ms;
	 * Documentation/protocol/kubernetes.md), NULL/0 for the defaults;
	 * backend and url are set by ctx_session_opts(). A new kube option is
	 * one field of struct session_opts and one option line in gosbx.c (and
	 * one line in ctx_global_args() to pass it on to a child gosbx).
	 */
	struct session_opts session;
	const char *router_token_file; /* --router-token-file, or NULL */
	/*
	 * The global options given on the command line that only some
	 * backends take (a bit each, gosbx.c's backend_options[]), for
	 * ctx_check_backend_options()
	 */
	unsigned backend_options;
};

/*
 * Set all of *o (lib/session/session.h) to the session options of the global
 * options (ctx->session, ctx->backend, ctx->url, ctx->verbose); everything else
 * is zero. Call it first, then set the command's own fields (limits, claim,
 * ...): it overwrites them. Declared here so every builtin uses the same rule.
 */
void ctx_session_opts(const struct gosbx_ctx *ctx, struct session_opts *o);

/*
 * Append to argv the global options of ctx that were given (backend,
 * url, -v, and the kube options), for a command that runs another gosbx
 * (e.g. `gosbx smoke` starting `gosbx mcp`). The router token itself is
 * never put on a command line: --router-token-file is passed on, and
 * $GOSBX_ROUTER_TOKEN reaches the child through the environment.
 */
struct strvec;
void ctx_global_args(const struct gosbx_ctx *ctx, struct strvec *argv);

/*
 * Refuse a global option given on the command line that the backend of
 * ctx does not take (--context without --backend=kube): 0, or -1 with
 * error() naming the option and the backend it needs; the caller exits
 * 129. The dispatcher calls it before every command that needs a
 * backend, except those with OWN_BACKEND, which call it once their own
 * --backend is applied. Options from the environment are not checked.
 */
int ctx_check_backend_options(const struct gosbx_ctx *ctx);

/* 1 if name is a backend: "local", "kube" or "url" (else 0) */
int known_backend(const char *name);

/*
 * Switch ctx to the backend name (a command's own --backend). Returns
 * 0, or -1 when name is not a backend (nothing changed).
 */
int ctx_set_backend(struct gosbx_ctx *ctx, const char *name);

/*
 * Check a claim name the user gave, as the backend of ctx takes it:
 * session_check_claim_name() unless the backend has BACKEND_FREE_NAMES
 * (url: the name is the runtime URL). 0, or -1 with error().
 */
int ctx_check_claim_name(const struct gosbx_ctx *ctx, const char *name);

int cmd_claims(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_close(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_cp(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_demo(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_doctor(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_open(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_attach(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_exec(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_jobs(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_kill(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_logs(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_wait(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_mcp(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_netd(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_push(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_resume(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_smoke(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_suspend(int argc, const char **argv, struct gosbx_ctx *ctx);
int cmd_version(int argc, const char **argv, struct gosbx_ctx *ctx);

/*
 * The `gosbx exec --claim=<name>` REPL on a terminal (builtin/repl.c):
 * reads lines with readline and runs each in the open session s until
 * :quit or end of input. *sig is the flag the caller's SIGINT, SIGTERM
 * and SIGHUP handler sets to the signal number, without SA_RESTART:
 * SIGINT cancels the running command or clears the line, the others
 * end the REPL. Returns the exit status (0, 128 + the signal that
 * ended it, or 125 when readline cannot be loaded: lib/dl/dl.h). The
 * caller closes or disconnects s.
 */
struct session;
int exec_repl(struct session *s, volatile sig_atomic_t *sig);

/* flags in the commands[] table */
#define NEED_BACKEND (1 << 0)
/* an internal command (netd): not listed, no man page */
#define HIDDEN_COMMAND (1 << 1)
/*
 * the command takes its own --backend (doctor, claims) and calls
 * ctx_check_backend_options() itself
 */
#define OWN_BACKEND (1 << 2)

/*
 * Exit statuses: one rule for every command, written once in gosbx(1)
 * "EXIT STATUS" (Documentation/gosbx.txt). Besides these, 0 is success,
 * gosbx exec passes its command's own status through, and 128+N means
 * killed (exec: the command) or interrupted (any command) by signal N.
 */
/* the command ran and its verdict is no: a doctor check, a demo or
 * smoke step failed */
#define EXIT_NO 1
/* gosbx exec: the command timed out (--timeout) */
#define EXIT_TIMEOUT 124
/* gosbx or the sandbox failed: a sandbox that cannot be opened,
 * reached or deleted, a local file that cannot be read, a missing
 * library, a transport failure; the error names the layer */
#define EXIT_OWN_FAILURE 125
/* gosbx exec: the command ran out of memory (128 + SIGKILL) */
#define EXIT_OOM 137
/* a usage error: PARSE_OPT_USAGE_STATUS (lib/parse-options.h) */
#define EXIT_USAGE PARSE_OPT_USAGE_STATUS

/*
 * Open the kept sandbox of a job named "<claim>/<id>", or "<id>" with
 * claim_opt (--claim), for builtins: 0 with s open and *id (owned by
 * the caller) set; EXIT_USAGE after error() for a malformed name;
 * EXIT_OWN_FAILURE when the sandbox cannot be opened (builtin/jobs.c).
 */
int job_session_open(struct gosbx_ctx *ctx, const char *ref,
		     const char *claim_opt, const char *purpose,
		     struct session *s, char **id);

#endif /* BUILTIN_H */
