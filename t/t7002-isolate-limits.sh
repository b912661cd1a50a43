#!/bin/sh
test_description='local isolation: cgroup limits, rlimits and cleanup'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq BWRAP || test_skip_all 'bwrap is not installed'
bwrap --unshare-user --ro-bind / / true 2>/dev/null ||
	test_skip_all 'unprivileged user namespaces do not work here'

# Which limits this host lets us apply (gosbx doctor explains the rest).
isolate-run --memory=64m -- true 2>/dev/null && test_set_prereq MEMCG
isolate-run --pids=64 -- true 2>/dev/null && test_set_prereq PIDSCG
isolate-run --cpus=1 -- true 2>/dev/null && test_set_prereq CPUCG

# cg_file <show-cgroup output> <controller> <v1 file> <v2 file>
cg_file() {
	dir=$(sed -n "s/^$2 //p" "$1")
	if test -n "$dir"; then
		echo "$dir/$3"
		return
	fi
	dir=$(sed -n "s/^v2 //p" "$1")
	echo "$dir/$4"
}

# all group directories listed in a --show-cgroup output are gone
groups_gone() {
	for d in $(sed -n "s/^[a-z0-9]* \(\/.*\)/\1/p" "$1"); do
		test -d "$d" && return 1
	done
	return 0
}

# run a command with its stderr in the file "err"

# the process is gone (or a zombie nobody reaped: it runs nothing)
gone() {
	! test -e /proc/$1/stat ||
	sed "s/.*) //" /proc/$1/stat | grep -q "^[ZX]"
}

no_sleep_7004() {
	! pgrep -x -f "sleep 7004" >/dev/null
}

wait_file() {
	test_retry 600 0.1 test -e "$1"
}

test_expect_success MEMCG,PIDSCG,CPUCG 'limits are written to the cgroups' '
	rm -f stop st st.done &&
	{
		isolate-run --memory=100m --pids=77 --cpus=0.5 --show-cgroup \
			--state=st -- \
			sh -c "while ! test -e /app/stop; do sleep 0.1; done" \
			2>cg &
	} &&
	pid=$! &&
	wait_file st.done &&
	mem=$(cat "$(cg_file cg memory memory.limit_in_bytes memory.max)") &&
	test "$mem" = 104857600 &&
	pids=$(cat "$(cg_file cg pids pids.max pids.max)") &&
	test "$pids" = 77 &&
	if grep -q "^cpu " cg
	then
		quota=$(cat "$(cg_file cg cpu cpu.cfs_quota_us x)") &&
		period=$(cat "$(cg_file cg cpu cpu.cfs_period_us x)") &&
		test "$quota $period" = "50000 100000"
	else
		cpumax=$(cat "$(cg_file cg cpu x cpu.max)") &&
		test "$cpumax" = "50000 100000"
	fi &&
	touch stop &&
	wait $pid &&
	groups_gone cg
'

test_expect_success PIDSCG 'a fork bomb is contained by --pids' '
	test_must_fail with_err isolate-run --pids=40 --show-cgroup -- \
		sh -c "b() { b | b & }; b; i=0
		while test \$i -lt 200; do sleep 7002 & i=\$((i+1)); done
		wait" &&
	grep -i "fork" err &&
	groups_gone err &&
	! pgrep -x -f "sleep 7002" &&
	# the host is fine
	sh -c "echo still forking" >out &&
	echo "still forking" >expect &&
	test_cmp expect out
'

test_expect_success PIDSCG 'a counted fork loop stops at the limit' '
	test_must_fail with_err isolate-run --pids=30 -- sh -c "
		i=0
		while test \$i -lt 100; do sleep 7003 & i=\$((i+1)); done
		wait" &&
	grep "Cannot fork" err &&
	! pgrep -x -f "sleep 7003"
'

test_expect_success MEMCG 'allocating past --memory is OOM-killed and reported' '
	test_expect_code 137 with_err isolate-run --memory=64m --show-cgroup -- \
		python3 -c "x = b\"x\" * (512 << 20); print(len(x))" &&
	grep -x "isolate-run: oom" err &&
	groups_gone err
'

test_expect_success MEMCG 'staying below --memory is not reported' '
	with_err isolate-run --memory=256m -- \
		python3 -c "x = b\"x\" * (16 << 20); print(len(x))" >out &&
	echo 16777216 >expect &&
	test_cmp expect out &&
	! grep oom err
'

test_expect_success 'rlimits: core 0, open files, file size' '
	isolate-run -- sh -c "ulimit -c; ulimit -n" >out &&
	printf "0\n8192\n" >expect &&
	test_cmp expect out &&
	# SIGXFSZ: 128 + 25
	test_expect_code 153 isolate-run --fsize=1m -- \
		sh -c "head -c 4194304 /dev/zero >/app/big" &&
	size=$(wc -c <big) &&
	test "$size" -le 1048576
'

test_expect_success 'an explicit limit the host lacks fails closed' '
	mkdir -p emptycg &&
	for opt in --memory=64m --pids=10 --cpus=1
	do
		rm -f ran &&
		test_must_fail env GOSBX_CGROUP_ROOT="$PWD/emptycg" \
			isolate-run $opt -- touch /app/ran 2>err &&
		test ! -e ran || return 1
	done
'

test_expect_success 'the fail-closed error names the layer and the way out' '
	test_must_fail with_err env GOSBX_CGROUP_ROOT="$PWD/emptycg" \
		isolate-run --memory=64m -- true &&
	grep "^error: cannot create sandbox: cgroup memory controller not available (no v2 hierarchy, v1 not mounted); use --memory=0 to run without a memory limit" err &&
	test_must_fail with_err env GOSBX_CGROUP_ROOT="$PWD/emptycg" \
		isolate-run --memory=0 --pids=10 -- true &&
	grep "cgroup pids controller not available.*--pids=0" err &&
	mkdir -p v2nomem &&
	echo "cpuset io" >v2nomem/cgroup.controllers &&
	test_must_fail with_err env GOSBX_CGROUP_ROOT="$PWD/v2nomem" \
		isolate-run --memory=64m -- true &&
	grep "cgroup memory controller not available (v2 at .* has none, v1 not mounted)" err
'

test_expect_success 'default limits the host lacks are skipped with one warning' '
	with_err env GOSBX_CGROUP_ROOT="$PWD/emptycg" \
		isolate-run -- sh -c "echo ran" >out &&
	echo ran >expect &&
	test_cmp expect out &&
	grep -c "^warning:" err >count &&
	echo 1 >expect &&
	test_cmp expect count &&
	grep "default limits.*memory.*pids" err &&
	with_err env GOSBX_CGROUP_ROOT="$PWD/emptycg" \
		isolate-run --memory=0 --pids=0 -- true &&
	! grep warning err
'

test_expect_success 'a default limit whose group cannot be set up is skipped' '
	mkdir -p v2busy/cgroup.subtree_control &&
	echo "cpu memory pids" >v2busy/cgroup.controllers &&
	with_err env GOSBX_CGROUP_ROOT="$PWD/v2busy" \
		isolate-run -- sh -c "echo ran" >out &&
	echo ran >expect &&
	test_cmp expect out &&
	grep -c "^warning:" err >count &&
	echo 1 >expect &&
	test_cmp expect count &&
	grep "default limits: cgroup memory controller: cannot enable it" err &&
	! grep "^error:" err &&
	test_must_fail with_err env GOSBX_CGROUP_ROOT="$PWD/v2busy" \
		isolate-run --memory=64m -- touch /app/ran &&
	test ! -e ran &&
	grep "^error: cannot create sandbox: cgroup memory controller: cannot enable it" err
'

test_expect_success 'another process can kill and clean a sandbox' '
	rm -f st st.done &&
	{ isolate-run --show-cgroup --state=st -- sleep 7004 2>cg & } &&
	pid=$! &&
	wait_file st.done &&
	child=$(sed -n "s/^child-pid //p" st) &&
	kill -0 $child &&
	isolate-run --kill=st &&
	test_expect_code 137 wait $pid &&
	# the kernel ends the rest of a pid namespace after its pid 1,
	# not before wait returns: wait for that, and say what is left
	{ test_retry 100 0.1 gone $child ||
		{ echo >&4 "pid 1 $child still there:" &&
			cat /proc/$child/stat >&4; false; }; } &&
	groups_gone st &&
	{ test_retry 100 0.1 no_sleep_7004 ||
		{ pgrep -a -f "sleep 7004" >&4; false; }; }
'

test_expect_success 'the sandbox dies with its parent (--die-with-parent)' '
	rm -f st st.done &&
	{ isolate-run --state=st -- sleep 7005 & } &&
	pid=$! &&
	wait_file st.done &&
	child=$(sed -n "s/^child-pid //p" st) &&
	kill -9 $pid &&
	test_retry 300 0.1 gone $child &&
	test_retry 300 0.1 sh -c "! pgrep -x -f \"sleep 7005\"" &&
	isolate-run --kill=st &&
	groups_gone st
'

test_expect_success 'a detached sandbox outlives its spawner until killed' '
	rm -f st st.done &&
	isolate-run --detach --state=st -- sleep 7006 &&
	child=$(sed -n "s/^child-pid //p" st) &&
	! gone $child &&
	# bwrap may still be setting up when --detach returns
	test_retry 300 0.1 pgrep -x -f "sleep 7006" &&
	isolate-run --kill=st &&
	test_retry 300 0.1 gone $child &&
	! pgrep -x -f "sleep 7006" &&
	groups_gone st
'

test_done
