/*
 * `gosbx claims` on the local backend (lib/session/claims.h): the claims under
 * the state directory with their status, age, idle time and size;
 * prune removes the expired and dead ones. Moved from builtin/claims.c.
 */
#include "compat.h"
#include "local/backend-local.h"
#include "session/claims.h"
#include "json.h"
#include "strbuf.h"
#include "usage.h"

#include <time.h>

/* "running" or "suspended" (gosbx-suspend(1)) */
static const char *claim_mode(const struct local_claim_info *c)
{
	return c->status == LOCAL_CLAIM_SUSPENDED ? "suspended" : "running";
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
	printf("%-*s  %-7s  %-9s  %5s  %5s  %6s  %s\n", w, "NAME", "BACKEND",
	       "STATUS", "AGE", "IDLE", "SIZE", "MODE");
	for (size_t i = 0; i < nr; i++) {
		const struct local_claim_info *c = &list[i];

		strbuf_reset(&age);
		strbuf_reset(&idle);
		strbuf_reset(&size);
		claims_add_age(&age, now - c->created);
		claims_add_age(&idle, now - c->last_used);
		claims_add_size(&size, c->app_bytes);
		printf("%-*s  %-7s  %-9s  %5s  %5s  %6s  %s\n", w, c->name,
		       "local", local_claim_status_name(c->status), age.buf,
		       idle.buf, size.buf, claim_mode(c));
	}
	/* how each claim that no longer runs ended: under the table */
	for (size_t i = 0; i < nr; i++)
		if (list[i].reason)
			fprintf(stderr, "%s: %s: %s\n", list[i].name,
				local_claim_status_name(list[i].status),
				list[i].reason);
	strbuf_release(&age);
	strbuf_release(&idle);
	strbuf_release(&size);
}

static int print_json(const struct local_claim_info *list, size_t nr,
		      int64_t now)
{
	json_t *arr = json_array();
	struct strbuf t = STRBUF_INIT;

	for (size_t i = 0; i < nr; i++) {
		const struct local_claim_info *c = &list[i];
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(c->name));
		json_object_set_new(o, "backend", json_string("local"));
		json_object_set_new(
			o, "status",
			json_string(local_claim_status_name(c->status)));
		json_object_set_new(o, "mode", json_string(claim_mode(c)));
		if (c->reason)
			json_object_set_new(o, "reason",
					    json_string(c->reason));
		strbuf_reset(&t);
		claims_add_rfc3339(&t, c->created);
		json_object_set_new(o, "created", json_string(t.buf));
		strbuf_reset(&t);
		claims_add_rfc3339(&t, c->last_used);
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
	return claims_print_json(arr);
}

static int prune(int dry_run)
{
	struct local_claim_info *list;
	size_t nr;
	int ret = 0;

	if (local_claims_list(&list, &nr, 0) < 0)
		return 1;
	for (size_t i = 0; i < nr; i++) {
		/* a suspended claim is kept on purpose */
		if (list[i].status == LOCAL_CLAIM_READY ||
		    list[i].status == LOCAL_CLAIM_SUSPENDED)
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

int local_claims_print(const struct claims_query *q)
{
	struct local_claim_info *list;
	size_t nr;
	int ret = 0;

	if (local_claims_list(&list, &nr, 1) < 0)
		return -1;
	if (q->json)
		ret = print_json(list, nr, (int64_t)time(NULL));
	else
		print_table(list, nr, (int64_t)time(NULL));
	local_claims_free(list, nr);
	return ret;
}

int local_claims_prune(const struct claims_query *q)
{
	return prune(q->dry_run) ? -1 : 0;
}
