#ifndef SESSION_SANDBOXD_H
#define SESSION_SANDBOXD_H

#include "session/session.h"

struct http_client_opts;

/*
 * The url backend's second server: agent-sandbox's sandboxd (v1.0.3,
 * packages/sandboxd; KEP-539.2), reached at
 *
 *	sandboxd://<host>[:<grpc_port>][?rest=<rest_port>]
 *
 * (GOSBX_URL, --url): its gRPC ProcessService at <host>:<grpc_port>
 * (default 9090) and its REST API at http://<host>:<rest_port>
 * (default 8080), upstream's ports (clients/go/sandbox options.go).
 * Commands run through ProcessService.Start (lib/proto/grpc-client.h).
 */

/* The URL names a sandboxd server (starts with "sandboxd://"). */
int sandboxd_url(const char *url);

/*
 * Connect to a sandboxd server: grpc_addr its ProcessService
 * ("host:port" or "unix:<path>", lib/proto/grpc-client.h), rest_url
 * the base URL of its REST API, ho the options of that REST client
 * (NULL: none; e.g. a port-forward's unix socket). Checks the REST
 * API's GET /v1/health (the SDKs' check, clients/go/sandbox
 * connector.go), then connects to the gRPC side (10 s at most).
 * Sets s->http (the REST API), s->sandboxd and s->server
 * ("sandboxd"); sandboxd_close() frees them. Returns 0, or -1 with
 * error() (not healthy, no gRPC answer), setting nothing.
 */
int sandboxd_connect(struct session *s, const char *grpc_addr,
		     const char *rest_url, const struct http_client_opts *ho);

/*
 * The url backend's open for a sandboxd URL: sandboxd_connect() to
 * the URL's addresses, and s->claim the URL. Returns 0,
 * SESSION_BAD_OPTS for a malformed URL, or -1 with error().
 */
int sandboxd_open(struct session *s, const char *url,
		  const struct session_opts *opts);

/*
 * Run e->command (sh -c, with e->env, e->cwd, e->stdin_data) through
 * ProcessService.Start: its stdout and stderr events to e->on_output
 * and res as they come (session_result_add_output(): res->keep bytes
 * of each stream, which session_execute() sets from e->keep_bytes),
 * its exit event into res. e->timeout_ms passing
 * sends SIGKILL (reason "timeout"); *e->cancel set sends SIGINT
 * (SendSignal) and returns 1. Returns 0 when the command ran, -1 with
 * error() when it could not (the server's status, a broken connection).
 */
int sandboxd_run(struct session *s, const struct session_exec *e,
		 struct session_result *res);

/*
 * Files through sandboxd's REST files API (lib/session/sandboxd-files.c;
 * filesystem.yaml of agent-sandbox v1.0.3), the url backend's ops of a
 * sandboxd URL (struct backend_ops write_files, push, fetch_archive):
 *
 * sandboxd_write_files(): PUT each of the nr files (mode 0644).
 * sandboxd_push(): session_push() file by file: each regular file
 * PUT with its mode & 0777, streamed from its descriptor; directories
 * made as the parents of their files (an empty one by a placeholder
 * file put and removed); a symlink is refused ("sandboxd's files API
 * cannot make symlinks"), other types skipped with a warning.
 * sandboxd_fetch_archive(): session_fetch_archive() from listings: a
 * tar of path ("" the root) with the modes, sizes and mtimes the
 * listings give, each file streamed into fd as it arrives.
 *
 * Each returns 0, (fetch) 1 when cancelled, or -1 with error(): the
 * server's answer (403 "sandboxd refuses paths outside its root", 404
 * "no such file or directory"), a file that changed size while it was
 * read, an archive over max_bytes, a failed write to fd.
 */
int sandboxd_write_files(struct session *s, const struct session_file *files,
			 size_t nr);
/*
 * session_get() of a sandboxd (struct backend_ops get): GET /v1/files/<path>,
 * at most max_bytes (bytes) of it appended to out. Returns 0, or -1 with
 * error(): the server's answer as above, a directory (its answer is a JSON
 * listing: "cannot get '<path>': a directory"), a longer file.
 */
int sandboxd_get(struct session *s, const char *path, size_t max_bytes,
		 struct strbuf *out);
int sandboxd_push(struct session *s, const char *const *paths, size_t nr,
		  const char *dir);
int sandboxd_fetch_archive(struct session *s, const char *path, int fd,
			   uint64_t max_bytes, volatile sig_atomic_t *cancel);

/*
 * Interactive commands (gosbx exec -i/-t, the REPL's shell) through
 * ProcessService.Start, as sandboxd_run() runs them, with a PTY of the
 * asked size when o->tty (StartRequest.pty; 80 x 24 when 0), stdin by
 * WriteStdin in order (one call at a time, 64 KiB each, then EOF),
 * resizes by ResizeTTY, signals by SendSignal (INT, TERM, KILL: the
 * proto's only ones), the timeout by SIGKILL. The url backend's proc
 * op of a sandboxd URL (struct backend_proc_ops).
 */
extern const struct backend_proc_ops sandboxd_proc_ops;

/*
 * session_logs() of a sandboxd (struct backend_ops logs): KEP-539.2 has
 * no log API, so always -1 with error() naming the container's log.
 */
int sandboxd_logs(struct session *s, int follow, int fd,
		  volatile sig_atomic_t *cancel);

/* Free what sandboxd_connect() set: s->sandboxd, s->http. */
void sandboxd_close(struct session *s);

#endif
