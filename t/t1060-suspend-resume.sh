#!/bin/sh
test_description='gosbx suspend and resume on the local backend

suspend stops every process of a kept sandbox and removes its cgroups,
keeping its files; resume starts it again with the limits it had; a
suspended claim is refused by exec (saying how to resume it) and closed
like any other.'
. "$(dirname "$0")/test-lib.sh"

claims_dir="$XDG_STATE_HOME/gosbx/claims"

if command -v bwrap >/dev/null &&
	bwrap --unshare-user --ro-bind / / true 2>/dev/null; then
	test_set_prereq SANDBOX
fi

test_atexit 'gosbx close --all'
test_limits_prereq

# status NAME / mode NAME: the STATUS and MODE columns of gosbx claims
status() {
	gosbx claims | awk -v n="$1" '$1 == n { print $3 }'
}
mode() {
	gosbx claims | awk -v n="$1" '$1 == n { print $NF }'
}

# meta NAME KEY: the value of a line of the claim's meta
meta() {
	sed -n "s/^$2 //p" "$claims_dir/$1/meta"
}

# live PID: the process exists, is not a zombie (nothing runs in one;
# the host's init may be slow to reap it) and still has its memory (a
# killed process mid-exit has released it: /proc/PID/cmdline is empty;
# without cgroups the kernel ends a pid namespace's other processes so,
# as its pid 1 ends)
live() {
	test -r "/proc/$1/status" && ! grep -q "^State:	[ZX]" "/proc/$1/status" &&
		test -s "/proc/$1/cmdline"
}

# the cgroup directories recorded in a claim's meta
claim_cgroups() {
	awk '$1 ~ /^(memory|pids|cpu)$/ { print $2 }' "$claims_dir/$1/meta"
}

# none_live FILE: no pid of FILE runs
none_live() {
	while read -r p; do
		if live "$p"; then
			echo >&4 "still running: $p $(cat /proc/$p/cmdline | tr "\0" " ")"
			return 1
		fi
	done <"$1"
}

# with limits where this user can have them (root; a normal user on
# cgroup v1 cannot: its sandboxes run without, and so do they resumed)
if test_have_prereq LIMITS; then
	limits="--memory=96m --pids=64"
else
	limits=
fi

test_expect_success SANDBOX 'setup: a kept sandbox with files, a cache and a background process' '
	gosbx open -q --name=s $limits >/dev/null 2>open.err &&
	gosbx exec --claim=s -- "echo kept >f &&
		mkdir -p \$HOME/go/pkg/mod/example && echo mod >\$HOME/go/pkg/mod/example/x &&
		setsid sleep 1060.5 </dev/null >/dev/null 2>&1 &" &&
	test_retry 50 0.1 pgrep -f "sleep 1060[.]5" >sleep.pid &&
	{ meta s pid && meta s child-pid && cat sleep.pid; } >pids &&
	test_line_count = 3 pids &&
	claim_cgroups s >cgroups &&
	if test_have_prereq ROOT; then test -s cgroups; fi &&
	meta s limits >limits.before &&
	meta s limit_memory >memory.before &&
	if test_have_prereq LIMITS; then
		test "$(cat memory.before)" = 100663296 &&
		test "$(meta s limit_pids)" = 64
	else
		test "$(cat memory.before)" = 0
	fi &&
	test "$(mode s)" = running
'

test_expect_success SANDBOX 'suspend stops every process, removes the cgroups, keeps the files' '
	gosbx suspend s 2>err &&
	test_grep "^suspended claim .s.$" err &&
	none_live pids &&
	while read -r d; do
		if test -d "$d"; then echo >&4 "cgroup left: $d"; false; fi || return 1
	done <cgroups &&
	test "$(meta s mode)" = suspended &&
	test "$(cat "$claims_dir/s/fs/app/f")" = kept &&
	test "$(cat "$claims_dir/s/fs/home/go/pkg/mod/example/x")" = mod &&
	test "$(status s)" = suspended &&
	test "$(mode s)" = suspended &&
	gosbx claims -o json >claims.json &&
	grep "\"mode\": \"suspended\"" claims.json &&
	! test -e "$claims_dir/s/run/runtime.sock"
'

test_expect_success SANDBOX 'exec on a suspended claim says how to resume it' '
	test_expect_code_err 125 gosbx exec --claim=s -- true &&
	test_grep "^error: claim .s. is suspended; resume it with .gosbx resume s.$" err &&
	test "$(status s)" = suspended
'

test_expect_success SANDBOX 'logs and claims prune leave it alone' '
	gosbx logs s >log &&
	test -s log &&
	gosbx claims prune >pruned &&
	test_line_count = 0 pruned &&
	test "$(status s)" = suspended
'

test_expect_success SANDBOX 'suspend again: already suspended' '
	gosbx suspend s 2>err &&
	test_grep "^claim .s. is already suspended$" err
'

test_expect_success SANDBOX,LIMITS 'a resume that cannot apply its limits fails closed' '
	mkdir empty-cgroups &&
	test_expect_code_err 125 env GOSBX_CGROUP_ROOT="$PWD/empty-cgroups" \
		gosbx resume s &&
	test_grep "cannot create sandbox" err &&
	test_grep "^error: claim .s. stays suspended (it runs again only with the isolation and limits it was opened with)$" err &&
	test "$(status s)" = suspended &&
	test "$(meta s mode)" = suspended
'

test_expect_success SANDBOX 'resume: the same files and limits, a new sandbox' '
	gosbx resume s 2>err &&
	test_drop_limits_warning err &&
	test_grep "^resumed claim .s.$" err &&
	test "$(status s)" = ready &&
	test "$(mode s)" = running &&
	gosbx exec --claim=s -- "cat f \$HOME/go/pkg/mod/example/x" >out &&
	printf "kept\nmod\n" >expect &&
	test_cmp expect out &&
	! grep -x "$(meta s pid)" pids &&
	meta s limits >limits.after &&
	test_cmp limits.before limits.after &&
	meta s limit_memory >memory.after &&
	test_cmp memory.before memory.after &&
	if test_have_prereq LIMITS; then
		test "$(meta s limit_pids)" = 64
	fi &&
	if test_have_prereq ROOT; then
		d=$(awk "\$1 == \"memory\" { print \$2 }" "$claims_dir/s/meta") &&
		{ cat "$d/memory.max" "$d/memory.limit_in_bytes" 2>/dev/null || :; } >limit &&
		grep -x 100663296 limit
	fi &&
	gosbx resume s 2>err &&
	test_grep "^claim .s. is already running$" err
'

test_expect_success SANDBOX 'resume and suspend again, then close the suspended claim' '
	gosbx suspend s &&
	claim_cgroups s >cgroups2 &&
	gosbx close s 2>err &&
	test_grep "^closed claim .s.$" err &&
	! test -e "$claims_dir/s" &&
	test_expect_code_err 125 gosbx resume s &&
	test_grep "^error: no such claim .s.$" err
'

test_expect_success SANDBOX 'a claim that is not kept cannot be suspended' '
	gosbx open -q --name=t >/dev/null 2>&1 &&
	sed -i "s/^keep 1\$/keep 0/" "$claims_dir/t/meta" &&
	test_expect_code_err 125 gosbx suspend t &&
	test_grep "^error: claim .t. is not kept" err &&
	test "$(status t)" = ready &&
	gosbx close t
'

test_expect_success 'usage errors' '
	test_expect_code 129 gosbx suspend &&
	test_expect_code 129 gosbx resume &&
	test_expect_code 129 gosbx suspend ../x &&
	test_expect_code_err 129 gosbx --backend=url --url=http://127.0.0.1:9 suspend x &&
	test_grep "url backend cannot suspend" err
'

test_done
