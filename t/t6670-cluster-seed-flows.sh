#!/bin/sh
test_description=${test_description:-'doctor --probe and the seed flows on a real control plane'}
# gosbx doctor --probe, gosbx demo (every flow) and gosbx smoke (gosbx
# mcp as the server) against a real API server with agent-sandbox's
# controller and router of CLUSTER_RELEASE (default versions.sh's; t6671
# sources this with v0.4.6), as the user manifests/rbac.yaml binds, with
# real Go builds in the sandboxes.
. "$(dirname "$0")"/test-lib.sh
GOSBX_TEST_BACKEND=cluster
. "$TEST_DIRECTORY"/lib-backend.sh

cat >greetings <<\EOF_
hello, Alice — from the multi-file sandbox sample
hello, Bob — from the multi-file sandbox sample
hello, Carol — from the multi-file sandbox sample
EOF_

test_expect_success 'doctor --probe: every check passes, the probe claim runs' '
	gosbx doctor --probe >out 2>err &&
	cat out >&3 &&
	test_grep ! "^fail\|^warn" out &&
	test_grep "^ok    warm pool: go-runtime-warmpool" out &&
	test_grep "^ok    router" out &&
	test_grep "^ok    probe" out
'

test_expect_success GO 'gosbx demo --flow=all' '
	gosbx demo --flow=all >out 2>err &&
	test_grep "^-- go run main.go \[exit=0\] -- hello from the sandbox! sum(1..100)=5050, go=go1\." out &&
	test_grep "^-- ./app (re-runs the binary built in the previous call) \[exit=0\] -- hello from the sandbox! sum(1..100)=5050" out &&
	sed -n "/^-- .\/app \[exit=0\] -- /,+2p" out |
		sed "s/^-- .\/app \[exit=0\] -- //" >actual &&
	test_cmp greetings actual &&
	test_grep "^-- go test ./... \[exit=0\] -- " out &&
	tail -n 1 out >last &&
	echo "==> PoC complete" >expect &&
	test_cmp expect last &&
	no_claims
'

test_expect_success GO 'gosbx smoke (gosbx mcp on the cluster)' '
	gosbx smoke >out 2>err &&
	test_grep "hello from mcp smoke" out &&
	test_grep "^hi from sub-package$" out &&
	test_grep "undefined: broken" out &&
	tail -n 1 out >last &&
	echo "smoke complete" >expect &&
	test_cmp expect last &&
	no_claims
'

test_expect_success 'the real router carried the calls' '
	cat "$CLUSTER_DIR"/pods/*_sandbox-router-*/*.log >router.log &&
	grep "\"path\":\"/v1/exec\"\|^Proxying request for sandbox .* to URL: .*/v1/exec" \
		router.log >exec-calls &&
	test "$(wc -l <exec-calls)" -ge 3
'

test_done
