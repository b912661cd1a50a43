#ifndef SESSION_JOBS_H
#define SESSION_JOBS_H

#include "compat.h"
#include "session/session.h"
#include "strbuf.h"

#include <signal.h>

#include <jansson.h>

/*
 * Detached commands ("jobs") of a sandbox: the client side of the
 * runtime's `jobs` extension (Documentation/gosbx-runtime.txt), the same
 * HTTP requests on every backend. A job is named by the runtime's id
 * ("j" and 12 hex digits); the CLI writes it as <claim>/<id>
 * (session_job_ref_parse()).
 *
 * Every function returns 0 or -1 with error(): "the runtime of claim
 * 'x' has no 'jobs' extension" when the runtime is older, else the
 * runtime's message ("no job 'j1'", "job 'j1' has ended"). Those that
 * return a JSON value give a new reference the caller json_decref()s.
 */

/*
 * Split "<claim>/<id>" into claim and id (owned by the caller: free
 * them); "<id>" alone takes claim from default_claim (may be NULL).
 * Returns 0, or -1 with error() (no claim, a malformed name).
 */
int session_job_ref_parse(const char *ref, const char *default_claim,
			  char **claim, char **id);

/*
 * POST /v1/jobs: start e->command (with e's env, cwd, timeout_ms, and
 * with e->tty a terminal of e->cols x e->rows; stdin through
 * session_job_stdin()) as a job; *job gets the job object, whose "id"
 * names it.
 */
int session_job_start(struct session *s, const struct session_exec *e,
		      json_t **job);

/* GET /v1/jobs: *jobs gets the array of job objects. */
int session_jobs_list(struct session *s, json_t **jobs);

/* GET /v1/jobs/<id>: *job gets the job object. */
int session_job_get(struct session *s, const char *id, json_t **job);

/*
 * GET /v1/jobs/<id>/output from output offset since: stdout bytes to
 * out_fd, stderr bytes to err_fd, as they come (raw: the caller's
 * terminal gets what the command wrote), a line "gosbx: [N bytes of
 * output trimmed]" on err_fd where the runtime dropped old output.
 * With follow, until the job ended (reconnecting from the last offset
 * when the connection is lost) or *cancel is set (cancel may be NULL).
 * If the job ended, res gets its outcome and *ended is set (ended may
 * be NULL; res may be NULL). Returns 0, 1 when cancelled, or -1.
 */
int session_job_output(struct session *s, const char *id, uint64_t since,
		       int follow, int out_fd, int err_fd,
		       volatile sig_atomic_t *cancel,
		       struct session_result *res, int *ended);

/* What session_job_read() read. */
struct session_job_read {
	uint64_t next;	  /* output offset after the last byte taken */
	uint64_t trimmed; /* bytes from since the runtime no longer kept */
	int more;	  /* stopped at max: more output is there now */
	int ended;	  /* the job ended (res has its outcome) */
};

/*
 * GET /v1/jobs/<id>/output from output offset since into memory (for a
 * poll, the MCP toolset sandbox): at most max bytes of stdout and
 * stderr together appended to out and err (raw). When nothing is
 * there yet and the job runs, wait_ms > 0 waits up to that many ms
 * for the first bytes or the end (or until *cancel; cancel may be
 * NULL). Reading from the next offset continues where this stopped.
 * Returns 0 with r filled, or -1 with error() ("no job 'j1'").
 */
int session_job_read(struct session *s, const char *id, uint64_t since,
		     size_t max, int64_t wait_ms, volatile sig_atomic_t *cancel,
		     struct strbuf *out, struct strbuf *err,
		     struct session_result *res, struct session_job_read *r);

/*
 * session_job_output() with follow, the bytes going to on_output
 * (stream 1 stdout, 2 stderr) instead of fds, for a caller that keeps
 * them; where the runtime dropped len bytes of output the caller had not
 * read yet (it writes faster than the caller reads), on_output gets
 * stream 0, buf NULL and that len. on_output returns <0 to stop
 * following (then 1 is returned, as for *cancel).
 */
int session_job_follow(struct session *s, const char *id, uint64_t since,
		       int (*on_output)(int stream, const char *buf, size_t len,
					void *data),
		       void *data, volatile sig_atomic_t *cancel,
		       struct session_result *res, int *ended);

/*
 * POST /v1/jobs/<id>/stdin: len bytes of buf; eof closes it after.
 * Returns 0; 1, printing nothing, when the runtime answers 409 (the job
 * ended or closed its stdin meanwhile: a race no caller can avoid, its
 * output and status tell the rest); or -1 with error().
 */
int session_job_stdin(struct session *s, const char *id, const char *buf,
		      size_t len, int eof);

/* POST /v1/jobs/<id>/signal: sig a name ("TERM", "SIGTERM") or number. */
int session_job_signal(struct session *s, const char *id, const char *sig);

/*
 * POST /v1/jobs/<id>/resize: the job's terminal becomes cols x rows
 * characters (1 to 65535 each) and the job gets SIGWINCH. Returns 0, or
 * -1 with error() (409: the job has no terminal or has ended).
 */
int session_job_resize(struct session *s, const char *id, unsigned cols,
		       unsigned rows);

/*
 * GET /v1/jobs/<id>/wait until the job ended (asking again every 30 s,
 * so no proxy takes the request for idle), or *cancel is set: *job gets
 * the job object. Returns 0, 1 when cancelled, or -1.
 */
int session_job_wait(struct session *s, const char *id,
		     volatile sig_atomic_t *cancel, json_t **job);

/* DELETE /v1/jobs/<id>: kill it if running, forget it and its output. */
int session_job_delete(struct session *s, const char *id);

/*
 * The exit status a job's end gives `gosbx wait` and `gosbx logs -f`
 * (Documentation/gosbx.txt EXIT STATUS): its exit code, 128+N for
 * signal N, 124 for a timeout.
 */
int session_job_exit_status(const struct session_result *res);

#endif /* SESSION_JOBS_H */
