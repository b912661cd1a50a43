/*
 * gosbx claims: list the sandboxes of the local backend with their
 * status, age, idle time and size; `prune` removes the expired and
 * dead ones (DESIGN.md "One binary, many commands").
 */
#include "compat.h"
#include "backend-local.h"
#include "builtin.h"
#include "json.h"
#include "parse-options.h"
#include "strbuf.h"
#include "usage.h"

#include <time.h>

static const char *const claims_usage[] = {
	"gosbx claims [-o table|json]",
	"gosbx claims prune [--dry-run]",
	NULL,
};

/* "5s", "3m", "2h", "4d": the largest whole unit, rounded down */
static void add_age(struct strbuf *out, int64_t s)
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
static void add_size(struct strbuf *out, int64_t bytes)
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
static void add_rfc3339(struct strbuf *out, int64_t epoch)
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

static void print_table(const struct local_claim_info *list, size_t nr,
			int64_t now)
{
	struct strbuf age = STRBUF_INIT, idle = STRBUF_INIT;
	struct strbuf size = STRBUF_INIT;
	int w = 4;

	for (size_t i = 0; i < nr; i++)
		if ((int)strlen(list[i].name) > w)
			w = (int)strlen(list[i].name);
	printf("%-*s  %-7s  %-7s  %5s  %5s  %6s\n", w, "NAME", "BACKEND",
	       "STATUS", "AGE", "IDLE", "SIZE");
	for (size_t i = 0; i < nr; i++) {
		const struct local_claim_info *c = &list[i];

		strbuf_reset(&age);
		strbuf_reset(&idle);
		strbuf_reset(&size);
		add_age(&age, now - c->created);
		add_age(&idle, now - c->last_used);
		add_size(&size, c->app_bytes);
		printf("%-*s  %-7s  %-7s  %5s  %5s  %6s\n", w, c->name, "local",
		       local_claim_status_name(c->status), age.buf, idle.buf,
		       size.buf);
	}
	strbuf_release(&age);
	strbuf_release(&idle);
	strbuf_release(&size);
}

static int print_json(const struct local_claim_info *list, size_t nr,
		      int64_t now)
{
	json_t *arr = json_array();
	struct strbuf t = STRBUF_INIT;
	char *text;

	for (size_t i = 0; i < nr; i++) {
		const struct local_claim_info *c = &list[i];
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(c->name));
		json_object_set_new(o, "backend", json_string("local"));
		json_object_set_new(
			o, "status",
			json_string(local_claim_status_name(c->status)));
		strbuf_reset(&t);
		add_rfc3339(&t, c->created);
		json_object_set_new(o, "created", json_string(t.buf));
		strbuf_reset(&t);
		add_rfc3339(&t, c->last_used);
		json_object_set_new(o, "last_used", json_string(t.buf));
		json_object_set_new(o, "age_s", json_integer(now - c->created));
		json_object_set_new(o, "idle_s",
				    json_integer(now - c->last_used));
		json_object_set_new(o, "app_bytes",
				    c->app_bytes < 0
					    ? json_null()
					    : json_integer(c->app_bytes));
		if (c->ttl_ms % 1000)
			json_object_set_new(o, "ttl_s",
					    json_real(c->ttl_ms / 1000.0));
		else
			json_object_set_new(o, "ttl_s",
					    json_integer(c->ttl_ms / 1000));
		json_object_set_new(o, "network", json_boolean(c->network));
		json_object_set_new(o, "keep", json_boolean(c->keep));
		json_object_set_new(o, "purpose",
				    json_string(c->purpose ? c->purpose : ""));
		json_array_append_new(arr, o);
	}
	strbuf_release(&t);
	text = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(arr);
	if (!text)
		return error("cannot encode the claims as JSON");
	printf("%s\n", text);
	free(text);
	return 0;
}

static int prune(int dry_run)
{
	struct local_claim_info *list;
	size_t nr;
	int ret = 0;

	if (local_claims_list(&list, &nr, 0) < 0)
		return 1;
	for (size_t i = 0; i < nr; i++) {
		if (list[i].status == LOCAL_CLAIM_READY)
			continue;
		if (!dry_run && local_claim_delete(list[i].name) < 0) {
			ret = 1;
			continue;
		}
		printf("%s\n", list[i].name);
	}
	local_claims_free(list, nr);
	return ret;
}

int cmd_claims(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	const char *format = "table";
	int dry_run = 0, ret;
	struct local_claim_info *list;
	size_t nr;
	struct option opts[] = {
		OPT_STRING('o', "output", &format, "<format>",
			   "table (default) or json"),
		OPT_GROUP("prune"),
		OPT_BOOL(0, "dry-run", &dry_run,
			 "only list what would be removed"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, claims_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc > 1 || (argc == 1 && strcmp(argv[0], "prune"))) {
		error("unexpected argument '%s'", argv[argc - 1]);
		usage_with_options_to(stderr, claims_usage, opts);
		return 129;
	}
	if (strcmp(format, "table") && strcmp(format, "json")) {
		error("unknown output format '%s' (expected table or json)",
		      format);
		return 129;
	}
	if (dry_run && !argc) {
		error("--dry-run goes with 'prune'");
		return 129;
	}
	if (strcmp(ctx->backend, "local")) {
		error("claims are listed for the local backend only, not "
		      "'%s'",
		      ctx->backend);
		return 1;
	}
	if (argc)
		return prune(dry_run);

	if (local_claims_list(&list, &nr, 1) < 0)
		return 1;
	if (!strcmp(format, "json")) {
		ret = print_json(list, nr, (int64_t)time(NULL)) < 0;
	} else {
		print_table(list, nr, (int64_t)time(NULL));
		ret = 0;
	}
	local_claims_free(list, nr);
	return ret;
}
