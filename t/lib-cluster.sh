# Helpers for the tests against a real control plane (t66xx):
# contrib/cluster/up.sh's etcd, kube-apiserver, kube-controller-manager
# and agent-sandbox controller on loopback. Source after test-lib.sh:
#
#	. "$(dirname "$0")"/test-lib.sh
#	. "$TEST_DIRECTORY"/lib-cluster.sh
#
# These suites are opt-in: without GOSBX_TEST_CLUSTER (make test-cluster
# sets it) the script is skipped, saying so. With it, binaries missing
# from the cache (contrib/cluster/build.sh; GOSBX_CLUSTER_CACHE, by
# default the real home's ~/.cache/gosbx/cluster) fail the suite: they
# never skip.
#
# cluster_up [up.sh options...]: starts the control plane (with the
# controller of CLUSTER_RELEASE unless --no-controller, kwok's node
# unless --no-nodes, and then the release's router and real
# gosbx-runtimes for the sandbox pods unless --no-router) with its state
# in $TRASH_DIRECTORY/cluster (up.sh's output in cluster-up.out) and
# registers down.sh at exit. Then:
#	CLUSTER_DIR           the state directory
#	CLUSTER_ADMIN         the admin kubeconfig (system:masters)
#	CLUSTER_USER          the kubeconfig of the ServiceAccount that only
#	                      manifests/rbac.yaml binds
#	CLUSTER_K8S, CLUSTER_RELEASE  the Kubernetes version and the
#	                      agent-sandbox release of its CRDs
#	cluster_in <command>  the command in the cluster's network
#	                      namespace (contrib/cluster/in.sh), where its
#	                      API server and pod IPs are
#	kadm <kubectl args>   kubectl as admin
#	kuser <kubectl args>  kubectl as the RBAC user
#	gosbx_user <gosbx args>  gosbx --backend=kube as the RBAC user
# cluster_audit <file>: the API server's audit log of SandboxClaim
# writes and port-forwards, one line a request: "<verb> <user> <code>
# <requestURI>", <user> as "<user>(as:<impersonated user>)" when the
# request impersonated one.

test -n "${TRASH_DIRECTORY:-}" || {
	echo >&2 "lib-cluster.sh: source test-lib.sh first"
	exit 1
}
if test -z "${GOSBX_TEST_CLUSTER:-}"; then
	test_skip_all "a real control plane is opt-in: make test-cluster" \
		"(GOSBX_TEST_CLUSTER=1)"
fi

CLUSTER_SCRIPTS=$GOSBX_SOURCE_DIR/contrib/cluster
: "${GOSBX_CLUSTER_CACHE:=$TEST_REAL_HOME/.cache/gosbx/cluster}"
export GOSBX_CLUSTER_CACHE
. "$CLUSTER_SCRIPTS"/versions.sh
CLUSTER_K8S=$GOSBX_CLUSTER_K8S
CLUSTER_RELEASE=${CLUSTER_RELEASE:-$GOSBX_CLUSTER_AGENT_SANDBOX}
CLUSTER_DIR=$TRASH_DIRECTORY/cluster
CLUSTER_ADMIN=$CLUSTER_DIR/admin.kubeconfig
CLUSTER_USER=$CLUSTER_DIR/gosbx.kubeconfig

for _cl_b in etcd-$GOSBX_CLUSTER_ETCD/bin/etcd \
	kube-apiserver-$CLUSTER_K8S/bin/kube-apiserver \
	kube-controller-manager-$CLUSTER_K8S/bin/kube-controller-manager; do
	if ! test -x "$GOSBX_CLUSTER_CACHE/$_cl_b"; then
		say "# $GOSBX_CLUSTER_CACHE/$_cl_b is missing:" \
			"run contrib/cluster/build.sh"
		test_expect_success 'the control plane is built (contrib/cluster/build.sh)' false
		test_done
	fi
done
for _cl_c in kubectl openssl python3; do
	if ! command -v $_cl_c >/dev/null; then
		test_expect_success "$_cl_c is installed" false
		test_done
	fi
done

# the agent-sandbox CRDs (t/crds.sh; t/run-tests.sh sets GOSBX_CRDS_DIR)
if ! test -f "${GOSBX_CRDS_DIR:-}/$CLUSTER_RELEASE/extensions.agents.x-k8s.io_sandboxclaims.yaml"; then
	GOSBX_CRDS_DIR=$(HOME=$TEST_REAL_HOME "$TEST_DIRECTORY"/crds.sh \
		"$GOSBX_BUILD_DIR/t/crds" 2>&4) || {
		test_expect_success 'the agent-sandbox CRDs are there (t/crds.sh)' false
		test_done
	}
	export GOSBX_CRDS_DIR
fi

# the cluster's network namespace (contrib/cluster/in.sh)
cluster_in() { "$CLUSTER_SCRIPTS"/in.sh --dir="$CLUSTER_DIR" "$@"; }
kadm() { cluster_in kubectl --kubeconfig="$CLUSTER_ADMIN" "$@"; }
kuser() { cluster_in kubectl --kubeconfig="$CLUSTER_USER" "$@"; }
gosbx_user() {
	cluster_in gosbx --backend=kube --kubeconfig="$CLUSTER_USER" "$@"
}

# At exit: after a failed test, the cluster's logs (each component's,
# pods.py's, every pod process's, the audit log) go to cluster-logs/ in
# the trash directory, which is kept; then down.sh removes the cluster.
cluster_down() {
	if test "$test_failure" != 0 && test -d "$CLUSTER_DIR"; then
		(cd "$CLUSTER_DIR" && find . -name '*.log' -type f) >cluster-logs.list &&
			mkdir -p cluster-logs &&
			tar -C "$CLUSTER_DIR" -cf - -T cluster-logs.list |
			tar -C cluster-logs -xf -
	fi
	"$CLUSTER_SCRIPTS"/down.sh --dir="$CLUSTER_DIR"
}

cluster_up() {
	test_atexit cluster_down
	"$CLUSTER_SCRIPTS"/up.sh --dir="$CLUSTER_DIR" \
		--agent-sandbox="$CLUSTER_RELEASE" \
		--runtime="$GOSBX_BUILD_DIR/gosbx-runtime" "$@" \
		>cluster-up.out 2>&1 || {
		cat cluster-up.out >&4
		return 1
	}
	cat cluster-up.out >&3
}

cluster_audit() {
	python3 -c '
import json, sys
seen = set()
for l in open(sys.argv[1]):
	e = json.loads(l)
	if e["auditID"] in seen:  # an upgrade logs ResponseStarted too
		continue
	seen.add(e["auditID"])
	u = e["user"]["username"]
	if "impersonatedUser" in e:
		u += "(as:" + e["impersonatedUser"]["username"] + ")"
	print(e["verb"], u, e["responseStatus"]["code"], e["requestURI"])' \
		"$CLUSTER_DIR/audit.log" >"$1"
}
