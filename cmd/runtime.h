#ifndef RUNTIME_H
#define RUNTIME_H

/*
 * gosbx-runtime internals: the HTTP server inside every sandbox
 * (spec/runtime-api.md). runtime.c owns the daemon, routing and
 * logging; runtime-exec.c the command endpoints; runtime-files.c the
 * file endpoints; runtime-metrics.c GET /v1/metrics.
 */
#include "compat.h"
#include "strbuf.h"

#include <microhttpd.h>

#define UPSTREAM_JSON_LIMIT (1 << 20)	     /* POST /execute body */
#define UPSTREAM_UPLOAD_LIMIT (256ULL << 20) /* upload, archive, PUT */
#define UPSTREAM_STREAM_CAP (8 << 20)	     /* per stream */

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
	R_FILE_PUT,
	R_FILE_DELETE,
	R_EXEC_CANCEL,
};

/* Per-request state, allocated on the first call of the handler. */
struct request {
	enum route route;
	char *url; /* decoded by libmicrohttpd; owned */
	char method[16];
	unsigned status; /* the status queued, for the log line */
	uint64_t start_us;
	/* JSON bodies */
	struct strbuf body;
	int too_large;
	int bad_path; /* the path held %00 */
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
/* file descriptors for OOM detection, opened at startup */
void exec_setup_oom_source(void);

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

/* runtime-metrics.c */
enum MHD_Result handle_metrics(struct MHD_Connection *c, struct request *r);

#endif /* RUNTIME_H */
