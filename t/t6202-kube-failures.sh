#!/bin/sh
test_description='the kube backend when things go wrong

A controller failure (TemplateNotFound) fails fast with its reason, a
pod that never gets Ready times out with --open-timeout; either way the
claim is rolled back. Reattaching to a claim that is not Ready says
why; a refused port-forward rolls back the new claim.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-kube.sh

CLAIMS=/apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/default/sandboxclaims

claim_names() {
	kube_curl "$CLAIMS" >claims.json &&
	kube_py claims.json '"".join(i["metadata"]["name"] + "\n" for i in v["items"])'
}

no_claims() {
	claim_names >names &&
	test ! -s names
}

no_objects() {
	kube_curl /fake/state >state.json &&
	kube_py state.json "[o for o in v[\"objects\"] if o[\"kind\"] in (\"SandboxClaim\", \"Sandbox\")]" >objs &&
	test "$(cat objs)" = "[]"
}

test_atexit "kube_stop kube"
test_atexit "kube_stop kf"
test_expect_success 'setup: fake-kube with a template and a stuck one' '
	kube_start -- --template=go-runtime-template \
		--template=stuck-template --stuck=stuck-template
'
KUBECONFIG=$TRASH_DIRECTORY/kube.kubeconfig
GOSBX_BACKEND=kube
export KUBECONFIG GOSBX_BACKEND

test_expect_success 'a missing template fails fast with TemplateNotFound' '
	fails_err gosbx --template=no-such-template --open-timeout=2m \
		exec -- true &&
	test_grep "failed: TemplateNotFound" err &&
	test_grep ! "timed out" err
'

test_expect_success '... and no claim is left behind' '
	no_claims
'

test_expect_success 'a pod that never gets Ready: --open-timeout, then rollback' '
	fails_err gosbx --template=stuck-template --open-timeout=2s \
		exec -- true &&
	test_grep "timed out after 2000 ms waiting for claim .* to be Ready" err &&
	rt_poll 10 no_claims &&
	rt_poll 10 no_objects
'

test_expect_success 'open fails the same way and leaves nothing' '
	fails_err gosbx --template=stuck-template --open-timeout=1s open &&
	test_grep "timed out" err &&
	rt_poll 10 no_claims
'

test_expect_success 'reattach to a claim that is not Ready names its condition' '
	kube_apply "$CLAIMS" "{\"apiVersion\":\"extensions.agents.x-k8s.io/v1alpha1\",\"kind\":\"SandboxClaim\",\"metadata\":{\"name\":\"stuck-one\"},\"spec\":{\"sandboxTemplateRef\":{\"name\":\"stuck-template\"}}}" &&
	test "$(cat status)" = 201 &&
	kube_wait_json 30 "$CLAIMS/stuck-one" \
		"any(c[\"type\"] == \"Ready\" for c in v.get(\"status\", {}).get(\"conditions\", []))" &&
	fails_err gosbx exec --claim=stuck-one -- true &&
	test_grep "claim .stuck-one. is not Ready: Ready=False" err
'

# Needs builtin/close.c to call kube_backend_delete() (lib/kube/backend-kube.h)
# instead of opening a session, which requires a Ready claim.
test_expect_success 'close deletes a claim that never got Ready' '
	gosbx close stuck-one &&
	rt_poll 10 no_claims &&
	fails_err gosbx close stuck-one &&
	test_grep "no claim .stuck-one." err
'

test_expect_success 'cleanup: delete the stuck claim' '
	kube_req DELETE "$CLAIMS/stuck-one" &&
	rt_poll 10 no_claims
'

test_expect_success 'setup: fake-kubes that forbid port-forward' '
	kube_start --name=kf -- --template=go-runtime-template \
		--forbid=get:pods/portforward &&
	kube_start --name=kf35 -- --template=go-runtime-template \
		--server-version=v1.35.0 --forbid=create:pods/portforward
'

# A WebSocket port-forward is a GET: the API server authorizes it as
# "get" on pods/portforward, and from 1.35 as "create" too
# (kubernetes/kubernetes#78741); manifests/rbac.yaml grants both.
test_expect_success 'no get on pods/portforward: the open fails and rolls back the claim' '
	fails_err gosbx --kubeconfig="$TRASH_DIRECTORY/kf.kubeconfig" \
		exec -- true &&
	test_grep "forbidden" err &&
	test_grep "cannot get resource .pods/portforward.\|get.*pods" err &&
	KUBE=kf rt_poll 10 no_claims
'

test_expect_success 'Kubernetes 1.35, no create on pods/portforward: the same' '
	fails_err gosbx --kubeconfig="$TRASH_DIRECTORY/kf35.kubeconfig" \
		exec -- true &&
	test_grep "forbidden" err &&
	KUBE=kf35 rt_poll 10 no_claims
'

test_done
