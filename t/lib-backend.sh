# The backend a test suite runs against. Tests written for every
# backend (the MCP tool suites t40xx/t41xx) source this after
# test-lib.sh; a wrapper script runs the same suite on another backend:
#
#	#!/bin/sh
#	GOSBX_TEST_BACKEND=kube
#	. "$(dirname "$0")"/t4020-mcp-go.sh
#
# (sourced, so $0, the test's name and its trash directory are the
# wrapper's own).
#
# GOSBX_TEST_BACKEND=local (default): sandboxes on this machine; needs
# bwrap with working user namespaces, else the whole suite is skipped.
# Prerequisite LOCAL is set.
#
# GOSBX_TEST_BACKEND=kube: t/lib-kube.sh's fake-kube (TLS with a client
# certificate, the v0.4.6 CRDs, one gosbx-runtime per Sandbox) started
# with the SandboxTemplate users apply (manifests/base: limits cpu 2,
# memory 2Gi, or memory $BACKEND_KUBE_MEMORY_LIMIT when set) and any
# extra fake-kube options in $BACKEND_KUBE_OPTS; KUBECONFIG and GOSBX_BACKEND=kube are
# exported so every gosbx the suite runs uses it, through the native
# port-forward. Prerequisite KUBE is set.
#
# BACKEND_KUBE_UPSTREAM_ROUTER=<claim> (with GOSBX_TEST_UPSTREAM_ROUTER,
# t/lib-kube.sh): the same through the upstream v0.4.6 sandbox-router
# instead of fake-kube's imitation (kube_start --upstream-router); the
# whole suite is skipped without it (prerequisite UPSTREAM_ROUTER). A
# last test checks that the real router carried the requests: its log
# shows requests proxied for the sandbox of <claim>, each to the pod's
# IP (gosbx sends X-Sandbox-Pod-IP).
#
# SUSPEND: gosbx suspend/resume work there (local; cluster with
# agent-sandbox v0.5 or later; not fake-kube's v0.4.6).
# LIMITS or NOLIMITS (test-lib.sh, test_limits_prereq): whether a
# sandbox gets the limits it asks for (always on kube, where the template
# has them).
# GOSBX_TEST_BACKEND=cluster: a real control plane (t/lib-cluster.sh,
# contrib/cluster/up.sh; opt-in, make test-cluster) with the
# agent-sandbox controller and router of CLUSTER_RELEASE (default
# versions.sh's) and a real gosbx-runtime for each sandbox pod (each in
# a directory of its own); gosbx and kubectl on PATH run in the
# cluster's network namespace, as the ServiceAccount manifests/rbac.yaml
# binds (KUBECONFIG); BACKEND_KUBE_MEMORY_LIMIT as for kube. Prerequisites
# KUBE and CLUSTER are set.
# GOSBX_TEST_BACKEND=url: one gosbx-runtime on a unix socket in the
# trash directory (t/lib-runtime.sh's rt_start), GOSBX_BACKEND=url and
# GOSBX_URL exported; claims are not a thing there (--claim is ignored:
# every command reaches that runtime, one workdir for all). Prerequisite
# URL is set.
#
# JOBS: gosbx mcp's jobs toolset (512 MiB, no network) runs here: the
# sandbox gets those limits (LIMITS), or they are not this host's to
# apply (url: the runtime's own, backend_ops.check_limits in
# lib/session/session.h). Not where jobs fail closed (local NOLIMITS).
#
# BACKEND_WORKDIR: where commands run (local: /app; kube: empty, the
# fake's runtimes each have a directory of their own; url: the
# runtime's workdir on this machine).
#
# Helpers, the same on both:
#   backend_claims       the names of the open claims, one a line
#                        (also a script: sh "$TRASH_DIRECTORY"/backend-claims.sh)
#   backend_claim_exists <name>
#   no_claims            fails (showing them) while any claim is open;
#                        a kube claim being deleted is waited for (10 s)

test -n "${TRASH_DIRECTORY:-}" || {
	echo >&2 "lib-backend.sh: source test-lib.sh first"
	exit 1
}

GOSBX_TEST_BACKEND=${GOSBX_TEST_BACKEND:-local}

case "$GOSBX_TEST_BACKEND" in
local)
	test_have_prereq BWRAP || test_skip_all 'bwrap is not installed'
	bwrap --unshare-user --ro-bind / / true 2>/dev/null ||
		test_skip_all 'unprivileged user namespaces do not work here'
	test_set_prereq LOCAL
	test_set_prereq SUSPEND
	test_limits_prereq
	BACKEND_WORKDIR=/app
	;;
kube)
	. "$TEST_DIRECTORY"/lib-kube.sh
	test_set_prereq KUBE
	test_set_prereq LIMITS
	# fake-kube's runtimes are plain processes, each with a workdir of
	# its own under the state directory (a real pod's is /app), or the
	# runtime image (GOSBX_TEST_IMAGE, t/lib-kube.sh): /app
	BACKEND_WORKDIR=
	test -z "${GOSBX_TEST_IMAGE:-}" || BACKEND_WORKDIR=/app
	test_atexit "kube_stop kube"
	set --
	if test -n "${BACKEND_KUBE_UPSTREAM_ROUTER:-}"; then
		test_have_prereq UPSTREAM_ROUTER ||
			test_skip_all 'missing UPSTREAM_ROUTER: set' \
				'GOSBX_TEST_UPSTREAM_ROUTER to a directory with' \
				'the v0.4.6 sandbox_router.py and its' \
				'requirements.txt (pip)'
		set -- --upstream-router
		test_at_done backend_upstream_router_check_
	fi
	# the template users apply, with another memory limit if asked
	sed -e "s/^\( *memory:\) 2Gi\$/\1 ${BACKEND_KUBE_MEMORY_LIMIT:-2Gi}/" \
		"$KUBE_TEMPLATE" \
		>"$TRASH_DIRECTORY/sandbox-template.yaml" &&
	set -- "$@" -- --load="$TRASH_DIRECTORY/sandbox-template.yaml"
	# shellcheck disable=SC2086
	kube_start "$@" ${BACKEND_KUBE_OPTS:-} || {
		echo >&4 "lib-backend.sh: fake-kube did not start"
		test_skip_all 'fake-kube did not start (see the log)'
	}
	KUBECONFIG=$TRASH_DIRECTORY/kube.kubeconfig
	GOSBX_BACKEND=kube
	export KUBECONFIG GOSBX_BACKEND
	;;
cluster)
	. "$TEST_DIRECTORY"/lib-runtime.sh
	. "$TEST_DIRECTORY"/lib-cluster.sh
	test_set_prereq KUBE
	test_set_prereq CLUSTER
	test_set_prereq LIMITS
	# spec.operatingMode: the v1beta1 Sandbox of v0.5 and later
	case $CLUSTER_RELEASE in
	v0.[0-4].*) ;;
	*) test_set_prereq SUSPEND ;;
	esac
	BACKEND_WORKDIR=
	test_expect_success "a real control plane: agent-sandbox $CLUSTER_RELEASE, its router, gosbx-runtimes" '
		cluster_up
	' || test_done
	# the template users apply, with another memory limit if asked
	if test -n "${BACKEND_KUBE_MEMORY_LIMIT:-}"; then
		test_expect_success "the template's memory limit: $BACKEND_KUBE_MEMORY_LIMIT" '
			kadm patch sandboxtemplate go-runtime-template --type=json \
				-p "[{\"op\":\"replace\",\"path\":\"/spec/podTemplate/spec/containers/0/resources/limits/memory\",\"value\":\"$BACKEND_KUBE_MEMORY_LIMIT\"}]"
		' || test_done
	fi
	# every gosbx and kubectl of the suite runs in the cluster's
	# network namespace: in.sh execs them there (the same process, so
	# signals and exit statuses are theirs)
	mkdir -p "$TRASH_DIRECTORY/cluster-bin"
	for _bc in gosbx kubectl; do
		printf '#!/bin/sh\nexec %s --dir=%s %s "$@"\n' \
			"'$CLUSTER_SCRIPTS/in.sh'" "'$CLUSTER_DIR'" \
			"'$(command -v $_bc)'" >"$TRASH_DIRECTORY/cluster-bin/$_bc"
		chmod +x "$TRASH_DIRECTORY/cluster-bin/$_bc"
	done
	PATH=$TRASH_DIRECTORY/cluster-bin:$PATH
	KUBECONFIG=$CLUSTER_USER
	GOSBX_BACKEND=kube
	export KUBECONFIG GOSBX_BACKEND
	;;
url)
	. "$TEST_DIRECTORY"/lib-runtime.sh
	test_set_prereq URL
	rt_start --unix || test_skip_all 'gosbx-runtime did not start'
	BACKEND_WORKDIR=$(rt_workdir)
	GOSBX_URL=$(cat "$TRASH_DIRECTORY/rt.url")
	GOSBX_BACKEND=url
	export GOSBX_URL GOSBX_BACKEND
	;;
*)
	echo >&2 "lib-backend.sh: unknown GOSBX_TEST_BACKEND '$GOSBX_TEST_BACKEND'"
	exit 1
	;;
esac

test_have_prereq LIMITS || test_have_prereq URL && test_set_prereq JOBS

# backend-claims.sh: the same as a script, for tests whose steps run
# in a plain sh (no functions)
case "$GOSBX_TEST_BACKEND" in
url)
	echo "exit 0" >"$TRASH_DIRECTORY/backend-claims.sh"
	;;
local)
	cat >"$TRASH_DIRECTORY/backend-claims.sh" <<EOF
ls -A "\$XDG_STATE_HOME/gosbx/claims" 2>/dev/null
exit 0
EOF
	;;
cluster)
	cat >"$TRASH_DIRECTORY/backend-claims.sh" <<EOF
"$CLUSTER_SCRIPTS/in.sh" --dir="$CLUSTER_DIR" kubectl \\
	--kubeconfig="$CLUSTER_ADMIN" -n default get sandboxclaims \\
	-o 'jsonpath={range .items[*]}{.metadata.name}{"\\n"}{end}'
EOF
	;;
kube)
	cat >"$TRASH_DIRECTORY/backend-claims.sh" <<EOF
curl -sS --max-time 60 --cacert "$KUBE_PKI/ca.crt" \\
	--cert "$KUBE_PKI/client.crt" --key "$KUBE_PKI/client.key" \\
	"\$(cat "$TRASH_DIRECTORY/kube.url")/apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/default/sandboxclaims" |
python3 -c '
import json, sys
for c in json.load(sys.stdin)["items"]:
    print(c["metadata"]["name"])
'
EOF
	;;
esac

# BACKEND_KUBE_UPSTREAM_ROUTER: the last test (test_at_done)
backend_upstream_router_check_() {
	test_expect_success 'the upstream router carried the requests' '
		_bu_log=$TRASH_DIRECTORY/kube-router.log &&
		grep "^Proxying request for sandbox " "$_bu_log" >proxied &&
		grep "^Proxying request for sandbox .$BACKEND_KUBE_UPSTREAM_ROUTER. " \
			proxied >proxied-claim &&
		test -s proxied-claim &&
		! grep -v " to URL: http://10\.244\.[0-9.]*:8888/" proxied
	'
}

backend_claims() {
	sh "$TRASH_DIRECTORY/backend-claims.sh"
}

backend_claim_exists() {
	backend_claims >backend-claims.txt &&
	grep -qx "$1" backend-claims.txt
}

backend_no_claims_() {
	backend_claims >backend-claims.txt &&
	! test -s backend-claims.txt
}

no_claims() {
	case "$GOSBX_TEST_BACKEND" in
	kube | cluster) rt_poll 10 backend_no_claims_ ;;
	*) backend_no_claims_ ;;
	esac || {
		echo >&4 "claims left behind:" && cat backend-claims.txt >&4
		return 1
	}
}
