#!/bin/sh
test_description='local isolation: the doctor checks'
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'every check is reported with a status' '
	isolate-run --doctor >out || true &&
	for name in bwrap "user namespaces" "sandbox user" seccomp cgroups \
		"memory limit" "pids limit" "cpu limit" go python3 node
	do
		grep -E "^(ok|warn|fail) $name: " out || return 1
	done
'

test_expect_success BWRAP 'bwrap, user namespaces and seccomp are ok here' '
	isolate-run --doctor >out || true &&
	grep "^ok bwrap: bubblewrap [0-9]" out &&
	grep "^ok seccomp: " out &&
	if bwrap --unshare-user --ro-bind / / true 2>/dev/null
	then
		grep "^ok user namespaces: " out
	else
		grep "^fail user namespaces: " out &&
		grep "fix: allow unprivileged user namespaces" out
	fi
'

test_expect_success GO 'the go toolchain is found with its version' '
	isolate-run --doctor >out || true &&
	grep "^ok go: go version go" out
'

test_expect_success 'a missing bwrap fails with the fix' '
	test_must_fail env GOSBX_BWRAP=/nonexistent/bwrap \
		isolate-run --doctor >out &&
	grep "^fail bwrap: bwrap not found" out &&
	grep "fix: install bubblewrap" out
'

test_expect_success 'a host without cgroups warns for each limit' '
	mkdir -p emptycg &&
	GOSBX_CGROUP_ROOT="$PWD/emptycg" isolate-run --doctor >out || true &&
	grep "^warn cgroups: none" out &&
	grep "^warn memory limit: cannot be applied: cgroup memory controller not available" out &&
	grep "^warn pids limit: " out &&
	grep "^warn cpu limit: " out
'

test_expect_success 'cgroup v2 without controllers says how to enable them' '
	mkdir -p v2 &&
	echo "cpuset io" >v2/cgroup.controllers &&
	GOSBX_CGROUP_ROOT="$PWD/v2" isolate-run --doctor >out || true &&
	grep "^ok cgroups: v2; v2 at .* with controllers: (none)" out &&
	grep "^warn memory limit: " out &&
	grep "fix: enable the controller for sub-groups: echo +memory > " out
'

test_expect_success ROOT 'a cgroup v2 tree with controllers can apply limits' '
	mkdir -p v2full &&
	echo "cpu io memory pids" >v2full/cgroup.controllers &&
	GOSBX_CGROUP_ROOT="$PWD/v2full" isolate-run --doctor >out || true &&
	grep "^ok memory limit: applied through cgroup v2 groups" out &&
	grep "^ok pids limit: applied through cgroup v2 groups" out &&
	grep "^ok cpu limit: applied through cgroup v2 groups" out
'

test_done
