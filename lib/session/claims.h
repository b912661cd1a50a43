#ifndef CLAIMS_H
#define CLAIMS_H

#include "compat.h"
#include "strbuf.h"

#include <jansson.h>

/*
 * `gosbx claims` and `gosbx claims prune` as backend ops (struct
 * backend_ops.list and .prune, lib/session/session.h): each backend lists and
 * prunes its own claims (lib/local/backend-local-claims.c,
 * lib/kube/kube-claims.c); builtin/claims.c parses the options.
 */

struct session_opts;

/* What the command asks. */
struct claims_query {
	/*
	 * the backend options: the kube backend takes kubeconfig,
	 * context, namespace and api_version from here; not NULL
	 */
	const struct session_opts *session;
	int json;	    /* -o json, else the table */
	int dry_run;	    /* prune: only say what would be removed */
	int all_namespaces; /* -A: every namespace (BACKEND_NAMESPACES) */
	int all;	    /* --all: not only gosbx's claims (listing) */
};

/* "5s", "3m", "2h", "4d": the largest whole unit, rounded down */
void claims_add_age(struct strbuf *out, int64_t s);
/* "512B", "12K", "3.4M", "120M", "2.0G" in binary units; "-" if < 0 */
void claims_add_size(struct strbuf *out, int64_t bytes);
/* RFC 3339 in UTC, e.g. "2026-11-22T02:14:14Z" (seconds since 1970) */
void claims_add_rfc3339(struct strbuf *out, int64_t epoch);

/*
 * Print the array of claim objects arr as indented JSON on stdout and
 * drop the reference. 0, or -1 with error() when it cannot be encoded.
 */
int claims_print_json(json_t *arr);

/*
 * The ops. list prints the claims (table or JSON) on stdout; prune
 * removes the expired, failed and dead claims gosbx made and prints
 * one line per claim removed (or that would be, with dry_run).
 * Both return 0, or -1 with error() (what could be done is done).
 */
int local_claims_print(const struct claims_query *q);
int local_claims_prune(const struct claims_query *q);
int kube_claims_print(const struct claims_query *q);
int kube_claims_prune(const struct claims_query *q);

#endif /* CLAIMS_H */
