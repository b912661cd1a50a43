#include "compat.h"
#include "crd-schema.h"
#include "json.h"
#include "proto/websocket.h"
#include "parse-options.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"
#include "yaml-json.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

/*
 * fake-kube: a fake Kubernetes API server for the tests of the kube
 * backend (Documentation/protocol/kubernetes.md, "Testing without a cluster").
 * It speaks the wire protocol of kube-apiserver for the objects gosbx uses,
 * plays the agent-sandbox controller and the v0.4.6 sandbox-router, and starts
 * one real gosbx-runtime per Sandbox: a local process
 * (--runtime; the args of the pod's first container follow its own, with
 * "$(VAR)" from the container's env: a value or the pod IP through
 * fieldRef status.podIP, as a kubelet expands them), or the runtime image in a
 * container (--runtime-cmd, e.g. podman run; its port published on 127.0.0.1
 * plays the pod's 8888, Ready once GET / answers 200 as the template's
 * readinessProbe).
 *
 * Usage: see usage_lines and the option table in main() (-h); the test
 * helpers in t/lib-kube.sh start it. Summary of the behaviour:
 *
 * Transport: HTTPS (--cert, --key, --client-ca; every request must
 * present a client certificate signed by the client CA, else 401
 * Unauthorized, like kind without anonymous access) or plain HTTP
 * (--insecure-http). With --api-token-file=<file>, every API request
 * (not the /fake/ knobs, not the router) must also carry
 * "Authorization: Bearer <the file's contents, trimmed>", read anew
 * for each request so that a test can rotate it; else 401
 * Unauthorized. Listens on 127.0.0.1:--port (0 picks one) and
 * prints "fake-kube: listening on https://127.0.0.1:<port>" and
 * "fake-kube: router on http://127.0.0.1:<port>" on stdout; with
 * --info-file also writes {"url","router","pid","release","stateDir"}
 * (and "podNetwork") there (atomically) once listening. SIGTERM/SIGINT
 * stop it and its runtimes.
 *
 * REST: /api/v1 (pods, services, events; GET /api/v1/namespaces/<ns>
 * answers an Active Namespace for any name), /apis/discovery.k8s.io/v1
 * (endpointslices), /apis/agents.x-k8s.io/<v> (sandboxes) and
 * /apis/extensions.agents.x-k8s.io/<v> (sandboxclaims,
 * sandboxtemplates, sandboxwarmpools), with the versions of --release:
 * v0.4.6 serves v1alpha1; v0.5.6 stores v1beta1 and serves v1alpha1 too
 * (deprecated: a "Warning: 299 - ..." header). Verbs: create (POST,
 * generateName + 5 characters of [bcdfghjklmnpqrstvwxz2456789]), get,
 * list (labelSelector: =, ==, !=, in, notin, exists, !exists;
 * fieldSelector: =, !=, on metadata.name and metadata.namespace, any
 * dotted path for the core kinds), watch, update (PUT; the CRD kinds
 * need metadata.resourceVersion, a stale one is 409 Conflict; .../status
 * changes the status only, the main resource keeps it), patch (merge
 * patch; strategic merge patch taken as a merge patch; JSON patch add,
 * remove, replace, test; others 415), delete (answers the object; 404
 * when missing). metadata.resourceVersion is one global counter,
 * generation grows when the spec changes. Errors are Status objects
 * (reasons NotFound, AlreadyExists, Invalid, Conflict, BadRequest,
 * Forbidden, Unauthorized, MethodNotAllowed, UnsupportedMediaType).
 * Bodies of the agent-sandbox kinds are validated against the CRDs of
 * --crds (t/helper/crd-schema.h, defaults applied), strict by default
 * (?fieldValidation=Warn|Ignore prune instead); errors are 422 Invalid
 * with details.causes[] {reason, message, field}.
 *
 * RBAC light: --forbid=<verb>:<resource> (repeatable; resource may
 * carry "/subresource"; "*" matches any verb or resource) answers 403
 * Forbidden; port-forward is verb "get" on "pods/portforward" for a
 * WebSocket GET ("create" for POST), and from --server-version v1.35
 * on "get" and "create" (kubernetes/kubernetes#78741). POST
 * /apis/authorization.k8s.io/v1/selfsubjectaccessreviews answers
 * status.allowed from the same list.
 *
 * Claim conversion (v0.5.6, as upstream's conversion webhook): a
 * v1alpha1 claim {sandboxTemplateRef: T, warmpool: W} is stored as
 * v1beta1 with warmPoolRef.name = W when W is set and is not "default"
 * or "none", else "shadow-pool-T"; the controller binds every v0.5
 * claim through that pool, which must exist (else WarmPoolNotFound).
 * T and W are kept in the annotations
 * fake-kube.gosbx/sandbox-template-ref and fake-kube.gosbx/warmpool so
 * the claim reads back unchanged as v1alpha1. A native v1beta1 claim
 * read as v1alpha1 gets sandboxTemplateRef.name = the pool's template
 * (the pool's name when the pool does not exist) and warmpool = the
 * pool name. The other kinds convert by changing apiVersion only.
 *
 * Watch: ?watch=1 streams {"type":...,"object":...} lines from a
 * history of --watch-window events; an older resourceVersion gets an
 * ERROR event with a 410 Expired Status (reason "Expired" as the real
 * server says); BOOKMARK events every --bookmark-interval ms with
 * allowWatchBookmarks=true; the stream ends after timeoutSeconds.
 *
 * Pod IPs: <--pod-ip-prefix, default 10.244>.x.y, one per pod; with a
 * loopback prefix (127.<n>) a runtime told its pod IP can listen there,
 * as a pod does on the pod network (t/t3112: the SDKs' in-cluster
 * connectivity).
 *
 * Controller: see the comment above controller_tick(). Objects made
 * at start: the router Service/Pod/EndpointSlice in --namespace,
 * --template=<name> (a minimal SandboxTemplate), --warm-pool=<name>:
 * <template>[:<replicas>], and the documents of --load=<file>.
 * Router and port-forward: see the comments above router_handler() and
 * tunnel_main(); GET .../pods/<pod>/portforward?ports=<p> with a
 * WebSocket upgrade (v4.channel.k8s.io only) reaches the router on a
 * router pod's 8080 and the runtime on a sandbox pod's 8888.
 *
 * A real router in place of the imitation: --router-upstream=
 * http://127.0.0.1:<port> makes the port-forward to a router pod's 8080
 * connect there instead, and --pod-network-port=<port> (0 picks one)
 * serves the pod network that router reaches the pods through: a plain
 * HTTP forward proxy (the router's HTTP_PROXY) that takes requests in
 * absolute form, "GET http://<podIP>:8888/<path>", to the runtime of
 * the sandbox Pod with that IP (see pod_network_handler()). It is
 * printed as "fake-kube: pod network on http://127.0.0.1:<port>" and
 * is "podNetwork" in --info-file. t/lib-kube.sh runs the upstream
 * v0.4.6 router this way (GOSBX_TEST_UPSTREAM_ROUTER).
 * Test knobs: see fake_handler().
 *
 * For gosbx doctor: GET /version says gitVersion --server-version
 * (default v1.31.0; e.g. v1.35.2-gke.1269000 plays GKE). GET
 * /apis/apps/v1/namespaces/agent-sandbox-system/deployments/
 * agent-sandbox-controller answers a Deployment with spec.replicas and
 * status.readyReplicas of --controller=<ready>:<replicas> (404 without
 * it). GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/
 * <plural>.<group> answers the CRD of --crds as loaded: --crds=<dir>
 * pointing at an edited copy plays another CRD (e.g. GKE's
 * SandboxTemplate without spec.service). See handle_cluster_extra().
 */

static const char *const usage_lines[] = {
	"fake-kube [--port=<n>] (--cert=<pem> --key=<pem> --client-ca=<pem> | "
	"--insecure-http) [--release=<v>] [--crds=<dir>] [--runtime=<path>] "
	"[--state-dir=<dir>] [<options>]",
	NULL
};

#define STATUS_OK 200
#define MAX_BODY (3 * 1024 * 1024)
#define ANN_POD_NAME "agents.x-k8s.io/pod-name"
#define ANN_TEMPLATE "fake-kube.gosbx/sandbox-template-ref"
#define ANN_WARMPOOL "fake-kube.gosbx/warmpool"
#define LABEL_POOL "agents.x-k8s.io/sandbox-warm-pool"
#define LABEL_SANDBOX "agents.x-k8s.io/sandbox-name-hash"
#define ROUTER_SVC "sandbox-router-svc"

/* ------------------------------------------------------------------ */
/* Options and global state */

struct config {
	int port, router_port;
	int pod_network_port;	     /* --pod-network-port; -1: none */
	const char *router_upstream; /* --router-upstream: the real router */
	const char *cert, *key, *client_ca;
	int insecure_http;
	const char *api_token_file;
	const char *release;
	const char *crds_dir;
	const char *runtime;
	const char *runtime_cmd;   /* --runtime-cmd: e.g. podman run ... */
	int legacy_sandbox_status; /* status.sandbox.Name, not .name */
	int clock_skew_s;	   /* the server's clock minus the host's */
	const char *state_dir;
	const char *pod_ip_prefix; /* --pod-ip-prefix: first two octets */
	int ready_delay_ms;
	int watch_window;
	int bookmark_ms;
	int router_timeout_s;
	int router_websocket; /* pass WebSocket upgrades (v0.5.2+) */
	const char *router_token;
	const char *namespace;
	const char *info_file;
	const char *server_version; /* gitVersion of GET /version */
	const char *controller;	    /* --controller=<ready>:<replicas> */
	int controller_ready, controller_replicas;
	struct strvec stuck, warm_pools, templates, forbid, loads;
};

static struct config cfg;

/* The kinds this server knows. */
enum kind_id {
	K_POD,
	K_SERVICE,
	K_EVENT,
	K_ENDPOINTSLICE,
	K_SANDBOX,
	K_CLAIM,
	K_TEMPLATE,
	K_WARMPOOL,
	K_NR
};

struct kind {
	const char *group; /* "" for the core group */
	const char *plural;
	const char *singular;
	const char *kind;
	const char *short_name; /* or NULL */
	int crd;	/* an agent-sandbox kind, validated by its CRD */
	int has_status; /* a status subresource */
};

static const struct kind kinds[K_NR] = {
	[K_POD] = { "", "pods", "pod", "Pod", "po", 0, 1 },
	[K_SERVICE] = { "", "services", "service", "Service", "svc", 0, 1 },
	[K_EVENT] = { "", "events", "event", "Event", "ev", 0, 0 },
	[K_ENDPOINTSLICE] = { "discovery.k8s.io", "endpointslices",
			      "endpointslice", "EndpointSlice", NULL, 0, 0 },
	[K_SANDBOX] = { "agents.x-k8s.io", "sandboxes", "sandbox", "Sandbox",
			"sandbox", 1, 1 },
	[K_CLAIM] = { "extensions.agents.x-k8s.io", "sandboxclaims",
		      "sandboxclaim", "SandboxClaim", "sandboxclaim", 1, 1 },
	[K_TEMPLATE] = { "extensions.agents.x-k8s.io", "sandboxtemplates",
			 "sandboxtemplate", "SandboxTemplate",
			 "sandboxtemplate", 1, 0 },
	[K_WARMPOOL] = { "extensions.agents.x-k8s.io", "sandboxwarmpools",
			 "sandboxwarmpool", "SandboxWarmPool", "swp", 1, 1 },
};

/* A stored object, in its storage version. */
struct obj {
	enum kind_id kind;
	char *ns, *name;
	json_t *body;
	uint64_t created_ms; /* monotonic */
	/* claims, CLOCK_MONOTONIC us (perf): create received, Ready=True */
	uint64_t received_us, ready_us;
};

/* One entry of the watch history. */
struct event {
	uint64_t rv;
	enum kind_id kind;
	const char *type; /* ADDED, MODIFIED, DELETED */
	json_t *obj;	  /* snapshot, storage version */
};

/* A gosbx-runtime serving one Sandbox. */
struct runtime {
	char *ns, *name; /* the Sandbox */
	char *uid;
	pid_t pid;
	int port;	    /* --runtime-cmd: 127.0.0.1:<port>; 0: sock */
	char *sock;	    /* socket path relative to the state dir */
	char *workdir;	    /* absolute */
	int ready;	    /* its socket accepted a connection */
	uint64_t killed_ms; /* when SIGTERM was sent, 0 if running */
};

/* An open port-forward. */
struct tunnel {
	int ws_fd, backend_fd;
	int broken;
	struct tunnel *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t changed; /* a new event, or stopping */
	uint64_t rv;		/* the last resourceVersion handed out */
	struct obj **objs;
	size_t nr_objs, alloc_objs;
	struct event *events; /* ring of cfg.watch_window */
	size_t ev_start, ev_nr;
	uint64_t floor_rv; /* history is complete after this rv */
	struct runtime **rts;
	size_t nr_rts, alloc_rts;
	struct tunnel *tunnels;
	int nr_tunnels;
	int nr_watches;
	int stopping;
	int release_v05; /* 0: v0.4.6, 1: v0.5.6 */
	struct crd_set crds;
	int have_crds;
	int state_dirfd;
	char *router_url;
	int api_port;
	int router_port;
	char *pod_network_url; /* NULL without --pod-network-port */
	struct sockaddr_in router_upstream;
	/* fault injection (POST /fake/fail, /fake/outage, /fake/router-fail) */
	struct fault {
		char *verb, *resource, *message;
		int status, count, retry_after;
		int as_event; /* a watch answered 200 with an ERROR event */
	} faults[16];
	size_t nr_faults;
	uint64_t outage_until_ms; /* monotonic; API requests dropped until */
	char *outage_on;	  /* armed: "<verb>:<resource>" starts it */
	int outage_ms;
	int router_fail_status, router_fail_count;
} S = { .lock = PTHREAD_MUTEX_INITIALIZER,
	.changed = PTHREAD_COND_INITIALIZER,
	.state_dirfd = -1 };

/* ------------------------------------------------------------------ */
/* Small utilities */

/* The server's clock: the wall clock plus --clock-skew. */
static time_t fake_now(void)
{
	return time(NULL) + cfg.clock_skew_s;
}

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* RFC 3339 UTC with seconds, as metav1.Time. */
static void add_time(struct strbuf *sb, time_t t)
{
	struct tm tm;
	char buf[32];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	strbuf_addstr(sb, buf);
}

static json_t *json_now(void)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *v;

	add_time(&sb, fake_now());
	v = json_string(sb.buf);
	strbuf_release(&sb);
	return v;
}

/* Parse RFC 3339 ("2026-01-02T03:04:05Z", fractions, offsets). */
static int parse_rfc3339(const char *s, time_t *out)
{
	struct tm tm;
	const char *p;
	int sign, oh, om;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -1;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	t = timegm(&tm);
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		if (sscanf(p + 1, "%2d:%2d", &oh, &om) != 2)
			return -1;
		t -= sign * (oh * 3600 + om * 60);
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	*out = t;
	return 0;
}

static unsigned rand_u32(void)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t state;
	uint64_t x;

	pthread_mutex_lock(&m);
	if (!state)
		state = wall_ms() ^ ((uint64_t)getpid() << 32) ^
			0x9e3779b97f4a7c15ull;
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	x = state;
	pthread_mutex_unlock(&m);
	return (unsigned)(x >> 16);
}

/* Five characters from apimachinery's name suffix alphabet. */
static void add_suffix(struct strbuf *sb)
{
	static const char alpha[] = "bcdfghjklmnpqrstvwxz2456789";
	int i;

	for (i = 0; i < 5; i++)
		strbuf_addch(sb, alpha[rand_u32() % (sizeof(alpha) - 1)]);
}

static char *new_uid(void)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned char b[16];
	size_t i;

	for (i = 0; i < sizeof(b); i++)
		b[i] = (unsigned char)rand_u32();
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	for (i = 0; i < sizeof(b); i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			strbuf_addch(&sb, '-');
		strbuf_addf(&sb, "%02x", b[i]);
	}
	return strbuf_detach(&sb, NULL);
}

static const char *group_version_of(enum kind_id k, const char *version,
				    struct strbuf *sb)
{
	strbuf_reset(sb);
	if (*kinds[k].group)
		strbuf_addf(sb, "%s/", kinds[k].group);
	strbuf_addstr(sb, version);
	return sb->buf;
}

/* The version objects of a kind are stored in. */
static const char *storage_version(enum kind_id k)
{
	if (!kinds[k].crd)
		return "v1";
	return S.release_v05 ? "v1beta1" : "v1alpha1";
}

static int version_served(enum kind_id k, const char *v)
{
	if (!kinds[k].crd)
		return !strcmp(v, "v1");
	if (!strcmp(v, "v1alpha1"))
		return 1;
	return S.release_v05 && !strcmp(v, "v1beta1");
}

static json_t *meta_of(json_t *o)
{
	json_t *m = json_object_get(o, "metadata");

	if (!json_is_object(m)) {
		m = json_object();
		json_object_set_new(o, "metadata", m);
	}
	return m;
}

static json_t *sub_object(json_t *o, const char *key)
{
	json_t *m = json_object_get(o, key);

	if (!json_is_object(m)) {
		m = json_object();
		json_object_set_new(o, key, m);
	}
	return m;
}

static const char *meta_str(const json_t *o, const char *key)
{
	return json_object_str(json_object_get(o, "metadata"), key);
}

static const char *annotation(const json_t *o, const char *key)
{
	return json_object_str(
		json_object_get(json_object_get(o, "metadata"), "annotations"),
		key);
}

static const char *label(const json_t *o, const char *key)
{
	return json_object_str(
		json_object_get(json_object_get(o, "metadata"), "labels"), key);
}

/* A dotted path into an object ("spec.sandboxTemplateRef.name"). */
static json_t *json_path(json_t *o, const char *path)
{
	struct strbuf key = STRBUF_INIT;
	const char *p = path, *dot;

	while (o && *p) {
		dot = strchr(p, '.');
		strbuf_reset(&key);
		strbuf_add(&key, p, dot ? (size_t)(dot - p) : strlen(p));
		o = json_object_get(o, key.buf);
		p = dot ? dot + 1 : p + strlen(p);
	}
	strbuf_release(&key);
	return o;
}

static const char *json_path_str(json_t *o, const char *path)
{
	json_t *v = json_path(o, path);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* ------------------------------------------------------------------ */
/* Label and field selectors (apimachinery labels.Parse subset) */

enum sel_op { SEL_EQ, SEL_NE, SEL_IN, SEL_NOTIN, SEL_EXISTS, SEL_NOTEXISTS };

struct sel_req {
	char *key;
	enum sel_op op;
	struct strvec values;
};

struct selector {
	struct sel_req *r;
	size_t nr, alloc;
};

static void selector_release(struct selector *sel)
{
	size_t i;

	for (i = 0; i < sel->nr; i++) {
		free(sel->r[i].key);
		strvec_clear(&sel->r[i].values);
	}
	free(sel->r);
	memset(sel, 0, sizeof(*sel));
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static int is_key_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
	       c == '/';
}

/*
 * Parse a selector: comma-separated requirements "k", "!k", "k=v",
 * "k==v", "k!=v", "k in (a,b)", "k notin (a,b)". With fields set, only
 * "=", "==" and "!=" are allowed (fields.ParseSelector). Returns 0 or
 * -1 with a message in err.
 */
static int parse_selector(const char *s, int fields, struct selector *sel,
			  struct strbuf *err)
{
	const char *p = s, *start;
	struct sel_req *r;

	while (*(p = skip_ws(p))) {
		ALLOC_GROW(sel->r, sel->nr + 1, sel->alloc);
		r = &sel->r[sel->nr++];
		memset(r, 0, sizeof(*r));
		strvec_init(&r->values);
		if (*p == '!' && !fields) {
			r->op = SEL_NOTEXISTS;
			p = skip_ws(p + 1);
		} else {
			r->op = SEL_EXISTS;
		}
		start = p;
		while (is_key_char((unsigned char)*p))
			p++;
		if (p == start)
			goto bad;
		r->key = xstrndup(start, p - start);
		p = skip_ws(p);
		if (r->op == SEL_NOTEXISTS)
			goto next;
		if (*p == '=' || (*p == '!' && p[1] == '=')) {
			r->op = *p == '!' ? SEL_NE : SEL_EQ;
			p += (*p == '!' || p[1] == '=') ? 2 : 1;
			p = skip_ws(p);
			start = p;
			while (*p && *p != ',' && *p != ' ')
				p++;
			strvec_pushf(&r->values, "%.*s", (int)(p - start),
				     start);
		} else if (!fields &&
			   (starts_with(p, "in ") || starts_with(p, "in(") ||
			    starts_with(p, "notin ") ||
			    starts_with(p, "notin("))) {
			r->op = *p == 'i' ? SEL_IN : SEL_NOTIN;
			p = skip_ws(p + (*p == 'i' ? 2 : 5));
			if (*p++ != '(')
				goto bad;
			for (;;) {
				p = skip_ws(p);
				start = p;
				while (*p && *p != ',' && *p != ')' &&
				       *p != ' ')
					p++;
				if (p > start)
					strvec_pushf(&r->values, "%.*s",
						     (int)(p - start), start);
				p = skip_ws(p);
				if (*p == ',') {
					p++;
					continue;
				}
				if (*p != ')')
					goto bad;
				p++;
				break;
			}
		} else if (fields) {
			goto bad;
		}
	next:
		p = skip_ws(p);
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	return 0;
bad:
	strbuf_addf(err, "unable to parse requirement: found '%s'", p);
	return -1;
}

static int selector_matches(const struct selector *sel, json_t *o, int fields)
{
	size_t i, j;
	int hit;

	for (i = 0; i < sel->nr; i++) {
		const struct sel_req *r = &sel->r[i];
		const char *v =
			fields ? json_path_str(o, r->key) : label(o, r->key);

		switch (r->op) {
		case SEL_EXISTS:
			if (!v)
				return 0;
			break;
		case SEL_NOTEXISTS:
			if (v)
				return 0;
			break;
		case SEL_EQ:
			if (!v && fields)
				v = "";
			if (!v || strcmp(v, r->values.v[0]))
				return 0;
			break;
		case SEL_NE:
			if (!v && fields)
				v = "";
			if (v && !strcmp(v, r->values.v[0]))
				return 0;
			break;
		case SEL_IN:
		case SEL_NOTIN:
			hit = 0;
			for (j = 0; v && j < r->values.nr; j++)
				if (!strcmp(v, r->values.v[j]))
					hit = 1;
			if ((r->op == SEL_IN) != hit)
				return 0;
			break;
		}
	}
	return 1;
}

/* The CRDs allow metadata.name and metadata.namespace only. */
static int field_supported(enum kind_id k, const char *key)
{
	if (!strcmp(key, "metadata.name") || !strcmp(key, "metadata.namespace"))
		return 1;
	return !kinds[k].crd;
}

/* ------------------------------------------------------------------ */
/* The store (callers hold S.lock) */

static struct obj *find_obj(enum kind_id k, const char *ns, const char *name)
{
	size_t i;

	for (i = 0; i < S.nr_objs; i++) {
		struct obj *o = S.objs[i];

		if (o->kind == k && !strcmp(o->name, name) &&
		    (!ns || !strcmp(o->ns, ns)))
			return o;
	}
	return NULL;
}

static void set_rv(json_t *body, uint64_t rv)
{
	char buf[32];

	xsnprintf(buf, sizeof(buf), "%" PRIu64, rv);
	json_object_set_new(meta_of(body), "resourceVersion", json_string(buf));
}

static void record_event(const char *type, struct obj *o)
{
	struct event *e;
	size_t idx;

	if (S.ev_nr == (size_t)cfg.watch_window) {
		e = &S.events[S.ev_start];
		S.floor_rv = e->rv;
		json_decref(e->obj);
		S.ev_start = (S.ev_start + 1) % cfg.watch_window;
		S.ev_nr--;
	}
	idx = (S.ev_start + S.ev_nr) % cfg.watch_window;
	e = &S.events[idx];
	e->rv = S.rv;
	e->kind = o->kind;
	e->type = type;
	e->obj = json_deep_copy(o->body);
	S.ev_nr++;
	pthread_cond_broadcast(&S.changed);
}

/*
 * Add a new object (body in the storage version, taken over). A
 * metadata.generateName without a name gets five random characters.
 * Returns the object, or NULL when the name is taken (body freed).
 */
static struct obj *store_add(enum kind_id k, const char *ns, json_t *body)
{
	json_t *meta = meta_of(body);
	const char *name = json_object_str(meta, "name");
	struct strbuf sb = STRBUF_INIT;
	struct obj *o;
	char *uid;
	int tries;

	if (!name || !*name) {
		const char *gen = json_object_str(meta, "generateName");

		for (tries = 0; tries < 100; tries++) {
			strbuf_reset(&sb);
			strbuf_addstr(&sb, gen ? gen : "");
			add_suffix(&sb);
			if (!find_obj(k, ns, sb.buf))
				break;
		}
		json_object_set_new(meta, "name", json_string(sb.buf));
		name = json_object_str(meta, "name");
	}
	strbuf_release(&sb);
	if (find_obj(k, ns, name)) {
		json_decref(body);
		return NULL;
	}
	json_object_set_new(meta, "namespace", json_string(ns));
	uid = new_uid();
	json_object_set_new(meta, "uid", json_string(uid));
	free(uid);
	json_object_set_new(meta, "creationTimestamp", json_now());
	json_object_set_new(meta, "generation", json_integer(1));
	S.rv++;
	set_rv(body, S.rv);
	o = xcalloc(1, sizeof(*o));
	o->kind = k;
	o->ns = xstrdup(ns);
	o->name = xstrdup(name);
	o->body = body;
	o->created_ms = monotonic_ms();
	ALLOC_GROW(S.objs, S.nr_objs + 1, S.alloc_objs);
	S.objs[S.nr_objs++] = o;
	record_event("ADDED", o);
	return o;
}

/* The object's body changed in place: new resourceVersion, MODIFIED. */
static void store_touch(struct obj *o)
{
	S.rv++;
	set_rv(o->body, S.rv);
	record_event("MODIFIED", o);
}

static void runtime_stop(const char *ns, const char *name);

/* Remove an object (DELETED event) and free it. */
static void store_remove(struct obj *o)
{
	size_t i;

	S.rv++;
	set_rv(o->body, S.rv);
	record_event("DELETED", o);
	for (i = 0; i < S.nr_objs; i++) {
		if (S.objs[i] == o) {
			memmove(S.objs + i, S.objs + i + 1,
				(S.nr_objs - i - 1) * sizeof(*S.objs));
			S.nr_objs--;
			break;
		}
	}
	json_decref(o->body);
	free(o->ns);
	free(o->name);
	free(o);
}

static int owned_by(json_t *body, const char *uid)
{
	json_t *refs = json_object_get(meta_of(body), "ownerReferences");
	size_t i;
	json_t *r;

	json_array_foreach (refs, i, r) {
		const char *u = json_object_str(r, "uid");

		if (u && !strcmp(u, uid))
			return 1;
	}
	return 0;
}

/*
 * Delete an object and what the garbage collector would delete with
 * it: a claim's sandbox, a sandbox's pod and runtime, a warm pool's
 * unclaimed sandboxes.
 */
static void delete_cascade(struct obj *o)
{
	char *uid = xstrdup(meta_str(o->body, "uid"));
	char *ns = xstrdup(o->ns), *name = xstrdup(o->name);
	enum kind_id k = o->kind;
	size_t i;

	store_remove(o);
	if (k == K_SANDBOX) {
		struct obj *pod = find_obj(K_POD, ns, name);

		if (pod)
			store_remove(pod);
		runtime_stop(ns, name);
	}
	for (i = 0; i < S.nr_objs;) {
		struct obj *c = S.objs[i];

		if (strcmp(c->ns, ns) || !owned_by(c->body, uid)) {
			i++;
			continue;
		}
		delete_cascade(c);
		i = 0;
	}
	free(uid);
	free(ns);
	free(name);
}

static void set_owner(json_t *body, struct obj *owner)
{
	json_t *refs = json_array(), *r;
	struct strbuf gv = STRBUF_INIT;

	r = json_pack("{s:s,s:s,s:s,s:s,s:b,s:b}", "apiVersion",
		      group_version_of(owner->kind,
				       storage_version(owner->kind), &gv),
		      "kind", kinds[owner->kind].kind, "name", owner->name,
		      "uid", meta_str(owner->body, "uid"), "controller", 1,
		      "blockOwnerDeletion", 1);
	json_array_append_new(refs, r);
	json_object_set_new(meta_of(body), "ownerReferences", refs);
	strbuf_release(&gv);
}

/* ------------------------------------------------------------------ */
/* Conversion between the served versions (see the top comment) */

static json_t *convert_out(struct obj *o, const char *version)
{
	json_t *b = json_deep_copy(o->body);
	struct strbuf gv = STRBUF_INIT;

	json_object_set_new(
		b, "apiVersion",
		json_string(group_version_of(o->kind, version, &gv)));
	json_object_set_new(b, "kind", json_string(kinds[o->kind].kind));
	strbuf_release(&gv);
	if (o->kind == K_CLAIM && S.release_v05 &&
	    !strcmp(version, "v1alpha1")) {
		json_t *spec = sub_object(b, "spec");
		json_t *ann = json_object_get(meta_of(b), "annotations");
		const char *pool = json_path_str(spec, "warmPoolRef.name");
		const char *t = annotation(b, ANN_TEMPLATE);
		const char *w = annotation(b, ANN_WARMPOOL);
		struct obj *p = NULL;

		if (!t && pool && starts_with(pool, "shadow-pool-")) {
			t = pool + strlen("shadow-pool-");
			if (!w)
				w = "default";
		} else if (!t && pool) {
			p = find_obj(K_WARMPOOL, o->ns, pool);
			t = p ? json_path_str(p->body,
					      "spec.sandboxTemplateRef.name")
			      : NULL;
			if (!t)
				t = pool;
		}
		if (!w)
			w = pool;
		json_object_set_new(spec, "sandboxTemplateRef",
				    json_pack("{s:s}", "name", t ? t : ""));
		if (w)
			json_object_set_new(spec, "warmpool", json_string(w));
		json_object_del(spec, "warmPoolRef");
		/* the v1alpha1 schema has neither */
		json_object_del(spec, "volumeClaimTemplates");
		if (ann) {
			json_object_del(ann, ANN_TEMPLATE);
			json_object_del(ann, ANN_WARMPOOL);
			if (!json_object_size(ann))
				json_object_del(meta_of(b), "annotations");
		}
	}
	return b;
}

/* body (of the request's version) into the storage version, in place */
static void convert_in(enum kind_id k, json_t *body, const char *version)
{
	struct strbuf gv = STRBUF_INIT;

	json_object_set_new(
		body, "apiVersion",
		json_string(group_version_of(k, storage_version(k), &gv)));
	strbuf_release(&gv);
	if (k == K_CLAIM && S.release_v05 && !strcmp(version, "v1alpha1")) {
		json_t *spec = sub_object(body, "spec");
		json_t *ann = sub_object(meta_of(body), "annotations");
		const char *t = json_path_str(spec, "sandboxTemplateRef.name");
		const char *w = json_object_str(spec, "warmpool");
		const char *pool = t;

		struct strbuf shadow = STRBUF_INIT;

		if (w && *w && strcmp(w, "default") && strcmp(w, "none")) {
			pool = w;
		} else {
			/* upstream's conversion: the template's shadow pool */
			strbuf_addf(&shadow, "shadow-pool-%s", t ? t : "");
			pool = shadow.buf;
		}
		json_object_set_new(
			spec, "warmPoolRef",
			json_pack("{s:s}", "name", pool ? pool : ""));
		strbuf_release(&shadow);
		json_object_set_new(ann, ANN_TEMPLATE, json_string(t ? t : ""));
		json_object_set_new(ann, ANN_WARMPOOL,
				    json_string(w ? w : "default"));
		json_object_del(spec, "sandboxTemplateRef");
		json_object_del(spec, "warmpool");
	}
}

/* ------------------------------------------------------------------ */
/* HTTP plumbing */

struct req {
	char *uri; /* raw request target, query included */
	struct strbuf body;
	int too_big;
	int seen;		/* the access handler was called once */
	uint64_t start_us;	/* request line received, CLOCK_MONOTONIC */
	struct strvec warnings; /* Warning headers (deprecations, pruning) */
};

static void *uri_logger(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct req *r = xcalloc(1, sizeof(*r));

	r->start_us = monotonic_us();
	r->uri = xstrdup(uri);
	strbuf_init(&r->body, 0);
	strvec_init(&r->warnings);
	return r;
}

static void req_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			  enum MHD_RequestTerminationCode toe)
{
	struct req *r = *con_cls;

	if (!r)
		return;
	free(r->uri);
	strbuf_release(&r->body);
	strvec_clear(&r->warnings);
	free(r);
	*con_cls = NULL;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned code,
				 const char *type, struct strbuf *body,
				 struct req *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	size_t len, i;
	char *buf = strbuf_detach(body, &len);

	resp = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
	if (cfg.clock_skew_s) {
		/* MHD adds the host's Date unless one is there */
		struct tm tm;
		time_t now = fake_now();
		char date[64];

		gmtime_r(&now, &tm);
		strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		MHD_add_response_header(resp, "Date", date);
	}
	for (i = 0; r && i < r->warnings.nr; i++) {
		struct strbuf w = STRBUF_INIT;

		strbuf_addstr(&w, "299 - ");
		json_add_str(&w, r->warnings.v[i]);
		MHD_add_response_header(resp, "Warning", w.buf);
		strbuf_release(&w);
	}
	ret = MHD_queue_response(c, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* Send v (a new reference, consumed) as JSON. */
static enum MHD_Result send_json(struct MHD_Connection *c, unsigned code,
				 json_t *v, struct req *r)
{
	struct strbuf sb = STRBUF_INIT;

	json_dump_into(&sb, v);
	json_decref(v);
	return send_text(c, code, "application/json", &sb, r);
}

static json_t *status_object(unsigned code, const char *reason,
			     const char *message, json_t *details)
{
	json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind",
			       "Status", "apiVersion", "v1", "metadata",
			       "status", "Failure", "message", message,
			       "reason", reason, "code", (int)code);

	if (details)
		json_object_set_new(st, "details", details);
	return st;
}

static enum MHD_Result send_status(struct MHD_Connection *c, unsigned code,
				   const char *reason, struct req *r,
				   const char *fmt, ...) PRINTF_LIKE(5, 6);
static enum MHD_Result send_status(struct MHD_Connection *c, unsigned code,
				   const char *reason, struct req *r,
				   const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;
	json_t *st;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	st = status_object(code, reason, msg.buf, NULL);
	strbuf_release(&msg);
	return send_json(c, code, st, r);
}

/* "sandboxclaims.extensions.agents.x-k8s.io" or "pods" */
static void add_resource_name(struct strbuf *sb, enum kind_id k)
{
	strbuf_addstr(sb, kinds[k].plural);
	if (*kinds[k].group)
		strbuf_addf(sb, ".%s", kinds[k].group);
}

static enum MHD_Result send_not_found(struct MHD_Connection *c, enum kind_id k,
				      const char *name, struct req *r)
{
	struct strbuf res = STRBUF_INIT;
	json_t *st;
	struct strbuf msg = STRBUF_INIT;

	add_resource_name(&res, k);
	strbuf_addf(&msg, "%s \"%s\" not found", res.buf, name);
	st = status_object(404, "NotFound", msg.buf,
			   json_pack("{s:s,s:s,s:s}", "name", name, "group",
				     kinds[k].group, "kind", kinds[k].plural));
	strbuf_release(&res);
	strbuf_release(&msg);
	return send_json(c, 404, st, r);
}

static const char *query(struct MHD_Connection *c, const char *key)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
}

static const char *header(struct MHD_Connection *c, const char *key)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, key);
}

static int query_true(struct MHD_Connection *c, const char *key)
{
	const char *v = query(c, key);

	return v && (!strcmp(v, "1") || !strcmp(v, "true"));
}

/*
 * Client certificates: MHD asks for one when given a trust list
 * (MHD_OPTION_HTTPS_MEM_TRUST) but leaves the verification to us.
 * libmicrohttpd links GnuTLS; its verify function is looked up at run
 * time so that this program needs no -lgnutls.
 */
typedef int (*verify_peers_fn)(void *session, unsigned int *status);
static verify_peers_fn verify_peers;

/*
 * --api-token-file: the request carries "Authorization: Bearer <token>"
 * with the file's current contents (trimmed). A refusal is logged.
 */
static int api_token_ok(struct MHD_Connection *c, const char *method,
			const char *url)
{
	struct strbuf want = STRBUF_INIT;
	const char *h;
	int ok;

	if (!cfg.api_token_file)
		return 1;
	if (strbuf_read_file(&want, cfg.api_token_file, 0) < 0)
		warning_errno("cannot read '%s'", cfg.api_token_file);
	strbuf_trim(&want);
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	ok = want.len && h && !strncasecmp(h, "Bearer ", 7) &&
	     !strcmp(h + 7, want.buf);
	if (!ok)
		fprintf(stderr, "fake-kube: 401 Unauthorized: %s %s (%s)\n",
			method, url,
			h ? "wrong bearer token" : "no Authorization");
	strbuf_release(&want);
	return ok;
}

static int client_cert_ok(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci;
	unsigned int status = 1;

	if (cfg.insecure_http)
		return 1;
	if (!verify_peers)
		return 0;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return 0;
	if (verify_peers(ci->tls_session, &status) < 0)
		return 0;
	return status == 0;
}

/*
 * RBAC light: --forbid=<verb>:<resource> (resource with an optional
 * "/subresource"; "*" matches every verb or resource).
 */
/* The minor version of --server-version ("v1.35.2-gke.1" -> 35). */
static int server_minor(void)
{
	unsigned major = 0, minor = 0;

	if (sscanf(cfg.server_version, "v%u.%u", &major, &minor) != 2)
		return 0;
	return (int)minor;
}

static int forbidden(const char *verb, const char *resource)
{
	size_t i;

	for (i = 0; i < cfg.forbid.nr; i++) {
		const char *f = cfg.forbid.v[i], *colon = strchr(f, ':');

		if (!colon)
			continue;
		if (!(colon - f == 1 && *f == '*') &&
		    (strlen(verb) != (size_t)(colon - f) ||
		     strncmp(f, verb, colon - f)))
			continue;
		if (strcmp(colon + 1, "*") && strcmp(colon + 1, resource))
			continue;
		return 1;
	}
	return 0;
}

static enum MHD_Result send_forbidden(struct MHD_Connection *c,
				      const char *verb, const char *group,
				      const char *resource, const char *ns,
				      struct req *r)
{
	struct strbuf msg = STRBUF_INIT, res = STRBUF_INIT;
	json_t *st;

	strbuf_addstr(&res, resource);
	if (*group)
		strbuf_addf(&res, ".%s", group);
	strbuf_addf(&msg,
		    "%s is forbidden: User \"kubernetes-admin\" cannot %s "
		    "resource \"%s\" in API group \"%s\"",
		    res.buf, verb, resource, group);
	if (ns)
		strbuf_addf(&msg, " in the namespace \"%s\"", ns);
	st = status_object(
		403, "Forbidden", msg.buf,
		json_pack("{s:s,s:s}", "group", group, "kind", resource));
	strbuf_release(&msg);
	strbuf_release(&res);
	return send_json(c, 403, st, r);
}

/* ------------------------------------------------------------------ */
/* Discovery */

static const char *const agent_groups[] = { "agents.x-k8s.io",
					    "extensions.agents.x-k8s.io" };

static json_t *group_versions(const char *group)
{
	json_t *vs = json_array();
	char buf[256];

	if (!strcmp(group, "discovery.k8s.io") ||
	    !strcmp(group, "authorization.k8s.io")) {
		xsnprintf(buf, sizeof(buf), "%s/v1", group);
		json_array_append_new(vs, json_pack("{s:s,s:s}", "groupVersion",
						    buf, "version", "v1"));
		return vs;
	}
	if (S.release_v05) {
		xsnprintf(buf, sizeof(buf), "%s/v1beta1", group);
		json_array_append_new(vs, json_pack("{s:s,s:s}", "groupVersion",
						    buf, "version", "v1beta1"));
	}
	xsnprintf(buf, sizeof(buf), "%s/v1alpha1", group);
	json_array_append_new(vs, json_pack("{s:s,s:s}", "groupVersion", buf,
					    "version", "v1alpha1"));
	return vs;
}

static int known_group(const char *g)
{
	return !strcmp(g, "discovery.k8s.io") ||
	       !strcmp(g, "authorization.k8s.io") ||
	       !strcmp(g, agent_groups[0]) || !strcmp(g, agent_groups[1]);
}

static json_t *api_group(const char *g)
{
	json_t *vs = group_versions(g);

	return json_pack("{s:s,s:s,s:s,s:o,s:O}", "kind", "APIGroup",
			 "apiVersion", "v1", "name", g, "versions", vs,
			 "preferredVersion", json_array_get(vs, 0));
}

static json_t *api_group_list(void)
{
	static const char *const groups[] = { "discovery.k8s.io",
					      "authorization.k8s.io",
					      "agents.x-k8s.io",
					      "extensions.agents.x-k8s.io" };
	json_t *list = json_array();
	size_t i;

	for (i = 0; i < ARRAY_SIZE(groups); i++) {
		json_t *g = api_group(groups[i]);

		json_object_del(g, "kind");
		json_object_del(g, "apiVersion");
		json_array_append_new(list, g);
	}
	return json_pack("{s:s,s:s,s:o}", "kind", "APIGroupList", "apiVersion",
			 "v1", "groups", list);
}

static json_t *resource_entry(enum kind_id k, const char *sub)
{
	json_t *verbs, *e;
	struct strbuf name = STRBUF_INIT;

	strbuf_addstr(&name, kinds[k].plural);
	if (sub)
		strbuf_addf(&name, "/%s", sub);
	if (sub)
		verbs = json_pack("[s,s,s]", "get", "patch", "update");
	else
		verbs = json_pack("[s,s,s,s,s,s,s,s]", "create", "delete",
				  "deletecollection", "get", "list", "patch",
				  "update", "watch");
	e = json_pack("{s:s,s:s,s:b,s:s,s:o}", "name", name.buf, "singularName",
		      sub ? "" : kinds[k].singular, "namespaced", 1, "kind",
		      kinds[k].kind, "verbs", verbs);
	if (!sub && kinds[k].short_name)
		json_object_set_new(e, "shortNames",
				    json_pack("[s]", kinds[k].short_name));
	if (!sub && kinds[k].crd)
		json_object_set_new(e, "categories", json_pack("[]"));
	strbuf_release(&name);
	return e;
}

static json_t *resource_list(const char *group, const char *version)
{
	json_t *res = json_array();
	struct strbuf gv = STRBUF_INIT;
	json_t *out;
	int k;

	if (*group)
		strbuf_addf(&gv, "%s/", group);
	strbuf_addstr(&gv, version);
	if (!strcmp(group, "authorization.k8s.io")) {
		json_array_append_new(
			res,
			json_pack("{s:s,s:s,s:b,s:s,s:[s]}", "name",
				  "selfsubjectaccessreviews", "singularName",
				  "selfsubjectaccessreview", "namespaced", 0,
				  "kind", "SelfSubjectAccessReview", "verbs",
				  "create"));
	}
	for (k = 0; k < K_NR; k++) {
		if (strcmp(kinds[k].group, group) ||
		    !version_served(k, version))
			continue;
		json_array_append_new(res, resource_entry(k, NULL));
		if (kinds[k].has_status)
			json_array_append_new(res, resource_entry(k, "status"));
		if (k == K_POD)
			json_array_append_new(
				res,
				json_pack("{s:s,s:s,s:b,s:s,s:[s,s]}", "name",
					  "pods/portforward", "singularName",
					  "", "namespaced", 1, "kind",
					  "PodPortForwardOptions", "verbs",
					  "create", "get"));
	}
	out = json_pack("{s:s,s:s,s:s,s:o}", "kind", "APIResourceList",
			"apiVersion", "v1", "groupVersion", gv.buf, "resources",
			res);
	strbuf_release(&gv);
	return out;
}

/* ------------------------------------------------------------------ */
/* Watch streams */

struct watch {
	enum kind_id kind;
	char *ns; /* NULL: all namespaces */
	char *version;
	struct selector lsel, fsel;
	uint64_t rv;
	int bookmarks;
	uint64_t deadline_ms, next_bookmark_ms;
	struct strbuf out;
	size_t out_pos;
	int done;
};

static int watch_matches(struct watch *w, enum kind_id k, json_t *body)
{
	const char *ns = meta_str(body, "namespace");

	if (k != w->kind)
		return 0;
	if (w->ns && (!ns || strcmp(ns, w->ns)))
		return 0;
	return selector_matches(&w->lsel, body, 0) &&
	       selector_matches(&w->fsel, body, 1);
}

/* Append one event line (the object converted to the watch's version). */
static void watch_add_event(struct watch *w, const char *type, json_t *body)
{
	struct obj tmp = { .kind = w->kind, .body = body };
	json_t *ev, *o;

	tmp.ns = (char *)meta_str(body, "namespace");
	tmp.name = (char *)meta_str(body, "name");
	if (!tmp.ns)
		tmp.ns = "";
	o = convert_out(&tmp, w->version);
	ev = json_pack("{s:s,s:o}", "type", type, "object", o);
	json_dump_into(&w->out, ev);
	strbuf_addch(&w->out, '\n');
	json_decref(ev);
}

static void watch_add_gone(struct watch *w, uint64_t rv)
{
	struct strbuf msg = STRBUF_INIT;
	json_t *ev;

	strbuf_addf(&msg, "too old resource version: %" PRIu64 " (%" PRIu64 ")",
		    rv, S.floor_rv + 1);
	ev = json_pack("{s:s,s:o}", "type", "ERROR", "object",
		       status_object(410, "Expired", msg.buf, NULL));
	json_dump_into(&w->out, ev);
	strbuf_addch(&w->out, '\n');
	json_decref(ev);
	strbuf_release(&msg);
	w->done = 1;
}

static void watch_add_bookmark(struct watch *w)
{
	struct strbuf gv = STRBUF_INIT;
	char rv[32];
	json_t *ev;

	xsnprintf(rv, sizeof(rv), "%" PRIu64, S.rv);
	ev = json_pack("{s:s,s:{s:s,s:s,s:{s:s}}}", "type", "BOOKMARK",
		       "object", "kind", kinds[w->kind].kind, "apiVersion",
		       group_version_of(w->kind, w->version, &gv), "metadata",
		       "resourceVersion", rv);
	json_dump_into(&w->out, ev);
	strbuf_addch(&w->out, '\n');
	json_decref(ev);
	strbuf_release(&gv);
}

/* Fill w->out with what is due (lock held); may wait on S.changed. */
static void watch_step(struct watch *w)
{
	struct timespec ts;
	uint64_t now, until;
	size_t i;

	for (;;) {
		if (S.stopping) {
			w->done = 1;
			return;
		}
		if (w->rv < S.floor_rv) {
			watch_add_gone(w, w->rv);
			return;
		}
		for (i = 0; i < S.ev_nr; i++) {
			struct event *e =
				&S.events[(S.ev_start + i) % cfg.watch_window];

			if (e->rv <= w->rv)
				continue;
			w->rv = e->rv;
			if (watch_matches(w, e->kind, e->obj))
				watch_add_event(w, e->type, e->obj);
		}
		if (w->out.len > w->out_pos)
			return;
		now = monotonic_ms();
		if (now >= w->deadline_ms) {
			w->done = 1;
			return;
		}
		if (w->bookmarks && now >= w->next_bookmark_ms) {
			watch_add_bookmark(w);
			w->next_bookmark_ms = now + cfg.bookmark_ms;
			return;
		}
		until = w->deadline_ms;
		if (w->bookmarks && w->next_bookmark_ms < until)
			until = w->next_bookmark_ms;
		if (until > now + 1000)
			until = now + 1000;
		deadline_in_ms(&ts, CLOCK_REALTIME, until - now);
		pthread_cond_timedwait(&S.changed, &S.lock, &ts);
	}
}

static ssize_t watch_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct watch *w = cls;
	size_t n;

	if (w->out.len == w->out_pos) {
		strbuf_reset(&w->out);
		w->out_pos = 0;
		if (w->done)
			return MHD_CONTENT_READER_END_OF_STREAM;
		pthread_mutex_lock(&S.lock);
		watch_step(w);
		pthread_mutex_unlock(&S.lock);
		if (w->out.len == 0)
			return MHD_CONTENT_READER_END_OF_STREAM;
	}
	n = w->out.len - w->out_pos;
	if (n > max)
		n = max;
	memcpy(buf, w->out.buf + w->out_pos, n);
	w->out_pos += n;
	return (ssize_t)n;
}

static void watch_free(void *cls)
{
	struct watch *w = cls;

	pthread_mutex_lock(&S.lock);
	S.nr_watches--;
	pthread_mutex_unlock(&S.lock);
	free(w->ns);
	free(w->version);
	selector_release(&w->lsel);
	selector_release(&w->fsel);
	strbuf_release(&w->out);
	free(w);
}

/* ------------------------------------------------------------------ */
/* REST */

struct target {
	const char *group; /* "" for /api/v1 */
	const char *version;
	const char *ns;	    /* or NULL */
	const char *plural; /* or NULL */
	const char *name;   /* or NULL */
	const char *sub;    /* subresource or NULL */
	enum kind_id kind;
};

static int find_kind(const char *group, const char *plural, enum kind_id *out)
{
	int k;

	for (k = 0; k < K_NR; k++) {
		if (!strcmp(kinds[k].group, group) &&
		    !strcmp(kinds[k].plural, plural)) {
			*out = k;
			return 0;
		}
	}
	return -1;
}

/* The objects of a list or watch: parse the selectors of the query. */
static int parse_query_selectors(struct MHD_Connection *c, enum kind_id k,
				 struct selector *lsel, struct selector *fsel,
				 struct strbuf *err)
{
	const char *ls = query(c, "labelSelector");
	const char *fs = query(c, "fieldSelector");
	size_t i;

	if (ls && parse_selector(ls, 0, lsel, err) < 0)
		return -1;
	if (fs && parse_selector(fs, 1, fsel, err) < 0)
		return -1;
	for (i = 0; i < fsel->nr; i++) {
		if (!field_supported(k, fsel->r[i].key)) {
			strbuf_addf(err, "field label not supported: %s",
				    fsel->r[i].key);
			return -1;
		}
	}
	return 0;
}

static enum MHD_Result start_watch(struct MHD_Connection *c, struct req *r,
				   struct target *t)
{
	struct watch *w = xcalloc(1, sizeof(*w));
	struct strbuf err = STRBUF_INIT;
	const char *rvs = query(c, "resourceVersion");
	const char *tos = query(c, "timeoutSeconds");
	struct MHD_Response *resp;
	enum MHD_Result ret;
	long timeout = 1800;
	size_t i;

	w->kind = t->kind;
	w->ns = t->ns ? xstrdup(t->ns) : NULL;
	w->version = xstrdup(t->version);
	strbuf_init(&w->out, 0);
	if (parse_query_selectors(c, t->kind, &w->lsel, &w->fsel, &err) < 0) {
		ret = send_status(c, 400, "BadRequest", r, "%s", err.buf);
		strbuf_release(&err);
		pthread_mutex_lock(&S.lock);
		S.nr_watches++;
		pthread_mutex_unlock(&S.lock);
		watch_free(w);
		return ret;
	}
	strbuf_release(&err);
	if (t->name) {
		/* GET .../<plural>/<name>?watch=1: that object only */
		struct sel_req *q;

		ALLOC_GROW(w->fsel.r, w->fsel.nr + 1, w->fsel.alloc);
		q = &w->fsel.r[w->fsel.nr++];
		memset(q, 0, sizeof(*q));
		strvec_init(&q->values);
		q->key = xstrdup("metadata.name");
		q->op = SEL_EQ;
		strvec_push(&q->values, t->name);
	}
	if (tos) {
		char *end;

		timeout = strtol(tos, &end, 10);
		if (*end || timeout < 0)
			timeout = 1800;
	}
	w->bookmarks = query_true(c, "allowWatchBookmarks");
	w->deadline_ms = monotonic_ms() + (uint64_t)timeout * 1000;
	w->next_bookmark_ms = monotonic_ms() + cfg.bookmark_ms;

	pthread_mutex_lock(&S.lock);
	S.nr_watches++;
	if (!rvs || !*rvs || !strcmp(rvs, "0")) {
		/* the current state as ADDED events, then changes */
		for (i = 0; i < S.nr_objs; i++) {
			struct obj *o = S.objs[i];

			if (watch_matches(w, o->kind, o->body))
				watch_add_event(w, "ADDED", o->body);
		}
		w->rv = S.rv;
	} else {
		char *end;
		unsigned long long v = strtoull(rvs, &end, 10);

		if (*end) {
			pthread_mutex_unlock(&S.lock);
			watch_free(w);
			return send_status(c, 400, "BadRequest", r,
					   "invalid resource version: %s", rvs);
		}
		w->rv = v;
		if (w->rv < S.floor_rv)
			watch_add_gone(w, w->rv);
	}
	pthread_mutex_unlock(&S.lock);

	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096,
						 watch_reader, w, watch_free);
	if (!resp) {
		watch_free(w);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
	ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result handle_list(struct MHD_Connection *c, struct req *r,
				   struct target *t)
{
	struct selector lsel = { 0 }, fsel = { 0 };
	struct strbuf err = STRBUF_INIT, gv = STRBUF_INIT, lk = STRBUF_INIT;
	json_t *items, *list;
	char rv[32];
	size_t i;

	if (query_true(c, "watch"))
		return start_watch(c, r, t);
	if (parse_query_selectors(c, t->kind, &lsel, &fsel, &err) < 0) {
		enum MHD_Result ret =
			send_status(c, 400, "BadRequest", r, "%s", err.buf);

		strbuf_release(&err);
		selector_release(&lsel);
		selector_release(&fsel);
		return ret;
	}
	items = json_array();
	pthread_mutex_lock(&S.lock);
	for (i = 0; i < S.nr_objs; i++) {
		struct obj *o = S.objs[i];
		json_t *b;

		if (o->kind != t->kind || (t->ns && strcmp(o->ns, t->ns)) ||
		    !selector_matches(&lsel, o->body, 0) ||
		    !selector_matches(&fsel, o->body, 1))
			continue;
		b = convert_out(o, t->version);
		if (!kinds[t->kind].crd) {
			json_object_del(b, "apiVersion");
			json_object_del(b, "kind");
		}
		json_array_append_new(items, b);
	}
	xsnprintf(rv, sizeof(rv), "%" PRIu64, S.rv);
	pthread_mutex_unlock(&S.lock);
	strbuf_addf(&lk, "%sList", kinds[t->kind].kind);
	list = json_pack("{s:s,s:s,s:{s:s},s:o}", "kind", lk.buf, "apiVersion",
			 group_version_of(t->kind, t->version, &gv), "metadata",
			 "resourceVersion", rv, "items", items);
	strbuf_release(&gv);
	strbuf_release(&lk);
	strbuf_release(&err);
	selector_release(&lsel);
	selector_release(&fsel);
	return send_json(c, 200, list, r);
}

static enum MHD_Result handle_get(struct MHD_Connection *c, struct req *r,
				  struct target *t)
{
	struct obj *o;
	json_t *b;

	if (query_true(c, "watch"))
		return start_watch(c, r, t);
	pthread_mutex_lock(&S.lock);
	o = find_obj(t->kind, t->ns, t->name);
	b = o ? convert_out(o, t->version) : NULL;
	pthread_mutex_unlock(&S.lock);
	if (!b)
		return send_not_found(c, t->kind, t->name, r);
	return send_json(c, 200, b, r);
}

/* "field: message" -> field; `unknown field "a.b"` -> a.b */
static void cause_field(const char *msg, struct strbuf *field)
{
	const char *p;

	if (skip_prefix(msg, "unknown field \"", &p)) {
		strbuf_add(field, p, strcspn(p, "\""));
		return;
	}
	p = strstr(msg, ": ");
	if (p && !memchr(msg, ' ', p - msg))
		strbuf_add(field, msg, p - msg);
}

static enum MHD_Result send_invalid(struct MHD_Connection *c, enum kind_id k,
				    const char *name, struct strvec *errs,
				    struct req *r)
{
	struct strbuf msg = STRBUF_INIT, field = STRBUF_INIT;
	json_t *causes = json_array(), *st;
	size_t i;

	strbuf_addf(&msg, "%s", kinds[k].kind);
	if (*kinds[k].group)
		strbuf_addf(&msg, ".%s", kinds[k].group);
	strbuf_addf(&msg, " \"%s\" is invalid: ", name);
	if (errs->nr > 1)
		strbuf_addch(&msg, '[');
	for (i = 0; i < errs->nr; i++) {
		strbuf_addf(&msg, "%s%s", i ? ", " : "", errs->v[i]);
		strbuf_reset(&field);
		cause_field(errs->v[i], &field);
		json_array_append_new(
			causes,
			json_pack("{s:s,s:s,s:s}", "reason",
				  strstr(errs->v[i], "Required value")
					  ? "FieldValueRequired"
				  : strstr(errs->v[i], "Unsupported value")
					  ? "FieldValueNotSupported"
					  : "FieldValueInvalid",
				  "message", errs->v[i], "field", field.buf));
	}
	if (errs->nr > 1)
		strbuf_addch(&msg, ']');
	st = status_object(422, "Invalid", msg.buf,
			   json_pack("{s:s,s:s,s:s,s:o}", "name", name, "group",
				     kinds[k].group, "kind", kinds[k].kind,
				     "causes", causes));
	strbuf_release(&msg);
	strbuf_release(&field);
	return send_json(c, 422, st, r);
}

/*
 * Check a request body of kind k in version: apiVersion and kind, then
 * the CRD schema. Returns 0, or -1 with the answer queued in *ret.
 */
static int check_body(struct MHD_Connection *c, struct req *r, struct target *t,
		      json_t *body, enum MHD_Result *ret)
{
	const char *kind = json_object_str(body, "kind");
	const char *av = json_object_str(body, "apiVersion");
	const char *fv = query(c, "fieldValidation");
	struct strbuf gv = STRBUF_INIT;
	struct strvec errs = STRVEC_INIT, warns = STRVEC_INIT;
	const char *name;
	unsigned flags = CRD_DEFAULT;
	size_t i;
	int rc = 0;

	group_version_of(t->kind, t->version, &gv);
	if (!kind || strcmp(kind, kinds[t->kind].kind)) {
		*ret = send_status(c, 400, "BadRequest", r,
				   "the kind of the body (\"%s\") does not "
				   "match the resource \"%s\"",
				   kind ? kind : "", t->plural);
		rc = -1;
		goto out;
	}
	if (!av || strcmp(av, gv.buf)) {
		*ret = send_status(c, 400, "BadRequest", r,
				   "the API version in the data (%s) does not "
				   "match the expected API version (%s)",
				   av ? av : "", gv.buf);
		rc = -1;
		goto out;
	}
	if (!kinds[t->kind].crd || !S.have_crds)
		goto out;
	if (fv && (!strcmp(fv, "Warn") || !strcmp(fv, "Ignore")))
		flags |= CRD_PRUNE;
	{
		const struct crd *crd = crd_set_find(&S.crds, av, kind);

		if (!crd)
			goto out;
		crd_validate_object(crd, body, flags, &errs, &warns);
	}
	if (!fv || strcmp(fv, "Ignore"))
		for (i = 0; i < warns.nr; i++)
			strvec_push(&r->warnings, warns.v[i]);
	if (errs.nr) {
		name = meta_str(body, "name");
		if (!name)
			name = meta_str(body, "generateName");
		*ret = send_invalid(c, t->kind, name ? name : "", &errs, r);
		rc = -1;
	}
out:
	strbuf_release(&gv);
	strvec_clear(&errs);
	strvec_clear(&warns);
	return rc;
}

static json_t *parse_body(struct MHD_Connection *c, struct req *r,
			  enum MHD_Result *ret)
{
	struct strbuf err = STRBUF_INIT;
	json_t *body = json_parse(r->body.buf, r->body.len, &err);

	if (!body || !json_is_object(body)) {
		*ret = send_status(c, 400, "BadRequest", r,
				   "couldn't get version/kind; json parse "
				   "error: %s",
				   body ? "not an object" : err.buf);
		json_decref(body);
		body = NULL;
	}
	strbuf_release(&err);
	return body;
}

static enum MHD_Result handle_create(struct MHD_Connection *c, struct req *r,
				     struct target *t)
{
	enum MHD_Result ret = MHD_NO;
	json_t *body = parse_body(c, r, &ret), *meta, *out;
	const char *ns, *name, *gen;
	struct strbuf res = STRBUF_INIT;
	struct obj *o;

	if (!body)
		return ret;
	meta = meta_of(body);
	ns = json_object_str(meta, "namespace");
	if (ns && *ns && strcmp(ns, t->ns)) {
		json_decref(body);
		return send_status(c, 400, "BadRequest", r,
				   "the namespace of the provided object does "
				   "not match the namespace sent on the "
				   "request");
	}
	name = json_object_str(meta, "name");
	gen = json_object_str(meta, "generateName");
	if ((!name || !*name) && (!gen || !*gen)) {
		struct strvec errs = STRVEC_INIT;

		strvec_push(&errs, "metadata.name: Required value: name or "
				   "generateName is required");
		ret = send_invalid(c, t->kind, "", &errs, r);
		strvec_clear(&errs);
		json_decref(body);
		return ret;
	}
	if (check_body(c, r, t, body, &ret) < 0) {
		json_decref(body);
		return ret;
	}
	json_object_del(meta, "uid");
	json_object_del(meta, "resourceVersion");
	json_object_del(meta, "creationTimestamp");
	json_object_del(meta, "generation");
	json_object_del(meta, "deletionTimestamp");
	if (kinds[t->kind].has_status && kinds[t->kind].crd)
		json_object_del(body, "status");
	convert_in(t->kind, body, t->version);
	name = json_object_str(meta, "name");
	name = xstrdup(name ? name : "");
	pthread_mutex_lock(&S.lock);
	o = store_add(t->kind, t->ns, body);
	if (o)
		o->received_us = r->start_us;
	out = o ? convert_out(o, t->version) : NULL;
	pthread_mutex_unlock(&S.lock);
	if (!out) {
		add_resource_name(&res, t->kind);
		ret = send_status(c, 409, "AlreadyExists", r,
				  "%s \"%s\" already exists", res.buf, name);
		strbuf_release(&res);
		free((char *)name);
		return ret;
	}
	free((char *)name);
	return send_json(c, 201, out, r);
}

/* RFC 7386 JSON merge patch: a new reference. */
static json_t *merge_patch(json_t *target, json_t *patch)
{
	json_t *out, *v;
	const char *k;

	if (!json_is_object(patch))
		return json_deep_copy(patch);
	out = json_is_object(target) ? json_deep_copy(target) : json_object();
	json_object_foreach (patch, k, v) {
		if (json_is_null(v))
			json_object_del(out, k);
		else
			json_object_set_new(
				out, k,
				merge_patch(json_object_get(out, k), v));
	}
	return out;
}

/* RFC 6901 pointer: parent container and last token (decoded). */
static json_t *pointer_parent(json_t *doc, const char *ptr, struct strbuf *last)
{
	const char *p = ptr;
	json_t *cur = doc;

	if (*p != '/')
		return NULL;
	for (;;) {
		const char *end;

		p++;
		end = strchr(p, '/');
		strbuf_reset(last);
		for (; *p && p != end; p++) {
			if (*p == '~' && p[1] == '0') {
				strbuf_addch(last, '~');
				p++;
			} else if (*p == '~' && p[1] == '1') {
				strbuf_addch(last, '/');
				p++;
			} else {
				strbuf_addch(last, *p);
			}
		}
		if (!end)
			return cur;
		if (json_is_object(cur))
			cur = json_object_get(cur, last->buf);
		else if (json_is_array(cur))
			cur = json_array_get(cur, strtoul(last->buf, NULL, 10));
		else
			return NULL;
		if (!cur)
			return NULL;
	}
}

/* RFC 6902 JSON patch (add, remove, replace, test). 0 or -1. */
static int json_patch(json_t *doc, json_t *ops, struct strbuf *err)
{
	struct strbuf last = STRBUF_INIT;
	size_t i;
	json_t *op;
	int rc = -1;

	if (!json_is_array(ops)) {
		strbuf_addstr(err, "a JSON patch must be an array");
		goto out;
	}
	json_array_foreach (ops, i, op) {
		const char *o = json_object_str(op, "op");
		const char *path = json_object_str(op, "path");
		json_t *val = json_object_get(op, "value"), *parent, *cur;
		size_t idx;

		if (!o || !path) {
			strbuf_addstr(err, "op and path are required");
			goto out;
		}
		parent = pointer_parent(doc, path, &last);
		if (!parent) {
			strbuf_addf(err, "path not found: %s", path);
			goto out;
		}
		cur = json_is_object(parent) ? json_object_get(parent, last.buf)
		      : !strcmp(last.buf, "-")
			      ? NULL
			      : json_array_get(parent,
					       strtoul(last.buf, NULL, 10));
		idx = strtoul(last.buf, NULL, 10);
		if (!strcmp(o, "test")) {
			if (!cur || !val || !json_equal(cur, val)) {
				strbuf_addf(err, "test failed at %s", path);
				goto out;
			}
		} else if (!strcmp(o, "remove") ||
			   (!strcmp(o, "replace") && !cur)) {
			if (!cur) {
				strbuf_addf(err, "path not found: %s", path);
				goto out;
			}
			if (json_is_object(parent))
				json_object_del(parent, last.buf);
			else
				json_array_remove(parent, idx);
		} else if ((!strcmp(o, "add") || !strcmp(o, "replace")) &&
			   val) {
			if (json_is_object(parent))
				json_object_set(parent, last.buf, val);
			else if (!strcmp(last.buf, "-"))
				json_array_append(parent, val);
			else if (!strcmp(o, "replace"))
				json_array_set(parent, idx, val);
			else
				json_array_insert(parent, idx, val);
		} else {
			strbuf_addf(err, "unsupported op: %s", o);
			goto out;
		}
	}
	rc = 0;
out:
	strbuf_release(&last);
	return rc;
}

static int spec_changed(json_t *a, json_t *b)
{
	json_t *x = json_deep_copy(a), *y = json_deep_copy(b);
	int changed;

	json_object_del(x, "metadata");
	json_object_del(x, "status");
	json_object_del(x, "apiVersion");
	json_object_del(x, "kind");
	json_object_del(y, "metadata");
	json_object_del(y, "status");
	json_object_del(y, "apiVersion");
	json_object_del(y, "kind");
	changed = !json_equal(x, y);
	json_decref(x);
	json_decref(y);
	return changed;
}

static enum MHD_Result send_conflict(struct MHD_Connection *c, enum kind_id k,
				     const char *name, struct req *r)
{
	struct strbuf res = STRBUF_INIT;
	enum MHD_Result ret;

	add_resource_name(&res, k);
	ret = send_status(c, 409, "Conflict", r,
			  "Operation cannot be fulfilled on %s \"%s\": the "
			  "object has been modified; please apply your "
			  "changes to the latest version and try again",
			  res.buf, name);
	strbuf_release(&res);
	return ret;
}

/*
 * Replace the object t names with body (of t->version, consumed). For
 * PUT and PATCH, on the object or its status subresource.
 */
static enum MHD_Result apply_update(struct MHD_Connection *c, struct req *r,
				    struct target *t, json_t *body,
				    int is_patch)
{
	enum MHD_Result ret = MHD_NO;
	const char *name = meta_str(body, "name");
	const char *rv = meta_str(body, "resourceVersion");
	struct obj *o;
	json_t *old, *nb, *out;
	int64_t gen = 1;
	static const char *const keep[] = { "uid", "creationTimestamp",
					    "namespace", "name",
					    "ownerReferences" };
	size_t i;

	if (name && strcmp(name, t->name)) {
		json_decref(body);
		return send_status(c, 400, "BadRequest", r,
				   "the name of the object (%s) does not match "
				   "the name on the URL (%s)",
				   name, t->name);
	}
	if (!name)
		json_object_set_new(meta_of(body), "name",
				    json_string(t->name));
	if (!is_patch && kinds[t->kind].crd && (!rv || !*rv)) {
		struct strvec errs = STRVEC_INIT;

		strvec_push(&errs, "metadata.resourceVersion: Invalid value: "
				   "0x0: must be specified for an update");
		ret = send_invalid(c, t->kind, t->name, &errs, r);
		strvec_clear(&errs);
		json_decref(body);
		return ret;
	}
	if (check_body(c, r, t, body, &ret) < 0) {
		json_decref(body);
		return ret;
	}
	convert_in(t->kind, body, t->version);
	pthread_mutex_lock(&S.lock);
	o = find_obj(t->kind, t->ns, t->name);
	if (!o) {
		pthread_mutex_unlock(&S.lock);
		json_decref(body);
		return send_not_found(c, t->kind, t->name, r);
	}
	old = o->body;
	if (rv && *rv && strcmp(rv, meta_str(old, "resourceVersion"))) {
		pthread_mutex_unlock(&S.lock);
		json_decref(body);
		return send_conflict(c, t->kind, t->name, r);
	}
	if (t->sub) {
		/* the status subresource changes the status only */
		nb = json_deep_copy(old);
		if (json_object_get(body, "status"))
			json_object_set(nb, "status",
					json_object_get(body, "status"));
		else
			json_object_del(nb, "status");
		json_decref(body);
	} else {
		nb = body;
		if (kinds[t->kind].has_status) {
			if (json_object_get(old, "status"))
				json_object_set(nb, "status",
						json_object_get(old, "status"));
			else
				json_object_del(nb, "status");
		}
	}
	for (i = 0; i < ARRAY_SIZE(keep); i++) {
		json_t *v = json_object_get(meta_of(old), keep[i]);

		if (v && (i < 4 || !json_object_get(meta_of(nb), keep[i])))
			json_object_set(meta_of(nb), keep[i], v);
	}
	json_object_set(meta_of(nb), "resourceVersion",
			json_object_get(meta_of(old), "resourceVersion"));
	json_object_int(meta_of(old), "generation", &gen);
	if (spec_changed(old, nb))
		gen++;
	json_object_set_new(meta_of(nb), "generation", json_integer(gen));
	if (json_equal(old, nb)) {
		json_decref(nb);
	} else {
		o->body = nb;
		json_decref(old);
		store_touch(o);
	}
	out = convert_out(o, t->version);
	pthread_mutex_unlock(&S.lock);
	return send_json(c, 200, out, r);
}

static enum MHD_Result handle_put(struct MHD_Connection *c, struct req *r,
				  struct target *t)
{
	enum MHD_Result ret = MHD_NO;
	json_t *body = parse_body(c, r, &ret);

	if (!body)
		return ret;
	return apply_update(c, r, t, body, 0);
}

static enum MHD_Result handle_patch(struct MHD_Connection *c, struct req *r,
				    struct target *t)
{
	const char *ct = header(c, "Content-Type");
	struct strbuf err = STRBUF_INIT;
	json_t *patch, *cur, *nb;
	enum MHD_Result ret;
	struct obj *o;
	int json_p;

	if (!ct)
		ct = "";
	json_p = starts_with(ct, "application/json-patch+json");
	if (!json_p && !starts_with(ct, "application/merge-patch+json") &&
	    !starts_with(ct, "application/strategic-merge-patch+json"))
		return send_status(c, 415, "UnsupportedMediaType", r,
				   "the body of the request was in an unknown "
				   "format - accepted media types include: "
				   "application/json-patch+json, "
				   "application/merge-patch+json, "
				   "application/strategic-merge-patch+json");
	patch = json_parse(r->body.buf, r->body.len, &err);
	if (!patch) {
		ret = send_status(c, 400, "BadRequest", r, "%s", err.buf);
		strbuf_release(&err);
		return ret;
	}
	pthread_mutex_lock(&S.lock);
	o = find_obj(t->kind, t->ns, t->name);
	cur = o ? convert_out(o, t->version) : NULL;
	pthread_mutex_unlock(&S.lock);
	if (!cur) {
		json_decref(patch);
		return send_not_found(c, t->kind, t->name, r);
	}
	if (json_p) {
		nb = cur;
		if (json_patch(nb, patch, &err) < 0) {
			json_decref(nb);
			json_decref(patch);
			ret = send_status(c, 422, "Invalid", r, "%s", err.buf);
			strbuf_release(&err);
			return ret;
		}
	} else {
		nb = merge_patch(cur, patch);
		json_decref(cur);
	}
	/*
	 * Like the API server, a patch that does not name a
	 * resourceVersion applies to whatever is current.
	 */
	if (json_p || !json_path(patch, "metadata.resourceVersion"))
		json_object_del(meta_of(nb), "resourceVersion");
	json_decref(patch);
	strbuf_release(&err);
	if (!json_is_object(nb)) {
		json_decref(nb);
		return send_status(c, 422, "Invalid", r,
				   "the patch does not give an object");
	}
	return apply_update(c, r, t, nb, 1);
}

static enum MHD_Result handle_delete(struct MHD_Connection *c, struct req *r,
				     struct target *t)
{
	struct obj *o;
	json_t *out = NULL;

	pthread_mutex_lock(&S.lock);
	o = find_obj(t->kind, t->ns, t->name);
	if (o) {
		out = convert_out(o, t->version);
		delete_cascade(o);
	}
	pthread_mutex_unlock(&S.lock);
	if (!out)
		return send_not_found(c, t->kind, t->name, r);
	return send_json(c, 200, out, r);
}

/* ------------------------------------------------------------------ */
/* gosbx-runtime processes, one per Sandbox (lock held) */

static struct strvec stuck_templates = STRVEC_INIT; /* --stuck + knob */
static int rt_counter, ip_counter;

/*
 * Where to connect to a runtime: 127.0.0.1:<port> for --runtime-cmd,
 * else its unix socket (sun_path is 108 bytes). *len gets the size.
 */
static int runtime_sockaddr(const struct runtime *rt,
			    struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_un *sun = (struct sockaddr_un *)ss;

	memset(ss, 0, sizeof(*ss));
	if (rt->port) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)rt->port);
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*sin);
		return 0;
	}
	*len = sizeof(*sun);
	sun->sun_family = AF_UNIX;
	if (strlen(cfg.state_dir) + strlen(rt->sock) + 2 <
	    sizeof(sun->sun_path)) {
		xsnprintf(sun->sun_path, sizeof(sun->sun_path), "%s/%s",
			  cfg.state_dir, rt->sock);
		return 0;
	}
	if (snprintf(sun->sun_path, sizeof(sun->sun_path),
		     "/proc/self/fd/%d/%s", S.state_dirfd,
		     rt->sock) >= (int)sizeof(sun->sun_path))
		return -1;
	return 0;
}

/* A blocking stream socket connected to ss, or -1. */
static int connect_sockaddr(const struct sockaddr_storage *ss, socklen_t len)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)ss, len) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int runtime_connect(const struct runtime *rt)
{
	struct sockaddr_storage ss;
	socklen_t len;

	if (runtime_sockaddr(rt, &ss, &len) < 0)
		return -1;
	return connect_sockaddr(&ss, len);
}

/*
 * Is the runtime ready, as a kubelet's readinessProbe (httpGet / on
 * 8888) sees it: GET / answers 200 within 500 ms. A container's
 * published port accepts connections before the runtime inside
 * listens, so a connection alone proves nothing there.
 */
static int runtime_probe(const struct runtime *rt)
{
	static const char req[] = "GET / HTTP/1.0\r\n\r\n";
	struct pollfd pfd;
	char buf[64];
	size_t got = 0;
	int fd = runtime_connect(rt), ok = 0;

	if (fd < 0)
		return 0;
	if (!rt->port) {
		close(fd);
		return 1; /* a unix socket listens once the runtime does */
	}
	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) ==
	    (ssize_t)sizeof(req) - 1) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		while (got < 12 && poll(&pfd, 1, 500) > 0) {
			ssize_t n = read(fd, buf + got, sizeof(buf) - got);

			if (n <= 0)
				break;
			got += (size_t)n;
		}
		ok = got >= 12 && !memcmp(buf, "HTTP/1.", 7) &&
		     !memcmp(buf + 8, " 200", 4);
	}
	close(fd);
	return ok;
}

/* A free TCP port on 127.0.0.1 (bound, read and closed), or 0. */
static int free_port(void)
{
	struct sockaddr_in sin = { 0 };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = 0;

	if (fd < 0)
		return 0;
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!bind(fd, (struct sockaddr *)&sin, sizeof(sin)) &&
	    !getsockname(fd, (struct sockaddr *)&sin, &len))
		port = ntohs(sin.sin_port);
	close(fd);
	return port;
}

static struct runtime *find_runtime(const char *ns, const char *name)
{
	size_t i;

	for (i = 0; i < S.nr_rts; i++) {
		struct runtime *rt = S.rts[i];

		if (!rt->killed_ms && !strcmp(rt->ns, ns) &&
		    !strcmp(rt->name, name))
			return rt;
	}
	return NULL;
}

/*
 * Where to reach the ready runtime of Sandbox ns/name (the router and
 * the pod network both forward there); -1 when there is no such
 * Sandbox or its runtime is not ready. Call with S.lock held.
 */
static int sandbox_runtime_addr(const char *ns, const char *name,
				struct sockaddr_storage *ss, socklen_t *len)
{
	struct runtime *rt =
		find_obj(K_SANDBOX, ns, name) ? find_runtime(ns, name) : NULL;

	return rt && rt->ready ? runtime_sockaddr(rt, ss, len) : -1;
}

/*
 * The value of the container's env variable var (length len) as the
 * kubelet gives it: "value", or "valueFrom.fieldRef" status.podIP (the
 * downward API); NULL when the container has no such variable.
 */
static const char *container_env(json_t *ctr, json_t *pod, const char *var,
				 size_t len)
{
	json_t *e;
	size_t i;

	json_array_foreach (json_object_get(ctr, "env"), i, e) {
		const char *n = json_path_str(e, "name");
		const char *f =
			json_path_str(e, "valueFrom.fieldRef.fieldPath");

		if (!n || strlen(n) != len || strncmp(n, var, len))
			continue;
		if (f && !strcmp(f, "status.podIP"))
			return json_path_str(pod, "status.podIP");
		return json_path_str(e, "value");
	}
	return NULL;
}

/*
 * The args of the pod's first container, which a kubelet would append
 * to the image's entrypoint (gosbx-runtime), into argv; "$(VAR)" is
 * expanded from the container's env as the kubelet does (an unknown
 * reference stays as written, "$$" is "$").
 */
static void pod_args(const char *ns, const char *name, struct strvec *argv)
{
	struct obj *pod = find_obj(K_POD, ns, name);
	json_t *ctr =
		pod ? json_array_get(json_path(pod->body, "spec.containers"), 0)
		    : NULL;
	json_t *a;
	size_t i;

	json_array_foreach (json_object_get(ctr, "args"), i, a) {
		struct strbuf sb = STRBUF_INIT;
		const char *p = json_string_value(a), *end, *v;

		while (p && *p) {
			if (starts_with(p, "$$")) {
				strbuf_addch(&sb, '$');
				p += 2;
			} else if (starts_with(p, "$(") &&
				   (end = strchr(p, ')')) &&
				   (v = container_env(ctr, pod->body, p + 2,
						      end - p - 2))) {
				strbuf_addstr(&sb, v);
				p = end + 1;
			} else {
				strbuf_addch(&sb, *p++);
			}
		}
		strvec_push(argv, sb.buf);
		strbuf_release(&sb);
	}
}

static void runtime_start(const char *ns, const char *name)
{
	struct strvec args = STRVEC_INIT;
	struct runtime *rt;
	struct strbuf addr = STRBUF_INIT, wd = STRBUF_INIT, log = STRBUF_INIT;
	sigset_t none;
	pid_t pid;
	int n;

	if (!cfg.runtime && !cfg.runtime_cmd)
		return;
	n = ++rt_counter;
	rt = xcalloc(1, sizeof(*rt));
	rt->ns = xstrdup(ns);
	rt->name = xstrdup(name);
	if (cfg.runtime_cmd) {
		rt->port = free_port();
		if (!rt->port)
			warning_errno("cannot find a free port for '%s'", name);
	}
	strbuf_addf(&addr, "rt-%d.sock", n);
	rt->sock = strbuf_detach(&addr, NULL);
	strbuf_addf(&addr, "--addr=unix:%s", rt->sock);
	strbuf_addf(&wd, "%s/sbx-%d", cfg.state_dir, n);
	rt->workdir = xstrdup(wd.buf);
	strbuf_reset(&wd);
	strbuf_addf(&wd, "--workdir=%s", rt->workdir);
	strbuf_addf(&log, "rt-%d.log", n);
	strvec_push(&args, "gosbx-runtime");
	strvec_push(&args, addr.buf);
	strvec_push(&args, wd.buf);
	pod_args(ns, name, &args);
	sigemptyset(&none);
	pid = fork();
	if (pid == 0) {
		int fd;

		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (fchdir(S.state_dirfd) < 0)
			_exit(127);
		fd = open(log.buf, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, 0);
		if (cfg.runtime_cmd) {
			char port[16];

			xsnprintf(port, sizeof(port), "%d", rt->port);
			execl("/bin/sh", "sh", "-c", cfg.runtime_cmd,
			      "fake-kube-runtime", port, rt->sock,
			      (char *)NULL);
		} else {
			execv(cfg.runtime, (char *const *)args.v);
		}
		_exit(127);
	}
	if (pid < 0)
		warning_errno("cannot start '%s'",
			      cfg.runtime ? cfg.runtime : cfg.runtime_cmd);
	rt->pid = pid;
	strvec_clear(&args);
	ALLOC_GROW(S.rts, S.nr_rts + 1, S.alloc_rts);
	S.rts[S.nr_rts++] = rt;
	strbuf_release(&addr);
	strbuf_release(&wd);
	strbuf_release(&log);
}

static void runtime_stop(const char *ns, const char *name)
{
	struct runtime *rt = find_runtime(ns, name);

	if (!rt)
		return;
	if (rt->pid > 0)
		kill(rt->pid, SIGTERM);
	rt->killed_ms = monotonic_ms();
}

static void runtime_free(struct runtime *rt)
{
	free(rt->ns);
	free(rt->name);
	free(rt->sock);
	free(rt->workdir);
	free(rt);
}

/*
 * Reap stopped runtimes; SIGKILL those that take over 3 s (a container
 * runtime 15 s: podman stops and removes its container first).
 */
static void runtime_reap(int all)
{
	size_t i;

	for (i = 0; i < S.nr_rts;) {
		struct runtime *rt = S.rts[i];
		int st;

		if (!rt->killed_ms && !all) {
			i++;
			continue;
		}
		if (rt->pid > 0 && waitpid(rt->pid, &st, WNOHANG) == 0) {
			if (monotonic_ms() - rt->killed_ms >
			    (rt->port ? 15000 : 3000))
				kill(rt->pid, SIGKILL);
			i++;
			continue;
		}
		runtime_free(rt);
		memmove(S.rts + i, S.rts + i + 1,
			(S.nr_rts - i - 1) * sizeof(*S.rts));
		S.nr_rts--;
	}
}

/* ------------------------------------------------------------------ */
/* The controller */

/* Set a condition; returns 1 when it changed. */
static int set_condition(json_t *obj, const char *type, const char *status,
			 const char *reason, const char *message)
{
	json_t *st = sub_object(obj, "status");
	json_t *conds = json_object_get(st, "conditions"), *c, *nc;
	int64_t gen = 1;
	size_t i;

	json_object_int(meta_of(obj), "generation", &gen);
	if (!json_is_array(conds)) {
		conds = json_array();
		json_object_set_new(st, "conditions", conds);
	}
	json_array_foreach (conds, i, c) {
		const char *t = json_object_str(c, "type");

		if (!t || strcmp(t, type))
			continue;
		if (!strcmp(json_object_str(c, "status")
				    ? json_object_str(c, "status")
				    : "",
			    status) &&
		    !strcmp(json_object_str(c, "reason")
				    ? json_object_str(c, "reason")
				    : "",
			    reason) &&
		    !strcmp(json_object_str(c, "message")
				    ? json_object_str(c, "message")
				    : "",
			    message))
			return 0;
		if (strcmp(json_object_str(c, "status")
				   ? json_object_str(c, "status")
				   : "",
			   status))
			json_object_set_new(c, "lastTransitionTime",
					    json_now());
		json_object_set_new(c, "status", json_string(status));
		json_object_set_new(c, "reason", json_string(reason));
		json_object_set_new(c, "message", json_string(message));
		json_object_set_new(c, "observedGeneration", json_integer(gen));
		return 1;
	}
	nc = json_pack("{s:s,s:s,s:i,s:s,s:s,s:o}", "type", type, "status",
		       status, "observedGeneration", (int)gen, "reason", reason,
		       "message", message, "lastTransitionTime", json_now());
	json_array_append_new(conds, nc);
	return 1;
}

static const char *condition_status(json_t *obj, const char *type)
{
	json_t *conds = json_path(obj, "status.conditions"), *c;
	size_t i;

	json_array_foreach (conds, i, c) {
		const char *t = json_object_str(c, "type");

		if (t && !strcmp(t, type))
			return json_object_str(c, "status");
	}
	return NULL;
}

static int is_ready(json_t *obj)
{
	const char *s = condition_status(obj, "Ready");

	return s && !strcmp(s, "True");
}

static int template_stuck(const char *t)
{
	size_t i;

	for (i = 0; t && i < stuck_templates.nr; i++)
		if (!strcmp(stuck_templates.v[i], t))
			return 1;
	return 0;
}

static const char *first_image(json_t *tmpl)
{
	const char *img = json_path_str(
		json_array_get(json_path(tmpl, "spec.podTemplate.spec."
					       "containers"),
			       0),
		"image");

	return img ? img : "registry.invalid/gosbx-runtime:latest";
}

static void new_pod_ip(struct strbuf *sb)
{
	ip_counter++;
	strbuf_addf(sb, "%s.%d.%d", cfg.pod_ip_prefix, 1 + ip_counter / 250,
		    2 + ip_counter % 250);
}

static void add_event(const char *ns, struct obj *about, const char *type,
		      const char *reason, const char *message)
{
	struct strbuf name = STRBUF_INIT;
	json_t *ev;

	strbuf_addf(&name, "%s.", about->name);
	add_suffix(&name);
	ev = json_pack(
		"{s:s,s:s,s:{s:s},s:{s:s,s:s,s:s,s:s,s:s},s:s,s:s,s:s,s:o,"
		"s:o,s:i,s:{s:s}}",
		"apiVersion", "v1", "kind", "Event", "metadata", "name",
		name.buf, "involvedObject", "kind", kinds[about->kind].kind,
		"namespace", ns, "name", about->name, "uid",
		meta_str(about->body, "uid"), "apiVersion",
		storage_version(about->kind), "type", type, "reason", reason,
		"message", message, "firstTimestamp", json_now(),
		"lastTimestamp", json_now(), "count", 1, "source", "component",
		"kubelet");
	store_add(K_EVENT, ns, ev);
	strbuf_release(&name);
}

/*
 * A Sandbox from a template, with its Pod; its runtime starts now and
 * it turns Ready once the runtime answers (sandbox_tick()).
 */
static struct obj *create_sandbox(const char *ns, const char *name,
				  const char *gen_name, struct obj *tmpl,
				  struct obj *owner, const char *pool)
{
	struct strbuf gv = STRBUF_INIT, ip = STRBUF_INIT;
	json_t *body, *pod_spec, *podt;
	struct obj *sbx, *pod;
	const char *tname = tmpl->name;

	podt = json_path(tmpl->body, "spec.podTemplate");
	body = json_pack(
		"{s:s,s:s,s:{s:s,s:{},s:{s:s}},s:{s:O}}", "apiVersion",
		group_version_of(K_SANDBOX, storage_version(K_SANDBOX), &gv),
		"kind", "Sandbox", "metadata", "name", name ? name : "",
		"labels", "annotations", "fake-kube.gosbx/template", tname,
		"spec", "podTemplate", podt ? podt : json_object());
	/*
	 * v1beta1 (v0.5+) has spec.operatingMode where v1alpha1 has
	 * spec.replicas (their CRDs); this controller never suspends
	 */
	if (S.release_v05)
		json_object_set_new(json_object_get(body, "spec"),
				    "operatingMode", json_string("Running"));
	else
		json_object_set_new(json_object_get(body, "spec"), "replicas",
				    json_integer(1));
	if (!name)
		json_object_set_new(meta_of(body), "generateName",
				    json_string(gen_name));
	if (pool)
		json_object_set_new(json_path(body, "metadata.labels"),
				    LABEL_POOL, json_string(pool));
	if (owner)
		set_owner(body, owner);
	sbx = store_add(K_SANDBOX, ns, body);
	strbuf_release(&gv);
	if (!sbx)
		return NULL;
	json_object_set_new(json_path(sbx->body, "metadata.annotations"),
			    ANN_POD_NAME, json_string(sbx->name));
	set_condition(sbx->body, "Ready", "False", "DependenciesNotReady",
		      "Pod exists with phase: Pending");
	store_touch(sbx);

	pod_spec = json_path(podt, "spec");
	new_pod_ip(&ip);
	body = json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:O,s:{s:s,s:s,s:[{s:s}]}}",
			 "apiVersion", "v1", "kind", "Pod", "metadata", "name",
			 sbx->name, "labels", "agents.x-k8s.io/sandbox-name",
			 sbx->name, "spec", pod_spec ? pod_spec : json_object(),
			 "status", "phase", "Pending", "podIP", ip.buf,
			 "podIPs", "ip", ip.buf);
	set_owner(body, sbx);
	pod = store_add(K_POD, ns, body);
	strbuf_release(&ip);
	if (pod && template_stuck(tname)) {
		struct strbuf msg = STRBUF_INIT;
		const char *img = first_image(tmpl->body);

		strbuf_addf(&msg,
			    "Failed to pull image \"%s\": rpc error: code = "
			    "NotFound desc = failed to pull and unpack image "
			    "\"%s\": not found",
			    img, img);
		json_object_set_new(
			json_object_get(pod->body, "status"),
			"containerStatuses",
			json_pack("[{s:s,s:s,s:b,s:i,s:{s:{s:s,s:s}}}]", "name",
				  "sandbox", "image", img, "ready", 0,
				  "restartCount", 0, "state", "waiting",
				  "reason", "ErrImagePull", "message",
				  msg.buf));
		store_touch(pod);
		add_event(ns, pod, "Warning", "Failed", msg.buf);
		add_event(ns, pod, "Warning", "Failed", "Error: ErrImagePull");
		set_condition(sbx->body, "Ready", "False",
			      "DependenciesNotReady",
			      "Pod is not ready: ErrImagePull");
		store_touch(sbx);
		strbuf_release(&msg);
		return sbx;
	}
	runtime_start(ns, sbx->name);
	return sbx;
}

/* Turn sandboxes Ready whose runtime answers (or at once without one). */
static void sandbox_tick(void)
{
	size_t i;

	for (i = 0; i < S.nr_objs; i++) {
		struct obj *sbx = S.objs[i], *pod;
		struct runtime *rt;
		const char *ip;

		if (sbx->kind != K_SANDBOX || is_ready(sbx->body) ||
		    template_stuck(
			    annotation(sbx->body, "fake-kube.gosbx/template")))
			continue;
		rt = find_runtime(sbx->ns, sbx->name);
		if (cfg.runtime || cfg.runtime_cmd) {
			if (!rt || !runtime_probe(rt))
				continue;
			rt->ready = 1;
		}
		pod = find_obj(K_POD, sbx->ns, sbx->name);
		ip = pod ? json_path_str(pod->body, "status.podIP") : NULL;
		if (pod) {
			json_t *st = json_object_get(pod->body, "status");

			json_object_set_new(st, "phase",
					    json_string("Running"));
			set_condition(pod->body, "Ready", "True", "", "");
			store_touch(pod);
		}
		set_condition(sbx->body, "Ready", "True", "DependenciesReady",
			      "Pod is Ready; Service Exists");
		json_object_set_new(json_object_get(sbx->body, "status"),
				    "podIPs",
				    ip ? json_pack("[s]", ip) : json_array());
		if (!S.release_v05)
			json_object_set_new(
				json_object_get(sbx->body, "status"),
				"replicas", json_integer(1));
		json_object_set_new(json_object_get(sbx->body, "status"),
				    "service", json_string(sbx->name));
		{
			struct strbuf fqdn = STRBUF_INIT;

			strbuf_addf(&fqdn, "%s.%s.svc.cluster.local", sbx->name,
				    sbx->ns);
			json_object_set_new(
				json_object_get(sbx->body, "status"),
				"serviceFQDN", json_string(fqdn.buf));
			strbuf_release(&fqdn);
		}
		store_touch(sbx);
	}
}

static int owned_by_obj(struct obj *o, struct obj *owner)
{
	return !strcmp(o->ns, owner->ns) &&
	       owned_by(o->body, meta_str(owner->body, "uid"));
}

/* Keep each warm pool at spec.replicas unclaimed sandboxes. */
static void warmpool_tick(void)
{
	size_t i, j;

	for (i = 0; i < S.nr_objs; i++) {
		struct obj *pool = S.objs[i], *tmpl;
		const char *t;
		int64_t want = 1, have = 0, ready = 0;
		json_t *st;
		struct strbuf sel = STRBUF_INIT, gen = STRBUF_INIT;

		if (pool->kind != K_WARMPOOL)
			continue;
		json_object_int(json_object_get(pool->body, "spec"), "replicas",
				&want);
		t = json_path_str(pool->body, "spec.sandboxTemplateRef.name");
		tmpl = t ? find_obj(K_TEMPLATE, pool->ns, t) : NULL;
		for (j = 0; j < S.nr_objs; j++) {
			struct obj *s = S.objs[j];

			if (s->kind != K_SANDBOX || !owned_by_obj(s, pool))
				continue;
			have++;
			ready += is_ready(s->body);
		}
		strbuf_addf(&gen, "%s-", pool->name);
		for (; tmpl && have < want; have++)
			create_sandbox(pool->ns, NULL, gen.buf, tmpl, pool,
				       pool->name);
		strbuf_release(&gen);
		strbuf_addf(&sel, "%s=%s", LABEL_POOL, pool->name);
		st = json_pack("{s:I,s:I,s:s}", "replicas", (json_int_t)have,
			       "readyReplicas", (json_int_t)ready, "selector",
			       sel.buf);
		strbuf_release(&sel);
		if (!json_equal(st, json_object_get(pool->body, "status"))) {
			json_object_set_new(pool->body, "status", st);
			store_touch(pool);
		} else {
			json_decref(st);
		}
	}
}

static void ensure_router(const char *ns)
{
	struct strbuf name = STRBUF_INIT, ip = STRBUF_INIT;
	struct obj *pod, *svc;
	json_t *body;

	if (find_obj(K_SERVICE, ns, ROUTER_SVC))
		return;
	body = json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:s,s:{s:s},s:[{s:s,s:s,"
			 "s:i,s:i}]}}",
			 "apiVersion", "v1", "kind", "Service", "metadata",
			 "name", ROUTER_SVC, "spec", "type", "ClusterIP",
			 "clusterIP", "10.96.0.80", "selector", "app",
			 "sandbox-router", "ports", "name", "http", "protocol",
			 "TCP", "port", 8080, "targetPort", 8080);
	svc = store_add(K_SERVICE, ns, body);
	strbuf_addstr(&name, "sandbox-router-");
	add_suffix(&name);
	new_pod_ip(&ip);
	body = json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:[{s:s,s:s,s:[{s:i}]}]},"
			 "s:{s:s,s:s,s:[{s:s}],s:[{s:s,s:s}]}}",
			 "apiVersion", "v1", "kind", "Pod", "metadata", "name",
			 name.buf, "labels", "app", "sandbox-router", "spec",
			 "containers", "name", "router", "image",
			 "sandbox-router:v0.4.6", "ports", "containerPort",
			 8080, "status", "phase", "Running", "podIP", ip.buf,
			 "podIPs", "ip", ip.buf, "conditions", "type", "Ready",
			 "status", "True");
	pod = store_add(K_POD, ns, body);
	strbuf_reset(&name);
	strbuf_addf(&name, "%s-", ROUTER_SVC);
	add_suffix(&name);
	body = json_pack(
		"{s:s,s:s,s:{s:s,s:{s:s,s:s}},s:s,s:[{s:[s],s:{s:b,s:b,s:b},"
		"s:{s:s,s:s,s:s,s:s}}],s:[{s:s,s:i,s:s}]}",
		"apiVersion", "discovery.k8s.io/v1", "kind", "EndpointSlice",
		"metadata", "name", name.buf, "labels",
		"kubernetes.io/service-name", ROUTER_SVC,
		"endpointslice.kubernetes.io/managed-by",
		"endpointslice-controller.k8s.io", "addressType", "IPv4",
		"endpoints", "addresses", ip.buf, "conditions", "ready", 1,
		"serving", 1, "terminating", 0, "targetRef", "kind", "Pod",
		"namespace", ns, "name", pod ? pod->name : "", "uid",
		pod ? meta_str(pod->body, "uid") : "", "ports", "name", "http",
		"port", 8080, "protocol", "TCP");
	if (svc)
		set_owner(body, svc);
	store_add(K_ENDPOINTSLICE, ns, body);
	strbuf_release(&name);
	strbuf_release(&ip);
}

/* A ready, unclaimed warm-pool sandbox for template t, or NULL. */
static struct obj *find_warm_sandbox(const char *ns, const char *t,
				     const char *w)
{
	size_t i, j;

	if (w && !strcmp(w, "none"))
		return NULL;
	for (i = 0; i < S.nr_objs; i++) {
		struct obj *pool = S.objs[i];
		const char *pt;

		if (pool->kind != K_WARMPOOL || strcmp(pool->ns, ns))
			continue;
		pt = json_path_str(pool->body, "spec.sandboxTemplateRef.name");
		if (w && *w && strcmp(w, "default") ? strcmp(pool->name, w)
						    : (!pt || strcmp(pt, t)))
			continue;
		for (j = 0; j < S.nr_objs; j++) {
			struct obj *s = S.objs[j];

			if (s->kind == K_SANDBOX && owned_by_obj(s, pool) &&
			    is_ready(s->body))
				return s;
		}
	}
	return NULL;
}

static int claim_condition(struct obj *claim, const char *status,
			   const char *reason, const char *message)
{
	if (!set_condition(claim->body, "Ready", status, reason, message))
		return 0;
	store_touch(claim);
	return 1;
}

/* Bind an unbound claim to a sandbox once --ready-delay has passed. */
static void claim_bind(struct obj *claim)
{
	const char *t = NULL, *w = NULL, *pool;
	struct obj *tmpl, *sbx, *p;
	struct strbuf msg = STRBUF_INIT;
	json_t *st;

	if (monotonic_ms() < claim->created_ms + (uint64_t)cfg.ready_delay_ms)
		return;
	if (S.release_v05) {
		/*
		 * v0.5: every stored claim names a pool, which must exist
		 * (a v1alpha1 claim's is shadow-pool-<template>)
		 */
		pool = json_path_str(claim->body, "spec.warmPoolRef.name");
		p = pool ? find_obj(K_WARMPOOL, claim->ns, pool) : NULL;
		if (!p) {
			strbuf_addf(&msg, "SandboxWarmPool \"%s\" not found",
				    pool ? pool : "");
			claim_condition(claim, "False", "WarmPoolNotFound",
					msg.buf);
			goto out;
		}
		t = json_path_str(p->body, "spec.sandboxTemplateRef.name");
		w = pool;
	} else {
		t = json_path_str(claim->body, "spec.sandboxTemplateRef.name");
		w = json_path_str(claim->body, "spec.warmpool");
	}
	tmpl = t ? find_obj(K_TEMPLATE, claim->ns, t) : NULL;
	if (!tmpl) {
		strbuf_addf(&msg, "SandboxTemplate \"%s\" not found",
			    t ? t : "");
		claim_condition(claim, "False", "TemplateNotFound", msg.buf);
		goto out;
	}
	sbx = find_warm_sandbox(claim->ns, t, w);
	if (sbx) {
		json_t *labels = json_path(sbx->body, "metadata.labels");

		json_object_del(labels, LABEL_POOL);
		set_owner(sbx->body, claim);
		store_touch(sbx);
	} else {
		sbx = find_obj(K_SANDBOX, claim->ns, claim->name);
		if (sbx && !owned_by_obj(sbx, claim)) {
			strbuf_addf(&msg,
				    "Sandbox \"%s\" exists and is not owned "
				    "by this claim",
				    claim->name);
			claim_condition(claim, "False", "SandboxConflict",
					msg.buf);
			goto out;
		}
		if (!sbx)
			sbx = create_sandbox(claim->ns, claim->name, NULL, tmpl,
					     claim, NULL);
		if (!sbx)
			goto out;
	}
	st = sub_object(claim->body, "status");
	/* --legacy-sandbox-status: older controllers wrote "Name" */
	json_object_set_new(
		st, "sandbox",
		json_pack("{s:s}", cfg.legacy_sandbox_status ? "Name" : "name",
			  sbx->name));
	set_condition(claim->body, "Ready", "False", "SandboxNotReady",
		      "Sandbox is not ready");
	store_touch(claim);
out:
	strbuf_release(&msg);
}

/* Mirror the bound sandbox's readiness into the claim. */
static void claim_follow(struct obj *claim, const char *sname)
{
	struct obj *sbx = find_obj(K_SANDBOX, claim->ns, sname), *pod;
	json_t *st = json_object_get(claim->body, "status");
	json_t *ips;
	const char *msg;

	if (!sbx) {
		claim_condition(claim, "False", "SandboxNotFound",
				"Sandbox was deleted");
		return;
	}
	if (!is_ready(sbx->body)) {
		pod = find_obj(K_POD, sbx->ns, sbx->name);
		msg = pod ? json_path_str(
				    json_array_get(
					    json_path(
						    pod->body,
						    "status.containerStatuses"),
					    0),
				    "state.waiting.message")
			  : NULL;
		claim_condition(claim, "False", "SandboxNotReady",
				msg ? msg : "Sandbox is not ready");
		return;
	}
	ips = json_path(sbx->body, "status.podIPs");
	if (!json_equal(ips, json_path(st, "sandbox.podIPs"))) {
		/* podIPs and Ready=True in one MODIFIED event */
		json_object_set(json_object_get(st, "sandbox"), "podIPs", ips);
		set_condition(claim->body, "Ready", "True", "SandboxReady",
			      "Sandbox is ready");
		if (!claim->ready_us)
			claim->ready_us = monotonic_us();
		store_touch(claim);
		return;
	}
	if (!claim->ready_us)
		claim->ready_us = monotonic_us();
	claim_condition(claim, "True", "SandboxReady", "Sandbox is ready");
}

/* spec.lifecycle.shutdownTime passed: 1 when the claim was deleted. */
static int claim_expire(struct obj *claim)
{
	const char *when =
		json_path_str(claim->body, "spec.lifecycle.shutdownTime");
	const char *policy =
		json_path_str(claim->body, "spec.lifecycle.shutdownPolicy");
	struct strbuf msg = STRBUF_INIT;
	time_t t;
	size_t i;

	if (!when || parse_rfc3339(when, &t) < 0 || fake_now() < t)
		return 0;
	if (policy && strcmp(policy, "Retain")) {
		delete_cascade(claim);
		return 1;
	}
	for (i = 0; i < S.nr_objs; i++) {
		struct obj *s = S.objs[i];

		if (s->kind == K_SANDBOX && owned_by_obj(s, claim)) {
			delete_cascade(s);
			i = (size_t)-1;
		}
	}
	strbuf_addf(&msg, "Claim expired at %s", when);
	claim_condition(claim, "False", "ClaimExpired", msg.buf);
	strbuf_release(&msg);
	return 0;
}

/*
 * One pass of the controller (lock held), every 100 ms:
 * - sandboxes turn Ready when their runtime accepts a connection (at
 *   once without --runtime); a sandbox of a --stuck template never
 *   does: its Pod stays Pending with an ErrImagePull waiting state and
 *   two Warning events;
 * - warm pools are filled to spec.replicas (status replicas,
 *   readyReplicas, selector);
 * - a claim older than --ready-delay is bound: TemplateNotFound (and,
 *   for native v1beta1 claims, WarmPoolNotFound) when its references
 *   are missing, else a ready sandbox of a matching warm pool is
 *   adopted (its name differs from the claim's) or a Sandbox named
 *   like the claim is created; status.sandbox.name is set, then
 *   podIPs and Ready=True (reason SandboxReady) once the sandbox is
 *   ready, or Ready=False SandboxNotReady with the pull error;
 * - a claim whose spec.lifecycle.shutdownTime has passed is deleted
 *   (shutdownPolicy Delete, DeleteForeground) or loses its sandbox and
 *   gets Ready=False ClaimExpired (Retain, the default);
 * - each namespace with a claim gets the router Service, Pod and
 *   EndpointSlice.
 */
static void controller_tick(void)
{
	size_t i;

	runtime_reap(0);
	sandbox_tick();
	warmpool_tick();
	for (i = 0; i < S.nr_objs; i++) {
		struct obj *claim = S.objs[i];
		const char *sname, *reason;

		if (claim->kind != K_CLAIM)
			continue;
		ensure_router(claim->ns);
		if (claim_expire(claim)) {
			i = (size_t)-1;
			continue;
		}
		reason = NULL;
		{
			json_t *conds = json_path(claim->body,
						  "status.conditions"),
			       *c;
			size_t j;

			json_array_foreach (conds, j, c)
				if (!strcmp(json_object_str(c, "type")
						    ? json_object_str(c, "type")
						    : "",
					    "Ready"))
					reason = json_object_str(c, "reason");
		}
		if (reason && !strcmp(reason, "ClaimExpired"))
			continue;
		sname = json_path_str(claim->body, "status.sandbox.name");
		if (!sname)
			sname = json_path_str(claim->body,
					      "status.sandbox.Name");
		if (sname)
			claim_follow(claim, sname);
		else
			claim_bind(claim);
	}
}

static void *controller_main(void *arg)
{
	struct timespec ts;

	pthread_mutex_lock(&S.lock);
	while (!S.stopping) {
		controller_tick();
		deadline_in_ms(&ts, CLOCK_REALTIME, 100);
		pthread_cond_timedwait(&S.changed, &S.lock, &ts);
	}
	pthread_mutex_unlock(&S.lock);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The sandbox router (v0.4.6 behaviour) */

struct proxy {
	int fd;
	struct strbuf pending; /* body bytes read with the head */
	size_t pos;
};

static ssize_t proxy_reader(void *cls, uint64_t off, char *buf, size_t max)
{
	struct proxy *p = cls;
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
	ssize_t n;
	int rc, waited;

	if (p->pos < p->pending.len) {
		n = (ssize_t)(p->pending.len - p->pos);
		if ((size_t)n > max)
			n = (ssize_t)max;
		memcpy(buf, p->pending.buf + p->pos, n);
		p->pos += n;
		return n;
	}
	waited = 0;
	do {
		if (S.stopping)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		rc = poll(&pfd, 1, 250);
		if (rc == 0)
			waited += 250;
	} while ((rc < 0 && errno == EINTR) ||
		 (rc == 0 && waited < cfg.router_timeout_s * 1000));
	if (rc <= 0)
		return MHD_CONTENT_READER_END_WITH_ERROR; /* idle timeout */
	do {
		n = read(p->fd, buf, max);
	} while (n < 0 && errno == EINTR);
	if (n == 0)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (n < 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	return n;
}

static void proxy_free(void *cls)
{
	struct proxy *p = cls;

	close(p->fd);
	strbuf_release(&p->pending);
	free(p);
}

static int is_hop_header(const char *k)
{
	static const char *const hop[] = { "Host",
					   "Connection",
					   "Keep-Alive",
					   "Transfer-Encoding",
					   "Content-Length",
					   "Upgrade",
					   "Proxy-Connection",
					   "TE",
					   "Trailer",
					   "Expect" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(hop); i++)
		if (!strcasecmp(k, hop[i]))
			return 1;
	return 0;
}

static enum MHD_Result add_fwd_header(void *cls, enum MHD_ValueKind kind,
				      const char *key, const char *value)
{
	struct strbuf *sb = cls;

	if (!is_hop_header(key))
		strbuf_addf(sb, "%s: %s\r\n", key, value ? value : "");
	return MHD_YES;
}

static enum MHD_Result send_detail(struct MHD_Connection *c, unsigned code,
				   const char *fmt, ...) PRINTF_LIKE(3, 4);
static enum MHD_Result send_detail(struct MHD_Connection *c, unsigned code,
				   const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;
	json_t *v;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	v = json_pack("{s:s}", "detail", msg.buf);
	strbuf_release(&msg);
	return send_json(c, code, v, NULL);
}

/* Wait (idle timeout) and read the response head; -1 EOF, -2 timeout. */
static int read_head(int fd, struct strbuf *in, size_t *head_len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char *end;
	ssize_t n;
	int rc, waited = 0;

	for (;;) {
		end = in->len ? memmem(in->buf, in->len, "\r\n\r\n", 4) : NULL;
		if (end) {
			*head_len = end - in->buf + 4;
			return 0;
		}
		if (in->len > 65536)
			return -1;
		if (S.stopping)
			return -1;
		rc = poll(&pfd, 1, 250);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0) {
			waited += 250;
			if (waited >= cfg.router_timeout_s * 1000)
				return -2;
			continue;
		}
		strbuf_grow(in, 8192);
		n = read(fd, in->buf + in->len, 8192);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		strbuf_setlen(in, in->len + n);
	}
}

/*
 * --router-websocket: a WebSocket upgrade goes to the sandbox with its
 * Upgrade, Connection and Sec-WebSocket-* headers; a 101 answer is
 * passed back and the bytes are then spliced both ways (as the v0.5.x
 * routers do: Go's ReverseProxy, or the python router's relay from
 * v0.5.2); another answer is passed back as it is. Splices sit in the
 * tunnel list, so that break-tunnels and shutdown end them too.
 */
static void set_nonblock(int fd);
static pthread_cond_t tunnels_gone;

struct splice {
	struct tunnel link;
	struct MHD_UpgradeResponseHandle *urh;
	struct strbuf to_client, to_backend;
};

static void *splice_main(void *arg)
{
	struct splice *sp = arg;
	int fds[2] = { sp->link.ws_fd, sp->link.backend_fd };
	/* to[i]: read from fds[i], to be written to fds[1 - i] */
	struct strbuf *to[2] = { &sp->to_backend, &sp->to_client };
	int eof[2] = { 0, 0 };	/* fds[i] sent EOF */
	int dead[2] = { 0, 0 }; /* fds[i] takes no more */
	char buf[32768];

	set_nonblock(fds[0]);
	set_nonblock(fds[1]);
	for (;;) {
		struct pollfd p[2];
		int broken, pending;

		pthread_mutex_lock(&S.lock);
		broken = sp->link.broken || S.stopping;
		pthread_mutex_unlock(&S.lock);
		pending = (to[0]->len && !dead[1]) || (to[1]->len && !dead[0]);
		if (broken || ((eof[0] || eof[1]) && !pending))
			break;
		for (int i = 0; i < 2; i++) {
			p[i].events =
				(!eof[i] && to[i]->len < (1 << 20) ? POLLIN
								   : 0) |
				(!dead[i] && to[1 - i]->len ? POLLOUT : 0);
			/* nothing wanted: no POLLHUP spinning either */
			p[i].fd = p[i].events ? fds[i] : -1;
			p[i].revents = 0;
		}
		if (poll(p, 2, 250) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    !eof[i]) {
				ssize_t n = recv(fds[i], buf, sizeof(buf), 0);

				if (n > 0)
					strbuf_add(to[i], buf, n);
				else if (n == 0 ||
					 (errno != EAGAIN && errno != EINTR))
					eof[i] = 1;
			}
			if (to[1 - i]->len && !dead[i] &&
			    (p[i].revents & (POLLOUT | POLLHUP | POLLERR))) {
				ssize_t n = send(fds[i], to[1 - i]->buf,
						 to[1 - i]->len, MSG_NOSIGNAL);

				if (n > 0) {
					strbuf_remove(to[1 - i], 0, n);
				} else if (n < 0 && errno != EAGAIN &&
					   errno != EINTR) {
					/* fds[i] is gone: its data with it */
					dead[i] = eof[i] = 1;
					strbuf_reset(to[1 - i]);
				}
			}
		}
	}
	pthread_mutex_lock(&S.lock);
	for (struct tunnel **pp = &S.tunnels; *pp; pp = &(*pp)->next)
		if (*pp == &sp->link) {
			*pp = sp->link.next;
			break;
		}
	S.nr_tunnels--;
	pthread_cond_broadcast(&tunnels_gone);
	pthread_mutex_unlock(&S.lock);
	close(sp->link.backend_fd);
	MHD_upgrade_action(sp->urh, MHD_UPGRADE_ACTION_CLOSE);
	strbuf_release(&sp->to_client);
	strbuf_release(&sp->to_backend);
	free(sp);
	return NULL;
}

static void splice_cb(void *cls, struct MHD_Connection *c, void *con_cls,
		      const char *extra_in, size_t extra_in_size,
		      MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	struct splice *sp = cls;
	pthread_attr_t attr;
	pthread_t th;

	sp->link.ws_fd = sock;
	sp->urh = urh;
	strbuf_add(&sp->to_backend, extra_in, extra_in_size);
	pthread_mutex_lock(&S.lock);
	sp->link.next = S.tunnels;
	S.tunnels = &sp->link;
	S.nr_tunnels++;
	pthread_mutex_unlock(&S.lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, splice_main, sp)) {
		pthread_mutex_lock(&S.lock);
		S.tunnels = sp->link.next;
		S.nr_tunnels--;
		pthread_mutex_unlock(&S.lock);
		close(sp->link.backend_fd);
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		strbuf_release(&sp->to_client);
		strbuf_release(&sp->to_backend);
		free(sp);
	}
	pthread_attr_destroy(&attr);
}

static enum MHD_Result add_ws_header(void *cls, enum MHD_ValueKind kind,
				     const char *key, const char *value)
{
	struct strbuf *sb = cls;

	if (strcasecmp(key, "Host"))
		strbuf_addf(sb, "%s: %s\r\n", key, value ? value : "");
	return MHD_YES;
}

static enum MHD_Result router_upgrade(struct MHD_Connection *c, struct req *r,
				      int fd, const char *method,
				      const char *id)
{
	struct strbuf out = STRBUF_INIT, in = STRBUF_INIT;
	struct MHD_Response *resp;
	struct splice *sp;
	enum MHD_Result ret;
	size_t head_len = 0;
	int code = 0, rc;
	char *line, *next;

	strbuf_addf(&out, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, r->uri, id);
	MHD_get_connection_values(c, MHD_HEADER_KIND, add_ws_header, &out);
	strbuf_addstr(&out, "\r\n");
	if (send(fd, out.buf, out.len, MSG_NOSIGNAL) != (ssize_t)out.len) {
		close(fd);
		strbuf_release(&out);
		return send_detail(c, 502,
				   "Could not connect to the backend sandbox: "
				   "%s",
				   id);
	}
	strbuf_release(&out);
	rc = read_head(fd, &in, &head_len);
	if (rc < 0 || sscanf(in.buf, "HTTP/%*d.%*d %d", &code) != 1) {
		close(fd);
		strbuf_release(&in);
		return send_detail(c, 502,
				   "Could not connect to the backend sandbox: "
				   "%s",
				   id);
	}
	sp = xcalloc(1, sizeof(*sp));
	sp->link.backend_fd = fd;
	strbuf_init(&sp->to_client, 0);
	strbuf_init(&sp->to_backend, 0);
	/* frames that came with the head go to the client first */
	strbuf_add(&sp->to_client, in.buf + head_len, in.len - head_len);
	in.buf[head_len - 2] = '\0';
	if (code == 101) {
		resp = MHD_create_response_for_upgrade(splice_cb, sp);
	} else {
		/* a refusal: its body came with the head (it is small) */
		resp = MHD_create_response_from_buffer(sp->to_client.len,
						       sp->to_client.buf,
						       MHD_RESPMEM_MUST_COPY);
		close(fd);
		strbuf_release(&sp->to_client);
		free(sp);
		sp = NULL;
	}
	if (!resp) {
		strbuf_release(&in);
		return MHD_NO;
	}
	for (line = strstr(in.buf, "\r\n"); line; line = next) {
		char *colon, *val;

		line += 2;
		next = strstr(line, "\r\n");
		if (next)
			*next = '\0';
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		for (val = colon + 1; *val == ' '; val++)
			;
		if (strcasecmp(line, "Connection") &&
		    strcasecmp(line, "Content-Length") &&
		    strcasecmp(line, "Transfer-Encoding") &&
		    strcasecmp(line, "Date"))
			MHD_add_response_header(resp, line, val);
	}
	strbuf_release(&in);
	ret = MHD_queue_response(c, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

/*
 * Send the request of c (method, target, the body gathered in r->body)
 * to a runtime on the connected socket fd with "Host: <host>" and the
 * client's headers but the hop-by-hop ones, as HTTP/1.0 with
 * Connection: close; queue its answer: the status and headers as the
 * runtime sent them, the body streamed (proxy_reader(), which owns fd
 * from then on; fd is closed on every path). No head within
 * --router-timeout answers 504, a closed connection 502; both name
 * what (the sandbox) in a FastAPI-style detail as the router does.
 * Shared by the router and the pod network.
 */
static enum MHD_Result forward_request(struct MHD_Connection *c, struct req *r,
				       int fd, const char *method,
				       const char *target, const char *host,
				       const char *what)
{
	struct strbuf out = STRBUF_INIT, in = STRBUF_INIT;
	struct MHD_Response *resp;
	struct proxy *p;
	enum MHD_Result ret;
	size_t head_len = 0;
	int code = 0, rc;
	int64_t clen = -1;
	char *line, *next;

	strbuf_addf(&out, "%s %s HTTP/1.0\r\nHost: %s\r\n", method, target,
		    host);
	MHD_get_connection_values(c, MHD_HEADER_KIND, add_fwd_header, &out);
	strbuf_addf(&out, "Connection: close\r\nContent-Length: %zu\r\n\r\n",
		    r->body.len);
	strbuf_addbuf(&out, &r->body);
	{
		/* short writes: go on from where the last one stopped */
		size_t done = 0;

		while (done < out.len) {
			ssize_t n = send(fd, out.buf + done, out.len - done,
					 MSG_NOSIGNAL);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			done += (size_t)n;
		}
	}
	strbuf_release(&out);
	rc = read_head(fd, &in, &head_len);
	if (rc < 0) {
		close(fd);
		strbuf_release(&in);
		if (rc == -2)
			return send_detail(c, 504,
					   "Timed out waiting for the backend "
					   "sandbox: %s",
					   what);
		return send_detail(c, 502,
				   "Could not connect to the backend sandbox: "
				   "%s",
				   what);
	}
	in.buf[head_len - 2] = '\0';
	if (sscanf(in.buf, "HTTP/%*d.%*d %d", &code) != 1)
		code = 502;
	p = xcalloc(1, sizeof(*p));
	p->fd = fd;
	strbuf_init(&p->pending, 0);
	strbuf_add(&p->pending, in.buf + head_len, in.len - head_len);
	line = strstr(in.buf, "\r\n");
	for (; line; line = next) {
		char *colon;

		line += 2;
		next = strstr(line, "\r\n");
		if (next)
			*next = '\0';
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		if (!strcasecmp(line, "Content-Length"))
			clen = strtoll(colon + 1, NULL, 10);
		*colon = ':';
	}
	resp = MHD_create_response_from_callback(
		clen >= 0 ? (uint64_t)clen : MHD_SIZE_UNKNOWN, 32 * 1024,
		proxy_reader, p, proxy_free);
	if (!resp) {
		proxy_free(p);
		strbuf_release(&in);
		return MHD_NO;
	}
	/* the loop above turned each header's CR LF into NUL LF */
	line = strstr(in.buf, "\r\n");
	if (line)
		line += 2;
	while (line && *line) {
		size_t len = strlen(line);
		char *colon = strchr(line, ':'), *val;

		if (colon) {
			*colon = '\0';
			val = colon + 1;
			while (*val == ' ')
				val++;
			if (!is_hop_header(line) && strcasecmp(line, "Date"))
				MHD_add_response_header(resp, line, val);
		}
		line += len;
		line = line[1] == '\n' ? line + 2 : NULL;
	}
	strbuf_release(&in);
	ret = MHD_queue_response(c, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

/*
 * The router: requests carry X-Sandbox-ID (required: 400
 * "X-Sandbox-ID header is required"), X-Sandbox-Namespace (default
 * "default") and X-Sandbox-Port (default 8888). They are forwarded to
 * the sandbox's gosbx-runtime; a missing or unready sandbox, another
 * port or a refused connection answers 502 "Could not connect to the
 * backend sandbox: <id>" (FastAPI style {"detail": ...}). With
 * --router-token, "Authorization: Bearer <token>" is required (401).
 * --router-timeout is an idle timeout: no answer head within it gives
 * 504; a body that stays silent that long is cut (the connection is
 * closed mid-body, as a proxy read timeout does), while a stream that
 * keeps sending is not. GET /healthz answers 200.
 */
static enum MHD_Result router_handler(void *cls, struct MHD_Connection *c,
				      const char *url, const char *method,
				      const char *version,
				      const char *upload_data,
				      size_t *upload_size, void **con_cls)
{
	struct req *r = *con_cls;
	const char *id, *ns, *port, *auth;
	struct strbuf host = STRBUF_INIT;
	struct sockaddr_storage ss;
	socklen_t ss_len = 0;
	enum MHD_Result ret;
	int fd = -1, ok = 0, code = 0;

	if (!r->seen) {
		/* first call: headers only */
		r->seen = 1;
		return MHD_YES;
	}
	if (*upload_size) {
		strbuf_add(&r->body, upload_data, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (!strcmp(url, "/healthz"))
		return send_detail(c, 200, "ok");
	if (cfg.router_token) {
		struct strbuf want = STRBUF_INIT;

		auth = header(c, "Authorization");
		strbuf_addf(&want, "Bearer %s", cfg.router_token);
		ok = auth && !strcmp(auth, want.buf);
		strbuf_release(&want);
		if (!ok)
			return send_detail(c, 401, "Unauthorized");
	}
	id = header(c, "X-Sandbox-ID");
	ns = header(c, "X-Sandbox-Namespace");
	port = header(c, "X-Sandbox-Port");
	if (!id || !*id)
		return send_detail(c, 400, "X-Sandbox-ID header is required");
	pthread_mutex_lock(&S.lock);
	code = S.router_fail_count > 0 ? S.router_fail_status : 0;
	if (code)
		S.router_fail_count--;
	pthread_mutex_unlock(&S.lock);
	if (code)
		return send_detail(c, (unsigned)code,
				   "Could not connect to the backend sandbox: "
				   "%s",
				   id);
	if (!ns || !*ns)
		ns = "default";
	if (!port || !*port)
		port = "8888";
	ok = 0;
	pthread_mutex_lock(&S.lock);
	if (!strcmp(port, "8888") &&
	    !sandbox_runtime_addr(ns, id, &ss, &ss_len))
		ok = 1;
	pthread_mutex_unlock(&S.lock);
	if (ok)
		fd = connect_sockaddr(&ss, ss_len);
	if (fd < 0)
		return send_detail(c, 502,
				   "Could not connect to the backend sandbox: "
				   "%s",
				   id);
	if (cfg.router_websocket && header(c, "Upgrade") &&
	    !strcasecmp(header(c, "Upgrade"), "websocket"))
		return router_upgrade(c, r, fd, method, id);
	strbuf_addf(&host, "%s.%s.svc.cluster.local:%s", id, ns, port);
	ret = forward_request(c, r, fd, method, r->uri, host.buf, id);
	strbuf_release(&host);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The pod network (--pod-network-port) */

/*
 * A plain HTTP forward proxy that plays the cluster's pod network for
 * a real router run outside (its HTTP_PROXY): a request in absolute
 * form, "GET http://<podIP>:8888/<path> HTTP/1.1", goes to the runtime
 * of the sandbox whose Pod has that IP, the one router_handler()
 * reaches for that sandbox, through forward_request(). Anything else
 * (not absolute form, an IP no sandbox Pod has, another port, a
 * runtime not ready) answers 502, as a proxy that cannot connect.
 */
static enum MHD_Result pod_network_handler(void *cls, struct MHD_Connection *c,
					   const char *url, const char *method,
					   const char *version,
					   const char *upload_data,
					   size_t *upload_size, void **con_cls)
{
	struct req *r = *con_cls;
	struct strbuf hostport = STRBUF_INIT, origin = STRBUF_INIT;
	struct sockaddr_storage ss;
	socklen_t ss_len = 0;
	const char *target, *path;
	enum MHD_Result ret;
	char *colon;
	int fd = -1;
	size_t i;

	if (!r->seen) {
		r->seen = 1;
		return MHD_YES;
	}
	if (*upload_size) {
		strbuf_add(&r->body, upload_data, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (strncasecmp(r->uri, "http://", 7))
		return send_detail(c, 502,
				   "pod network: not a proxy request: "
				   "'%s'",
				   r->uri);
	target = r->uri + 7;
	path = target + strcspn(target, "/?");
	strbuf_add(&hostport, target, path - target);
	colon = strrchr(hostport.buf, ':');
	pthread_mutex_lock(&S.lock);
	for (i = 0; colon && !strcmp(colon + 1, "8888") && i < S.nr_objs; i++) {
		struct obj *pod = S.objs[i];
		const char *ip = json_path_str(pod->body, "status.podIP");

		if (pod->kind != K_POD || !ip ||
		    strncmp(ip, hostport.buf, colon - hostport.buf) ||
		    ip[colon - hostport.buf])
			continue;
		if (!sandbox_runtime_addr(pod->ns, pod->name, &ss, &ss_len))
			fd = 0; /* connect below, unlocked */
		break;
	}
	pthread_mutex_unlock(&S.lock);
	if (!fd)
		fd = connect_sockaddr(&ss, ss_len);
	if (fd < 0) {
		ret = send_detail(c, 502, "pod network: cannot connect to %s",
				  hostport.buf);
		strbuf_release(&hostport);
		return ret;
	}
	strbuf_addf(&origin, "%s%s", *path == '/' ? "" : "/", path);
	ret = forward_request(c, r, fd, method, origin.buf, hostport.buf,
			      hostport.buf);
	strbuf_release(&hostport);
	strbuf_release(&origin);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Port-forward over WebSocket (v4.channel.k8s.io) */

struct tunnel_ctx {
	struct tunnel link;
	struct MHD_UpgradeResponseHandle *urh;
	struct strbuf extra; /* bytes read by MHD past the request */
	struct ws_conn ws;   /* a WS_SERVER over link.ws_fd */
	struct sockaddr_storage addr;
	socklen_t addr_len;
	struct strbuf fail; /* set: forwarding fails with this message */
	unsigned port;
	struct strbuf to_backend;
	int backend_eof;
};

static pthread_cond_t tunnels_gone = PTHREAD_COND_INITIALIZER;

static void ws_on_msg(struct ws_conn *ws, int opcode, const uint8_t *msg,
		      size_t len, uint16_t code, void *user)
{
	struct tunnel_ctx *t = user;

	if (opcode == WS_BINARY && len >= 1 && msg[0] == 0)
		strbuf_add(&t->to_backend, msg + 1, len - 1);
}

static void ws_queue(struct ws_conn *ws, int channel, const void *data,
		     size_t len)
{
	unsigned char *buf = xmalloc(len + 1);

	buf[0] = (unsigned char)channel;
	memcpy(buf + 1, data, len);
	ws_conn_send(ws, WS_BINARY, buf, len + 1); /* copies */
	free(buf);
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/*
 * One tunnel: the client's WebSocket on one side, one connection to
 * the pod's port on the other (the router pod's 8080 is the router
 * server, a sandbox pod's 8888 its gosbx-runtime). First messages: the
 * port, little-endian, on channels 0 and 1; then channel 0 carries the
 * data both ways, channel 1 an error text. The backend closing ends the
 * WebSocket (close 1000), the client closing ends the connection.
 */
static void *tunnel_main(void *arg)
{
	struct tunnel_ctx *t = arg;
	struct ws_conn *ctx = &t->ws;
	struct ws_transport tr;
	unsigned char port_le[2] = { t->port & 0xff, (t->port >> 8) & 0xff };
	char buf[32768];
	int fd = -1, closing = 0, close_queued = 0;

	set_nonblock(t->link.ws_fd);
	ws_socket_transport(&tr, t->link.ws_fd);
	if (ws_conn_init(ctx, WS_SERVER, &tr, 0, 0, ws_on_msg, t) < 0)
		die("out of memory");
	ws_conn_preload(ctx, t->extra.buf, t->extra.len);
	ws_queue(ctx, 0, port_le, 2);
	ws_queue(ctx, 1, port_le, 2);
	if (!t->fail.len) {
		fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 &&
		    connect(fd, (struct sockaddr *)&t->addr, t->addr_len) < 0) {
			close(fd);
			fd = -1;
		}
		if (fd < 0)
			strbuf_addf(&t->fail,
				    "error forwarding port %u to pod: failed "
				    "to connect: connection refused",
				    t->port);
	}
	pthread_mutex_lock(&S.lock);
	t->link.backend_fd = fd;
	pthread_mutex_unlock(&S.lock);
	if (fd < 0) {
		ws_queue(ctx, 1, t->fail.buf, t->fail.len);
		closing = 1;
	} else {
		set_nonblock(fd);
	}
	for (;;) {
		struct pollfd pfd[2];
		int nfd = 1, broken;

		pthread_mutex_lock(&S.lock);
		broken = t->link.broken || S.stopping;
		pthread_mutex_unlock(&S.lock);
		if (broken)
			break;
		if (ws_conn_done(ctx))
			break;
		pfd[0].fd = t->link.ws_fd;
		pfd[0].events = ws_conn_events(ctx);
		pfd[0].revents = 0;
		if (fd >= 0) {
			pfd[1].fd = fd;
			pfd[1].events =
				(!t->backend_eof && ws_conn_queued_bytes(ctx) <
							    (1 << 20)
					 ? POLLIN
					 : 0) |
				(t->to_backend.len ? POLLOUT : 0);
			pfd[1].revents = 0;
			nfd = 2;
		}
		if (ws_conn_buffered(ctx))
			pfd[0].revents = POLLIN;
		else if (poll(pfd, nfd, 1000) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (ws_conn_read(ctx))
				break;
		}
		if (pfd[0].revents & POLLOUT) {
			if (ws_conn_write(ctx))
				break;
		}
		if (ws_conn_close_received(ctx) && fd >= 0) {
			/* the client is done: so is the connection */
			closing = 1;
			close(fd);
			fd = -1;
			pthread_mutex_lock(&S.lock);
			t->link.backend_fd = -1;
			pthread_mutex_unlock(&S.lock);
		}
		if (fd >= 0 && t->to_backend.len) {
			ssize_t n = send(fd, t->to_backend.buf,
					 t->to_backend.len, MSG_NOSIGNAL);

			if (n > 0)
				strbuf_remove(&t->to_backend, 0, n);
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				t->backend_eof = 1;
		}
		if (fd >= 0 && nfd == 2 &&
		    (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    !t->backend_eof) {
			ssize_t n = recv(fd, buf, sizeof(buf), 0);

			if (n > 0)
				ws_queue(ctx, 0, buf, n);
			else if (n == 0 || (errno != EAGAIN && errno != EINTR))
				t->backend_eof = 1;
		}
		if (t->backend_eof && fd >= 0) {
			/* no busy loop on POLLHUP: the connection is done */
			closing = 1;
			close(fd);
			fd = -1;
			pthread_mutex_lock(&S.lock);
			t->link.backend_fd = -1;
			pthread_mutex_unlock(&S.lock);
		}
		/*
		 * wslay sends control frames before queued data: close only
		 * once the data is out.
		 */
		if (closing && !close_queued && !ws_conn_queued_count(ctx)) {
			close_queued = 1;
			ws_conn_close(ctx, 1000, NULL);
		}
		if (ws_conn_want_write(ctx) && ws_conn_write(ctx))
			break;
	}
	if (fd >= 0)
		close(fd);
	ws_conn_release(ctx);

	pthread_mutex_lock(&S.lock);
	{
		struct tunnel **pp;

		for (pp = &S.tunnels; *pp; pp = &(*pp)->next) {
			if (*pp == &t->link) {
				*pp = t->link.next;
				break;
			}
		}
	}
	S.nr_tunnels--;
	pthread_cond_broadcast(&tunnels_gone);
	pthread_mutex_unlock(&S.lock);
	MHD_upgrade_action(t->urh, MHD_UPGRADE_ACTION_CLOSE);
	strbuf_release(&t->extra);
	strbuf_release(&t->fail);
	strbuf_release(&t->to_backend);
	free(t);
	return NULL;
}

static void upgrade_cb(void *cls, struct MHD_Connection *c, void *con_cls,
		       const char *extra_in, size_t extra_in_size,
		       MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	struct tunnel_ctx *t = cls;
	pthread_attr_t attr;
	pthread_t th;

	t->link.ws_fd = sock;
	t->link.backend_fd = -1;
	t->urh = urh;
	{
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			c, MHD_CONNECTION_INFO_CONNECTION_FD);
		int one = 1;

		if (ci)
			setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_NODELAY,
				   &one, sizeof(one));
	}
	strbuf_add(&t->extra, extra_in, extra_in_size);
	pthread_mutex_lock(&S.lock);
	t->link.next = S.tunnels;
	S.tunnels = &t->link;
	S.nr_tunnels++;
	pthread_mutex_unlock(&S.lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, tunnel_main, t)) {
		pthread_mutex_lock(&S.lock);
		S.tunnels = t->link.next;
		S.nr_tunnels--;
		pthread_mutex_unlock(&S.lock);
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		strbuf_release(&t->extra);
		strbuf_release(&t->fail);
		strbuf_release(&t->to_backend);
		free(t);
	}
	pthread_attr_destroy(&attr);
}

static int has_token(const char *list, const char *tok)
{
	size_t n = strlen(tok);
	const char *p = list;

	while (p && *p) {
		p += strspn(p, " ,");
		if (!strncasecmp(p, tok, n) &&
		    (p[n] == '\0' || p[n] == ',' || p[n] == ' '))
			return 1;
		p = strchr(p, ',');
	}
	return 0;
}

static enum MHD_Result handle_portforward(struct MHD_Connection *c,
					  struct req *r, const char *ns,
					  const char *pod_name)
{
	const char *up = header(c, "Upgrade"), *key, *proto, *ports;
	struct strbuf b64 = STRBUF_INIT;
	struct MHD_Response *resp;
	struct tunnel_ctx *t;
	struct obj *pod;
	enum MHD_Result ret;
	unsigned long port;
	char *end;

	ports = query(c, "ports");
	if (!ports || !*ports)
		return send_status(c, 400, "BadRequest", r,
				   "query parameter \"port\" is required");
	port = strtoul(ports, &end, 10);
	if (*end || port == 0 || port > 65535)
		return send_status(c, 400, "BadRequest", r,
				   "invalid port \"%s\": only one port of "
				   "1-65535 per connection",
				   ports);
	pthread_mutex_lock(&S.lock);
	pod = find_obj(K_POD, ns, pod_name);
	t = NULL;
	if (pod) {
		t = xcalloc(1, sizeof(*t));
		strbuf_init(&t->extra, 0);
		strbuf_init(&t->fail, 0);
		strbuf_init(&t->to_backend, 0);
		t->port = (unsigned)port;
		if (label(pod->body, "app") &&
		    !strcmp(label(pod->body, "app"), "sandbox-router") &&
		    port == 8080) {
			struct sockaddr_in *sin =
				(struct sockaddr_in *)&t->addr;

			if (cfg.router_upstream) {
				*sin = S.router_upstream;
			} else {
				sin->sin_family = AF_INET;
				sin->sin_port = htons(S.router_port);
				sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			}
			t->addr_len = sizeof(*sin);
		} else {
			struct runtime *rt = find_runtime(ns, pod_name);

			if (port == 8888 && rt && rt->ready &&
			    !runtime_sockaddr(rt, &t->addr, &t->addr_len))
				; /* forward there */
			else
				strbuf_addf(&t->fail,
					    "error forwarding port %lu to pod "
					    "%s: failed to connect to "
					    "localhost:%lu: connection refused",
					    port, pod_name, port);
		}
	}
	pthread_mutex_unlock(&S.lock);
	if (!pod)
		return send_not_found(c, K_POD, pod_name, r);
	key = header(c, "Sec-WebSocket-Key");
	proto = header(c, "Sec-WebSocket-Protocol");
	if (!up || strcasecmp(up, "websocket") || !key) {
		ret = send_status(c, 400, "BadRequest", r,
				  "Upgrade request required");
		goto fail;
	}
	if (!proto || !has_token(proto, "v4.channel.k8s.io")) {
		ret = send_status(c, 400, "BadRequest", r,
				  "unsupported subprotocol: the fake serves "
				  "v4.channel.k8s.io");
		goto fail;
	}
	ws_accept_key(key, &b64);
	resp = MHD_create_response_for_upgrade(upgrade_cb, t);
	if (!resp) {
		ret = MHD_NO;
		goto fail;
	}
	MHD_add_response_header(resp, "Upgrade", "websocket");
	MHD_add_response_header(resp, "Sec-WebSocket-Accept", b64.buf);
	MHD_add_response_header(resp, "Sec-WebSocket-Protocol",
				"v4.channel.k8s.io");
	ret = MHD_queue_response(c, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
	MHD_destroy_response(resp);
	strbuf_release(&b64);
	return ret;
fail:
	strbuf_release(&t->extra);
	strbuf_release(&t->fail);
	strbuf_release(&t->to_backend);
	free(t);
	strbuf_release(&b64);
	return ret;
}

/* ------------------------------------------------------------------ */
/* SelfSubjectAccessReview, test knobs, dispatch */

static enum MHD_Result handle_ssar(struct MHD_Connection *c, struct req *r)
{
	enum MHD_Result ret = MHD_NO;
	json_t *body = parse_body(c, r, &ret), *ra;
	struct strbuf res = STRBUF_INIT;
	const char *verb, *resource, *sub;
	int denied;

	if (!body)
		return ret;
	ra = json_path(body, "spec.resourceAttributes");
	verb = json_object_str(ra, "verb");
	resource = json_object_str(ra, "resource");
	sub = json_object_str(ra, "subresource");
	strbuf_addstr(&res, resource ? resource : "");
	if (sub && *sub)
		strbuf_addf(&res, "/%s", sub);
	denied = forbidden(verb ? verb : "", res.buf);
	json_object_set_new(body, "apiVersion",
			    json_string("authorization.k8s.io/v1"));
	json_object_set_new(body, "kind",
			    json_string("SelfSubjectAccessReview"));
	json_object_set_new(body, "status",
			    denied ? json_pack("{s:b,s:b,s:s}", "allowed", 0,
					       "denied", 1, "reason",
					       "forbidden by fake-kube "
					       "--forbid")
				   : json_pack("{s:b,s:s}", "allowed", 1,
					       "reason",
					       "fake-kube allows it"));
	strbuf_release(&res);
	return send_json(c, 201, body, r);
}

static int break_tunnels(void)
{
	struct tunnel *t;
	int n = 0;

	for (t = S.tunnels; t; t = t->next) {
		t->broken = 1;
		shutdown(t->ws_fd, SHUT_RDWR);
		if (t->backend_fd >= 0)
			shutdown(t->backend_fd, SHUT_RDWR);
		n++;
	}
	return n;
}

static void drop_history(void)
{
	while (S.ev_nr) {
		json_decref(S.events[S.ev_start].obj);
		S.ev_start = (S.ev_start + 1) % cfg.watch_window;
		S.ev_nr--;
	}
	S.floor_rv = S.rv;
	pthread_cond_broadcast(&S.changed);
}

/*
 * Test knobs (same authentication as the API):
 *   POST /fake/expire-history  forget the watch history: a watch from
 *                              an older resourceVersion gets 410
 *   POST /fake/break-tunnels   close every port-forward WebSocket
 *   POST /fake/stuck?template=<t>[&stuck=false]  (un)mark a template
 *                              whose pods never get Ready (new sandboxes)
 *   POST /fake/ready-delay?ms=<n>  change --ready-delay
 *   POST /fake/fail?status=<code>[&count=<n>][&verb=<v>][&resource=<r>]
 *        [&retry-after=<s>][&message=<m>][&as=event]  the next n (default 1)
 * API requests of that verb (get, list, watch, create, patch, delete...) on
 * that resource (plural, e.g. sandboxclaims) get a Status with that code (429
 *                              TooManyRequests, 500 InternalError, 503
 *                              ServiceUnavailable, 504 Timeout) and a
 *                              Retry-After header; every rule counts;
 *                              as=event: a watch is answered 200 with
 *                              that Status in one ERROR event instead
 *   POST /fake/outage?ms=<n>[&on=<verb>:<resource>]  API requests get no
 *                              answer (the connection is closed) for n
 *                              ms: from now, or from the next request
 *                              matching on= (answered as usual)
 *   POST /fake/router-fail?status=<code>[&count=<n>]  the router answers
 *                              the next n requests with that status
 *                              (502: "Could not connect to the backend
 *                              sandbox", as a CNI or network policy lag)
 *   POST /fake/replace-router[?namespace=<ns>]  a rollout of the router:
 *                              its pod, Service and EndpointSlice are
 *                              deleted (tunnels to the pod break) and
 *                              made anew with a new pod name
 *   GET  /fake/state           {"resourceVersion", "floorResourceVersion",
 *                              "objects": [{"kind","namespace","name",
 *                              claims: "receivedUs","readyUs"}],
 *                              "runtimes": [{"namespace","name","pid",
 *                              "socket","workdir","ready"}],
 *                              "tunnels", "watches"}
 */
static enum MHD_Result fake_handler(struct MHD_Connection *c, struct req *r,
				    const char *method, const char *what)
{
	json_t *out;
	size_t i;
	char rv[32];

	pthread_mutex_lock(&S.lock);
	if (!strcmp(what, "expire-history") && !strcmp(method, "POST")) {
		drop_history();
		xsnprintf(rv, sizeof(rv), "%" PRIu64, S.rv);
		out = json_pack("{s:s}", "resourceVersion", rv);
	} else if (!strcmp(what, "break-tunnels") && !strcmp(method, "POST")) {
		out = json_pack("{s:i}", "broken", break_tunnels());
	} else if (!strcmp(what, "stuck") && !strcmp(method, "POST") &&
		   query(c, "template")) {
		const char *t = query(c, "template");
		int on = !query(c, "stuck") || query_true(c, "stuck");
		struct strvec keep = STRVEC_INIT;

		for (i = 0; i < stuck_templates.nr; i++)
			if (strcmp(stuck_templates.v[i], t))
				strvec_push(&keep, stuck_templates.v[i]);
		if (on)
			strvec_push(&keep, t);
		strvec_clear(&stuck_templates);
		stuck_templates = keep;
		out = json_pack("{s:s,s:b}", "template", t, "stuck", on);
	} else if (!strcmp(what, "ready-delay") && !strcmp(method, "POST") &&
		   query(c, "ms")) {
		cfg.ready_delay_ms = atoi(query(c, "ms"));
		out = json_pack("{s:i}", "readyDelayMs", cfg.ready_delay_ms);
	} else if (!strcmp(what, "fail") && !strcmp(method, "POST") &&
		   query(c, "status") && S.nr_faults < ARRAY_SIZE(S.faults)) {
		struct fault *f = &S.faults[S.nr_faults++];
		const char *v;

		memset(f, 0, sizeof(*f));
		f->status = atoi(query(c, "status"));
		f->count = query(c, "count") ? atoi(query(c, "count")) : 1;
		f->retry_after = query(c, "retry-after")
					 ? atoi(query(c, "retry-after"))
					 : -1;
		if ((v = query(c, "verb")))
			f->verb = xstrdup(v);
		if ((v = query(c, "resource")))
			f->resource = xstrdup(v);
		if ((v = query(c, "message")))
			f->message = xstrdup(v);
		f->as_event =
			query(c, "as") && !strcmp(query(c, "as"), "event");
		out = json_pack("{s:i,s:i}", "status", f->status, "count",
				f->count);
	} else if (!strcmp(what, "outage") && !strcmp(method, "POST") &&
		   query(c, "ms")) {
		S.outage_ms = atoi(query(c, "ms"));
		free(S.outage_on);
		S.outage_on = query(c, "on") ? xstrdup(query(c, "on")) : NULL;
		if (!S.outage_on)
			S.outage_until_ms = monotonic_ms() + S.outage_ms;
		out = json_pack("{s:i,s:s?}", "ms", S.outage_ms, "on",
				S.outage_on);
	} else if (!strcmp(what, "router-fail") && !strcmp(method, "POST") &&
		   query(c, "status")) {
		S.router_fail_status = atoi(query(c, "status"));
		S.router_fail_count =
			query(c, "count") ? atoi(query(c, "count")) : 1;
		out = json_pack("{s:i,s:i}", "status", S.router_fail_status,
				"count", S.router_fail_count);
	} else if (!strcmp(what, "replace-router") && !strcmp(method, "POST")) {
		const char *ns = query(c, "namespace") ? query(c, "namespace")
						       : cfg.namespace;
		int n = 0;

		for (i = 0; i < S.nr_objs;) {
			struct obj *o = S.objs[i];
			const char *app = label(o->body, "app");
			const char *svc =
				label(o->body, "kubernetes.io/service-name");

			if (strcmp(o->ns, ns) ||
			    !((o->kind == K_POD && app &&
			       !strcmp(app, "sandbox-router")) ||
			      (o->kind == K_SERVICE &&
			       !strcmp(o->name, ROUTER_SVC)) ||
			      (o->kind == K_ENDPOINTSLICE && svc &&
			       !strcmp(svc, ROUTER_SVC)))) {
				i++;
				continue;
			}
			n += o->kind == K_POD;
			store_remove(o);
		}
		break_tunnels();
		ensure_router(ns);
		out = json_pack("{s:i}", "replaced", n);
	} else if (!strcmp(what, "state") && !strcmp(method, "GET")) {
		json_t *objs = json_array(), *rts = json_array();
		char frv[32];
		int left;

		for (i = 0; i < S.nr_objs; i++) {
			struct obj *o = S.objs[i];
			json_t *e = json_pack(
				"{s:s,s:s,s:s,s:s}", "kind",
				kinds[o->kind].kind, "namespace", o->ns, "name",
				o->name, "resourceVersion",
				meta_str(o->body, "resourceVersion"));

			/* CLOCK_MONOTONIC us: comparable with a client's */
			if (o->received_us)
				json_object_set_new(
					e, "receivedUs",
					json_integer(
						(json_int_t)o->received_us));
			if (o->ready_us)
				json_object_set_new(
					e, "readyUs",
					json_integer((json_int_t)o->ready_us));
			json_array_append_new(objs, e);
		}
		for (i = 0; i < S.nr_rts; i++) {
			struct runtime *rt = S.rts[i];

			if (rt->killed_ms)
				continue;
			json_array_append_new(
				rts,
				json_pack("{s:s,s:s,s:i,s:s,s:s,s:b}",
					  "namespace", rt->ns, "name", rt->name,
					  "pid", (int)rt->pid, "socket",
					  rt->sock, "workdir", rt->workdir,
					  "ready", rt->ready));
		}
		xsnprintf(rv, sizeof(rv), "%" PRIu64, S.rv);
		xsnprintf(frv, sizeof(frv), "%" PRIu64, S.floor_rv);
		for (i = 0, left = 0; i < S.nr_faults; i++)
			left += S.faults[i].count;
		/* faults not yet used up, outage on or armed, router */
		out = json_pack("{s:s,s:s,s:o,s:o,s:i,s:i,s:s,s:{s:i,s:b,s:i}}",
				"resourceVersion", rv, "floorResourceVersion",
				frv, "objects", objs, "runtimes", rts,
				"tunnels", S.nr_tunnels, "watches",
				S.nr_watches, "release",
				S.release_v05 ? "v0.5.6" : "v0.4.6", "faults",
				"pending", left, "outage",
				S.outage_on != NULL ||
					monotonic_ms() < S.outage_until_ms,
				"routerFailures", S.router_fail_count);
	} else {
		pthread_mutex_unlock(&S.lock);
		return send_status(c, 404, "NotFound", r,
				   "no such fake-kube knob: %s %s", method,
				   what);
	}
	pthread_mutex_unlock(&S.lock);
	return send_json(c, 200, out, r);
}

static const char *const fault_reasons[][2] = {
	{ "429", "TooManyRequests" }, { "500", "InternalError" },
	{ "502", "BadGateway" },      { "503", "ServiceUnavailable" },
	{ "504", "Timeout" },
};

/*
 * The faults of POST /fake/fail and /fake/outage?on= for one request:
 * 1 when a matching fault rule answered (*out: MHD's result), else 0.
 */
static int inject_fault(struct MHD_Connection *c, const char *verb,
			const char *resource, enum MHD_Result *out)
{
	struct MHD_Response *resp;
	struct strbuf sb = STRBUF_INIT, on = STRBUF_INIT;
	const char *reason = "InternalError";
	struct fault hit = { 0 };
	json_t *st, *details = NULL;
	size_t i;
	char *buf;

	pthread_mutex_lock(&S.lock);
	strbuf_addf(&on, "%s:%s", verb, resource);
	if (S.outage_on && !strcmp(S.outage_on, on.buf)) {
		S.outage_until_ms = monotonic_ms() + S.outage_ms;
		free(S.outage_on);
		S.outage_on = NULL;
	}
	for (i = 0; i < S.nr_faults; i++) {
		struct fault *f = &S.faults[i];

		if (f->count <= 0 || (f->verb && strcmp(f->verb, verb)) ||
		    (f->resource && strcmp(f->resource, resource)))
			continue;
		f->count--;
		hit = *f;
		break;
	}
	pthread_mutex_unlock(&S.lock);
	strbuf_release(&on);
	if (!hit.status)
		return 0;
	strbuf_addf(&sb, "%d", hit.status);
	for (i = 0; i < ARRAY_SIZE(fault_reasons); i++)
		if (!strcmp(fault_reasons[i][0], sb.buf))
			reason = fault_reasons[i][1];
	strbuf_reset(&sb);
	if (hit.retry_after >= 0)
		details = json_pack("{s:i}", "retryAfterSeconds",
				    hit.retry_after);
	st = status_object((unsigned)hit.status, reason,
			   hit.message ? hit.message : "injected fault",
			   details);
	if (hit.as_event) {
		/* the way the real server reports it inside a watch */
		json_t *ev =
			json_pack("{s:s,s:o}", "type", "ERROR", "object", st);
		json_dump_into(&sb, ev);
		strbuf_addch(&sb, '\n');
		json_decref(ev);
	} else {
		json_dump_into(&sb, st);
		json_decref(st);
	}
	{
		size_t len;

		buf = strbuf_detach(&sb, &len);
		resp = MHD_create_response_from_buffer(len, buf,
						       MHD_RESPMEM_MUST_FREE);
	}
	*out = MHD_NO;
	if (!resp) {
		free(buf);
		return 1;
	}
	MHD_add_response_header(resp, "Content-Type", "application/json");
	if (hit.retry_after >= 0) {
		char ra[16];

		xsnprintf(ra, sizeof(ra), "%d", hit.retry_after);
		MHD_add_response_header(resp, "Retry-After", ra);
	}
	*out = MHD_queue_response(c, hit.as_event ? 200 : (unsigned)hit.status,
				  resp);
	MHD_destroy_response(resp);
	return 1;
}

static const char *verb_of(const char *method, struct target *t,
			   struct MHD_Connection *c)
{
	if (!strcmp(method, "GET")) {
		if (query_true(c, "watch"))
			return "watch";
		return t->name ? "get" : "list";
	}
	if (!strcmp(method, "POST"))
		return "create";
	if (!strcmp(method, "PUT"))
		return "update";
	if (!strcmp(method, "PATCH"))
		return "patch";
	if (!strcmp(method, "DELETE"))
		return "delete";
	return "unknown";
}

static enum MHD_Result not_found_path(struct MHD_Connection *c, struct req *r)
{
	return send_status(c, 404, "NotFound", r,
			   "the server could not find the requested resource");
}

static enum MHD_Result method_not_allowed(struct MHD_Connection *c,
					  struct req *r, const char *method)
{
	return send_status(c, 405, "MethodNotAllowed", r,
			   "the server does not allow this method on the "
			   "requested resource");
}

/* /api/v1/... or /apis/<g>/<v>/...: segs after the version */
static enum MHD_Result handle_resource(struct MHD_Connection *c, struct req *r,
				       const char *method, struct target *t,
				       const char **segs, size_t n)
{
	struct strbuf res = STRBUF_INIT;
	enum MHD_Result ret;
	const char *verb;
	int is_forbidden;

	if (n >= 2 && !strcmp(segs[0], "namespaces")) {
		t->ns = segs[1];
		segs += 2;
		n -= 2;
		if (n == 0 && !*t->group) {
			if (strcmp(method, "GET"))
				return method_not_allowed(c, r, method);
			return send_json(c, 200,
					 json_pack("{s:s,s:s,s:{s:s},s:{s:s}}",
						   "kind", "Namespace",
						   "apiVersion", "v1",
						   "metadata", "name", t->ns,
						   "status", "phase", "Active"),
					 r);
		}
	}
	if (n < 1 || n > 3)
		return not_found_path(c, r);
	t->plural = segs[0];
	t->name = n >= 2 ? segs[1] : NULL;
	t->sub = n == 3 ? segs[2] : NULL;
	if (find_kind(t->group, t->plural, &t->kind) < 0 ||
	    !version_served(t->kind, t->version))
		return not_found_path(c, r);
	if (t->sub &&
	    !(kinds[t->kind].has_status && !strcmp(t->sub, "status")) &&
	    !(t->kind == K_POD && !strcmp(t->sub, "portforward")))
		return not_found_path(c, r);
	if (t->name && !t->ns)
		return not_found_path(c, r);

	verb = verb_of(method, t, c);
	strbuf_addstr(&res, t->plural);
	if (t->sub)
		strbuf_addf(&res, "/%s", t->sub);
	if (t->sub && !strcmp(t->sub, "portforward")) {
		/*
		 * As kube-apiserver: the verb is the method's (a WebSocket
		 * upgrade is a GET, authorized as "get"; SPDY's POST is
		 * "create", kubernetes/kubernetes#78741); from 1.35 a
		 * WebSocket upgrade needs "create" too.
		 */
		if (!strcmp(method, "GET") && server_minor() >= 35 &&
		    forbidden("create", res.buf))
			verb = "create";
		else if (!strcmp(method, "POST"))
			verb = "create";
		else
			verb = "get";
	}
	is_forbidden = forbidden(verb, res.buf);
	strbuf_release(&res);
	if (is_forbidden)
		return send_forbidden(c, verb, t->group, t->plural, t->ns, r);
	if (inject_fault(c, verb, t->plural, &ret))
		return ret;

	if (t->sub && !strcmp(t->sub, "portforward")) {
		if (strcmp(method, "GET") && strcmp(method, "POST"))
			return method_not_allowed(c, r, method);
		return handle_portforward(c, r, t->ns, t->name);
	}
	if (!strcmp(method, "GET"))
		ret = t->name ? handle_get(c, r, t) : handle_list(c, r, t);
	else if (!strcmp(method, "POST") && !t->name && t->ns)
		ret = handle_create(c, r, t);
	else if (!strcmp(method, "PUT") && t->name)
		ret = handle_put(c, r, t);
	else if (!strcmp(method, "PATCH") && t->name)
		ret = handle_patch(c, r, t);
	else if (!strcmp(method, "DELETE") && t->name && !t->sub)
		ret = handle_delete(c, r, t);
	else
		ret = method_not_allowed(c, r, method);
	return ret;
}

/*
 * Two cluster objects doctor reads, outside the kinds above (GET only,
 * --forbid=get:deployments or get:customresourcedefinitions: 403):
 * /apis/apps/v1/namespaces/agent-sandbox-system/deployments/
 * agent-sandbox-controller, there with --controller=<ready>:<replicas>
 * (spec.replicas, status.readyReplicas left out when 0, as the real
 * server does), else 404; and /apis/apiextensions.k8s.io/v1/
 * customresourcedefinitions/<plural>.<group>, the CRD documents of
 * --crds as loaded. segs start at the group.
 */
static enum MHD_Result handle_cluster_extra(struct MHD_Connection *c,
					    struct req *r, const char *method,
					    const char **segs, size_t n)
{
	int deploy = !strcmp(segs[0], "apps");
	const char *res = deploy ? "deployments" : "customresourcedefinitions";
	struct strbuf sb = STRBUF_INIT;
	json_t *d;
	size_t i;

	if (deploy ? n != 6 || strcmp(segs[1], "v1") ||
			     strcmp(segs[2], "namespaces") ||
			     strcmp(segs[4], res)
		   : n != 4 || strcmp(segs[1], "v1") || strcmp(segs[2], res))
		return not_found_path(c, r);
	if (strcmp(method, "GET"))
		return method_not_allowed(c, r, method);
	if (forbidden("get", res))
		return send_forbidden(c, "get", segs[0], res,
				      deploy ? segs[3] : NULL, r);
	if (deploy) {
		if (!cfg.controller ||
		    strcmp(segs[3], "agent-sandbox-system") ||
		    strcmp(segs[5], "agent-sandbox-controller"))
			return send_status(c, 404, "NotFound", r,
					   "deployments.apps \"%s\" not found",
					   segs[5]);
		d = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:i},s:{s:i,s:i}}",
			      "apiVersion", "apps/v1", "kind", "Deployment",
			      "metadata", "name", segs[5], "namespace", segs[3],
			      "spec", "replicas", cfg.controller_replicas,
			      "status", "replicas", cfg.controller_replicas,
			      "updatedReplicas", cfg.controller_replicas);
		if (cfg.controller_ready)
			json_object_set_new(json_object_get(d, "status"),
					    "readyReplicas",
					    json_integer(cfg.controller_ready));
		return send_json(c, 200, d, r);
	}
	pthread_mutex_lock(&S.lock);
	for (i = 0; i < S.crds.nr; i++) {
		const struct crd *crd = &S.crds.items[i];

		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s.%s", crd->plural, crd->group);
		if (!strcmp(sb.buf, segs[3])) {
			strbuf_reset(&sb);
			json_dump_into(&sb, crd->doc);
			pthread_mutex_unlock(&S.lock);
			return send_text(c, 200, "application/json", &sb, r);
		}
	}
	pthread_mutex_unlock(&S.lock);
	strbuf_release(&sb);
	return send_status(c, 404, "NotFound", r,
			   "customresourcedefinitions.apiextensions.k8s.io "
			   "\"%s\" not found",
			   segs[3]);
}

static enum MHD_Result api_handler(void *cls, struct MHD_Connection *c,
				   const char *url, const char *method,
				   const char *version, const char *upload_data,
				   size_t *upload_size, void **con_cls)
{
	struct req *r = *con_cls;
	struct strvec segs = STRVEC_INIT;
	struct target t = { 0 };
	const char *p, **s;
	enum MHD_Result ret;
	size_t n;

	if (!r->seen) {
		r->seen = 1;
		return MHD_YES;
	}
	if (*upload_size) {
		if (r->body.len + *upload_size > MAX_BODY)
			r->too_big = 1;
		else
			strbuf_add(&r->body, upload_data, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (strncmp(url, "/fake/", 6)) {
		int down;

		pthread_mutex_lock(&S.lock);
		down = S.outage_until_ms && monotonic_ms() < S.outage_until_ms;
		pthread_mutex_unlock(&S.lock);
		if (down)
			return MHD_NO; /* no answer: the connection closes */
	}
	if (!client_cert_ok(c) ||
	    (strncmp(url, "/fake/", 6) && !api_token_ok(c, method, url)))
		return send_status(c, 401, "Unauthorized", r, "Unauthorized");
	if (r->too_big)
		return send_status(c, 413, "RequestEntityTooLarge", r,
				   "request is too large");
	for (p = url; *p;) {
		size_t len;

		p += strspn(p, "/");
		len = strcspn(p, "/");
		if (len)
			strvec_pushf(&segs, "%.*s", (int)len, p);
		p += len;
	}
	s = segs.v;
	n = segs.nr;
	if (n == 0) {
		ret = send_json(c, 200,
				json_pack("{s:[s,s,s,s,s,s]}", "paths", "/api",
					  "/api/v1", "/apis", "/healthz",
					  "/version", "/fake/state"),
				r);
	} else if (n == 1 && !strcmp(s[0], "version")) {
		ret = send_json(
			c, 200,
			json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}",
				  "major", "1", "minor", "31", "gitVersion",
				  cfg.server_version, "gitCommit", "fake-kube",
				  "gitTreeState", "clean", "buildDate",
				  "2024-08-13T07:28:49Z", "goVersion",
				  "go1.22.5", "compiler", "gc", "platform",
				  "linux/amd64"),
			r);
	} else if (n == 1 &&
		   (!strcmp(s[0], "healthz") || !strcmp(s[0], "livez") ||
		    !strcmp(s[0], "readyz"))) {
		struct strbuf ok = STRBUF_INIT;

		strbuf_addstr(&ok, "ok");
		ret = send_text(c, 200, "text/plain; charset=utf-8", &ok, r);
	} else if (n == 2 && !strcmp(s[0], "fake")) {
		ret = fake_handler(c, r, method, s[1]);
	} else if (!strcmp(s[0], "api")) {
		if (n == 1)
			ret = send_json(c, 200,
					json_pack("{s:s,s:[s],s:[{s:s,s:s}]}",
						  "kind", "APIVersions",
						  "versions", "v1",
						  "serverAddressByClientCIDRs",
						  "clientCIDR", "0.0.0.0/0",
						  "serverAddress", "127.0.0.1"),
					r);
		else if (strcmp(s[1], "v1"))
			ret = not_found_path(c, r);
		else if (n == 2)
			ret = send_json(c, 200, resource_list("", "v1"), r);
		else {
			t.group = "";
			t.version = "v1";
			ret = handle_resource(c, r, method, &t, s + 2, n - 2);
		}
	} else if (!strcmp(s[0], "apis") && n >= 3 &&
		   (!strcmp(s[1], "apps") ||
		    !strcmp(s[1], "apiextensions.k8s.io"))) {
		ret = handle_cluster_extra(c, r, method, s + 1, n - 1);
	} else if (!strcmp(s[0], "apis")) {
		if (n == 1)
			ret = send_json(c, 200, api_group_list(), r);
		else if (!known_group(s[1]))
			ret = not_found_path(c, r);
		else if (n == 2)
			ret = send_json(c, 200, api_group(s[1]), r);
		else if (!strcmp(s[1], "discovery.k8s.io") ||
					 !strcmp(s[1], "authorization.k8s.io")
				 ? strcmp(s[2], "v1")
				 : strcmp(s[2], "v1alpha1") &&
					   (!S.release_v05 ||
					    strcmp(s[2], "v1beta1")))
			ret = not_found_path(c, r);
		else if (n == 3)
			ret = send_json(c, 200, resource_list(s[1], s[2]), r);
		else if (!strcmp(s[1], "authorization.k8s.io")) {
			if (n == 4 &&
			    !strcmp(s[3], "selfsubjectaccessreviews") &&
			    !strcmp(method, "POST"))
				ret = handle_ssar(c, r);
			else
				ret = not_found_path(c, r);
		} else {
			t.group = s[1];
			t.version = s[2];
			ret = handle_resource(c, r, method, &t, s + 3, n - 3);
		}
	} else {
		ret = not_found_path(c, r);
	}
	strvec_clear(&segs);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Start-up */

static int listen_tcp(int port, int *bound)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_errno("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(fd, 128) < 0) {
		error_errno("cannot listen on 127.0.0.1:%d", port);
		close(fd);
		return -1;
	}
	getsockname(fd, (struct sockaddr *)&sin, &len);
	*bound = ntohs(sin.sin_port);
	return fd;
}

static enum kind_id kind_by_name(const char *kind, int *ok)
{
	int k;

	for (k = 0; k < K_NR; k++) {
		if (kind && !strcmp(kinds[k].kind, kind)) {
			*ok = 1;
			return k;
		}
	}
	*ok = 0;
	return K_POD;
}

/* Objects of --template, --warm-pool and --load (lock held). */
static int seed_objects(void)
{
	struct strbuf gv = STRBUF_INIT;
	size_t i, j;
	int rc = 0;

	ensure_router(cfg.namespace);
	for (i = 0; i < cfg.templates.nr; i++) {
		json_t *t = json_pack(
			"{s:s,s:s,s:{s:s},s:{s:{s:{s:[{s:s,s:s,s:[{s:i}]}]}}}}",
			"apiVersion",
			group_version_of(K_TEMPLATE,
					 storage_version(K_TEMPLATE), &gv),
			"kind", "SandboxTemplate", "metadata", "name",
			cfg.templates.v[i], "spec", "podTemplate", "spec",
			"containers", "name", "sandbox", "image",
			"gosbx-runtime:latest", "ports", "containerPort", 8888);

		store_add(K_TEMPLATE, cfg.namespace, t);
	}
	for (i = 0; i < cfg.warm_pools.nr; i++) {
		struct strvec parts = STRVEC_INIT;
		const char *p = cfg.warm_pools.v[i];
		json_t *w;

		while (*p) {
			size_t len = strcspn(p, ":");

			strvec_pushf(&parts, "%.*s", (int)len, p);
			p += len;
			if (*p)
				p++;
		}
		if (parts.nr < 2 || parts.nr > 3) {
			error("bad --warm-pool '%s': want "
			      "<name>:<template>[:<replicas>]",
			      cfg.warm_pools.v[i]);
			strvec_clear(&parts);
			rc = -1;
			break;
		}
		w = json_pack("{s:s,s:s,s:{s:s},s:{s:i,s:{s:s}}}", "apiVersion",
			      group_version_of(K_WARMPOOL,
					       storage_version(K_WARMPOOL),
					       &gv),
			      "kind", "SandboxWarmPool", "metadata", "name",
			      parts.v[0], "spec", "replicas",
			      parts.nr == 3 ? atoi(parts.v[2]) : 1,
			      "sandboxTemplateRef", "name", parts.v[1]);
		store_add(K_WARMPOOL, cfg.namespace, w);
		strvec_clear(&parts);
	}
	for (i = 0; !rc && i < cfg.loads.nr; i++) {
		json_t *docs = yaml_load_file(cfg.loads.v[i]), *d;

		if (!docs) {
			rc = -1;
			break;
		}
		json_array_foreach (docs, j, d) {
			const char *av = json_object_str(d, "apiVersion");
			const char *slash = av ? strrchr(av, '/') : NULL;
			const char *ns = meta_str(d, "namespace");
			int ok;
			enum kind_id k =
				kind_by_name(json_object_str(d, "kind"), &ok);

			if (!json_is_object(d))
				continue;
			if (!ok || !av) {
				warning("%s: document %zu: kind not served, "
					"skipped",
					cfg.loads.v[i], j + 1);
				continue;
			}
			if (kinds[k].crd && S.have_crds) {
				struct strvec errs = STRVEC_INIT;
				const struct crd *crd = crd_set_find(
					&S.crds, av, kinds[k].kind);

				if (crd)
					crd_validate_object(crd, d, CRD_DEFAULT,
							    &errs, NULL);
				if (errs.nr) {
					error("%s: document %zu: %s",
					      cfg.loads.v[i], j + 1, errs.v[0]);
					strvec_clear(&errs);
					rc = -1;
					break;
				}
				strvec_clear(&errs);
			}
			d = json_deep_copy(d);
			convert_in(k, d, slash ? slash + 1 : av);
			if (!store_add(k, ns ? ns : cfg.namespace, d))
				warning("%s: document %zu: already exists",
					cfg.loads.v[i], j + 1);
		}
		json_decref(docs);
	}
	strbuf_release(&gv);
	return rc;
}

static int write_info_file(const char *scheme)
{
	struct strbuf tmp = STRBUF_INIT, body = STRBUF_INIT;
	json_t *info;
	int rc;

	info = json_pack("{s:s,s:s,s:i,s:s,s:s}", "url", "", "router",
			 S.router_url, "pid", (int)getpid(), "release",
			 cfg.release, "stateDir", cfg.state_dir);
	strbuf_addf(&tmp, "%s://127.0.0.1:%d", scheme, S.api_port);
	json_object_set_new(info, "url", json_string(tmp.buf));
	if (S.pod_network_url)
		json_object_set_new(info, "podNetwork",
				    json_string(S.pod_network_url));
	json_dump_into(&body, info);
	strbuf_addch(&body, '\n');
	json_decref(info);
	strbuf_reset(&tmp);
	strbuf_addf(&tmp, "%s.tmp", cfg.info_file);
	{
		FILE *f = fopen(tmp.buf, "w");

		rc = f ? 0 : -1;
		if (f) {
			fwrite(body.buf, 1, body.len, f);
			rc = fclose(f) ? -1 : 0;
		}
	}
	if (!rc)
		rc = rename(tmp.buf, cfg.info_file);
	if (rc)
		error_errno("cannot write '%s'", cfg.info_file);
	strbuf_release(&tmp);
	strbuf_release(&body);
	return rc;
}

static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	strbuf_rtrim(&sb);
	fprintf(stderr, "fake-kube: mhd: %s\n", sb.buf);
	strbuf_release(&sb);
}

static char *read_pem(const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, path, 4096) < 0) {
		error_errno("cannot read '%s'", path);
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

int main(int argc, const char **argv)
{
	struct option opts[] = {
		OPT_INT(0, "port", &cfg.port,
			"API port on 127.0.0.1 (0: pick one)"),
		OPT_STRING(0, "cert", &cfg.cert, "<pem>",
			   "server certificate (HTTPS)"),
		OPT_STRING(0, "key", &cfg.key, "<pem>", "server private key"),
		OPT_STRING(0, "client-ca", &cfg.client_ca, "<pem>",
			   "CA that signs the required client certificates"),
		OPT_BOOL(0, "insecure-http", &cfg.insecure_http,
			 "plain HTTP, no client certificate (debugging)"),
		OPT_STRING(0, "api-token-file", &cfg.api_token_file, "<file>",
			   "API requests need this bearer token (re-read)"),
		OPT_STRING(0, "release", &cfg.release, "<v>",
			   "agent-sandbox release to play: v0.4.6 or v0.5.6"),
		OPT_STRING(0, "crds", &cfg.crds_dir, "<dir>",
			   "CRDs of the release (validation)"),
		OPT_STRING(0, "runtime", &cfg.runtime, "<path>",
			   "gosbx-runtime to start for each Sandbox"),
		OPT_INT(0, "clock-skew", &cfg.clock_skew_s,
			"the server's clock is this many seconds ahead of "
			"the host's (Date headers, timestamps, expiry)"),
		OPT_BOOL(0, "legacy-sandbox-status", &cfg.legacy_sandbox_status,
			 "claims' status.sandbox.Name (older controllers) "
			 "instead of .name"),
		OPT_STRING(0, "runtime-cmd", &cfg.runtime_cmd, "<sh>",
			   "instead: a shell command serving each Sandbox's "
			   "runtime on 127.0.0.1:$1 ($2: a unique name), "
			   "e.g. exec podman run ... -p 127.0.0.1:$1:8888 "
			   "<image>"),
		OPT_STRING(0, "pod-ip-prefix", &cfg.pod_ip_prefix, "<a.b>",
			   "pod IPs are <a.b>.x.y (default 10.244; 127.<n> "
			   "makes them loopback addresses a runtime can "
			   "listen on)"),
		OPT_STRING(0, "state-dir", &cfg.state_dir, "<dir>",
			   "runtime sockets, logs and workdirs"),
		OPT_INT(0, "ready-delay", &cfg.ready_delay_ms,
			"ms before the controller handles a new claim"),
		OPT_INT(0, "watch-window", &cfg.watch_window,
			"events kept for watches from an old resourceVersion"),
		OPT_INT(0, "bookmark-interval", &cfg.bookmark_ms,
			"ms between watch bookmarks"),
		OPT_STRING_LIST(0, "stuck", &cfg.stuck, "<template>",
				"pods of this template never get Ready"),
		OPT_STRING_LIST(0, "warm-pool", &cfg.warm_pools,
				"<name>:<template>[:<n>]",
				"create a SandboxWarmPool at start"),
		OPT_STRING_LIST(0, "template", &cfg.templates, "<name>",
				"create a minimal SandboxTemplate at start"),
		OPT_STRING_LIST(0, "load", &cfg.loads, "<file>",
				"create the objects of a YAML/JSON file"),
		OPT_STRING(0, "namespace", &cfg.namespace, "<ns>",
			   "namespace of the objects created at start"),
		OPT_STRING_LIST(0, "forbid", &cfg.forbid, "<verb>:<resource>",
				"answer 403 Forbidden (\"*\" matches all)"),
		OPT_INT(0, "router-port", &cfg.router_port,
			"router (plain HTTP) port on 127.0.0.1 (0: pick)"),
		OPT_INT(0, "router-timeout", &cfg.router_timeout_s,
			"router idle timeout on backend answers (s)"),
		OPT_STRING(0, "router-token", &cfg.router_token, "<token>",
			   "router requires Authorization: Bearer <token>"),
		OPT_STRING(0, "router-upstream", &cfg.router_upstream,
			   "<http://127.0.0.1:port>",
			   "port-forward to the router pod's 8080 reaches "
			   "this router (e.g. the real one) instead"),
		OPT_INT(0, "pod-network-port", &cfg.pod_network_port,
			"serve the pod network, an HTTP forward proxy to "
			"the pods' IPs, on 127.0.0.1 (0: pick)"),
		OPT_BOOL(0, "router-websocket", &cfg.router_websocket,
			 "router passes WebSocket upgrades (as v0.5.2+); "
			 "default: plain HTTP only, as v0.4.6"),
		OPT_STRING(0, "info-file", &cfg.info_file, "<path>",
			   "write {\"url\",\"router\",\"pid\",...} once "
			   "listening"),
		OPT_STRING(0, "server-version", &cfg.server_version,
			   "<gitVersion>",
			   "what GET /version says (default v1.31.0)"),
		OPT_STRING(0, "controller", &cfg.controller,
			   "<ready>:<replicas>",
			   "serve the controller Deployment with this status"),
		OPT_END(),
	};
	struct MHD_OptionItem tls_opts[4] = {
		{ MHD_OPTION_END, 0, NULL },
	};
	struct MHD_Daemon *api = NULL, *router = NULL, *pod_network = NULL;
	char *pem_cert = NULL, *pem_key = NULL, *pem_ca = NULL;
	struct strbuf url = STRBUF_INIT;
	pthread_t controller;
	int api_fd, router_fd, pod_network_fd = -1, sig, rc = 1;
	int controller_started = 0;
	unsigned flags;
	sigset_t set;
	size_t i;

	cfg.release = "v0.4.6";
	cfg.pod_ip_prefix = "10.244";
	cfg.ready_delay_ms = 200;
	cfg.watch_window = 1000;
	cfg.bookmark_ms = 2000;
	cfg.router_timeout_s = 180;
	cfg.pod_network_port = -1;
	cfg.namespace = "default";
	cfg.server_version = "v1.31.0";
	cfg.state_dir = "fake-kube-state";
	strvec_init(&cfg.stuck);
	strvec_init(&cfg.warm_pools);
	strvec_init(&cfg.templates);
	strvec_init(&cfg.forbid);
	strvec_init(&cfg.loads);

	argc = parse_options(argc, argv, opts, usage_lines, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc > 0) {
		error("unexpected argument '%s'", argv[0]);
		return 129;
	}
	if (!strcmp(cfg.release, "v0.5.6") || starts_with(cfg.release, "v0.5"))
		S.release_v05 = 1;
	else if (strcmp(cfg.release, "v0.4.6") &&
		 !starts_with(cfg.release, "v0.4"))
		die("unknown --release '%s' (v0.4.6 or v0.5.6)", cfg.release);
	if (!cfg.insecure_http && (!cfg.cert || !cfg.key || !cfg.client_ca))
		die("--cert, --key and --client-ca are required without "
		    "--insecure-http");
	if (cfg.watch_window < 1 || cfg.bookmark_ms < 10 ||
	    cfg.router_timeout_s < 1 || cfg.ready_delay_ms < 0)
		die("--watch-window, --bookmark-interval, --router-timeout "
		    "and --ready-delay must be positive");
	for (i = 0; i < cfg.stuck.nr; i++)
		strvec_push(&stuck_templates, cfg.stuck.v[i]);
	if (cfg.router_upstream) {
		const char *hp = cfg.router_upstream;
		const char *colon;
		char ip[INET_ADDRSTRLEN] = "", *end;
		unsigned long port = 0;

		if (skip_prefix(hp, "http://", &hp) &&
		    (colon = strchr(hp, ':')) &&
		    (size_t)(colon - hp) < sizeof(ip)) {
			memcpy(ip, hp, colon - hp);
			ip[colon - hp] = '\0';
			port = strtoul(colon + 1, &end, 10);
			if (*end && strcmp(end, "/"))
				port = 0;
		}
		S.router_upstream.sin_family = AF_INET;
		S.router_upstream.sin_port = htons((uint16_t)port);
		if (!port || port > 65535 ||
		    inet_pton(AF_INET, ip, &S.router_upstream.sin_addr) != 1)
			die("bad --router-upstream '%s': want "
			    "http://<IPv4>:<port>",
			    cfg.router_upstream);
	}
	if (cfg.pod_network_port < -1 || cfg.pod_network_port > 65535)
		die("bad --pod-network-port %d", cfg.pod_network_port);
	if (cfg.controller) {
		char *end;
		long ready = strtol(cfg.controller, &end, 10), want = -1;

		if (*end == ':' && end > cfg.controller)
			want = strtol(end + 1, &end, 10);
		if (*end || ready < 0 || want < 0 || ready > want)
			die("bad --controller '%s': want <ready>:<replicas>",
			    cfg.controller);
		cfg.controller_ready = (int)ready;
		cfg.controller_replicas = (int)want;
	}

	if (mkdir(cfg.state_dir, 0755) < 0 && errno != EEXIST)
		die_errno("cannot create '%s'", cfg.state_dir);
	{
		char *abs = realpath(cfg.state_dir, NULL);

		if (!abs)
			die_errno("cannot resolve '%s'", cfg.state_dir);
		cfg.state_dir = abs; /* freed at exit */
	}
	S.state_dirfd = open(cfg.state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (S.state_dirfd < 0)
		die_errno("cannot open '%s'", cfg.state_dir);
	if (cfg.runtime && access(cfg.runtime, X_OK) < 0)
		die_errno("cannot run '%s'", cfg.runtime);
	if (cfg.runtime && cfg.runtime_cmd)
		die("--runtime and --runtime-cmd exclude each other");
	if (cfg.crds_dir) {
		if (crd_set_load_dir(&S.crds, cfg.crds_dir) < 0)
			goto out;
		S.have_crds = 1;
	}
	S.events = xcalloc(cfg.watch_window, sizeof(*S.events));
	S.rv = 1000;
	S.floor_rv = S.rv;

	if (!cfg.insecure_http) {
		verify_peers = (verify_peers_fn)dlsym(
			RTLD_DEFAULT, "gnutls_certificate_verify_peers2");
		if (!verify_peers)
			die("libmicrohttpd has no GnuTLS: cannot check "
			    "client certificates");
		pem_cert = read_pem(cfg.cert);
		pem_key = read_pem(cfg.key);
		pem_ca = read_pem(cfg.client_ca);
		if (!pem_cert || !pem_key || !pem_ca)
			goto out;
		tls_opts[0] =
			(struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0,
						 pem_cert };
		tls_opts[1] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY,
						       0, pem_key };
		tls_opts[2] =
			(struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0,
						 pem_ca };
		tls_opts[3] =
			(struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	}

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	api_fd = listen_tcp(cfg.port, &S.api_port);
	if (api_fd < 0)
		goto out;
	router_fd = listen_tcp(cfg.router_port, &S.router_port);
	if (router_fd < 0) {
		close(api_fd);
		goto out;
	}
	strbuf_addf(&url, "http://127.0.0.1:%d", S.router_port);
	S.router_url = strbuf_detach(&url, NULL);
	if (cfg.pod_network_port >= 0) {
		int bound;

		pod_network_fd = listen_tcp(cfg.pod_network_port, &bound);
		if (pod_network_fd < 0) {
			close(api_fd);
			close(router_fd);
			goto out;
		}
		strbuf_addf(&url, "http://127.0.0.1:%d", bound);
		S.pod_network_url = strbuf_detach(&url, NULL);
	}

	pthread_mutex_lock(&S.lock);
	rc = seed_objects();
	pthread_mutex_unlock(&S.lock);
	if (rc) {
		close(api_fd);
		close(router_fd);
		if (pod_network_fd >= 0)
			close(pod_network_fd);
		rc = 1;
		goto out;
	}
	rc = 1;

	flags = MHD_USE_INTERNAL_POLLING_THREAD |
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
		MHD_USE_ERROR_LOG | MHD_ALLOW_UPGRADE;
	if (!cfg.insecure_http)
		flags |= MHD_USE_TLS;
	api = MHD_start_daemon(
		flags, 0, NULL, NULL, api_handler, NULL,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, NULL,
		MHD_OPTION_LISTEN_SOCKET, api_fd, MHD_OPTION_URI_LOG_CALLBACK,
		uri_logger, NULL, MHD_OPTION_NOTIFY_COMPLETED, req_completed,
		NULL, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)600,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)500,
		MHD_OPTION_THREAD_STACK_SIZE, (size_t)(512 * 1024),
		MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
	if (!api) {
		error("cannot start the API server");
		close(api_fd);
		close(router_fd);
		if (pod_network_fd >= 0)
			close(pod_network_fd);
		goto out;
	}
	router = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD |
			MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
			MHD_USE_ERROR_LOG | MHD_ALLOW_UPGRADE,
		0, NULL, NULL, router_handler, NULL, MHD_OPTION_EXTERNAL_LOGGER,
		mhd_logger, NULL, MHD_OPTION_LISTEN_SOCKET, router_fd,
		MHD_OPTION_URI_LOG_CALLBACK, uri_logger, NULL,
		MHD_OPTION_NOTIFY_COMPLETED, req_completed, NULL,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)600,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)500,
		MHD_OPTION_THREAD_STACK_SIZE, (size_t)(512 * 1024),
		MHD_OPTION_END);
	if (!router) {
		error("cannot start the router server");
		close(router_fd);
		if (pod_network_fd >= 0)
			close(pod_network_fd);
		goto out;
	}
	if (pod_network_fd >= 0) {
		pod_network = MHD_start_daemon(
			MHD_USE_INTERNAL_POLLING_THREAD |
				MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
				MHD_USE_ERROR_LOG,
			0, NULL, NULL, pod_network_handler, NULL,
			MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, NULL,
			MHD_OPTION_LISTEN_SOCKET, pod_network_fd,
			MHD_OPTION_URI_LOG_CALLBACK, uri_logger, NULL,
			MHD_OPTION_NOTIFY_COMPLETED, req_completed, NULL,
			MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)600,
			MHD_OPTION_CONNECTION_LIMIT, (unsigned int)500,
			MHD_OPTION_THREAD_STACK_SIZE, (size_t)(512 * 1024),
			MHD_OPTION_END);
		if (!pod_network) {
			error("cannot start the pod network");
			close(pod_network_fd);
			goto out;
		}
	}
	if (pthread_create(&controller, NULL, controller_main, NULL)) {
		error("cannot start the controller thread");
		goto out;
	}
	controller_started = 1;

	printf("fake-kube: listening on %s://127.0.0.1:%d\n",
	       cfg.insecure_http ? "http" : "https", S.api_port);
	printf("fake-kube: router on %s\n", S.router_url);
	if (S.pod_network_url)
		printf("fake-kube: pod network on %s\n", S.pod_network_url);
	fflush(stdout);
	if (cfg.info_file &&
	    write_info_file(cfg.insecure_http ? "http" : "https") < 0)
		goto out;

	do {
		if (sigwait(&set, &sig))
			break;
	} while (sig != SIGINT && sig != SIGTERM);
	rc = 0;

out:
	pthread_mutex_lock(&S.lock);
	S.stopping = 1;
	break_tunnels();
	pthread_cond_broadcast(&S.changed);
	{
		struct timespec ts;

		deadline_in_ms(&ts, CLOCK_REALTIME, 5000);
		while (S.nr_tunnels > 0 &&
		       !pthread_cond_timedwait(&tunnels_gone, &S.lock, &ts))
			;
	}
	pthread_mutex_unlock(&S.lock);
	if (controller_started)
		pthread_join(controller, NULL);
	if (api)
		MHD_stop_daemon(api);
	if (router)
		MHD_stop_daemon(router);
	if (pod_network)
		MHD_stop_daemon(pod_network);
	pthread_mutex_lock(&S.lock);
	for (i = 0; i < S.nr_rts; i++) {
		if (!S.rts[i]->killed_ms && S.rts[i]->pid > 0) {
			kill(S.rts[i]->pid, SIGTERM);
			S.rts[i]->killed_ms = monotonic_ms();
		}
	}
	{
		uint64_t until = monotonic_ms() + 5000;

		runtime_reap(1);
		while (S.nr_rts && monotonic_ms() < until) {
			usleep(20000);
			runtime_reap(1);
		}
	}
	while (S.nr_rts)
		runtime_free(S.rts[--S.nr_rts]);
	free(S.rts);
	for (i = 0; i < S.nr_objs; i++) {
		json_decref(S.objs[i]->body);
		free(S.objs[i]->ns);
		free(S.objs[i]->name);
		free(S.objs[i]);
	}
	free(S.objs);
	if (S.events)
		drop_history();
	free(S.events);
	pthread_mutex_unlock(&S.lock);
	if (S.have_crds)
		crd_set_release(&S.crds);
	if (S.state_dirfd >= 0)
		close(S.state_dirfd);
	free(S.router_url);
	free(S.pod_network_url);
	free(pem_cert);
	free(pem_key);
	free(pem_ca);
	strvec_clear(&stuck_templates);
	strvec_clear(&cfg.stuck);
	strvec_clear(&cfg.warm_pools);
	strvec_clear(&cfg.templates);
	strvec_clear(&cfg.forbid);
	strvec_clear(&cfg.loads);
	if (cfg.state_dir && strcmp(cfg.state_dir, "fake-kube-state"))
		free((char *)cfg.state_dir);
	strbuf_release(&url);
	return rc;
}
