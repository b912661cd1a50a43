#include "compat.h"
#include "kube/kube.h"
#include "http.h"
#include "json.h"
#include "kube/kube-credentials.h"
#include "kube/kubeconfig.h"
#include "strvec.h"
#include "usage.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

/* (Re)make kc->http from the current credentials of kc->cfg. */
static int kube_connect(struct kube_client *kc)
{
	struct kube_auth a;
	struct http_client_opts o = { 0 };
	struct http_client *h;

	kube_auth_init(&a);
	if (kube_config_auth(kc->cfg, &a) < 0) {
		kube_auth_release(&a);
		return -1;
	}
	o.connect_timeout_ms = 10000;
	h = http_client_new(kube_auth_http_opts(&a, &o), &o);
	if (!h) {
		kube_auth_release(&a);
		return -1;
	}
	http_client_free(kc->http);
	kc->http = h;
	free(kc->server);
	kc->server = xstrdup(a.server);
	kc->cred_expiry = a.expiry;
	kube_auth_release(&a);
	return 0;
}

int kube_client_init(struct kube_client *kc, struct kube_config *cfg,
		     const char *namespace)
{
	memset(kc, 0, sizeof(*kc));
	kc->cfg = cfg;
	kc->namespace = xstrdup(namespace	 ? namespace
				: cfg->namespace ? cfg->namespace
						 : "default");
	kc->has_exec = cfg->user.exec != NULL || cfg->user.token_file;
	snprintf(kc->claim_version, sizeof(kc->claim_version), "v1alpha1");
	snprintf(kc->sandbox_version, sizeof(kc->sandbox_version), "v1alpha1");
	if (kube_connect(kc) < 0) {
		kube_client_release(kc);
		return -1;
	}
	return 0;
}

void kube_client_release(struct kube_client *kc)
{
	http_client_free(kc->http);
	free(kc->server);
	free(kc->namespace);
	memset(kc, 0, sizeof(*kc));
}

/* Sleep ms in slices; 1 when *cancel became non-zero. */
static int nap_ms(long ms, const volatile sig_atomic_t *cancel)
{
	uint64_t end = monotonic_ms() + (uint64_t)ms;

	while (monotonic_ms() < end) {
		struct timespec ts = { 0, 20 * 1000000L };

		if (cancel && *cancel)
			return 1;
		nanosleep(&ts, NULL);
	}
	return cancel && *cancel;
}

/*
 * After attempt n (1-based) of req: how long to wait before trying
 * again (ms), or -1 not to (struct kube_client "Retries").
 */
static long retry_wait(struct kube_client *kc, const struct http_req *req,
		       const struct http_resp *resp, int ret, int n)
{
	int post = req->method && !strcmp(req->method, "POST");
	long backoff = 500L << (n - 1 < 4 ? n - 1 : 4), wait;
	long st = resp->status;

	if (backoff > 5000)
		backoff = 5000;
	if (ret == HTTP_ABORTED || n >= 10)
		return -1;
	if (ret < 0) {
		if (!kc->retry_until_ms || req->on_data ||
		    (post && !resp->not_sent))
			return -1;
		wait = backoff;
	} else if (st == 429 || st == 500 || st == 502 || st == 503 ||
		   st == 504) {
		if (req->on_data ||
		    (post && st != 429 && resp->retry_after_s < 0))
			return -1;
		wait = resp->retry_after_s >= 0 ? resp->retry_after_s * 1000
						: backoff;
		if (wait > 30000)
			wait = 30000;
	} else {
		return -1;
	}
	if (kc->retry_until_ms &&
	    monotonic_ms() + (uint64_t)wait >= kc->retry_until_ms)
		return -1;
	return wait;
}

/*
 * The caller's on_data, run with the caller's error routine: what it
 * reports (a claim that failed) is not a transport failure to hide.
 */
struct loud_data {
	http_data_fn fn;
	void *arg;
	report_fn saved;
	void *saved_data;
};

static int loud_on_data(const char *buf, size_t len, void *data)
{
	struct loud_data *l = data;
	int r;

	set_error_routine(l->saved, l->saved_data);
	r = l->fn(buf, len, l->arg);
	set_error_routine(report_nothing, NULL);
	return r;
}

/*
 * The text of one Warning value as the API server sends it (KEP-1693:
 * `299 - "text"`, RFC 9111 5.5 warn-text, a quoted-string with \
 * escapes): its unquoted text, control bytes as '?' (a server's text
 * is not let near the terminal), into out. The whole value when it has
 * no quoted part.
 */
void kube_warning_text(const char *value, size_t len, struct strbuf *out)
{
	const char *p = memchr(value, '"', len), *end = value + len;

	if (!p) {
		p = value;
	} else {
		for (p++; p < end && *p != '"'; p++) {
			if (*p == '\\' && p + 1 < end)
				p++;
			strbuf_addch(out, (unsigned char)*p < 0x20 || *p == 0x7f
						  ? '?'
						  : *p);
		}
		return;
	}
	for (; p < end; p++)
		strbuf_addch(out,
			     (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p);
}

/*
 * Show the API server's warnings (deprecated versions, fields it
 * dropped) on stderr, each text once per process: a watch or a poll
 * must not repeat one every second. At most 64 are remembered; later
 * ones are shown unremembered, which only risks a repeat.
 */
static void show_warnings(const struct http_resp *resp)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct strvec seen = STRVEC_INIT;
	const char *p = resp->warnings.buf, *nl;

	for (; *p; p = nl + 1) {
		struct strbuf t = STRBUF_INIT;
		int known = 0;

		nl = strchrnul(p, '\n');
		kube_warning_text(p, nl - p, &t);
		pthread_mutex_lock(&lock);
		for (size_t i = 0; i < seen.nr && !known; i++)
			known = !strcmp(seen.v[i], t.buf);
		if (!known && seen.nr < 64)
			strvec_push(&seen, t.buf);
		pthread_mutex_unlock(&lock);
		if (!known && t.len)
			warning("kubernetes: %s", t.buf);
		strbuf_release(&t);
		if (!*nl)
			break;
	}
}

/* gosbx -v: "kube: GET /version: 200 (12 ms)" on stderr */
static void trace(const struct http_req *req, const struct http_resp *resp,
		  int ret, uint64_t start)
{
	unsigned long long ms = monotonic_ms() - start;
	const char *method = req->method ? req->method : "GET";
	const char *q = req->query && *req->query ? "?" : "";

	if (ret == HTTP_ABORTED) /* a watch or stream we ended */
		fprintf(stderr, "kube: %s %s%s%s: ended by gosbx (%llu ms)\n",
			method, req->path, q, q[0] ? req->query : "", ms);
	else if (ret)
		fprintf(stderr, "kube: %s %s%s%s: no answer (%llu ms)\n",
			method, req->path, q, q[0] ? req->query : "", ms);
	else
		fprintf(stderr, "kube: %s %s%s%s: %ld (%llu ms)\n", method,
			req->path, q, q[0] ? req->query : "", resp->status, ms);
}

/*
 * One request with credential refresh and retries: an exec credential
 * about to expire is fetched anew first; a 401 makes us forget the
 * credential and retry once; 429, 5xx and transport failures as
 * retry_wait() says. Returns http_request()'s result.
 */
int kube_request(struct kube_client *kc, struct http_req *req,
		 struct http_resp *resp)
{
	int ret, n, refreshed = 0, held = 0;
	report_fn saved;
	void *saved_data;
	long wait;

	get_error_routine(&saved, &saved_data);
	for (n = 1;; n++) {
		uint64_t start = monotonic_ms();

		held = 0;
		if (kc->cred_expiry && time(NULL) + 60 >= kc->cred_expiry &&
		    kube_connect(kc) < 0) {
			ret = -1;
			break;
		}
		/* a failure that is tried again is not reported */
		if (kc->retry_until_ms || req->on_data)
			set_error_routine(report_nothing, NULL);
		if (req->on_data) {
			struct loud_data l = { req->on_data, req->on_data_arg,
					       saved, saved_data };

			req->on_data = loud_on_data;
			req->on_data_arg = &l;
			ret = http_request(kc->http, req, resp);
			req->on_data = l.fn;
			req->on_data_arg = l.arg;
		} else {
			ret = http_request(kc->http, req, resp);
		}
		set_error_routine(saved, saved_data);
		if (kc->verbose)
			trace(req, resp, ret, start);
		if (resp->warnings.len)
			show_warnings(resp);
		/* a stream's caller reports its failure (it may retry) */
		held = ret == -1 && kc->retry_until_ms && !req->on_data;
		if (!ret && resp->date)
			kc->clock_skew_s = (long)(resp->date - time(NULL));
		if (!ret && resp->status == 401 && kc->has_exec && !refreshed) {
			refreshed = 1;
			kube_config_forget_credential(kc->cfg);
			if (kube_connect(kc) < 0) {
				ret = -1;
				break;
			}
			continue;
		}
		wait = retry_wait(kc, req, resp, ret, n);
		if (wait < 0)
			break;
		if (nap_ms(wait, req->cancel)) {
			ret = HTTP_ABORTED;
			break;
		}
	}
	/* on -1, the error naming the server (printed now if held) */
	if (held)
		error("%s", http_client_last_error(kc->http));
	return ret;
}

void kube_unreachable_fix(const struct kube_client *kc, struct strbuf *fix)
{
	strbuf_addf(fix,
		    "check that the cluster runs and that its server address "
		    "%s is right and reachable from here (VPN, proxy, "
		    "firewall)",
		    kc->server);
}

int kube_reach(struct kube_client *kc, volatile sig_atomic_t *cancel)
{
	static const char *const hdrs[] = { "Accept: application/json", NULL };
	struct http_req req = { 0 };
	struct http_resp resp = HTTP_RESP_INIT;
	struct strbuf fix = STRBUF_INIT;
	uint64_t saved_until = kc->retry_until_ms;
	report_fn saved;
	void *saved_data;
	int ret;

	req.method = "GET";
	req.path = "/version";
	req.headers = hdrs;
	req.timeout_ms = KUBE_REACH_TIMEOUT_MS;
	req.cancel = cancel;
	kc->retry_until_ms = 0;
	get_error_routine(&saved, &saved_data);
	set_error_routine(report_nothing, NULL);
	ret = kube_request(kc, &req, &resp);
	set_error_routine(saved, saved_data);
	kc->retry_until_ms = saved_until;
	if (ret == -1) {
		kube_unreachable_fix(kc, &fix);
		error("%s; %s", http_client_last_error(kc->http), fix.buf);
	}
	http_resp_release(&resp);
	strbuf_release(&fix);
	return ret;
}

/*
 * A JSON request: body (may be NULL) sent as ctype (NULL:
 * application/json). Returns the HTTP status (>0) and *out (if not
 * NULL) the parsed answer (NULL if none), or -1 with error() on a
 * transport failure. what: for messages ("cannot create claim").
 */
static long kube_json(struct kube_client *kc, const char *method,
		      const char *path, const char *query, json_t *body,
		      const char *ctype, json_t **out)
{
	struct http_req req = { 0 };
	struct http_resp resp = HTTP_RESP_INIT;
	struct strbuf b = STRBUF_INIT;
	static const char *const hdrs[] = { "Accept: application/json", NULL };
	long status;

	if (out)
		*out = NULL;
	req.method = method;
	req.path = path;
	req.query = query && *query ? query : NULL;
	req.headers = hdrs;
	req.timeout_ms = 60000;
	if (body) {
		json_dump_into(&b, body);
		req.body = b.buf;
		req.body_len = b.len;
		req.content_type = ctype ? ctype : "application/json";
	}
	if (kube_request(kc, &req, &resp) < 0) {
		strbuf_release(&b);
		http_resp_release(&resp);
		return -1;
	}
	status = resp.status;
	if (out && resp.body.len)
		*out = json_loadb(resp.body.buf, resp.body.len, 0, NULL);
	strbuf_release(&b);
	http_resp_release(&resp);
	return status;
}

/* error() for a failed answer: "<what>: <Status message>". */
static int kube_status_error(const char *what, long status, json_t *ans)
{
	const char *msg = ans ? json_object_str(ans, "message") : NULL;

	if (msg && *msg)
		return error("%s: %s", what, msg);
	return error("%s: HTTP %ld", what, status);
}

static const char *ns_or(const struct kube_client *kc, const char *ns)
{
	return ns ? ns : kc->namespace;
}

void kube_claim_group_path(struct strbuf *p, const struct kube_client *kc,
			   const char *ns, const char *plural, const char *name)
{
	strbuf_addf(p, "/apis/%s/%s", KUBE_CLAIM_GROUP, kc->claim_version);
	if (!ns || strcmp(ns, "*")) {
		strbuf_addstr(p, "/namespaces/");
		http_pct_encode_path(p, ns_or(kc, ns));
	}
	strbuf_addf(p, "/%s", plural);
	if (name) {
		strbuf_addch(p, '/');
		http_pct_encode_path(p, name);
	}
}

static void claims_path(struct strbuf *p, struct kube_client *kc,
			const char *ns, const char *name)
{
	kube_claim_group_path(p, kc, ns, "sandboxclaims", name);
}

/* Does the discovery document d serve version v? */
static int serves(json_t *d, const char *v)
{
	json_t *vs = json_object_get(d, "versions"), *it;
	size_t i;

	json_array_foreach (vs, i, it) {
		const char *s = json_object_str(it, "version");
		if (s && !strcmp(s, v))
			return 1;
	}
	return 0;
}

static int discover_group(struct kube_client *kc, const char *group,
			  const char *force, char *dst, size_t dstlen)
{
	struct strbuf p = STRBUF_INIT;
	json_t *d = NULL;
	long st;
	int ret = -1;

	strbuf_addf(&p, "/apis/%s", group);
	st = kube_json(kc, "GET", p.buf, NULL, NULL, NULL, &d);
	if (st < 0)
		goto out;
	if (st == 404) {
		ret = error("agent-sandbox is not installed: the API group %s "
			    "is not served; install it (see gosbx doctor)",
			    group);
		goto out;
	}
	if (st / 100 != 2) {
		ret = kube_status_error("API discovery failed", st, d);
		goto out;
	}
	if (force) {
		if (!serves(d, force)) {
			ret = error("the API group %s does not serve version "
				    "%s",
				    group, force);
			goto out;
		}
		snprintf(dst, dstlen, "%s", force);
	} else if (serves(d, "v1beta1")) {
		snprintf(dst, dstlen, "v1beta1");
	} else if (serves(d, "v1alpha1")) {
		snprintf(dst, dstlen, "v1alpha1");
	} else {
		ret = error("the API group %s serves no version this client "
			    "supports (v1beta1, v1alpha1)",
			    group);
		goto out;
	}
	ret = 0;
out:
	json_decref(d);
	strbuf_release(&p);
	return ret;
}

int kube_discover(struct kube_client *kc, const char *force)
{
	if (force && strcmp(force, "v1alpha1") && strcmp(force, "v1beta1"))
		return error("unsupported agent-sandbox API version '%s' "
			     "(v1alpha1 or v1beta1)",
			     force);
	if (discover_group(kc, KUBE_CLAIM_GROUP, force, kc->claim_version,
			   sizeof(kc->claim_version)) < 0)
		return -1;
	return discover_group(kc, KUBE_SANDBOX_GROUP, force,
			      kc->sandbox_version, sizeof(kc->sandbox_version));
}

void kube_format_time(struct strbuf *out, time_t t, long nsec)
{
	struct tm tm;
	char buf[64];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	strbuf_addstr(out, buf);
	if (nsec >= 0)
		strbuf_addf(out, ".%09ld", nsec);
	strbuf_addch(out, 'Z');
}

json_t *kube_claim_body(const struct kube_client *kc,
			const struct kube_claim_spec *spec)
{
	struct strbuf now = STRBUF_INIT, shut = STRBUF_INIT;
	struct timespec ts;
	json_t *labels, *body, *sp;
	int beta = !strcmp(kc->claim_version, "v1beta1");

	clock_gettime(CLOCK_REALTIME, &ts);
	kube_format_time(&now, ts.tv_sec, ts.tv_nsec);
	/* on the API server's clock, which the controller compares with */
	kube_format_time(&shut, ts.tv_sec + kc->clock_skew_s + spec->ttl_s, -1);
	labels = json_pack("{s:s, s:s}", KUBE_LABEL_CREATED_BY, "gosbx",
			   KUBE_LABEL_PERSISTENT,
			   spec->persistent ? "true" : "false");
	if (spec->session)
		json_object_set_new(labels, KUBE_LABEL_SESSION,
				    json_string(spec->session));
	if (beta)
		sp = json_pack("{s:{s:s}}", "warmPoolRef", "name",
			       spec->warm_pool ? spec->warm_pool : "");
	else
		sp = json_pack("{s:{s:s}}", "sandboxTemplateRef", "name",
			       spec->template_name ? spec->template_name : "");
	json_object_set_new(sp, "lifecycle",
			    json_pack("{s:s, s:s}", "shutdownTime", shut.buf,
				      "shutdownPolicy", "Delete"));
	body = json_pack("{s:s+, s:s, s:{s:s, s:s, s:o, s:{s:s}}, s:o}",
			 "apiVersion", KUBE_CLAIM_GROUP "/", kc->claim_version,
			 "kind", "SandboxClaim", "metadata", "generateName",
			 "sandbox-claim-", "namespace",
			 spec->namespace ? spec->namespace : kc->namespace,
			 "labels", labels, "annotations",
			 "agents.x-k8s.io/client-first-requested-at", now.buf,
			 "spec", sp);
	strbuf_release(&now);
	strbuf_release(&shut);
	return body;
}

void kube_claim_init(struct kube_claim *c)
{
	strbuf_init(&c->name, 0);
	strbuf_init(&c->namespace, 0);
	strbuf_init(&c->resource_version, 0);
	strbuf_init(&c->sandbox, 0);
	strbuf_init(&c->reason, 0);
	strbuf_init(&c->message, 0);
	strbuf_init(&c->shutdown_time, 0);
	c->ready = 0;
	c->obj = NULL;
}

void kube_claim_release(struct kube_claim *c)
{
	strbuf_release(&c->name);
	strbuf_release(&c->namespace);
	strbuf_release(&c->resource_version);
	strbuf_release(&c->sandbox);
	strbuf_release(&c->reason);
	strbuf_release(&c->message);
	strbuf_release(&c->shutdown_time);
	json_decref(c->obj);
	c->obj = NULL;
}

static void set_str(struct strbuf *sb, const char *s)
{
	strbuf_reset(sb);
	if (s)
		strbuf_addstr(sb, s);
}

/* Fill c from a SandboxClaim object (takes a new reference). */
static void claim_from(struct kube_claim *c, json_t *o)
{
	json_t *md = json_object_get(o, "metadata");
	json_t *st = json_object_get(o, "status");
	json_t *conds = json_object_get(st, "conditions"), *it;
	size_t i;

	json_incref(o);
	json_decref(c->obj);
	c->obj = o;
	set_str(&c->name, json_object_str(md, "name"));
	set_str(&c->namespace, json_object_str(md, "namespace"));
	set_str(&c->resource_version, json_object_str(md, "resourceVersion"));
	/*
	 * status.sandbox.name; controllers before agent-sandbox v0.4
	 * (GKE's bundled one may be older) wrote the Go field name "Name"
	 */
	set_str(&c->sandbox,
		json_object_str(json_object_get(st, "sandbox"), "name"));
	if (!c->sandbox.len)
		set_str(&c->sandbox,
			json_object_str(json_object_get(st, "sandbox"),
					"Name"));
	set_str(&c->shutdown_time,
		json_object_str(json_object_get(json_object_get(o, "spec"),
						"lifecycle"),
				"shutdownTime"));
	c->ready = 0;
	strbuf_reset(&c->reason);
	strbuf_reset(&c->message);
	json_array_foreach (conds, i, it) {
		const char *t = json_object_str(it, "type");
		const char *s = json_object_str(it, "status");
		if (!t || strcmp(t, "Ready"))
			continue;
		c->ready = s && !strcmp(s, "True");
		set_str(&c->reason, json_object_str(it, "reason"));
		set_str(&c->message, json_object_str(it, "message"));
	}
}

int kube_claim_create(struct kube_client *kc,
		      const struct kube_claim_spec *spec,
		      struct kube_claim *out)
{
	struct strbuf p = STRBUF_INIT;
	json_t *body, *ans = NULL;
	long st;
	int ret = -1;

	if (!strcmp(kc->claim_version, "v1beta1") ? !spec->warm_pool
						  : !spec->template_name)
		return error("cannot create claim: a %s claim names a %s",
			     kc->claim_version,
			     !strcmp(kc->claim_version, "v1beta1")
				     ? "warm pool"
				     : "template");
	body = kube_claim_body(kc, spec);
	claims_path(&p, kc, spec->namespace, NULL);
	/*
	 * Strict: a field the server's CRD does not know is an error, not
	 * dropped with a warning (the API server's default, Warn): a claim
	 * must never run without a field gosbx asked for, such as
	 * shutdownTime (KEP-2885; older servers ignore the parameter)
	 */
	st = kube_json(kc, "POST", p.buf, "fieldValidation=Strict", body, NULL,
		       &ans);
	if (st < 0)
		goto out;
	if (st / 100 != 2 || !json_is_object(ans)) {
		ret = kube_status_error("cannot create claim", st, ans);
		goto out;
	}
	claim_from(out, ans);
	ret = 0;
out:
	json_decref(body);
	json_decref(ans);
	strbuf_release(&p);
	return ret;
}

int kube_claim_get(struct kube_client *kc, const char *ns, const char *name,
		   struct kube_claim *out)
{
	struct strbuf p = STRBUF_INIT, what = STRBUF_INIT;
	json_t *ans = NULL;
	long st;
	int ret = -1;

	claims_path(&p, kc, ns, name);
	st = kube_json(kc, "GET", p.buf, NULL, NULL, NULL, &ans);
	if (st == 404) {
		ret = 1;
	} else if (st >= 0 && (st / 100 != 2 || !json_is_object(ans))) {
		strbuf_addf(&what, "cannot get claim %s", name);
		ret = kube_status_error(what.buf, st, ans);
	} else if (st >= 0) {
		claim_from(out, ans);
		ret = 0;
	}
	json_decref(ans);
	strbuf_release(&p);
	strbuf_release(&what);
	return ret;
}

int kube_claim_delete(struct kube_client *kc, const char *ns, const char *name)
{
	struct strbuf p = STRBUF_INIT, what = STRBUF_INIT;
	json_t *ans = NULL;
	long st;
	int ret = 0;

	claims_path(&p, kc, ns, name);
	st = kube_json(kc, "DELETE", p.buf, NULL, NULL, NULL, &ans);
	if (st < 0) {
		ret = -1;
	} else if (st != 404 && st / 100 != 2) {
		strbuf_addf(&what, "cannot delete claim %s", name);
		ret = kube_status_error(what.buf, st, ans);
	}
	json_decref(ans);
	strbuf_release(&p);
	strbuf_release(&what);
	return ret;
}

/* GET a list at path?query; *items a new array, rv its resourceVersion. */
static long ms_now(void);
static void pause_ms(long ms, long deadline,
		     const volatile sig_atomic_t *cancel);

/*
 * GET a list into *items (and its resourceVersion into rv). With a
 * deadline (ms_now() clock; 0: none), a 403 is tried again with back-off
 * (0.5, 1, 2, 4, 8 s..., at most 10 times, not past the deadline): for a
 * list of what the caller was allowed a moment ago, a restarted API
 * server that answers before its RBAC informers have synced says 403
 * ("clusterrole ... not found") for a few seconds (seen on a real
 * kube-apiserver v1.37, t6690).
 */
static int kube_list_until(struct kube_client *kc, const char *path,
			   const char *query, const char *what, json_t **items,
			   struct strbuf *rv, long deadline,
			   const volatile sig_atomic_t *cancel)
{
	json_t *ans = NULL, *it;
	long st;
	int tries = 0;

	*items = NULL;
	for (;;) {
		st = kube_json(kc, "GET", path, query, NULL, NULL, &ans);
		if (st != 403 || !deadline || tries >= 10 ||
		    ms_now() >= deadline || (cancel && *cancel))
			break;
		json_decref(ans);
		ans = NULL;
		pause_ms(500L << (tries < 4 ? tries : 4), deadline, cancel);
		tries++;
	}
	if (st < 0)
		return -1;
	if (st / 100 != 2 || !json_is_object(ans)) {
		kube_status_error(what, st, ans);
		json_decref(ans);
		return -1;
	}
	it = json_object_get(ans, "items");
	*items = json_is_array(it) ? json_incref(it) : json_array();
	if (rv)
		set_str(rv, json_object_str(json_object_get(ans, "metadata"),
					    "resourceVersion"));
	json_decref(ans);
	return 0;
}

static int kube_list(struct kube_client *kc, const char *path,
		     const char *query, const char *what, json_t **items,
		     struct strbuf *rv)
{
	return kube_list_until(kc, path, query, what, items, rv, 0, NULL);
}

int kube_claim_list(struct kube_client *kc, const char *ns,
		    const char *selector, json_t **out, struct strbuf *rv)
{
	struct strbuf p = STRBUF_INIT, q = STRBUF_INIT;
	int ret;

	claims_path(&p, kc, ns, NULL);
	if (selector)
		http_query_add(&q, "labelSelector", selector);
	ret = kube_list(kc, p.buf, q.buf, "cannot list claims", out, rv);
	strbuf_release(&p);
	strbuf_release(&q);
	return ret;
}

int kube_claim_renew(struct kube_client *kc, const char *ns, const char *name,
		     time_t shutdown)
{
	struct strbuf p = STRBUF_INIT, t = STRBUF_INIT, what = STRBUF_INIT;
	json_t *body, *ans = NULL;
	long st;
	int ret = 0;

	claims_path(&p, kc, ns, name);
	kube_format_time(&t, shutdown, -1);
	body = json_pack("{s:{s:{s:s}}}", "spec", "lifecycle", "shutdownTime",
			 t.buf);
	st = kube_json(kc, "PATCH", p.buf, NULL, body,
		       "application/merge-patch+json", &ans);
	if (st < 0) {
		ret = -1;
	} else if (st / 100 != 2) {
		strbuf_addf(&what, "cannot renew claim %s", name);
		ret = kube_status_error(what.buf, st, ans);
	}
	json_decref(body);
	json_decref(ans);
	strbuf_release(&p);
	strbuf_release(&t);
	strbuf_release(&what);
	return ret;
}

void kube_sandbox_init(struct kube_sandbox *s)
{
	strbuf_init(&s->name, 0);
	strbuf_init(&s->pod_name, 0);
	strvec_init(&s->pod_ips);
	strbuf_init(&s->mode, 0);
	strbuf_init(&s->reason, 0);
	s->suspended = s->ready = 0;
}

void kube_sandbox_release(struct kube_sandbox *s)
{
	strbuf_release(&s->name);
	strbuf_release(&s->pod_name);
	strvec_clear(&s->pod_ips);
	strbuf_release(&s->mode);
	strbuf_release(&s->reason);
}

/* the Suspended and Ready conditions of a Sandbox's status st */
static void sandbox_conditions(struct kube_sandbox *out, json_t *st)
{
	json_t *cond;
	size_t i;

	out->suspended = out->ready = 0;
	strbuf_reset(&out->reason);
	json_array_foreach (json_object_get(st, "conditions"), i, cond) {
		const char *type = json_object_str(cond, "type");
		const char *status = json_object_str(cond, "status");
		const char *reason = json_object_str(cond, "reason");
		const char *msg = json_object_str(cond, "message");
		int is_true = status && !strcmp(status, "True");

		if (!type)
			continue;
		if (!strcmp(type, "Suspended"))
			out->suspended = is_true;
		else if (!strcmp(type, "Ready"))
			out->ready = is_true;
		else
			continue;
		if (is_true || !reason)
			continue;
		/* the one that says what is missing: Suspended wins */
		if (out->reason.len && strcmp(type, "Suspended"))
			continue;
		strbuf_reset(&out->reason);
		strbuf_addf(&out->reason, "%s %s: %s", type, reason,
			    msg ? msg : "");
	}
}

/* Push the strings of a podIPs array (strings or {"ip":...}). */
static void push_ips(struct strvec *sv, json_t *arr)
{
	json_t *it;
	size_t i;

	json_array_foreach (arr, i, it) {
		const char *s = json_is_string(it) ? json_string_value(it)
						   : json_object_str(it, "ip");
		if (s)
			strvec_push(sv, s);
	}
}

int kube_sandbox_get(struct kube_client *kc, const char *ns, const char *name,
		     struct kube_sandbox *out)
{
	struct strbuf p = STRBUF_INIT, what = STRBUF_INIT;
	json_t *ans = NULL, *md;
	const char *pod;
	long st;
	int ret = -1;

	strbuf_addf(&p, "/apis/%s/%s/namespaces/", KUBE_SANDBOX_GROUP,
		    kc->sandbox_version);
	http_pct_encode_path(&p, ns_or(kc, ns));
	strbuf_addstr(&p, "/sandboxes/");
	http_pct_encode_path(&p, name);
	st = kube_json(kc, "GET", p.buf, NULL, NULL, NULL, &ans);
	if (st == 404) {
		ret = 1;
	} else if (st >= 0 && (st / 100 != 2 || !json_is_object(ans))) {
		strbuf_addf(&what, "cannot get sandbox %s", name);
		ret = kube_status_error(what.buf, st, ans);
	} else if (st >= 0) {
		md = json_object_get(ans, "metadata");
		set_str(&out->name, json_object_str(md, "name"));
		if (!out->name.len)
			strbuf_addstr(&out->name, name);
		pod = json_object_str(json_object_get(md, "annotations"),
				      KUBE_ANNOTATION_POD_NAME);
		set_str(&out->pod_name, pod && *pod ? pod : out->name.buf);
		strvec_clear(&out->pod_ips);
		push_ips(&out->pod_ips,
			 json_object_get(json_object_get(ans, "status"),
					 "podIPs"));
		set_str(&out->mode,
			json_object_str(json_object_get(ans, "spec"),
					"operatingMode"));
		sandbox_conditions(out, json_object_get(ans, "status"));
		ret = 0;
	}
	json_decref(ans);
	strbuf_release(&p);
	strbuf_release(&what);
	return ret;
}

int kube_sandbox_list(struct kube_client *kc, const char *ns, json_t **out)
{
	struct strbuf p = STRBUF_INIT;
	int ret;

	strbuf_addf(&p, "/apis/%s/%s/", KUBE_SANDBOX_GROUP,
		    kc->sandbox_version);
	if (!ns || strcmp(ns, "*")) {
		strbuf_addstr(&p, "namespaces/");
		http_pct_encode_path(&p, ns_or(kc, ns));
		strbuf_addch(&p, '/');
	}
	strbuf_addstr(&p, "sandboxes");
	ret = kube_list(kc, p.buf, "", "cannot list sandboxes", out, NULL);
	strbuf_release(&p);
	return ret;
}

int kube_sandbox_set_mode(struct kube_client *kc, const char *ns,
			  const char *name, const char *mode)
{
	struct strbuf p = STRBUF_INIT, what = STRBUF_INIT;
	json_t *body, *ans = NULL;
	long st;
	int ret = 0;

	strbuf_addf(&p, "/apis/%s/%s/namespaces/", KUBE_SANDBOX_GROUP,
		    kc->sandbox_version);
	http_pct_encode_path(&p, ns_or(kc, ns));
	strbuf_addstr(&p, "/sandboxes/");
	http_pct_encode_path(&p, name);
	body = json_pack("{s:{s:s}}", "spec", "operatingMode", mode);
	st = kube_json(kc, "PATCH", p.buf, "fieldValidation=Strict", body,
		       "application/merge-patch+json", &ans);
	if (st < 0) {
		ret = -1;
	} else if (st / 100 != 2) {
		strbuf_addf(&what, "cannot %s sandbox %s",
			    strcmp(mode, "Suspended") ? "resume" : "suspend",
			    name);
		ret = kube_status_error(what.buf, st, ans);
	}
	json_decref(body);
	json_decref(ans);
	strbuf_release(&p);
	strbuf_release(&what);
	return ret;
}

void kube_ready_init(struct kube_ready *r)
{
	strbuf_init(&r->sandbox, 0);
	strvec_init(&r->pod_ips);
}

void kube_ready_release(struct kube_ready *r)
{
	strbuf_release(&r->sandbox);
	strvec_clear(&r->pod_ips);
}

static const char *const terminal_reasons[] = {
	"TemplateNotFound",
	"WarmPoolNotFound",
	"InvalidMetadata",
	"EnvVarsInjectionRejected",
	"VolumeClaimTemplatesError",
	"ClaimExpired",
	"SandboxExpired",
	NULL,
};

int kube_terminal_reason(const char *reason)
{
	for (size_t i = 0; reason && terminal_reasons[i]; i++)
		if (!strcmp(reason, terminal_reasons[i]))
			return 1;
	return 0;
}

enum watch_state {
	W_RUNNING = 0,
	W_READY,
	W_FAILED, /* error() printed */
	W_GONE,	  /* 410: list and watch again */
};

struct watch {
	struct kube_client *kc;
	const char *name;
	struct strbuf line;
	struct strbuf rv;
	struct kube_claim claim; /* last state seen */
	int seen;		 /* claim seen at least once */
	int events;		 /* events in the current stream */
	enum watch_state state;
	struct kube_ready *out;
	long err_code; /* an ERROR event's 429/5xx code in this stream */
	char err_msg[256];
};

/* Look at a claim state; sets w->state. */
static void watch_check(struct watch *w, json_t *obj)
{
	struct kube_claim *c = &w->claim;

	claim_from(c, obj);
	w->seen = 1;
	if (w->kc->claim_seen)
		w->kc->claim_seen(c, w->kc->claim_seen_data);
	if (c->resource_version.len)
		set_str(&w->rv, c->resource_version.buf);
	if (c->ready && c->sandbox.len) {
		json_t *sb = json_object_get(json_object_get(obj, "status"),
					     "sandbox");
		set_str(&w->out->sandbox, c->sandbox.buf);
		strvec_clear(&w->out->pod_ips);
		push_ips(&w->out->pod_ips, json_object_get(sb, "podIPs"));
		w->state = W_READY;
		return;
	}
	if (c->ready || !c->reason.len)
		return;
	if (kube_terminal_reason(c->reason.buf)) {
		/*
		 * agent-sandbox v0.5 binds every claim through a
		 * SandboxWarmPool that must exist (a v1alpha1 claim's is
		 * shadow-pool-<template>)
		 */
		error("claim %s failed: %s: %s%s", w->name, c->reason.buf,
		      c->message.buf,
		      strcmp(c->reason.buf, "WarmPoolNotFound")
			      ? ""
			      : "; agent-sandbox v0.5 claims need an existing "
				"SandboxWarmPool: create it "
				"(manifests/warmpool, or manifests/cold-start "
				"for a pool of 0 replicas)");
		w->state = W_FAILED;
	}
}

static void watch_event(struct watch *w, const char *buf, size_t len)
{
	json_t *ev = json_loadb(buf, len, 0, NULL);
	json_t *obj = json_object_get(ev, "object");
	const char *type = json_object_str(ev, "type");
	const char *rv;

	if (!type)
		goto out;
	w->events++;
	if (!strcmp(type, "BOOKMARK")) {
		rv = json_object_str(json_object_get(obj, "metadata"),
				     "resourceVersion");
		if (rv && *rv)
			set_str(&w->rv, rv);
	} else if (!strcmp(type, "ERROR")) {
		json_int_t code =
			json_integer_value(json_object_get(obj, "code"));
		if (code == 410 || code == 429 || code >= 500) {
			/* 504: too large resource version; relist */
			w->state = W_GONE;
			if (w->kc->verbose) {
				const char *m = json_object_str(obj, "message");

				fprintf(stderr,
					"kube: watch of claim %s: ERROR event "
					"%ld: %s: listing again\n",
					w->name, (long)code, m ? m : "");
			}
			if (code != 410) {
				const char *m = json_object_str(obj, "message");
				/* overloaded: the loop backs off first */
				w->err_code = (long)code;
				snprintf(w->err_msg, sizeof(w->err_msg), "%s",
					 m ? m : "error event");
			}
		} else {
			const char *m = json_object_str(obj, "message");
			error("watching claim %s failed: %s", w->name,
			      m ? m : "error event");
			w->state = W_FAILED;
		}
	} else if (!strcmp(type, "DELETED")) {
		error("claim %s was deleted while waiting for it to be Ready",
		      w->name);
		w->state = W_FAILED;
	} else if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED")) {
		if (json_is_object(obj))
			watch_check(w, obj);
	}
out:
	json_decref(ev);
}

static int watch_data(const char *buf, size_t len, void *data)
{
	struct watch *w = data;
	char *nl;

	strbuf_add(&w->line, buf, len);
	while (w->state == W_RUNNING &&
	       (nl = memchr(w->line.buf, '\n', w->line.len))) {
		size_t n = nl - w->line.buf;
		if (n)
			watch_event(w, w->line.buf, n);
		strbuf_remove(&w->line, 0, n + 1);
	}
	return w->state == W_RUNNING ? 0 : -1;
}

static long ms_now(void)
{
	return (long)monotonic_ms();
}

/* Sleep ms, in slices, stopping at the deadline or on *cancel. */
static void pause_ms(long ms, long deadline,
		     const volatile sig_atomic_t *cancel)
{
	long end = ms_now() + ms;

	if (end > deadline)
		end = deadline;
	while (ms_now() < end && !(cancel && *cancel)) {
		struct timespec ts = { 0, 50 * 1000000L };
		nanosleep(&ts, NULL);
	}
}

/* LIST the claim by name: state and a fresh rv (403s retried until
 * deadline: we just made the claim, see kube_list_until()). */
static int watch_list(struct kube_client *kc, const char *ns, struct watch *w,
		      long deadline, const volatile sig_atomic_t *cancel)
{
	struct strbuf p = STRBUF_INIT, q = STRBUF_INIT, f = STRBUF_INIT;
	struct strbuf rv = STRBUF_INIT;
	json_t *items = NULL;
	int ret;

	claims_path(&p, kc, ns, NULL);
	strbuf_addf(&f, "metadata.name=%s", w->name);
	http_query_add(&q, "fieldSelector", f.buf);
	ret = kube_list_until(kc, p.buf, q.buf, "cannot list claims", &items,
			      &rv, deadline, cancel);
	if (!ret && !json_array_size(items)) {
		if (w->seen)
			ret = error("claim %s was deleted while waiting for "
				    "it to be Ready",
				    w->name);
		else
			ret = error("claim %s not found", w->name);
	} else if (!ret) {
		watch_check(w, json_array_get(items, 0));
		/* watch from the list's version, not the item's */
		if (rv.len)
			set_str(&w->rv, rv.buf);
	}
	json_decref(items);
	strbuf_release(&p);
	strbuf_release(&q);
	strbuf_release(&f);
	strbuf_release(&rv);
	return ret;
}

int kube_claim_wait_ready(struct kube_client *kc, const char *ns,
			  const char *name, const char *rv, long timeout_ms,
			  volatile sig_atomic_t *cancel, struct kube_ready *out)
{
	struct watch w = { 0 };
	long deadline = ms_now() + timeout_ms;
	int ret = -1, need_list = !rv || !*rv, failures = 0;
	uint64_t saved_until = 0;

	/* ride out an unreachable API server while waiting */
	if (!kc->retry_until_ms)
		kc->retry_until_ms = (uint64_t)deadline;
	else
		saved_until = kc->retry_until_ms;
	w.kc = kc;
	w.name = name;
	w.out = out;
	strbuf_init(&w.line, 0);
	strbuf_init(&w.rv, 0);
	kube_claim_init(&w.claim);
	if (rv)
		strbuf_addstr(&w.rv, rv);
	for (;;) {
		struct strbuf p = STRBUF_INIT, q = STRBUF_INIT;
		struct strbuf f = STRBUF_INIT, ts = STRBUF_INIT;
		struct http_req req = { 0 };
		struct http_resp resp = HTTP_RESP_INIT;
		long left = deadline - ms_now();
		int r;

		if (cancel && *cancel) {
			error("interrupted while waiting for claim %s", name);
			break;
		}
		if (need_list) {
			if (watch_list(kc, ns, &w, deadline, cancel) < 0)
				break;
			need_list = 0;
			if (w.state == W_READY) {
				ret = 0;
				break;
			}
			if (w.state == W_FAILED)
				break;
		}
		if (left <= 0) {
			if (w.claim.reason.len)
				error("timed out after %ld ms waiting for "
				      "claim %s to be Ready; last condition: "
				      "Ready=%s %s: %s",
				      timeout_ms, name,
				      w.claim.ready ? "True" : "False",
				      w.claim.reason.buf, w.claim.message.buf);
			else
				error("timed out after %ld ms waiting for "
				      "claim %s to be Ready; no condition seen",
				      timeout_ms, name);
			break;
		}
		claims_path(&p, kc, ns, NULL);
		strbuf_addf(&f, "metadata.name=%s", name);
		strbuf_addf(&ts, "%ld", (left + 999) / 1000);
		http_query_add(&q, "watch", "1");
		http_query_add(&q, "fieldSelector", f.buf);
		http_query_add(&q, "resourceVersion", w.rv.buf);
		http_query_add(&q, "allowWatchBookmarks", "true");
		http_query_add(&q, "timeoutSeconds", ts.buf);
		req.path = p.buf;
		req.query = q.buf;
		/*
		 * The server ends the stream after timeoutSeconds; the
		 * grace only bounds a server that does not.
		 */
		req.timeout_ms = left + 10000;
		req.on_data = watch_data;
		req.on_data_arg = &w;
		req.cancel = cancel;
		strbuf_reset(&w.line);
		w.events = 0;
		w.err_code = 0;
		r = kube_request(kc, &req, &resp);
		if (!r && resp.status == 410) {
			w.state = W_GONE;
		} else if ((!r || r == HTTP_ABORTED) && w.state == W_GONE &&
			   w.err_code) {
			/*
			 * an ERROR event of 429 or 5xx inside the stream: the
			 * same back-off as for such an answer, never a tight
			 * loop of lists and watches
			 */
			if (++failures >= 10) {
				error("cannot watch claim %s: the API server "
				      "keeps answering %ld: %s",
				      name, w.err_code, w.err_msg);
				w.state = W_FAILED;
			} else {
				pause_ms(500L << (failures < 4 ? failures : 4),
					 deadline, cancel);
			}
		} else if (!r &&
			   (resp.status == 429 || resp.status >= 500 ||
			    resp.status == 403) &&
			   ++failures < 10) {
			/*
			 * overloaded, or 504 "Too large resource version"
			 * (a cache behind our rv), or 403 from a restarted
			 * server whose RBAC cache is not synced (we made
			 * the claim a moment ago): back off, then list and
			 * watch again (client-go's reflector)
			 */
			pause_ms(
				resp.retry_after_s >= 0
					? resp.retry_after_s * 1000
					: 500L << (failures < 4 ? failures : 4),
				deadline, cancel);
			w.state = W_GONE;
		} else if (!r && resp.status / 100 != 2) {
			struct strbuf e = STRBUF_INIT;
			http_error_text(&e, resp.status, &resp.body);
			error("cannot watch claim %s: %s", name, e.buf);
			strbuf_release(&e);
			w.state = W_FAILED;
		}
		strbuf_release(&p);
		strbuf_release(&q);
		strbuf_release(&f);
		strbuf_release(&ts);
		http_resp_release(&resp);
		if (w.state == W_READY) {
			ret = 0;
			break;
		}
		if (w.state == W_FAILED)
			break;
		if (w.state == W_GONE) {
			w.state = W_RUNNING;
			need_list = 1;
			continue;
		}
		if (r == HTTP_ABORTED)
			continue; /* cancel: reported at the loop top */
		if (r < 0) {
			/*
			 * transport failure: the API server may be gone for
			 * a while; watch again from the last rv until the
			 * deadline (client-go's reflector): a server that
			 * no longer has it says 410, and we list then
			 */
			if (++failures >= 60 || ms_now() >= deadline) {
				error("cannot watch claim %s: %s", name,
				      http_client_last_error(kc->http));
				break;
			}
			pause_ms(failures < 4 ? 500L << failures : 5000,
				 deadline, cancel);
			need_list = !w.rv.len;
			continue;
		}
		failures = 0;
		/*
		 * The stream ended: watch again from the last rv, after a
		 * pause when it brought nothing (a server that closes at
		 * once must not be hammered).
		 */
		if (!w.events)
			pause_ms(1000, deadline, cancel);
	}
	kc->retry_until_ms = saved_until;
	strbuf_release(&w.line);
	strbuf_release(&w.rv);
	kube_claim_release(&w.claim);
	return ret;
}

int kube_router_pods(struct kube_client *kc, const char *ns,
		     struct strvec *names, struct strvec *ips)
{
	struct strbuf p = STRBUF_INIT, q = STRBUF_INIT;
	json_t *items = NULL, *sl, *ep;
	size_t i, j;
	int ret;

	strbuf_addstr(&p, "/apis/discovery.k8s.io/v1/namespaces/");
	http_pct_encode_path(&p, ns_or(kc, ns));
	strbuf_addstr(&p, "/endpointslices");
	http_query_add(&q, "labelSelector",
		       "kubernetes.io/service-name=sandbox-router-svc");
	ret = kube_list(kc, p.buf, q.buf, "cannot list router endpoints",
			&items, NULL);
	json_array_foreach (items, i, sl) {
		json_array_foreach (json_object_get(sl, "endpoints"), j, ep) {
			json_t *cond = json_object_get(ep, "conditions");
			json_t *rdy = json_object_get(cond, "ready");
			json_t *addr = json_object_get(ep, "addresses");
			const char *pod = json_object_str(
				json_object_get(ep, "targetRef"), "name");
			/* ready unset counts as ready (EndpointSlice API) */
			if (json_is_false(rdy) || !pod ||
			    !json_array_size(addr))
				continue;
			strvec_push(names, pod);
			strvec_push(ips,
				    json_string_value(json_array_get(addr, 0))
					    ? json_string_value(
						      json_array_get(addr, 0))
					    : "");
		}
	}
	json_decref(items);
	strbuf_release(&p);
	strbuf_release(&q);
	return ret;
}

int kube_can_i(struct kube_client *kc, const char *verb, const char *group,
	       const char *resource, const char *ns, int *allowed)
{
	json_t *attrs, *body, *ans = NULL;
	struct strbuf res = STRBUF_INIT;
	const char *slash = strchr(resource, '/');
	long st;
	int ret = 0;

	strbuf_add(&res, resource,
		   slash ? (size_t)(slash - resource) : strlen(resource));
	attrs = json_pack("{s:s, s:s, s:s}", "verb", verb, "group",
			  group ? group : "", "resource", res.buf);
	if (slash)
		json_object_set_new(attrs, "subresource",
				    json_string(slash + 1));
	if (ns)
		json_object_set_new(attrs, "namespace", json_string(ns));
	body = json_pack("{s:s, s:s, s:{s:o}}", "apiVersion",
			 "authorization.k8s.io/v1", "kind",
			 "SelfSubjectAccessReview", "spec",
			 "resourceAttributes", attrs);
	*allowed = 0;
	st = kube_json(kc, "POST",
		       "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
		       NULL, body, NULL, &ans);
	if (st < 0)
		ret = -1;
	else if (st / 100 != 2)
		ret = kube_status_error("cannot check permissions", st, ans);
	else
		*allowed = json_is_true(json_object_get(
			json_object_get(ans, "status"), "allowed"));
	json_decref(body);
	json_decref(ans);
	strbuf_release(&res);
	return ret;
}

int kube_events_for(struct kube_client *kc, const char *ns, const char *kind,
		    const char *name, json_t **out)
{
	struct strbuf p = STRBUF_INIT, q = STRBUF_INIT, f = STRBUF_INIT;
	int ret;

	strbuf_addstr(&p, "/api/v1/namespaces/");
	http_pct_encode_path(&p, ns_or(kc, ns));
	strbuf_addstr(&p, "/events");
	strbuf_addf(&f, "involvedObject.name=%s", name);
	if (kind)
		strbuf_addf(&f, ",involvedObject.kind=%s", kind);
	http_query_add(&q, "fieldSelector", f.buf);
	ret = kube_list(kc, p.buf, q.buf, "cannot list events", out, NULL);
	strbuf_release(&p);
	strbuf_release(&q);
	strbuf_release(&f);
	return ret;
}

int kube_object_get(struct kube_client *kc, const char *group,
		    const char *version, const char *ns, const char *plural,
		    const char *name, json_t **out, struct strbuf *why)
{
	struct strbuf p = STRBUF_INIT, what = STRBUF_INIT;
	json_t *ans = NULL;
	long st;
	int ret = -1;

	*out = NULL;
	if (group && *group)
		strbuf_addf(&p, "/apis/%s/%s/namespaces/", group, version);
	else
		strbuf_addf(&p, "/api/%s/namespaces/", version);
	http_pct_encode_path(&p, ns_or(kc, ns));
	strbuf_addf(&p, "/%s/", plural);
	http_pct_encode_path(&p, name);
	st = kube_json(kc, "GET", p.buf, NULL, NULL, NULL, &ans);
	if (st == 404) {
		ret = 1;
	} else if (st == 403) {
		const char *msg = json_object_str(ans, "message");

		if (why)
			strbuf_addstr(why, msg && *msg ? msg : "HTTP 403");
		ret = 2;
	} else if (st >= 0 && (st / 100 != 2 || !json_is_object(ans))) {
		strbuf_addf(&what, "cannot get %s %s", plural, name);
		ret = kube_status_error(what.buf, st, ans);
	} else if (st >= 0) {
		*out = ans;
		ans = NULL;
		ret = 0;
	}
	json_decref(ans);
	strbuf_release(&p);
	strbuf_release(&what);
	return ret;
}

int kube_parse_quantity(const char *s, double *out)
{
	static const char digits[] = "0123456789";
	static const char binary[] = "KMGTPE";
	static const struct {
		char suffix;
		const char *exp;
	} decimal[] = {
		{ 'n', "-9" }, { 'u', "-6" }, { 'm', "-3" },
		{ 'k', "3" },  { 'M', "6" },  { 'G', "9" },
		{ 'T', "12" }, { 'P', "15" }, { 'E', "18" },
	};
	struct strbuf num = STRBUF_INIT;
	const char *p = s, *exp = NULL, *q;
	size_t int_len, frac_len = 0;
	int shift = 0, ret = -1;
	char *end;
	double v;

	if (!s)
		return -1;
	if (*p == '+' || *p == '-')
		p++;
	int_len = strspn(p, digits);
	p += int_len;
	if (*p == '.') {
		p++;
		frac_len = strspn(p, digits);
		p += frac_len;
	}
	if (!int_len && !frac_len)
		return -1;
	strbuf_add(&num, s, p - s);
	if (!*p) {
		/* no suffix */
	} else if (p[1] == 'i' && !p[2] && strchr(binary, *p)) {
		shift = 10 * (int)(strchr(binary, *p) - binary + 1);
	} else if (!p[1]) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(decimal); i++)
			if (*p == decimal[i].suffix)
				exp = decimal[i].exp;
		if (!exp)
			goto out;
	} else if (*p == 'e' || *p == 'E') {
		q = p + 1;
		if (*q == '+' || *q == '-')
			q++;
		if (!*q || q[strspn(q, digits)])
			goto out;
		exp = p + 1;
	} else {
		goto out;
	}
	if (exp)
		strbuf_addf(&num, "e%s", exp);
	errno = 0;
	v = strtod(num.buf, &end);
	/* ERANGE on underflow too: a tiny value is 0 then */
	if (*end || (errno == ERANGE && fabs(v) > 1) || !isfinite(v))
		goto out;
	v = ldexp(v, shift);
	if (!isfinite(v))
		goto out;
	*out = v;
	ret = 0;
out:
	strbuf_release(&num);
	return ret;
}

/* A limit of resources.limits: its text (appended) and value. 0 or -1. */
static int limit_value(json_t *v, struct strbuf *text, double *out)
{
	if (json_is_string(v)) {
		strbuf_addstr(text, json_string_value(v));
		return kube_parse_quantity(json_string_value(v), out);
	}
	if (json_is_integer(v)) {
		strbuf_addf(text, "%" PRIdMAX, (intmax_t)json_integer_value(v));
		*out = (double)json_integer_value(v);
		return 0;
	}
	if (json_is_real(v)) {
		strbuf_addf(text, "%g", json_real_value(v));
		*out = json_real_value(v);
		return 0;
	}
	strbuf_addstr(text, v ? "(not a quantity)" : "");
	return -1;
}

/* Bytes as a Kubernetes quantity: "512Mi", "2Gi", or plain bytes. */
static void format_bytes(struct strbuf *sb, int64_t b)
{
	static const char *const units[] = {
		"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(units); i++) {
		int64_t u = (int64_t)1 << (10 * (ARRAY_SIZE(units) - i));

		if (b >= u && b % u == 0) {
			strbuf_addf(sb, "%" PRId64 "%s", b / u, units[i]);
			return;
		}
	}
	strbuf_addf(sb, "%" PRId64, b);
}

/*
 * Is the limit value v within asked (memory in bytes, cpu in cores)?
 * Kubernetes rounds a memory limit up to whole bytes and a CPU limit
 * up to whole millicores (resource.Quantity Value() and MilliValue()).
 */
static int within(int is_cpu, double v, int64_t asked_bytes, double asked_cpus)
{
	if (is_cpu)
		return ceil(v * 1000 - 1e-6) <= floor(asked_cpus * 1000 + 1e-6);
	return ceil(v) <= (double)asked_bytes;
}

/* One resource ("memory" or "cpu") of kube_pod_spec_check_limits(). */
static int check_resource(json_t *spec, const char *res, int64_t asked_bytes,
			  double asked_cpus, struct strbuf *why,
			  struct strbuf *need)
{
	struct strbuf asked = STRBUF_INIT, text = STRBUF_INIT;
	int is_cpu = !strcmp(res, "cpu");
	json_t *containers, *c, *lim;
	double v;
	size_t i;
	int ret = 1;

	if (is_cpu)
		strbuf_addf(&asked, "%g", asked_cpus);
	else
		format_bytes(&asked, asked_bytes);

	/* a pod-level limit bounds all containers together */
	lim = json_object_get(
		json_object_get(json_object_get(spec, "resources"), "limits"),
		res);
	if (lim && !limit_value(lim, &text, &v) && v > 0 &&
	    within(is_cpu, v, asked_bytes, asked_cpus)) {
		ret = 0;
		goto out;
	}

	containers = json_object_get(spec, "containers");
	if (!json_array_size(containers)) {
		strbuf_addstr(why, "the pod template has no containers");
		goto done;
	}
	json_array_foreach (containers, i, c) {
		const char *name = json_object_str(c, "name");

		if (!name)
			name = "";
		strbuf_reset(&text);
		lim = json_object_get(
			json_object_get(json_object_get(c, "resources"),
					"limits"),
			res);
		if (!lim) {
			strbuf_addf(why,
				    "container '%s' has no %s limit (%s "
				    "asked)",
				    name, res, asked.buf);
			goto done;
		}
		if (limit_value(lim, &text, &v) < 0) {
			strbuf_addf(why,
				    "container '%s' has an unreadable %s "
				    "limit '%s'",
				    name, res, text.buf);
			goto done;
		}
		if (v <= 0) {
			strbuf_addf(why,
				    "container '%s' has %s limit %s, which "
				    "sets none (%s asked)",
				    name, res, text.buf, asked.buf);
			goto done;
		}
		if (!within(is_cpu, v, asked_bytes, asked_cpus)) {
			strbuf_addf(why,
				    "container '%s' has %s limit %s, above "
				    "the %s asked",
				    name, res, text.buf, asked.buf);
			goto done;
		}
	}
	ret = 0;
	goto out;
done:
	strbuf_addf(need, "resources.limits.%s at most %s in every container",
		    res, asked.buf);
out:
	strbuf_release(&asked);
	strbuf_release(&text);
	return ret;
}

int kube_pod_spec_check_limits(json_t *spec, int64_t memory_bytes, double cpus,
			       struct strbuf *why, struct strbuf *need)
{
	if (memory_bytes > 0 &&
	    check_resource(spec, "memory", memory_bytes, 0, why, need))
		return 1;
	if (cpus > 0 && check_resource(spec, "cpu", 0, cpus, why, need))
		return 1;
	return 0;
}
