/*
 * The formatting the claims listings of the backends share
 * (lib/session/claims.h). Moved from builtin/claims.c.
 */
#include "compat.h"
#include "session/claims.h"
#include "json.h"
#include "strbuf.h"
#include "usage.h"

#include <time.h>

/* "5s", "3m", "2h", "4d": the largest whole unit, rounded down */
void claims_add_age(struct strbuf *out, int64_t s)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		strbuf_addf(out, "%" PRId64 "s", s);
	else if (s < 3600)
		strbuf_addf(out, "%" PRId64 "m", s / 60);
	else if (s < 86400)
		strbuf_addf(out, "%" PRId64 "h", s / 3600);
	else
		strbuf_addf(out, "%" PRId64 "d", s / 86400);
}

/* "512B", "12K", "3.4M", "120M", "2.0G" in binary units; "-" if unknown */
void claims_add_size(struct strbuf *out, int64_t bytes)
{
	static const char units[] = "KMGTP";
	double v = (double)bytes;
	int u = -1;

	if (bytes < 0) {
		strbuf_addch(out, '-');
		return;
	}
	if (bytes < 1024) {
		strbuf_addf(out, "%" PRId64 "B", bytes);
		return;
	}
	while (v >= 1024 && u < (int)sizeof(units) - 2) {
		v /= 1024;
		u++;
	}
	/* 9.96 would print as "10.0": switch to whole numbers first */
	if (v < 9.95)
		strbuf_addf(out, "%.1f%c", v, units[u]);
	else
		strbuf_addf(out, "%.0f%c", v, units[u]);
}

/* RFC 3339 in UTC, e.g. "2026-11-22T02:14:14Z" */
void claims_add_rfc3339(struct strbuf *out, int64_t epoch)
{
	time_t t = (time_t)epoch;
	struct tm tm;
	char buf[32];

	if (!gmtime_r(&t, &tm) ||
	    !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm)) {
		strbuf_addstr(out, "1970-01-01T00:00:00Z");
		return;
	}
	strbuf_addstr(out, buf);
}

int claims_print_json(json_t *arr)
{
	char *text = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	json_decref(arr);
	if (!text)
		return error("cannot encode the claims as JSON");
	printf("%s\n", text);
	free(text);
	return 0;
}
