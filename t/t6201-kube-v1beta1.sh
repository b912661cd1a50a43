#!/bin/sh
test_description='the kube backend against fake-kube v0.5.6 (v1beta1)

Claims name a warm pool; a warm-pool sandbox is adopted, so the bound
Sandbox name differs from the claim name and X-Sandbox-ID must carry
the Sandbox name; v1alpha1 can still be forced.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-kube.sh

NS=/namespaces/default
BETA=/apis/extensions.agents.x-k8s.io/v1beta1$NS
ALPHA=/apis/extensions.agents.x-k8s.io/v1alpha1$NS

claim_names() {
	kube_curl "$BETA/sandboxclaims" >claims.json &&
	kube_py claims.json '"".join(i["metadata"]["name"] + "\n" for i in v["items"])'
}

no_claims() {
	claim_names >names &&
	test ! -s names
}

test_atexit "kube_stop kube"
test_expect_success 'setup: fake-kube v0.5.6, a template and a warm pool of 1' '
	kube_start --release=v0.5.6 -- --template=go-runtime-template \
		--template=other-template \
		--warm-pool=go-runtime-warmpool:go-runtime-template:1 &&
	kube_wait_json 30 "$BETA/sandboxwarmpools/go-runtime-warmpool" \
		"v.get(\"status\", {}).get(\"readyReplicas\") == 1"
'
KUBECONFIG=$TRASH_DIRECTORY/kube.kubeconfig
GOSBX_BACKEND=kube
export KUBECONFIG GOSBX_BACKEND

test_expect_success 'open: a v1beta1 claim naming the template'"'"'s warm pool' '
	gosbx open -q >name &&
	name=$(cat name) &&
	kube_curl "$BETA/sandboxclaims/$name" >claim.json &&
	test "$(kube_py claim.json "v[\"apiVersion\"]")" = extensions.agents.x-k8s.io/v1beta1 &&
	test "$(kube_py claim.json "v[\"spec\"][\"warmPoolRef\"][\"name\"]")" = go-runtime-warmpool &&
	test "$(kube_py claim.json "v[\"spec\"][\"lifecycle\"][\"shutdownPolicy\"]")" = Delete &&
	test "$(kube_py claim.json "v[\"metadata\"][\"labels\"][\"gosbx/persistent\"]")" = true
'

test_expect_success 'the warm-pool sandbox was adopted: its name is not the claim'"'"'s' '
	name=$(cat name) &&
	kube_py claim.json "v[\"status\"][\"sandbox\"][\"name\"]" >sandbox &&
	test -s sandbox &&
	test "$(cat sandbox)" != "$name"
'

test_expect_success 'exec reaches the adopted sandbox (X-Sandbox-ID is the Sandbox name)' '
	name=$(cat name) &&
	gosbx exec --claim="$name" -- "echo adopted >f; cat f" >out &&
	echo adopted >expect && test_cmp expect out &&
	kube_curl /fake/state >state.json &&
	kube_py state.json "[r[\"workdir\"] for r in v[\"runtimes\"] if r[\"name\"] == \"$(cat sandbox)\"][0]" >workdir &&
	test_cmp expect "$(cat workdir)/f"
'

test_expect_success 'close deletes the claim' '
	gosbx close "$(cat name)" &&
	rt_poll 10 no_claims
'

test_expect_success 'exec on a throwaway v1beta1 claim' '
	gosbx exec -- "echo beta" >out &&
	echo beta >expect && test_cmp expect out &&
	rt_poll 10 no_claims
'

test_expect_success '--warm-pool names the pool; a missing one fails fast' '
	fails_err gosbx --warm-pool=no-such-pool exec -- true &&
	test_grep "WarmPoolNotFound" err &&
	no_claims
'

test_expect_success '--api-version=v1alpha1 on v0.5: the shadow pool must exist' '
	fails_err gosbx --api-version=v1alpha1 --template=other-template \
		exec -- true &&
	test_grep "WarmPoolNotFound: SandboxWarmPool .shadow-pool-other-template. not found" err &&
	test_grep "(manifests/warmpool, or manifests/cold-start for a pool of 0 replicas)" err &&
	rt_poll 10 no_claims
'

test_expect_success '--api-version=v1alpha1: a claim naming the template' '
	kube_apply "$BETA/sandboxwarmpools" "{\"apiVersion\":\"extensions.agents.x-k8s.io/v1beta1\",\"kind\":\"SandboxWarmPool\",\"metadata\":{\"name\":\"shadow-pool-other-template\"},\"spec\":{\"replicas\":1,\"sandboxTemplateRef\":{\"name\":\"other-template\"}}}" &&
	test "$(cat status)" = 201 &&
	gosbx --api-version=v1alpha1 --template=other-template open -q >name 2>err &&
	name=$(cat name) &&
	# the API server'"'"'s Warning header, once however many answers had it
	grep "^warning: kubernetes: " err >warnings &&
	test_line_count = 1 warnings &&
	test_grep "extensions.agents.x-k8s.io/v1alpha1 SandboxClaim is deprecated" warnings &&
	kube_curl "$ALPHA/sandboxclaims/$name" >claim.json &&
	test "$(kube_py claim.json "v[\"spec\"][\"sandboxTemplateRef\"][\"name\"]")" = other-template &&
	kube_curl "$BETA/sandboxclaims/$name" >claim.json &&
	test "$(kube_py claim.json "v[\"spec\"][\"warmPoolRef\"][\"name\"]")" = shadow-pool-other-template &&
	gosbx --api-version=v1alpha1 exec --claim="$name" -- echo alpha >out &&
	echo alpha >expect && test_cmp expect out &&
	gosbx close "$name" &&
	rt_poll 10 no_claims
'

test_done
