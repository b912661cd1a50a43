#ifndef BACKEND_KUBE_H
#define BACKEND_KUBE_H

/*
 * The kube backend (lib/kube/backend-kube.c;
 * Documentation/protocol/kubernetes.md): struct backend_ops backend_kube in
 * session.h, chosen with --backend=kube.
 *
 * Open (session_open() with opts->claim NULL): load the kubeconfig
 * (opts->kubeconfig, opts->context), discover the served API version
 * (or opts->api_version), create a SandboxClaim: v1alpha1 names the
 * template (opts->template, default go-runtime-template), v1beta1 the
 * warm pool (opts->warm_pool; default: the pool of the namespace whose
 * sandboxTemplateRef is the template, the first by name, else a pool
 * named like the template); labels agents.x-k8s.io/created-by=gosbx,
 * gosbx/persistent=<opts->keep>, gosbx/session=<purpose>-<pid>;
 * annotations agents.x-k8s.io/client-first-requested-at and
 * gosbx/ttl-seconds; spec.lifecycle shutdownTime now + opts->ttl_ms
 * (default 1 h) with shutdownPolicy Delete. Then one watch until the
 * claim is Ready (opts->open_timeout_ms, default 5 min; opts->cancel),
 * and the runtime is reached through the sandbox-router: a native
 * port-forward to port 8080 of the first ready router pod, or
 * http://<opts->gateway>, or opts->api_url. Any failure once the claim
 * exists deletes it again.
 *
 * Reattach (opts->claim): GET the claim, require Ready, connect.
 *
 * Limits (Documentation/technical/design.md "Backends": isolation fails
 * closed). A claim has no resources field: its limits are the
 * SandboxTemplate's, so they are checked, never set:
 * - memory and CPU asked (memory_set with memory_bytes > 0, cpus_set
 *   with cpus > 0): before a new claim is created, GET the template it
 *   will use (v1alpha1: the template; v1beta1: the chosen warm pool's
 *   spec.sandboxTemplateRef) and require every container of
 *   spec.podTemplate.spec to have resources.limits.memory (cpu) at most
 *   the asked value (kube_pod_spec_check_limits() in lib/kube/kube.h);
 *   otherwise fail with "template '<t>' in namespace '<ns>' does not
 *   honour the limits asked: container '<c>' has memory limit 2Gi,
 *   above the 512Mi asked; use a template with ..." and create
 *   nothing. A template or pool that is missing or may not be read
 *   (403: "the client needs 'get' on sandboxtemplates...") fails too.
 *   On reattach with limits asked, the claim's pod (what the kubelet
 *   enforces, LimitRange defaults included) is checked the same way
 *   and the reattach refused when it is over or cannot be read: the
 *   safe choice, since the caller asked for a bound it would otherwise
 *   not get. "None" (<0), 0 or not set: no check; the local defaults
 *   (2 GiB, 2 CPUs, 512 pids) do not apply, the template's limits do.
 * - pids (pids_set, pids > 0) and disk_bytes > 0: refused ("--pids is
 *   not available on the kube backend: ..."): a pod template has no
 *   process limit (the kubelet's podPidsLimit is per node) and no
 *   per-file size limit.
 * - network: not enforced either way. A pod has the cluster network
 *   unless a NetworkPolicy (the template's spec.networkPolicy, managed
 *   by agent-sandbox, or the namespace's) restricts it; opts->network
 *   = 1 grants nothing more and network = 0 (the default, and what the
 *   jobs toolset sets) takes nothing away, so it is not refused.
 *
 * Router headers on every runtime request: X-Sandbox-ID (the bound
 * Sandbox's name, which differs from the claim's for a warm-pool
 * sandbox), X-Sandbox-Namespace, X-Sandbox-Port: 8888,
 * X-Sandbox-Pod-IP (when known), X-Sandbox-Timeout: 3600, X-Request-ID
 * (lib/http.h), Authorization: Bearer <opts->router_token> when set.
 *
 * Lifetime: while a process holds the session, a thread renews the
 * claim's shutdownTime to now + TTL every TTL/4 (as touch() does
 * around commands); on reattach the TTL is opts->ttl_ms when set,
 * else the claim's gosbx/ttl-seconds annotation, else 1 h. close
 * deletes the claim (404 counts as done); disconnect keeps it.
 */

struct session;

/* The bound Sandbox name of an open kube session, or NULL. */
const char *kube_backend_sandbox(const struct session *s);
/* The namespace of an open kube session's claim, or NULL. */
const char *kube_backend_namespace(const struct session *s);

struct session_opts;
/*
 * Delete the claim name without connecting to its sandbox (for `gosbx
 * close` of a claim that is not Ready, e.g. stuck pulling its image):
 * kubeconfig, context, namespace and api_version come from opts.
 * Returns 0, or -1 with error() (no such claim: "no claim '<name>' in
 * namespace '<ns>'", API errors).
 */
int kube_backend_delete(const struct session_opts *opts, const char *name);

/*
 * `gosbx close --all` on kube: delete every claim gosbx made in the
 * namespace of opts (label agents.x-k8s.io/created-by=gosbx; other
 * claims are left alone), whoever opened it and whatever its state.
 * closed (may be NULL) is called with each deleted claim's name.
 * Returns 0, or -1 with error() when the list failed or a delete did
 * (the others are still deleted).
 */
int kube_backend_delete_all(const struct session_opts *opts,
			    void (*closed)(const char *name, void *data),
			    void *data);

#endif /* BACKEND_KUBE_H */
