#!/bin/sh
test_description='the kube backend against fake-kube v0.4.6 (v1alpha1)

open, exec, push, reattach and close with --backend=kube through the
native port-forward to the router pod; the claim body the API server
receives (labels, annotations, lifecycle).'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-kube.sh

CLAIMS=/apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/default/sandboxclaims

# claim_names: the names of the claims in namespace default, one a line
claim_names() {
	kube_curl "$CLAIMS" >claims.json &&
	kube_py claims.json '"".join(i["metadata"]["name"] + "\n" for i in v["items"])'
}

no_claims() {
	claim_names >names &&
	test_must_be_empty_ names
}

test_must_be_empty_() {
	test ! -s "$1" || {
		echo >&4 "'$1' is not empty:" && cat "$1" >&4
		return 1
	}
}

test_atexit "kube_stop kube"
test_expect_success 'setup: fake-kube v0.4.6 with a template' '
	kube_start -- --template=go-runtime-template
'
KUBECONFIG=$TRASH_DIRECTORY/kube.kubeconfig
GOSBX_BACKEND=kube
export KUBECONFIG GOSBX_BACKEND

test_expect_success 'exec on a throwaway claim: output and exit status' '
	test_expect_code_err 3 gosbx exec -- \
		"echo hello; echo err >&2; exit 3" >out &&
	echo hello >expect && test_cmp expect out &&
	echo err >expect && test_cmp expect err
'

test_expect_success 'the throwaway claim is deleted after the command' '
	rt_poll 10 no_claims
'

test_expect_success 'open prints the claim name and keeps it' '
	gosbx open -q >name &&
	name=$(cat name) &&
	claim_names >names &&
	echo "$name" >expect &&
	test_cmp expect names
'

test_expect_success 'the claim body: template, labels, annotations, lifecycle' '
	kube_curl "$CLAIMS/$(cat name)" >claim.json &&
	python3 - <<-\EOF
	import calendar, json, re, time
	v = json.load(open("claim.json"))
	md, spec = v["metadata"], v["spec"]
	assert spec["sandboxTemplateRef"]["name"] == "go-runtime-template", v
	labels, ann = md["labels"], md["annotations"]
	assert labels["agents.x-k8s.io/created-by"] == "gosbx", labels
	assert labels["gosbx/persistent"] == "true", labels
	assert re.match("^[a-z]+-[0-9]+$", labels["gosbx/session"]), labels
	first = ann["agents.x-k8s.io/client-first-requested-at"]
	assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$", first), ann
	assert ann["gosbx/ttl-seconds"] == "3600", ann
	life = spec["lifecycle"]
	assert life["shutdownPolicy"] == "Delete", life
	t = calendar.timegm(time.strptime(life["shutdownTime"],
	                                  "%Y-%m-%dT%H:%M:%SZ"))
	assert 3000 < t - time.time() <= 3601, life
	EOF
'

test_expect_success 'exec --claim reuses the claim; files persist' '
	name=$(cat name) &&
	gosbx exec --claim="$name" -- "echo kept >state" &&
	gosbx exec --claim="$name" -- cat state >out &&
	echo kept >expect && test_cmp expect out
'

# set_shutdown NAME SECONDS: move the claim's shutdownTime to now + SECONDS
set_shutdown() {
	_t=$(python3 -c "import time, sys; print(time.strftime(\"%Y-%m-%dT%H:%M:%SZ\", time.gmtime(time.time() + int(sys.argv[1]))))" "$2") &&
	kube_req PATCH "$CLAIMS/$1" -H "Content-Type: application/merge-patch+json" \
		--data-binary "{\"spec\":{\"lifecycle\":{\"shutdownTime\":\"$_t\"}}}" &&
	test "$(cat status)" = 200 &&
	echo "$_t" >set-time
}

shutdown_left() {
	kube_curl "$CLAIMS/$1" >c.json &&
	python3 -c "
import calendar, json, time
t = json.load(open(\"c.json\"))[\"spec\"][\"lifecycle\"][\"shutdownTime\"]
print(calendar.timegm(time.strptime(t, \"%Y-%m-%dT%H:%M:%SZ\")) - int(time.time()))
"
}

test_expect_success 'a command renews shutdownTime only when a quarter of the TTL is gone' '
	name=$(cat name) &&
	set_shutdown "$name" 3000 &&
	gosbx exec --claim="$name" -- true &&
	kube_curl "$CLAIMS/$name" >c.json &&
	{ kube_py c.json "v[\"spec\"][\"lifecycle\"][\"shutdownTime\"]" && echo; } >now-time &&
	test_cmp set-time now-time &&
	set_shutdown "$name" 1000 &&
	gosbx exec --claim="$name" -- true &&
	left=$(shutdown_left "$name") &&
	test "$left" -gt 3000
'

test_expect_success GO 'exec -f main.go -- go run main.go through the port-forward' '
	name=$(cat name) &&
	cat >main.go <<-\EOF &&
	package main

	import "fmt"

	func main() { fmt.Println("hello from the kube sandbox") }
	EOF
	gosbx exec --claim="$name" -f main.go -- go run main.go >out &&
	echo "hello from the kube sandbox" >expect &&
	test_cmp expect out
'

test_expect_success 'push copies a tree into the claim' '
	name=$(cat name) &&
	mkdir -p tree/sub &&
	echo one >tree/sub/one &&
	printf "\000\001binary" >tree/bin &&
	gosbx push --claim="$name" --to=p tree &&
	gosbx exec --claim="$name" -- "cat p/tree/sub/one; od -c p/tree/bin" >out &&
	echo one >expect &&
	od -c tree/bin >>expect &&
	test_cmp expect out
'

test_expect_success 'reattach to a claim that does not exist fails clearly' '
	fails_err gosbx exec --claim=sandbox-claim-nope -- true &&
	test_grep "no claim .sandbox-claim-nope. in namespace .default." err
'

test_expect_success 'close --disconnect keeps the claim; close deletes it' '
	name=$(cat name) &&
	gosbx close --disconnect "$name" &&
	claim_names >names && grep "^$name$" names &&
	gosbx close "$name" 2>err &&
	test_grep "closed claim .$name." err &&
	rt_poll 10 no_claims
'

test_expect_success 'open --name gives the claim that name' '
	gosbx open --name=my-claim -q >out &&
	echo my-claim >expect && test_cmp expect out &&
	kube_expect 200 GET "$CLAIMS/my-claim" &&
	gosbx exec --claim=my-claim -- echo named >out &&
	echo named >expect && test_cmp expect out &&
	fails_err gosbx open --name=my-claim &&
	test_grep "cannot create claim" err &&
	gosbx close my-claim &&
	rt_poll 10 no_claims
'

test_expect_success 'close --all deletes the claims gosbx made, not the others' '
	gosbx open -q >a &&
	gosbx open -q --name=second >b &&
	kube_apply "$CLAIMS" "{\"apiVersion\":\"extensions.agents.x-k8s.io/v1alpha1\",\"kind\":\"SandboxClaim\",\"metadata\":{\"name\":\"not-ours\"},\"spec\":{\"sandboxTemplateRef\":{\"name\":\"go-runtime-template\"}}}" &&
	test "$(cat status)" = 201 &&
	gosbx close --all 2>err &&
	test_grep "closed claim .$(cat a)." err &&
	test_grep "closed claim .second." err &&
	test $(grep -c "^closed claim" err) = 2 &&
	claim_names >names &&
	echo not-ours >expect &&
	test_cmp expect names &&
	kube_expect 200 DELETE "$CLAIMS/not-ours" &&
	test_expect_code_err 129 gosbx close --all second &&
	test_grep "takes no claim names" err
'

test_expect_success 'the namespace comes from --namespace or GOSBX_NAMESPACE' '
	fails_err gosbx --namespace=elsewhere exec --claim=x -- true &&
	test_grep "in namespace .elsewhere." err &&
	fails_err env GOSBX_NAMESPACE=other gosbx exec --claim=x -- true &&
	test_grep "in namespace .other." err
'

test_expect_success 'a forced --api-version the cluster does not serve is refused' '
	fails_err gosbx --api-version=v1beta1 exec -- true &&
	test_grep v1beta1 err &&
	no_claims
'

test_expect_success 'bad --api-version is a usage error' '
	test_expect_code_err 129 gosbx --api-version=v2 exec -- true &&
	test_grep "expects v1alpha1 or v1beta1" err
'

test_done
