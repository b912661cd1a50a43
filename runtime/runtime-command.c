/*
 * One command of gosbx-runtime, whichever request runs it (POST
 * /execute and /v1/exec in runtime-exec.c, the interactive channel in
 * runtime-interactive.c, jobs in runtime-jobs.c): its body parsed and
 * checked, its start and end logged (Documentation/protocol/
 * runtime-api.md "Process"), an OOM kill told from another SIGKILL.
 * lib/exec.c runs it; this is what every runtime request does around
 * that, once.
 */
#include "compat.h"
#include "exec.h"
#include "json.h"
#include "log.h"
#include "runtime.h"
#include "strvec.h"
#include "workpath.h"

#include <signal.h>
#include <sys/stat.h>

extern char **environ;

/* Where the cgroup counts OOM kills: memory.events or memory.oom_control */
static const char *oom_source;

void exec_setup_oom_source(void)
{
	static const char *candidates[] = {
		"/sys/fs/cgroup/memory.events",
		"/sys/fs/cgroup/memory/memory.oom_control",
	};
	const char *env = getenv("SANDBOX_OOM_EVENTS");

	if (env && *env && !access(env, R_OK)) {
		oom_source = env;
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(candidates); i++)
		if (!access(candidates[i], R_OK)) {
			oom_source = candidates[i];
			return;
		}
}

/* The cgroup's oom_kill counter, or -1 when unknown. */
static int64_t oom_kills(void)
{
	struct strbuf sb = STRBUF_INIT;
	int64_t n = -1;
	const char *p;

	if (!oom_source || strbuf_read_file(&sb, oom_source, 256) < 0)
		goto out;
	p = strstr(sb.buf, "oom_kill ");
	if (p)
		n = strtoll(p + strlen("oom_kill "), NULL, 10);
out:
	strbuf_release(&sb);
	return n;
}

/*
 * Read stdin_stream, tty, tty_raw, cols and rows of the body into
 * p->req. Returns 0, or 400 with err.
 */
static unsigned parse_interactive_fields(struct exec_params *p,
					 struct strbuf *err)
{
	static const char *const bools[] = { "stdin_stream", "tty", "tty_raw" };
	int *dst[] = { &p->req.stdin_stream, &p->req.tty, &p->req.tty_raw };
	int64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(bools); i++) {
		int b, rc = json_object_bool(p->json, bools[i], &b);

		if (rc < 0) {
			strbuf_addf(err, "%s must be a boolean", bools[i]);
			return 400;
		}
		if (rc > 0)
			*dst[i] = b;
	}
	for (int i = 0; i < 2; i++) {
		const char *key = i ? "rows" : "cols";
		int rc = json_object_int(p->json, key, &v);

		if (rc < 0 || (rc > 0 && (v < 1 || v > 65535))) {
			strbuf_addstr(err, "cols and rows must be integers "
					   "from 1 to 65535");
			return 400;
		}
		if (rc > 0 && i)
			p->req.rows = (unsigned short)v;
		else if (rc > 0)
			p->req.cols = (unsigned short)v;
	}
	if (p->req.stdin_stream && p->req.stdin_data) {
		strbuf_addstr(err, "stdin and stdin_stream exclude each other");
		return 400;
	}
	if (p->req.tty_raw && !p->req.tty) {
		strbuf_addstr(err, "tty_raw needs tty");
		return 400;
	}
	return 0;
}

void exec_params_release(struct exec_params *p)
{
	exec_input_detach(p);
	json_decref(p->json);
	free(p->tag);
	strvec_clear(&p->env);
	strvec_clear(&p->argv);
	strbuf_release(&p->cwd);
	strbuf_release(&p->held);
	strbuf_release(&p->exec_path);
}

/*
 * wait_delay_ms (default RUNTIME_WAIT_DELAY_MS; 0 waits for the output
 * to close) and the file later output of what the command left goes
 * to: <TMPDIR or /tmp>/gosbx-output-<time>-<n>.log. 0 or the status.
 */
static unsigned parse_wait_delay(struct exec_params *p, struct strbuf *err)
{
	static unsigned counter;
	const char *tmp = getenv("TMPDIR");
	int64_t v;
	int rc = json_object_int(p->json, "wait_delay_ms", &v);

	if (rc < 0 || (rc > 0 && v < 0)) {
		strbuf_addstr(err,
			      "wait_delay_ms must be a non-negative integer");
		return 400;
	}
	/* a terminal's session ends when its output does */
	p->req.wait_delay_ms = rc > 0	    ? v
			       : p->req.tty ? 0
					    : RUNTIME_WAIT_DELAY_MS;
	if (!tmp || *tmp != '/')
		tmp = "/tmp";
	strbuf_addf(&p->held, "%s/gosbx-output-%lld-%u.log", tmp,
		    (long long)time(NULL),
		    __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
	p->req.held_output_path = p->held.buf;
	return 0;
}

/*
 * Validate the JSON body into p. Returns 0, or the HTTP status with
 * the message in err.
 */
unsigned parse_exec_body(struct request *r, struct exec_params *p,
			 struct strbuf *err)
{
	struct strbuf perr = STRBUF_INIT;
	const char *command;
	json_t *env, *stdin_v, *cwd_v;
	int64_t v;
	int rc;

	exec_request_init(&p->req);
	strvec_init(&p->env);
	strvec_init(&p->argv);
	strbuf_init(&p->cwd, 0);
	strbuf_init(&p->held, 0);
	strbuf_init(&p->exec_path, 0);
	p->json = NULL;
	p->tag = NULL;
	p->input = NULL;
	if (r->too_large) {
		strbuf_addstr(err, "request body too large");
		return 413;
	}
	p->json = json_parse(r->body.buf, r->body.len, &perr);
	if (!p->json) {
		strbuf_addf(err, "invalid JSON body: %s", perr.buf);
		strbuf_release(&perr);
		return 400;
	}
	strbuf_release(&perr);
	if (!json_is_object(p->json)) {
		strbuf_addstr(err, "invalid JSON body: expected an object");
		return 400;
	}
	command = json_object_str(p->json, "command");
	if (!command || !*command) {
		strbuf_addstr(err, "command must not be empty");
		return 400;
	}
	if (strlen(command) !=
	    json_string_length(json_object_get(p->json, "command"))) {
		strbuf_addstr(err, "command must not contain NUL bytes");
		return 400;
	}
	p->req.command = command;

	rc = json_object_int(p->json, "timeout_ms", &v);
	if (rc < 0 || (rc > 0 && v < 0)) {
		strbuf_addstr(err, "timeout_ms must be a non-negative integer");
		return 400;
	}
	if (rc > 0)
		p->req.timeout_ms = v;
	rc = json_object_int(p->json, "max_output_bytes", &v);
	if (rc < 0 || (rc > 0 && v < 0)) {
		strbuf_addstr(
			err, "max_output_bytes must be a non-negative integer");
		return 400;
	}
	if (rc > 0)
		p->req.max_output_bytes = v;

	env = json_object_get(p->json, "env");
	if (env && !json_is_null(env)) {
		const char *key;
		json_t *val;

		if (!json_is_object(env)) {
			strbuf_addstr(err, "env must be an object of strings");
			return 400;
		}
		json_object_foreach (env, key, val) {
			if (!json_is_string(val) || !*key || strchr(key, '=') ||
			    strlen(json_string_value(val)) !=
				    json_string_length(val)) {
				strbuf_addstr(err, "env must be an object of "
						   "strings with names "
						   "without '='");
				return 400;
			}
		}
		for (char **e = environ; *e; e++) {
			const char *eq = strchr(*e, '=');
			struct strbuf name = STRBUF_INIT;

			if (!eq)
				continue;
			strbuf_add(&name, *e, eq - *e);
			if (!json_object_get(env, name.buf))
				strvec_push(&p->env, *e);
			strbuf_release(&name);
		}
		json_object_foreach (env, key, val)
			strvec_pushf(&p->env, "%s=%s", key,
				     json_string_value(val));
		p->req.env = p->env.v;
	}

	stdin_v = json_object_get(p->json, "stdin");
	if (stdin_v && !json_is_null(stdin_v)) {
		if (!json_is_string(stdin_v)) {
			strbuf_addstr(err, "stdin must be a string");
			return 400;
		}
		p->req.stdin_data = json_string_value(stdin_v);
		p->req.stdin_len = json_string_length(stdin_v);
	}
	rc = parse_interactive_fields(p, err);
	if (rc)
		return rc;
	rc = parse_wait_delay(p, err);
	if (rc)
		return rc;

	cwd_v = json_object_get(p->json, "cwd");
	if (cwd_v && !json_is_null(cwd_v)) {
		struct stat st;

		if (!json_is_string(cwd_v) ||
		    strlen(json_string_value(cwd_v)) !=
			    json_string_length(cwd_v)) {
			strbuf_addstr(err, "cwd must be a string without NUL "
					   "bytes");
			return 400;
		}
		if (workpath_resolve(rt.root, json_string_value(cwd_v), &p->cwd,
				     NULL) < 0) {
			strbuf_addstr(err, "cwd must be within workdir");
			return 400;
		}
		if (stat(p->cwd.buf, &st) < 0 || !S_ISDIR(st.st_mode)) {
			strbuf_addf(err, "cwd not found: %s",
				    json_string_value(cwd_v));
			return 400;
		}
		p->req.cwd = p->cwd.buf;
	} else {
		p->req.cwd = rt.root;
	}
	return 0;
}

static void log_exec_begin(const char *command)
{
	struct log_line l;

	if (log_begin(&l, LOG_INFO, "exec begin")) {
		struct strbuf preview = STRBUF_INIT;
		log_command_preview(&preview, command);
		log_str(&l, "command", preview.buf);
		log_end(&l);
		strbuf_release(&preview);
	}
}

static void log_exec_done(const char *command, const struct exec_result *res)
{
	struct log_line l;

	if (log_begin(&l, LOG_INFO, "exec done")) {
		struct strbuf preview = STRBUF_INIT;
		log_command_preview(&preview, command);
		log_str(&l, "command", preview.buf);
		log_int(&l, "exit", res->exit_code);
		log_int(&l, "stdout_bytes", (int64_t)res->out_total);
		log_int(&l, "stderr_bytes", (int64_t)res->err_total);
		log_int(&l, "duration_ms", res->duration_ms);
		if (strcmp(res->reason, "exited"))
			log_str(&l, "reason", res->reason);
		log_end(&l);
		strbuf_release(&preview);
	}
}

/* After the command: turn a SIGKILL that the cgroup counted into "oom". */
static void classify_oom(struct exec_params *p, struct exec_result *res)
{
	int64_t after;

	if (p->oom_before < 0)
		return;
	if (!(res->signal == SIGKILL || res->exit_code == 128 + SIGKILL))
		return;
	if (!strcmp(res->reason, "timeout") ||
	    !strcmp(res->reason, "cancelled"))
		return;
	after = oom_kills();
	if (after > p->oom_before)
		res->reason = "oom";
}

/* Name the command after the request's X-Request-ID, for cancel. */
void set_tag(struct MHD_Connection *c, struct exec_params *p)
{
	const char *id =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Request-ID");

	if (id && *id) {
		p->tag = xstrdup(id);
		p->req.tag = p->tag;
	}
}

void command_start(struct exec_params *p, struct exec_proc **proc)
{
	p->oom_before = oom_kills();
	log_exec_begin(p->req.command);
	exec_start(&p->req, proc);
}

void command_finish(struct exec_params *p, struct exec_proc *proc,
		    struct exec_result *res)
{
	exec_finish(proc, res);
	classify_oom(p, res);
	log_exec_done(p->req.command, res);
}

void command_run(struct exec_params *p, struct exec_result *res)
{
	p->oom_before = oom_kills();
	log_exec_begin(p->req.command);
	exec_run(&p->req, res);
	classify_oom(p, res);
	log_exec_done(p->req.command, res);
}
