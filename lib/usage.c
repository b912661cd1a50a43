#include "compat.h"
#include "usage.h"
#include "utf8.h"

#include <time.h>

const char *progname = "gosbx";
int die_status = 128;

static __thread report_fn report_routine;
static __thread void *report_data;
static __thread char last_error_buf[1024];

void set_error_routine(report_fn fn, void *data)
{
	report_routine = fn;
	report_data = data;
}

void get_error_routine(report_fn *fn, void **data)
{
	*fn = report_routine;
	*data = report_data;
}

void report_nothing(const char *prefix, const char *msg, void *data)
{
}

const char *last_error(void)
{
	return last_error_buf;
}

static void vreport(const char *prefix, int with_errno, int saved_errno,
		    const char *fmt, va_list ap)
{
	char msg[4096];
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);

	if (n < 0)
		msg[0] = '\0';
	if (with_errno) {
		size_t len = strlen(msg);
		snprintf(msg + len, sizeof(msg) - len, ": %s",
			 strerror(saved_errno));
	}
	/*
	 * Messages quote text from sandboxes and servers (log tails,
	 * answers): whatever a caller forgot to escape, no control
	 * character reaches the terminal (lines stay lines).
	 */
	if (utf8_needs_escape(msg, strlen(msg), UTF8_ESCAPE_KEEP_LINES)) {
		struct strbuf sb = STRBUF_INIT;

		utf8_escape_into(&sb, msg, strlen(msg), UTF8_ESCAPE_KEEP_LINES);
		snprintf(msg, sizeof(msg), "%s", sb.buf);
		strbuf_release(&sb);
	}
	if (!strcmp(prefix, "error: "))
		snprintf(last_error_buf, sizeof(last_error_buf), "%s", msg);
	if (report_routine) {
		report_routine(prefix, msg, report_data);
		return;
	}
	fprintf(stderr, "%s%s\n", prefix, msg);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", 0, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int error_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", 1, e, fmt, ap);
	va_end(ap);
	errno = e;
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", 0, 0, fmt, ap);
	va_end(ap);
}

void warning_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", 1, e, fmt, ap);
	va_end(ap);
	errno = e;
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_error_routine(NULL, NULL);
	vreport("fatal: ", 0, 0, fmt, ap);
	va_end(ap);
	exit(die_status);
}

void die_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	set_error_routine(NULL, NULL);
	vreport("fatal: ", 1, e, fmt, ap);
	va_end(ap);
	exit(die_status);
}
