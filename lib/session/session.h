#ifndef SESSION_H
#define SESSION_H

#include "compat.h"
#include "strbuf.h"

#include <signal.h>

/*
 * The session API: one sandbox, opened (created or reattached),
 * used for many commands, then closed (deleted) or disconnected
 * (kept). The C counterpart of the seed's `goruntime` package
 * (seeds/000 "Running your own Go code", seeds/001), used by every
 * command and every MCP tool (Documentation/technical/design.md "Backends").
 *
 * Where a sandbox lives is a backend: "local" (bubblewrap on this
 * machine, lib/local/backend-local.c), "url" (any runtime server at a base
 * URL, lib/session/backend-url.c), "kube" (agent-sandbox,
 * lib/kube/backend-kube.c). Above the backend everything talks to the runtime
 * server (Documentation/protocol/runtime-api.md) and uses its extensions when
 * GET / lists them.
 *
 * Threads: one session may be used by one thread at a time, except
 * session_execute() calls on different sessions, which run in
 * parallel. Errors are reported with error() (usage.h); the text is
 * also in last_error() for callers that turn it into a tool result.
 */

/* Limits of a new local sandbox when session_opts leaves them at 0. */
#define SESSION_DEFAULT_MEMORY ((int64_t)2 << 30) /* bytes */
#define SESSION_DEFAULT_CPUS 2.0
#define SESSION_DEFAULT_PIDS 512

/* Options for session_open(). Zero-initialise, then set what you need. */
struct session_opts {
	const char *backend; /* "local" (default), "url", "kube" */
	const char *claim;   /* reattach to this claim; NULL: create one */
	const char *name;    /* name for a new claim; NULL: generated */
	const char *url;     /* url backend: runtime base URL */

	/* resource limits for a new local sandbox
	 * (Documentation/technical/design.md) */
	int64_t memory_bytes; /* 0: default 2 GiB; <0: none */
	int memory_set;	      /* the user asked: never degrade */
	int pids;	      /* 0: default 512; <0: none */
	int pids_set;
	double cpus; /* 0: default 2; <0: none */
	int cpus_set;
	/*
	 * local: quota of the claim's storage (/app, /tmp, HOME with the
	 * Go caches; lib/local/storage.h), bytes; 0: default 2 GiB where a
	 * quota can be applied; <0: none; > 0 is asked explicitly and
	 * never degrades
	 */
	int64_t disk_bytes;
	int network; /* the host's network namespace (unsafe) */
	/*
	 * Hosts a new sandbox may reach through the host-side proxy,
	 * Deno's --allow-net list (Documentation/protocol/network.md); NULL:
	 * none. A backend without BACKEND_ALLOW_NET refuses it.
	 */
	const char *allow_net;
	/*
	 * Go modules through the host's verified cache
	 * (Documentation/protocol/network.md): 0 on (the default), 1 off
	 * (--modules=off)
	 */
	int modules_off;
	/* --go: the Go of a new sandbox, a go binary or a GOROOT; NULL:
	 * the `go` on PATH. A backend without BACKEND_GO refuses it. */
	const char *go;
	int64_t ttl_ms; /* idle TTL of a kept claim (kube: of every
			 * claim, its shutdownTime); 0: 1 h */
	int keep;	/* the claim outlives this process (open --keep) */

	/* kube backend (Documentation/protocol/kubernetes.md); unused by the
	 * others */
	const char *namespace;	 /* NULL: the kubeconfig context's, else
				  * "default" (backend_defaults()) */
	const char *template;	 /* NULL: BACKEND_KUBE_TEMPLATE */
	int64_t open_timeout_ms; /* 0: 5 min */
	const char *kubeconfig;	 /* --kubeconfig: only this file; NULL:
				  * $KUBECONFIG, ~/.kube/config, in-cluster */
	const char *context;	 /* --context; NULL: current-context */
	const char *api_version; /* "v1alpha1"/"v1beta1"; NULL: newest
				  * served (discovery) */
	/*
	 * v1beta1 claims name a warm pool (spec.warmPoolRef); NULL: the
	 * namespace's pool of the template (lib/kube/backend-kube.h). Unused
	 * by v1alpha1 claims.
	 */
	const char *warm_pool;
	const char *gateway; /* reach the router at http://<addr> */
	const char *api_url; /* reach the router at this URL */
	/*
	 * the sandbox-router's namespace; NULL: the claims', else
	 * agent-sandbox-system (v1.0's)
	 */
	const char *router_namespace;
	/* NULL: a native port-forward to a ready router pod */
	const char *router_token; /* Authorization: Bearer to the router
				   * (kube) or the runtime (url) */
	/* set non-zero (a SIGINT handler) to stop waiting for Ready */
	volatile sig_atomic_t *cancel;

	/*
	 * gosbx -v: say more on stderr while opening (kube: each API call
	 * with its status and time)
	 */
	int verbose;
	/* a label that says who opened it, e.g. "mcp" or "exec" */
	const char *purpose;
	/*
	 * local: reattach to a dead or expired claim too, unconnected,
	 * to read its log (gosbx logs); session_gone() then says why
	 */
	int allow_dead;
};

/* The SandboxTemplate of the kube backend when none is given. */
#define BACKEND_KUBE_TEMPLATE "go-runtime-template"

/* Runtime features found in GET / (Documentation/protocol/runtime-api.md). */
#define SESSION_FEAT_EXEC_OPTIONS (1u << 0)
#define SESSION_FEAT_EXEC_STREAM (1u << 1)
#define SESSION_FEAT_ARCHIVE (1u << 2)
#define SESSION_FEAT_METRICS (1u << 3)
#define SESSION_FEAT_FILES (1u << 4)
#define SESSION_FEAT_EXEC_CANCEL (1u << 5)
#define SESSION_FEAT_EXEC_INTERACTIVE (1u << 6)
#define SESSION_FEAT_EXEC_INPUT (1u << 7)
#define SESSION_FEAT_LOGS (1u << 8)
#define SESSION_FEAT_JOBS (1u << 9)

struct backend_ops;
struct backend_proc_ops;
struct check_list;
struct claims_query;
struct doctor_opts;
struct http_client;
struct session_keepalive;

struct session {
	const struct backend_ops *ops;
	void *backend;		  /* the backend's state */
	char *claim;		  /* claim name (owned) */
	struct http_client *http; /* the runtime connection */
	/*
	 * A sandboxd server's gRPC side (session/sandboxd.h), set by
	 * sandboxd_connect() and freed by sandboxd_close(); NULL when the
	 * runtime is not sandboxd. Its REST side is http.
	 */
	struct sandboxd *sandboxd;
	unsigned features; /* SESSION_FEAT_* */
	/*
	 * A WebSocket upgrade to the runtime went unanswered (a proxy on
	 * the way holds upgrades): interactive_open() uses the input
	 * channel of separate requests from then on
	 */
	int no_websocket;
	char *server; /* "gosbx-runtime" or "" for upstream servers */
	/* GET /'s heartbeat_ms: /v1/exec sends an event at least this
	 * often (ms); 0: not said (upstream servers) */
	long heartbeat_ms;
	int keep; /* close() disconnects instead of deleting */
	struct session_keepalive *keepalive; /* see session_keepalive_start */
	/*
	 * The memory limit the backend applied to the sandbox, in bytes,
	 * for results that say what an out-of-memory kill hit; 0: unknown
	 * (a reattached claim, a template's limit) or none.
	 */
	int64_t memory_limit_bytes;
	/*
	 * What a sandbox created by session_open() got, as far as its
	 * backend knows (gosbx open -o json). The limits: -1 unknown (a
	 * reattached claim; a backend whose limits are a template's or a
	 * server's), 0 none (not asked for, or a default this host cannot
	 * apply), else the limit applied.
	 */
	struct session_granted {
		int64_t memory_bytes; /* bytes */
		double cpus;	      /* CPUs */
		int64_t pids;	      /* processes */
		int64_t disk_bytes;   /* quota of /app, /tmp, HOME */
		/* "go1.26.8" from <GOROOT>/VERSION; NULL unknown (owned) */
		char *go_version;
	} granted;
};

/* One file to write under /app before a command. */
struct session_file {
	const char *path; /* relative, validated like the seed */
	const char *data;
	size_t len; /* bytes */
};

/* What session_execute() runs. */
struct session_exec {
	const struct session_file *files; /* may be NULL */
	size_t nr_files;
	const char *command;	/* sh -c text in /app; required */
	int64_t timeout_ms;	/* 0: none */
	const char *const *env; /* "K=V" NULL-terminated, or NULL */
	const char *cwd;	/* relative to /app, or NULL */
	const char *stdin_data; /* or NULL */
	/* session_job_start(): output the runtime keeps, in bytes; 0: its
	 * default (64 MiB) */
	int64_t output_keep_bytes;
	size_t stdin_len;
	/*
	 * How many bytes of each stream the caller needs in res->out and
	 * res->err, the first ones (the totals and the tail window are
	 * kept whatever it says, on every backend); 0 or more than 8 MiB:
	 * 8 MiB, the upstream per-stream cap. A caller that only returns
	 * session_result_head_tail() passes SESSION_KEEP_HEAD_TAIL, so
	 * that a command printing 100 MB costs it 16 KiB a stream, not
	 * 8 MiB. on_output still sees every byte.
	 */
	size_t keep_bytes;
	/*
	 * Live output: called with each chunk (raw bytes) as the runtime
	 * streams it (exec-stream); without that extension, called once
	 * per stream at the end. Return <0 to cancel the command.
	 */
	int (*on_output)(int stream /* 1 stdout, 2 stderr */, const char *buf,
			 size_t len, void *data);
	void *data;
	/* Set non-zero (e.g. from a SIGINT handler) to cancel. */
	volatile sig_atomic_t *cancel;
	/* Called between phases: "writing files", "running". */
	void (*on_phase)(const char *phase, void *data);
	/*
	 * session_job_start() only: run the job on a terminal of cols x
	 * rows characters (0: the runtime's 80 x 24), its stdin, stdout
	 * and stderr (gosbx-runtime(1) "jobs").
	 */
	int tty;
	unsigned cols, rows;
};

/* The outcome of a command. */
struct session_result {
	int exit_code;	    /* -1 when signaled or not started */
	const char *reason; /* "exited", "timeout", "oom", ...; static */
	int signal;
	int64_t duration_ms; /* as measured by the runtime, else the client */
	int64_t cpu_ms;	     /* -1 when the server does not say */
	int64_t peak_rss_kb; /* -1 when the server does not say */
	struct strbuf out;   /* stdout as received, its first keep bytes */
	struct strbuf err;
	int out_truncated; /* bytes were dropped (here or by the server) */
	int err_truncated;
	size_t out_total; /* bytes of stdout received, kept or not */
	size_t err_total;
	struct strbuf out_tail; /* the last 8,192 to 16,384 bytes received */
	struct strbuf err_tail;
	/*
	 * The most bytes out and err each keep (session_exec.keep_bytes;
	 * session_execute() sets it); 0: 8 MiB. A caller that adds output
	 * itself (session_result_add_output()) may set it after
	 * session_result_init().
	 */
	size_t keep;
	/*
	 * The shell exited, but a process it left (`server &`) held the
	 * output past the runtime's wait delay: the result came without
	 * waiting for it, and what it writes later goes to the sandbox
	 * file held_output (empty: dropped). The runtime's output_held and
	 * held_output (gosbx-runtime(1), exec-options).
	 */
	int output_held;
	struct strbuf held_output;
	/*
	 * A line of gosbx's own about the result, set by the backend's
	 * exec_hook (e.g. how to get the Go a go.mod asks for); when set,
	 * session_execute() has added it to err and sent it through
	 * on_output as stream 2 after the command's own output.
	 */
	struct strbuf hint;
};

void session_result_init(struct session_result *res);
void session_result_release(struct session_result *res);

/*
 * Fill the status fields of res (exit_code, reason, signal,
 * duration_ms, cpu_ms, peak_rss_kb, *_truncated) from an exit event or
 * /execute answer o (Documentation/protocol/runtime-api.md); unknown reasons
 * become "exited" or "signaled". o is a json_t *.
 */
void session_result_from_json(struct session_result *res, const void *o);

/*
 * Open a sandbox: create a claim (opts->claim NULL) or reattach to
 * one, then connect to its runtime and read its features. On failure
 * after a claim was created, the claim is deleted again (rollback).
 * Returns 0, SESSION_BAD_OPTS (below), or -1 with error() saying which
 * step failed and why. s is initialised here; release it with session_close()
 * or session_disconnect() whatever happened later.
 */
int session_open(struct session *s, const struct session_opts *opts);

/*
 * session_open()'s answer when the options alone are wrong, before
 * anything was opened (the url backend without a URL; --allow-net or
 * --go where the backend cannot give them), with error() said: for a
 * command, a usage error (gosbx(1) EXIT STATUS 129).
 */
#define SESSION_BAD_OPTS (-2)

/*
 * Write the files, then run the command
 * (Documentation/protocol/runtime-api.md): files as one archive upload when the
 * server has `archive`, else the seed's per-file /upload (no key with '/') or
 * tar + `tar -xf` fallback; the command through /v1/exec when the server has
 * `exec-stream`, else /execute. Paths are validated as the seed does (not
 * empty, not absolute, no empty, "." or ".." segment) before anything is sent.
 * res must be initialised. Returns 0 when the command ran (whatever
 * its exit code), -1 with error() when it could not (bad path,
 * transport failure, cancelled before it started), 1 if cancelled
 * through exec->cancel or on_output (res holds what arrived).
 *
 * The runtime is not trusted with the client's memory: an /execute
 * answer over 97 MiB (more than two 8 MiB streams can take in JSON), a
 * /v1/exec line over 8 MiB or a line that is not an event ends the call
 * with -1 and "execute failed: runtime answer over N bytes..." (and a
 * cancel of the command), whatever the runtime goes on sending.
 */
int session_execute(struct session *s, const struct session_exec *exec,
		    struct session_result *res);

/*
 * Copy local files or trees into the sandbox under dir (relative to
 * /app; NULL or "" = /app) as one tar stream: POST /v1/archive when the
 * server has `archive`, else /upload of a tar and `tar -xf`. Returns 0
 * or -1 with error().
 */
int session_push(struct session *s, const char *const *paths, size_t nr,
		 const char *dir);

/*
 * Stream a tar of path (a file or a tree, relative to /app; "" or "."
 * is /app) from the sandbox into fd, as it arrives (GET /v1/archive,
 * extension `archive`; entry names are relative to /app, symlinks kept
 * as symlinks, modes & 0777 and mtimes kept; files with holes as pax
 * sparse entries). cancel as in struct http_req (may be NULL).
 * max_bytes: the most archive bytes to take (0: no bound); a longer
 * archive stops the transfer there. Returns 0, 1 when cancelled,
 * SESSION_FETCH_TOO_LARGE with error() ("... is larger than N bytes")
 * when the archive is over max_bytes, or -1 with error(): no `archive`
 * extension ("the runtime of claim 'x' cannot send archives"), a bad or
 * missing path, a write to fd failing.
 */
#define SESSION_FETCH_TOO_LARGE 2
int session_fetch_archive(struct session *s, const char *path, int fd,
			  uint64_t max_bytes, volatile sig_atomic_t *cancel);

/*
 * `gosbx logs`: the runtime's request log of the claim through the
 * backend's logs op (struct backend_ops below). Returns 0, or -1
 * with error() (no such log; a backend that cannot show it says so).
 */
int session_logs(struct session *s, int follow, int fd,
		 volatile sig_atomic_t *cancel);

/*
 * The logs op of the backends that reach the runtime over HTTP (url,
 * kube): GET /v1/logs of the runtime's `logs` extension
 * (Documentation/gosbx-runtime.txt), the last MiB it logged, written
 * to fd through session_write_sandbox_text(); with
 * follow, asked again every 200 ms from where the last answer ended
 * until *cancel is set (cancel may be NULL without follow). Returns 0,
 * or -1 with error(): a runtime without the extension (named), a
 * transport failure, a malformed answer, a failed write to fd.
 */
int session_http_logs(struct session *s, int follow, int fd,
		      volatile sig_atomic_t *cancel);

/*
 * The backend's answer to "is the sandbox of s gone, and why"
 * (backend_ops.gone): 1 with why filled (appended), 0 when it runs or
 * the backend cannot tell.
 */
int session_gone(struct session *s, struct strbuf *why);

/*
 * Write text that a sandbox could have written (a runtime's log) to fd
 * so that a terminal shows it and acts on none of it: C0 and C1
 * controls (CSI, OSC as U+009B, U+009D too), DEL and invalid UTF-8
 * escaped by utf8_escape_into() (lib/utf8.h), newlines and tabs kept.
 * pend holds what is not written yet: the caller appends each chunk
 * to it and calls this; an incomplete UTF-8 sequence at its end waits
 * for the next chunk unless final. Returns 0, or -1 with errno set
 * when the write failed.
 */
int session_write_sandbox_text(int fd, struct strbuf *pend, int final);

struct http_resp;
/*
 * Whether resp is gosbx-runtime's 409 for a stdin request that met
 * another one still being written ("another stdin request of this
 * command|job is in progress"; it wrote none of the body).
 */
int session_stdin_busy(const struct http_resp *resp);

/*
 * Whether a stdin request (POST /v1/exec/<id>/stdin, POST
 * /v1/jobs/<id>/stdin; Documentation/gosbx-runtime.txt) that got resp
 * should be sent again, after a pause this call takes: when
 * session_stdin_busy(resp). Another client (a second
 * `gosbx attach`) is writing, or an older gosbx-runtime, which let go
 * of the input only after answering, was still ending the chunk before
 * this one. tries: the caller's count, 0 before the first request; the
 * pauses grow from 1 ms to 100 ms and end after about 30 s in all.
 * cancel (or NULL): a pause ends early when it becomes non-zero.
 * Returns 1 to send again, 0 not to (another answer, or no time left).
 */
int session_stdin_retry(const struct http_resp *resp, unsigned *tries,
			volatile sig_atomic_t *cancel);

/*
 * Fetch one file of the sandbox (path relative to /app) into out.
 * Returns 0, or -1 with error() (missing file, a directory, escape,
 * a file over 256 MiB: "answer over 268435456 bytes").
 */
int session_get(struct session *s, const char *path, struct strbuf *out);

/*
 * Wipe /app (build and module caches are kept, they live elsewhere):
 * the seed's --ephemeral between tool calls, the REPL's :reset. A
 * command may have left read-only directories behind, so everything
 * under /app is first made writable and searchable by its owner
 * (chmod -R u+rwX, which never follows symlinks), then every entry is
 * removed; what still cannot be removed (not the sandbox user's, a
 * mount) is left in place: a reset never locks a session, the next
 * command runs anyway, as the seed (which ignores reset errors) does.
 *
 * left: if not NULL, gets (appended) what was left: the remover's
 * messages, at most 10 lines, e.g. "rm: cannot remove './d/f':
 * Permission denied", and "... (N more lines)" after them.
 *
 * Returns 0 when /app is empty, 1 when something was left (left says
 * what), -1 with error() when the reset could not run at all (the
 * runtime cannot be reached).
 */
int session_reset(struct session *s, struct strbuf *left);

/*
 * GET /v1/metrics into the given fields (any pointer may be NULL).
 * Returns 0, or -1 when the server has no `metrics` or failed.
 */
int session_metrics(struct session *s, double *cpu_percent, double *mem_mib,
		    int64_t *disk_bytes, int *processes);

/*
 * Keep an idle sandbox alive while its user lives: a thread touches the
 * sandbox (GET / on its own connection, and the backend's touch) every
 * interval_ms, so the local runtime's idle TTL (and, later, a
 * Kubernetes claim's shutdownTime) does not end a sandbox that a
 * long-lived client (gosbx mcp) still holds; when the client dies the
 * touches stop and the TTL cleans up. Stopped by session_close() and
 * session_disconnect(). Returns 0, or -1 with error().
 */
int session_keepalive_start(struct session *s, int64_t interval_ms);

/* Delete the sandbox and free s. Returns 0 or -1 (s freed anyway). */
int session_close(struct session *s);

/* Keep the sandbox, drop the connection, free s. Returns 0. */
int session_disconnect(struct session *s);

/*
 * The backend's bracket around a command that session_execute() does
 * not run (a runtime job, lib/session/jobs.h): after 0 just before it
 * starts, 1 with its result once it ended, which may then say "oom"
 * where the backend counts out-of-memory kills (local) and carry a
 * hint (res->hint, not added to the output).
 */
void session_exec_hook(struct session *s, int after,
		       struct session_result *res);

/*
 * Seed output truncation for people and agents (Documentation/protocol/mcp.md,
 * seed 000): a text longer than 16,384 bytes keeps its first 8,192 and last
 * 8,192 bytes with "\n... [N bytes elided] ...\n" between them (N =
 * bytes removed). The cuts are at exact byte counts, as the seed does:
 * a character cut in two is repaired later by UTF-8 sanitizing (U+FFFD).
 * Returns 1 if sb was shortened, else 0.
 */
int session_truncate_head_tail(struct strbuf *sb);

/*
 * What session_result_head_tail() needs kept of each stream
 * (session_exec.keep_bytes): a stream of at most 16,384 bytes is
 * returned whole, a longer one cut to its first 8,192 bytes and the
 * tail window.
 */
#define SESSION_KEEP_HEAD_TAIL ((size_t)16384)

/*
 * The same seed truncation applied to everything the command wrote,
 * not just what was kept in res->out/err: each stream of res whose
 * total is past 16,384 bytes is replaced by its first 8,192 bytes, the
 * marker with N = total - 16,384, and its last 8,192 bytes (from the
 * tail window), so the final error or panic of a long output survives.
 * Sets *_truncated for a stream that was cut. Returns 1 if a stream
 * was cut, else 0. For MCP tool results (Documentation/protocol/mcp.md).
 */
int session_result_head_tail(struct session_result *res);

/*
 * Add len bytes of a command's output (stream 1 stdout, 2 stderr) to res
 * as session_execute() does: the first res->keep bytes (0: 8 MiB) in
 * out/err, setting *_truncated when a byte is not kept, the totals and
 * the tail window (for session_result_head_tail()).
 */
void session_result_add_output(struct session_result *res, int stream,
			       const char *buf, size_t len);

/*
 * Validate a relative file path as the seed's client does. Returns 0,
 * or -1 with error() naming the path and what is wrong.
 */
int session_check_path(const char *path);

/* Claim names: [a-z0-9][a-z0-9-]{0,62}, no '/', no "..". 0 or -1. */
int session_check_claim_name(const char *name);

/* ---- backends ---- */

/*
 * Capability bits of a backend (struct backend_ops.caps), asked by the
 * commands instead of the backend's name (like curl's SSLSUPP_* bits of
 * struct Curl_ssl): a fourth backend sets its bits and ops and touches
 * no command.
 */
/*
 * A sandbox exists without a claim (url: the runtime at --url), so
 * `push` and the exec REPL need no --claim, and opening one creates
 * nothing.
 */
#define BACKEND_IMPLICIT_SANDBOX (1u << 0)
/*
 * Claim names are the backend's own (url: the runtime URL) and are not
 * checked with session_check_claim_name().
 */
#define BACKEND_FREE_NAMES (1u << 1)
/* Sandboxes have a namespace and a template (kube; demo's log line) */
#define BACKEND_NAMESPACES (1u << 2)
/*
 * The backend enforces session_opts.allow_net (local: a host-side proxy
 * that is the sandbox's only way out) and serves Go modules (modules_off
 * means something)
 */
#define BACKEND_ALLOW_NET (1u << 3)
/* The backend runs the Go that session_opts.go names (local) */
#define BACKEND_GO (1u << 4)
/*
 * The backend talks to a Kubernetes API server (kube): it takes the
 * global options --kubeconfig, --context, --namespace, --template,
 * --warm-pool, --api-version, --gateway, --api-url and --open-timeout,
 * which are an error with any other backend (gosbx(1))
 */
#define BACKEND_KUBE_API (1u << 5)
/*
 * The backend sends session_opts.router_token (kube: to the router,
 * url: to the runtime): it takes --router-token-file
 */
#define BACKEND_BEARER_TOKEN (1u << 6)
/*
 * The backend sets every sandbox's limits itself (local: cgroups):
 * session_opts.memory_bytes and cpus of 0 mean SESSION_DEFAULT_MEMORY
 * and SESSION_DEFAULT_CPUS, < 0 no limit. Without the bit, 0 leaves the
 * limit to the backend (kube: the template's).
 */
#define BACKEND_DEFAULT_LIMITS (1u << 7)

/*
 * What a backend decides when the caller leaves it NULL in
 * session_opts (backend_defaults()). Strings owned; release with
 * backend_defaults_release().
 */
struct backend_defaults {
	char *namespace; /* kube: --namespace, else the kubeconfig
			  * context's, else "default" */
	char *template;	 /* kube: --template, else BACKEND_KUBE_TEMPLATE */
	/*
	 * The limits and idle TTL of a new sandbox when opts leaves them
	 * at 0, as the backend applies them where the host can (local:
	 * SESSION_DEFAULT_*, STORAGE_DEFAULT_DISK, 1 h); 0 where the
	 * backend decides none (kube: the template's; url: the server's).
	 * For `gosbx version`.
	 */
	int64_t memory_bytes; /* bytes */
	double cpus;	      /* CPUs */
	int pids;	      /* processes */
	int64_t disk_bytes;   /* quota of /app, /tmp and HOME, bytes */
	int64_t ttl_ms;	      /* idle TTL of a kept claim, milliseconds */
};

/*
 * A backend creates, finds and deletes claims and says how to reach
 * their runtime; struct session does the rest. Each function reports
 * its own errors with error(). An op that may be NULL is one the
 * backend does not have; the commands say so instead of pretending.
 */
struct backend_ops {
	const char *name;
	unsigned caps; /* BACKEND_* */
	/*
	 * The smallest limits a new sandbox of the backend starts with,
	 * 0 for no minimum: a smaller --memory (bytes), --pids or --disk
	 * (bytes) is refused by limit_args_apply() as a bad option value
	 * (gosbx(1) EXIT STATUS 129), before anything is opened.
	 */
	int64_t min_memory_bytes;
	int min_pids;
	int64_t min_disk_bytes;
	/*
	 * The values the backend takes for what opts leaves NULL (kube:
	 * the namespace of the kubeconfig context, read without a
	 * request). 0, or -1 (kubeconfig unreadable: reported by
	 * session_open() later, not here); d is filled as far as known
	 * either way. May be NULL: nothing to decide.
	 */
	int (*defaults)(const struct session_opts *opts,
			struct backend_defaults *d);
	/*
	 * Delete the claim name without connecting to its sandbox
	 * (`gosbx close`). 0, or -1 with error() ("no such claim"). NULL:
	 * the backend owns nothing to delete (url).
	 */
	int (*delete_claim)(const struct session_opts *opts, const char *name);
	/*
	 * Check that the claim name exists (`gosbx close --disconnect`
	 * where there is no connection to drop). 0 or -1 with error().
	 * NULL: reattach and disconnect through session_open().
	 */
	int (*keep_claim)(const struct session_opts *opts, const char *name);
	/*
	 * Delete every claim gosbx made here (`gosbx close --all`),
	 * calling closed (may be NULL) with each deleted name. 0, or -1
	 * with error() when the list or a delete failed (the others are
	 * still deleted). NULL: the backend has no such list (url).
	 */
	int (*delete_all)(const struct session_opts *opts,
			  void (*closed)(const char *name, void *data),
			  void *data);
	/*
	 * `gosbx suspend`: stop every process of the kept claim name and
	 * free what it holds, keeping its files, so that resume_claim
	 * starts it again with the isolation and limits it was opened
	 * with (gosbx-suspend(1)); `gosbx resume`: that start, waiting
	 * until the sandbox is ready. Both return 0 when done, 1 when the
	 * claim already was in that mode, -1 with error() (a claim that
	 * is not kept, a backend API without suspension: the error says
	 * so). NULL: the backend cannot (url).
	 */
	int (*suspend_claim)(const struct session_opts *opts, const char *name);
	int (*resume_claim)(const struct session_opts *opts, const char *name);
	/* create (opts->claim NULL) or find a claim; set s->claim and
	 * s->http (connected client for the runtime). 0 or -1. */
	int (*open)(struct session *s, const struct session_opts *opts);
	/*
	 * The runtime the backend drives instead of gosbx-runtime's API,
	 * as messages name it ("sandboxd", KEP-539.2): what it lacks of
	 * that API (jobs) is said of it, not of an old gosbx-runtime. NULL:
	 * gosbx-runtime's API.
	 */
	const char *runtime;
	/*
	 * The backend runs commands itself (sandboxd's ProcessService,
	 * lib/session/sandboxd.h) instead of the runtime API: set by an
	 * open that found such a server; session_open() then reads no
	 * features (GET /) and session_execute() calls this with the
	 * command (no files: "cannot write files" error). Returns as
	 * session_execute(). NULL: the runtime API.
	 */
	int (*run)(struct session *s, const struct session_exec *e,
		   struct session_result *res);
	/*
	 * The backend moves files itself (sandboxd's REST files API,
	 * lib/session/sandboxd.h) instead of the runtime API's archive
	 * and /upload: write_files writes a command's files
	 * (session_execute()), push is session_push(), fetch_archive is
	 * session_fetch_archive(); each with the arguments, answers and
	 * errors of that function. NULL: the runtime API.
	 */
	int (*write_files)(struct session *s, const struct session_file *files,
			   size_t nr);
	int (*push)(struct session *s, const char *const *paths, size_t nr,
		    const char *dir);
	int (*fetch_archive)(struct session *s, const char *path, int fd,
			     uint64_t max_bytes, volatile sig_atomic_t *cancel);
	/*
	 * session_get() done by the backend (sandboxd's GET /v1/files/):
	 * at most max_bytes (bytes) of path appended to out; 0, or -1 with
	 * error(). NULL: the runtime API's /download.
	 */
	int (*get)(struct session *s, const char *path, size_t max_bytes,
		   struct strbuf *out);
	/*
	 * The backend drives an interactive command itself (sandboxd's
	 * Start with WriteStdin, ResizeTTY, SendSignal): interactive_open()
	 * uses it instead of the runtime's channel. NULL: the runtime's.
	 */
	const struct backend_proc_ops *proc;
	/* delete the claim; 0 or -1 */
	int (*destroy)(struct session *s);
	/* drop the connection but keep the claim; may be NULL */
	void (*detach)(struct session *s);
	/*
	 * `gosbx claims`: print the backend's claims (lib/session/claims.h); 0
	 * or -1 with error(). NULL: the backend has no claims to list (url).
	 */
	int (*list)(const struct claims_query *q);
	/*
	 * `gosbx claims prune`: remove the expired, failed and dead
	 * claims gosbx made, one line each (lib/session/claims.h); 0 or -1 with
	 * error(). NULL: nothing to prune (url).
	 */
	int (*prune)(const struct claims_query *q);
	/*
	 * `gosbx doctor`: append the backend's checks to cl
	 * (lib/session/doctor.h); returns 0 (a failed check is a check, not an
	 * error). NULL: the backend has no checks.
	 */
	int (*doctor)(struct check_list *cl, const struct doctor_opts *o);
	/* mark the claim used now (idle TTL); may be NULL */
	void (*touch)(struct session *s);
	/*
	 * Around each command (after == 0 before it, 1 after it, with
	 * res): e.g. the local backend compares the cgroup's OOM count
	 * to report reason "oom", and sets res->hint when the sandbox's Go
	 * refused a go.mod's newer go line. May be NULL.
	 */
	void (*exec_hook)(struct session *s, int after,
			  struct session_result *res);
	/*
	 * Why runtime requests fail in transport: error_mark() before a
	 * request, and when it failed, error_since(mark) gives what the
	 * backend saw in between (e.g. the kube port-forward's refused
	 * upgrade, while libcurl only sees a reset connection) as a
	 * string the caller frees, or NULL. Both may be NULL.
	 */
	unsigned long (*error_mark)(struct session *s);
	char *(*error_since)(struct session *s, unsigned long mark);
	/*
	 * The runtime's request log (gosbx-runtime(1)): write what it
	 * holds to fd, then with follow keep writing what is added until
	 * *cancel is set (cancel may be NULL without follow). Control
	 * characters are escaped (session_write_sandbox_text(): the
	 * sandbox can put text in the log; it must not drive the reader's
	 * terminal). 0, or -1 with error(). NULL: the backend cannot show
	 * it (see session_logs()).
	 */
	int (*logs)(struct session *s, int follow, int fd,
		    volatile sig_atomic_t *cancel);
	/*
	 * Can a new sandbox of opts get every limit it would get, the
	 * defaults included, on this host? 0, or -1 with error() naming
	 * the limit, why not, and the option that runs without it. For
	 * `gosbx mcp`, which runs an agent's code and must not do so
	 * unbounded unless the operator says so
	 * (Documentation/technical/design.md "Backends"). NULL: the backend's
	 * limits are not this host's to check (url; kube: the template's).
	 */
	int (*check_limits)(const struct session_opts *opts);
	/*
	 * Is the sandbox of s gone (its runtime no longer runs)? 1 with
	 * the reason in why ("its runtime was killed by signal 9
	 * (Killed)", "it expired after being idle for its TTL"), else 0.
	 * For the death certificate of a sandbox that died under its
	 * owner (session_gone()). NULL: the backend cannot tell.
	 */
	int (*gone)(struct session *s, struct strbuf *why);
};

/*
 * An interactive command of a backend (struct backend_ops.proc), for
 * lib/session/interactive.c, which gives each call the meaning of the
 * interactive_*() function of the same name (session/interactive.h):
 * start (o as interactive_open(); the state, or NULL with error()),
 * write (bytes queued, 0 when full), can_write, eof, resize (cols x
 * rows characters), signal ("INT", "TERM", "KILL"), step (poll the
 * backend's connection and extra for up to wait_ms: 0 when the command
 * ended, 1 while it runs, -1 with error() when the connection broke)
 * and finish (the exit code, reason and duration into res, which may
 * be NULL; a command still running is killed; frees the state; 0 when
 * the command exited, else -1).
 */
struct interactive_opts;
struct pollfd;
struct backend_proc_ops {
	void *(*start)(struct session *s, const struct interactive_opts *o);
	size_t (*write)(void *p, const void *buf, size_t len);
	int (*can_write)(void *p);
	void (*eof)(void *p);
	void (*resize)(void *p, unsigned cols, unsigned rows);
	void (*signal)(void *p, const char *name);
	int (*step)(void *p, int wait_ms, struct pollfd *extra,
		    unsigned nr_extra);
	int (*finish)(void *p, struct session_result *res);
};

extern const struct backend_ops backend_local;
extern const struct backend_ops backend_url;
extern const struct backend_ops backend_kube;

/* The backend named name (NULL: local), or NULL with error(). */
const struct backend_ops *backend_find(const char *name);
/* The same without the error: NULL for an unknown name. */
const struct backend_ops *backend_lookup(const char *name);

/* The names of the backends, "local, kube or url", for messages. */
const char *backend_names(void);

/*
 * The defaults of the backend of opts (ops->defaults), after what opts
 * sets: d->namespace and d->template are opts's own when given; what
 * the backend does not decide is the seed's "default" and
 * BACKEND_KUBE_TEMPLATE, so log lines show what the seed's show
 * (Documentation/protocol/mcp.md, seed 000 "opening sandbox (namespace=...)").
 * Returns 0, or -1 when the backend could not tell (d filled anyway; error()
 * only for an unknown backend). Release d
 * with backend_defaults_release() either way.
 */
int backend_defaults(const struct session_opts *opts,
		     struct backend_defaults *d);
void backend_defaults_release(struct backend_defaults *d);

#endif /* SESSION_H */
