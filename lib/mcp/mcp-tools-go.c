#include "compat.h"
#include "mcp/mcp-environment.h"
#include "mcp/mcp.h"
#include "json.h"
#include "mcp/mcp-format.h"
#include "session/session.h"
#include "usage.h"
#include "utf8.h"

/*
 * The toolset "go": the seed's one tool, run_go_code
 * (Documentation/protocol/mcp.md "Tool run_go_code", seed 000). Each MCP
 * session has one sandbox, opened on the first call and reused, so files, the
 * build cache and built binaries persist across calls; calls of one session run
 * one at a time. When the session ends the sandbox is deleted, or kept with
 * --persistent.
 */

static const char run_go_code_description[] =
	"Build and run Go code in an isolated sandbox.\n"
	"\n"
	"How it works:\n"
	"- Optionally write a set of files under /app (the sandbox's "
	"working directory). Paths are relative and may be nested "
	"(e.g. \"greet/greet.go\").\n"
	"- Then run a shell command in /app via 'sh -c'.\n"
	"- Get back the exit code, the duration, stdout and stderr (long "
	"output keeps its head and its tail).\n"
	"\n"
	"State persists across calls within this session: files you "
	"wrote stay, the Go build cache stays warm, and binaries you "
	"built remain executable. To start fresh, run a command like "
	"\"rm -rf -- *\".\n"
	"\n"
	"Examples:\n"
	"- {files: {\"go.mod\":\"module x\\ngo 1.19\\n\","
	"\"main.go\":\"package main\\nimport \\\"fmt\\\"\\n"
	"func main(){fmt.Println(\\\"hi\\\")}\\n\"}, "
	"command: \"go run main.go\"}\n"
	"- {command: \"go build -o app . && ./app\"}\n"
	"- {files: {\"greet/greet.go\":\"package greet\\n...\"}, "
	"command: \"go test ./...\"}\n";

static const char run_go_code_input_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"files\":{\"type\":\"object\","
	"\"additionalProperties\":{\"type\":\"string\"},"
	"\"description\":\"files to write under /app before running the "
	"command, keyed by relative path (e.g. 'main.go', "
	"'greet/greet.go'). Existing files not in this map are left "
	"alone. Omit to run a command against existing sandbox state.\"},"
	"\"command\":{\"type\":\"string\","
	"\"description\":\"shell command run via 'sh -c' in /app. "
	"Examples: 'go run main.go', 'go test ./...', "
	"'go build -o app . && ./app'. State persists across "
	"calls.\"}," MCP_TIMEOUT_PROP "},"
	"\"required\":[\"command\"],\"additionalProperties\":false}";

/* structuredContent of a result (2025-06-18 on) */
static const char run_go_code_output_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"exit_code\":{\"type\":\"integer\",\"description\":"
	"\"exit status of the command; -1 when it was killed by a "
	"signal or did not start\"},"
	"\"stdout\":{\"type\":\"string\",\"description\":"
	"\"standard output, head and tail kept when longer than 16 KiB, "
	"invalid UTF-8 replaced\"},"
	"\"stderr\":{\"type\":\"string\",\"description\":"
	"\"standard error, shortened like stdout\"},"
	"\"duration_ms\":{\"type\":\"integer\",\"description\":"
	"\"run time in milliseconds\"},"
	"\"reason\":{\"type\":\"string\",\"description\":"
	"\"why the command ended: exited, signaled, timeout, oom, "
	"cancelled, output_limit, start_failed\"},"
	"\"truncation\":{\"type\":\"object\",\"properties\":{"
	"\"stdout\":{\"type\":\"boolean\"},\"stderr\":{\"type\":\"boolean\"}},"
	"\"required\":[\"stdout\",\"stderr\"]}},"
	"\"required\":[\"exit_code\",\"stdout\",\"stderr\",\"duration_ms\","
	"\"reason\",\"truncation\"]}";

/*
 * Live output: at most this many progress notifications a second;
 * lines beyond that wait and go together with the next one.
 */
#define PROGRESS_PER_SECOND 20
/* A line longer than this is sent in pieces; pending text is capped. */
#define PROGRESS_LINE_MAX 4096
#define PROGRESS_PENDING_MAX 16384

/* The per-session state of the toolset. */
struct go_state {
	pthread_mutex_t lock; /* one call at a time; guards the rest */
	struct session sbx;
	int open; /* sbx is open */
};

static struct go_state *get_state(struct mcp_session *s)
{
	struct go_state *st;
	void **slot;

	mcp_session_lock(s);
	slot = mcp_session_state(s, &mcp_toolset_go);
	if (!*slot) {
		st = xcalloc(1, sizeof(*st));
		pthread_mutex_init(&st->lock, NULL);
		*slot = st;
	}
	st = *slot;
	mcp_session_unlock(s);
	return st;
}

static const char *json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

/*
 * Check the arguments against the input schema and the seed's path
 * rules. Fills *command and files (borrowed from args). Returns 0, or
 * -1 with the reason in why.
 */
static int check_args(json_t *args, const char **command,
		      struct session_file **files, size_t *nr_files,
		      struct strbuf *why)
{
	json_t *cmd = json_object_get(args, "command");
	json_t *fmap = json_object_get(args, "files");
	const char *key;
	json_t *v;
	size_t n = 0;

	json_object_foreach (args, key, v) {
		if (strcmp(key, "command") && strcmp(key, "files") &&
		    strcmp(key, "timeout")) {
			strbuf_addf(why,
				    "invalid arguments: unknown "
				    "property '%s' (run_go_code takes "
				    "'files', 'command' and 'timeout')",
				    key);
			return -1;
		}
	}
	if (!cmd) {
		strbuf_addstr(why, "missing required 'command' field");
		return -1;
	}
	if (!json_is_string(cmd)) {
		strbuf_addf(why,
			    "invalid arguments: 'command' must be a "
			    "string, not %s",
			    json_type_name(cmd));
		return -1;
	}
	if (!json_string_length(cmd)) {
		strbuf_addstr(why, "invalid arguments: 'command' must not "
				   "be empty");
		return -1;
	}
	if (strlen(json_string_value(cmd)) != json_string_length(cmd)) {
		strbuf_addstr(why, "invalid arguments: 'command' must not "
				   "contain NUL characters");
		return -1;
	}
	*command = json_string_value(cmd);
	*files = NULL;
	*nr_files = 0;
	if (!fmap)
		return 0;
	if (!json_is_object(fmap)) {
		strbuf_addf(why,
			    "invalid arguments: 'files' must be an "
			    "object mapping relative paths to file "
			    "contents, not %s",
			    json_type_name(fmap));
		return -1;
	}
	*files = xcalloc(json_object_size(fmap) + 1, sizeof(**files));
	json_object_foreach (fmap, key, v) {
		if (!json_is_string(v)) {
			strbuf_addf(why,
				    "invalid arguments: files['%s'] "
				    "must be a string (the file's "
				    "contents), not %s",
				    key, json_type_name(v));
			goto fail;
		}
		if (session_check_path(key) < 0) {
			strbuf_addf(why, "invalid arguments: %s", last_error());
			goto fail;
		}
		(*files)[n].path = key;
		(*files)[n].data = json_string_value(v);
		(*files)[n].len = json_string_length(v);
		n++;
	}
	*nr_files = n;
	return 0;
fail:
	free(*files);
	*files = NULL;
	return -1;
}

/* ---- live output as progress notifications ---- */

struct progress {
	struct mcp_call *call;
	double n;	       /* the last progress value sent */
	struct strbuf line[2]; /* partial lines of stdout, stderr */
	struct strbuf pending; /* complete lines not sent yet */
	uint64_t window_ms;    /* start of the current second */
	int sent;	       /* notifications sent in it */
};

/* May one more notification go now? */
static int progress_may_send(struct progress *p)
{
	uint64_t now = monotonic_ms();

	if (now - p->window_ms >= 1000) {
		p->window_ms = now;
		p->sent = 0;
	}
	return p->sent < PROGRESS_PER_SECOND;
}

static void progress_send(struct progress *p, const char *msg, size_t len)
{
	struct strbuf clean = STRBUF_INIT;

	utf8_sanitize_into(&clean, msg, len);
	p->n += 1;
	p->sent++;
	mcp_call_progress(p->call, p->n, 0, clean.buf);
	strbuf_release(&clean);
}

/* A flood: keep the newest lines of pending, at most max bytes. */
static void progress_trim(struct progress *p, size_t max)
{
	size_t cut;
	const char *nl;

	if (p->pending.len <= max)
		return;
	cut = p->pending.len - max;
	nl = memchr(p->pending.buf + cut, '\n', p->pending.len - cut);
	cut = nl ? (size_t)(nl + 1 - p->pending.buf) : cut;
	strbuf_remove(&p->pending, 0, cut);
}

static void progress_flush(struct progress *p)
{
	progress_trim(p, PROGRESS_PENDING_MAX);
	if (!p->pending.len)
		return;
	progress_send(p, p->pending.buf, p->pending.len);
	strbuf_reset(&p->pending);
}

static void progress_line(struct progress *p, int stream, const char *buf,
			  size_t len)
{
	if (p->pending.len)
		strbuf_addch(&p->pending, '\n');
	if (stream == 2)
		strbuf_addstr(&p->pending, "[stderr] ");
	strbuf_add(&p->pending, buf, len);
	/*
	 * Trimmed to the newest PROGRESS_PENDING_MAX bytes of whole lines
	 * when sent; in between only past twice that, so that a flood of
	 * short lines moves each byte about once, not once a line. Lines
	 * are at most PROGRESS_LINE_MAX, so both keep the same lines.
	 */
	if (p->pending.len > 2 * PROGRESS_PENDING_MAX)
		progress_trim(p, PROGRESS_PENDING_MAX);
}

static void on_phase(const char *phase, void *data)
{
	struct progress *p = data;

	progress_flush(p);
	progress_may_send(p);
	progress_send(p, phase, strlen(phase));
}

static int on_output(int stream, const char *buf, size_t len, void *data)
{
	struct progress *p = data;
	struct strbuf *line = &p->line[stream == 2];

	while (len) {
		size_t room = PROGRESS_LINE_MAX - line->len;
		/* a newline right after a full piece ends that piece */
		const char *nl =
			memchr(buf, '\n', len < room + 1 ? len : room + 1);
		size_t n = nl ? (size_t)(nl - buf) : len < room ? len : room;

		strbuf_add(line, buf, n);
		if (nl || line->len >= PROGRESS_LINE_MAX) {
			/* a complete line, or a piece of a long one */
			progress_line(p, stream, line->buf, line->len);
			strbuf_reset(line);
		}
		buf += n + !!nl;
		len -= n + !!nl;
	}
	if (p->pending.len && progress_may_send(p))
		progress_flush(p);
	return 0;
}

static void progress_finish(struct progress *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->line[i].len)
			progress_line(p, i + 1, p->line[i].buf, p->line[i].len);
		strbuf_release(&p->line[i]);
	}
	progress_flush(p);
	strbuf_release(&p->pending);
}

/* ---- the tool ---- */

static int open_sandbox(struct mcp_session *s, struct go_state *st,
			struct mcp_result *res)
{
	const struct mcp_options *o = mcp_session_options(s);
	struct session_opts so = o->sandbox;
	struct backend_defaults bd;

	so.purpose = "mcp";
	so.keep = o->persistent;
	so.claim = o->claim && *o->claim ? o->claim : NULL;
	/* NULL: the backend's (kube: the kubeconfig context's) */
	so.namespace = o->namespace;
	so.template = o->template;
	so.open_timeout_ms = o->open_timeout_ms;
	backend_defaults(&so, &bd);
	mcp_log_stderr(
		"opening sandbox (namespace=%s template=%s claim=\"%s\")",
		bd.namespace, bd.template, so.claim ? so.claim : "");
	backend_defaults_release(&bd);
	if (session_open(&st->sbx, &so) < 0) {
		mcp_result_error(res, "could not open sandbox: %s",
				 last_error());
		return -1;
	}
	st->open = 1;
	mcp_log_stderr("sandbox open: claim=%s", st->sbx.claim);
	/* an idle agent must not lose its sandbox to the idle TTL */
	session_keepalive_start(&st->sbx, MCP_KEEPALIVE_MS);
	return 0;
}

/*
 * After a failed command: when the backend says the sandbox is gone
 * (session_gone()), delete what is left of it and open a new one, with
 * a death certificate in died ("[sandbox 'x' died: <why>; its files
 * are gone: this call ran in a new sandbox 'y']\n") for the result.
 * Returns 0 (died empty: the sandbox lives, the failure stands), or -1
 * with res set when no new sandbox could be opened.
 */
static int reopen_dead(struct mcp_session *s, struct go_state *st,
		       struct strbuf *died, struct mcp_result *res)
{
	struct strbuf why = STRBUF_INIT;
	char *old;

	if (!session_gone(&st->sbx, &why)) {
		strbuf_release(&why);
		return 0;
	}
	old = xstrdup(st->sbx.claim ? st->sbx.claim : "");
	mcp_log_stderr("sandbox %s died: %s; opening a new one", old, why.buf);
	st->sbx.keep = 0;
	session_close(&st->sbx);
	st->open = 0;
	if (open_sandbox(s, st, res) < 0) {
		struct strbuf cert = STRBUF_INIT;

		strbuf_addf(&cert,
			    "sandbox '%s' died: %s; its files are gone. ", old,
			    why.buf);
		strbuf_insert(&res->text, 0, cert.buf, cert.len);
		strbuf_release(&cert);
		free(old);
		strbuf_release(&why);
		return -1;
	}
	strbuf_addf(died,
		    "[sandbox '%s' died: %s; its files are gone: this call "
		    "ran in a new sandbox '%s']\n",
		    old, why.buf, st->sbx.claim);
	free(old);
	strbuf_release(&why);
	return 0;
}

static json_t *structured(const struct session_result *sr,
			  const struct strbuf *out, const struct strbuf *err,
			  int out_trunc, int err_trunc)
{
	json_t *trunc = json_object(), *o = json_object();

	json_object_set_new(o, "exit_code", json_integer(sr->exit_code));
	json_object_set_new(o, "stdout", json_stringn(out->buf, out->len));
	json_object_set_new(o, "stderr", json_stringn(err->buf, err->len));
	json_object_set_new(o, "duration_ms", json_integer(sr->duration_ms));
	json_object_set_new(o, "reason",
			    json_string(sr->reason ? sr->reason : "exited"));
	json_object_set_new(trunc, "stdout", json_boolean(out_trunc));
	json_object_set_new(trunc, "stderr", json_boolean(err_trunc));
	json_object_set_new(o, "truncation", trunc);
	return o;
}

/*
 * One stderr line per call with what the result text has no place for
 * (the seed's format is fixed): "run_go_code: claim=<c> exit=<n>
 * reason=<why>[ signal=<n>] duration_ms=<ms>[ cpu_ms=<ms>
 * peak_rss_kb=<kb>]". cpu_ms counts every process the command started,
 * killed ones too.
 */
static void log_run(const char *claim, const struct session_result *sr)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "run_go_code: claim=%s exit=%d reason=%s", claim,
		    sr->exit_code, sr->reason ? sr->reason : "exited");
	if (sr->signal > 0)
		strbuf_addf(&sb, " signal=%d", sr->signal);
	strbuf_addf(&sb, " duration_ms=%" PRId64, sr->duration_ms);
	if (sr->cpu_ms >= 0)
		strbuf_addf(&sb, " cpu_ms=%" PRId64, sr->cpu_ms);
	if (sr->peak_rss_kb >= 0)
		strbuf_addf(&sb, " peak_rss_kb=%" PRId64, sr->peak_rss_kb);
	mcp_log_stderr("%s", sb.buf);
	strbuf_release(&sb);
}

static int run_go_code(struct mcp_call *call, struct mcp_result *res)
{
	const struct mcp_options *o = mcp_session_options(call->session);
	struct strbuf why = STRBUF_INIT, out = STRBUF_INIT, err = STRBUF_INIT;
	struct session_file *files = NULL;
	struct session_exec e = { 0 };
	struct session_result sr;
	struct progress p = { 0 };
	struct mcp_run_text text = { 0 };
	struct go_state *st;
	struct strbuf died = STRBUF_INIT;
	int ret;

	session_result_init(&sr);
	if (check_args(call->args, &e.command, &files, &e.nr_files, &why) < 0) {
		mcp_result_error(res, "%s", why.buf);
		goto done;
	}
	/* --call-timeout: 5 min, the seed's defaultExecuteTimeout */
	if (mcp_call_timeout_arg(call, res, o->call_timeout_ms, &e.timeout_ms) <
	    0)
		goto done;
	e.files = files;

	st = get_state(call->session);
	pthread_mutex_lock(&st->lock);
	if (!st->open && open_sandbox(call->session, st, res) < 0)
		goto unlock;
	if (o->ephemeral) {
		/* what cannot be removed stays; the command runs anyway */
		struct strbuf left = STRBUF_INIT;
		int rc = session_reset(&st->sbx, &left);

		if (rc > 0) {
			/* one log line */
			for (size_t i = 0; i < left.len; i++)
				if (left.buf[i] == '\n')
					left.buf[i] = ' ';
			mcp_log_stderr("ephemeral reset: left in /app: %s",
				       left.buf);
		}
		strbuf_release(&left);
		if (rc < 0) {
			mcp_result_error(res, "reset failed: %s", last_error());
			goto unlock;
		}
	}

	p.call = call;
	strbuf_init(&p.line[0], 0);
	strbuf_init(&p.line[1], 0);
	strbuf_init(&p.pending, 0);
	p.window_ms = monotonic_ms();
	/* live output only where it goes somewhere: it scans every byte */
	if (mcp_call_wants_progress(call))
		e.on_output = on_output;
	e.on_phase = on_phase;
	e.data = &p;
	e.cancel = &call->cancelled;
	/* the text keeps head and tail only: hold no more than that */
	e.keep_bytes = SESSION_KEEP_HEAD_TAIL;
	ret = session_execute(&st->sbx, &e, &sr);
	if (ret < 0 && reopen_dead(call->session, st, &died, res) < 0) {
		progress_finish(&p);
		goto unlock;
	}
	if (ret < 0 && died.len) {
		/* the command again, in the new sandbox */
		session_result_release(&sr);
		session_result_init(&sr);
		ret = session_execute(&st->sbx, &e, &sr);
	}
	progress_finish(&p);
	if (ret < 0) {
		mcp_result_error(res, "%sexecute failed: %s", died.buf,
				 last_error());
		goto unlock;
	}
	if (ret > 0) {
		/* the core sends no answer to a cancelled request */
		mcp_result_error(res, "cancelled");
		goto unlock;
	}

	log_run(st->sbx.claim, &sr);
	text.exit_code = sr.exit_code;
	text.duration_ms = sr.duration_ms;
	if (sr.reason && !strcmp(sr.reason, "timeout"))
		text.timed_out_ms = e.timeout_ms;
	text.oom = sr.reason && !strcmp(sr.reason, "oom");
	text.oom_limit_bytes = st->sbx.memory_limit_bytes;
	text.output_held = sr.output_held;
	text.held_output = sr.held_output.len ? sr.held_output.buf : NULL;
	/* the seed's head and tail of ALL the output, not of what was kept */
	session_result_head_tail(&sr);
	utf8_sanitize_into(&out, sr.out.buf, sr.out.len);
	utf8_sanitize_into(&err, sr.err.buf, sr.err.len);
	text.out_truncated = sr.out_truncated;
	text.err_truncated = sr.err_truncated;
	text.out = out.buf;
	text.out_len = out.len;
	text.err = err.buf;
	text.err_len = err.len;
	strbuf_reset(&res->text);
	/* the death certificate first: the agent's files are gone */
	strbuf_addbuf(&res->text, &died);
	mcp_format_result(&res->text, &text);
	/* a command that was cut short failed, whatever its shell said */
	res->is_error = sr.exit_code != 0 || text.timed_out_ms > 0 || text.oom;
	json_decref(res->structured);
	res->structured = structured(&sr, &out, &err, text.out_truncated,
				     text.err_truncated);
unlock:
	pthread_mutex_unlock(&st->lock);
done:
	free(files);
	strbuf_release(&died);
	strbuf_release(&why);
	strbuf_release(&out);
	strbuf_release(&err);
	session_result_release(&sr);
	return 0;
}

static void go_session_end(struct mcp_session *s, void *state)
{
	const struct mcp_options *o = mcp_session_options(s);
	struct go_state *st = state;

	if (!st)
		return;
	pthread_mutex_lock(&st->lock);
	if (st->open) {
		if (o->persistent || o->shared_claim) {
			mcp_log_stderr("disconnecting (claim %s preserved)",
				       st->sbx.claim);
			session_disconnect(&st->sbx);
		} else {
			mcp_log_stderr("closing (deleting sandbox %s)",
				       st->sbx.claim);
			/* a reattached --claim is deleted too (seed 001) */
			st->sbx.keep = 0;
			session_close(&st->sbx);
		}
		st->open = 0;
	}
	pthread_mutex_unlock(&st->lock);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

static const struct mcp_tool go_tools[] = {
	{
		.name = "run_go_code",
		.title = "Run Go code",
		.description = run_go_code_description,
		.input_schema = run_go_code_input_schema,
		.output_schema = run_go_code_output_schema,
		/* it runs any command in /app, rm -rf included */
		.hints = MCP_HINT_DESTRUCTIVE,
		.call = run_go_code,
		.describe = mcp_describe_environment,
	},
};

const struct mcp_toolset mcp_toolset_go = {
	.name = "go",
	.tools = go_tools,
	.nr_tools = ARRAY_SIZE(go_tools),
	.session_end = go_session_end,
};
