/*
 * The doctor checks of the kube backend (lib/session/doctor.h;
 * Documentation/protocol/kubernetes.md; seed 001 troubleshooting). Moved from
 * builtin/doctor.c.
 */
#include "compat.h"
#include "session/doctor.h"
#include "http.h"
#include "json.h"
#include "kube/kube.h"
#include "kube/kubeconfig.h"
#include "session/session.h"
#include "usage.h"

#define RBAC_FIX                                                               \
	"kubectl -n %s apply -f manifests/rbac.yaml and bind its Role "        \
	"gosbx-client to your user, group or service account"

/*
 * agent-sandbox v0.5 and v1.0 (v1beta1): every claim names a warm pool,
 * which must exist; one of 0 replicas gives a cold start. v0.4.x
 * (v1alpha1): the pool is optional. manifests/warmpool, cold-start and
 * v1alpha1/warmpool hold them.
 */
#define WARMPOOL_FIX_BETA                                                      \
	"kubectl -n %s apply -k manifests/warmpool (2 pre-warmed "             \
	"sandboxes), or for a cold start a pool of 0 replicas: kubectl -n "    \
	"%s apply -k manifests/cold-start (pool go-runtime-warmpool of "       \
	"go-runtime-template; copy it for another template)"
#define WARMPOOL_FIX_ALPHA                                                     \
	"kubectl -n %s apply -k manifests/v1alpha1/warmpool (pool "            \
	"go-runtime-warmpool of go-runtime-template; copy it for another "     \
	"template)"

/* seed 001 "Deploy the router in the namespace you'll use" */
#define ROUTER_INSTALL                                                         \
	"deploy the router in namespace %s: curl -sfL "                        \
	"\"https://raw.githubusercontent.com/kubernetes-sigs/agent-sandbox/"   \
	"${AS_VERSION}/clients/python/agentic-sandbox-client/sandbox-router/"  \
	"sandbox_router.yaml\" | sed -e "                                      \
	"\"s|\\${ROUTER_IMAGE}|$REG/sandbox-router:$AS_VERSION|g\" | "         \
	"kubectl -n %s apply -f - && kubectl -n %s rollout status "            \
	"deployment/sandbox-router-deployment --timeout=180s"

/* seed 001 "Path A" and "Path B": install agent-sandbox itself */
#define AGENT_SANDBOX_INSTALL                                                  \
	"install agent-sandbox: kind and other clusters: kubectl apply -f "    \
	"the upstream release's manifest.yaml and extensions.yaml "            \
	"(https://github.com/kubernetes-sigs/agent-sandbox/releases, "         \
	"e.g. v0.4.6); GKE: gcloud beta container clusters update "            \
	"<cluster> --location=<region> --enable-agent-sandbox, then "          \
	"'kubectl get crd | grep agents.x-k8s.io' lists the four CRDs"

/* what the kube checks share */
struct kube_doctor {
	struct check_list *cl;
	const struct doctor_opts *o;
	struct kube_config cfg;
	struct kube_client kc;
	const char *ns;
	const char *tmpl;
	int have_client;
	int gke;	    /* server version says GKE */
	int schema_service; /* 1: served template schema has spec.service,
			       0: lacks it, -1: unknown */
	int template_found;
};

/* the fix that makes the template's warm pool, for the claims' version */
static void add_warmpool_fix(struct kube_doctor *kd, struct strbuf *fix)
{
	if (!strcmp(kd->kc.claim_version, "v1beta1"))
		strbuf_addf(fix, WARMPOOL_FIX_BETA, kd->ns, kd->ns);
	else
		strbuf_addf(fix, WARMPOOL_FIX_ALPHA, kd->ns);
}

/* the manifests of the template, for the claims' version */
static const char *template_dir(struct kube_doctor *kd)
{
	return strcmp(kd->kc.claim_version, "v1beta1") ? "manifests/v1alpha1"
						       : "manifests/base";
}

/*
 * GET path (a JSON answer) within timeout_ms: *status gets the HTTP
 * status, *out the parsed body (or NULL). Returns 0, or -1 with error()
 * when no answer arrived (the message names the server).
 */
static int kube_get_within(struct kube_client *kc, const char *path,
			   const char *query, long timeout_ms, long *status,
			   json_t **out)
{
	static const char *const hdrs[] = { "Accept: application/json", NULL };
	struct http_req req = { 0 };
	struct http_resp resp = HTTP_RESP_INIT;

	*out = NULL;
	*status = 0;
	req.method = "GET";
	req.path = path;
	req.query = query;
	req.headers = hdrs;
	req.timeout_ms = timeout_ms;
	if (kube_request(kc, &req, &resp) < 0) {
		http_resp_release(&resp);
		return -1;
	}
	*status = resp.status;
	if (resp.body.len)
		*out = json_loadb(resp.body.buf, resp.body.len, 0, NULL);
	http_resp_release(&resp);
	return 0;
}

/* the same within 30 s */
static int kube_get(struct kube_client *kc, const char *path, const char *query,
		    long *status, json_t **out)
{
	return kube_get_within(kc, path, query, 30000, status, out);
}

/* "404 Not Found: <message>" of an answer, into sb */
static void answer_text(struct strbuf *sb, long status, json_t *ans)
{
	const char *msg = json_object_str(ans, "message");

	strbuf_addf(sb, "HTTP %ld", status);
	if (msg && *msg)
		strbuf_addf(sb, ": %s", msg);
}

static int check_kubeconfig(struct kube_doctor *kd)
{
	const struct doctor_opts *o = kd->o;
	struct kube_load_opts lo = { 0 };
	struct strbuf msg = STRBUF_INIT;
	struct capture cap;
	int r;

	lo.kubeconfig = o->kubeconfig;
	lo.context = o->context;
	capture_start(&cap);
	r = kube_config_load(&kd->cfg, &lo);
	capture_end(&cap);
	if (r < 0) {
		/* fields ignored as kubectl ignores them: maybe a typo */
		if (cap.warn.len)
			strbuf_addf(&cap.err, " (%s)", cap.warn.buf);
		check_add(kd->cl, "kubeconfig", DOCTOR_FAIL, cap.err.buf,
			  "fix the file at the line named, or point "
			  "--kubeconfig (or KUBECONFIG) at a working "
			  "kubeconfig; --context picks another context");
		capture_release(&cap);
		return -1;
	}
	kd->ns = o->namespace ? o->namespace : kd->cfg.namespace;
	if (kd->cfg.in_cluster)
		strbuf_addf(&msg, "in-cluster service account, server %s",
			    kd->cfg.cluster.server);
	else
		strbuf_addf(&msg,
			    "context '%s' (cluster '%s', user '%s', "
			    "server %s) from %s",
			    kd->cfg.context.name, kd->cfg.context.cluster,
			    kd->cfg.context.user, kd->cfg.cluster.server,
			    kd->cfg.sources);
	strbuf_addf(&msg, "; namespace '%s'", kd->ns);
	if (cap.warn.len) {
		strbuf_addf(&msg, "; %s", cap.warn.buf);
		check_add(kd->cl, "kubeconfig", DOCTOR_WARN, msg.buf,
			  "kubectl ignores unknown fields too: fix a typo "
			  "at the line named, or remove the field");
	} else {
		check_add(kd->cl, "kubeconfig", DOCTOR_OK, msg.buf, NULL);
	}
	capture_release(&cap);
	strbuf_release(&msg);
	return 0;
}

/* the fix for refused or failing credentials */
static void credential_fix(struct kube_doctor *kd, struct strbuf *fix)
{
	const struct kube_exec_config *ex = kd->cfg.user.exec;

	if (ex) {
		strbuf_addf(fix,
			    "check that the exec plugin '%s' works and is "
			    "logged in (run it by hand)",
			    ex->command);
		if (ex->install_hint && *ex->install_hint)
			strbuf_addf(fix, "; %s", ex->install_hint);
	} else if (kd->cfg.user.token_file) {
		strbuf_addf(fix, "renew the token in '%s'",
			    kd->cfg.user.token_file);
	} else {
		strbuf_addf(fix,
			    "renew the credentials of user '%s' in %s (an "
			    "expired token or client certificate)",
			    kd->cfg.context.user ? kd->cfg.context.user : "",
			    kd->cfg.sources ? kd->cfg.sources
					    : "the kubeconfig");
	}
}

static int check_client(struct kube_doctor *kd)
{
	struct strbuf fix = STRBUF_INIT;
	struct capture cap;
	int r;

	capture_start(&cap);
	r = kube_client_init(&kd->kc, &kd->cfg, kd->ns);
	capture_end(&cap);
	if (r < 0) {
		credential_fix(kd, &fix);
		check_add(kd->cl, "credentials", DOCTOR_FAIL, cap.err.buf,
			  fix.buf);
	} else {
		kd->have_client = 1;
	}
	capture_release(&cap);
	strbuf_release(&fix);
	return r;
}

static int check_api(struct kube_doctor *kd)
{
	struct strbuf msg = STRBUF_INIT, fix = STRBUF_INIT;
	struct capture cap;
	json_t *ans;
	long st;
	int r;

	capture_start(&cap);
	/* the first contact, as kube_reach() makes it for open */
	r = kube_get_within(&kd->kc, "/version", NULL, KUBE_REACH_TIMEOUT_MS,
			    &st, &ans);
	capture_end(&cap);
	if (r < 0) {
		kube_unreachable_fix(&kd->kc, &fix);
		check_add(kd->cl, "API server", DOCTOR_FAIL, cap.err.buf,
			  fix.buf);
		r = -1;
	} else if (st == 401) {
		/* left to the credentials check */
		check_add(kd->cl, "API server", DOCTOR_OK,
			  "answers (version not shown to anonymous users)",
			  NULL);
	} else if (st / 100 != 2) {
		strbuf_addf(&msg, "GET /version on %s: ", kd->kc.server);
		answer_text(&msg, st, ans);
		check_add(kd->cl, "API server", DOCTOR_FAIL, msg.buf,
			  "is the server address a Kubernetes API server?");
		r = -1;
	} else {
		const char *v = json_object_str(ans, "gitVersion");

		kd->gke = v && strstr(v, "-gke.") != NULL;
		strbuf_addf(&msg, "%s answers, Kubernetes %s", kd->kc.server,
			    v ? v : "(unknown version)");
		check_add(kd->cl, "API server", DOCTOR_OK, msg.buf, NULL);
	}
	json_decref(ans);
	capture_release(&cap);
	strbuf_release(&msg);
	strbuf_release(&fix);
	return r;
}

/* 1 when the discovery document d lists version v */
static int group_serves(json_t *d, const char *v)
{
	json_t *e;
	size_t i;

	json_array_foreach (json_object_get(d, "versions"), i, e)
		if (!strcmp(json_object_str(e, "version")
				    ? json_object_str(e, "version")
				    : "",
			    v))
			return 1;
	return 0;
}

/*
 * Credentials (a discovery GET needs an authenticated user) and the
 * agent-sandbox CRDs (which versions the groups serve).
 */
static int check_credentials_crds(struct kube_doctor *kd)
{
	struct strbuf msg = STRBUF_INIT, fix = STRBUF_INIT;
	struct capture cap;
	json_t *claims = NULL, *sandboxes = NULL;
	long st, st2 = 0;
	int r, ret = -1, alpha, beta;

	capture_start(&cap);
	r = kube_get(&kd->kc, "/apis/" KUBE_CLAIM_GROUP, NULL, &st, &claims);
	if (!r)
		r = kube_get(&kd->kc, "/apis/" KUBE_SANDBOX_GROUP, NULL, &st2,
			     &sandboxes);
	capture_end(&cap);
	if (r < 0) {
		check_add(kd->cl, "credentials", DOCTOR_FAIL, cap.err.buf,
			  "check the API server check above");
		goto out;
	}
	if (st == 401 || st2 == 401) {
		strbuf_addf(&msg,
			    "the API server refused the credentials of "
			    "user '%s' (401 Unauthorized)",
			    kd->cfg.context.user ? kd->cfg.context.user
						 : "(in-cluster)");
		credential_fix(kd, &fix);
		check_add(kd->cl, "credentials", DOCTOR_FAIL, msg.buf, fix.buf);
		goto out;
	}
	strbuf_addf(&msg, "accepted (user '%s')",
		    kd->cfg.context.user ? kd->cfg.context.user
					 : "in-cluster service account");
	if (kd->cfg.user.impersonate)
		/* every check below, and gosbx's requests, act as this one */
		strbuf_addf(&msg, ", acting as '%s' (impersonation, 'as')",
			    kd->cfg.user.impersonate);
	check_add(kd->cl, "credentials", DOCTOR_OK, msg.buf, NULL);
	strbuf_reset(&msg);

	if (st == 404 || st2 == 404) {
		strbuf_addf(&msg,
			    "agent-sandbox is not installed: the API group "
			    "%s is not served",
			    st == 404 ? KUBE_CLAIM_GROUP : KUBE_SANDBOX_GROUP);
		check_add(kd->cl, "agent-sandbox CRDs", DOCTOR_FAIL, msg.buf,
			  AGENT_SANDBOX_INSTALL);
		goto out;
	}
	if (st / 100 != 2 || st2 / 100 != 2) {
		strbuf_addf(&msg, "cannot read the API groups %s and %s: ",
			    KUBE_CLAIM_GROUP, KUBE_SANDBOX_GROUP);
		answer_text(&msg, st / 100 != 2 ? st : st2,
			    st / 100 != 2 ? claims : sandboxes);
		check_add(kd->cl, "agent-sandbox CRDs", DOCTOR_FAIL, msg.buf,
			  "see the credentials and RBAC checks");
		goto out;
	}
	alpha = group_serves(claims, "v1alpha1");
	beta = group_serves(claims, "v1beta1");
	if (!alpha && !beta) {
		strbuf_addf(&msg,
			    "%s serves neither v1alpha1 nor v1beta1 (an "
			    "agent-sandbox release gosbx does not know)",
			    KUBE_CLAIM_GROUP);
		check_add(kd->cl, "agent-sandbox CRDs", DOCTOR_FAIL, msg.buf,
			  "install agent-sandbox v0.4.x or v0.5.x, or "
			  "upgrade gosbx");
		goto out;
	}
	capture_release(&cap);
	capture_start(&cap);
	r = kube_discover(&kd->kc, kd->o->session->api_version);
	capture_end(&cap);
	if (r < 0) {
		check_add(kd->cl, "agent-sandbox CRDs", DOCTOR_FAIL,
			  cap.err.buf, AGENT_SANDBOX_INSTALL);
		goto out;
	}
	strbuf_addf(&msg, "%s serves %s%s%s: agent-sandbox %s; gosbx uses %s",
		    KUBE_CLAIM_GROUP, alpha ? "v1alpha1" : "",
		    alpha && beta ? " and " : "", beta ? "v1beta1" : "",
		    beta ? "v0.5 or later" : "v0.4.x", kd->kc.claim_version);
	check_add(kd->cl, "agent-sandbox CRDs", DOCTOR_OK, msg.buf, NULL);
	ret = 0;
out:
	json_decref(claims);
	json_decref(sandboxes);
	capture_release(&cap);
	strbuf_release(&msg);
	strbuf_release(&fix);
	return ret;
}

/* Documentation/protocol/kubernetes.md "RBAC the client needs" */
static const struct {
	const char *group, *resource, *verb;
} rbac_needs[] = {
	{ KUBE_CLAIM_GROUP, "sandboxclaims", "create" },
	{ KUBE_CLAIM_GROUP, "sandboxclaims", "get" },
	{ KUBE_CLAIM_GROUP, "sandboxclaims", "list" },
	{ KUBE_CLAIM_GROUP, "sandboxclaims", "watch" },
	{ KUBE_CLAIM_GROUP, "sandboxclaims", "delete" },
	{ KUBE_CLAIM_GROUP, "sandboxclaims", "patch" },
	{ KUBE_SANDBOX_GROUP, "sandboxes", "get" },
	{ KUBE_SANDBOX_GROUP, "sandboxes", "list" },
	{ KUBE_SANDBOX_GROUP, "sandboxes", "watch" },
	/* gosbx suspend and resume (spec.operatingMode) */
	{ KUBE_SANDBOX_GROUP, "sandboxes", "patch" },
	{ KUBE_CLAIM_GROUP, "sandboxtemplates", "get" },
	{ KUBE_CLAIM_GROUP, "sandboxtemplates", "list" },
	{ KUBE_CLAIM_GROUP, "sandboxwarmpools", "get" },
	{ KUBE_CLAIM_GROUP, "sandboxwarmpools", "list" },
	{ "", "pods", "get" },
	/*
	 * a WebSocket port-forward is a GET, authorized as "get"; 1.35+
	 * checks "create" too (kubernetes/kubernetes#78741)
	 */
	{ "", "pods/portforward", "get" },
	{ "", "pods/portforward", "create" },
	{ "discovery.k8s.io", "endpointslices", "list" },
	{ "", "events", "list" },
};

static void check_rbac(struct kube_doctor *kd)
{
	struct strbuf msg = STRBUF_INIT, missing = STRBUF_INIT;
	struct strbuf fix = STRBUF_INIT;
	struct capture cap;
	size_t i, nr_missing = 0;
	int allowed;

	capture_start(&cap);
	for (i = 0; i < ARRAY_SIZE(rbac_needs); i++) {
		if (kube_can_i(&kd->kc, rbac_needs[i].verb, rbac_needs[i].group,
			       rbac_needs[i].resource, kd->ns, &allowed) < 0)
			break;
		if (allowed)
			continue;
		nr_missing++;
		if (missing.len)
			strbuf_addstr(&missing, ", ");
		strbuf_addf(&missing, "%s %s", rbac_needs[i].verb,
			    rbac_needs[i].resource);
	}
	capture_end(&cap);
	strbuf_addf(&fix, RBAC_FIX, kd->ns);
	if (i < ARRAY_SIZE(rbac_needs)) {
		strbuf_addf(&msg, "cannot check the permissions: %s",
			    cap.err.buf);
		check_add(kd->cl, "RBAC", DOCTOR_WARN, msg.buf, fix.buf);
	} else if (nr_missing) {
		strbuf_addf(&msg,
			    "%zu of %zu permissions missing in namespace "
			    "'%s': %s",
			    nr_missing, ARRAY_SIZE(rbac_needs), kd->ns,
			    missing.buf);
		check_add(kd->cl, "RBAC", DOCTOR_FAIL, msg.buf, fix.buf);
	} else {
		strbuf_addf(&msg,
			    "all %zu permissions gosbx needs are granted in "
			    "namespace '%s'",
			    ARRAY_SIZE(rbac_needs), kd->ns);
		check_add(kd->cl, "RBAC", DOCTOR_OK, msg.buf, NULL);
	}
	capture_release(&cap);
	strbuf_release(&msg);
	strbuf_release(&missing);
	strbuf_release(&fix);
}

static void check_controller(struct kube_doctor *kd)
{
	static const char path[] =
		"/apis/apps/v1/namespaces/agent-sandbox-system/deployments/"
		"agent-sandbox-controller";
	struct strbuf msg = STRBUF_INIT;
	struct capture cap;
	json_t *ans, *status, *spec;
	int64_t want = 1, ready = 0;
	long st;
	int r;

	capture_start(&cap);
	r = kube_get(&kd->kc, path, NULL, &st, &ans);
	capture_end(&cap);
	if (r < 0) {
		check_add(kd->cl, "controller", DOCTOR_WARN, cap.err.buf, NULL);
	} else if (st == 404 && kd->gke) {
		check_add(kd->cl, "controller", DOCTOR_OK,
			  "no deployment agent-sandbox-controller in "
			  "agent-sandbox-system: expected on GKE, whose "
			  "agent-sandbox addon runs the controller itself",
			  NULL);
	} else if (st == 404) {
		check_add(kd->cl, "controller", DOCTOR_WARN,
			  "no deployment agent-sandbox-controller in "
			  "namespace agent-sandbox-system: claims stay "
			  "unready without a controller (fine if it runs "
			  "elsewhere, e.g. GKE's agent-sandbox addon)",
			  AGENT_SANDBOX_INSTALL);
	} else if (st == 403) {
		check_add(kd->cl, "controller", DOCTOR_OK,
			  "not allowed to read deployments in "
			  "agent-sandbox-system (gosbx does not need to); "
			  "not checked",
			  NULL);
	} else if (st / 100 != 2) {
		strbuf_addstr(&msg, "cannot read the controller deployment: ");
		answer_text(&msg, st, ans);
		check_add(kd->cl, "controller", DOCTOR_WARN, msg.buf, NULL);
	} else {
		spec = json_object_get(ans, "spec");
		status = json_object_get(ans, "status");
		json_object_int(spec, "replicas", &want);
		json_object_int(status, "readyReplicas", &ready);
		strbuf_addf(&msg,
			    "deployment agent-sandbox-system/"
			    "agent-sandbox-controller: %" PRId64 " of %" PRId64
			    " replicas ready",
			    ready, want);
		if (ready > 0)
			check_add(kd->cl, "controller", DOCTOR_OK, msg.buf,
				  NULL);
		else
			check_add(kd->cl, "controller", DOCTOR_FAIL, msg.buf,
				  "kubectl -n agent-sandbox-system describe "
				  "deployment agent-sandbox-controller; "
				  "kubectl -n agent-sandbox-system get events");
	}
	json_decref(ans);
	capture_release(&cap);
	strbuf_release(&msg);
}

/*
 * The router found in ns, another namespace than the claims': may this
 * user port-forward there? (manifests/rbac-router-namespace.yaml)
 */
static void router_elsewhere(struct kube_doctor *kd, const char *ns,
			     struct strbuf *msg)
{
	int get = 0, create = 0;
	struct capture cap;
	struct strbuf fix = STRBUF_INIT;

	capture_start(&cap);
	if (kube_can_i(&kd->kc, "get", "", "pods/portforward", ns, &get) < 0 ||
	    kube_can_i(&kd->kc, "create", "", "pods/portforward", ns, &create) <
		    0) {
		capture_end(&cap);
		strbuf_addf(msg,
			    "; cannot check the port-forward permission "
			    "there: %s",
			    cap.err.buf);
		check_add(kd->cl, "router", DOCTOR_WARN, msg->buf, NULL);
	} else if (!get || !create) {
		capture_end(&cap);
		strbuf_addf(msg, "; but this user may not port-forward there "
				 "(get and create on pods/portforward)");
		strbuf_addf(&fix,
			    "sed 's/CLAIMS_NAMESPACE/%s/' "
			    "manifests/rbac-router-namespace.yaml | sed "
			    "'s/agent-sandbox-system/%s/' | kubectl apply -f -",
			    kd->ns, ns);
		check_add(kd->cl, "router", DOCTOR_FAIL, msg->buf, fix.buf);
	} else {
		capture_end(&cap);
		check_add(kd->cl, "router", DOCTOR_OK, msg->buf, NULL);
	}
	capture_release(&cap);
	strbuf_release(&fix);
}

static void check_router(struct kube_doctor *kd)
{
	struct strvec names = STRVEC_INIT, ips = STRVEC_INIT;
	struct strbuf msg = STRBUF_INIT, fix = STRBUF_INIT, p = STRBUF_INIT;
	struct strbuf other = STRBUF_INIT;
	const char *opt = kd->o->session->router_namespace;
	const char *ns = opt && *opt ? opt : kd->ns;
	struct capture cap;
	json_t *ans = NULL;
	long st = 0;
	int r;

	capture_start(&cap);
	r = kube_router_pods(&kd->kc, ns, &names, &ips);
	capture_end(&cap);
	strbuf_addf(&fix, ROUTER_INSTALL, ns, ns, ns);
	if (r < 0) {
		check_add(kd->cl, "router", DOCTOR_FAIL, cap.err.buf, fix.buf);
		goto out;
	}
	/* none in the claims' namespace: v1.0 deploys it in its own */
	if (!names.nr && ns == kd->ns && strcmp(ns, KUBE_ROUTER_DEFAULT_NS)) {
		capture_release(&cap);
		capture_start(&cap);
		r = kube_router_pods(&kd->kc, KUBE_ROUTER_DEFAULT_NS, &names,
				     &ips);
		capture_end(&cap);
		if (!r && names.nr)
			ns = KUBE_ROUTER_DEFAULT_NS;
		else if (r < 0)
			strbuf_addf(&other,
				    " (nor can this user look in '%s': "
				    "%s)",
				    KUBE_ROUTER_DEFAULT_NS, cap.err.buf);
		else
			strbuf_addf(&other, " (nor in '%s')",
				    KUBE_ROUTER_DEFAULT_NS);
	}
	if (names.nr) {
		strbuf_addf(&msg,
			    "Service sandbox-router-svc has %zu ready "
			    "endpoint%s in '%s' (%s",
			    names.nr, names.nr == 1 ? "" : "s", ns, names.v[0]);
		for (size_t i = 1; i < names.nr; i++)
			strbuf_addf(&msg, ", %s", names.v[i]);
		strbuf_addch(&msg, ')');
		if (strcmp(ns, kd->ns)) {
			strbuf_addf(&msg,
				    ", none in the claims' namespace "
				    "'%s'",
				    kd->ns);
			router_elsewhere(kd, ns, &msg);
		} else {
			check_add(kd->cl, "router", DOCTOR_OK, msg.buf, NULL);
		}
		goto out;
	}
	/* none ready: is the Service there at all? (may be forbidden) */
	strbuf_addstr(&p, "/api/v1/namespaces/");
	http_pct_encode_path(&p, ns);
	strbuf_addstr(&p, "/services/sandbox-router-svc");
	capture_release(&cap);
	capture_start(&cap);
	r = kube_get(&kd->kc, p.buf, NULL, &st, &ans);
	capture_end(&cap);
	if (!r && st == 404) {
		strbuf_addf(&msg,
			    "no Service sandbox-router-svc in namespace "
			    "'%s': gosbx reaches sandboxes through the router",
			    ns);
	} else if (!r && st / 100 == 2) {
		strbuf_addf(&msg,
			    "Service sandbox-router-svc in '%s' has no ready "
			    "endpoints",
			    ns);
		strbuf_reset(&fix);
		strbuf_addf(&fix,
			    "kubectl -n %s rollout status "
			    "deployment/sandbox-router-deployment; kubectl "
			    "-n %s describe pods of the router (image pull, "
			    "crash); or redeploy it: ",
			    ns, ns);
		strbuf_addf(&fix, ROUTER_INSTALL, ns, ns, ns);
	} else {
		strbuf_addf(&msg,
			    "no ready endpoints of Service "
			    "sandbox-router-svc in namespace '%s'",
			    ns);
	}
	strbuf_addbuf(&msg, &other);
	check_add(kd->cl, "router", DOCTOR_FAIL, msg.buf, fix.buf);
out:
	json_decref(ans);
	capture_release(&cap);
	strvec_clear(&names);
	strvec_clear(&ips);
	strbuf_release(&msg);
	strbuf_release(&fix);
	strbuf_release(&p);
	strbuf_release(&other);
}

/*
 * The GKE addon's SandboxTemplate CRD is older than upstream v0.4.6 and
 * has no spec.service (seed 001 field notes): look at the served
 * schema when we may read CRDs.
 */
static void check_template_schema(struct kube_doctor *kd)
{
	static const char path[] =
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
		"sandboxtemplates." KUBE_CLAIM_GROUP;
	struct capture cap;
	json_t *ans, *v, *props;
	size_t i;
	long st;
	int r;

	kd->schema_service = -1;
	capture_start(&cap);
	r = kube_get(&kd->kc, path, NULL, &st, &ans);
	capture_end(&cap);
	capture_release(&cap);
	if (r < 0 || st / 100 != 2) {
		json_decref(ans); /* not allowed or absent: not checked */
		return;
	}
	json_array_foreach (
		json_object_get(json_object_get(ans, "spec"), "versions"), i,
		v) {
		const char *name = json_object_str(v, "name");

		if (!name || strcmp(name, kd->kc.claim_version))
			continue;
		props = json_object_get(v, "schema");
		props = json_object_get(props, "openAPIV3Schema");
		props = json_object_get(props, "properties");
		props = json_object_get(props, "spec");
		props = json_object_get(props, "properties");
		/* no schema at all: unknown */
		if (props)
			kd->schema_service =
				json_object_get(props, "service") != NULL;
	}
	json_decref(ans);
}

static void check_template(struct kube_doctor *kd)
{
	struct strbuf p = STRBUF_INIT, msg = STRBUF_INIT, fix = STRBUF_INIT;
	struct capture cap;
	json_t *ans, *svc;
	long st;
	int r, no_service;

	check_template_schema(kd);
	/*
	 * The template needs no spec.service, and may not have one, when
	 * the served CRD lacks it, or on GKE when we may not read the CRD
	 * (seed 001: the addon's CRD rejects the field and the addon
	 * makes the per-sandbox Service unconditionally).
	 */
	no_service =
		kd->schema_service == 0 || (kd->gke && kd->schema_service < 0);
	strbuf_addf(&p, "/apis/" KUBE_CLAIM_GROUP "/%s/namespaces/",
		    kd->kc.claim_version);
	http_pct_encode_path(&p, kd->ns);
	strbuf_addstr(&p, "/sandboxtemplates/");
	http_pct_encode_path(&p, kd->tmpl);
	capture_start(&cap);
	r = kube_get(&kd->kc, p.buf, NULL, &st, &ans);
	capture_end(&cap);
	if (r < 0) {
		check_add(kd->cl, "template", DOCTOR_FAIL, cap.err.buf, NULL);
		goto out;
	}
	if (st == 404) {
		strbuf_addf(&msg, "no SandboxTemplate '%s' in namespace '%s'",
			    kd->tmpl, kd->ns);
		if (no_service)
			strbuf_addf(&fix,
				    "%s rejects the spec.service of "
				    "manifests/base (unknown field "
				    "\"spec.service\"): apply the gke-gvisor "
				    "overlay, which strips it: kubectl "
				    "kustomize manifests/overlays/gke-gvisor "
				    "| kubectl -n %s apply -f -",
				    kd->schema_service == 0
					    ? "this cluster's SandboxTemplate "
					      "CRD has no spec.service (as "
					      "GKE's addon) and"
					    : "on GKE the addon's "
					      "SandboxTemplate CRD",
				    kd->ns);
		else
			strbuf_addf(&fix,
				    "kubectl kustomize %s (or "
				    "manifests/overlays/gvisor; "
				    "manifests/overlays/gke-gvisor on GKE) | "
				    "kubectl -n %s apply -f -; or name "
				    "another template with --template",
				    template_dir(kd), kd->ns);
		check_add(kd->cl, "template", DOCTOR_FAIL, msg.buf, fix.buf);
		goto out;
	}
	if (st / 100 != 2) {
		strbuf_addf(&msg,
			    "cannot read SandboxTemplate '%s': ", kd->tmpl);
		answer_text(&msg, st, ans);
		strbuf_addf(&fix, RBAC_FIX, kd->ns);
		check_add(kd->cl, "template", DOCTOR_FAIL, msg.buf, fix.buf);
		goto out;
	}
	kd->template_found = 1;
	svc = json_object_get(json_object_get(ans, "spec"), "service");
	if (json_is_true(svc)) {
		strbuf_addf(&msg,
			    "SandboxTemplate '%s' in '%s' has spec.service: "
			    "true",
			    kd->tmpl, kd->ns);
		check_add(kd->cl, "template", DOCTOR_OK, msg.buf, NULL);
	} else if (no_service) {
		strbuf_addf(&msg,
			    "SandboxTemplate '%s' in '%s' without "
			    "spec.service, which %s rejects "
			    "(manifests/overlays/gke-gvisor strips it): the "
			    "controller makes the per-sandbox Service itself",
			    kd->tmpl, kd->ns,
			    kd->schema_service == 0
				    ? "this cluster's SandboxTemplate CRD "
				      "(as GKE's addon's)"
				    : "the CRD of GKE's addon");
		check_add(kd->cl, "template", DOCTOR_OK, msg.buf, NULL);
	} else {
		strbuf_addf(&msg,
			    "SandboxTemplate '%s' in '%s' lacks spec.service: "
			    "true: the controller creates no per-sandbox "
			    "Service, and the router answers '502 Could not "
			    "connect to the backend sandbox'",
			    kd->tmpl, kd->ns);
		strbuf_addf(&fix,
			    "add 'service: true' under spec of the template "
			    "(manifests/base has it) and re-apply: kubectl "
			    "-n %s apply -k %s",
			    kd->ns, template_dir(kd));
		check_add(kd->cl, "template", DOCTOR_WARN, msg.buf, fix.buf);
	}
out:
	json_decref(ans);
	capture_release(&cap);
	strbuf_release(&p);
	strbuf_release(&msg);
	strbuf_release(&fix);
}

static void add_events(struct kube_doctor *kd, const char *kind,
		       const char *name, struct strbuf *sb);

/* 1 when obj has the condition Ready with status True */
static int object_ready(json_t *obj)
{
	json_t *conds = json_object_get(json_object_get(obj, "status"),
					"conditions"),
	       *c;
	size_t i;

	json_array_foreach (conds, i, c) {
		const char *type = json_object_str(c, "type");
		const char *st = json_object_str(c, "status");

		if (type && !strcmp(type, "Ready"))
			return st && !strcmp(st, "True");
	}
	return 0;
}

/*
 * Why warm pool wp lacks ready replicas: the warning events of the pod
 * of its first unready Sandbox (status.selector selects the pool's
 * Sandboxes; list sandboxes and list events are in "RBAC the client
 * needs"), appended to sb as "; Pod <name>: <reason>: <message>".
 * Nothing when they cannot be read.
 */
static void add_pool_events(struct kube_doctor *kd, json_t *wp,
			    struct strbuf *sb)
{
	const char *sel =
		json_object_str(json_object_get(wp, "status"), "selector");
	struct strbuf p = STRBUF_INIT, q = STRBUF_INIT;
	struct capture cap;
	json_t *ans = NULL, *sbx;
	size_t i;
	long st;
	int r;

	if (!sel || !*sel)
		return;
	strbuf_addf(&p, "/apis/" KUBE_SANDBOX_GROUP "/%s/namespaces/",
		    kd->kc.sandbox_version);
	http_pct_encode_path(&p, kd->ns);
	strbuf_addstr(&p, "/sandboxes");
	http_query_add(&q, "labelSelector", sel);
	capture_start(&cap);
	r = kube_get(&kd->kc, p.buf, q.buf, &st, &ans);
	capture_end(&cap);
	capture_release(&cap);
	if (!r && st / 100 == 2) {
		json_array_foreach (json_object_get(ans, "items"), i, sbx) {
			json_t *meta = json_object_get(sbx, "metadata");
			const char *pod = json_object_str(
				json_object_get(meta, "annotations"),
				KUBE_ANNOTATION_POD_NAME);

			if (object_ready(sbx))
				continue;
			if (!pod)
				pod = json_object_str(meta, "name");
			if (pod)
				add_events(kd, "Pod", pod, sb);
			break;
		}
	}
	json_decref(ans);
	strbuf_release(&p);
	strbuf_release(&q);
}

/*
 * Warm pools referencing the template: ready vs wanted replicas. On
 * v1beta1 a claim names a warm pool, so one is required; *pool gets
 * the name of the first (for the probe).
 */
static void check_warm_pool(struct kube_doctor *kd, struct strbuf *pool)
{
	struct strbuf p = STRBUF_INIT, msg = STRBUF_INIT, fix = STRBUF_INIT;
	struct capture cap;
	json_t *ans, *items, *wp;
	int beta = !strcmp(kd->kc.claim_version, "v1beta1");
	int status = DOCTOR_OK;
	size_t i, nr = 0;
	long st;
	int r;

	strbuf_addf(&p, "/apis/" KUBE_CLAIM_GROUP "/%s/namespaces/",
		    kd->kc.claim_version);
	http_pct_encode_path(&p, kd->ns);
	strbuf_addstr(&p, "/sandboxwarmpools");
	capture_start(&cap);
	r = kube_get(&kd->kc, p.buf, NULL, &st, &ans);
	capture_end(&cap);
	if (r < 0 || st / 100 != 2) {
		if (r < 0)
			strbuf_addbuf(&msg, &cap.err);
		else {
			strbuf_addstr(&msg, "cannot list warm pools: ");
			answer_text(&msg, st, ans);
		}
		strbuf_addf(&fix, RBAC_FIX, kd->ns);
		check_add(kd->cl, "warm pool", beta ? DOCTOR_FAIL : DOCTOR_WARN,
			  msg.buf, fix.buf);
		goto out;
	}
	items = json_object_get(ans, "items");
	json_array_foreach (items, i, wp) {
		json_t *spec = json_object_get(wp, "spec");
		const char *name = json_object_str(
			json_object_get(wp, "metadata"), "name");
		const char *t = json_object_str(
			json_object_get(spec, "sandboxTemplateRef"), "name");
		int64_t want = 0, ready = 0;

		if (!name || !t || strcmp(t, kd->tmpl))
			continue;
		if (!nr++)
			strbuf_addstr(pool, name);
		json_object_int(spec, "replicas", &want);
		json_object_int(json_object_get(wp, "status"), "readyReplicas",
				&ready);
		if (msg.len)
			strbuf_addstr(&msg, "; ");
		strbuf_addf(&msg, "%s: %" PRId64 " of %" PRId64 " ready", name,
			    ready, want);
		if (ready < want) {
			status = DOCTOR_WARN;
			add_pool_events(kd, wp, &msg);
			if (fix.len)
				strbuf_addstr(&fix, "; ");
			strbuf_addf(&fix,
				    "kubectl -n %s describe sandboxwarmpool "
				    "%s and the events of its pods (image "
				    "pull, admission policy)",
				    kd->ns, name);
		}
	}
	if (!nr) {
		strbuf_addf(&msg,
			    "no SandboxWarmPool in '%s' uses template '%s'",
			    kd->ns, kd->tmpl);
		add_warmpool_fix(kd, &fix);
		if (beta) {
			strbuf_addstr(&msg,
				      ": v1beta1 claims name a warm pool");
			status = DOCTOR_FAIL;
		} else {
			strbuf_addstr(&msg, " (claims start cold, in tens of "
					    "seconds)");
			status = DOCTOR_OK;
		}
	}
	check_add(kd->cl, "warm pool", status, msg.buf, fix.buf);
out:
	json_decref(ans);
	capture_release(&cap);
	strbuf_release(&p);
	strbuf_release(&msg);
	strbuf_release(&fix);
}

/* "reason: message" of the events about kind/name, appended to sb */
static void add_events(struct kube_doctor *kd, const char *kind,
		       const char *name, struct strbuf *sb)
{
	json_t *events = NULL, *ev;
	struct capture cap;
	size_t i;

	capture_start(&cap);
	kube_events_for(&kd->kc, kd->ns, kind, name, &events);
	capture_end(&cap);
	capture_release(&cap);
	json_array_foreach (events, i, ev) {
		const char *type = json_object_str(ev, "type");
		const char *reason = json_object_str(ev, "reason");
		const char *m = json_object_str(ev, "message");

		if (type && !strcmp(type, "Normal"))
			continue;
		strbuf_addf(sb, "; %s %s: %s%s%s", kind, name,
			    reason ? reason : "", reason && m ? ": " : "",
			    m ? m : "");
	}
	json_decref(events);
}

/* a real claim, timed to Ready, then deleted */
static void check_kube_probe(struct kube_doctor *kd, const char *pool)
{
	struct kube_claim_spec spec = { 0 };
	struct kube_claim claim, now;
	struct kube_ready rdy;
	struct kube_sandbox sb;
	struct strbuf msg = STRBUF_INIT, fix = STRBUF_INIT;
	struct capture cap;
	uint64_t t0, t1;
	int r;

	kube_claim_init(&claim);
	kube_claim_init(&now);
	kube_ready_init(&rdy);
	kube_sandbox_init(&sb);
	spec.template_name = kd->tmpl;
	spec.warm_pool = pool && *pool ? pool : NULL;
	spec.session = "doctor";
	/* short-lived: gone soon should we be killed */
	spec.ttl_s = (long)(kd->o->probe_timeout_ms / 1000) + 60;
	spec.namespace = kd->ns;
	capture_start(&cap);
	t0 = monotonic_ms();
	r = kube_claim_create(&kd->kc, &spec, &claim);
	if (!r)
		r = kube_claim_wait_ready(&kd->kc, kd->ns, claim.name.buf,
					  claim.resource_version.buf,
					  (long)kd->o->probe_timeout_ms, NULL,
					  &rdy);
	t1 = monotonic_ms();
	capture_end(&cap);
	if (!r) {
		strbuf_addf(&msg,
			    "claim %s Ready in %" PRIu64
			    " ms (sandbox %s, pod IP %s)",
			    claim.name.buf, t1 - t0, rdy.sandbox.buf,
			    rdy.pod_ips.nr ? rdy.pod_ips.v[0] : "none");
		check_add(kd->cl, "probe", DOCTOR_OK, msg.buf, NULL);
	} else {
		strbuf_addbuf(&msg, &cap.err);
		if (claim.name.len) {
			const char *sbx = claim.name.buf;
			const char *pod;

			capture_release(&cap);
			capture_start(&cap);
			if (!kube_claim_get(&kd->kc, kd->ns, claim.name.buf,
					    &now) &&
			    now.sandbox.len)
				sbx = now.sandbox.buf;
			if (kube_sandbox_get(&kd->kc, kd->ns, sbx, &sb))
				strbuf_addstr(&sb.pod_name, sbx);
			capture_end(&cap);
			pod = sb.pod_name.len ? sb.pod_name.buf : sbx;
			add_events(kd, "SandboxClaim", claim.name.buf, &msg);
			add_events(kd, "Sandbox", sbx, &msg);
			add_events(kd, "Pod", pod, &msg);
			/*
			 * agent-sandbox v0.5 and v1.0: every claim names a
			 * pool (a v1alpha1 claim on v0.5 the pool
			 * shadow-pool-<template>) that must exist
			 */
			if (!strcmp(now.reason.buf, "WarmPoolNotFound")) {
				strbuf_addf(&fix,
					    "create the SandboxWarmPool the "
					    "claim names (%s): ",
					    now.message.buf);
				add_warmpool_fix(kd, &fix);
			} else {
				strbuf_addf(&fix,
					    "kubectl -n %s describe pod %s; "
					    "kubectl -n %s get events: an "
					    "image the cluster cannot pull, "
					    "an admission policy (GKE: use "
					    "the gke-gvisor overlay), no node "
					    "for the runtime class",
					    kd->ns, pod, kd->ns);
			}
		} else if (!strcmp(kd->kc.claim_version, "v1beta1") &&
			   !spec.warm_pool) {
			strbuf_addf(&fix,
				    "v1beta1 claims name a warm pool, and no "
				    "SandboxWarmPool in '%s' uses template "
				    "'%s': ",
				    kd->ns, kd->tmpl);
			add_warmpool_fix(kd, &fix);
		} else {
			strbuf_addf(&fix, RBAC_FIX, kd->ns);
		}
		check_add(kd->cl, "probe", DOCTOR_FAIL, msg.buf, fix.buf);
	}
	if (claim.name.len) {
		capture_release(&cap);
		capture_start(&cap);
		r = kube_claim_delete(&kd->kc, kd->ns, claim.name.buf);
		capture_end(&cap);
		if (r < 0)
			warning("cannot delete the probe claim %s: %s",
				claim.name.buf, cap.err.buf);
	}
	capture_release(&cap);
	kube_claim_release(&claim);
	kube_claim_release(&now);
	kube_ready_release(&rdy);
	kube_sandbox_release(&sb);
	strbuf_release(&msg);
	strbuf_release(&fix);
}

int doctor_kube(struct check_list *cl, const struct doctor_opts *o)
{
	struct kube_doctor kd = { 0 };
	struct strbuf pool = STRBUF_INIT;

	kd.cl = cl;
	kd.o = o;
	kd.tmpl = o->template_name;
	if (check_kubeconfig(&kd) < 0 || check_client(&kd) < 0 ||
	    check_api(&kd) < 0 || check_credentials_crds(&kd) < 0) {
		if (kd.have_client && cl->nr &&
		    !strcmp(cl->v[cl->nr - 1].name, "agent-sandbox CRDs"))
			check_rbac(&kd);
		goto out;
	}
	check_rbac(&kd);
	check_controller(&kd);
	check_router(&kd);
	check_template(&kd);
	check_warm_pool(&kd, &pool);
	if (o->probe)
		check_kube_probe(&kd, pool.buf);
out:
	if (kd.have_client)
		kube_client_release(&kd.kc);
	kube_config_release(&kd.cfg);
	strbuf_release(&pool);
	return 0;
}
