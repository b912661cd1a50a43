#!/bin/sh
test_description='the kube backend behaves like a real client (client-go)

fake-kube injects the faults of a busy or restarting control plane: 429
with Retry-After and 5xx answers are tried again (a POST only when the
server says it did nothing), a watch answered 504 "Too large resource
version" is listed and watched again, and so is one that gets ERROR
events of 5xx inside the stream, after the same back-off; an API server unreachable for
10 s is ridden out within --open-timeout (and a failed open still
deletes its claim), a router that answers 502 just after Ready is
tried again; an older controller'"'"'s status.sandbox.Name is read, and
shutdownTime follows the API server'"'"'s clock.'
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

test_must_be_empty_() {
	test ! -s "$1" || {
		echo >&4 "'$1' is not empty:" && cat "$1" >&4
		return 1
	}
}

# fault <query>: POST /fake/fail?<query>
fault() {
	kube_expect 200 POST "/fake/$1"
}

# faults_used: every injected fault was hit (none pending)
faults_used() {
	kube_curl /fake/state >state.json &&
	test "$(kube_py state.json "v[\"faults\"][\"pending\"]")" = 0 &&
	test "$(kube_py state.json "v[\"faults\"][\"outage\"]")" = false &&
	test "$(kube_py state.json "v[\"faults\"][\"routerFailures\"]")" = 0
}

test_atexit "kube_stop kube"
test_expect_success 'setup: fake-kube v0.4.6 with a template' '
	kube_start -- --template=go-runtime-template
'
KUBECONFIG=$TRASH_DIRECTORY/kube.kubeconfig
GOSBX_BACKEND=kube
export KUBECONFIG GOSBX_BACKEND

test_expect_success '429 with Retry-After on the claim create: waited out' '
	fault "fail?status=429&count=2&verb=create&resource=sandboxclaims&retry-after=1" &&
	gosbx exec -- echo through >out 2>err &&
	echo through >expect && test_cmp expect out &&
	test_must_be_empty_ err &&
	faults_used &&
	rt_poll 10 no_claims
'

test_expect_success '503 and 500 on reads, without Retry-After: backed off' '
	gosbx open -q >name &&
	fault "fail?status=503&count=2&verb=get&resource=sandboxclaims" &&
	fault "fail?status=500&count=1&verb=list&resource=endpointslices" &&
	gosbx exec --claim="$(cat name)" -- echo again >out &&
	echo again >expect && test_cmp expect out &&
	faults_used
'

test_expect_success 'a 500 on the create, no Retry-After: not repeated, no claim made' '
	gosbx close "$(cat name)" &&
	rt_poll 10 no_claims &&
	fault "fail?status=500&count=1&verb=create&resource=sandboxclaims&message=etcd%20is%20slow" &&
	fails_err gosbx exec -- true &&
	test_grep "etcd is slow" err &&
	faults_used &&
	no_claims
'

test_expect_success 'watch 504 "Too large resource version": list and watch again' '
	fault "fail?status=504&count=1&verb=watch&resource=sandboxclaims&retry-after=1&message=Too%20large%20resource%20version" &&
	gosbx exec -- echo relisted >out &&
	echo relisted >expect && test_cmp expect out &&
	faults_used &&
	rt_poll 10 no_claims
'

test_expect_success '429 on the watch: backed off and watched again' '
	fault "fail?status=429&count=1&verb=watch&resource=sandboxclaims" &&
	gosbx exec -- echo watched >out &&
	echo watched >expect && test_cmp expect out &&
	faults_used &&
	rt_poll 10 no_claims
'

test_expect_success 'ERROR events of 503 inside the watch: backed off, not a tight loop' '
	# Ready after 5 s: the errors come while the claim is not Ready
	kube_expect 200 POST "/fake/ready-delay?ms=5000" &&
	fault "fail?status=503&count=2&verb=watch&resource=sandboxclaims&as=event" &&
	{ gosbx -v exec -- echo backed-off 2>&1 >out; echo "exit $?"; } |
		while IFS= read -r l; do
			echo "$(date +%s%N) $l"
		done >err.ts &&
	kube_expect 200 POST "/fake/ready-delay?ms=100" &&
	test_grep " exit 0\$" err.ts &&
	echo backed-off >expect && test_cmp expect out &&
	faults_used &&
	grep " kube: GET .*/sandboxclaims?watch=1" err.ts >watches &&
	test_line_count = 3 watches &&
	# between the first error and the next watch: a pause of 1 s
	# (then 2 s); before, they came back to back, a list between
	awk "NR <= 3 { t[NR] = \$1 }
		END { exit !(t[2] - t[1] >= 9e8 && t[3] - t[2] >= 1.9e9) }" watches &&
	rt_poll 10 no_claims
'

test_expect_success 'the API server unreachable for 10 s after the create: ridden out' '
	fault "outage?ms=10000&on=create:sandboxclaims" &&
	gosbx --open-timeout=60s exec -- echo survived >out 2>err &&
	echo survived >expect && test_cmp expect out &&
	test_must_be_empty_ err &&
	faults_used &&
	rt_poll 10 no_claims
'

test_expect_success 'an outage longer than --open-timeout: fails, and the claim is deleted' '
	fault "outage?ms=6000&on=create:sandboxclaims" &&
	fails_err gosbx --open-timeout=3s exec -- true &&
	test_grep "timed out\|cannot reach\|Empty reply" err &&
	faults_used &&
	no_claims
'

test_expect_success 'a router that answers 502 just after Ready: tried again' '
	fault "router-fail?status=502&count=3" &&
	gosbx exec -- echo routed >out &&
	echo routed >expect && test_cmp expect out &&
	faults_used &&
	rt_poll 10 no_claims
'

test_expect_success 'a router that never reaches the sandbox: the error says so' '
	fault "router-fail?status=502&count=1000" &&
	fails_err gosbx --open-timeout=3s exec -- true &&
	test_grep "the router cannot reach sandbox .* 502.*Could not connect to the backend sandbox" err &&
	fault "router-fail?status=502&count=0" &&
	rt_poll 10 no_claims
'

test_expect_success 'setup: an older controller (status.sandbox.Name), a clock 2 h ahead' '
	kube_start --name=old -- --template=go-runtime-template \
		--legacy-sandbox-status --clock-skew=7200
'

test_expect_success 'the sandbox name is read from status.sandbox.Name' '
	KUBECONFIG=$TRASH_DIRECTORY/old.kubeconfig gosbx open -q >name &&
	KUBE=old kube_curl "$CLAIMS/$(cat name)" >claim.json &&
	kube_py claim.json "v[\"status\"][\"sandbox\"][\"Name\"]" >sandbox &&
	test -s sandbox &&
	KUBECONFIG=$TRASH_DIRECTORY/old.kubeconfig \
		gosbx exec --claim="$(cat name)" -- echo old >out &&
	echo old >expect && test_cmp expect out
'

# On the client's clock, now + 1 h is an hour in the past for this
# server: its controller would expire the claim at once.
test_expect_success 'shutdownTime is set on the API server'"'"'s clock (Date)' '
	python3 - <<-\EOF
	import calendar, json, time
	v = json.load(open("claim.json"))
	t = calendar.timegm(time.strptime(v["spec"]["lifecycle"]["shutdownTime"],
	                                  "%Y-%m-%dT%H:%M:%SZ"))
	ahead = t - time.time()
	assert 7200 + 3000 < ahead <= 7200 + 3601, ahead
	EOF
	KUBECONFIG=$TRASH_DIRECTORY/old.kubeconfig gosbx close "$(cat name)"
'

test_done
