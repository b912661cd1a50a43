#include "compat.h"
#include "bench-lib.h"
#include "http.h"
#include "json.h"
#include "kube/kube.h"
#include "kube/kube-credentials.h"
#include "kube/kubeconfig.h"
#include "parse-options.h"
#include "kube/portforward.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"

/*
 * bench-kube: the in-process benchmark of the kube client behind
 * t/perf/run.sh's kube section (issue 5's two speed goals), against
 * t/helper/fake-kube. It uses the library as lib/kube/backend-kube.c does
 * (lib/kube/kube.h, lib/kube/portforward.h, lib/http.h), so no process start,
 * kubeconfig loading or discovery is in the numbers. Each subcommand
 * prints one line of key=value pairs on stdout (latencies in
 * microseconds, percentiles by nearest rank); diagnostics go to
 * stderr. Exit status: 0 when every step succeeded, 1 when some failed
 * (the numbers are still printed), 129 on bad usage.
 *
 *   ready    N times: create a claim, wait with the watch until it is
 *            Ready, delete it. client = from just before the create
 *            POST to the watch delivering Ready; fake = fake-kube's
 *            own create->Ready (receivedUs -> readyUs of the claim in
 *            GET /fake/state, CLOCK_MONOTONIC like ours); overhead =
 *            client - fake, per claim.
 *   forward  one kept claim; POST /execute {"command":"true"} through
 *            a native port-forward to the router pod (with the router
 *            headers, as backend-kube's start_forward() and
 *            connect_runtime() do) alternating with the same request
 *            straight to the runtime's unix socket (runtimes[].socket
 *            of GET /fake/state under --state-dir); each on one
 *            keep-alive connection. added = median(forward) -
 *            median(direct).
 */

#include <signal.h>

#define ROUTER_PORT 8080
#define RUNTIME_PORT "8888"
#define ROUTER_TIMEOUT_S 3600

static const char *opt_kubeconfig;
static const char *opt_context;
static const char *opt_namespace;
static const char *opt_template = "go-runtime-template";
static const char *opt_api_version;
static const char *opt_state_dir;
static const char *opt_claim;
static const char *opt_command = "true";
static int opt_n = -1;
static int opt_warmup = -1;
static int64_t opt_timeout_ms = 60000;

static const struct option bench_options[] = {
	OPT_STRING(0, "kubeconfig", &opt_kubeconfig, "<path>",
		   "kubeconfig of the fake (default: $KUBECONFIG, ~/.kube)"),
	OPT_STRING(0, "context", &opt_context, "<name>", "kubeconfig context"),
	OPT_STRING(0, "namespace", &opt_namespace, "<ns>",
		   "namespace of the claims (default: the context's)"),
	OPT_STRING(0, "template", &opt_template, "<name>",
		   "SandboxTemplate of the claims (v1beta1: the warm pool)"),
	OPT_STRING(0, "api-version", &opt_api_version, "<v>",
		   "agent-sandbox API version (default: discover)"),
	OPT_INT(0, "n", &opt_n,
		"measured claims (ready, 20) or requests (forward, 2000)"),
	OPT_INT(0, "warmup", &opt_warmup,
		"unmeasured ones first (ready 2, forward 100 each)"),
	OPT_DURATION(0, "timeout", &opt_timeout_ms,
		     "wait at most this long for one claim to be Ready"),
	OPT_STRING(0, "state-dir", &opt_state_dir, "<dir>",
		   "fake-kube's --state-dir (forward: the runtime sockets)"),
	OPT_STRING(0, "claim", &opt_claim, "<name>",
		   "forward: use this Ready claim (default: create one)"),
	OPT_STRING(0, "command", &opt_command, "<sh-text>",
		   "forward: the command of POST /execute (default: true)"),
	OPT_END(),
};

static const char *const bench_usage[] = {
	"bench-kube ready [--kubeconfig=<path>] [--n=<n>] [--warmup=<n>] "
	"[--template=<name>]",
	"bench-kube forward [--kubeconfig=<path>] --state-dir=<dir> "
	"[--claim=<name>] [--n=<n>] [--warmup=<n>]",
	NULL,
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* The API client of both subcommands. */
struct bench {
	struct kube_config cfg;
	struct kube_client kc;
	int kc_ready;
};

static int bench_init(struct bench *b)
{
	struct kube_load_opts lo = { 0 };

	memset(b, 0, sizeof(*b));
	lo.kubeconfig = opt_kubeconfig;
	lo.context = opt_context;
	if (kube_config_load(&b->cfg, &lo) < 0)
		return -1;
	if (kube_client_init(&b->kc, &b->cfg, opt_namespace) < 0)
		return -1;
	b->kc_ready = 1;
	return kube_discover(&b->kc, opt_api_version);
}

static void bench_release(struct bench *b)
{
	if (b->kc_ready)
		kube_client_release(&b->kc);
	kube_config_release(&b->cfg);
}

/* GET /fake/state (fake-kube's test knob): a new reference or NULL. */
static json_t *fake_state(struct bench *b)
{
	json_t *out = NULL;

	if (http_json(b->kc.http, "GET", "/fake/state", NULL, NULL, &out) < 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* The entry of kind/name in the "objects" of a fake state, or NULL. */
static json_t *state_object(json_t *st, const char *kind, const char *ns,
			    const char *name)
{
	json_t *it;
	size_t i;

	json_array_foreach (json_object_get(st, "objects"), i, it) {
		const char *k = json_object_str(it, "kind");
		const char *n = json_object_str(it, "name");
		const char *s = json_object_str(it, "namespace");

		if (k && n && s && !strcmp(k, kind) && !strcmp(n, name) &&
		    !strcmp(s, ns))
			return it;
	}
	return NULL;
}

/*
 * Create a claim as backend-kube does (template, gosbx labels, TTL);
 * name and rv get what the server answered.
 */
static int create_claim(struct bench *b, struct kube_claim *c)
{
	struct kube_claim_spec spec = { 0 };
	struct strbuf session = STRBUF_INIT;
	int ret;

	strbuf_addf(&session, "bench-kube-%ld", (long)getpid());
	spec.template_name = opt_template;
	spec.warm_pool = opt_template;
	spec.session = session.buf;
	spec.ttl_s = 3600;
	ret = kube_claim_create(&b->kc, &spec, c);
	strbuf_release(&session);
	return ret;
}

/*
 * One claim of `ready`: 0 with *client_us (create POST to Ready seen)
 * and *fake_us, *to_recv_us, *seen_us (fake received the create ->
 * fake set Ready; our start -> fake received; fake set Ready -> we
 * saw it), or -1 with the error reported.
 */
static int ready_once(struct bench *b, int64_t *client_us, int64_t *fake_us,
		      int64_t *to_recv_us, int64_t *seen_us)
{
	struct kube_claim c;
	struct kube_ready r;
	json_t *st = NULL, *o;
	int64_t recv_us = 0, ready_us = 0;
	uint64_t t0, t1;
	int ret = -1, created = 0;

	kube_claim_init(&c);
	kube_ready_init(&r);
	t0 = monotonic_us();
	if (create_claim(b, &c) < 0)
		goto out;
	created = 1;
	if (kube_claim_wait_ready(&b->kc, c.namespace.buf, c.name.buf,
				  c.resource_version.buf, (long)opt_timeout_ms,
				  &interrupted, &r) < 0)
		goto out;
	t1 = monotonic_us();
	st = fake_state(b);
	o = state_object(st, "SandboxClaim", c.namespace.buf, c.name.buf);
	if (!o || json_object_int(o, "receivedUs", &recv_us) < 0 ||
	    json_object_int(o, "readyUs", &ready_us) < 0 || !recv_us ||
	    !ready_us) {
		error("no receivedUs/readyUs for claim %s in GET /fake/state "
		      "(not a fake-kube that has them?)",
		      c.name.buf);
		goto out;
	}
	*client_us = (int64_t)(t1 - t0);
	*fake_us = ready_us - recv_us;
	*to_recv_us = recv_us - (int64_t)t0;
	*seen_us = (int64_t)t1 - ready_us;
	ret = 0;
out:
	if (created && kube_claim_delete(&b->kc, c.namespace.buf, c.name.buf))
		ret = -1;
	json_decref(st);
	kube_claim_release(&c);
	kube_ready_release(&r);
	return ret;
}

static int cmd_ready(int argc, const char **argv)
{
	struct bench_samples client = { 0 }, fake = { 0 }, over = { 0 };
	struct bench_samples to_recv = { 0 }, seen = { 0 };
	struct bench b;
	int n = opt_n >= 0 ? opt_n : 20,
	    warmup = opt_warmup >= 0 ? opt_warmup : 2;
	int i, errors = 0;

	if (bench_init(&b) < 0) {
		bench_release(&b);
		return 1;
	}
	for (i = 0; i < warmup + n && !interrupted; i++) {
		int64_t cu = 0, fu = 0, ru = 0, su = 0;

		if (ready_once(&b, &cu, &fu, &ru, &su) < 0) {
			errors++;
			if (errors > 3)
				break;
			continue;
		}
		if (i < warmup)
			continue;
		bench_samples_add(&client, cu * 1000);
		bench_samples_add(&fake, fu * 1000);
		bench_samples_add(&over, (cu - fu) * 1000);
		bench_samples_add(&to_recv, ru * 1000);
		bench_samples_add(&seen, su * 1000);
	}
	printf("bench=kube-ready n=%d errors=%d samples=%zu", n, errors,
	       over.nr);
	bench_print_stats(&over, "overhead_");
	bench_print_stats(&client, "client_");
	bench_print_stats(&fake, "fake_");
	bench_print_stats(&to_recv, "to_received_");
	bench_print_stats(&seen, "ready_seen_");
	printf("\n");
	bench_samples_release(&client);
	bench_samples_release(&fake);
	bench_samples_release(&over);
	bench_samples_release(&to_recv);
	bench_samples_release(&seen);
	bench_release(&b);
	return errors || interrupted || over.nr != (size_t)n ? 1 : 0;
}

/* Check an /execute answer: 200, JSON with "exit_code": 0. */
static int execute_ok(const struct http_resp *resp, const char *what)
{
	json_t *root;
	int64_t code = -1;

	if (resp->status != 200) {
		if (bench_may_report())
			error("%s: HTTP %ld: %.200s", what, resp->status,
			      resp->body.buf);
		return -1;
	}
	root = json_loadb(resp->body.buf, resp->body.len, 0, NULL);
	if (!root || json_object_int(root, "exit_code", &code) < 0 ||
	    code != 0) {
		if (bench_may_report())
			error("%s: command failed: %.200s", what,
			      resp->body.buf);
		json_decref(root);
		return -1;
	}
	json_decref(root);
	return 0;
}

/* One POST /execute; its time in us, or -1 (reported). */
static int64_t execute_once(struct http_client *h, const struct strbuf *body,
			    struct http_resp *resp, const char *what)
{
	struct http_req req = { 0 };
	uint64_t t0, t1;

	req.method = "POST";
	req.path = "/execute";
	req.body = body->buf;
	req.body_len = body->len;
	req.content_type = "application/json";
	req.timeout_ms = 60000;
	t0 = monotonic_us();
	if (http_request(h, &req, resp) < 0)
		return -1;
	t1 = monotonic_us();
	if (execute_ok(resp, what) < 0)
		return -1;
	return (int64_t)(t1 - t0);
}

/* The runtime socket of sandbox name (fake state), under --state-dir. */
static int runtime_socket(struct bench *b, const char *ns, const char *name,
			  struct strbuf *path)
{
	json_t *st = fake_state(b), *it;
	size_t i;
	int ret = -1;

	json_array_foreach (json_object_get(st, "runtimes"), i, it) {
		const char *n = json_object_str(it, "name");
		const char *s = json_object_str(it, "namespace");
		const char *sock = json_object_str(it, "socket");

		if (n && s && sock && !strcmp(n, name) && !strcmp(s, ns) &&
		    json_is_true(json_object_get(it, "ready"))) {
			strbuf_addf(path, "%s/%s", opt_state_dir, sock);
			ret = 0;
			break;
		}
	}
	if (ret < 0)
		error("no ready runtime of sandbox %s/%s in GET /fake/state",
		      ns, name);
	json_decref(st);
	return ret;
}

/* The forward and its client, as backend-kube builds them. */
struct fwd {
	struct http_client *api; /* the forward's own API client */
	struct kube_forward *f;
	struct strvec headers;
	struct http_client *http; /* through the forward */
};

static int fwd_start(struct bench *b, struct fwd *w, const char *sandbox,
		     const char *pod_ip)
{
	struct strvec names = STRVEC_INIT, ips = STRVEC_INIT;
	struct kube_forward_opts fo = { 0 };
	struct http_client_opts ho = { 0 };
	struct kube_auth a;
	int ret = -1;

	kube_auth_init(&a);
	if (kube_router_pods(&b->kc, NULL, &names, &ips) < 0)
		goto out;
	if (!names.nr) {
		error("no ready sandbox-router pod in namespace '%s'",
		      b->kc.namespace);
		goto out;
	}
	if (kube_config_auth(&b->cfg, &a) < 0)
		goto out;
	w->api = http_client_dup(b->kc.http);
	if (!w->api)
		goto out;
	fo.client = w->api;
	fo.bearer_token = a.bearer_token.len ? a.bearer_token.buf : NULL;
	fo.namespace = b->kc.namespace;
	fo.pod = names.v[0];
	fo.port = ROUTER_PORT;
	w->f = kube_forward_start(&fo);
	if (!w->f)
		goto out;
	strvec_pushf(&w->headers, "X-Sandbox-ID: %s", sandbox);
	strvec_pushf(&w->headers, "X-Sandbox-Namespace: %s", b->kc.namespace);
	strvec_push(&w->headers, "X-Sandbox-Port: " RUNTIME_PORT);
	if (pod_ip && *pod_ip)
		strvec_pushf(&w->headers, "X-Sandbox-Pod-IP: %s", pod_ip);
	strvec_pushf(&w->headers, "X-Sandbox-Timeout: %d", ROUTER_TIMEOUT_S);
	ho.unix_socket = kube_forward_address(w->f);
	ho.connect_timeout_ms = 30000;
	ho.headers = w->headers.v;
	w->http = http_client_new("http://localhost", &ho);
	if (w->http)
		ret = 0;
out:
	kube_auth_release(&a);
	strvec_clear(&names);
	strvec_clear(&ips);
	return ret;
}

static void fwd_stop(struct fwd *w)
{
	http_client_free(w->http);
	kube_forward_stop(w->f);
	http_client_free(w->api);
	strvec_clear(&w->headers);
}

/* Find or create (*created = 1) the kept claim; sandbox and pod IP. */
static int kept_claim(struct bench *b, struct strbuf *name,
		      struct strbuf *sandbox, struct strbuf *pod_ip,
		      int *created)
{
	struct kube_claim c;
	struct kube_ready r;
	int ret = -1;

	kube_claim_init(&c);
	kube_ready_init(&r);
	if (opt_claim) {
		int g = kube_claim_get(&b->kc, NULL, opt_claim, &c);

		if (g > 0)
			error("no claim '%s'", opt_claim);
		if (g)
			goto out;
		if (!c.ready || !c.sandbox.len) {
			error("claim '%s' is not Ready", opt_claim);
			goto out;
		}
		strbuf_addstr(name, opt_claim);
		strbuf_addbuf(sandbox, &c.sandbox);
	} else {
		if (create_claim(b, &c) < 0)
			goto out;
		*created = 1;
		strbuf_addbuf(name, &c.name);
		if (kube_claim_wait_ready(
			    &b->kc, NULL, c.name.buf, c.resource_version.buf,
			    (long)opt_timeout_ms, &interrupted, &r) < 0)
			goto out;
		strbuf_addbuf(sandbox, &r.sandbox);
		if (r.pod_ips.nr)
			strbuf_addstr(pod_ip, r.pod_ips.v[0]);
	}
	ret = 0;
out:
	kube_claim_release(&c);
	kube_ready_release(&r);
	return ret;
}

static int cmd_forward(int argc, const char **argv)
{
	struct bench_samples fw = { 0 }, direct = { 0 };
	struct strbuf name = STRBUF_INIT, sandbox = STRBUF_INIT;
	struct strbuf pod_ip = STRBUF_INIT, sock = STRBUF_INIT;
	struct strbuf body = STRBUF_INIT;
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_client_opts ho = { 0 };
	struct http_client *rt = NULL;
	struct fwd w = { 0 };
	struct bench b;
	json_t *cmd;
	unsigned long tunnels = 0;
	int n = opt_n >= 0 ? opt_n : 2000;
	int warmup = opt_warmup >= 0 ? opt_warmup : 100;
	int i, errors = 0, created = 0, ret = 1;
	double fm, dm;

	strvec_init(&w.headers);
	if (!opt_state_dir) {
		error("forward needs --state-dir (fake-kube's)");
		return 129;
	}
	if (bench_init(&b) < 0)
		goto out;
	if (kept_claim(&b, &name, &sandbox, &pod_ip, &created) < 0)
		goto out;
	if (runtime_socket(&b, b.kc.namespace, sandbox.buf, &sock) < 0)
		goto out;
	if (fwd_start(&b, &w, sandbox.buf, pod_ip.buf) < 0)
		goto out;
	ho.unix_socket = sock.buf;
	ho.connect_timeout_ms = 30000;
	rt = http_client_new("http://localhost", &ho);
	if (!rt)
		goto out;
	cmd = json_pack("{s:s}", "command", opt_command);
	json_dump_into(&body, cmd);
	json_decref(cmd);

	/* alternate, so that both see the same machine */
	for (i = 0; i < warmup && !interrupted; i++) {
		if (execute_once(w.http, &body, &resp, "port-forward") < 0 ||
		    execute_once(rt, &body, &resp, "runtime socket") < 0) {
			errors++;
			goto out;
		}
	}
	tunnels = kube_forward_tunnels(w.f);
	for (i = 0; i < n && !interrupted; i++) {
		int64_t us = execute_once(w.http, &body, &resp, "port-forward");

		if (us >= 0)
			bench_samples_add(&fw, us * 1000);
		else
			errors++;
		us = execute_once(rt, &body, &resp, "runtime socket");
		if (us >= 0)
			bench_samples_add(&direct, us * 1000);
		else
			errors++;
	}
	tunnels = kube_forward_tunnels(w.f) - tunnels;
	fm = bench_pct_us(&fw, 50);
	dm = bench_pct_us(&direct, 50);
	printf("bench=kube-forward n=%d errors=%d tunnels=%lu samples=%zu "
	       "added_median_us=%.1f",
	       n, errors, tunnels, fw.nr, fm - dm);
	bench_print_stats(&fw, "forward_");
	bench_print_stats(&direct, "direct_");
	printf("\n");
	ret = errors || interrupted || fw.nr != (size_t)n ? 1 : 0;
out:
	http_client_free(rt);
	fwd_stop(&w);
	if (created && kube_claim_delete(&b.kc, NULL, name.buf) < 0)
		ret = 1;
	bench_release(&b);
	http_resp_release(&resp);
	strbuf_release(&name);
	strbuf_release(&sandbox);
	strbuf_release(&pod_ip);
	strbuf_release(&sock);
	strbuf_release(&body);
	bench_samples_release(&fw);
	bench_samples_release(&direct);
	return ret;
}

static const struct bench_cmd subcommands[] = {
	{ "forward", cmd_forward, 0 },
	{ "ready", cmd_ready, 0 },
};

int main(int argc, const char **argv)
{
	struct sigaction sa = { 0 };

	progname = "bench-kube";
	/* stop cleanly (the claims are deleted) on Ctrl-C or SIGTERM */
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return bench_main(argc, argv, subcommands, ARRAY_SIZE(subcommands),
			  bench_usage, bench_options);
}
