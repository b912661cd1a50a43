#!/bin/sh
test_description=${test_description:-'shutdownTime and a replaced router on a real control plane'}
# The real controller deletes a claim whose spec.lifecycle.shutdownTime
# (gosbx open --ttl, policy Delete) has passed; the router's pod deleted
# in mid-call ends that call with a clear error (kwok's node does not
# close the port-forward's stream when the router dies: gosbx's limit of
# three runtime heartbeats ends it) and the next call goes through the
# Deployment's new router pod. CLUSTER_RELEASE: default versions.sh's;
# t6683 sources this with v0.4.6.
. "$(dirname "$0")"/test-lib.sh
GOSBX_TEST_BACKEND=cluster
. "$TEST_DIRECTORY"/lib-backend.sh

claim_gone() {
	! kadm get sandboxclaim "$1" >/dev/null 2>&1
}

test_expect_success 'open --ttl: shutdownTime set; the controller deletes the claim after it' '
	gosbx open -q --name=short --ttl=10s >name &&
	kadm get sandboxclaim short \
		-o "jsonpath={.spec.lifecycle.shutdownPolicy} {.spec.lifecycle.shutdownTime}" >lc &&
	cat lc >&3 &&
	test_grep "^Delete 20[0-9-]*T[0-9:]*Z\$" lc &&
	test_retry 600 0.1 claim_gone short &&
	test_expect_code_err 125 gosbx exec --claim=short -- true &&
	test_grep "short" err
'

# router_replaced <old pod>: another router pod, Ready, its process up
router_replaced() {
	kadm get pods -l app=sandbox-router \
		-o "jsonpath={range .items[?(@.status.podIP)]}{.metadata.name} {.metadata.deletionTimestamp}{\"\\n\"}{end}" >routers &&
	grep -v "^$1 " routers | grep -q " \$" &&
	gosbx doctor >doctor.out 2>&1 &&
	grep -q "^ok    router: Service sandbox-router-svc has 1 ready endpoint" doctor.out
}

test_expect_success 'the router pod deleted mid-call: a clear error; the next call uses its successor' '
	gosbx open -q --name=r1 &&
	old=$(kadm get pods -l app=sandbox-router -o "jsonpath={.items[0].metadata.name}") &&
	{ gosbx exec --claim=r1 -- "echo started; sleep 1000.25" >out 2>err & } &&
	pid=$! &&
	test_retry 300 0.1 grep -q started out &&
	kadm delete pod "$old" --wait=false &&
	{ wait $pid; status=$?; } &&
	cat err >&3 &&
	test $status = 125 &&
	test_grep "^error: POST ./v1/exec.: nothing came for [0-9]* s; the connection is taken for lost" err &&
	test_retry 600 0.1 router_replaced "$old" &&
	gosbx exec --claim=r1 -- echo again >out &&
	echo again >expect &&
	test_cmp expect out &&
	gosbx close r1
'

test_done
