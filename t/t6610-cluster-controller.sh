#!/bin/sh
test_description=${test_description:-'the real agent-sandbox controller answers gosbx (contrib/cluster)'}
# contrib/cluster/up.sh with the agent-sandbox controller of the release
# (built by contrib/cluster/build.sh from the Go module), as its own
# ServiceAccount with the module's ClusterRoles. No scheduler and no
# nodes (up.sh --no-nodes): sandbox pods stay Pending, so a claim is
# never Ready, and gosbx must report the controller's own reasons. CLUSTER_RELEASE: default
# versions.sh's; t6611 sources this script with v0.4.6.
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-cluster.sh

# a claim naming what does not exist: v0.4.x claims name a template,
# later ones a warm pool
case $CLUSTER_RELEASE in
v0.4.*)
	missing=--template=nope
	missing_reason='TemplateNotFound: SandboxTemplate "nope" not found'
	;;
*)
	missing=--warm-pool=nope
	missing_reason='WarmPoolNotFound: SandboxWarmPool "nope" not found'
	;;
esac

# sandboxes <file>: "<name> <owner kind> <pod phase>" of each Sandbox
sandboxes() {
	kadm get sandboxes -o json >sandboxes.json &&
	kadm get pods -o json >pods.json &&
	python3 -c 'import json, sys
pods = {p["metadata"]["name"]: p["status"].get("phase", "-")
	for p in json.load(open("pods.json"))["items"]}
for s in json.load(open("sandboxes.json"))["items"]:
	md = s["metadata"]
	owner = [o["kind"] for o in md.get("ownerReferences", [])] or ["-"]
	print(md["name"], owner[0], pods.get(md["name"], "-"))' >"$1"
}
# pool_full: the warm pool's 2 sandboxes, each with a Pending pod, and
# no other sandbox
pool_full() {
	sandboxes pool.txt &&
	test "$(grep -c " SandboxWarmPool Pending\$" pool.txt)" = 2 &&
	test "$(wc -l <pool.txt)" = 2
}

test_expect_success 'up.sh starts the controller, which fills the warm pool' '
	cluster_up --no-nodes &&
	test_grep "agent-sandbox $CLUSTER_RELEASE with its controller" cluster-up.out &&
	test_retry 100 0.2 pool_full &&
	cat pool.txt >&3
'

claimed() {
	sandboxes claimed.txt &&
	grep " SandboxClaim " claimed.txt >adopted.txt
}

test_expect_success 'open: a pool sandbox is adopted; the timeout names its condition' '
	(
		gosbx_user --open-timeout=5s open --name=c1 2>open.err
		echo $? >open.status
	) &
	test_retry 100 0.1 claimed &&
	wait $! &&
	cat adopted.txt open.err >&3 &&
	test_line_count = 1 adopted.txt &&
	test "$(cat open.status)" = 125 &&
	test_grep "timed out after 5000 ms waiting for claim c1 to be Ready; last condition: Ready=False DependenciesNotReady: Pod exists with phase: Pending" open.err &&
	test_must_fail kadm get sandboxclaim c1
'

test_expect_success 'the claim gone, its sandbox is collected and the pool refilled' '
	test_retry 150 0.2 pool_full &&
	read -r adopted _ <adopted.txt &&
	test_grep ! "^$adopted " pool.txt
'

test_expect_success 'a claim of a missing pool or template fails with the controller'"'"'s reason' '
	test_expect_code_err 125 gosbx_user --open-timeout=60s $missing open --name=c2 &&
	test_grep "claim c2 failed: $missing_reason" err &&
	test_grep ! "timed out" err
'

test_done
