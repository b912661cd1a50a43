/*
 * The kube backend (Documentation/protocol/kubernetes.md;
 * Documentation/technical/design.md "Backends"): a sandbox is a SandboxClaim of
 * agent-sandbox. Open creates the claim (or finds it), waits with one watch
 * until it is Ready, and reaches its runtime through the sandbox-router: over a
 * native port-forward to a ready router pod (lib/kube/portforward.h), a gateway
 * address or a direct URL. Every runtime request carries the router headers.
 *
 * The claim's spec.lifecycle.shutdownTime is now + TTL; touch() moves
 * it forward (at most every TTL/4), so a client that dies stops the
 * renewals and the controller deletes the claim at its shutdownTime.
 * The TTL is kept in the claim's annotation gosbx/ttl-seconds so that
 * a client reattaching by name renews it with the same TTL.
 */
#include "compat.h"
#include "session/claims.h"
#include "session/doctor.h"
#include "kube/backend-kube.h"
#include "http.h"
#include "json.h"
#include "kube/kube.h"
#include "kube/kube-credentials.h"
#include "kube/kubeconfig.h"
#include "kube/portforward.h"
#include "session/sandboxd.h"
#include "session/session.h"
#include "strvec.h"
#include "usage.h"

#include <ctype.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <time.h>

#define DEFAULT_TEMPLATE BACKEND_KUBE_TEMPLATE
#define DEFAULT_TTL_MS (60 * 60 * 1000)
#define DEFAULT_OPEN_TIMEOUT_MS (5 * 60 * 1000)
#define ROUTER_PORT 8080
#define RUNTIME_PORT "8888"
/* X-Sandbox-Timeout: the router's wait for the sandbox, seconds */
#define ROUTER_TIMEOUT_S 3600
/* a failed renewal is tried again after this long, ms */
#define RENEW_RETRY_MS 10000
#define TTL_ANNOTATION "gosbx/ttl-seconds"
/*
 * how long deleting a claim rides out an unreachable API server, ms:
 * a claim that cannot be deleted lives until its shutdownTime
 */
#define DELETE_RETRY_MS 15000

struct kube_backend {
	struct kube_config cfg;
	struct kube_client kc;
	int kc_ready;		     /* kc initialised */
	char *ns;		     /* namespace of the claim */
	const char *router_ns_opt;   /* --router-namespace, or NULL */
	char *router_ns;	     /* where the router was found */
	char *sandbox;		     /* bound Sandbox name */
	char *pod_ip;		     /* or NULL */
	char *shutdown_time;	     /* of a reattached claim, or NULL */
	struct http_client *fwd_api; /* API client of the forward */
	struct kube_forward *fwd;
	/* a sandboxd runtime: the forward to its gRPC port (fwd: REST) */
	struct http_client *grpc_fwd_api;
	struct kube_forward *grpc_fwd;
	struct strvec headers; /* router headers, NULL-terminated */
	char *router_token;

	pthread_mutex_t lock; /* touch() runs on the keepalive thread */
	long ttl_s;
	uint64_t renewed_ms; /* monotonic time of the last renewal */
	uint64_t tried_ms;   /* ... of the last attempt */

	/* the renewer thread: touches while this process holds the claim */
	struct session *s;
	pthread_t renewer;
	int renewer_running;
	int stop; /* under lock */
	pthread_cond_t cond;
};

static void renewer_stop(struct kube_backend *kb);
static const struct backend_ops backend_kube_sandboxd;

static void kb_free(struct kube_backend *kb)
{
	if (!kb)
		return;
	renewer_stop(kb);
	kube_forward_stop(kb->fwd);
	http_client_free(kb->fwd_api);
	kube_forward_stop(kb->grpc_fwd);
	http_client_free(kb->grpc_fwd_api);
	if (kb->kc_ready)
		kube_client_release(&kb->kc);
	kube_config_release(&kb->cfg);
	free(kb->ns);
	free(kb->router_ns);
	free(kb->sandbox);
	free(kb->pod_ip);
	free(kb->shutdown_time);
	strvec_clear(&kb->headers);
	free(kb->router_token);
	pthread_cond_destroy(&kb->cond);
	pthread_mutex_destroy(&kb->lock);
	free(kb);
}

/* an error() kept in data (a strbuf) instead of printed */
static void keep_report(const char *prefix, const char *msg, void *data)
{
	struct strbuf *sb = data;

	strbuf_reset(sb);
	strbuf_addstr(sb, msg);
}

static uint64_t now_ms(void)
{
	return monotonic_ms();
}

/* A label value made of [A-Za-z0-9._-], at most 63 bytes. */
static void label_value(struct strbuf *out, const char *s)
{
	for (; *s && out->len < 63; s++) {
		char c = *s;
		if (!isalnum((unsigned char)c) && c != '.' && c != '_' &&
		    c != '-')
			c = '-';
		strbuf_addch(out, c);
	}
	while (out->len && !isalnum((unsigned char)out->buf[out->len - 1]))
		strbuf_setlen(out, out->len - 1);
}

/*
 * v1beta1 claims name a warm pool: opts->warm_pool, else the first
 * pool (by name) in the namespace whose sandboxTemplateRef is the
 * template, else a pool named like the template (the controller then
 * answers WarmPoolNotFound, which names it). Appended to out.
 */
static void choose_warm_pool(struct kube_backend *kb, const char *template,
			     const struct session_opts *opts,
			     struct strbuf *out)
{
	static const char *const hdrs[] = { "Accept: application/json", NULL };
	struct strbuf p = STRBUF_INIT;
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	json_t *list = NULL, *it;
	const char *best = NULL;
	size_t i;

	if (opts->warm_pool && *opts->warm_pool) {
		strbuf_addstr(out, opts->warm_pool);
		return;
	}
	kube_claim_group_path(&p, &kb->kc, kb->ns, "sandboxwarmpools", NULL);
	req.path = p.buf;
	req.headers = hdrs;
	req.timeout_ms = 60000;
	/* no pool list (RBAC, an old server): fall back quietly */
	if (kube_request(&kb->kc, &req, &resp) == 0 && resp.status == 200 &&
	    (list = json_loadb(resp.body.buf, resp.body.len, 0, NULL))) {
		json_array_foreach (json_object_get(list, "items"), i, it) {
			const char *t = json_object_str(
				json_object_get(json_object_get(it, "spec"),
						"sandboxTemplateRef"),
				"name");
			const char *n = json_object_str(
				json_object_get(it, "metadata"), "name");
			if (t && n && !strcmp(t, template) &&
			    (!best || strcmp(n, best) < 0))
				best = n;
		}
	}
	strbuf_addstr(out, best ? best : template);
	json_decref(list);
	http_resp_release(&resp);
	strbuf_release(&p);
}

/*
 * POST the claim: kube_claim_body() plus the TTL annotation and, with
 * opts->name, a fixed name instead of generateName. name and rv get
 * what the server answered.
 */
static int create_claim(struct kube_backend *kb,
			const struct session_opts *opts, const char *pool,
			struct strbuf *name, struct strbuf *rv)
{
	struct kube_claim_spec spec = { 0 };
	struct strbuf session = STRBUF_INIT, p = STRBUF_INIT;
	struct strbuf ttl = STRBUF_INIT, msg = STRBUF_INIT;
	struct strbuf text = STRBUF_INIT;
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	static const char *const hdrs[] = { "Accept: application/json", NULL };
	json_t *body, *md, *ans = NULL;
	int beta = !strcmp(kb->kc.claim_version, "v1beta1");
	int ret = -1;

	spec.template_name = opts->template ? opts->template : DEFAULT_TEMPLATE;
	if (beta)
		spec.warm_pool = pool;
	spec.persistent = opts->keep;
	strbuf_addf(&session, "%s-%ld", opts->purpose ? opts->purpose : "gosbx",
		    (long)getpid());
	strbuf_reset(&msg);
	label_value(&msg, session.buf);
	spec.session = msg.buf;
	spec.ttl_s = kb->ttl_s;
	spec.namespace = kb->ns;

	body = kube_claim_body(&kb->kc, &spec);
	md = json_object_get(body, "metadata");
	strbuf_addf(&ttl, "%ld", kb->ttl_s);
	json_object_set_new(json_object_get(md, "annotations"), TTL_ANNOTATION,
			    json_string(ttl.buf));
	if (opts->name) {
		json_object_del(md, "generateName");
		json_object_set_new(md, "name", json_string(opts->name));
	}
	json_dump_into(&text, body);

	kube_claim_group_path(&p, &kb->kc, kb->ns, "sandboxclaims", NULL);
	req.method = "POST";
	req.path = p.buf;
	/* an unknown field is an error, never dropped (kube_claim_create) */
	req.query = "fieldValidation=Strict";
	req.body = text.buf;
	req.body_len = text.len;
	req.content_type = "application/json";
	req.headers = hdrs;
	req.timeout_ms = 60000;
	if (kube_request(&kb->kc, &req, &resp) < 0)
		goto out;
	ans = json_loadb(resp.body.buf, resp.body.len, 0, NULL);
	if (resp.status / 100 != 2 || !json_is_object(ans)) {
		strbuf_reset(&msg);
		http_error_text(&msg, resp.status, &resp.body);
		error("cannot create claim (%s %s in namespace '%s'): %s",
		      beta ? "warm pool" : "template",
		      beta ? spec.warm_pool : spec.template_name, kb->ns,
		      msg.buf);
		goto out;
	}
	md = json_object_get(ans, "metadata");
	if (!json_object_str(md, "name")) {
		error("cannot create claim: the answer has no name");
		goto out;
	}
	strbuf_addstr(name, json_object_str(md, "name"));
	if (json_object_str(md, "resourceVersion"))
		strbuf_addstr(rv, json_object_str(md, "resourceVersion"));
	ret = 0;
out:
	json_decref(body);
	json_decref(ans);
	http_resp_release(&resp);
	strbuf_release(&session);
	strbuf_release(&p);
	strbuf_release(&ttl);
	strbuf_release(&msg);
	strbuf_release(&text);
	return ret;
}

/* The TTL annotation of a claim object, seconds; 0 if absent. */
static long claim_ttl(json_t *obj)
{
	const char *v = json_object_str(
		json_object_get(json_object_get(obj, "metadata"),
				"annotations"),
		TTL_ANNOTATION);
	char *end;
	long n;

	if (!v)
		return 0;
	n = strtol(v, &end, 10);
	return *end || n <= 0 ? 0 : n;
}

/* First pod IP of a claim's status.sandbox.podIPs, or NULL. */
static const char *claim_pod_ip(json_t *obj)
{
	json_t *ips = json_object_get(
		json_object_get(json_object_get(obj, "status"), "sandbox"),
		"podIPs");
	json_t *it = json_array_get(ips, 0);

	return json_is_string(it) ? json_string_value(it)
				  : json_object_str(it, "ip");
}

/* Reattach: the claim must exist and be Ready. */
static int find_claim(struct kube_backend *kb, const char *name)
{
	struct kube_claim c;
	const char *ip;
	long ttl;
	int r, ret = -1;

	kube_claim_init(&c);
	r = kube_claim_get(&kb->kc, kb->ns, name, &c);
	if (r > 0) {
		error("no claim '%s' in namespace '%s'", name, kb->ns);
		goto out;
	}
	if (r < 0)
		goto out;
	if (!c.ready && !strcmp(c.reason.buf, KUBE_REASON_SUSPENDED)) {
		error("claim '%s' is suspended; resume it with 'gosbx resume "
		      "%s'",
		      name, name);
		goto out;
	}
	if (!c.ready || !c.sandbox.len) {
		if (c.reason.len)
			error("claim '%s' is not Ready: Ready=False %s: %s",
			      name, c.reason.buf, c.message.buf);
		else
			error("claim '%s' is not Ready yet (no Ready "
			      "condition%s)",
			      name, c.sandbox.len ? "" : ", no sandbox bound");
		goto out;
	}
	kb->sandbox = xstrdup(c.sandbox.buf);
	ip = claim_pod_ip(c.obj);
	if (ip && *ip)
		kb->pod_ip = xstrdup(ip);
	if (c.shutdown_time.len)
		kb->shutdown_time = xstrdup(c.shutdown_time.buf);
	ttl = claim_ttl(c.obj);
	if (ttl > 0 && !kb->ttl_s)
		kb->ttl_s = ttl;
	ret = 0;
out:
	kube_claim_release(&c);
	return ret;
}

/*
 * When was a reattached claim last renewed? shutdownTime - TTL, so a
 * client that reattaches for one command does not PATCH the claim
 * unless a quarter of its TTL has gone by. 0 (renew at the first
 * touch) when shutdownTime is unknown or more than a TTL ahead.
 */
static void reattach_renewed(struct kube_backend *kb)
{
	time_t shutdown, now = time(NULL);
	uint64_t ago_ms;

	kb->renewed_ms = 0;
	if (!kb->shutdown_time ||
	    kube_parse_rfc3339(kb->shutdown_time, &shutdown) < 0)
		return;
	if (shutdown <= now || shutdown - now > kb->ttl_s)
		return;
	ago_ms = (uint64_t)(kb->ttl_s - (shutdown - now)) * 1000;
	if (now_ms() > ago_ms)
		kb->renewed_ms = now_ms() - ago_ms;
}

/* The pod IP from the Sandbox when the claim did not say. */
static void sandbox_pod_ip(struct kube_backend *kb)
{
	struct kube_sandbox sb;

	if (kb->pod_ip)
		return;
	kube_sandbox_init(&sb);
	if (kube_sandbox_get(&kb->kc, kb->ns, kb->sandbox, &sb) == 0 &&
	    sb.pod_ips.nr && *sb.pod_ips.v[0])
		kb->pod_ip = xstrdup(sb.pod_ips.v[0]);
	kube_sandbox_release(&sb);
}

/*
 * The forward's credential source (lib/kube/portforward.h get_token): the
 * current bearer token of kb->cfg, so tunnels opened hours later use
 * a refreshed exec-plugin token or the rotated token file; forget
 * after a 401 drops the cached credential first, as kube_do() does.
 *
 * Threads: runs on the forward's tunnel threads (one call at a time),
 * while the main thread or the renewer may be in kube_do() on kb->kc,
 * which calls kube_config_auth() and kube_config_forget_credential()
 * on the same kb->cfg. Both are safe to call from two threads:
 * they only read the loaded configuration and keep their caches (token
 * file, exec credential) under kb->cfg's own lock, and the plugin runs
 * under it, so two threads needing a fresh token run it once. kb->kc
 * (whose http client kube_do() replaces) is not touched here: the
 * forward has its own client, kb->fwd_api.
 */
static int forward_token(void *data, int forget, struct strbuf *token)
{
	struct kube_backend *kb = data;
	struct kube_auth a;
	int ret;

	if (forget)
		kube_config_forget_credential(&kb->cfg);
	kube_auth_init(&a);
	ret = kube_config_auth(&kb->cfg, &a);
	if (!ret)
		strbuf_addbuf(token, &a.bearer_token);
	kube_auth_release(&a);
	return ret;
}

/*
 * The forward's resolve_pod (lib/kube/portforward.h): the first ready router
 * pod now, when the one forwarded to is gone (a rollout of the router
 * replaced it mid-session). Runs on a tunnel thread: its own API
 * client on kb->cfg (safe from two threads, see forward_token()), not
 * kb->kc.
 */
static int forward_resolve(void *data, struct strbuf *pod)
{
	struct kube_backend *kb = data;
	struct strvec names = STRVEC_INIT, ips = STRVEC_INIT;
	struct kube_client kc;
	int ret = -1;

	if (kube_client_init(&kc, &kb->cfg, kb->ns) < 0)
		return -1;
	if (kube_router_pods(&kc, kb->router_ns, &names, &ips) < 0)
		goto out;
	if (!names.nr) {
		error("no ready sandbox-router pod in namespace '%s'",
		      kb->router_ns);
		goto out;
	}
	strbuf_addstr(pod, names.v[0]);
	ret = 0;
out:
	kube_client_release(&kc);
	strvec_clear(&names);
	strvec_clear(&ips);
	return ret;
}

/*
 * The ready router pods into names and ips, and their namespace into
 * kb->router_ns: --router-namespace only when given, else the claim's
 * namespace (the seed's guide, agent-sandbox v0.x and its Go client),
 * else KUBE_ROUTER_DEFAULT_NS, where agent-sandbox v1.0 deploys it
 * (sandbox-router/deploy/ of the module; its Python client's router_namespace
 * default). 0, or -1 with error().
 */
static int find_router(struct kube_backend *kb, struct strvec *names,
		       struct strvec *ips)
{
	struct strbuf why = STRBUF_INIT;
	report_fn saved;
	void *saved_data;
	int r;

	free(kb->router_ns);
	kb->router_ns = xstrdup(kb->router_ns_opt ? kb->router_ns_opt : kb->ns);
	if (kube_router_pods(&kb->kc, kb->router_ns, names, ips) < 0)
		return -1;
	if (names->nr)
		return 0;
	if (kb->router_ns_opt) {
		error("no ready sandbox-router pod in namespace '%s' "
		      "(--router-namespace; EndpointSlices of Service "
		      "sandbox-router-svc)",
		      kb->router_ns);
		return -1;
	}
	if (strcmp(kb->ns, KUBE_ROUTER_DEFAULT_NS)) {
		get_error_routine(&saved, &saved_data);
		set_error_routine(keep_report, &why);
		r = kube_router_pods(&kb->kc, KUBE_ROUTER_DEFAULT_NS, names,
				     ips);
		set_error_routine(saved, saved_data);
		if (!r && names->nr) {
			free(kb->router_ns);
			kb->router_ns = xstrdup(KUBE_ROUTER_DEFAULT_NS);
			strbuf_release(&why);
			return 0;
		}
		if (!r)
			strbuf_addstr(&why, "none ready there");
	}
	error("no ready sandbox-router pod in namespace '%s' "
	      "(EndpointSlices of Service sandbox-router-svc)%s%s%s%s; "
	      "deploy the router, or name its namespace with "
	      "--router-namespace, or use --gateway or --api-url",
	      kb->ns, why.len ? ", nor in '" KUBE_ROUTER_DEFAULT_NS "' (" : "",
	      why.buf, why.len ? ")" : "",
	      why.len && strstr(why.buf, "forbidden")
		      ? " (RBAC: manifests/rbac-router-namespace.yaml grants "
			"what gosbx "
			"needs there)"
		      : "");
	strbuf_release(&why);
	return -1;
}

/*
 * Start a port-forward to port of pod in ns, on a unix socket
 * (lib/kube/portforward.h), into *fwd with its own API client *api;
 * resolve: the forward's resolve_pod, or NULL.
 */
static int forward_to(struct kube_backend *kb, const char *ns, const char *pod,
		      unsigned port,
		      int (*resolve)(void *data, struct strbuf *pod),
		      struct kube_forward **fwd, struct http_client **api)
{
	struct kube_forward_opts fo = { 0 };
	struct kube_auth a;
	int ret = -1;

	kube_auth_init(&a);
	/*
	 * The forward gets its own API client: kube_client replaces its
	 * own on a credential refresh, and the forward must not see it
	 * go away.
	 */
	if (kube_config_auth(&kb->cfg, &a) < 0)
		goto out;
	*api = http_client_dup(kb->kc.http);
	if (!*api)
		goto out;
	fo.client = *api;
	fo.bearer_token = a.bearer_token.len ? a.bearer_token.buf : NULL;
	/* impersonation and Basic credentials apply to the upgrade too */
	fo.headers = a.headers.nr ? (const char *const *)a.headers.v : NULL;
	if (kb->kc.has_exec)
		/* exec plugin or token file: the token changes over time */
		fo.get_token = forward_token;
	fo.resolve_pod = resolve;
	fo.token_data = kb;
	fo.namespace = ns;
	fo.pod = pod;
	fo.port = port;
	*fwd = kube_forward_start(&fo);
	if (*fwd)
		ret = 0;
out:
	kube_auth_release(&a);
	return ret;
}

/* Start a port-forward to port 8080 of the first ready router pod. */
static int start_forward(struct kube_backend *kb, struct strbuf *base,
			 struct strbuf *sock)
{
	struct strvec names = STRVEC_INIT, ips = STRVEC_INIT;
	int ret = -1;

	if (find_router(kb, &names, &ips) < 0 ||
	    forward_to(kb, kb->router_ns, names.v[0], ROUTER_PORT,
		       forward_resolve, &kb->fwd, &kb->fwd_api) < 0)
		goto out;
	strbuf_addstr(base, "http://localhost");
	strbuf_addstr(sock, kube_forward_address(kb->fwd));
	ret = 0;
out:
	strvec_clear(&names);
	strvec_clear(&ips);
	return ret;
}

/*
 * The port of a sandboxd address ("host:port", ":port", "[v6]:port",
 * as SANDBOXD_*_ADDR give it), or 0 when it names none.
 */
static unsigned addr_port(const char *addr)
{
	const char *colon = strrchr(addr, ':');
	char *end;
	unsigned long n;

	if (!colon || !isdigit((unsigned char)colon[1]))
		return 0;
	n = strtoul(colon + 1, &end, 10);
	return *end || n < 1 || n > 65535 ? 0 : (unsigned)n;
}

/*
 * sandboxd discovery (KEP-539.2; packages/sandboxd/USER_GUIDE.md of
 * agent-sandbox v1.0.3, "Endpoint discovery"): a container of the
 * sandbox's pod whose env sets SANDBOXD_GRPC_ADDR and
 * SANDBOXD_REST_ADDR serves sandboxd at those ports; without them
 * the runtime API is reached through the router, as the SDKs fall
 * back to the python-runtime API. Only literal values count (a value
 * from a ConfigMap or a field is not read). *pod gets the pod's name.
 * Returns 1 with the ports, 0 when the pod names no sandboxd (or it
 * may not be read: RBAC without get on pods, said with --verbose),
 * -1 with error().
 */
static int find_sandboxd(struct kube_backend *kb, struct strbuf *pod,
			 unsigned *rest, unsigned *grpc)
{
	struct strbuf why = STRBUF_INIT;
	struct kube_sandbox sb;
	json_t *obj = NULL, *c;
	size_t i, j;
	int r, ret = -1;

	kube_sandbox_init(&sb);
	r = kube_sandbox_get(&kb->kc, kb->ns, kb->sandbox, &sb);
	if (r > 0)
		error("sandbox '%s' is gone", kb->sandbox);
	if (r)
		goto out;
	strbuf_addbuf(pod, &sb.pod_name);
	r = kube_object_get(&kb->kc, NULL, "v1", kb->ns, "pods", pod->buf, &obj,
			    &why);
	if (r < 0)
		goto out;
	if (r) {
		if (kb->kc.verbose)
			warning("cannot read pod '%s' to look for sandboxd "
				"(%s); using the router",
				pod->buf, r == 1 ? "not found" : why.buf);
		ret = 0;
		goto out;
	}
	*rest = *grpc = 0;
	json_array_foreach (
		json_object_get(json_object_get(obj, "spec"), "containers"), i,
		c) {
		unsigned rp = 0, gp = 0;
		json_t *e;

		json_array_foreach (json_object_get(c, "env"), j, e) {
			const char *n = json_object_str(e, "name");
			const char *v = json_object_str(e, "value");

			if (!n || !v)
				continue;
			if (!strcmp(n, "SANDBOXD_REST_ADDR"))
				rp = addr_port(v);
			else if (!strcmp(n, "SANDBOXD_GRPC_ADDR"))
				gp = addr_port(v);
		}
		if (rp && gp) {
			*rest = rp;
			*grpc = gp;
			break;
		}
	}
	ret = *rest && *grpc;
out:
	json_decref(obj);
	kube_sandbox_release(&sb);
	strbuf_release(&why);
	return ret;
}

/*
 * Trying again until a freshly Ready sandbox settles (wait_router(),
 * connect_sandboxd()): pauses of 100 ms, doubling up to 2 s, for
 * settle_ms at most and not past until_ms (monotonic, 0: no bound).
 */
struct settle {
	uint64_t end; /* monotonic_ms() */
	long pause;   /* ms */
};

static void settle_init(struct settle *st, uint64_t settle_ms,
			uint64_t until_ms)
{
	st->end = monotonic_ms() + settle_ms;
	if (until_ms && until_ms < st->end)
		st->end = until_ms;
	st->pause = 100;
}

/* Sleep the next pause: 1, or 0 without sleeping when time is up. */
static int settle_pause(struct settle *st)
{
	if (monotonic_ms() + (uint64_t)st->pause >= st->end)
		return 0;
	usleep((useconds_t)st->pause * 1000);
	if (st->pause < 2000)
		st->pause *= 2;
	return 1;
}

/*
 * Reach the sandboxd of pod: a port-forward to each of its ports, as
 * the SDKs' pod tunnel does (Go: RuntimeSandboxd, podTunnelStrategy;
 * sandboxd is not behind the router), then sandboxd_connect(). Just
 * after Ready the forward may not reach the pod yet (as for the
 * router, wait_router()): tried again (struct settle) for
 * SANDBOXD_SETTLE_MS at most, not past until_ms; the last failure is
 * the error. 0 or -1 with error().
 */
#define SANDBOXD_SETTLE_MS 20000
static int connect_sandboxd(struct session *s, struct kube_backend *kb,
			    const char *pod, unsigned rest, unsigned grpc,
			    uint64_t until_ms, volatile sig_atomic_t *cancel)
{
	struct http_client_opts ho = { 0 };
	struct strbuf addr = STRBUF_INIT, why = STRBUF_INIT;
	struct settle st;
	report_fn saved;
	void *saved_data;
	int ret = -1, denied;

	settle_init(&st, SANDBOXD_SETTLE_MS, until_ms);
	if (forward_to(kb, kb->ns, pod, rest, NULL, &kb->fwd, &kb->fwd_api) <
		    0 ||
	    forward_to(kb, kb->ns, pod, grpc, NULL, &kb->grpc_fwd,
		       &kb->grpc_fwd_api) < 0)
		goto out;
	ho.unix_socket = kube_forward_address(kb->fwd);
	/* a close by the pod's side may not come through the forward */
	ho.max_idle_reuse_s = 2;
	ho.connect_timeout_ms = 30000;
	strbuf_addf(&addr, "unix:%s", kube_forward_address(kb->grpc_fwd));
	get_error_routine(&saved, &saved_data);
	kube_forward_set_quiet(kb->fwd, 1);
	kube_forward_set_quiet(kb->grpc_fwd, 1);
	for (;;) {
		unsigned long mark = kube_forward_errors(kb->fwd),
			      gmark = kube_forward_errors(kb->grpc_fwd);
		char *fe;

		set_error_routine(keep_report, &why);
		ret = sandboxd_connect(s, addr.buf, "http://localhost", &ho);
		set_error_routine(saved, saved_data);
		if (!ret)
			break;
		/* the forward's reason explains the client's error */
		fe = kube_forward_error_since(kb->fwd, mark);
		if (!fe)
			fe = kube_forward_error_since(kb->grpc_fwd, gmark);
		if (fe) {
			strbuf_reset(&why);
			strbuf_addstr(&why, fe);
			free(fe);
		}
		denied = kube_forward_denied(kb->fwd);
		if (!denied)
			denied = kube_forward_denied(kb->grpc_fwd);
		if (denied) {
			/* the authorizer said no: no retry changes that */
			error("the API server refuses this user a port-forward "
			      "to pod '%s' (HTTP %d): RBAC must grant get and "
			      "create on pods/portforward in namespace '%s' "
			      "(manifests/rbac.yaml)",
			      pod, denied, kb->ns);
			break;
		}
		if ((cancel && *cancel) || !settle_pause(&st)) {
			error("cannot reach sandboxd of sandbox '%s' (pod "
			      "'%s', "
			      "ports %u and %u) in namespace '%s': %s",
			      kb->sandbox, pod, grpc, rest, kb->ns, why.buf);
			break;
		}
	}
	kube_forward_set_quiet(kb->fwd, 0);
	kube_forward_set_quiet(kb->grpc_fwd, 0);
out:
	strbuf_release(&addr);
	strbuf_release(&why);
	return ret;
}

/* Make s->http: the runtime through the router, with its headers. */
static int connect_runtime(struct session *s, struct kube_backend *kb,
			   const struct session_opts *opts)
{
	struct strbuf base = STRBUF_INIT, sock = STRBUF_INIT;
	struct http_client_opts ho = { 0 };
	int ret = -1;

	strvec_pushf(&kb->headers, "X-Sandbox-ID: %s", kb->sandbox);
	strvec_pushf(&kb->headers, "X-Sandbox-Namespace: %s", kb->ns);
	strvec_push(&kb->headers, "X-Sandbox-Port: " RUNTIME_PORT);
	if (kb->pod_ip)
		strvec_pushf(&kb->headers, "X-Sandbox-Pod-IP: %s", kb->pod_ip);
	strvec_pushf(&kb->headers, "X-Sandbox-Timeout: %d", ROUTER_TIMEOUT_S);

	if (opts->api_url && *opts->api_url) {
		strbuf_addstr(&base, opts->api_url);
	} else if (opts->gateway && *opts->gateway) {
		if (!strstr(opts->gateway, "://"))
			strbuf_addstr(&base, "http://");
		strbuf_addstr(&base, opts->gateway);
	} else {
		kb->router_ns_opt =
			opts->router_namespace && *opts->router_namespace
				? opts->router_namespace
				: NULL;
		if (start_forward(kb, &base, &sock) < 0)
			goto out;
	}
	ho.unix_socket = sock.len ? sock.buf : NULL;
	/*
	 * The Python router (v0.4) closes a connection after 5 s of
	 * keep-alive, and a request sent after such a pause through the
	 * port-forward was lost (lib/http.h): reuse only what was idle less
	 */
	if (sock.len)
		ho.max_idle_reuse_s = 2;
	/* uvicorn 0.17 under the v0.4 router cuts a stream on a reused
	 * connection (lib/http.h) */
	ho.fresh_streams = 1;
	ho.connect_timeout_ms = 30000;
	ho.headers = kb->headers.v;
	/* golang/go#40747 in the Go sandbox-router: lib/http.h */
	ho.chunked_bodies = 1;
	if (opts->router_token && *opts->router_token) {
		kb->router_token = xstrdup(opts->router_token);
		ho.bearer_token = kb->router_token;
	}
	/* no total timeout: a long command keeps its stream open */
	s->http = http_client_new(base.buf, &ho);
	if (s->http)
		ret = 0;
out:
	strbuf_release(&base);
	strbuf_release(&sock);
	return ret;
}

/*
 * Just after Ready the router may not reach the sandbox yet: the
 * network policy or the CNI lag behind the pod, and the router answers
 * 502 or 503 ("Could not connect to the backend sandbox"), or the
 * forward's connection is refused. GET / (the readiness endpoint of
 * the runtime contract) until it answers otherwise, for at most
 * ROUTER_SETTLE_MS (and not past until_ms, monotonic); then the last
 * answer is the error. 0 or -1 with error().
 */
#define ROUTER_SETTLE_MS 20000
static int wait_router(struct session *s, struct kube_backend *kb,
		       uint64_t until_ms, volatile sig_atomic_t *cancel)
{
	static const char *const hdrs[] = { "Accept: application/json", NULL };
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	struct strbuf why = STRBUF_INIT;
	struct settle st;
	report_fn saved;
	void *saved_data;
	int r, ret = -1;

	settle_init(&st, ROUTER_SETTLE_MS, until_ms);
	req.path = "/";
	req.headers = hdrs;
	req.timeout_ms = 30000;
	req.cancel = cancel;
	get_error_routine(&saved, &saved_data);
	for (;;) {
		set_error_routine(report_nothing, NULL);
		r = http_request(s->http, &req, &resp);
		set_error_routine(saved, saved_data);
		if (r == HTTP_ABORTED) {
			error("interrupted while reaching sandbox '%s'",
			      kb->sandbox);
			break;
		}
		if (!r && resp.status != 502 && resp.status != 503) {
			ret = 0;
			break;
		}
		strbuf_reset(&why);
		if (r)
			strbuf_addstr(&why, http_client_last_error(s->http));
		else
			http_error_text(&why, resp.status, &resp.body);
		if (r && kb->fwd && kube_forward_denied(kb->fwd)) {
			/* the authorizer said no: no retry changes that */
			error("the API server refuses this user a port-forward "
			      "to the sandbox-router (HTTP %d): RBAC must "
			      "grant "
			      "get and create on pods/portforward in namespace "
			      "'%s' (manifests/rbac.yaml; gosbx doctor checks "
			      "it)",
			      kube_forward_denied(kb->fwd), kb->router_ns);
			break;
		}
		if (!settle_pause(&st)) {
			error("the router cannot reach sandbox '%s' in "
			      "namespace '%s': %s",
			      kb->sandbox, kb->ns, why.buf);
			break;
		}
	}
	http_resp_release(&resp);
	strbuf_release(&why);
	return ret;
}

static void kube_touch(struct session *s);

/*
 * While the claim is held, renew its shutdownTime every TTL/4 even
 * when no command runs (a command may outlast the TTL); a client that
 * dies stops renewing and the controller deletes the claim.
 */
static void *renewer_main(void *arg)
{
	struct kube_backend *kb = arg;
	/* touch() renews after TTL/4: look twice as often */
	uint64_t every = (uint64_t)kb->ttl_s * 1000 / 8;

	set_error_routine(report_nothing, NULL); /* the next touch reports */
	if (every < 250)
		every = 250;
	pthread_mutex_lock(&kb->lock);
	while (!kb->stop) {
		struct timespec ts;

		deadline_in_ms(&ts, CLOCK_MONOTONIC, every);
		if (pthread_cond_timedwait(&kb->cond, &kb->lock, &ts) !=
			    ETIMEDOUT ||
		    kb->stop)
			continue;
		pthread_mutex_unlock(&kb->lock);
		kube_touch(kb->s);
		pthread_mutex_lock(&kb->lock);
	}
	pthread_mutex_unlock(&kb->lock);
	return NULL;
}

static void renewer_start(struct session *s, struct kube_backend *kb)
{
	kb->s = s;
	if (pthread_create(&kb->renewer, NULL, renewer_main, kb) == 0)
		kb->renewer_running = 1;
	else
		warning("cannot start the claim renewer thread; claim '%s' "
			"is renewed only when used",
			s->claim);
}

static void renewer_stop(struct kube_backend *kb)
{
	if (!kb->renewer_running)
		return;
	pthread_mutex_lock(&kb->lock);
	kb->stop = 1;
	pthread_cond_signal(&kb->cond);
	pthread_mutex_unlock(&kb->lock);
	pthread_join(kb->renewer, NULL);
	kb->renewer_running = 0;
}

/* ---- limits (lib/kube/backend-kube.h "Limits") ---- */

/*
 * Limits that a pod template cannot carry: refuse them rather than run
 * with less isolation than asked (Documentation/technical/design.md
 * "Backends").
 */
static int check_unsupported_limits(const struct session_opts *opts)
{
	if (opts->pids_set && opts->pids > 0)
		return error("--pids is not available on the kube backend: a "
			     "pod template has no process limit (the "
			     "kubelet's podPidsLimit sets one for every pod "
			     "of a node); leave --pids out, or use "
			     "--backend=local");
	if (opts->disk_bytes > 0)
		return error("--disk is not available on the kube backend: "
			     "Kubernetes limits a container's ephemeral "
			     "storage as a whole, not the size of one file; "
			     "leave --disk out, or use --backend=local");
	return 0;
}

/* The memory (bytes) and CPU (cores) limits asked for; 0: none. */
static void asked_limits(const struct session_opts *opts, int64_t *memory,
			 double *cpus)
{
	*memory = opts->memory_set && opts->memory_bytes > 0
			  ? opts->memory_bytes
			  : 0;
	*cpus = opts->cpus_set && opts->cpus > 0 ? opts->cpus : 0;
}

/*
 * GET an agent-sandbox object (plural, name) in the claim's namespace
 * to check the limits against it. 0 with *out, or -1 with error(): a
 * missing object, or a forbidden read (which permission is missing).
 */
static int get_for_limits(struct kube_backend *kb, const char *group,
			  const char *version, const char *plural,
			  const char *kind, const char *name, json_t **out)
{
	struct strbuf why = STRBUF_INIT;
	int r;

	r = kube_object_get(&kb->kc, group, version, kb->ns, plural, name, out,
			    &why);
	if (r == 1)
		error("cannot check the limits asked: no %s '%s' in "
		      "namespace '%s'",
		      kind, name, kb->ns);
	else if (r == 2)
		error("cannot check the limits asked against %s '%s': %s; "
		      "the client needs 'get' on %s%s%s in namespace '%s' "
		      "(manifests/rbac.yaml)",
		      kind, name, why.buf, plural, group && *group ? "." : "",
		      group ? group : "", kb->ns);
	strbuf_release(&why);
	return r ? -1 : 0;
}

/*
 * A new claim with memory or CPU limits asked: the SandboxTemplate it
 * will use (v1alpha1: template; v1beta1: the warm pool's
 * spec.sandboxTemplateRef) must limit every container to at most that,
 * else refuse before the claim exists.
 */
static int check_template_limits(struct kube_backend *kb,
				 const struct session_opts *opts,
				 const char *template, const char *pool)
{
	struct strbuf why = STRBUF_INIT, need = STRBUF_INIT;
	struct strbuf where = STRBUF_INIT;
	json_t *pobj = NULL, *tobj = NULL;
	const char *group = KUBE_CLAIM_GROUP;
	int64_t memory;
	double cpus;
	int ret = -1;

	asked_limits(opts, &memory, &cpus);
	if (!memory && !cpus)
		return 0;
	if (pool) {
		if (get_for_limits(kb, group, kb->kc.claim_version,
				   "sandboxwarmpools", "warm pool", pool,
				   &pobj) < 0)
			goto out;
		template = json_object_str(
			json_object_get(json_object_get(pobj, "spec"),
					"sandboxTemplateRef"),
			"name");
		if (!template || !*template) {
			error("cannot check the limits asked: warm pool '%s' "
			      "names no sandboxTemplateRef",
			      pool);
			goto out;
		}
	}
	if (get_for_limits(kb, group, kb->kc.claim_version, "sandboxtemplates",
			   "SandboxTemplate", template, &tobj) < 0)
		goto out;
	if (kube_pod_spec_check_limits(
		    json_object_get(
			    json_object_get(json_object_get(tobj, "spec"),
					    "podTemplate"),
			    "spec"),
		    memory, cpus, &why, &need)) {
		strbuf_addf(&where, "template '%s'", template);
		if (pool)
			strbuf_addf(&where, " (of warm pool '%s')", pool);
		error("%s in namespace '%s' does not honour the limits "
		      "asked: %s; use a template with %s (--template=<name>%s)",
		      where.buf, kb->ns, why.buf, need.buf,
		      pool ? ", --warm-pool=<name>" : "");
		goto out;
	}
	ret = 0;
out:
	json_decref(pobj);
	json_decref(tobj);
	strbuf_release(&why);
	strbuf_release(&need);
	strbuf_release(&where);
	return ret;
}

/*
 * Reattach with memory or CPU limits asked: the claim's pod (what the
 * kubelet enforces, after any LimitRange defaults) must limit every
 * container to at most that, else refuse; a pod that cannot be read
 * refuses too.
 */
static int check_pod_limits(struct kube_backend *kb,
			    const struct session_opts *opts, const char *claim)
{
	struct strbuf why = STRBUF_INIT, need = STRBUF_INIT;
	struct kube_sandbox sb;
	json_t *pod = NULL;
	int64_t memory;
	double cpus;
	int r, ret = -1;

	asked_limits(opts, &memory, &cpus);
	if (!memory && !cpus)
		return 0;
	kube_sandbox_init(&sb);
	r = kube_sandbox_get(&kb->kc, kb->ns, kb->sandbox, &sb);
	if (r > 0)
		error("cannot check the limits asked: sandbox '%s' of claim "
		      "'%s' is gone",
		      kb->sandbox, claim);
	if (r)
		goto out;
	if (get_for_limits(kb, NULL, "v1", "pods", "pod", sb.pod_name.buf,
			   &pod) < 0)
		goto out;
	if (kube_pod_spec_check_limits(json_object_get(pod, "spec"), memory,
				       cpus, &why, &need)) {
		error("claim '%s' does not honour the limits asked: its pod "
		      "'%s': %s; open a new sandbox from a template with %s "
		      "(--template=<name>), or leave the limits out to "
		      "reattach",
		      claim, sb.pod_name.buf, why.buf, need.buf);
		goto out;
	}
	ret = 0;
out:
	json_decref(pod);
	kube_sandbox_release(&sb);
	strbuf_release(&why);
	strbuf_release(&need);
	return ret;
}

/*
 * The progress line while a new claim gets Ready, on a terminal only
 * (stderr a tty): "claim <name>: waiting for Ready, 12 s; Ready=False
 * <reason>: <message>", redrawn in place each second and when the
 * claim changes, erased at the end. A thread of its own, since the
 * watch blocks until the claim changes.
 */
struct progress {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* signalled on a change and to stop */
	const char *claim;
	uint64_t start_ms;
	struct strbuf reason, message;
	int stop;
};

static void progress_draw(struct progress *p)
{
	struct strbuf line = STRBUF_INIT;
	struct winsize ws;
	size_t width = 80;

	if (!ioctl(2, TIOCGWINSZ, &ws) && ws.ws_col > 1)
		width = ws.ws_col;
	strbuf_addf(&line, "claim %s: waiting for Ready, %llu s", p->claim,
		    (unsigned long long)(monotonic_ms() - p->start_ms) / 1000);
	if (p->reason.len)
		strbuf_addf(&line, "; Ready=False %s", p->reason.buf);
	if (p->reason.len && p->message.len)
		strbuf_addf(&line, ": %s", p->message.buf);
	for (size_t i = 0; i < line.len; i++)
		if (iscntrl((unsigned char)line.buf[i]))
			line.buf[i] = ' ';
	/* one line: a longer one would wrap and \r not reach its start */
	if (line.len > width - 1)
		strbuf_setlen(&line, width - 1);
	fprintf(stderr, "\r%s\033[K", line.buf);
	fflush(stderr);
	strbuf_release(&line);
}

static void *progress_run(void *data)
{
	struct progress *p = data;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct timespec ts;

		progress_draw(p);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&p->cond, &p->lock, &ts);
	}
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* kube_client.claim_seen: the claim's last condition, redrawn now */
static void progress_seen(const struct kube_claim *c, void *data)
{
	struct progress *p = data;

	pthread_mutex_lock(&p->lock);
	strbuf_reset(&p->reason);
	strbuf_reset(&p->message);
	if (!c->ready) {
		strbuf_addbuf(&p->reason, &c->reason);
		strbuf_addbuf(&p->message, &c->message);
	}
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* start p for claim on kc if stderr is a terminal: 1 if started */
static int progress_start(struct progress *p, struct kube_client *kc,
			  const char *claim)
{
	pthread_condattr_t ca;

	memset(p, 0, sizeof(*p));
	if (!isatty(2))
		return 0;
	p->claim = claim;
	p->start_ms = monotonic_ms();
	strbuf_init(&p->reason, 0);
	strbuf_init(&p->message, 0);
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&p->thread, NULL, progress_run, p)) {
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		strbuf_release(&p->reason);
		strbuf_release(&p->message);
		return 0;
	}
	kc->claim_seen = progress_seen;
	kc->claim_seen_data = p;
	return 1;
}

/* erase the line and stop the thread of progress_start() */
static void progress_stop(struct progress *p, struct kube_client *kc)
{
	kc->claim_seen = NULL;
	kc->claim_seen_data = NULL;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	strbuf_release(&p->reason);
	strbuf_release(&p->message);
}

/* kube_claim_wait_ready() with the progress line on a terminal */
static int wait_ready(struct kube_backend *kb, const char *name, const char *rv,
		      long timeout_ms, volatile sig_atomic_t *cancel,
		      struct kube_ready *ready)
{
	struct progress p;
	int started = progress_start(&p, &kb->kc, name), r;

	r = kube_claim_wait_ready(&kb->kc, kb->ns, name, rv, timeout_ms, cancel,
				  ready);
	if (started)
		progress_stop(&p, &kb->kc);
	return r;
}

static int kube_open(struct session *s, const struct session_opts *opts)
{
	struct kube_backend *kb = xcalloc(1, sizeof(*kb));
	struct kube_load_opts lo = { 0 };
	struct strbuf name = STRBUF_INIT, rv = STRBUF_INIT;
	struct kube_ready ready;
	int64_t timeout = opts->open_timeout_ms > 0 ? opts->open_timeout_ms
						    : DEFAULT_OPEN_TIMEOUT_MS;
	struct strbuf pool = STRBUF_INIT, pod = STRBUF_INIT;
	unsigned rest_port = 0, grpc_port = 0;
	int created = 0, sd = 0;

	pthread_condattr_t ca;

	pthread_mutex_init(&kb->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&kb->cond, &ca);
	pthread_condattr_destroy(&ca);
	strvec_init(&kb->headers);
	kube_ready_init(&ready);
	if (opts->ttl_ms > 0)
		kb->ttl_s = (long)((opts->ttl_ms + 999) / 1000);

	if (check_unsupported_limits(opts) < 0)
		goto fail;
	lo.kubeconfig = opts->kubeconfig;
	lo.context = opts->context;
	if (kube_config_load(&kb->cfg, &lo) < 0)
		goto fail;
	if (kube_client_init(&kb->kc, &kb->cfg, opts->namespace) < 0)
		goto fail;
	kb->kc_ready = 1;
	kb->kc.verbose = opts->verbose;
	/*
	 * An API server that does not answer the first request is a wrong
	 * address or a cluster that is down: say so now, as gosbx doctor
	 * does. Once it answered, the whole open rides out an API server
	 * that is unreachable for a while (a control-plane upgrade),
	 * within --open-timeout.
	 */
	if (kube_reach(&kb->kc, opts->cancel) < 0)
		goto fail;
	kb->kc.retry_until_ms = monotonic_ms() + (uint64_t)timeout;
	kb->ns = xstrdup(kb->kc.namespace);
	if (kube_discover(&kb->kc, opts->api_version) < 0)
		goto fail;

	if (opts->claim) {
		if (find_claim(kb, opts->claim) < 0 ||
		    check_pod_limits(kb, opts, opts->claim) < 0)
			goto fail;
		strbuf_addstr(&name, opts->claim);
		if (!kb->ttl_s)
			kb->ttl_s = DEFAULT_TTL_MS / 1000;
		reattach_renewed(kb);
	} else {
		const char *template =
			opts->template ? opts->template : DEFAULT_TEMPLATE;

		if (!kb->ttl_s)
			kb->ttl_s = DEFAULT_TTL_MS / 1000;
		if (!strcmp(kb->kc.claim_version, "v1beta1"))
			choose_warm_pool(kb, template, opts, &pool);
		if (check_template_limits(kb, opts, template,
					  pool.len ? pool.buf : NULL) < 0 ||
		    create_claim(kb, opts, pool.buf, &name, &rv) < 0)
			goto fail;
		created = 1;
		kb->renewed_ms = now_ms();
		if (wait_ready(kb, name.buf, rv.buf, (long)timeout,
			       opts->cancel, &ready) < 0)
			goto fail;
		kb->sandbox = xstrdup(ready.sandbox.buf);
		if (ready.pod_ips.nr && *ready.pod_ips.v[0])
			kb->pod_ip = xstrdup(ready.pod_ips.v[0]);
	}
	sandbox_pod_ip(kb);
	/* --api-url and --gateway name the router: no discovery */
	if ((!opts->api_url || !*opts->api_url) &&
	    (!opts->gateway || !*opts->gateway)) {
		sd = find_sandboxd(kb, &pod, &rest_port, &grpc_port);
		if (sd < 0)
			goto fail;
	}
	if (sd) {
		if (connect_sandboxd(s, kb, pod.buf, rest_port, grpc_port,
				     kb->kc.retry_until_ms, opts->cancel) < 0)
			goto fail;
		s->ops = &backend_kube_sandboxd;
	} else if (connect_runtime(s, kb, opts) < 0 ||
		   wait_router(s, kb, kb->kc.retry_until_ms, opts->cancel) <
			   0) {
		goto fail;
	}
	kb->kc.retry_until_ms = 0;
	s->claim = strbuf_detach(&name, NULL);
	s->backend = kb;
	renewer_start(s, kb);
	strbuf_release(&rv);
	strbuf_release(&pool);
	strbuf_release(&pod);
	kube_ready_release(&ready);
	return 0;

fail:
	if (created) {
		/* roll back: the claim must not outlive a failed open */
		kb->kc.retry_until_ms = monotonic_ms() + DELETE_RETRY_MS;
		if (kube_claim_delete(&kb->kc, kb->ns, name.buf) < 0)
			error("could not delete claim '%s' after the failure; "
			      "delete it with: gosbx --backend=kube close %s",
			      name.buf, name.buf);
	}
	sandboxd_close(s);
	s->ops = &backend_kube;
	kb_free(kb);
	strbuf_release(&name);
	strbuf_release(&rv);
	strbuf_release(&pool);
	strbuf_release(&pod);
	kube_ready_release(&ready);
	return -1;
}

static int kube_destroy(struct session *s)
{
	struct kube_backend *kb = s->backend;
	int ret;

	if (!kb)
		return 0;
	renewer_stop(kb);
	sandboxd_close(s); /* and s->http */
	kube_forward_stop(kb->fwd);
	kb->fwd = NULL;
	kube_forward_stop(kb->grpc_fwd);
	kb->grpc_fwd = NULL;
	kb->kc.retry_until_ms = monotonic_ms() + DELETE_RETRY_MS;
	ret = kube_claim_delete(&kb->kc, kb->ns, s->claim);
	kb_free(kb);
	s->backend = NULL;
	return ret;
}

static void kube_detach(struct session *s)
{
	sandboxd_close(s); /* and s->http */
	kb_free(s->backend);
	s->backend = NULL;
}

static void kube_touch(struct session *s)
{
	struct kube_backend *kb = s->backend;
	uint64_t now, every;

	if (!kb)
		return;
	pthread_mutex_lock(&kb->lock);
	now = now_ms();
	every = (uint64_t)kb->ttl_s * 1000 / 4;
	if ((kb->renewed_ms && now - kb->renewed_ms < every) ||
	    (kb->tried_ms && now - kb->tried_ms < RENEW_RETRY_MS &&
	     kb->tried_ms > kb->renewed_ms)) {
		pthread_mutex_unlock(&kb->lock);
		return;
	}
	kb->tried_ms = now;
	/* on the API server's clock, which the controller compares with */
	if (kube_claim_renew(&kb->kc, kb->ns, s->claim,
			     time(NULL) + kb->kc.clock_skew_s + kb->ttl_s) == 0)
		kb->renewed_ms = now_ms();
	pthread_mutex_unlock(&kb->lock);
}

static unsigned long kube_error_mark(struct session *s)
{
	struct kube_backend *kb = s->backend;

	return kb && kb->fwd ? kube_forward_errors(kb->fwd) : 0;
}

static char *kube_error_since(struct session *s, unsigned long mark)
{
	struct kube_backend *kb = s->backend;

	return kb && kb->fwd ? kube_forward_error_since(kb->fwd, mark) : NULL;
}

/*
 * What a NULL namespace or template of opts means here: the kubeconfig
 * context's namespace (else "default"), as kube_client_init() takes it,
 * and BACKEND_KUBE_TEMPLATE. Reads the kubeconfig; sends no request.
 */
static int kube_defaults(const struct session_opts *opts,
			 struct backend_defaults *d)
{
	struct kube_load_opts lo = { 0 };
	struct kube_config cfg;
	report_fn saved_fn;
	void *saved_data;
	int ret = 0;

	d->template = xstrdup(opts->template ? opts->template
					     : BACKEND_KUBE_TEMPLATE);
	if (opts->namespace) {
		d->namespace = xstrdup(opts->namespace);
		return 0;
	}
	memset(&cfg, 0, sizeof(cfg));
	lo.kubeconfig = opts->kubeconfig;
	lo.context = opts->context;
	/* quiet: opening the session says what is wrong with the file */
	get_error_routine(&saved_fn, &saved_data);
	set_error_routine(report_nothing, NULL);
	if (kube_config_load(&cfg, &lo) < 0)
		ret = -1;
	else
		d->namespace =
			xstrdup(cfg.namespace ? cfg.namespace : "default");
	set_error_routine(saved_fn, saved_data);
	kube_config_release(&cfg);
	return ret;
}

static int kube_backend_suspend(const struct session_opts *opts,
				const char *name);
static int kube_backend_resume(const struct session_opts *opts,
			       const char *name);

#define KUBE_OPS                                                               \
	.name = "kube",                                                        \
	.caps = BACKEND_NAMESPACES | BACKEND_KUBE_API | BACKEND_BEARER_TOKEN,  \
	.defaults = kube_defaults, .delete_claim = kube_backend_delete,        \
	.delete_all = kube_backend_delete_all,                                 \
	.suspend_claim = kube_backend_suspend,                                 \
	.resume_claim = kube_backend_resume, .open = kube_open,                \
	.destroy = kube_destroy, .detach = kube_detach, .touch = kube_touch,   \
	.error_mark = kube_error_mark, .error_since = kube_error_since,        \
	.list = kube_claims_print, .prune = kube_claims_prune,                 \
	.doctor = doctor_kube

const struct backend_ops backend_kube = {
	KUBE_OPS,
	.logs = session_http_logs,
};

/*
 * The kube backend once discovery found sandboxd in the pod
 * (find_sandboxd()): commands through its ProcessService, files
 * through its REST files API (session/sandboxd.h), both over
 * port-forwards to the pod; no runtime logs (sandboxd_logs() says where
 * they are).
 */
static const struct backend_ops backend_kube_sandboxd = {
	KUBE_OPS,
	.run = sandboxd_run,
	.write_files = sandboxd_write_files,
	.push = sandboxd_push,
	.fetch_archive = sandboxd_fetch_archive,
	.get = sandboxd_get,
	.logs = sandboxd_logs,
	.runtime = "sandboxd",
	.proc = &sandboxd_proc_ops,
};

const char *kube_backend_sandbox(const struct session *s)
{
	const struct kube_backend *kb = s->backend;

	return kb ? kb->sandbox : NULL;
}

const char *kube_backend_namespace(const struct session *s)
{
	const struct kube_backend *kb = s->backend;

	return kb ? kb->ns : NULL;
}

/*
 * The API client of the commands that work on claims without a
 * session: kubeconfig (opts->kubeconfig, opts->context), namespace,
 * discovery (opts->api_version), -v (opts->verbose). 0, or -1 with error() and
 * nothing to release.
 */
static int api_connect(const struct session_opts *opts, struct kube_config *cfg,
		       struct kube_client *kc)
{
	struct kube_load_opts lo = { 0 };

	memset(cfg, 0, sizeof(*cfg));
	lo.kubeconfig = opts->kubeconfig;
	lo.context = opts->context;
	if (kube_config_load(cfg, &lo) < 0) {
		kube_config_release(cfg);
		return -1;
	}
	if (kube_client_init(kc, cfg, opts->namespace) < 0) {
		kube_config_release(cfg);
		return -1;
	}
	kc->verbose = opts->verbose; /* gosbx -v: each API call */
	if (kube_discover(kc, opts->api_version) < 0) {
		kube_client_release(kc);
		kube_config_release(cfg);
		return -1;
	}
	return 0;
}

int kube_backend_delete_all(const struct session_opts *opts,
			    void (*closed)(const char *name, void *data),
			    void *data)
{
	struct kube_config cfg;
	struct kube_client kc;
	json_t *items = NULL, *it;
	size_t i;
	int ret = -1;

	if (api_connect(opts, &cfg, &kc) < 0)
		return -1;
	if (kube_claim_list(&kc, NULL, KUBE_SELECTOR_GOSBX, &items, NULL) < 0)
		goto out;
	ret = 0;
	json_array_foreach (items, i, it) {
		const char *name = json_string_value(json_object_get(
			json_object_get(it, "metadata"), "name"));

		if (!name)
			continue;
		if (kube_claim_delete(&kc, NULL, name) < 0)
			ret = -1;
		else if (closed)
			closed(name, data);
	}
out:
	json_decref(items);
	kube_client_release(&kc);
	kube_config_release(&cfg);
	return ret;
}

int kube_backend_delete(const struct session_opts *opts, const char *name)
{
	struct kube_config cfg;
	struct kube_client kc;
	struct kube_claim c;
	int r, ret = -1;

	if (api_connect(opts, &cfg, &kc) < 0)
		return -1;
	kube_claim_init(&c);
	r = kube_claim_get(&kc, NULL, name, &c);
	if (r > 0)
		error("no claim '%s' in namespace '%s'", name, kc.namespace);
	else if (!r)
		ret = kube_claim_delete(&kc, NULL, name);
	kube_claim_release(&c);
	kube_client_release(&kc);
	kube_config_release(&cfg);
	return ret;
}

/* ---- suspend and resume (gosbx-suspend(1)) ---- */

/*
 * The Sandbox of the claim name, into sb: refused when the Sandbox API
 * in use is v1alpha1 (agent-sandbox v0.4.x, or --api-version=v1alpha1),
 * which has spec.replicas and no spec.operatingMode; v1beta1 (v0.5 and
 * later) has it, Running when unset (its CRD's default). verb:
 * "suspend" or "resume", for the messages. 0, or -1 with error().
 */
static int claim_sandbox(struct kube_client *kc, const char *name,
			 const char *verb, struct kube_sandbox *sb)
{
	struct kube_claim c;
	int r, ret = -1;

	if (!strcmp(kc->sandbox_version, "v1alpha1"))
		return error("cannot %s claim '%s': the Sandbox API in use "
			     "(%s/v1alpha1) has no spec.operatingMode; "
			     "suspending needs the v1beta1 API of "
			     "agent-sandbox v0.5 or later (v0.4.x serves "
			     "v1alpha1 only)",
			     verb, name, KUBE_SANDBOX_GROUP);
	kube_claim_init(&c);
	r = kube_claim_get(kc, NULL, name, &c);
	if (r > 0)
		error("no claim '%s' in namespace '%s'", name, kc->namespace);
	if (r)
		goto out;
	if (!c.sandbox.len) {
		error("cannot %s claim '%s': it has no sandbox yet "
		      "(status.sandbox.name is empty)",
		      verb, name);
		goto out;
	}
	r = kube_sandbox_get(kc, NULL, c.sandbox.buf, sb);
	if (r > 0)
		error("cannot %s claim '%s': its sandbox '%s' is gone", verb,
		      name, c.sandbox.buf);
	if (r)
		goto out;
	if (!sb->mode.len)
		strbuf_addstr(&sb->mode, "Running");
	ret = 0;
out:
	kube_claim_release(&c);
	return ret;
}

/*
 * Wait until the controller reports the Sandbox sb suspended
 * (condition Suspended True: its pod is gone) or, with resume, Ready,
 * asking every 100 ms to 1 s, until timeout_ms after start
 * (monotonic_ms()). 0, or -1 with error().
 */
static int wait_mode(struct kube_client *kc, const char *name,
		     struct kube_sandbox *sb, int resume, uint64_t start,
		     int64_t timeout_ms)
{
	uint64_t deadline = start + (uint64_t)timeout_ms;
	int delay = 100;

	for (;;) {
		struct strbuf sandbox = STRBUF_INIT;
		int r;

		if (resume ? sb->ready : sb->suspended)
			return 0;
		if (monotonic_ms() >= deadline) {
			error("timed out after %" PRId64 " ms waiting for "
			      "sandbox '%s' of claim '%s' to be %s (see "
			      "--open-timeout); last condition: %s",
			      timeout_ms, sb->name.buf, name,
			      resume ? "Ready" : "Suspended",
			      sb->reason.len ? sb->reason.buf : "none");
			return -1;
		}
		poll(NULL, 0, delay);
		delay = delay * 2 > 1000 ? 1000 : delay * 2;
		strbuf_addbuf(&sandbox, &sb->name);
		r = kube_sandbox_get(kc, NULL, sandbox.buf, sb);
		if (r > 0)
			error("sandbox '%s' of claim '%s' is gone", sandbox.buf,
			      name);
		strbuf_release(&sandbox);
		if (r)
			return -1;
	}
}

/* suspend (resume 0) or resume the Sandbox of the claim name */
static int set_mode(const struct session_opts *opts, const char *name,
		    int resume)
{
	const char *mode = resume ? "Running" : "Suspended";
	int64_t timeout = opts->open_timeout_ms > 0 ? opts->open_timeout_ms
						    : DEFAULT_OPEN_TIMEOUT_MS;
	uint64_t start = monotonic_ms();
	struct kube_config cfg;
	struct kube_client kc;
	struct kube_sandbox sb;
	int ret = -1, already;

	if (api_connect(opts, &cfg, &kc) < 0)
		return -1;
	kube_sandbox_init(&sb);
	if (claim_sandbox(&kc, name, resume ? "resume" : "suspend", &sb) < 0)
		goto out;
	already = !strcmp(sb.mode.buf, mode);
	if (!already && kube_sandbox_set_mode(&kc, NULL, sb.name.buf, mode) < 0)
		goto out;
	/* the conditions come from the controller: ask again */
	sb.ready = sb.suspended = 0;
	if (wait_mode(&kc, name, &sb, resume, start, timeout) < 0)
		goto out;
	if (resume) {
		/* the claim forwards its Sandbox's Ready: exec reads it */
		struct kube_ready ready;
		int64_t left = timeout - (int64_t)(monotonic_ms() - start);

		kube_ready_init(&ready);
		ret = kube_claim_wait_ready(&kc, NULL, name, NULL,
					    left > 0 ? (long)left : 1, NULL,
					    &ready);
		kube_ready_release(&ready);
		if (ret < 0)
			goto out;
	}
	ret = already;
out:
	kube_sandbox_release(&sb);
	kube_client_release(&kc);
	kube_config_release(&cfg);
	return ret;
}

static int kube_backend_suspend(const struct session_opts *opts,
				const char *name)
{
	return set_mode(opts, name, 0);
}

static int kube_backend_resume(const struct session_opts *opts,
			       const char *name)
{
	return set_mode(opts, name, 1);
}
