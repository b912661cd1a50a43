#!/bin/sh
test_description='nothing left behind: what a command started, and what a gosbx left

Cancel, timeout and Ctrl-C kill every process a command started, also
the ones that left its session (setsid) or its tree (double fork), and
only those of that command. A throwaway sandbox of a SIGKILLed `gosbx
exec`, and the sandboxes and jobs of a SIGKILLed `gosbx mcp`, end within
a minute; the next gosbx that lists or creates claims removes what is
left. Kept claims are never removed that way.'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq BWRAP || test_skip_all 'bwrap is not installed'
bwrap --unshare-user --ro-bind / / true 2>/dev/null ||
	test_skip_all 'unprivileged user namespaces do not work here'

claims="$XDG_STATE_HOME/gosbx/claims"
test_atexit 'gosbx close --all'

# Process patterns are anchored (pgrep -f "^$1"): the command line of
# the gosbx exec that runs a command holds the command's text too.

# gone <regex>: no process matches, within 60 s
gone() {
	test_retry 120 0.5 no_process_ "$1" && return 0
	echo >&4 "still running:"
	pgrep -a -f "^$1" >&4
	return 1
}
no_process_() {
	! pgrep -f "^$1" >/dev/null
}
running() {
	test_retry 120 0.5 pgrep -f "^$1" >/dev/null
}

# start_exec <name> args...: gosbx exec in the background; <name>.out,
# <name>.pid
start_exec() {
	_n=$1
	shift
	gosbx exec "$@" >"$_n.out" 2>"$_n.err" &
	echo $! >"$_n.pid"
}

# the pieces of a command that try to outlive it: its own session, a
# double fork, and one in the foreground
ESCAPES='setsid sleep 1002.N1 & (setsid sh -c "sleep 1002.N2 &" &); echo up; sleep 1002.N3'

test_expect_success 'setup: a kept claim' '
	gosbx open -q --name=kept >/dev/null
'

test_expect_success 'Ctrl-C kills what left the session and the tree' '
	start_exec int --claim=kept -- "$(echo "$ESCAPES" | sed s/N/1/g)" &&
	running "sleep 1002\.11" && running "sleep 1002\.12" &&
	running "sleep 1002\.13" &&
	kill -INT $(cat int.pid) &&
	{ wait $(cat int.pid); echo $? >int.status; } &&
	echo 130 >expect && test_cmp expect int.status &&
	gone "sleep 1002\.1[123]"
'

test_expect_success 'a timeout kills them too' '
	{ gosbx exec --claim=kept --timeout=3s -- \
		"$(echo "$ESCAPES" | sed s/N/2/g)" >out 2>err; echo $? >rc; } &&
	echo up >expect && test_cmp expect out &&
	test_grep "timed out" err &&
	gone "sleep 1002\.2[123]"
'

test_expect_success 'cancelling one command leaves the other ones alone' '
	start_exec a --claim=kept -- "setsid sleep 1002.31 & echo up; sleep 1002.32" &&
	start_exec b --claim=kept -- "setsid sleep 1002.41 & echo up; sleep 1002.42" &&
	running "sleep 1002\.31" && running "sleep 1002\.41" &&
	running "sleep 1002\.32" && running "sleep 1002\.42" &&
	kill -INT $(cat a.pid) &&
	gone "sleep 1002\.3[12]" &&
	pgrep -f "^sleep 1002\.41" && pgrep -f "^sleep 1002\.42" &&
	kill -INT $(cat b.pid) &&
	gone "sleep 1002\.4[12]"
'

test_expect_success 'a daemon of a command that ended normally runs until close' '
	gosbx exec --claim=kept -- \
		"setsid sleep 1002.51 >/dev/null 2>&1 & echo started" >out &&
	echo started >expect && test_cmp expect out &&
	running "sleep 1002\.51" &&
	gosbx exec --claim=kept -- true &&
	pgrep -f "^sleep 1002\.51" &&
	gosbx close kept &&
	gone "sleep 1002\.51"
'

# cgroups NAME: the cgroup directories recorded in a claim's meta
cgroups() {
	awk '$1 ~ /^(memory|pids|cpu)$/ { print $2 }' "$claims/$1/meta"
}

test_expect_success 'a SIGKILLed gosbx exec leaves nothing once another gosbx ran' '
	start_exec killed -- "echo up; sleep 1003.11" &&
	running "sleep 1003\.11" &&
	name=$(ls "$claims") &&
	test -n "$name" &&
	grep "^owner 1\$" "$claims/$name/meta" &&
	cgroups "$name" >killed.cgroups &&
	kill -KILL $(cat killed.pid) &&
	gone "sleep 1003\.11" &&
	gosbx claims -o json >list &&
	echo "[]" >expect && test_cmp expect list &&
	! test -e "$claims/$name" &&
	if test_have_prereq ROOT; then test -s killed.cgroups; fi &&
	while read cg; do
		! test -e "$cg" || return 1
	done <killed.cgroups
'

test_expect_success 'a gosbx exec that opens a claim removes them too' '
	start_exec killed2 -- "echo up; sleep 1003.21" &&
	running "sleep 1003\.21" &&
	name=$(ls "$claims") &&
	kill -KILL $(cat killed2.pid) &&
	gone "sleep 1003\.21" &&
	test -d "$claims/$name" &&
	gosbx exec -- true &&
	! test -e "$claims/$name"
'

. "$TEST_DIRECTORY/lib-mcp-raw.sh"
MCP_SERVER="gosbx mcp --tools=go,sandbox,jobs"
export MCP_SERVER

# jobs always run with a memory limit: not for a user who cannot have
# one (cgroup v1 without a delegated group)
gosbx exec --memory=512m -- true >/dev/null 2>&1 && test_set_prereq MEMLIMIT

test_expect_success PYTHON 'a SIGKILLed gosbx mcp: its sandboxes and jobs end' '
	if test_have_prereq MEMLIMIT; then jobs=True; else jobs=False; fi &&
	mcp_run "
c = Client()
res, text = c.call(\"run_go_code\",
    command=\"setsid sleep 1004.11 >/dev/null 2>&1 & echo ok\")
assert not res.get(\"isError\"), text
res, text = c.call(\"sandbox_start\", sandbox=\"s1\", namespace=\"t\")
assert not res.get(\"isError\"), text
res, text = c.call(\"sandbox_run_command\", sandbox=\"s1\", namespace=\"t\",
    command=\"sh\", args=[\"-c\", \"setsid sleep 1004.12 >/dev/null 2>&1 &\"])
assert not res.get(\"isError\"), text
if $jobs:
    res, text = c.call(\"execute_bash\", script=\"sleep 1004.13\", wait=False)
    assert not res.get(\"isError\"), text
    import subprocess, time
    end = time.time() + 60
    while subprocess.run([\"pgrep\", \"-f\", \"^sleep 1004[.]13\"],
            stdout=subprocess.DEVNULL).returncode and time.time() < end:
        time.sleep(0.1)
    assert time.time() < end, \"the job did not start\"
# (while it still holds stdin: EOF there would close them cleanly)
c.p.kill()
c.p.wait()
" &&
	gone "sleep 1004\.1[123]" &&
	gosbx claims -o json >list &&
	echo "[]" >expect && test_cmp expect list &&
	test $(ls "$claims" | wc -l) = 0
'

test_expect_success PYTHON 'with --persistent its sandboxes are kept' '
	MCP_SERVER="gosbx mcp --tools=go --persistent" mcp_run "
c = Client()
res, text = c.call(\"run_go_code\", command=\"echo ok\")
assert not res.get(\"isError\"), text
c.p.kill()
c.p.wait()
" &&
	sleep 2 &&
	gosbx claims -o json >list &&
	grep "\"status\": *\"ready\"" list &&
	gosbx close --all
'

test_done
