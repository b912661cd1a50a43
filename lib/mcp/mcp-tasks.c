/*
 * Tasks of MCP revision 2025-11-25 (the "tasks" utility, SEP-1686;
 * Documentation/protocol/mcp.md "Tasks"): a tools/call whose params
 * carry "task" runs as any call does (lib/mcp/mcp.c), but its answer
 * goes to the task's channel, which keeps it instead of sending it.
 * The client asks for it later with tasks/result, from any connection
 * of the same MCP session.
 *
 * The store belongs to one MCP session: another session (another
 * Mcp-Session-Id, another stdio connection) cannot name its tasks, and
 * the ids are 128 random bits besides. Bounds: MCP_TASKS_MAX tasks a
 * session, each kept until its ttl (from creation, at most
 * MCP_TASK_TTL_MAX_MS) has passed and it is done; they go with the
 * session.
 */
#include "compat.h"
#include "json.h"
#include "mcp/mcp-internal.h"
#include "strbuf.h"
#include "usage.h"

#include <sys/random.h>
#include <time.h>

enum task_status {
	TASK_WORKING,
	TASK_COMPLETED,
	TASK_FAILED,
	TASK_CANCELLED,
};

static const char *const status_names[] = {
	"working",
	"completed",
	"failed",
	"cancelled",
};

/* a tasks/result waiting for the task to end */
struct task_waiter {
	struct mcp_chan *ch; /* referenced */
	json_t *id;
	struct strbuf answer; /* made when the task ends */
	struct task_waiter *next;
};

struct mcp_task {
	struct mcp_chan chan; /* first: the call's answers come here */
	struct mcp_task_store *store;
	char id[33];
	enum task_status status; /* the store's mutex guards what follows */
	char *status_message;
	uint64_t created_ms, updated_ms; /* CLOCK_REALTIME */
	int64_t ttl_ms;
	json_t *result; /* the CallToolResult, or */
	json_t *error;	/* the JSON-RPC error object */
	struct task_waiter *waiters;
	struct mcp_task *next;
};

struct mcp_task_store {
	pthread_mutex_t mu;
	struct mcp_task *tasks; /* newest first */
	size_t nr;
};

static uint64_t realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ISO 8601, UTC, milliseconds: "2025-11-25T10:00:00.000Z" */
static void add_time(struct strbuf *out, uint64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char buf[32];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	strbuf_addf(out, "\"%s.%03uZ\"", buf, (unsigned)(ms % 1000));
}

/* 128 bits from getrandom(2) in hex; -1 with error() if it fails */
static int new_task_id(char *hex /* 33 bytes */)
{
	unsigned char rnd[16];
	size_t got = 0;

	while (got < sizeof(rnd)) {
		ssize_t n = getrandom(rnd + got, sizeof(rnd) - got, 0);

		if (n < 0 && errno != EINTR)
			return error_errno("cannot make a task id");
		if (n > 0)
			got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
	return 0;
}

static int terminal(const struct mcp_task *t)
{
	return t->status != TASK_WORKING;
}

/* the Task object of t (store locked) */
static void add_task(struct strbuf *out, const struct mcp_task *t)
{
	strbuf_addf(out, "{\"taskId\":\"%s\",\"status\":\"%s\"", t->id,
		    status_names[t->status]);
	if (t->status_message) {
		strbuf_addstr(out, ",\"statusMessage\":");
		json_add_str(out, t->status_message);
	}
	strbuf_addstr(out, ",\"createdAt\":");
	add_time(out, t->created_ms);
	strbuf_addstr(out, ",\"lastUpdatedAt\":");
	add_time(out, t->updated_ms);
	strbuf_addf(out, ",\"ttl\":%" PRId64 ",\"pollInterval\":%d}", t->ttl_ms,
		    MCP_TASK_POLL_MS);
}

/* the answer of a tasks/result for a task that ended (store locked) */
static void result_answer(struct strbuf *out, const struct mcp_task *t,
			  const json_t *id)
{
	struct strbuf msg = STRBUF_INIT;
	json_t *res, *meta, *rel;

	if (t->result) {
		res = json_deep_copy(t->result);
		meta = json_object_get(res, "_meta");
		if (!json_is_object(meta)) {
			meta = json_object();
			json_object_set_new(res, "_meta", meta);
		}
		rel = json_object();
		json_object_set_new(rel, "taskId", json_string(t->id));
		json_object_set_new(meta, MCP_META_RELATED_TASK, rel);
		strbuf_addstr(out, "{\"jsonrpc\":\"2.0\",\"id\":");
		if (json_dump_into(out, id) < 0)
			strbuf_addstr(out, "null");
		strbuf_addstr(out, ",\"result\":");
		if (json_dump_into(out, res) < 0)
			strbuf_addstr(out, "{}");
		strbuf_addch(out, '}');
		json_decref(res);
	} else if (t->error) {
		json_t *code = json_object_get(t->error, "code");

		mcp_error_msg(out, id,
			      json_is_integer(code)
				      ? (int)json_integer_value(code)
				      : MCP_INTERNAL_ERROR,
			      json_object_str(t->error, "message")
				      ?: "Internal error",
			      json_object_get(t->error, "data"));
	} else {
		strbuf_addf(&msg,
			    "Invalid params: task %s was cancelled: it has "
			    "no result",
			    t->id);
		mcp_error_msg(out, id, MCP_INVALID_PARAMS, msg.buf, NULL);
	}
	strbuf_release(&msg);
}

/*
 * Take the waiting tasks/result of t, each with its answer made (store
 * locked); send_answers() sends them once the lock is dropped, so that
 * a slow client never holds up the store.
 */
static struct task_waiter *take_waiters(struct mcp_task *t)
{
	struct task_waiter *list = t->waiters;

	for (struct task_waiter *w = list; w; w = w->next)
		result_answer(&w->answer, t, w->id);
	t->waiters = NULL;
	return list;
}

static void send_answers(struct task_waiter *list)
{
	while (list) {
		struct task_waiter *w = list;

		list = w->next;
		w->ch->send(w->ch, w->answer.buf, w->answer.len, 1, 200);
		mcp_chan_unref(w->ch);
		json_decref(w->id);
		strbuf_release(&w->answer);
		free(w);
	}
}

/*
 * The call's channel: a final message is the call's answer (NULL when
 * the call was cancelled); notifications (progress, log) are dropped,
 * since nobody listens to a task's request any more.
 */
static void task_send(struct mcp_chan *ch, const char *msg, size_t len,
		      int final, int http_status)
{
	struct mcp_task *t = (struct mcp_task *)ch;
	struct task_waiter *woken;
	json_t *m = NULL, *v;

	(void)http_status;
	if (!final)
		return;
	if (msg)
		m = json_parse(msg, len, NULL);
	pthread_mutex_lock(&t->store->mu);
	if (!terminal(t)) {
		if (m && json_is_object(v = json_object_get(m, "result"))) {
			t->result = json_incref(v);
			t->status = json_is_true(json_object_get(v, "isError"))
					    ? TASK_FAILED
					    : TASK_COMPLETED;
		} else if (m &&
			   json_is_object(v = json_object_get(m, "error"))) {
			t->error = json_incref(v);
			t->status = TASK_FAILED;
			free(t->status_message);
			t->status_message =
				xstrdup(json_object_str(v, "message") ?: "");
		} else {
			t->status = TASK_CANCELLED;
		}
		t->updated_ms = realtime_ms();
	}
	woken = take_waiters(t);
	pthread_mutex_unlock(&t->store->mu);
	send_answers(woken);
	if (m)
		json_decref(m);
}

static void task_destroy(struct mcp_chan *ch)
{
	struct mcp_task *t = (struct mcp_task *)ch;

	if (t->result)
		json_decref(t->result);
	if (t->error)
		json_decref(t->error);
	free(t->status_message);
	free(t);
}

struct mcp_task_store *mcp_tasks_new(void)
{
	struct mcp_task_store *st = xcalloc(1, sizeof(*st));

	pthread_mutex_init(&st->mu, NULL);
	return st;
}

void mcp_tasks_free(struct mcp_task_store *st)
{
	if (!st)
		return;
	while (st->tasks) {
		struct mcp_task *t = st->tasks;
		struct task_waiter *woken;

		st->tasks = t->next;
		/* the session ends: its calls are done; answer any waiter */
		pthread_mutex_lock(&st->mu);
		if (!terminal(t))
			t->status = TASK_CANCELLED;
		woken = take_waiters(t);
		pthread_mutex_unlock(&st->mu);
		send_answers(woken);
		mcp_chan_unref(&t->chan);
	}
	pthread_mutex_destroy(&st->mu);
	free(st);
}

/* drop the tasks that ended and outlived their ttl (locked) */
static void prune(struct mcp_task_store *st, uint64_t now)
{
	struct mcp_task **p = &st->tasks;

	while (*p) {
		struct mcp_task *t = *p;

		if (terminal(t) && now >= t->created_ms + (uint64_t)t->ttl_ms) {
			*p = t->next;
			st->nr--;
			mcp_chan_unref(&t->chan);
		} else {
			p = &t->next;
		}
	}
}

/* the task called id (locked), or NULL */
static struct mcp_task *find(struct mcp_task_store *st, const char *id)
{
	prune(st, realtime_ms());
	for (struct mcp_task *t = st->tasks; t; t = t->next)
		if (!strcmp(t->id, id))
			return t;
	return NULL;
}

struct mcp_chan *mcp_task_create(struct mcp_task_store *st, int64_t ttl_ms,
				 struct strbuf *out)
{
	struct mcp_task *t;
	uint64_t now = realtime_ms();
	char id[33];

	if (new_task_id(id) < 0)
		return NULL;
	pthread_mutex_lock(&st->mu);
	prune(st, now);
	if (st->nr >= MCP_TASKS_MAX) {
		pthread_mutex_unlock(&st->mu);
		error("too many tasks (%d a session): wait for one to end "
		      "or for its ttl to pass",
		      MCP_TASKS_MAX);
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	mcp_chan_init(&t->chan);
	t->chan.send = task_send;
	t->chan.destroy = task_destroy;
	t->store = st;
	memcpy(t->id, id, sizeof(id));
	t->status = TASK_WORKING;
	t->created_ms = t->updated_ms = now;
	if (ttl_ms < 0 || ttl_ms > MCP_TASK_TTL_MAX_MS)
		ttl_ms = MCP_TASK_TTL_MAX_MS;
	t->ttl_ms = ttl_ms;
	t->next = st->tasks;
	st->tasks = t;
	st->nr++;
	strbuf_addstr(out, "\"task\":");
	add_task(out, t);
	pthread_mutex_unlock(&st->mu);
	return &t->chan;
}

void mcp_task_forget(struct mcp_task_store *st, struct mcp_chan *ch)
{
	pthread_mutex_lock(&st->mu);
	for (struct mcp_task **p = &st->tasks; *p; p = &(*p)->next)
		if (&(*p)->chan == ch) {
			*p = (*p)->next;
			st->nr--;
			mcp_chan_unref(ch);
			break;
		}
	pthread_mutex_unlock(&st->mu);
}

int mcp_task_get(struct mcp_task_store *st, const char *id, struct strbuf *out)
{
	struct mcp_task *t;
	size_t len = out->len;

	pthread_mutex_lock(&st->mu);
	if ((t = find(st, id))) {
		add_task(out, t);
		/* the Task's fields are the result's own */
		strbuf_remove(out, len, 1);
		strbuf_setlen(out, out->len - 1);
	}
	pthread_mutex_unlock(&st->mu);
	return t ? 0 : -1;
}

void mcp_tasks_list(struct mcp_task_store *st, struct strbuf *out)
{
	pthread_mutex_lock(&st->mu);
	prune(st, realtime_ms());
	strbuf_addstr(out, "\"tasks\":[");
	for (struct mcp_task *t = st->tasks; t; t = t->next) {
		add_task(out, t);
		if (t->next)
			strbuf_addch(out, ',');
	}
	strbuf_addch(out, ']');
	pthread_mutex_unlock(&st->mu);
}

struct mcp_chan *mcp_task_cancel(struct mcp_task_store *st, const char *id,
				 struct strbuf *out, int *was_done)
{
	struct mcp_task *t;
	struct task_waiter *woken = NULL;
	size_t len = out->len;

	*was_done = 0;
	pthread_mutex_lock(&st->mu);
	t = find(st, id);
	if (t && terminal(t)) {
		*was_done = 1;
		t = NULL;
	} else if (t) {
		t->status = TASK_CANCELLED;
		t->updated_ms = realtime_ms();
		free(t->status_message);
		t->status_message = xstrdup("cancelled by the client");
		woken = take_waiters(t);
		add_task(out, t);
		strbuf_remove(out, len, 1);
		strbuf_setlen(out, out->len - 1);
		mcp_chan_ref(&t->chan);
	}
	pthread_mutex_unlock(&st->mu);
	send_answers(woken);
	return t ? &t->chan : NULL;
}

int mcp_task_result(struct mcp_task_store *st, const char *id,
		    struct mcp_chan *ch, const json_t *req_id)
{
	struct mcp_task *t;
	struct strbuf out = STRBUF_INIT;

	pthread_mutex_lock(&st->mu);
	t = find(st, id);
	if (t && terminal(t)) {
		result_answer(&out, t, req_id);
	} else if (t) {
		struct task_waiter *w = xcalloc(1, sizeof(*w));

		mcp_chan_ref(ch);
		w->ch = ch;
		w->id = json_deep_copy(req_id);
		strbuf_init(&w->answer, 0);
		w->next = t->waiters;
		t->waiters = w;
	}
	pthread_mutex_unlock(&st->mu);
	if (out.len)
		ch->send(ch, out.buf, out.len, 1, 200);
	strbuf_release(&out);
	return t ? 0 : -1;
}
