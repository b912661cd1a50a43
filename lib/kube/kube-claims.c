/*
 * `gosbx claims` on the kube backend (lib/session/claims.h;
 * Documentation/protocol/kubernetes.md "Objects"). Moved from builtin/claims.c.
 */
#include "compat.h"
#include "kube/backend-kube.h"
#include "session/claims.h"
#include "json.h"
#include "kube/kube.h"
#include "kube/kube-credentials.h"
#include "kube/kubeconfig.h"
#include "session/session.h"
#include "strbuf.h"
#include "usage.h"

#include <time.h>

struct kube_claims_opts {
	const char *kubeconfig, *context, *namespace;
	const char *api_version; /* forced API version, or NULL */
	int all_namespaces;	 /* -A */
	int all;		 /* --all: not only gosbx's claims */
	int dry_run;
	const char *format;
};

/* the fields of a claim object the listing shows */
struct kclaim {
	const char *name, *ns, *sandbox, *ready, *reason, *message;
	const char *shutdown, *created, *session;
	/* "running", "suspended" (the Sandbox's spec.operatingMode), or NULL */
	const char *mode;
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
	by = json_object_str(labels, KUBE_LABEL_CREATED_BY);
	c->gosbx = by && !strcmp(by, "gosbx");
	p = json_object_str(labels, KUBE_LABEL_PERSISTENT);
	c->persistent = p && !strcmp(p, "true");
	c->session = json_object_str(labels, KUBE_LABEL_SESSION);
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

/*
 * The mode of the Sandbox of c in sandboxes (a list of Sandbox
 * objects, may be NULL): "running" or "suspended" from its
 * spec.operatingMode (v1beta1, agent-sandbox v0.5 and later), NULL when
 * unknown (v1alpha1 has spec.replicas instead).
 */
static const char *sandbox_mode(json_t *sandboxes, const struct kclaim *c)
{
	json_t *o;
	size_t i;

	if (!*c->sandbox)
		return NULL;
	json_array_foreach (sandboxes, i, o) {
		json_t *md = json_object_get(o, "metadata");
		const char *name = json_object_str(md, "name");
		const char *ns = json_object_str(md, "namespace");
		const char *m = json_object_str(json_object_get(o, "spec"),
						"operatingMode");
		const char *av;

		if (!name || strcmp(name, c->sandbox) ||
		    (ns && strcmp(ns, c->ns)))
			continue;
		if (m && !strcmp(m, "Suspended"))
			return "suspended";
		if (m && !strcmp(m, "Running"))
			return "running";
		/* v1beta1 without it: its CRD's default */
		av = json_object_str(o, "apiVersion");
		if (!m && av && ends_with(av, "/v1beta1"))
			return "running";
		return NULL;
	}
	return NULL;
}

/* "5m" until t, "expired" once past, "-" without a shutdownTime */
static void add_expires(struct strbuf *out, time_t t, time_t now)
{
	if (!t)
		strbuf_addch(out, '-');
	else if (t <= now)
		strbuf_addstr(out, "expired");
	else
		claims_add_age(out, (int64_t)(t - now));
}

/* the READY cell: "True", "Unknown", or "False (Reason)" */
static void claim_ready_text(struct strbuf *out, const struct kclaim *c)
{
	strbuf_addstr(out, c->ready);
	if (strcmp(c->ready, "True") && c->reason && *c->reason)
		strbuf_addf(out, " (%s)", c->reason);
}

static void kube_print_table(json_t *items, json_t *sandboxes, time_t now)
{
	struct strbuf age = STRBUF_INIT, exp = STRBUF_INIT;
	struct strbuf ready = STRBUF_INIT;
	struct kclaim c;
	json_t *o;
	size_t i;
	int wn = 4, wns = 9, ws = 7, wr = 5;

	json_array_foreach (items, i, o) {
		kclaim_from(&c, o);
		/* "False (Reason)", "Unknown": the column fits the widest */
		strbuf_reset(&ready);
		claim_ready_text(&ready, &c);
		if ((int)ready.len > wr)
			wr = (int)ready.len;
		if ((int)strlen(c.name) > wn)
			wn = (int)strlen(c.name);
		if ((int)strlen(c.ns) > wns)
			wns = (int)strlen(c.ns);
		if ((int)strlen(c.sandbox) > ws)
			ws = (int)strlen(c.sandbox);
	}
	printf("%-*s  %-*s  %-*s  %-*s  %5s  %7s  %-10s  %s\n", wn, "NAME", wns,
	       "NAMESPACE", wr, "READY", ws, "SANDBOX", "AGE", "EXPIRES",
	       "PERSISTENT", "MODE");
	json_array_foreach (items, i, o) {
		kclaim_from(&c, o);
		strbuf_reset(&age);
		strbuf_reset(&exp);
		strbuf_reset(&ready);
		if (c.created_t)
			claims_add_age(&age, (int64_t)(now - c.created_t));
		else
			strbuf_addch(&age, '-');
		add_expires(&exp, c.shutdown_t, now);
		claim_ready_text(&ready, &c);
		c.mode = sandbox_mode(sandboxes, &c);
		printf("%-*s  %-*s  %-*s  %-*s  %5s  %7s  %-10s  %s\n", wn,
		       c.name, wns, c.ns, wr, ready.buf, ws,
		       *c.sandbox ? c.sandbox : "-", age.buf, exp.buf,
		       c.persistent ? "yes" : "no", c.mode ? c.mode : "-");
	}
	strbuf_release(&age);
	strbuf_release(&exp);
	strbuf_release(&ready);
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

static int kube_print_json(json_t *items, json_t *sandboxes, time_t now)
{
	json_t *arr = json_array(), *o;
	struct kclaim c;
	size_t i;

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
		json_object_set_new(e, "mode",
				    str_or_null(sandbox_mode(sandboxes, &c)));
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
	return claims_print_json(arr);
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
	if (!strcmp(c->ready, "False") && kube_terminal_reason(c->reason)) {
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
	json_t *items = NULL, *sandboxes = NULL;
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
			    o->all && !prune ? NULL : KUBE_SELECTOR_GOSBX,
			    &items, NULL) < 0)
		goto out;
	/* the modes: one list of the Sandboxes */
	if (!prune && kube_sandbox_list(&kc, ns, &sandboxes) < 0)
		goto out;
	if (prune)
		ret = kube_prune(&kc, items, o->all_namespaces, o->dry_run);
	else if (!strcmp(o->format, "json"))
		ret = kube_print_json(items, sandboxes, time(NULL)) < 0;
	else {
		kube_print_table(items, sandboxes, time(NULL));
		ret = 0;
	}
out:
	json_decref(items);
	json_decref(sandboxes);
	kube_client_release(&kc);
	kube_config_release(&cfg);
	return ret;
}

static int kube_claims_run(const struct claims_query *q, int prune)
{
	struct kube_claims_opts o = { 0 };

	o.kubeconfig = q->session->kubeconfig;
	o.context = q->session->context;
	o.namespace = q->session->namespace;
	o.api_version = q->session->api_version;
	o.all_namespaces = q->all_namespaces;
	o.all = q->all;
	o.dry_run = q->dry_run;
	o.format = q->json ? "json" : "table";
	return claims_kube(&o, prune) ? -1 : 0;
}

int kube_claims_print(const struct claims_query *q)
{
	return kube_claims_run(q, 0);
}

int kube_claims_prune(const struct claims_query *q)
{
	return kube_claims_run(q, 1);
}
