/*
 * The client side of the runtime's `jobs` extension (lib/session/jobs.h,
 * Documentation/gosbx-runtime.txt "jobs").
 */
#include "compat.h"
#include "http.h"
#include "json.h"
#include "proto/exec-events.h"
#include "session/jobs.h"
#include "usage.h"

#include <poll.h>

/* the longest ndjson line taken from the runtime (an event of 64 KiB) */
#define JOB_LINE_MAX (1 << 20)
/* how often a lost output stream is asked again */
#define JOB_RECONNECTS 5

static int need_jobs(struct session *s)
{
	if (s->features & SESSION_FEAT_JOBS)
		return 0;
	if (s->ops->runtime)
		/* e.g. KEP-539.2 has processes for a stream's life only */
		return error("sandbox '%s' runs %s, which has no jobs "
			     "(detached commands); they need gosbx-runtime's "
			     "jobs extension",
			     s->claim, s->ops->runtime);
	return error("the runtime of claim '%s' has no 'jobs' extension "
		     "(detached commands): it is older than this gosbx",
		     s->claim);
}

int session_job_ref_parse(const char *ref, const char *default_claim,
			  char **claim, char **id)
{
	const char *slash = strchr(ref, '/');
	const char *name = slash ? slash + 1 : ref;

	*claim = *id = NULL;
	if (!*name || strchr(name, '/'))
		return error("invalid job '%s': want <claim>/<id> or <id> "
			     "with --claim",
			     ref);
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			return error("invalid job id '%s'", name);
	if (slash) {
		*claim = xstrndup(ref, slash - ref);
		if (session_check_claim_name(*claim) < 0) {
			free(*claim);
			*claim = NULL;
			return -1;
		}
	} else if (default_claim && *default_claim) {
		*claim = xstrdup(default_claim);
	} else {
		return error("job '%s': name its claim (<claim>/%s or "
			     "--claim=<name>)",
			     ref, ref);
	}
	*id = xstrdup(name);
	return 0;
}

/* "/v1/jobs/<id><sub>" */
static void job_path(struct strbuf *path, const char *id, const char *sub)
{
	strbuf_addstr(path, "/v1/jobs/");
	http_pct_encode_path(path, id);
	strbuf_addstr(path, sub);
}

int session_job_start(struct session *s, const struct session_exec *e,
		      json_t **job)
{
	json_t *o;
	int ret;

	*job = NULL;
	if (need_jobs(s))
		return -1;
	o = json_object();
	json_object_set_new(o, "command", json_string(e->command));
	if (e->timeout_ms > 0)
		json_object_set_new(o, "timeout_ms",
				    json_integer(e->timeout_ms));
	if (e->env && e->env[0]) {
		json_t *env = json_object();

		for (const char *const *p = e->env; *p; p++) {
			const char *eq = strchr(*p, '=');
			char *k;

			if (!eq)
				continue;
			k = xstrndup(*p, eq - *p);
			json_object_set_new(env, k, json_string(eq + 1));
			free(k);
		}
		json_object_set_new(o, "env", env);
	}
	if (e->cwd && *e->cwd)
		json_object_set_new(o, "cwd", json_string(e->cwd));
	if (e->tty) {
		json_object_set_new(o, "tty", json_true());
		if (e->cols && e->rows) {
			json_object_set_new(o, "cols", json_integer(e->cols));
			json_object_set_new(o, "rows", json_integer(e->rows));
		}
	}
	if (e->output_keep_bytes > 0)
		json_object_set_new(o, "output_keep_bytes",
				    json_integer(e->output_keep_bytes));
	ret = http_json(s->http, "POST", "/v1/jobs", o, NULL, job);
	json_decref(o);
	if (!ret && !json_object_str(*job, "id"))
		ret = error("the runtime of claim '%s' answered POST "
			    "/v1/jobs without an id",
			    s->claim);
	return ret;
}

int session_jobs_list(struct session *s, json_t **jobs)
{
	*jobs = NULL;
	if (need_jobs(s) ||
	    http_json(s->http, "GET", "/v1/jobs", NULL, NULL, jobs) < 0)
		return -1;
	if (!json_is_array(*jobs))
		return error("the runtime of claim '%s' answered GET "
			     "/v1/jobs without a list",
			     s->claim);
	return 0;
}

int session_job_get(struct session *s, const char *id, json_t **job)
{
	struct strbuf path = STRBUF_INIT;
	int ret;

	*job = NULL;
	if (need_jobs(s))
		return -1;
	job_path(&path, id, "");
	ret = http_json(s->http, "GET", path.buf, NULL, NULL, job);
	strbuf_release(&path);
	return ret;
}

int session_job_delete(struct session *s, const char *id)
{
	struct strbuf path = STRBUF_INIT;
	int ret;

	if (need_jobs(s))
		return -1;
	job_path(&path, id, "");
	ret = http_json(s->http, "DELETE", path.buf, NULL, NULL, NULL);
	strbuf_release(&path);
	return ret;
}

int session_job_signal(struct session *s, const char *id, const char *sig)
{
	struct strbuf path = STRBUF_INIT;
	json_t *o;
	int ret;

	if (need_jobs(s))
		return -1;
	job_path(&path, id, "/signal");
	o = json_pack("{s:s}", "signal", sig);
	ret = http_json(s->http, "POST", path.buf, o, NULL, NULL);
	json_decref(o);
	strbuf_release(&path);
	return ret;
}

int session_job_resize(struct session *s, const char *id, unsigned cols,
		       unsigned rows)
{
	struct strbuf path = STRBUF_INIT;
	json_t *o;
	int ret;

	if (need_jobs(s))
		return -1;
	job_path(&path, id, "/resize");
	o = json_pack("{s:i, s:i}", "cols", (int)cols, "rows", (int)rows);
	ret = http_json(s->http, "POST", path.buf, o, NULL, NULL);
	json_decref(o);
	strbuf_release(&path);
	return ret;
}

/* A non-2xx answer of http_request() as error(). */
static int answer_error(const char *what, const char *path,
			const struct http_resp *resp)
{
	struct strbuf text = STRBUF_INIT;

	http_error_text(&text, resp->status, &resp->body);
	error("%s '%s': %s", what, path, text.buf);
	strbuf_release(&text);
	return -1;
}

int session_job_stdin(struct session *s, const char *id, const char *buf,
		      size_t len, int eof)
{
	struct strbuf path = STRBUF_INIT;
	struct http_req req = { 0 };
	struct http_resp resp;
	unsigned tries = 0;
	int ret = 0, rc;

	if (need_jobs(s))
		return -1;
	job_path(&path, id, "/stdin");
	req.method = "POST";
	req.path = path.buf;
	req.query = eof ? "eof=1" : NULL;
	req.body = buf ? buf : "";
	req.body_len = len;
	req.content_type = "application/octet-stream";
	http_resp_init(&resp);
	while ((rc = http_request(s->http, &req, &resp)) >= 0 &&
	       session_stdin_retry(&resp, &tries, NULL)) {
		http_resp_release(&resp);
		http_resp_init(&resp);
	}
	if (rc < 0)
		ret = -1;
	else if (resp.status == 409 && !session_stdin_busy(&resp))
		ret = 1;
	else if (resp.status / 100 != 2)
		ret = answer_error("POST", path.buf, &resp);
	http_resp_release(&resp);
	strbuf_release(&path);
	return ret;
}

int session_job_wait(struct session *s, const char *id,
		     volatile sig_atomic_t *cancel, json_t **job)
{
	struct strbuf path = STRBUF_INIT;
	int ret = 1;

	*job = NULL;
	if (need_jobs(s))
		return -1;
	job_path(&path, id, "/wait");
	while (!(cancel && *cancel)) {
		struct http_req req = { 0 };
		struct http_resp resp;
		long status;

		req.path = path.buf;
		req.query = "timeout_ms=30000";
		req.cancel = cancel;
		http_resp_init(&resp);
		if (http_request(s->http, &req, &resp) < 0) {
			http_resp_release(&resp);
			ret = cancel && *cancel ? 1 : -1;
			break;
		}
		status = resp.status;
		if (status == 200)
			*job = json_parse(resp.body.buf, resp.body.len, NULL);
		else if (status != 408)
			answer_error("GET", path.buf, &resp);
		http_resp_release(&resp);
		if (status == 408)
			continue;
		ret = *job ? 0 : -1;
		break;
	}
	strbuf_release(&path);
	return ret;
}

/* ---- the output stream ---- */

struct job_stream {
	struct session_result *res;
	int out_fd, err_fd;
	uint64_t off; /* output offset of the next byte */
	struct strbuf line;
	/* when set, the bytes go here instead of out_fd/err_fd */
	int (*on_output)(int stream, const char *buf, size_t len, void *data);
	void *data;
	int ended;
	int failed; /* a write failed or the stream is broken */
	/*
	 * stopped on purpose: on_output asked to, or session_job_read()'s
	 * max or stop_at_data
	 */
	int stopped;
	/* session_job_read(): into these instead of the fds */
	struct strbuf *out_sb, *err_sb;
	size_t max, got;  /* most bytes to take, bytes taken */
	int stop_at_data; /* stop after the first bytes */
	uint64_t trimmed; /* bytes of "trimmed" events */
};

/* An output event's bytes to where st sends them */
static int job_deliver(struct job_stream *st, int stream, const char *buf,
		       size_t len)
{
	if (st->out_sb) {
		size_t n = len;

		if (n > st->max - st->got) {
			n = st->max - st->got;
			st->stopped = 1;
		}
		strbuf_add(stream == 1 ? st->out_sb : st->err_sb, buf, n);
		st->got += n;
		st->off += n;
		if (n && st->stop_at_data)
			st->stopped = 1;
		return st->stopped ? -1 : 0;
	}
	st->off += len;
	if (st->on_output) {
		if (st->on_output(stream, buf, len, st->data) < 0) {
			st->stopped = 1;
			return -1;
		}
		return 0;
	}
	if (write_in_full(stream == 1 ? st->out_fd : st->err_fd, buf, len) <
	    0) {
		st->failed = error_errno("cannot write the output");
		return -1;
	}
	return 0;
}

static int job_trimmed(struct job_stream *st, int64_t n)
{
	st->trimmed += n > 0 ? (uint64_t)n : 0;
	if (st->out_sb) {
		/* counted in st->trimmed */
	} else if (st->on_output) {
		if (n > 0 && st->on_output(0, NULL, (size_t)n, st->data) < 0) {
			st->stopped = 1;
			return -1;
		}
	} else {
		dprintf(st->err_fd,
			"gosbx: [%" PRId64 " bytes of output "
			"trimmed]\n",
			n);
	}
	return 0;
}

static int job_event(struct job_stream *st, const char *line, size_t len)
{
	struct exec_event ev = EXEC_EVENT_INIT;
	int rc = exec_event_parse(&ev, line, len, NULL);
	int stream = exec_event_stream(ev.type), ret = 0;

	if (rc < 0 && !ev.name) {
		st->failed = error("a job's output: a line that is no event");
		ret = -1;
	} else if (rc) {
		; /* a bad event of a known type, or a newer runtime's */
	} else if (stream) {
		if (ev.offset >= 0)
			st->off = (uint64_t)ev.offset;
		ret = job_deliver(st, stream, ev.data.buf, ev.data.len);
	} else if (ev.type == EXEC_EVENT_TRIMMED) {
		if (ev.offset >= 0)
			st->off = (uint64_t)ev.offset;
		ret = job_trimmed(st, ev.bytes);
	} else if (ev.type == EXEC_EVENT_EXIT) {
		if (st->res)
			session_result_from_json(st->res, ev.json);
		st->ended = 1;
	}
	exec_event_release(&ev);
	return ret;
}

static int job_line(const char *line, size_t len, void *data)
{
	return job_event(data, line, len) ? -1 : 0;
}

static int job_data(const char *buf, size_t len, void *data)
{
	struct job_stream *st = data;
	int rc = exec_event_split(&st->line, buf, len, JOB_LINE_MAX, job_line,
				  st);

	if (rc == EXEC_EVENT_OVERLONG)
		st->failed = error("a job's output: an event over %d bytes",
				   JOB_LINE_MAX);
	return rc < 0 ? -1 : 0;
}

static int job_output(struct session *s, const char *id, struct job_stream *stp,
		      int follow, volatile sig_atomic_t *cancel, int *ended)
{
	struct strbuf path = STRBUF_INIT, query = STRBUF_INIT;
	struct job_stream st = *stp;
	int ret = -1, lost = 0;

	if (ended)
		*ended = 0;
	if (need_jobs(s))
		return -1;
	job_path(&path, id, "/output");
	for (;;) {
		struct http_req req = { 0 };
		struct http_resp resp;
		int rc;

		strbuf_reset(&query);
		strbuf_addf(&query, "since=%" PRIu64 "%s", st.off,
			    follow ? "&follow=1" : "");
		strbuf_reset(&st.line);
		req.path = path.buf;
		req.query = query.buf;
		req.on_data = job_data;
		req.on_data_arg = &st;
		req.cancel = cancel;
		if (follow && s->heartbeat_ms > 0)
			req.idle_timeout_ms = 3 * s->heartbeat_ms + 5000;
		http_resp_init(&resp);
		rc = http_request(s->http, &req, &resp);
		if (rc == 0 && resp.status / 100 != 2) {
			answer_error("GET", path.buf, &resp);
			http_resp_release(&resp);
			break;
		}
		http_resp_release(&resp);
		if (cancel && *cancel) {
			ret = 1;
			break;
		}
		if (st.failed)
			break;
		if (st.stopped) {
			ret = 1;
			break;
		}
		if (rc == 0 && (st.ended || !follow)) {
			ret = 0;
			break;
		}
		/* a lost connection (a port-forward that went away) */
		if (++lost > JOB_RECONNECTS)
			break;
		poll(NULL, 0, 200 * lost);
	}
	if (ended)
		*ended = st.ended;
	strbuf_release(&st.line);
	strbuf_release(&path);
	strbuf_release(&query);
	return ret;
}

/* One GET of the output into st (session_job_read()); http_request()'s */
static int job_read_once(struct session *s, const char *path,
			 struct job_stream *st, int64_t wait_ms,
			 volatile sig_atomic_t *cancel)
{
	struct strbuf query = STRBUF_INIT;
	struct http_req req = { 0 };
	struct http_resp resp;
	int rc;

	strbuf_addf(&query, "since=%" PRIu64 "%s", st->off,
		    wait_ms > 0 ? "&follow=1" : "");
	strbuf_reset(&st->line);
	req.path = path;
	req.query = query.buf;
	req.on_data = job_data;
	req.on_data_arg = st;
	req.cancel = cancel;
	req.timeout_ms = wait_ms > 0 ? (long)wait_ms : 0;
	http_resp_init(&resp);
	rc = http_request(s->http, &req, &resp);
	if (rc == 0 && resp.status / 100 != 2)
		rc = answer_error("GET", path, &resp);
	http_resp_release(&resp);
	strbuf_release(&query);
	return rc;
}

int session_job_read(struct session *s, const char *id, uint64_t since,
		     size_t max, int64_t wait_ms, volatile sig_atomic_t *cancel,
		     struct strbuf *out, struct strbuf *err,
		     struct session_result *res, struct session_job_read *r)
{
	struct strbuf path = STRBUF_INIT;
	struct job_stream st = { res, -1, -1, since, STRBUF_INIT };
	int ret = -1, rc;

	memset(r, 0, sizeof(*r));
	if (need_jobs(s))
		return -1;
	st.out_sb = out;
	st.err_sb = err;
	st.max = max;
	job_path(&path, id, "/output");
	rc = job_read_once(s, path.buf, &st, 0, cancel);
	if (rc < 0 && !st.stopped)
		goto out;
	if (!st.stopped && !st.got && !st.ended && wait_ms > 0 &&
	    !(cancel && *cancel)) {
		uint64_t t0 = monotonic_us();

		/* nothing yet: follow until the first bytes or the end */
		st.stop_at_data = 1;
		rc = job_read_once(s, path.buf, &st, wait_ms, cancel);
		if (rc < 0 && !st.stopped && !st.failed &&
		    !(cancel && *cancel) &&
		    (int64_t)(monotonic_us() - t0) < wait_ms * 1000 - 100000)
			goto out; /* not the time limit: a real failure */
	}
	if (st.failed)
		goto out;
	r->next = st.off;
	r->trimmed = st.trimmed;
	r->more = st.stopped && !st.stop_at_data;
	r->ended = st.ended;
	ret = 0;
out:
	strbuf_release(&st.line);
	strbuf_release(&path);
	return ret;
}

int session_job_output(struct session *s, const char *id, uint64_t since,
		       int follow, int out_fd, int err_fd,
		       volatile sig_atomic_t *cancel,
		       struct session_result *res, int *ended)
{
	struct job_stream st = { res, out_fd, err_fd, since, STRBUF_INIT };

	return job_output(s, id, &st, follow, cancel, ended);
}

int session_job_follow(struct session *s, const char *id, uint64_t since,
		       int (*on_output)(int stream, const char *buf, size_t len,
					void *data),
		       void *data, volatile sig_atomic_t *cancel,
		       struct session_result *res, int *ended)
{
	struct job_stream st = { res, -1, -1, since, STRBUF_INIT };

	st.on_output = on_output;
	st.data = data;
	return job_output(s, id, &st, 1, cancel, ended);
}

int session_job_exit_status(const struct session_result *res)
{
	if (!strcmp(res->reason, "timeout"))
		return 124;
	if (res->signal > 0)
		return 128 + res->signal;
	if (res->exit_code < 0)
		return 125;
	return res->exit_code;
}
