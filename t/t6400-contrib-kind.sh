#!/bin/sh
test_description='contrib/kind/run-test-kind.sh: parses, uses the repository
manifests and image, runs the gosbx commands, checks its prerequisites first'
. "$(dirname "$0")"/test-lib.sh

S=$GOSBX_SOURCE_DIR/contrib/kind/run-test-kind.sh
BASH_BIN=$(command -v bash) && test_set_prereq BASH

test_expect_success BASH 'bash -n parses the script' '
	test -x "$S" &&
	"$BASH_BIN" -n "$S"
'

# shellcheck comes with contrib/install-deps.sh: without it this fails
test_expect_success 'shellcheck finds nothing' '
	shellcheck "$S"
'

test_expect_success 'uses strict mode and the repository manifests and image' '
	test_grep "^set -euo pipefail" "$S" &&
	test_grep "manifests/base" "$S" &&
	test_grep "POOL_DIR=manifests/warmpool$" "$S" &&
	test_grep "TEMPLATE_DIR=manifests/v1alpha1$" "$S" &&
	test_grep "POOL_DIR=manifests/v1alpha1/warmpool$" "$S" &&
	test_grep "sandbox-with-extensions.yaml" "$S" &&
	test_grep "sandbox-router-go:" "$S" &&
	test_grep "docker build -f runtime-image/Dockerfile" "$S" &&
	test_grep "kind load docker-image" "$S" &&
	test_grep "sandbox_router.yaml" "$S" &&
	test_grep "AS_VERSION:-v1.0.3" "$S"
'

test_expect_success 'runs gosbx doctor, demo --flow=all and smoke on kube' '
	test_grep -e "--backend=kube" "$S" &&
	test_grep "g doctor" "$S" &&
	test_grep "g demo --flow=all" "$S" &&
	test_grep "g smoke" "$S" &&
	test_grep "trap cleanup EXIT" "$S"
'

test_expect_success BASH 'missing tools are named before anything runs' '
	mkdir bin &&
	ln -s "$(command -v dirname)" bin/dirname &&
	{ PATH=$PWD/bin "$BASH_BIN" "$S" >out 2>err; echo $? >rc; } &&
	echo 1 >expect &&
	test_cmp expect rc &&
	test_grep "docker not found" err &&
	test_grep "kind not found" err &&
	test_grep "kubectl not found" err &&
	test_grep ! "==>" out
'

test_done
