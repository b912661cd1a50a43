/*
 * The MCP protocol core (Documentation/protocol/mcp.md "Protocol", briefs' wire
 * reference): JSON-RPC 2.0 messages of every revision, sessions,
 * tools/list and tools/call on worker threads, progress, logging,
 * cancellation, and the stdio transport. The HTTP transport is
 * lib/mcp/mcp-http.c.
 */
#include "compat.h"
#include "json.h"
#include "mcp/mcp-internal.h"
#include "parse-options.h"
#include "strbuf.h"
#include "usage.h"

#include <linux/sockios.h>
#include <math.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>

static const char *const rev_names[MCP_REV_NR] = {
	"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28",
};
/* the newest handshake revision: the answer to an unknown one */
#define REV_LATEST_HANDSHAKE MCP_REV_2025_11_25

int mcp_rev_parse(const char *s)
{
	for (int i = 0; s && i < MCP_REV_NR; i++)
		if (!strcmp(s, rev_names[i]))
			return i;
	return MCP_REV_NONE;
}

const char *mcp_rev_name(int rev)
{
	return rev >= 0 && rev < MCP_REV_NR ? rev_names[rev] : "none";
}

/* RFC 5424 levels, the order of logging/setLevel */
static const char *const log_levels[] = {
	"debug", "info",     "notice", "warning",
	"error", "critical", "alert",  "emergency",
};

static int log_level_parse(const char *s)
{
	for (size_t i = 0; s && i < ARRAY_SIZE(log_levels); i++)
		if (!strcmp(s, log_levels[i]))
			return (int)i;
	return -1;
}

/* ---- toolsets, options, results, stderr ---- */

const struct mcp_toolset *const mcp_toolsets[MCP_NR_TOOLSETS] = {
	&mcp_toolset_go,
	&mcp_toolset_sandbox,
	&mcp_toolset_jobs,
};

const struct mcp_toolset *mcp_toolset_find(const char *name)
{
	int i = mcp_toolset_index(name);

	return i < 0 ? NULL : mcp_toolsets[i];
}

int mcp_toolset_index(const char *name)
{
	for (int i = 0; name && i < MCP_NR_TOOLSETS; i++)
		if (!strcmp(name, mcp_toolsets[i]->name))
			return i;
	return -1;
}

const char *mcp_toolset_names(void)
{
	static char names[128];

	if (!names[0])
		for (size_t i = 0; i < MCP_NR_TOOLSETS; i++)
			snprintf(names + strlen(names),
				 sizeof(names) - strlen(names), "%s%s",
				 i ? ", " : "", mcp_toolsets[i]->name);
	return names;
}

void mcp_options_init(struct mcp_options *o)
{
	memset(o, 0, sizeof(*o));
	o->open_timeout_ms = 5 * 60 * 1000;
	o->call_timeout_ms = 5 * 60 * 1000;
	o->heartbeat_ms = MCP_HEARTBEAT_MS;
	o->jobs_cpu_budget_ms = 10000;
	o->jobs_max_concurrent = 2;
	o->max_sandboxes = 4;
}

void mcp_result_init(struct mcp_result *res)
{
	strbuf_init(&res->text, 0);
	res->is_error = 0;
	res->structured = NULL;
}

void mcp_result_release(struct mcp_result *res)
{
	strbuf_release(&res->text);
	if (res->structured)
		json_decref(res->structured);
	res->structured = NULL;
	res->is_error = 0;
}

void mcp_result_error(struct mcp_result *res, const char *fmt, ...)
{
	va_list ap;

	strbuf_reset(&res->text);
	va_start(ap, fmt);
	strbuf_vaddf(&res->text, fmt, ap);
	va_end(ap);
	res->is_error = 1;
}

static void log_stderr_v(const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	strbuf_addch(&sb, '\n');
	/* one write: lines of several threads never interleave */
	if (write_in_full(2, sb.buf, sb.len) < 0)
		errno = 0; /* nowhere left to report it */
	strbuf_release(&sb);
}

void mcp_log_stderr(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_stderr_v(fmt, ap);
	va_end(ap);
}

/* ---- the server ---- */

struct tool_ref {
	const struct mcp_toolset *ts;
	const struct mcp_tool *tool;
	char *input_schema;  /* compact JSON */
	char *output_schema; /* or NULL */
	char *description;   /* with the tool's describe() part */
};

struct mcp_server {
	struct mcp_options opts;
	const struct mcp_toolset **toolsets;
	size_t nr_toolsets;
	struct tool_ref *tools;
	size_t nr_tools;
	char *instructions;
	atomic_int live_sessions; /* not yet destroyed */
};

/* the compact form of a schema, or NULL with error() */
static char *compact_schema(const char *tool, const char *text)
{
	struct strbuf err = STRBUF_INIT, out = STRBUF_INIT;
	json_t *v = json_parse(text, strlen(text), &err);

	if (!v || !json_is_object(v)) {
		error("tool '%s': schema is not a JSON object: %s", tool,
		      v ? "wrong type" : err.buf);
		strbuf_release(&err);
		if (v)
			json_decref(v);
		return NULL;
	}
	strbuf_release(&err);
	json_dump_into(&out, v);
	json_decref(v);
	return strbuf_detach(&out, NULL);
}

/*
 * Call threads are joinable: a thread that finished puts itself on
 * the finished list and is joined by the next call or by
 * mcp_server_free(), so no thread (nor its thread-local memory, e.g.
 * OpenSSL's) outlives the server unnoticed.
 */
static pthread_mutex_t threads_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t *finished_threads;
static size_t nr_finished, alloc_finished;
static size_t live_threads; /* created and not yet joined */

static void thread_finished(void)
{
	pthread_mutex_lock(&threads_mu);
	ALLOC_GROW(finished_threads, nr_finished + 1, alloc_finished);
	finished_threads[nr_finished++] = pthread_self();
	pthread_mutex_unlock(&threads_mu);
}

/* Join the threads that said they finished. */
static void reap_threads(void)
{
	pthread_t *list;
	size_t nr;

	pthread_mutex_lock(&threads_mu);
	list = finished_threads;
	nr = nr_finished;
	finished_threads = NULL;
	nr_finished = alloc_finished = 0;
	pthread_mutex_unlock(&threads_mu);
	for (size_t i = 0; i < nr; i++)
		pthread_join(list[i], NULL);
	free(list);
	pthread_mutex_lock(&threads_mu);
	live_threads -= nr;
	pthread_mutex_unlock(&threads_mu);
}

/* Join every call thread that ends within timeout_ms. 0 if all did. */
static int join_call_threads(int timeout_ms)
{
	uint64_t deadline = monotonic_ms() + timeout_ms;

	for (;;) {
		size_t live;

		reap_threads();
		pthread_mutex_lock(&threads_mu);
		live = live_threads;
		pthread_mutex_unlock(&threads_mu);
		if (!live)
			return 0;
		if (monotonic_ms() >= deadline)
			return -1;
		usleep(5000);
	}
}

struct mcp_server *mcp_server_new(const struct mcp_options *o,
				  const struct mcp_toolset *const *toolsets,
				  size_t nr)
{
	struct mcp_server *srv = xcalloc(1, sizeof(*srv));
	struct strbuf ins = STRBUF_INIT;
	size_t alloc = 0;

	srv->opts = *o;
	srv->toolsets = xcalloc(nr ? nr : 1, sizeof(*srv->toolsets));
	for (size_t i = 0; i < nr; i++) {
		const struct mcp_toolset *ts = toolsets[i];

		srv->toolsets[srv->nr_toolsets++] = ts;
		for (size_t j = 0; j < ts->nr_tools; j++) {
			const struct mcp_tool *t = &ts->tools[j];
			struct tool_ref *ref;

			for (size_t k = 0; k < srv->nr_tools; k++)
				if (!strcmp(srv->tools[k].tool->name,
					    t->name)) {
					error("two tools are named '%s'",
					      t->name);
					goto fail;
				}
			ALLOC_GROW(srv->tools, srv->nr_tools + 1, alloc);
			ref = &srv->tools[srv->nr_tools++];
			memset(ref, 0, sizeof(*ref));
			ref->ts = ts;
			ref->tool = t;
			if (t->describe) {
				struct strbuf d = STRBUF_INIT;

				strbuf_addstr(&d, t->description);
				t->describe(&srv->opts, &d);
				ref->description = strbuf_detach(&d, NULL);
			}
			ref->input_schema =
				compact_schema(t->name, t->input_schema);
			if (!ref->input_schema)
				goto fail;
			if (t->output_schema &&
			    !(ref->output_schema = compact_schema(
				      t->name, t->output_schema)))
				goto fail;
		}
	}
	strbuf_addstr(&ins, "gosbx builds and runs code in isolated "
			    "sandboxes. Toolsets:");
	for (size_t i = 0; i < srv->nr_toolsets; i++)
		strbuf_addf(&ins, "%s %s", i ? "," : "",
			    srv->toolsets[i]->name);
	strbuf_addstr(&ins, ". Files and build caches persist across "
			    "calls of one session.");
	srv->instructions = strbuf_detach(&ins, NULL);
	return srv;
fail:
	mcp_server_free(srv);
	return NULL;
}

void mcp_server_free(struct mcp_server *srv)
{
	if (!srv)
		return;
	/* calls were cancelled when their sessions ended: give them time */
	join_call_threads(5000);
	if (atomic_load(&srv->live_sessions)) {
		/* a call still runs on a detached thread: leave it be */
		return;
	}
	for (size_t i = 0; i < srv->nr_tools; i++) {
		free(srv->tools[i].input_schema);
		free(srv->tools[i].output_schema);
		free(srv->tools[i].description);
	}
	free(srv->tools);
	free(srv->toolsets);
	free(srv->instructions);
	free(srv);
}

const struct mcp_options *mcp_server_options(struct mcp_server *srv)
{
	return &srv->opts;
}

static const struct tool_ref *find_tool(struct mcp_server *srv,
					const char *name)
{
	for (size_t i = 0; i < srv->nr_tools; i++)
		if (!strcmp(srv->tools[i].tool->name, name))
			return &srv->tools[i];
	return NULL;
}

/* ---- channels ---- */

void mcp_chan_init(struct mcp_chan *ch)
{
	atomic_init(&ch->refs, 1);
}

void mcp_chan_ref(struct mcp_chan *ch)
{
	atomic_fetch_add(&ch->refs, 1);
}

void mcp_chan_unref(struct mcp_chan *ch)
{
	if (ch && atomic_fetch_sub(&ch->refs, 1) == 1)
		ch->destroy(ch);
}

static void chan_send(struct mcp_chan *ch, struct strbuf *msg, int final,
		      int status)
{
	ch->send(ch, msg ? msg->buf : NULL, msg ? msg->len : 0, final, status);
}

/* ---- sessions ---- */

#define NR_STATE_SLOTS 3

struct call_ctx;

struct mcp_session {
	struct mcp_server *srv;
	pthread_mutex_t mu; /* everything below except tool_lock/state */
	pthread_cond_t cond;
	int busy;	      /* handler references + running calls */
	int ended;	      /* mcp_session_end() was called */
	int end_waiters;      /* mcp_session_end() is waiting */
	int rev;	      /* negotiated revision or MCP_REV_NONE */
	atomic_int log_level; /* logging/setLevel; -1 not set */
	struct call_ctx *calls;
	uint64_t last_used_ms;
	int shared;
	pthread_mutex_t tool_lock; /* mcp_session_lock() */
	void *state[NR_STATE_SLOTS];
	struct mcp_task_store *tasks; /* 2025-11-25 tasks of this session */
	char *id;
	char label[24];
};

struct mcp_session *mcp_session_new(struct mcp_server *srv, const char *id,
				    const char *label, int shared)
{
	struct mcp_session *s = xcalloc(1, sizeof(*s));

	s->srv = srv;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cond, NULL);
	pthread_mutex_init(&s->tool_lock, NULL);
	s->rev = MCP_REV_NONE;
	atomic_init(&s->log_level, -1);
	s->shared = shared;
	s->id = id ? xstrdup(id) : NULL;
	s->tasks = mcp_tasks_new();
	snprintf(s->label, sizeof(s->label), "%s", label);
	s->last_used_ms = monotonic_ms();
	atomic_fetch_add(&srv->live_sessions, 1);
	return s;
}

const char *mcp_session_id(struct mcp_session *s)
{
	return s->id;
}

const struct mcp_options *mcp_session_options(struct mcp_session *s)
{
	return &s->srv->opts;
}

static int state_slot(const struct mcp_toolset *ts)
{
	if (!strcmp(ts->name, "go"))
		return 0;
	if (!strcmp(ts->name, "sandbox"))
		return 1;
	return 2;
}

void **mcp_session_state(struct mcp_session *s, const struct mcp_toolset *ts)
{
	return &s->state[state_slot(ts)];
}

void mcp_session_lock(struct mcp_session *s)
{
	pthread_mutex_lock(&s->tool_lock);
}

void mcp_session_unlock(struct mcp_session *s)
{
	pthread_mutex_unlock(&s->tool_lock);
}

const char *mcp_session_label(struct mcp_session *s)
{
	return s->label;
}

int mcp_session_rev(struct mcp_session *s)
{
	int rev;

	pthread_mutex_lock(&s->mu);
	rev = s->rev;
	pthread_mutex_unlock(&s->mu);
	return rev;
}

uint64_t mcp_session_last_used(struct mcp_session *s)
{
	uint64_t t;

	pthread_mutex_lock(&s->mu);
	t = s->last_used_ms;
	pthread_mutex_unlock(&s->mu);
	return t;
}

int mcp_session_busy(struct mcp_session *s)
{
	int busy;

	pthread_mutex_lock(&s->mu);
	busy = s->busy > 0;
	pthread_mutex_unlock(&s->mu);
	return busy;
}

void mcp_session_get(struct mcp_session *s)
{
	pthread_mutex_lock(&s->mu);
	s->busy++;
	s->last_used_ms = monotonic_ms();
	pthread_mutex_unlock(&s->mu);
}

/* the toolsets' session_end, then free s */
static void session_destroy(struct mcp_session *s)
{
	struct mcp_server *srv = s->srv;

	for (size_t i = 0; i < srv->nr_toolsets; i++) {
		const struct mcp_toolset *ts = srv->toolsets[i];
		void **slot = mcp_session_state(s, ts);

		if (*slot && ts->session_end)
			ts->session_end(s, *slot);
		*slot = NULL;
	}
	mcp_tasks_free(s->tasks);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->tool_lock);
	free(s->id);
	free(s);
	atomic_fetch_sub(&srv->live_sessions, 1);
}

void mcp_session_put(struct mcp_session *s)
{
	int destroy;

	pthread_mutex_lock(&s->mu);
	s->busy--;
	s->last_used_ms = monotonic_ms();
	/* the last one out of an ended session nobody waits for */
	destroy = !s->busy && s->ended && !s->end_waiters;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->mu);
	if (destroy)
		session_destroy(s);
}

/* ---- calls ---- */

struct call_ctx {
	struct mcp_call call;
	struct mcp_session *s;
	const struct tool_ref *tool;
	struct mcp_chan *ch;
	json_t *id, *args, *token;
	int rev, modern;
	int log_level;	    /* 2026 _meta logLevel, -1 none */
	pthread_mutex_t mu; /* guards what follows */
	int done;
	int sent_progress;
	double last_progress; /* the last value sent */
	/*
	 * Heartbeats (MCP_HEARTBEAT_MS): a thread per call with a
	 * progressToken sends one whenever nothing was sent for the
	 * interval; offset (one per heartbeat) is added to the tool's
	 * values so that they still grow strictly after one.
	 */
	double offset;
	uint64_t start_ms, last_sent_ms; /* monotonic */
	pthread_cond_t hb_cond;		 /* done was set (CLOCK_MONOTONIC) */
	pthread_t hb_thread;
	int hb_running;
	struct call_ctx *next;
};

static void cancel_calls(struct mcp_session *s, struct mcp_chan *ch,
			 const json_t *id)
{
	for (struct call_ctx *c = s->calls; c; c = c->next)
		if ((!ch || c->ch == ch) && (!id || json_equal(c->id, id)))
			c->call.cancelled = 1;
}

void mcp_session_cancel_chan(struct mcp_session *s, struct mcp_chan *ch)
{
	pthread_mutex_lock(&s->mu);
	cancel_calls(s, ch, NULL);
	pthread_mutex_unlock(&s->mu);
}

int mcp_session_end(struct mcp_session *s, int64_t timeout_ms)
{
	struct timespec ts;
	int busy;

	deadline_in_ms(&ts, CLOCK_REALTIME,
		       timeout_ms > 0 ? (uint64_t)timeout_ms : 0);
	pthread_mutex_lock(&s->mu);
	s->ended = 1;
	cancel_calls(s, NULL, NULL);
	s->end_waiters++;
	while (s->busy) {
		if (timeout_ms < 0)
			pthread_cond_wait(&s->cond, &s->mu);
		else if (pthread_cond_timedwait(&s->cond, &s->mu, &ts) ==
			 ETIMEDOUT)
			break;
	}
	s->end_waiters--;
	busy = s->busy;
	pthread_mutex_unlock(&s->mu);
	if (busy) {
		mcp_log_stderr("gosbx mcp: session %s: %d call(s) still "
			       "running; it ends when they finish",
			       s->label, busy);
		return 1;
	}
	session_destroy(s);
	return 0;
}

/* ---- building messages ---- */

static void add_json(struct strbuf *out, const json_t *v)
{
	if (!v || json_dump_into(out, v) < 0)
		strbuf_addstr(out, "null");
}

static void add_number(struct strbuf *out, double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 9e15)
		strbuf_addf(out, "%.0f", v);
	else if (isfinite(v))
		strbuf_addf(out, "%.17g", v);
	else
		strbuf_addch(out, '0');
}

void mcp_error_msg(struct strbuf *out, const json_t *id, int code,
		   const char *message, const json_t *data)
{
	strbuf_addstr(out, "{\"jsonrpc\":\"2.0\",\"id\":");
	add_json(out, id);
	strbuf_addf(out, ",\"error\":{\"code\":%d,\"message\":", code);
	json_add_str(out, message);
	if (data) {
		strbuf_addstr(out, ",\"data\":");
		add_json(out, data);
	}
	strbuf_addstr(out, "}}");
}

static void add_server_info(struct strbuf *out, int rev)
{
	strbuf_addstr(out, "{\"name\":\"gosbx\"");
	if (rev >= MCP_REV_2025_06_18)
		strbuf_addstr(out, ",\"title\":\"gosbx sandboxes\"");
	strbuf_addstr(out, ",\"version\":\"" GOSBX_VERSION "\"}");
}

/*
 * {"jsonrpc":"2.0","id":id,"result":{fields}}; a 2026-07-28 result
 * also carries resultType and the server's identity in _meta.
 */
static void result_msg(struct strbuf *out, const json_t *id, int modern,
		       const char *fields, size_t len)
{
	strbuf_addstr(out, "{\"jsonrpc\":\"2.0\",\"id\":");
	add_json(out, id);
	strbuf_addstr(out, ",\"result\":{");
	if (modern) {
		strbuf_addstr(out, "\"resultType\":\"complete\"");
		if (len)
			strbuf_addch(out, ',');
	}
	strbuf_add(out, fields, len);
	if (modern) {
		strbuf_addstr(out, ",\"_meta\":{\"" MCP_META_SERVERINFO "\":");
		add_server_info(out, MCP_REV_2026_07_28);
		strbuf_addch(out, '}');
	}
	strbuf_addstr(out, "}}");
}

/* ---- requests ---- */

struct req {
	struct mcp_session *s;
	struct mcp_chan *ch;
	const json_t *id;
	const char *method;
	json_t *params; /* NULL when absent */
	int rev;
	int modern;
	int log_level; /* 2026 _meta logLevel or -1 */
};

static int reply_error(struct req *r, int code, int status, const char *fmt,
		       ...) PRINTF_LIKE(4, 5);
static int reply_error(struct req *r, int code, int status, const char *fmt,
		       ...)
{
	struct strbuf msg = STRBUF_INIT, out = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	mcp_error_msg(&out, r->id, code, msg.buf, NULL);
	chan_send(r->ch, &out, 1, status);
	strbuf_release(&msg);
	strbuf_release(&out);
	return 0;
}

static void reply_result(struct req *r, struct strbuf *fields)
{
	struct strbuf out = STRBUF_INIT;

	result_msg(&out, r->id, r->modern, fields->buf, fields->len);
	chan_send(r->ch, &out, 1, 200);
	strbuf_release(&out);
}

static int do_initialize(struct req *r)
{
	const char *want = json_object_str(r->params, "protocolVersion");
	int rev = mcp_rev_parse(want);
	struct mcp_server *srv = r->s->srv;
	struct strbuf f = STRBUF_INIT;
	struct req copy = *r;

	if (!want)
		return reply_error(r, MCP_INVALID_PARAMS, 400,
				   "Invalid params: initialize needs a "
				   "protocolVersion string");
	/* the client's revision if we speak it, else our newest */
	if (rev == MCP_REV_NONE || rev > REV_LATEST_HANDSHAKE)
		rev = REV_LATEST_HANDSHAKE;
	pthread_mutex_lock(&r->s->mu);
	r->s->rev = rev;
	pthread_mutex_unlock(&r->s->mu);
	strbuf_addf(&f, "\"protocolVersion\":\"%s\"", mcp_rev_name(rev));
	strbuf_addstr(&f, ",\"capabilities\":{\"logging\":{},"
			  "\"tools\":{\"listChanged\":false}");
	if (rev >= MCP_REV_2025_11_25)
		strbuf_addstr(&f, ",\"tasks\":{\"list\":{},\"cancel\":{},"
				  "\"requests\":{\"tools\":{\"call\":{}}}}");
	strbuf_addch(&f, '}');
	strbuf_addstr(&f, ",\"serverInfo\":");
	add_server_info(&f, rev);
	strbuf_addstr(&f, ",\"instructions\":");
	json_add_str(&f, srv->instructions);
	copy.modern = 0;
	reply_result(&copy, &f);
	strbuf_release(&f);
	return 0;
}

static void add_versions(struct strbuf *out)
{
	strbuf_addch(out, '[');
	for (int i = MCP_REV_NR - 1; i >= 0; i--)
		strbuf_addf(out, "\"%s\"%s", rev_names[i], i ? "," : "");
	strbuf_addch(out, ']');
}

static int do_discover(struct req *r)
{
	struct strbuf f = STRBUF_INIT;

	strbuf_addstr(&f, "\"supportedVersions\":");
	add_versions(&f);
	strbuf_addstr(&f, ",\"capabilities\":{\"logging\":{},"
			  "\"tools\":{\"listChanged\":false}}");
	strbuf_addstr(&f, ",\"serverInfo\":");
	add_server_info(&f, MCP_REV_2026_07_28);
	strbuf_addstr(&f, ",\"instructions\":");
	json_add_str(&f, r->s->srv->instructions);
	strbuf_addstr(&f, ",\"ttlMs\":0,\"cacheScope\":\"private\"");
	reply_result(r, &f);
	strbuf_release(&f);
	return 0;
}

static int do_ping(struct req *r)
{
	struct strbuf f = STRBUF_INIT;

	reply_result(r, &f);
	return 0;
}

static int do_set_level(struct req *r)
{
	int level = log_level_parse(json_object_str(r->params, "level"));
	struct strbuf f = STRBUF_INIT;

	if (level < 0)
		return reply_error(r, MCP_INVALID_PARAMS, 200,
				   "Invalid params: level must be one of "
				   "debug, info, notice, warning, error, "
				   "critical, alert, emergency");
	atomic_store(&r->s->log_level, level);
	reply_result(r, &f);
	return 0;
}

/*
 * Cursors of earlier versions (10 tools a page) still name an offset;
 * no answer gives one any more.
 */
#define CURSOR_PREFIX "gosbx-tools:"

static void add_tool(struct strbuf *out, const struct tool_ref *ref, int rev,
		     int structured)
{
	const struct mcp_tool *t = ref->tool;
	unsigned h = t->hints;
	int ro = !!(h & MCP_HINT_READ_ONLY), destructive;

	strbuf_addstr(out, "{\"name\":");
	json_add_str(out, t->name);
	if (t->title && rev >= MCP_REV_2025_06_18) {
		strbuf_addstr(out, ",\"title\":");
		json_add_str(out, t->title);
	}
	strbuf_addstr(out, ",\"description\":");
	json_add_str(out, ref->description ? ref->description
			  : t->description ? t->description
					   : "");
	strbuf_addf(out, ",\"inputSchema\":%s", ref->input_schema);
	if (ref->output_schema && structured && rev >= MCP_REV_2025_06_18)
		strbuf_addf(out, ",\"outputSchema\":%s", ref->output_schema);
	if (rev >= MCP_REV_2025_03_26) {
		if (h & MCP_HINT_NOT_DESTRUCTIVE)
			destructive = 0;
		else if (h & MCP_HINT_DESTRUCTIVE)
			destructive = 1;
		else
			destructive = !ro;
		strbuf_addstr(out, ",\"annotations\":{");
		if (t->title) {
			strbuf_addstr(out, "\"title\":");
			json_add_str(out, t->title);
			strbuf_addch(out, ',');
		}
		strbuf_addf(out,
			    "\"readOnlyHint\":%s,\"destructiveHint\":%s,"
			    "\"idempotentHint\":%s,\"openWorldHint\":%s}",
			    ro ? "true" : "false",
			    destructive ? "true" : "false",
			    h & MCP_HINT_IDEMPOTENT ? "true" : "false",
			    h & MCP_HINT_OPEN_WORLD ? "true" : "false");
	}
	/* every tool may run as a task (2025-11-25; not in 2026-07-28) */
	if (rev == MCP_REV_2025_11_25)
		strbuf_addstr(out, ",\"execution\":{\"taskSupport\":"
				   "\"optional\"}");
	strbuf_addch(out, '}');
}

/* the offset a cursor stands for, or -1 */
static long parse_cursor(const char *cursor, size_t nr)
{
	struct strbuf raw = STRBUF_INIT;
	const char *num;
	char *end;
	long off = -1;

	if (!base64_decode_into(&raw, cursor, strlen(cursor)) &&
	    skip_prefix(raw.buf, CURSOR_PREFIX, &num) && *num >= '1' &&
	    *num <= '9') {
		errno = 0;
		off = strtol(num, &end, 10);
		if (errno || *end || off <= 0 || (size_t)off >= nr)
			off = -1;
	}
	strbuf_release(&raw);
	return off;
}

/*
 * Every tool in one page, never a nextCursor: Gemini CLI's discovery
 * and inspector-cli read the first page only (Documentation/protocol/mcp.md
 * "Protocol").
 */
static int do_tools_list(struct req *r)
{
	struct mcp_server *srv = r->s->srv;
	struct strbuf f = STRBUF_INIT;
	json_t *cur = r->params ? json_object_get(r->params, "cursor") : NULL;
	long off = 0;

	if (cur && !json_is_null(cur)) {
		if (!json_is_string(cur) ||
		    (off = parse_cursor(json_string_value(cur),
					srv->nr_tools)) < 0)
			return reply_error(r, MCP_INVALID_PARAMS, 200,
					   "Invalid params: invalid cursor");
	}
	strbuf_addstr(&f, "\"tools\":[");
	for (size_t i = (size_t)off; i < srv->nr_tools; i++) {
		if (i > (size_t)off)
			strbuf_addch(&f, ',');
		add_tool(&f, &srv->tools[i], r->rev,
			 srv->opts.structured_content);
	}
	strbuf_addch(&f, ']');
	if (r->modern)
		strbuf_addstr(&f, ",\"ttlMs\":0,\"cacheScope\":\"private\"");
	reply_result(r, &f);
	strbuf_release(&f);
	return 0;
}

static void add_call_result(struct strbuf *f, const struct call_ctx *c,
			    const struct mcp_result *res)
{
	strbuf_addstr(f, "\"content\":[{\"type\":\"text\",\"text\":");
	json_add_string(f, res->text.buf, res->text.len);
	strbuf_addstr(f, "}]");
	if (res->structured && c->s->srv->opts.structured_content &&
	    c->rev >= MCP_REV_2025_06_18) {
		strbuf_addstr(f, ",\"structuredContent\":");
		add_json(f, res->structured);
	}
	strbuf_addf(f, ",\"isError\":%s", res->is_error ? "true" : "false");
}

static void call_free(struct call_ctx *c)
{
	json_decref(c->id);
	json_decref(c->args);
	if (c->token)
		json_decref(c->token);
	pthread_cond_destroy(&c->hb_cond);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/*
 * Send one notifications/progress of value progress (already shifted
 * by c->offset); c->mu held, the call still running.
 */
static void send_progress_locked(struct call_ctx *c, double progress,
				 double total, const char *message)
{
	struct strbuf out = STRBUF_INIT;

	c->sent_progress = 1;
	c->last_progress = progress;
	c->last_sent_ms = monotonic_ms();
	strbuf_addstr(&out, "{\"jsonrpc\":\"2.0\",\"method\":"
			    "\"notifications/progress\",\"params\":{"
			    "\"progressToken\":");
	add_json(&out, c->token);
	strbuf_addstr(&out, ",\"progress\":");
	add_number(&out, progress);
	if (total > 0 && isfinite(total)) {
		strbuf_addstr(&out, ",\"total\":");
		add_number(&out, total);
	}
	if (message && c->rev >= MCP_REV_2025_03_26) {
		strbuf_addstr(&out, ",\"message\":");
		json_add_str(&out, message);
	}
	strbuf_addstr(&out, "}}");
	chan_send(c->ch, &out, 0, 200);
	strbuf_release(&out);
}

/*
 * The heartbeat thread of a call: until the call is done, a progress
 * "running, <s> s" whenever nothing was sent for the interval. It
 * holds c->mu except while it waits, so that it never sends after the
 * answer (call_thread sets done under c->mu, then joins it).
 */
static void *heartbeat_thread(void *arg)
{
	struct call_ctx *c = arg;
	uint64_t every = (uint64_t)c->s->srv->opts.heartbeat_ms;

	pthread_mutex_lock(&c->mu);
	while (!c->done) {
		uint64_t now = monotonic_ms(), due = c->last_sent_ms + every;
		struct timespec ts;

		if (now < due) {
			deadline_in_ms(&ts, CLOCK_MONOTONIC, due - now);
			pthread_cond_timedwait(&c->hb_cond, &c->mu, &ts);
			continue;
		}
		if (c->call.cancelled) {
			c->last_sent_ms = now; /* nobody waits: just sleep */
			continue;
		}
		{
			struct strbuf msg = STRBUF_INIT;
			double next =
				c->sent_progress ? c->last_progress + 1 : 1;

			strbuf_addf(&msg, "running, %" PRIu64 " s",
				    (now - c->start_ms + 500) / 1000);
			/* the tool's values sent later stay above next */
			c->offset += 1;
			send_progress_locked(c, next, 0, msg.buf);
			strbuf_release(&msg);
		}
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* Start the heartbeats of c (a call with a progressToken). */
static void heartbeat_start(struct call_ctx *c)
{
	int rc;

	if (!c->token || c->s->srv->opts.heartbeat_ms <= 0)
		return;
	rc = pthread_create(&c->hb_thread, NULL, heartbeat_thread, c);
	if (rc)
		mcp_log_stderr("gosbx mcp: no heartbeats for a call of "
			       "'%s': cannot start a thread: %s",
			       c->call.tool, strerror(rc));
	else
		c->hb_running = 1;
}

/* The call is done: no progress or log after this; heartbeats end. */
static void call_mark_done(struct call_ctx *c)
{
	pthread_mutex_lock(&c->mu);
	c->done = 1;
	pthread_cond_signal(&c->hb_cond);
	pthread_mutex_unlock(&c->mu);
	if (c->hb_running)
		pthread_join(c->hb_thread, NULL);
	c->hb_running = 0;
}

static void *call_thread(void *arg)
{
	struct call_ctx *c = arg;
	struct mcp_session *s = c->s;
	struct mcp_result res;
	struct strbuf out = STRBUF_INIT;
	int rc, cancelled;

	mcp_result_init(&res);
	rc = c->tool->tool->call(&c->call, &res);

	pthread_mutex_lock(&s->mu);
	for (struct call_ctx **p = &s->calls; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	cancelled = c->call.cancelled;
	pthread_mutex_unlock(&s->mu);
	/* no progress or log after this point: the answer comes last */
	call_mark_done(c);

	if (cancelled) {
		chan_send(c->ch, NULL, 1, 200);
	} else if (rc < 0) {
		struct strbuf msg = STRBUF_INIT;

		strbuf_addstr(&msg, "Internal error");
		if (*last_error())
			strbuf_addf(&msg, ": %s", last_error());
		mcp_error_msg(&out, c->id, MCP_INTERNAL_ERROR, msg.buf, NULL);
		chan_send(c->ch, &out, 1, 200);
		strbuf_release(&msg);
	} else {
		struct strbuf f = STRBUF_INIT;

		add_call_result(&f, c, &res);
		result_msg(&out, c->id, c->modern, f.buf, f.len);
		chan_send(c->ch, &out, 1, 200);
		strbuf_release(&f);
	}
	strbuf_release(&out);
	mcp_result_release(&res);
	mcp_chan_unref(c->ch);
	call_free(c);
	mcp_session_put(s);
	thread_finished();
	return NULL;
}

/*
 * The "task" param of a tools/call (2025-11-25 only): 0 with *ttl_ms
 * (-1: none asked) and *is_task set, or -1 (answered).
 */
static int task_param(struct req *r, int *is_task, int64_t *ttl_ms)
{
	json_t *task = r->params ? json_object_get(r->params, "task") : NULL;
	json_t *ttl;

	*is_task = 0;
	*ttl_ms = -1;
	if (!task || r->modern || r->rev < MCP_REV_2025_11_25)
		return 0; /* not negotiated: today's tools/call */
	if (!json_is_object(task)) {
		reply_error(r, MCP_INVALID_PARAMS, 200,
			    "Invalid params: \"task\" must be an object");
		return -1;
	}
	ttl = json_object_get(task, "ttl");
	if (ttl && !json_is_null(ttl)) {
		if (!json_is_integer(ttl) || json_integer_value(ttl) < 0) {
			reply_error(r, MCP_INVALID_PARAMS, 200,
				    "Invalid params: task \"ttl\" must be a "
				    "number of milliseconds, 0 or more");
			return -1;
		}
		*ttl_ms = (int64_t)json_integer_value(ttl);
	}
	*is_task = 1;
	return 0;
}

static int do_tools_call(struct req *r)
{
	const char *name = json_object_str(r->params, "name");
	json_t *args =
		r->params ? json_object_get(r->params, "arguments") : NULL;
	json_t *meta = r->params ? json_object_get(r->params, "_meta") : NULL;
	json_t *token = meta ? json_object_get(meta, "progressToken") : NULL;
	const struct tool_ref *tool;
	struct call_ctx *c;
	pthread_attr_t attr;
	pthread_t tid;
	int rc, is_task;
	int64_t ttl_ms;
	struct mcp_chan *ch = r->ch;
	struct strbuf created = STRBUF_INIT;

	if (!name)
		return reply_error(r, MCP_INVALID_PARAMS, 200,
				   "Invalid params: tools/call needs a tool "
				   "name");
	if (!(tool = find_tool(r->s->srv, name)))
		return reply_error(r, MCP_INVALID_PARAMS, 200,
				   "Invalid params: unknown tool '%s'", name);
	if (args && !json_is_null(args) && !json_is_object(args))
		return reply_error(r, MCP_INVALID_PARAMS, 200,
				   "Invalid params: arguments must be an "
				   "object");
	if (task_param(r, &is_task, &ttl_ms) < 0)
		return 0;
	/* a task: the answer goes to the task, which keeps it */
	if (is_task && !(ch = mcp_task_create(r->s->tasks, ttl_ms, &created)))
		return reply_error(r, MCP_INTERNAL_ERROR, 200,
				   "Internal error: %s", last_error());

	c = xcalloc(1, sizeof(*c));
	c->s = r->s;
	c->tool = tool;
	c->ch = ch;
	c->id = json_deep_copy(r->id);
	c->args = args && json_is_object(args) ? json_deep_copy(args)
					       : json_object();
	if (token && !is_task &&
	    (json_is_string(token) || json_is_integer(token)))
		c->token = json_deep_copy(token);
	c->rev = r->rev;
	c->modern = r->modern;
	c->log_level = r->log_level;
	pthread_mutex_init(&c->mu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&c->hb_cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	c->start_ms = c->last_sent_ms = monotonic_ms();
	c->call.session = r->s;
	c->call.tool = tool->tool->name;
	c->call.args = c->args;
	c->call.core = c;

	pthread_mutex_lock(&r->s->mu);
	if (r->s->ended) {
		pthread_mutex_unlock(&r->s->mu);
		call_free(c);
		if (is_task)
			mcp_task_forget(r->s->tasks, ch);
		strbuf_release(&created);
		return reply_error(r, MCP_INTERNAL_ERROR, 200,
				   "Internal error: the session is ending");
	}
	r->s->busy++;
	c->next = r->s->calls;
	r->s->calls = c;
	pthread_mutex_unlock(&r->s->mu);
	mcp_chan_ref(ch);

	reap_threads();
	pthread_attr_init(&attr);
	/* before the call thread, which joins it */
	heartbeat_start(c);
	rc = pthread_create(&tid, &attr, call_thread, c);
	pthread_attr_destroy(&attr);
	if (!rc) {
		pthread_mutex_lock(&threads_mu);
		live_threads++;
		pthread_mutex_unlock(&threads_mu);
	}
	if (rc) {
		call_mark_done(c);
		pthread_mutex_lock(&r->s->mu);
		r->s->calls = c->next;
		pthread_mutex_unlock(&r->s->mu);
		mcp_chan_unref(ch);
		call_free(c);
		if (is_task)
			mcp_task_forget(r->s->tasks, ch);
		reply_error(r, MCP_INTERNAL_ERROR, 200,
			    "Internal error: cannot start a thread: %s",
			    strerror(rc));
		mcp_session_put(r->s);
	} else if (is_task) {
		reply_result(r, &created); /* CreateTaskResult */
	}
	strbuf_release(&created);
	return 0;
}

/* ---- tasks (2025-11-25) ---- */

/* the taskId param, or NULL (answered -32602) */
static const char *task_id_param(struct req *r)
{
	const char *id = json_object_str(r->params, "taskId");

	if (!id)
		reply_error(r, MCP_INVALID_PARAMS, 200,
			    "Invalid params: %s needs a taskId string",
			    r->method);
	return id;
}

static int unknown_task(struct req *r, const char *id)
{
	return reply_error(r, MCP_INVALID_PARAMS, 200,
			   "Invalid params: no task '%.64s' in this session",
			   id);
}

static int do_tasks_get(struct req *r)
{
	const char *id = task_id_param(r);
	struct strbuf f = STRBUF_INIT;

	if (!id)
		return 0;
	if (mcp_task_get(r->s->tasks, id, &f) < 0)
		unknown_task(r, id);
	else
		reply_result(r, &f);
	strbuf_release(&f);
	return 0;
}

static int do_tasks_result(struct req *r)
{
	const char *id = task_id_param(r);

	if (id && mcp_task_result(r->s->tasks, id, r->ch, r->id) < 0)
		unknown_task(r, id);
	return 0;
}

static int do_tasks_list(struct req *r)
{
	json_t *cur = r->params ? json_object_get(r->params, "cursor") : NULL;
	struct strbuf f = STRBUF_INIT;

	/* one page holds them all (MCP_TASKS_MAX): no cursor is valid */
	if (cur && !json_is_null(cur))
		return reply_error(r, MCP_INVALID_PARAMS, 200,
				   "Invalid params: invalid cursor");
	mcp_tasks_list(r->s->tasks, &f);
	reply_result(r, &f);
	strbuf_release(&f);
	return 0;
}

static int do_tasks_cancel(struct req *r)
{
	const char *id = task_id_param(r);
	struct strbuf f = STRBUF_INIT;
	struct mcp_chan *ch;
	int done;

	if (!id)
		return 0;
	ch = mcp_task_cancel(r->s->tasks, id, &f, &done);
	if (ch) {
		/* kills the command's process group, as cancelled does */
		mcp_session_cancel_chan(r->s, ch);
		mcp_chan_unref(ch);
		reply_result(r, &f);
	} else if (done) {
		reply_error(r, MCP_INVALID_PARAMS, 200,
			    "Invalid params: task '%s' has already ended", id);
	} else {
		unknown_task(r, id);
	}
	strbuf_release(&f);
	return 0;
}

void mcp_call_progress(struct mcp_call *call, double progress, double total,
		       const char *message)
{
	struct call_ctx *c = call ? call->core : NULL;

	if (!c || !c->token)
		return;
	pthread_mutex_lock(&c->mu);
	progress += c->offset;
	if (total > 0)
		total += c->offset;
	if (!c->done && !call->cancelled && isfinite(progress) &&
	    (!c->sent_progress || progress > c->last_progress))
		send_progress_locked(c, progress, total, message);
	pthread_mutex_unlock(&c->mu);
}

int mcp_call_wants_progress(const struct mcp_call *call)
{
	const struct call_ctx *c = call ? call->core : NULL;

	return c && c->token;
}

int mcp_call_timeout_arg(struct mcp_call *call, struct mcp_result *res,
			 int64_t dflt_ms, int64_t *out_ms)
{
	int64_t limit = mcp_session_options(call->session)->call_timeout_ms;
	json_t *v = json_object_get(call->args, "timeout");
	int64_t ms;

	if (!v || json_is_null(v)) {
		*out_ms = dflt_ms < limit ? dflt_ms : limit;
		return 0;
	}
	if (json_is_number(v)) {
		double sec = json_number_value(v);

		if (!isfinite(sec) || sec <= 0 || sec > 1e12)
			goto bad;
		ms = (int64_t)(sec * 1000 + 0.5);
		if (ms < 1)
			ms = 1;
	} else if (!json_is_string(v) ||
		   parse_duration_ms(json_string_value(v), &ms) < 0 ||
		   ms <= 0) {
		goto bad;
	}
	if (ms > limit) {
		mcp_result_error(res,
				 "argument 'timeout' (%g s) is above this "
				 "server's limit of %g s (gosbx mcp "
				 "--call-timeout): ask for at most %g s",
				 ms / 1000.0, limit / 1000.0, limit / 1000.0);
		return -1;
	}
	*out_ms = ms;
	return 0;
bad:
	mcp_result_error(res, "argument 'timeout' must be a number of "
			      "seconds above 0 or a duration such as "
			      "\"90s\" or \"2m\"");
	return -1;
}

void mcp_call_log(struct mcp_call *call, const char *level, const char *fmt,
		  ...)
{
	struct call_ctx *c = call ? call->core : NULL;
	struct strbuf msg = STRBUF_INIT, out = STRBUF_INIT;
	int lv = log_level_parse(level), threshold;
	va_list ap;

	if (lv < 0)
		lv = 1; /* info */
	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	if (lv >= 1)
		mcp_log_stderr("%s", msg.buf);
	if (!c)
		goto out;
	if (c->modern)
		threshold = c->log_level;
	else if (c->rev != MCP_REV_NONE)
		threshold = atomic_load(&c->s->log_level);
	else
		threshold = -1;
	if (threshold < 0 || lv < threshold)
		goto out;
	strbuf_addf(&out,
		    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
		    "message\",\"params\":{\"level\":\"%s\",\"logger\":"
		    "\"gosbx\",\"data\":",
		    log_levels[lv]);
	json_add_string(&out, msg.buf, msg.len);
	strbuf_addstr(&out, "}}");
	pthread_mutex_lock(&c->mu);
	if (!c->done && !call->cancelled)
		chan_send(c->ch, &out, 0, 200);
	pthread_mutex_unlock(&c->mu);
out:
	strbuf_release(&msg);
	strbuf_release(&out);
}

/* ---- dispatch ---- */

#define M_LEGACY (1 << 0)   /* handshake revisions only */
#define M_MODERN (1 << 1)   /* 2026-07-28 only */
#define M_NEED_REV (1 << 2) /* legacy: after initialize */
#define M_TASKS (1 << 3)    /* 2025-11-25 (tasks) only */

static const struct method {
	const char *name;
	int (*fn)(struct req *r);
	unsigned flags;
} methods[] = {
	{ "initialize", do_initialize, M_LEGACY },
	{ "ping", do_ping, M_LEGACY },
	{ "logging/setLevel", do_set_level, M_LEGACY | M_NEED_REV },
	{ "server/discover", do_discover, M_MODERN },
	{ "tools/list", do_tools_list, M_NEED_REV },
	{ "tools/call", do_tools_call, M_NEED_REV },
	{ "tasks/get", do_tasks_get, M_LEGACY | M_NEED_REV | M_TASKS },
	{ "tasks/result", do_tasks_result, M_LEGACY | M_NEED_REV | M_TASKS },
	{ "tasks/list", do_tasks_list, M_LEGACY | M_NEED_REV | M_TASKS },
	{ "tasks/cancel", do_tasks_cancel, M_LEGACY | M_NEED_REV | M_TASKS },
};

static int valid_id(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

const char *mcp_message_method(const json_t *msg)
{
	json_t *m = json_is_object(msg) ? json_object_get(msg, "method") : NULL;

	return json_is_string(m) ? json_string_value(m) : NULL;
}

int mcp_message_expects_answer(const json_t *msg)
{
	const char *jv = json_object_str(msg, "jsonrpc");
	json_t *id;

	if (!json_is_object(msg) || !jv || strcmp(jv, "2.0"))
		return 1;
	id = json_object_get(msg, "id");
	if (json_object_get(msg, "method")) {
		/* a notification has no id at all */
		return id != NULL || !mcp_message_method(msg);
	}
	/* a response of the client */
	if (id &&
	    (json_object_get(msg, "result") || json_object_get(msg, "error")))
		return 0;
	return 1;
}

static json_t *msg_meta(const json_t *msg)
{
	json_t *p = json_object_get(msg, "params");
	json_t *meta = json_is_object(p) ? json_object_get(p, "_meta") : NULL;

	return json_is_object(meta) ? meta : NULL;
}

const char *mcp_message_meta_string(const json_t *msg, const char *key)
{
	json_t *meta = json_is_object(msg) ? msg_meta(msg) : NULL;

	return meta ? json_string_value(json_object_get(meta, key)) : NULL;
}

int mcp_message_is_modern(const json_t *msg)
{
	json_t *meta = json_is_object(msg) ? msg_meta(msg) : NULL;

	return meta && json_object_get(meta, MCP_META_VERSION) != NULL &&
	       json_object_get(msg, "id") != NULL;
}

int mcp_message_may_stream(struct mcp_session *s, const json_t *msg)
{
	const char *m = mcp_message_method(msg);
	json_t *meta = json_is_object(msg) ? msg_meta(msg) : NULL;

	if (!m || strcmp(m, "tools/call"))
		return 0;
	if (meta && (json_object_get(meta, "progressToken") ||
		     json_object_get(meta, MCP_META_LOGLEVEL)))
		return 1;
	return !mcp_message_is_modern(msg) && s &&
	       atomic_load(&s->log_level) >= 0;
}

static void handle_notification(struct mcp_session *s, const char *method,
				json_t *params)
{
	json_t *id;

	if (!strcmp(method, "notifications/cancelled")) {
		id = json_is_object(params)
			     ? json_object_get(params, "requestId")
			     : NULL;
		if (!valid_id(id) || s->shared)
			return; /* ignored, as the spec says */
		pthread_mutex_lock(&s->mu);
		cancel_calls(s, NULL, id);
		pthread_mutex_unlock(&s->mu);
	}
	/* notifications/initialized and others: nothing to do */
}

/* 2026-07-28: check the _meta envelope; 0 or -1 (answered) */
static int check_modern(struct req *r, json_t *meta)
{
	json_t *v = json_object_get(meta, MCP_META_VERSION);
	json_t *caps = json_object_get(meta, MCP_META_CAPS);
	json_t *lv = json_object_get(meta, MCP_META_LOGLEVEL);

	if (!json_is_string(v)) {
		reply_error(r, MCP_INVALID_PARAMS, 400,
			    "Invalid params: _meta \"" MCP_META_VERSION
			    "\" must be a string");
		return -1;
	}
	if (strcmp(json_string_value(v), rev_names[MCP_REV_2026_07_28])) {
		struct strbuf out = STRBUF_INIT, data = STRBUF_INIT;
		json_t *d;

		strbuf_addstr(&data, "{\"supported\":");
		add_versions(&data);
		strbuf_addstr(&data, ",\"requested\":");
		json_add_str(&data, json_string_value(v));
		strbuf_addch(&data, '}');
		d = json_parse(data.buf, data.len, NULL);
		mcp_error_msg(&out, r->id, MCP_UNSUPPORTED_VERSION,
			      "Unsupported protocol version", d);
		chan_send(r->ch, &out, 1, 400);
		if (d)
			json_decref(d);
		strbuf_release(&data);
		strbuf_release(&out);
		return -1;
	}
	if (!json_is_object(caps)) {
		reply_error(r, MCP_INVALID_PARAMS, 400,
			    "Invalid params: missing _meta \"" MCP_META_CAPS
			    "\" (an object)");
		return -1;
	}
	if (lv && !json_is_null(lv)) {
		r->log_level = json_is_string(lv)
				       ? log_level_parse(json_string_value(lv))
				       : -1;
		if (r->log_level < 0) {
			reply_error(
				r, MCP_INVALID_PARAMS, 400,
				"Invalid params: bad _meta \"" MCP_META_LOGLEVEL
				"\"");
			return -1;
		}
	}
	return 0;
}

static int handle_message(struct mcp_session *s, json_t *msg,
			  struct mcp_chan *ch)
{
	struct req r = { .s = s, .ch = ch, .log_level = -1 };
	json_t *id, *params, *meta;
	const char *jv, *method;
	const struct method *m = NULL;

	pthread_mutex_lock(&s->mu);
	s->last_used_ms = monotonic_ms();
	pthread_mutex_unlock(&s->mu);

	if (!json_is_object(msg))
		return reply_error(&r, MCP_INVALID_REQUEST, 400,
				   "Invalid Request: not a JSON-RPC message "
				   "object");
	id = json_object_get(msg, "id");
	if (id && valid_id(id))
		r.id = id;
	jv = json_object_str(msg, "jsonrpc");
	if (!jv || strcmp(jv, "2.0"))
		return reply_error(&r, MCP_INVALID_REQUEST, 400,
				   "Invalid Request: \"jsonrpc\" must be "
				   "\"2.0\"");
	if (id && !valid_id(id))
		return reply_error(&r, MCP_INVALID_REQUEST, 400,
				   "Invalid Request: \"id\" must be a string "
				   "or an integer");
	if (!json_object_get(msg, "method")) {
		if (id && (json_object_get(msg, "result") ||
			   json_object_get(msg, "error")))
			return 0; /* a response: we sent no request */
		return reply_error(&r, MCP_INVALID_REQUEST, 400,
				   "Invalid Request: no \"method\"");
	}
	if (!(method = mcp_message_method(msg)))
		return reply_error(&r, MCP_INVALID_REQUEST, 400,
				   "Invalid Request: \"method\" must be a "
				   "string");
	params = json_object_get(msg, "params");
	if (params && json_is_null(params))
		params = NULL;
	if (!id) {
		handle_notification(s, method, params);
		return 0;
	}
	r.method = method;
	r.params = params;
	if (params && !json_is_object(params))
		return reply_error(&r, MCP_INVALID_PARAMS, 200,
				   "Invalid params: \"params\" must be an "
				   "object");
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
		if (!strcmp(methods[i].name, method))
			m = &methods[i];

	meta = params ? json_object_get(params, "_meta") : NULL;
	if (json_is_object(meta) && json_object_get(meta, MCP_META_VERSION) &&
	    strcmp(method, "initialize")) {
		r.modern = 1;
		r.rev = MCP_REV_2026_07_28;
		if (check_modern(&r, meta) < 0)
			return 0;
		if (!m || (m->flags & M_LEGACY))
			return reply_error(&r, MCP_METHOD_NOT_FOUND, 404,
					   "Method not found: %s", method);
		return m->fn(&r);
	}
	if (!m || (m->flags & M_MODERN && strcmp(method, "server/discover")))
		return reply_error(&r, MCP_METHOD_NOT_FOUND, 200,
				   "Method not found: %s", method);
	r.rev = mcp_session_rev(s);
	if ((m->flags & M_MODERN) ||
	    ((m->flags & M_NEED_REV) && r.rev == MCP_REV_NONE))
		return reply_error(
			&r, MCP_INVALID_PARAMS, 400,
			"Invalid params: missing _meta \"" MCP_META_VERSION
			"\" (2026-07-28), or send initialize first");
	if ((m->flags & M_TASKS) && r.rev < MCP_REV_2025_11_25)
		return reply_error(&r, MCP_METHOD_NOT_FOUND, 200,
				   "Method not found: %s", method);
	return m->fn(&r);
}

void mcp_handle_message(struct mcp_session *s, json_t *msg, struct mcp_chan *ch)
{
	handle_message(s, msg, ch);
}

/* ---- batches (2025-03-26) ---- */

struct batch_chan {
	struct mcp_chan ch;
	struct mcp_chan *parent;
	pthread_mutex_t mu;
	int owed;
	int n;
	struct strbuf arr;
};

static void batch_send(struct mcp_chan *ch, const char *msg, size_t len,
		       int final, int status)
{
	struct batch_chan *b = (struct batch_chan *)ch;

	if (!final) {
		b->parent->send(b->parent, msg, len, 0, status);
		return;
	}
	pthread_mutex_lock(&b->mu);
	if (msg) {
		strbuf_addch(&b->arr, b->n++ ? ',' : '[');
		strbuf_add(&b->arr, msg, len);
	}
	if (!--b->owed) {
		if (b->n) {
			strbuf_addch(&b->arr, ']');
			b->parent->send(b->parent, b->arr.buf, b->arr.len, 1,
					200);
		} else {
			b->parent->send(b->parent, NULL, 0, 1, 200);
		}
	}
	pthread_mutex_unlock(&b->mu);
}

static void batch_destroy(struct mcp_chan *ch)
{
	struct batch_chan *b = (struct batch_chan *)ch;

	mcp_chan_unref(b->parent);
	strbuf_release(&b->arr);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

static int handle_batch(struct mcp_session *s, json_t *arr, struct mcp_chan *ch)
{
	struct batch_chan *b;
	struct req r = { .s = s, .ch = ch };
	size_t i, n = json_array_size(arr);
	json_t *v;

	if (!n)
		return reply_error(&r, MCP_INVALID_REQUEST, 400,
				   "Invalid Request: empty batch");
	if (mcp_session_rev(s) != MCP_REV_2025_03_26)
		return reply_error(&r, MCP_INVALID_REQUEST, 400,
				   "Invalid Request: JSON-RPC batches are "
				   "only supported in revision 2025-03-26");
	json_array_foreach (arr, i, v) {
		const char *m = mcp_message_method(v);

		if (m && !strcmp(m, "initialize"))
			return reply_error(&r, MCP_INVALID_REQUEST, 400,
					   "Invalid Request: initialize "
					   "cannot be part of a batch");
	}
	b = xcalloc(1, sizeof(*b));
	mcp_chan_init(&b->ch);
	b->ch.send = batch_send;
	b->ch.destroy = batch_destroy;
	b->parent = ch;
	mcp_chan_ref(ch);
	pthread_mutex_init(&b->mu, NULL);
	strbuf_init(&b->arr, 0);
	b->owed = 1; /* held until every message was dispatched */
	json_array_foreach (arr, i, v) {
		if (mcp_message_expects_answer(v)) {
			pthread_mutex_lock(&b->mu);
			b->owed++;
			pthread_mutex_unlock(&b->mu);
		}
		mcp_handle_message(s, v, &b->ch);
	}
	batch_send(&b->ch, NULL, 0, 1, 200);
	mcp_chan_unref(&b->ch);
	return 0;
}

void mcp_handle_batch(struct mcp_session *s, json_t *arr, struct mcp_chan *ch)
{
	handle_batch(s, arr, ch);
}

/* ---- stdio ---- */

struct stdio_chan {
	struct mcp_chan ch;
	int fd;
	pthread_mutex_t mu;
	int broken;
	int kind;  /* what fd is: STDIO_OUT_* */
	int notes; /* a notification was written since the last drain */
};

#define STDIO_OUT_OTHER 0 /* a file or a terminal: nobody to wait for */
#define STDIO_OUT_PIPE 1
#define STDIO_OUT_SOCKET 2 /* libuv (Node.js) spawns with a socketpair */

/* The longest wait for the client to read a notification (ms). */
#define STDIO_DRAIN_MS 1000

static int stdio_out_kind(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return STDIO_OUT_OTHER;
	if (S_ISFIFO(st.st_mode))
		return STDIO_OUT_PIPE;
	if (S_ISSOCK(st.st_mode))
		return STDIO_OUT_SOCKET;
	return STDIO_OUT_OTHER;
}

/* Bytes written to fd that the client has not read yet, or -1. */
static int stdio_unread(const struct stdio_chan *sc)
{
	int n = 0;

	/*
	 * FIONREAD on a pipe counts what is in it, whichever end asks;
	 * SIOCOUTQ on a unix socket counts what the peer has not read.
	 */
	if (sc->kind == STDIO_OUT_PIPE && !ioctl(sc->fd, FIONREAD, &n))
		return n;
	if (sc->kind == STDIO_OUT_SOCKET && !ioctl(sc->fd, SIOCOUTQ, &n))
		return n;
	return -1;
}

/*
 * Wait (at most STDIO_DRAIN_MS) until the client has read everything
 * written so far. A client reads the notifications of a request and
 * its answer in one chunk when they come together, and the official
 * TypeScript SDK then handles the answer first (its notification
 * handlers run later, in a microtask) and reports "unknown progress
 * token"; once the notifications were read, the answer is another
 * chunk. sc->mu held.
 */
static void stdio_drain(struct stdio_chan *sc)
{
	uint64_t deadline = monotonic_ms() + STDIO_DRAIN_MS;
	int pause_ms = 1;

	while (stdio_unread(sc) > 0 && monotonic_ms() < deadline) {
		poll(NULL, 0, pause_ms);
		if (pause_ms < 16)
			pause_ms *= 2;
	}
}

static void stdio_send(struct mcp_chan *ch, const char *msg, size_t len,
		       int final, int status)
{
	struct stdio_chan *sc = (struct stdio_chan *)ch;

	if (!msg)
		return;
	pthread_mutex_lock(&sc->mu);
	if (final && sc->notes && !sc->broken)
		stdio_drain(sc);
	sc->notes = !final;
	if (!sc->broken && (write_in_full(sc->fd, msg, len) < 0 ||
			    write_in_full(sc->fd, "\n", 1) < 0))
		sc->broken = 1; /* the client is gone; EOF follows */
	pthread_mutex_unlock(&sc->mu);
}

static void stdio_destroy(struct mcp_chan *ch)
{
	struct stdio_chan *sc = (struct stdio_chan *)ch;

	pthread_mutex_destroy(&sc->mu);
	free(sc);
}

static void handle_line(struct mcp_session *s, struct mcp_chan *ch,
			const char *buf, size_t len)
{
	struct strbuf err = STRBUF_INIT;
	json_t *v;

	while (len && (buf[len - 1] == '\r' || buf[len - 1] == ' ' ||
		       buf[len - 1] == '\t'))
		len--;
	while (len && (*buf == ' ' || *buf == '\t')) {
		buf++;
		len--;
	}
	if (!len)
		return;
	v = json_parse(buf, len, &err);
	if (!v) {
		struct strbuf out = STRBUF_INIT, msg = STRBUF_INIT;

		strbuf_addf(&msg, "Parse error: %s", err.buf);
		mcp_error_msg(&out, NULL, MCP_PARSE_ERROR, msg.buf, NULL);
		chan_send(ch, &out, 1, 400);
		strbuf_release(&out);
		strbuf_release(&msg);
	} else if (json_is_array(v)) {
		mcp_handle_batch(s, v, ch);
	} else {
		mcp_handle_message(s, v, ch);
	}
	if (v)
		json_decref(v);
	strbuf_release(&err);
}

#define STDIO_CHUNK (64 * 1024)
#define STDIO_END_WAIT_MS 3000

int mcp_serve_stdio(struct mcp_server *srv, int in_fd, int out_fd, int stop_fd)
{
	struct mcp_session *s = mcp_session_new(srv, NULL, "stdio", 0);
	struct stdio_chan *sc = xcalloc(1, sizeof(*sc));
	struct strbuf in = STRBUF_INIT;
	size_t scanned = 0;
	int discarding = 0, ret = 0;

	mcp_chan_init(&sc->ch);
	sc->ch.send = stdio_send;
	sc->ch.destroy = stdio_destroy;
	sc->fd = out_fd;
	sc->kind = stdio_out_kind(out_fd);
	pthread_mutex_init(&sc->mu, NULL);

	for (;;) {
		struct pollfd pfd[2] = { { in_fd, POLLIN, 0 },
					 { stop_fd, POLLIN, 0 } };
		size_t start = 0;
		char *nl;
		ssize_t n;

		if (poll(pfd, stop_fd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			ret = error_errno("poll");
			break;
		}
		if (stop_fd >= 0 && pfd[1].revents)
			break;
		strbuf_grow(&in, STDIO_CHUNK);
		n = read(in_fd, in.buf + in.len, STDIO_CHUNK);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			ret = error_errno("cannot read standard input");
			break;
		}
		if (!n)
			break; /* EOF: the client went away */
		strbuf_setlen(&in, in.len + n);
		while ((nl = memchr(in.buf + scanned, '\n',
				    in.len - scanned))) {
			size_t end = nl - in.buf;

			if (discarding) {
				struct strbuf out = STRBUF_INIT;

				mcp_error_msg(&out, NULL, MCP_PARSE_ERROR,
					      "Parse error: message longer "
					      "than 64 MiB",
					      NULL);
				chan_send(&sc->ch, &out, 1, 400);
				strbuf_release(&out);
				discarding = 0;
			} else {
				handle_line(s, &sc->ch, in.buf + start,
					    end - start);
			}
			start = scanned = end + 1;
		}
		scanned = in.len;
		if (start)
			strbuf_remove(&in, 0, start);
		scanned -= start;
		if (in.len > MCP_MAX_MESSAGE) {
			/* memory stays bounded: drop it, answer at '\n' */
			discarding = 1;
			strbuf_reset(&in);
			scanned = 0;
		}
		if (in.alloc > 4 * STDIO_CHUNK && in.len < STDIO_CHUNK) {
			struct strbuf small = STRBUF_INIT;

			strbuf_addbuf(&small, &in);
			strbuf_release(&in);
			in = small;
		}
	}
	strbuf_release(&in);
	mcp_session_end(s, STDIO_END_WAIT_MS);
	mcp_chan_unref(&sc->ch);
	return ret;
}
