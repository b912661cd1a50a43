#ifndef RUNTIME_H
#define RUNTIME_H

/*
 * gosbx-runtime internals: the HTTP server inside every sandbox
 * (Documentation/protocol/runtime-api.md). runtime.c owns the daemon, routing
 * and logging; runtime-exec.c the command endpoints; runtime-files.c the file
 * endpoints; runtime-metrics.c GET /v1/metrics.
 */
#include "compat.h"
#include "exec.h"
#include "strbuf.h"
#include "strvec.h"

#include <jansson.h>
#include <sys/stat.h>

#include <microhttpd.h>

#define UPSTREAM_JSON_LIMIT (1 << 20)	     /* POST /execute body */
#define UPSTREAM_UPLOAD_LIMIT (256ULL << 20) /* upload, archive, PUT */
#define UPSTREAM_STREAM_CAP (8 << 20)	     /* per stream */
/*
 * After the shell exited, how long a command's output may stay held by
 * a process it left (`server &`) before the answer goes without it
 * (exec-options "wait_delay_ms", lib/exec.h), ms
 */
#define RUNTIME_WAIT_DELAY_MS 2000

struct runtime {
	const char *workdir; /* as given */
	char *root;	     /* realpath of the workdir */
	uint64_t started_ms;
	/* a quiet /v1/exec stream sends {"type":"heartbeat"} this often */
	uint64_t heartbeat_ms;
};
extern struct runtime rt;

/* What a request is, decided when its headers arrive. */
enum route {
	R_NONE,
	R_ROOT,
	R_EXECUTE,
	R_EXEC_STREAM,
	R_UPLOAD,
	R_DOWNLOAD,
	R_LIST,
	R_EXISTS,
	R_ARCHIVE_IN,
	R_ARCHIVE_OUT,
	R_METRICS,
	R_LOGS,
	R_FILE_PUT,
	R_FILE_DELETE,
	R_EXEC_CANCEL,
	R_EXEC_WS,    /* GET /v1/exec: the interactive channel */
	R_EXEC_INPUT, /* POST /v1/exec/<id>/stdin or /control */
	R_JOBS,	      /* /v1/jobs... (runtime-jobs.c) */
	/* the sandboxd REST listener (runtime-sandboxd.c) */
	R_SBX_GET, /* GET or HEAD /v1/files/<path> */
	R_SBX_PUT,
	R_SBX_DELETE,
	R_SBX_HEALTH,
	R_SBX_METADATA,
};

/* Per-request state, allocated on the first call of the handler. */
struct request {
	enum route route;
	int sandboxd; /* came to the sandboxd REST listener */
	int tcp;      /* came over TCP: Host is checked */
	char *url;    /* decoded by libmicrohttpd; owned */
	char method[16];
	unsigned status; /* the status queued, for the log line */
	uint64_t start_us;
	/* JSON bodies */
	struct strbuf body;
	int too_large;
	int bad_path; /* the path held %00 */
	int refused;  /* check_web() answered already */
	/* bodies spooled to a file: upload, archive, PUT */
	int spool_fd; /* -1 if none */
	uint64_t spooled;
	char *spool_path;  /* named temp file (upload/PUT), else NULL */
	char *upload_name; /* POST /upload: base name of the file part */
	int saw_file_part;
	int bad_multipart;
	int write_failed;
	struct MHD_PostProcessor *pp;
	void *stream; /* runtime-exec.c: a running /v1/exec */
	void *input;  /* runtime-interactive.c: POST /v1/exec/<id>/... */
	int job_op;   /* runtime-jobs.c: which /v1/jobs request */
	void *job;    /* runtime-jobs.c: its state */
};

/* Queue a JSON answer; takes ownership of body's buffer. */
enum MHD_Result reply_json(struct MHD_Connection *c, struct request *r,
			   unsigned status, struct strbuf *body);
/* Queue {"detail": <formatted message>}. */
enum MHD_Result reply_error(struct MHD_Connection *c, struct request *r,
			    unsigned status, const char *fmt, ...)
	PRINTF_LIKE(4, 5);
/* Send an already built response and record its status. */
enum MHD_Result reply(struct MHD_Connection *c, struct request *r,
		      unsigned status, struct MHD_Response *resp);

/* The connection's socket, for noticing a client that went away. */
int connection_fd(struct MHD_Connection *c);

/*
 * runtime-command.c: one command, whichever request runs it (the
 * exec handlers, the interactive channel, jobs).
 */

/* A command request's body, parsed (parse_exec_body()). */
struct exec_params {
	struct exec_request req;
	json_t *json;
	struct strvec env;
	struct strbuf cwd;
	int64_t oom_before;
	struct strbuf held; /* req.held_output_path */
	/* req.argv and req.exec_path of a command run without a shell */
	struct strvec argv;
	struct strbuf exec_path;
	char *tag;   /* the request's X-Request-ID, or NULL */
	void *input; /* runtime-interactive.c: stdin by other requests */
};

/*
 * Validate a command body (JSON, the fields of POST /execute with the
 * exec-options and interactive extensions) into p, which is
 * initialised here; release it with exec_params_release() whatever
 * happened. Returns 0, or the HTTP status with the message in err.
 */
unsigned parse_exec_body(struct request *r, struct exec_params *p,
			 struct strbuf *err);
void exec_params_release(struct exec_params *p);
/* the X-Request-ID of c as the command's tag (exec-cancel) */
void set_tag(struct MHD_Connection *c, struct exec_params *p);
/* the cgroup file that counts OOM kills, found at startup */
void exec_setup_oom_source(void);
/*
 * Start p's command (exec_start(): *proc is the running command, to
 * end with command_finish()), after noting the cgroup's OOM count and
 * logging "exec begin".
 */
void command_start(struct exec_params *p, struct exec_proc **proc);
/*
 * Reap proc (exec_finish() into res, initialised by the caller), turn
 * a SIGKILL that the cgroup counted into reason "oom", log "exec done".
 */
void command_finish(struct exec_params *p, struct exec_proc *proc,
		    struct exec_result *res);
/* command_start() and command_finish() in one, blocking (exec_run()) */
void command_run(struct exec_params *p, struct exec_result *res);

/* runtime-exec.c */

enum MHD_Result handle_execute(struct MHD_Connection *c, struct request *r);
enum MHD_Result handle_exec_stream(struct MHD_Connection *c, struct request *r);
/*
 * DELETE /v1/exec/<request id> (feature "exec-cancel"): kill the
 * commands of /execute or /v1/exec requests that carried that
 * X-Request-ID, as a client disconnect would (reason "cancelled"):
 * 204, or 404 when none is running. For clients behind proxies that
 * do not pass a disconnect on promptly.
 */
enum MHD_Result handle_exec_cancel(struct MHD_Connection *c, struct request *r,
				   const char *id);

/* runtime-files.c */
enum MHD_Result handle_download(struct MHD_Connection *c, struct request *r,
				const char *path);
enum MHD_Result handle_list(struct MHD_Connection *c, struct request *r,
			    const char *path);
enum MHD_Result handle_exists(struct MHD_Connection *c, struct request *r,
			      const char *path);
/* upload/archive/PUT bodies: open the spool, take data, finish */
int upload_begin(struct MHD_Connection *c, struct request *r);
int upload_take(struct request *r, const char *data, size_t len);
enum MHD_Result handle_upload_done(struct MHD_Connection *c, struct request *r);
enum MHD_Result handle_archive_in(struct MHD_Connection *c, struct request *r);
enum MHD_Result handle_archive_out(struct MHD_Connection *c, struct request *r);
enum MHD_Result handle_file_put(struct MHD_Connection *c, struct request *r,
				const char *path);
enum MHD_Result handle_file_delete(struct MHD_Connection *c, struct request *r,
				   const char *path);
void request_release_spool(struct request *r);
/*
 * Give the spooled body of r (an empty file when there was none) the
 * name dest, replacing it atomically (rename(2)), with the permission
 * bits mode (-1: 0644). 0, or -1 with errno.
 */
int commit_spool(struct request *r, const char *dest, int mode);
/*
 * For PUT and DELETE: resolve the parent directory of path (following
 * links) into abs and rel (as workpath_resolve()), keep the last
 * component as given so a symlink itself is replaced or removed, never
 * its target. Returns 0, -1 (escape) or -2 (path names the root).
 */
int resolve_leaf(const char *path, struct strbuf *abs, struct strbuf *rel);
/*
 * Open path (relative to the workdir, links followed only inside it)
 * read-only and O_NONBLOCK, so that a FIFO cannot hang the reader; *st
 * gets its fstat. Returns the fd, -2 when the path leads out of the
 * workdir, or -1 with errno.
 */
int open_workpath(const char *path, struct stat *st);
/*
 * Answer 200 with the regular file open at fd (st its fstat), or 206
 * or 416 for a Range header (RFC 9110 section 14); takes fd.
 */
enum MHD_Result serve_file_fd(struct MHD_Connection *c, struct request *r,
			      int fd, const struct stat *st);

/*
 * runtime-sandboxd.c: the sandboxd REST API of agent-sandbox v1.0.3
 * (packages/sandboxd/spec/filesystem/v1/filesystem.yaml) on the
 * listener of --sandboxd-rest. sandboxd_route() sets r->route, or
 * r->status to the 404 or 405 to answer; handle_sandboxd() answers a
 * whole request; sandboxd_error_body() puts the spec's Error object
 * ({"code","message"}) for an HTTP status into out.
 */
void sandboxd_route(struct request *r, const char *method, const char *url);
enum MHD_Result handle_sandboxd(struct MHD_Connection *c, struct request *r);
void sandboxd_error_body(struct strbuf *out, unsigned status, const char *msg);

/*
 * runtime-grpc.c: the sandboxd gRPC ProcessService of agent-sandbox
 * v1.0.3 (packages/sandboxd/spec/process/v1/process.proto) on addr,
 * served by threads of its own until the process exits. token (NULL
 * or "": none) and allowed_hosts (--allow-host, NULL-terminated, may
 * be NULL) are checked as on the other listeners; *li receives the
 * socket's address. 0, or -1 after logging why.
 */
struct listen_info;
int grpc_start(const char *addr, const char *token,
	       const char *const *allowed_hosts, struct listen_info *li);

/*
 * runtime-interactive.c: interactive commands (features exec-interactive
 * and exec-input, Documentation/gosbx-runtime.txt "Interactive
 * commands").
 */

/*
 * For POST /v1/exec with stdin_stream: reserve the request's tag for
 * POST /v1/exec/<tag>/stdin and /control before the command starts
 * (0, or the HTTP status with err: no X-Request-ID 400, tag in use
 * 409); attach the started command; detach (idempotent, also for a
 * reservation never attached) before exec_finish(), which waits for
 * input requests in progress to let go.
 */
unsigned exec_input_reserve(struct exec_params *p, struct strbuf *err);
void exec_input_attach(struct exec_params *p, struct exec_proc *proc);
void exec_input_detach(struct exec_params *p);
/* POST /v1/exec/<id>/stdin|control: headers, each body chunk, the end */
void exec_input_begin(struct MHD_Connection *c, struct request *r);
void exec_input_take(struct request *r, const char *data, size_t len);
enum MHD_Result handle_exec_input(struct MHD_Connection *c, struct request *r);
void exec_input_release(struct request *r);
/* GET /v1/exec: the WebSocket channel */
enum MHD_Result handle_exec_ws(struct MHD_Connection *c, struct request *r);
/*
 * At shutdown, after the commands were killed: end every WebSocket
 * session, waiting up to grace_ms for them to close.
 */
void interactive_shutdown(int64_t grace_ms);

/*
 * runtime-jobs.c: detached commands (feature jobs,
 * Documentation/gosbx-runtime.txt "jobs").
 *
 * jobs_route(): 1 when url is under /v1/jobs, with r->job_op set, or
 * r->status the 404/405 to answer; 0 otherwise. jobs_op_takes_json()
 * and jobs_op_takes_stdin() say which body the request has (for the
 * Content-Type checks). jobs_begin() on the head, jobs_take() with each
 * body chunk, handle_jobs() once the request is whole, jobs_release()
 * when it completed.
 */
int jobs_route(const char *method, const char *url, struct request *r);
int jobs_op_takes_json(const struct request *r);
int jobs_op_takes_stdin(const struct request *r);
void jobs_begin(struct MHD_Connection *c, struct request *r);
void jobs_take(struct request *r, const char *data, size_t len);
enum MHD_Result handle_jobs(struct MHD_Connection *c, struct request *r);
void jobs_release(struct request *r);
/*
 * At exit, once no request runs: remove every job's output from the
 * disk ($TMPDIR/gosbx-jobs-<uid>/<id>/). The jobs die with the runtime,
 * so nobody can read it again; a runtime on a host (--backend=url,
 * tests) would otherwise leave up to 64 MiB a job behind.
 */
void jobs_shutdown(void);

/* runtime-metrics.c */
enum MHD_Result handle_metrics(struct MHD_Connection *c, struct request *r);

#endif /* RUNTIME_H */
