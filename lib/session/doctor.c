/*
 * What the doctor checks of every backend share (lib/session/doctor.h): the
 * check list, capturing what the library reports, and the probe.
 * Moved from builtin/doctor.c.
 */
#include "compat.h"
#include "session/doctor.h"
#include "session/session.h"
#include "usage.h"

void check_add(struct check_list *cl, const char *name,
	       enum doctor_status status, const char *message, const char *fix)
{
	struct doctor_check *c;

	ALLOC_GROW(cl->v, cl->nr + 1, cl->alloc);
	c = &cl->v[cl->nr++];
	c->name = xstrdup(name);
	c->status = status;
	c->message = xstrdup(message ? message : "");
	c->fix = status != DOCTOR_OK && fix ? xstrdup(fix) : NULL;
}

/* move the entries of checks into cl and free the array */
void check_take(struct check_list *cl, struct doctor_check *checks, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		ALLOC_GROW(cl->v, cl->nr + 1, cl->alloc);
		cl->v[cl->nr] = checks[i];
		if (checks[i].status == DOCTOR_OK) {
			free(cl->v[cl->nr].fix);
			cl->v[cl->nr].fix = NULL;
		}
		cl->nr++;
	}
	free(checks);
}

void check_list_release(struct check_list *cl)
{
	doctor_checks_free(cl->v, cl->nr);
	cl->v = NULL;
	cl->nr = cl->alloc = 0;
}

/* ---- capturing what the library reports ---- */

static void capture_report(const char *prefix, const char *msg, void *data)
{
	struct capture *cap = data;
	struct strbuf *sb =
		starts_with(prefix, "warning") ? &cap->warn : &cap->err;

	if (sb->len)
		strbuf_addstr(sb, "; ");
	strbuf_addstr(sb, msg);
}

void capture_start(struct capture *cap)
{
	strbuf_init(&cap->err, 0);
	strbuf_init(&cap->warn, 0);
	set_error_routine(capture_report, cap);
}

void capture_end(struct capture *cap)
{
	set_error_routine(NULL, NULL);
}

void capture_release(struct capture *cap)
{
	strbuf_release(&cap->err);
	strbuf_release(&cap->warn);
}

const char *doctor_status_name(enum doctor_status s)
{
	return s == DOCTOR_OK ? "ok" : s == DOCTOR_WARN ? "warn" : "fail";
}

void doctor_checks_free(struct doctor_check *checks, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		free(checks[i].name);
		free(checks[i].message);
		free(checks[i].fix);
	}
	free(checks);
}

void first_line(struct strbuf *sb)
{
	char *nl = memchr(sb->buf, '\n', sb->len);

	if (nl)
		strbuf_setlen(sb, nl - sb->buf);
	strbuf_trim(sb);
}

/* open a throwaway sandbox, run `true`, close it; report the time */
void doctor_probe(struct check_list *cl, const struct doctor_opts *dopts)
{
	struct session_opts o = *dopts->session;
	struct session_exec ex = { 0 };
	struct session_result res;
	struct session s;
	struct strbuf msg = STRBUF_INIT;
	struct capture cap;
	uint64_t t0, t_open, t_run = 0, t_close = 0;
	int r;

	o.purpose = "doctor";
	o.ttl_ms = 60 * 1000; /* expires soon should we be killed */
	ex.command = "true";
	session_result_init(&res);

	capture_start(&cap);
	t0 = monotonic_ms();
	r = session_open(&s, &o);
	t_open = monotonic_ms();
	if (r < 0)
		goto done;
	r = session_execute(&s, &ex, &res);
	t_run = monotonic_ms();
	if (!r && res.exit_code)
		r = error("'true' in the sandbox ended with %s, status %d",
			  res.reason, res.exit_code);
	else if (r > 0)
		r = error("'true' in the sandbox was cancelled");
	if (session_close(&s) < 0)
		r = -1;
	t_close = monotonic_ms();
done:
	capture_end(&cap);
	if (r < 0) {
		check_add(cl, "probe", DOCTOR_FAIL,
			  cap.err.len ? cap.err.buf : "the probe failed",
			  "fix the failed checks above; 'gosbx open' shows "
			  "the same error");
	} else {
		strbuf_addf(&msg,
			    "opened a sandbox, ran 'true' and closed it "
			    "in %" PRIu64 " ms (open %" PRIu64
			    " ms, run %" PRIu64 " ms, close %" PRIu64 " ms)",
			    t_close - t0, t_open - t0, t_run - t_open,
			    t_close - t_run);
		if (cap.warn.len)
			strbuf_addf(&msg, "; %s", cap.warn.buf);
		check_add(cl, "probe", cap.warn.len ? DOCTOR_WARN : DOCTOR_OK,
			  msg.buf, "see the warnings of the checks above");
	}
	session_result_release(&res);
	capture_release(&cap);
	strbuf_release(&msg);
}
