#!/bin/sh
test_description='the kube backend: claims expire by their shutdownTime

A claim opened with a short --ttl is renewed while a client holds it
(even during a long command) and deleted by the controller once the
client is killed with SIGKILL, or when nobody touches it.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-kube.sh

CLAIMS=/apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/default/sandboxclaims

claim_gone() {
	kube_req GET "$CLAIMS/$1" &&
	test "$(cat status)" = 404
}

# shutdown_epoch NAME: the claim's shutdownTime in seconds since the epoch
shutdown_epoch() {
	kube_curl "$CLAIMS/$1" >c.json &&
	python3 -c "
import calendar, json, time
v = json.load(open(\"c.json\"))
t = v[\"spec\"][\"lifecycle\"][\"shutdownTime\"]
print(calendar.timegm(time.strptime(t, \"%Y-%m-%dT%H:%M:%SZ\")))
"
}

renewed_past() {
	test "$(shutdown_epoch "$1")" -gt "$2"
}

time_past() {
	test "$(date +%s)" -gt "$1"
}

test_atexit "kube_stop kube"
test_atexit 'test -f exec.pid && kill -9 $(cat exec.pid)'
test_expect_success 'setup: fake-kube' '
	kube_start -- --template=go-runtime-template
'
KUBECONFIG=$TRASH_DIRECTORY/kube.kubeconfig
GOSBX_BACKEND=kube
export KUBECONFIG GOSBX_BACKEND

# 10 s: the claim must live until the next test's client has started and
# renewed it (a sanitized gosbx on a loaded machine takes seconds)
test_expect_success 'open --ttl=10s: shutdownTime is 10 s ahead, the TTL is noted' '
	gosbx open --ttl=10s -q >name &&
	name=$(cat name) &&
	kube_curl "$CLAIMS/$name" >claim.json &&
	test "$(kube_py claim.json "v[\"metadata\"][\"annotations\"][\"gosbx/ttl-seconds\"]")" = 10 &&
	shutdown_epoch "$name" >first &&
	test "$(cat first)" -le "$(($(date +%s) + 10))"
'

test_expect_success 'a client running a long command keeps renewing the claim' '
	name=$(cat name) &&
	{ gosbx exec --claim="$name" -- "echo started; sleep 60" >exec.out 2>exec.err &
	  echo $! >exec.pid; } &&
	rt_poll 30 grep started exec.out &&
	first=$(cat first) &&
	rt_poll 30 time_past $((first + 2)) &&
	rt_poll 10 renewed_past "$name" $((first + 2)) &&
	kube_expect 200 GET "$CLAIMS/$name"
'

test_expect_success 'after SIGKILL of the client the claim expires and is deleted' '
	name=$(cat name) &&
	kill -9 $(cat exec.pid) &&
	rm -f exec.pid &&
	rt_poll 60 claim_gone "$name"
'

test_expect_success 'a kept claim nobody touches expires by itself' '
	gosbx open --ttl=2s -q >name2 &&
	rt_poll 60 claim_gone "$(cat name2)"
'

test_done
