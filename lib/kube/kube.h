#ifndef KUBE_H
#define KUBE_H

#include "compat.h"
#include "strbuf.h"
#include "strvec.h"

#include <signal.h>
#include <time.h>

#include <jansson.h>

/*
 * Client of the agent-sandbox API (kubernetes-sigs/agent-sandbox v0.4.x
 * and v0.5.x) over lib/http.h, with credentials from lib/kube/kubeconfig.h.
 * Contract: Documentation/protocol/kubernetes.md ("Objects", "From claim to a
 * reachable sandbox", "RBAC"). Every function returns 0 on success and -1 with
 * error() on failure (one line); Kubernetes Status messages are passed
 * through ("cannot create claim: sandboxclaims... is forbidden: ..."),
 * and connection errors name the server (lib/http.h's message:
 * "cannot reach 'https://10.0.0.1:6443': ...").
 *
 * Credentials: an exec plugin credential within 60 s of its expiry is
 * fetched anew before a request; a 401 answer makes the client forget
 * the cached credential (kube_config_forget_credential()), fetch it
 * again and retry the request once (exec plugins and token files).
 *
 * Threads: one client per thread (a credential refresh replaces
 * kc->http).
 */

/* The API groups of agent-sandbox (Documentation/protocol/kubernetes.md
 * "Objects"). */
#define KUBE_CLAIM_GROUP                                                       \
	"extensions.agents.x-k8s.io"	     /* claims, templates,             \
					      * warm pools */
#define KUBE_SANDBOX_GROUP "agents.x-k8s.io" /* sandboxes */

/* The labels gosbx puts on its claims (Documentation/protocol/kubernetes.md
 * "Objects"). */
#define KUBE_LABEL_CREATED_BY "agents.x-k8s.io/created-by" /* "gosbx" */
#define KUBE_LABEL_PERSISTENT "gosbx/persistent"	   /* "true"/"false" */
#define KUBE_LABEL_SESSION "gosbx/session"		   /* <purpose>-<pid> */
/* the annotation of a Sandbox naming its pod (warm pools) */
#define KUBE_ANNOTATION_POD_NAME "agents.x-k8s.io/pod-name"
/* the label selector of the claims gosbx made */
#define KUBE_SELECTOR_GOSBX KUBE_LABEL_CREATED_BY "=gosbx"

/*
 * 1 if reason is a Ready=False reason the agent-sandbox controller does
 * not recover from (TemplateNotFound, WarmPoolNotFound, InvalidMetadata,
 * EnvVarsInjectionRejected, VolumeClaimTemplatesError, ClaimExpired,
 * SandboxExpired; Documentation/protocol/kubernetes.md), else 0 (also for
 * NULL).
 */
int kube_terminal_reason(const char *reason);

struct kube_config;
struct http_client;
struct http_req;
struct http_resp;

struct kube_claim;

struct kube_client {
	struct kube_config *cfg; /* borrowed; must outlive the client */
	struct http_client *http;
	char *server;	 /* base URL */
	char *namespace; /* default namespace (the context's) */
	/* chosen versions: "v1alpha1" or "v1beta1" */
	char claim_version[16];	  /* extensions.agents.x-k8s.io */
	char sandbox_version[16]; /* agents.x-k8s.io */
	time_t cred_expiry;	  /* exec credential expiry; 0: none */
	int has_exec;		  /* user has an exec plugin */
	/*
	 * Retries (client-go's manners): 429 and 5xx answers are tried
	 * again, up to 10 times, after Retry-After or an exponential
	 * backoff (0.5 s doubling, at most 5 s); a POST only after 429
	 * or with Retry-After (the server says it did nothing). Watch
	 * streams are not (kube_claim_wait_ready() relists). Transport
	 * failures (the API server unreachable) are tried again only
	 * while retry_until_ms (monotonic_ms() time; 0: never, the
	 * default) is ahead, a POST only when nothing was sent; the
	 * errors of attempts that are tried again are not printed.
	 */
	uint64_t retry_until_ms;
	/*
	 * The API server's clock minus ours, seconds, from the Date
	 * header of its last answer (0 until one came): claim
	 * shutdownTimes are set on the server's clock.
	 */
	long clock_skew_s;
	/* each API call on stderr: method, path, status, ms (gosbx -v) */
	int verbose;
	/*
	 * Called, if set, with each state of the claim that
	 * kube_claim_wait_ready() sees (from the waiting thread), with
	 * claim_seen_data: e.g. a progress line.
	 */
	void (*claim_seen)(const struct kube_claim *c, void *data);
	void *claim_seen_data;
};

/*
 * Make a client for cfg (loaded with kube_config_load(); borrowed).
 * namespace: NULL for cfg->namespace. The API versions default to
 * v1alpha1 until kube_discover(). Returns 0, or -1 with error()
 * (credentials: token file, exec plugin; libcurl refusing a setting).
 */
int kube_client_init(struct kube_client *kc, struct kube_config *cfg,
		     const char *namespace);
void kube_client_release(struct kube_client *kc);

/*
 * One request to the API server on kc->http with kc's manners:
 * credential refresh (a 401 is tried once more with a fresh
 * credential) and the retries of struct kube_client. Returns as
 * http_request() (lib/http.h): 0 with an answer of any status, -1 with
 * error() naming the server, HTTP_ABORTED.
 */
struct http_req;
struct http_resp;
int kube_request(struct kube_client *kc, struct http_req *req,
		 struct http_resp *resp);

/*
 * How long the first contact with an API server may take, connection,
 * TLS and answer (ms): an address that never answers is reported after
 * this, not after the retries of a whole --open-timeout.
 */
#define KUBE_REACH_TIMEOUT_MS 10000

/*
 * What to check when the API server kc->server cannot be reached, one
 * sentence appended to fix; `gosbx doctor` says it in its "API server"
 * check and kube_reach() in its error, so both read the same.
 */
void kube_unreachable_fix(const struct kube_client *kc, struct strbuf *fix);

/*
 * The first contact with the API server: GET /version within
 * KUBE_REACH_TIMEOUT_MS, a transport failure not tried again (whatever
 * kc->retry_until_ms says). 0 when an answer of any status came, or -1
 * with one error(): "cannot reach '<server>': <cause>; <the fix of
 * kube_unreachable_fix()>"; HTTP_ABORTED when *cancel was set.
 */
int kube_reach(struct kube_client *kc, volatile sig_atomic_t *cancel);

/*
 * Discovery: GET /apis/extensions.agents.x-k8s.io and
 * /apis/agents.x-k8s.io; choose the newest supported version served
 * (v1beta1, else v1alpha1), or force (e.g. "v1alpha1", from
 * --api-version; NULL: choose) when the group serves it. A cluster
 * without the group: error "agent-sandbox is not installed: the API
 * group extensions.agents.x-k8s.io is not served; install it (see gosbx
 * doctor)". Sets kc->claim_version and kc->sandbox_version.
 */
int kube_discover(struct kube_client *kc, const char *force);

struct kube_claim_spec {
	const char *template_name; /* v1alpha1: spec.sandboxTemplateRef */
	const char *warm_pool;	   /* v1beta1: spec.warmPoolRef */
	int persistent;		   /* label gosbx/persistent */
	const char *session;	   /* label gosbx/session; or NULL */
	long ttl_s;		   /* spec.lifecycle.shutdownTime = now+ttl */
	const char *namespace;	   /* NULL: kc->namespace */
};

struct kube_claim {
	struct strbuf name;
	struct strbuf namespace;
	struct strbuf resource_version;
	struct strbuf sandbox;	     /* status.sandbox.name, "" if unset */
	int ready;		     /* condition Ready is True */
	struct strbuf reason;	     /* Ready condition reason */
	struct strbuf message;	     /* Ready condition message */
	struct strbuf shutdown_time; /* spec.lifecycle.shutdownTime */
	json_t *obj;		     /* the whole object (owned) */
};
void kube_claim_init(struct kube_claim *c);

/*
 * Append the path of a resource of the claim group (KUBE_CLAIM_GROUP,
 * version kc->claim_version) to p: plural (e.g. "sandboxclaims",
 * "sandboxwarmpools") in namespace ns (NULL: kc->namespace; "*": all
 * namespaces), then "/<name>" when name is not NULL; ns and name
 * percent-encoded.
 */
void kube_claim_group_path(struct strbuf *p, const struct kube_client *kc,
			   const char *ns, const char *plural,
			   const char *name);
void kube_claim_release(struct kube_claim *c);

/*
 * Format t (seconds) and nsec as RFC 3339 UTC into out (appended):
 * "2026-11-22T03:12:15.123456789Z" with nanoseconds when nsec >= 0,
 * "2026-11-22T03:12:15Z" when nsec < 0.
 */
void kube_format_time(struct strbuf *out, time_t t, long nsec);

/*
 * Build the claim body for the chosen version
 * (Documentation/protocol/kubernetes.md "Objects"): generateName
 * "sandbox-claim-", the gosbx labels, the annotation
 * agents.x-k8s.io/client-first-requested-at (now, with nanoseconds),
 * spec.lifecycle {shutdownTime, shutdownPolicy Delete}. Returns a new
 * reference.
 */
json_t *kube_claim_body(const struct kube_client *kc,
			const struct kube_claim_spec *spec);

/*
 * POST the claim (kube_claim_body()); out (initialised) gets name,
 * namespace and resourceVersion. Errors: no template_name (v1alpha1)
 * or warm_pool (v1beta1); the server's Status message, e.g. "cannot
 * create claim: sandboxclaims.extensions.agents.x-k8s.io is
 * forbidden: User "x" cannot create ...".
 */
int kube_claim_create(struct kube_client *kc,
		      const struct kube_claim_spec *spec,
		      struct kube_claim *out);
/*
 * GET a claim into out. Returns 0, 1 when it does not exist (404,
 * no message), -1 with error().
 */
int kube_claim_get(struct kube_client *kc, const char *ns, const char *name,
		   struct kube_claim *out);
/* DELETE a claim; 404 counts as done. */
int kube_claim_delete(struct kube_client *kc, const char *ns, const char *name);
/*
 * List claims matching the label selector (NULL: all) in ns (NULL:
 * kc->namespace; "*": all namespaces). *out gets a new JSON array of
 * the items; *rv (if not NULL, initialised) the list's resourceVersion.
 */
int kube_claim_list(struct kube_client *kc, const char *ns,
		    const char *selector, json_t **out, struct strbuf *rv);
/*
 * Merge patch (application/merge-patch+json) of
 * spec.lifecycle.shutdownTime to shutdown (seconds since the epoch).
 */
int kube_claim_renew(struct kube_client *kc, const char *ns, const char *name,
		     time_t shutdown);

/*
 * The Ready=False reason of a suspended Sandbox (agent-sandbox v1.0
 * SandboxReasonSuspended), which its claim forwards
 */
#define KUBE_REASON_SUSPENDED "SandboxSuspended"

struct kube_sandbox {
	struct strbuf name;
	struct strbuf pod_name; /* annotation agents.x-k8s.io/pod-name */
	struct strvec pod_ips;	/* status.podIPs */
	/*
	 * spec.operatingMode ("Running", "Suspended"; the v1beta1 Sandbox
	 * of agent-sandbox v0.5 and later); "" when the object has none
	 * (v1alpha1 has spec.replicas)
	 */
	struct strbuf mode;
	int suspended; /* condition Suspended is True (its pod is gone) */
	int ready;     /* condition Ready is True */
	struct strbuf reason; /* the Suspended (when suspending) or Ready
			       * condition's reason and message, for
			       * errors; "" if none */
};
void kube_sandbox_init(struct kube_sandbox *s);
void kube_sandbox_release(struct kube_sandbox *s);
/* GET a Sandbox. Returns 0, 1 when missing (404), -1 with error(). */
int kube_sandbox_get(struct kube_client *kc, const char *ns, const char *name,
		     struct kube_sandbox *out);
/*
 * List the Sandboxes of ns (NULL: kc->namespace; "*": all namespaces):
 * *out gets a new JSON array of the items. 0, or -1 with error().
 */
int kube_sandbox_list(struct kube_client *kc, const char *ns, json_t **out);
/*
 * Set spec.operatingMode of a Sandbox to mode ("Running" or
 * "Suspended"): a merge patch with fieldValidation=Strict, as claims
 * are created (the server refuses a field it does not know instead of
 * dropping it). Returns 0, or -1 with error() and the server's Status
 * message ("cannot suspend sandbox x: ... forbidden ...").
 */
int kube_sandbox_set_mode(struct kube_client *kc, const char *ns,
			  const char *name, const char *mode);

struct kube_ready {
	struct strbuf sandbox; /* status.sandbox.name */
	struct strvec pod_ips; /* status.sandbox.podIPs */
};
void kube_ready_init(struct kube_ready *r);
void kube_ready_release(struct kube_ready *r);

/*
 * Wait until the claim is Ready (Documentation/protocol/kubernetes.md step 2),
 * with one watch from resourceVersion rv (may be NULL or "": list first),
 * re-watching after a dropped stream (from the last rv) and listing
 * after 410 Gone. Fails on DELETED, on the terminal Ready=False
 * reasons ("claim <name> failed: <reason>: <message>"), after
 * timeout_ms ("timed out after N ms waiting for claim <name> to be
 * Ready; last condition: ..."), and when *cancel (may be NULL) becomes
 * non-zero ("interrupted"). ns: NULL for kc->namespace.
 */
int kube_claim_wait_ready(struct kube_client *kc, const char *ns,
			  const char *name, const char *rv, long timeout_ms,
			  volatile sig_atomic_t *cancel,
			  struct kube_ready *out);

/*
 * Where agent-sandbox v1.0 deploys the sandbox-router
 * (sandbox-router/deploy/ of the module; its Python client's router_namespace
 * default): gosbx looks there when the claims' namespace has none.
 */
#define KUBE_ROUTER_DEFAULT_NS "agent-sandbox-system"

/*
 * Ready router pods: EndpointSlices (discovery.k8s.io/v1) labelled
 * kubernetes.io/service-name=sandbox-router-svc in ns (NULL:
 * kc->namespace). names and ips (initialised) get one entry per ready
 * endpoint (targetRef.name, first address), in order.
 */
int kube_router_pods(struct kube_client *kc, const char *ns,
		     struct strvec *names, struct strvec *ips);

/*
 * SelfSubjectAccessReview: *allowed gets 1 when verb on
 * group/resource (group "" for core; resource may be "pods/portforward")
 * in ns (NULL: cluster-wide) is allowed, else 0.
 */
int kube_can_i(struct kube_client *kc, const char *verb, const char *group,
	       const char *resource, const char *ns, int *allowed);

/*
 * Events about an object (fieldSelector involvedObject.kind=kind,
 * involvedObject.name=name) in ns: *out gets a new JSON array.
 */
int kube_events_for(struct kube_client *kc, const char *ns, const char *kind,
		    const char *name, json_t **out);

/*
 * GET one object at /apis/<group>/<version>/namespaces/<ns>/<plural>/
 * <name> (group NULL or "": the core API, /api/<version>/...); ns NULL
 * for kc->namespace. *out gets a new reference to the object. Returns
 * 0; 1 when it does not exist (404) and 2 when reading it is forbidden
 * (403, RBAC), both without a message, why (may be NULL) getting the
 * server's Status message for 403 so that the caller can say which
 * permission is missing; or -1 with error() ("cannot get <plural>
 * <name>: <Status message>", transport errors).
 */
int kube_object_get(struct kube_client *kc, const char *group,
		    const char *version, const char *ns, const char *plural,
		    const char *name, json_t **out, struct strbuf *why);

/*
 * Parse a Kubernetes resource quantity (k8s.io/apimachinery
 * resource.Quantity, as in resources.limits): an optional sign, a
 * decimal number ("2", "1.5", ".5", "2."), then at most one suffix:
 * binary Ki Mi Gi Ti Pi Ei (powers of 1024), decimal n u m k M G T P E
 * (10^-9 ... 10^18; "m" is milli, so "250m" CPU is 0.25), or an
 * exponent e/E with an optional sign and digits ("129e6"). No spaces.
 * *out gets the value in base units (bytes for memory, cores for cpu);
 * the number is rounded once, so integers up to 2^53 and milli values
 * come out exact. Returns 0, or -1 without a message for anything else
 * (empty, garbage, a fractional exponent, an unknown suffix, a value
 * beyond the range of a double); the caller names the field.
 */
int kube_parse_quantity(const char *s, double *out);

/*
 * Does the PodSpec spec (spec.podTemplate.spec of a SandboxTemplate or
 * Sandbox, or a Pod's spec) keep every container within the limits a
 * caller asked for: resources.limits.memory at most memory_bytes
 * (bytes; <= 0: not asked) and resources.limits.cpu at most cpus
 * (cores; <= 0: not asked)? A pod-level spec.resources.limits value
 * within the asked one is enough for that resource (it bounds all the
 * containers together). A container with no limit, a zero limit (the
 * kubelet then sets none) or an unreadable one does not keep within.
 * Returns 0 when everything is within; 1 when not, with why (appended)
 * saying what is wrong ("container 'runtime' has memory limit 2Gi,
 * above the 512Mi asked") and need (appended) what a pod spec must
 * have instead ("resources.limits.memory at most 512Mi in every
 * container"). No error() is printed: the caller knows what to fix
 * (issue "kube limits": the kube backend fails closed,
 * Documentation/technical/design.md "Backends").
 */
int kube_pod_spec_check_limits(json_t *spec, int64_t memory_bytes, double cpus,
			       struct strbuf *why, struct strbuf *need);

/*
 * Append to out the text of one Warning header value (len bytes) of
 * the API server, `299 - "text"` (KEP-1693; RFC 9111 5.5): the quoted
 * text unescaped, control bytes as '?'; the whole value when nothing
 * is quoted. kube_request() shows each such text once per process on
 * stderr as "warning: kubernetes: <text>".
 */
void kube_warning_text(const char *value, size_t len, struct strbuf *out);

#endif /* KUBE_H */
