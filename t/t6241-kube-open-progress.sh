#!/bin/sh
test_description='the kube backend says what it waits for

While a new claim gets Ready, a progress line on a terminal (stderr a
tty, under script(1)) and nothing otherwise; -v shows each API call.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-kube.sh

test_atexit "kube_stop kube"
test_expect_success 'setup: fake-kube whose controller takes 3 s for a claim' '
	kube_start -- --template=go-runtime-template --ready-delay=3000
'
KUBECONFIG=$TRASH_DIRECTORY/kube.kubeconfig
GOSBX_BACKEND=kube
export KUBECONFIG GOSBX_BACKEND

command -v script >/dev/null && test_set_prereq SCRIPT

test_expect_success SCRIPT 'on a terminal: a progress line, erased at the end' '
	gosbx_bin=$(command -v gosbx) &&
	script -qec "$gosbx_bin exec -- echo done-here" /dev/null >typescript &&
	test_grep "done-here" typescript &&
	test_grep "claim sandbox-claim-[a-z0-9]*: waiting for Ready, [0-9]* s" typescript &&
	test_grep "claim sandbox-claim-[a-z0-9]*: waiting for Ready, [0-9]* s; Ready=False [A-Za-z]" typescript &&
	printf "\\r\\033[K" >erase &&
	grep -F "$(cat erase)" typescript
'

test_expect_success 'not on a terminal: no progress line' '
	gosbx exec -- echo done-here >out 2>err &&
	test_grep "done-here" out &&
	test_grep ! "waiting for Ready" err &&
	test_line_count = 0 err
'

test_expect_success '-v: each API call with its status and time' '
	gosbx -v exec -- true 2>err &&
	test_grep "^kube: GET /version: 200 ([0-9]* ms)\$" err &&
	test_grep "^kube: POST /apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/default/sandboxclaims?fieldValidation=Strict: 201 ([0-9]* ms)\$" err &&
	test_grep "^kube: DELETE /apis/extensions.agents.x-k8s.io/.*/sandboxclaims/sandbox-claim-[a-z0-9]*: 200 ([0-9]* ms)\$" err &&
	# the claim watch that gosbx ends once the claim is Ready is no failure
	test_grep ! "no answer" err &&
	test_grep "^kube: GET /apis/.*/sandboxclaims?.*watch=.*: ended by gosbx ([0-9]* ms)\$" err
'

test_done
