#!/bin/sh
test_description=${test_description:-'claims get Ready on a real control plane with kwok nodes'}
# contrib/cluster/up.sh in full: the agent-sandbox controller, and
# kube-scheduler placing sandbox pods on kwok's node, where kwok's stages
# make them Running and Ready, with no router (up.sh --no-router): the
# claim gets Ready by the real controller, and gosbx then names the
# missing router. CLUSTER_RELEASE: default versions.sh's; t6621
# sources this script with v0.4.6.
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-cluster.sh

# pool_ready: the warm pool's 2 sandboxes Ready, their pods Running on
# kwok-node-0
pool_ready() {
	kadm get sandboxes -o json >sandboxes.json &&
	kadm get pods -o json >pods.json &&
	python3 -c 'import json, sys
pods = {p["metadata"]["name"]: p for p in json.load(open("pods.json"))["items"]}
n = 0
for s in json.load(open("sandboxes.json"))["items"]:
	name = s["metadata"]["name"]
	ready = [c["status"] for c in s.get("status", {}).get("conditions", [])
		 if c["type"] == "Ready"]
	p = pods.get(name, {})
	print(name, ready, p.get("spec", {}).get("nodeName"),
	      p.get("status", {}).get("phase"), p.get("status", {}).get("podIP"))
	if ready == ["True"] and \
	   p.get("spec", {}).get("nodeName") == "kwok-node-0" and \
	   p.get("status", {}).get("phase") == "Running":
		n += 1
sys.exit(0 if n == 2 else 1)' >pool.txt
}

test_expect_success 'up.sh: the scheduler and kwok make the warm pool Ready' '
	cluster_up --no-router &&
	test_grep "with its controller, node kwok-node-0" cluster-up.out &&
	test "$(kadm get node kwok-node-0 -o "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}")" = True &&
	test_retry 150 0.2 pool_ready &&
	cat pool.txt >&3 &&
	test_grep " 10\.244\.0\.[0-9]*\$" pool.txt
'

test_expect_success 'doctor sees the pool ready; only the router is missing' '
	test_expect_code 1 gosbx_user doctor >doctor.out &&
	cat doctor.out >&3 &&
	test_grep "^ok    warm pool: go-runtime-warmpool: 2 of 2 ready" doctor.out &&
	test "$(grep -c "^fail" doctor.out)" = 1 &&
	test_grep "^fail  router: no ready endpoints of Service sandbox-router-svc" doctor.out
'

test_expect_success 'open: the claim gets Ready, then gosbx names the missing router' '
	test_expect_code_err 125 gosbx_user -v --open-timeout=60s open --name=c1 &&
	test_grep "^kube: POST /apis/extensions.agents.x-k8s.io/v1[a-z0-9]*/namespaces/default/sandboxclaims?fieldValidation=Strict: 201" err &&
	test_grep "^error: no ready sandbox-router pod in namespace .default. (EndpointSlices of Service sandbox-router-svc)" err &&
	test_grep ! "timed out" err &&
	# the router is looked up once the watch saw the claim Ready
	grep -n "^kube: GET .*/sandboxclaims[?:]\|^kube: GET .*/endpointslices[?:]" err >order &&
	sed -n "1s/.*sandboxclaims[?:].*/claims/p;2s/.*endpointslices[?:].*/router/p" order >actual &&
	printf "claims\nrouter\n" >expect &&
	test_cmp expect actual &&
	test_must_fail kadm get sandboxclaim c1
'

test_done
