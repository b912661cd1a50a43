/*
 * gosbx claims: list the sandboxes of the local backend with their
 * status, age, idle time and size; `prune` removes the expired and
 * dead ones (DESIGN.md "One binary, many commands").
 */
#include "compat.h"
#include "backend-local.h"
#include "builtin.h"
#include "json.h"
#include "kube.h"
#include "kubeconfig.h"
#include "parse-options.h"
#include "session.h"
#include "strbuf.h"
#include "usage.h"

#include <time.h>

static const char *const claims_usage[] = {
	"gosbx claims [-o table|json]",
	"gosbx claims prune [--dry-run]",
	"gosbx claims --backend=kube [-A] [--all] [-n <ns>] [-o table|json]",
	"gosbx claims --backend=kube prune [-A] [-n <ns>] [--dry-run]",
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

/* ---- kube backend (spec/kubernetes.md "Objects") ---- */

struct kube_claims_opts {
	const char *kubeconfig, *context, *namespace;
	const char *api_version; /* forced API version, or NULL */
	int all_namespaces; /* -A */
	int all;	    /* --all: not only gosbx's claims */
	int dry_run;
	const char *format;
};

/* the fields of a claim object the listing shows */
struct kclaim {
	const char *name, *ns, *sandbox, *ready, *reason, *message;
	const char *shutdown, *created, *session;
	int persistent, gosbx;
	time_t created_t, shutdown_t; /* 0: unknown / none */
};

static void kclaim_from(struct kclaim *c, json_t *o)
{
	json_t *md = json_object_get(o, "metadata");
	json_t *labels = json_object_get(md, "labels");
	json_t *st = json_object_get(o, "status");
	json_t *cond;
	const char *by, *p;
	size_t i;

	memset(c, 0, sizeof(*c));
	c->name = json_object_str(md, "name");
	c->ns = json_object_str(md, "namespace");
	c->created = json_object_str(md, "creationTimestamp");
	c->sandbox = json_object_str(json_object_get(st, "sandbox"), "name");
	c->shutdown = json_object_str(
		json_object_get(json_object_get(o, "spec"), "lifecycle"),
		"shutdownTime");
	by = json_object_str(labels, "agents.x-k8s.io/created-by");
	c->gosbx = by && !strcmp(by, "gosbx");
	p = json_object_str(labels, "gosbx/persistent");
	c->persistent = p && !strcmp(p, "true");
	c->session = json_object_str(labels, "gosbx/session");
	json_array_foreach (json_object_get(st, "conditions"), i, cond) {
		const char *type = json_object_str(cond, "type");

		if (!type || strcmp(type, "Ready"))
			continue;
		c->ready = json_object_str(cond, "status");
		c->reason = json_object_str(cond, "reason");
		c->message = json_object_str(cond, "message");
	}
	if (!c->name)
		c->name = "";
	if (!c->ns)
		c->ns = "";
	if (!c->sandbox)
		c->sandbox = "";
	if (!c->ready)
		c->ready = "Unknown";
	if (!c->created || kube_parse_rfc3339(c->created, &c->created_t) < 0)
		c->created_t = 0;
	if (!c->shutdown || kube_parse_rfc3339(c->shutdown, &c->shutdown_t) < 0)
		c->shutdown_t = 0;
}

/* Ready=False reasons the controller does not recover from (spec) */
static int terminal_reason(const char *reason)
{
	static const char *const terminal[] = {
		"TemplateNotFound",
		"WarmPoolNotFound",
		"InvalidMetadata",
		"EnvVarsInjectionRejected",
		"VolumeClaimTemplatesError",
		"ClaimExpired",
		"SandboxExpired",
	};

	for (size_t i = 0; reason && i < ARRAY_SIZE(terminal); i++)
		if (!strcmp(reason, terminal[i]))
			return 1;
	return 0;
}

/* "5m" until t, "expired" once past, "-" without a shutdownTime */
static void add_expires(struct strbuf *out, time_t t, time_t now)
{
	if (!t)
		strbuf_addch(out, '-');
	else if (t <= now)
		strbuf_addstr(out, "expired");
	else
		add_age(out, (int64_t)(t - now));
}

static void kube_print_table(json_t *items, time_t now)
{
	struct strbuf age = STRBUF_INIT, exp = STRBUF_INIT;
	struct strbuf ready = STRBUF_INIT;
	struct kclaim c;
	json_t *o;
	size_t i;
	int wn = 4, wns = 9, ws = 7;

	json_array_foreach (items, i, o) {
		kclaim_from(&c, o);
		if ((int)strlen(c.name) > wn)
			wn = (int)strlen(c.name);
		if ((int)strlen(c.ns) > wns)
			wns = (int)strlen(c.ns);
		if ((int)strlen(c.sandbox) > ws)
			ws = (int)strlen(c.sandbox);
	}
	printf("%-*s  %-*s  %-5s  %-*s  %5s  %7s  %s\n", wn, "NAME", wns,
	       "NAMESPACE", "READY", ws, "SANDBOX", "AGE", "EXPIRES",
	       "PERSISTENT");
	json_array_foreach (items, i, o) {
		kclaim_from(&c, o);
		strbuf_reset(&age);
		strbuf_reset(&exp);
		strbuf_reset(&ready);
		if (c.created_t)
			add_age(&age, (int64_t)(now - c.created_t));
		else
			strbuf_addch(&age, '-');
		add_expires(&exp, c.shutdown_t, now);
		strbuf_addstr(&ready, c.ready);
		if (strcmp(c.ready, "True") && c.reason && *c.reason)
			strbuf_addf(&ready, " (%s)", c.reason);
		printf("%-*s  %-*s  %-5s  %-*s  %5s  %7s  %s\n", wn, c.name,
		       wns, c.ns, ready.buf, ws, *c.sandbox ? c.sandbox : "-",
		       age.buf, exp.buf, c.persistent ? "yes" : "no");
	}
	strbuf_release(&age);
	strbuf_release(&exp);
	strbuf_release(&ready);
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

static int kube_print_json(json_t *items, time_t now)
{
	json_t *arr = json_array(), *o;
	struct kclaim c;
	size_t i;
	char *text;

	json_array_foreach (items, i, o) {
		json_t *e = json_object();

		kclaim_from(&c, o);
		json_object_set_new(e, "name", json_string(c.name));
		json_object_set_new(e, "namespace", json_string(c.ns));
		json_object_set_new(e, "backend", json_string("kube"));
		json_object_set_new(e, "ready",
				    json_boolean(!strcmp(c.ready, "True")));
		json_object_set_new(e, "reason", str_or_null(c.reason));
		json_object_set_new(e, "message", str_or_null(c.message));
		json_object_set_new(e, "sandbox", str_or_null(c.sandbox));
		json_object_set_new(e, "created", str_or_null(c.created));
		json_object_set_new(e, "age_s",
				    c.created_t
					    ? json_integer(now - c.created_t)
					    : json_null());
		json_object_set_new(e, "shutdown_time",
				    str_or_null(c.shutdown));
		json_object_set_new(
			e, "expired",
			json_boolean(c.shutdown_t && c.shutdown_t <= now));
		json_object_set_new(e, "persistent",
				    json_boolean(c.persistent));
		json_object_set_new(e, "gosbx", json_boolean(c.gosbx));
		json_object_set_new(e, "session", str_or_null(c.session));
		json_array_append_new(arr, e);
	}
	text = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(arr);
	if (!text)
		return error("cannot encode the claims as JSON");
	printf("%s\n", text);
	free(text);
	return 0;
}

/*
 * Why a gosbx claim is to be pruned into why (empty: keep it): its
 * shutdownTime passed, it failed for good, or its sandbox is gone.
 * Returns -1 when the sandbox lookup failed (error() said why).
 */
static int prune_reason(struct kube_client *kc, const struct kclaim *c,
			time_t now, struct strbuf *why)
{
	struct kube_sandbox sb;
	int r;

	if (c->shutdown_t && c->shutdown_t <= now) {
		strbuf_addf(why, "expired at %s", c->shutdown);
		return 0;
	}
	if (!strcmp(c->ready, "False") && terminal_reason(c->reason)) {
		strbuf_addf(why, "failed: %s", c->reason);
		return 0;
	}
	if (!*c->sandbox)
		return 0; /* not bound yet: the controller is at work */
	kube_sandbox_init(&sb);
	r = kube_sandbox_get(kc, c->ns, c->sandbox, &sb);
	kube_sandbox_release(&sb);
	if (r == 1)
		strbuf_addf(why, "orphaned: sandbox %s is gone", c->sandbox);
	return r < 0 ? -1 : 0;
}

static int kube_prune(struct kube_client *kc, json_t *items, int all_ns,
		      int dry_run)
{
	struct strbuf why = STRBUF_INIT;
	time_t now = time(NULL);
	struct kclaim c;
	json_t *o;
	size_t i;
	int ret = 0;

	json_array_foreach (items, i, o) {
		kclaim_from(&c, o);
		if (!c.gosbx || !*c.name)
			continue;
		strbuf_reset(&why);
		if (prune_reason(kc, &c, now, &why) < 0) {
			ret = 1;
			continue;
		}
		if (!why.len)
			continue;
		if (!dry_run && kube_claim_delete(kc, c.ns, c.name) < 0) {
			ret = 1;
			continue;
		}
		if (all_ns)
			printf("%s/%s: %s\n", c.ns, c.name, why.buf);
		else
			printf("%s: %s\n", c.name, why.buf);
	}
	strbuf_release(&why);
	return ret;
}

static int claims_kube(const struct kube_claims_opts *o, int prune)
{
	struct kube_load_opts lo = { 0 };
	struct kube_config cfg;
	struct kube_client kc;
	json_t *items = NULL;
	const char *ns;
	int ret = 1;

	lo.kubeconfig = o->kubeconfig;
	lo.context = o->context;
	if (kube_config_load(&cfg, &lo) < 0) {
		kube_config_release(&cfg);
		return 1;
	}
	if (kube_client_init(&kc, &cfg, o->namespace) < 0) {
		kube_config_release(&cfg);
		return 1;
	}
	if (kube_discover(&kc, o->api_version) < 0)
		goto out;
	ns = o->all_namespaces ? "*" : NULL;
	/* prune never touches claims gosbx did not make */
	if (kube_claim_list(&kc, ns,
			    o->all && !prune
				    ? NULL
				    : "agents.x-k8s.io/created-by=gosbx",
			    &items, NULL) < 0)
		goto out;
	if (prune)
		ret = kube_prune(&kc, items, o->all_namespaces, o->dry_run);
	else if (!strcmp(o->format, "json"))
		ret = kube_print_json(items, time(NULL)) < 0;
	else {
		kube_print_table(items, time(NULL));
		ret = 0;
	}
out:
	json_decref(items);
	kube_client_release(&kc);
	kube_config_release(&cfg);
	return ret;
}

int cmd_claims(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct kube_claims_opts ko = { 0 };
	const char *format = "table", *backend = NULL;
	int dry_run = 0, ret;
	struct local_claim_info *list;
	size_t nr;
	struct option opts[] = {
		OPT_STRING('o', "output", &format, "<format>",
			   "table (default) or json"),
		OPT_GROUP("prune"),
		OPT_BOOL(0, "dry-run", &dry_run,
			 "only list what would be removed"),
		OPT_GROUP("kube backend"),
		OPT_STRING(0, "backend", &backend, "<name>",
			   "the backend (instead of gosbx's --backend)"),
		OPT_BOOL('A', "all-namespaces", &ko.all_namespaces,
			 "claims of every namespace"),
		OPT_BOOL(0, "all", &ko.all,
			 "every claim, not only those gosbx made"),
		OPT_STRING(0, "kubeconfig", &ko.kubeconfig, "<file>",
			   "only this kubeconfig (default: KUBECONFIG, "
			   "~/.kube/config)"),
		OPT_STRING(0, "context", &ko.context, "<name>",
			   "kubeconfig context (default: current)"),
		OPT_STRING_ENV('n', "namespace", &ko.namespace, "<ns>",
			       "sandbox namespace (default: the context's)",
			       "GOSBX_NAMESPACE"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, claims_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc > 1 || (argc == 1 && strcmp(argv[0], "prune")))
		return usage_error(claims_usage, opts,
				   "unexpected argument '%s'", argv[argc - 1]);
	if (strcmp(format, "table") && strcmp(format, "json"))
		return usage_error(claims_usage, opts,
				   "unknown output format '%s' (expected "
				   "table or json)",
				   format);
	if (dry_run && !argc)
		return usage_error(claims_usage, opts,
				   "--dry-run goes with 'prune'");
	if (backend && ctx_set_backend(ctx, backend) < 0)
		return usage_error(claims_usage, opts,
				   "unknown backend '%s' (expected %s)",
				   backend, backend_names());
	if (ctx->ops == &backend_kube) {
		/* the global kube options, unless the command's own were given */
		if (!ko.kubeconfig)
			ko.kubeconfig = ctx->kubeconfig;
		if (!ko.context)
			ko.context = ctx->context;
		if (!ko.namespace)
			ko.namespace = ctx->namespace;
		ko.api_version = ctx->api_version;
		ko.format = format;
		ko.dry_run = dry_run;
		if (ko.all && argc)
			return usage_error(claims_usage, opts,
					   "--all goes with listing; prune "
					   "only removes claims gosbx made");
		return claims_kube(&ko, argc) ? EXIT_OWN_FAILURE : 0;
	}
	if (ko.all_namespaces || ko.all || ko.kubeconfig)
		return usage_error(claims_usage, opts,
				   "-A, --all and --kubeconfig go with the "
				   "kube backend");
	if (ctx->ops != &backend_local)
		return usage_error(claims_usage, opts,
				   "claims are listed for the local and kube "
				   "backends, not '%s'",
				   ctx->backend);
	if (argc)
		return prune(dry_run) ? EXIT_OWN_FAILURE : 0;

	if (local_claims_list(&list, &nr, 1) < 0)
		return EXIT_OWN_FAILURE;
	if (!strcmp(format, "json")) {
		ret = print_json(list, nr, (int64_t)time(NULL)) < 0
			      ? EXIT_OWN_FAILURE
			      : 0;
	} else {
		print_table(list, nr, (int64_t)time(NULL));
		ret = 0;
	}
	local_claims_free(list, nr);
	return ret;
}
