/*
 * gosbx jobs: the detached commands of a kept sandbox (gosbx exec -d),
 * from its runtime's `jobs` extension (lib/session/jobs.h); and the
 * helper every job command uses to reach the sandbox of a job.
 */
#include "compat.h"
#include "builtin.h"
#include "json.h"
#include "output.h"
#include "parse-options.h"
#include "session/jobs.h"
#include "session/session.h"
#include "usage.h"
#include "utf8.h"

#include <time.h>

static const char *const jobs_usage[] = {
	"gosbx jobs --claim=<name> [-o text|json] [--json]",
	NULL,
};

int job_session_open(struct gosbx_ctx *ctx, const char *ref,
		     const char *claim_opt, const char *purpose,
		     struct session *s, char **id)
{
	struct session_opts o = { 0 };
	char *claim = NULL;
	int rc;

	if (session_job_ref_parse(ref, claim_opt, &claim, id) < 0)
		return EXIT_USAGE;
	ctx_session_opts(ctx, &o);
	o.claim = claim;
	o.purpose = purpose;
	rc = session_open(s, &o);
	free(claim);
	if (rc < 0) {
		free(*id);
		*id = NULL;
		return rc == SESSION_BAD_OPTS ? EXIT_USAGE : EXIT_OWN_FAILURE;
	}
	return 0;
}

/* "12:04:05" of an epoch ms, local time; "-" when absent. */
static void add_time(struct strbuf *sb, const json_t *job, const char *key)
{
	int64_t ms;
	time_t t;
	struct tm tm;
	char buf[32];

	if (json_object_int(job, key, &ms) <= 0) {
		strbuf_addch(sb, '-');
		return;
	}
	t = (time_t)(ms / 1000);
	localtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
	strbuf_addstr(sb, buf);
}

static void print_job(const char *claim, const json_t *job)
{
	struct strbuf line = STRBUF_INIT, field = STRBUF_INIT;
	const char *id = json_object_str(job, "id");
	const char *state = json_object_str(job, "state");
	const char *cmd = json_object_str(job, "command");
	int64_t v;

	strbuf_addf(&field, "%s/%s", claim, id ? id : "?");
	strbuf_addf(&line, "%-30s %-8s ", field.buf, state ? state : "?");
	strbuf_reset(&field);
	add_time(&field, job, "started_ms");
	strbuf_addf(&line, "%-20s ", field.buf);
	strbuf_reset(&field);
	if (state && !strcmp(state, "exited")) {
		const char *reason = json_object_str(job, "reason");

		if (reason && !strcmp(reason, "signaled") &&
		    json_object_int(job, "signal", &v) > 0)
			strbuf_addf(&field, "signal %" PRId64, v);
		else if (reason && strcmp(reason, "exited"))
			strbuf_addstr(&field, reason);
		else if (json_object_int(job, "exit_code", &v) > 0 ||
			 !json_object_int(job, "exit_code", &v))
			strbuf_addf(&field, "%" PRId64, v);
	} else {
		strbuf_addch(&field, '-');
	}
	strbuf_addf(&line, "%-12s ", field.buf);
	strbuf_reset(&field);
	if (json_object_int(job, "cpu_ms", &v) > 0)
		strbuf_addf(&field, "%.2fs", v / 1000.0);
	else
		strbuf_addch(&field, '-');
	strbuf_addf(&line, "%-8s ", field.buf);
	strbuf_reset(&field);
	if (json_object_int(job, "peak_rss_kb", &v) > 0)
		strbuf_addf(&field, "%.1fM", v / 1024.0);
	else
		strbuf_addch(&field, '-');
	strbuf_addf(&line, "%-9s ", field.buf);
	/* the command is the sandbox's text: no terminal controls */
	if (cmd)
		utf8_escape_into(&line, cmd, strlen(cmd), 0);
	strbuf_addch(&line, '\n');
	fwrite(line.buf, 1, line.len, stdout);
	strbuf_release(&line);
	strbuf_release(&field);
}

int cmd_jobs(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	static const char *const formats[] = { "text", "json", NULL };
	struct output_opt output = OUTPUT_OPT_INIT;
	struct session_opts o = { 0 };
	struct session s;
	const char *claim = NULL;
	json_t *jobs = NULL, *job;
	size_t i;
	int rc;
	struct option opts[] = {
		OPT_STRING_ENV(0, "claim", &claim, "<name>",
			       "the kept sandbox whose jobs to list",
			       "GOSBX_CLAIM"),
		OPT_OUTPUT(&output, "text (default: a table) or json"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, jobs_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (output_opt_resolve(&output, formats, jobs_usage, opts))
		return EXIT_USAGE;
	if (argc)
		return usage_error(jobs_usage, opts, "unexpected argument '%s'",
				   argv[0]);
	if (!claim || !*claim)
		return usage_error(jobs_usage, opts,
				   "name the sandbox: --claim=<name>");
	if (ctx_check_claim_name(ctx, claim) < 0)
		return usage_reported(jobs_usage, opts);
	ctx_session_opts(ctx, &o);
	o.claim = claim;
	o.purpose = "jobs";
	rc = session_open(&s, &o);
	if (rc < 0)
		return rc == SESSION_BAD_OPTS ? usage_reported(jobs_usage, opts)
					      : EXIT_OWN_FAILURE;
	rc = session_jobs_list(&s, &jobs);
	session_disconnect(&s);
	if (rc < 0) {
		json_decref(jobs);
		return EXIT_OWN_FAILURE;
	}
	if (output.json) {
		char *text = json_dumps(jobs, JSON_COMPACT);

		printf("%s\n", text ? text : "[]");
		free(text);
	} else {
		printf("%-30s %-8s %-20s %-12s %-8s %-9s %s\n", "ID", "STATE",
		       "START", "EXIT/REASON", "CPU", "PEAK MEM", "COMMAND");
		json_array_foreach (jobs, i, job)
			print_job(claim, job);
	}
	json_decref(jobs);
	return 0;
}
