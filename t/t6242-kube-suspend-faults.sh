#!/bin/sh
test_description='gosbx suspend and resume: faults a real controller does not make

t6630 shows suspend and resume with the real agent-sandbox v1.0
controller and t6631 the refusal on v0.4.6. fake-kube v0.5.6 serves
the v1beta1 Sandbox with spec.operatingMode but its controller never
acts on it (a controller that is stuck), plays a Role without patch on
sandboxes, and has the Sandbox deleted while gosbx waits.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-kube.sh

NS=/namespaces/default
CLAIMS=/apis/extensions.agents.x-k8s.io/v1beta1$NS
SANDBOXES=/apis/agents.x-k8s.io/v1beta1$NS/sandboxes

# claim <kube>: a claim c1 of the warm pool, Ready; its Sandbox's name
# in sandbox-<kube>
claim() {
	KUBE=$1 kube_apply "$CLAIMS/sandboxclaims" "{
		\"apiVersion\":\"extensions.agents.x-k8s.io/v1beta1\",
		\"kind\":\"SandboxClaim\",
		\"metadata\":{\"name\":\"c1\",
			\"labels\":{\"agents.x-k8s.io/created-by\":\"gosbx\"}},
		\"spec\":{\"warmPoolRef\":{\"name\":\"go-runtime-warmpool\"}}}" &&
	KUBE=$1 kube_wait_json 30 "$CLAIMS/sandboxclaims/c1" \
		"any(c[\"type\"] == \"Ready\" and c[\"status\"] == \"True\" for c in v[\"status\"][\"conditions\"])" &&
	kube_py body "v[\"status\"][\"sandbox\"][\"name\"]" >sandbox-$1 &&
	test -s sandbox-$1
}

# mode <kube>: spec.operatingMode of its Sandbox
mode() {
	KUBE=$1 kube_req GET "$SANDBOXES/$(cat sandbox-$1)" &&
	kube_py body "v[\"spec\"].get(\"operatingMode\", \"\")"
}

test_atexit "kube_stop kube"
test_atexit "kube_stop kf"
test_expect_success 'setup: fake-kube v0.5.6, one without patch on sandboxes' '
	pool=--warm-pool=go-runtime-warmpool:go-runtime-template:1 &&
	kube_start --release=v0.5.6 --no-runtime -- \
		--template=go-runtime-template $pool &&
	kube_start --name=kf --release=v0.5.6 --no-runtime -- \
		--template=go-runtime-template $pool \
		--forbid=patch:sandboxes &&
	claim kube &&
	claim kf &&
	test "$(mode kube)" = Running
'
KUBECONFIG=$TRASH_DIRECTORY/kube.kubeconfig
GOSBX_BACKEND=kube
export KUBECONFIG GOSBX_BACKEND

test_expect_success 'claims shows the mode of a v1beta1 Sandbox' '
	gosbx claims >out &&
	test_grep "^c1  .*  running$" out
'

test_expect_success 'a controller that never reports Suspended: a timeout naming it' '
	test_expect_code_err 125 gosbx --open-timeout=1s suspend c1 &&
	test_grep "^error: timed out after 1000 ms waiting for sandbox .$(cat sandbox-kube). of claim .c1. to be Suspended (see --open-timeout); last condition: none$" err &&
	test "$(mode kube)" = Suspended &&
	gosbx claims >out &&
	test_grep "^c1  .*  suspended$" out
'

test_expect_success 'no patch on sandboxes: the API server'"'"'s refusal, nothing changed' '
	test_expect_code_err 125 gosbx --kubeconfig="$TRASH_DIRECTORY/kf.kubeconfig" \
		suspend c1 &&
	test_grep "^error: cannot suspend sandbox $(cat sandbox-kf): .*forbidden" err &&
	test "$(mode kf)" = Running
'

test_expect_success 'the Sandbox deleted while gosbx waits' '
	kube_expect 200 PATCH "$SANDBOXES/$(cat sandbox-kube)" \
		-H "Content-Type: application/merge-patch+json" \
		--data "{\"spec\":{\"operatingMode\":\"Running\"}}" &&
	{ gosbx -v --open-timeout=60s suspend c1 2>suspend.err
	  echo $? >suspend.rc; } &
	# waiting once it patched: this controller never reports Suspended
	rt_poll 20 grep "^kube: PATCH .*/sandboxes/" suspend.err &&
	kube_expect 200 DELETE "$SANDBOXES/$(cat sandbox-kube)" &&
	wait &&
	test "$(cat suspend.rc)" = 125 &&
	test_grep "^error: sandbox .$(cat sandbox-kube). of claim .c1. is gone$" suspend.err
'

test_expect_success 'v1alpha1 forced: refused before any request to the claim' '
	test_expect_code_err 125 gosbx --api-version=v1alpha1 suspend c1 &&
	test_grep "^error: cannot suspend claim .c1.: the Sandbox API in use (agents.x-k8s.io/v1alpha1) has no spec.operatingMode" err
'

test_done
