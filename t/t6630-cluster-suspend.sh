#!/bin/sh
test_description=${test_description:-'gosbx suspend and resume on a real control plane (agent-sandbox v1.0)'}
# The real agent-sandbox controller suspends a claim's Sandbox when gosbx
# sets spec.operatingMode: Suspended (its pod deleted, condition
# Suspended True) and starts a new pod on Running. No router is
# deployed (t6620), so the claim is made by the admin with kubectl,
# labelled as gosbx makes its claims; gosbx works on it as the user
# that manifests/rbac.yaml binds. t6631 checks the refusal on v0.4.6.
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-cluster.sh

# sandbox_of <claim>: the name of the claim's Sandbox
sandbox_of() {
	kadm get sandboxclaim "$1" -o "jsonpath={.status.sandbox.name}"
}

# cond <kind> <name> <type>: the status of a condition
cond() {
	kadm get "$1" "$2" \
		-o "jsonpath={.status.conditions[?(@.type==\"$3\")].status}"
}

claim_ready() {
	test "$(cond sandboxclaim c1 Ready)" = True
}

# the pod of the Sandbox: Running on kwok's node
pod_running() {
	test "$(kadm get pod "$(cat pod)" -o "jsonpath={.status.phase}")" = Running
}

pod_gone() {
	! kadm get pod "$(cat pod)" >/dev/null 2>&1
}

test_expect_success 'setup: a claim of the warm pool gets Ready' '
	cluster_up &&
	cat >claim.yaml <<-\YAML &&
	apiVersion: extensions.agents.x-k8s.io/v1beta1
	kind: SandboxClaim
	metadata:
	  name: c1
	  labels:
	    agents.x-k8s.io/created-by: gosbx
	    gosbx/persistent: "true"
	spec:
	  warmPoolRef: {name: go-runtime-warmpool}
	YAML
	test_retry 150 0.2 kadm apply --server-side -f claim.yaml &&
	test_retry 150 0.2 claim_ready &&
	sandbox_of c1 >sandbox &&
	test -s sandbox &&
	kadm get sandbox "$(cat sandbox)" \
		-o "jsonpath={.metadata.annotations.agents\.x-k8s\.io/pod-name}" >pod &&
	{ test -s pod || cp sandbox pod; } &&
	pod_running &&
	gosbx_user claims >out &&
	test_grep "^c1  .*  running$" out
'

test_expect_success 'suspend: the controller deletes the pod, the Sandbox stays' '
	gosbx_user -v --open-timeout=60s suspend c1 2>err &&
	test_grep "^suspended claim .c1.$" err &&
	# a strict merge patch of the Sandbox, as the RBAC user may
	test_grep "^kube: PATCH /apis/agents.x-k8s.io/v1beta1/namespaces/default/sandboxes/$(cat sandbox)?fieldValidation=Strict: 200" err &&
	test "$(kadm get sandbox "$(cat sandbox)" -o "jsonpath={.spec.operatingMode}")" = Suspended &&
	test "$(cond sandbox "$(cat sandbox)" Suspended)" = True &&
	pod_gone &&
	test_retry 50 0.2 eval "test \"\$(cond sandboxclaim c1 Ready)\" = False" &&
	gosbx_user claims >out &&
	test_grep "^c1  .*  suspended$" out &&
	gosbx_user claims -o json >out.json &&
	python3 -c "import json
v = {c[\"name\"]: c for c in json.load(open(\"out.json\"))}
assert v[\"c1\"][\"mode\"] == \"suspended\", v"
'

test_expect_success 'suspend again: already suspended, nothing changes' '
	gosbx_user suspend c1 2>err &&
	test_grep "^claim .c1. is already suspended$" err
'

test_expect_success 'exec on the suspended claim says how to resume it' '
	test_expect_code_err 125 gosbx_user exec --claim=c1 -- true &&
	test_grep "^error: claim .c1. is suspended; resume it with .gosbx resume c1.$" err
'

test_expect_success 'resume: a new pod, the Sandbox and the claim Ready' '
	gosbx_user --open-timeout=60s resume c1 2>err &&
	test_grep "^resumed claim .c1.$" err &&
	test "$(kadm get sandbox "$(cat sandbox)" -o "jsonpath={.spec.operatingMode}")" = Running &&
	test "$(cond sandbox "$(cat sandbox)" Ready)" = True &&
	test "$(cond sandbox "$(cat sandbox)" Suspended)" = False &&
	claim_ready &&
	test_retry 50 0.2 pod_running &&
	gosbx_user claims >out &&
	test_grep "^c1  .*  running$" out &&
	gosbx_user resume c1 2>err &&
	test_grep "^claim .c1. is already running$" err
'

test_expect_success 'a timeout that ends before the controller is done is 125' '
	test_expect_code_err 125 gosbx_user --open-timeout=1ms suspend c1 &&
	test_grep "timed out after 1 ms waiting for sandbox .* of claim .c1. to be Suspended" err &&
	gosbx_user --open-timeout=60s suspend c1
'

test_expect_success 'close works on a suspended claim' '
	gosbx_user close c1 2>err &&
	test_grep "^closed claim .c1.$" err &&
	test_retry 150 0.2 eval "! kadm get sandboxclaim c1 >/dev/null 2>&1"
'

test_expect_success 'no such claim' '
	test_expect_code_err 125 gosbx_user suspend nope &&
	test_grep "^error: no claim .nope. in namespace .default.$" err
'

test_done
