#!/bin/sh
test_description='local isolation: limits too small to start a sandbox

A memory or pids limit below what bwrap and the runtime need used to end
in "bwrap failed (signal 9; its message is above)" with nothing above.
It is refused at once with the limit, its minimum (ISOLATE_MIN_MEMORY,
ISOLATE_MIN_PIDS in lib/local/isolate.h) and the way out.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

# Which limits this host lets us apply (as a normal user on cgroup v1:
# none, and an explicit limit fails closed).
isolate-run --memory=64m -- true 2>/dev/null && test_set_prereq MEMCG
isolate-run --pids=64 -- true 2>/dev/null && test_set_prereq PIDSCG

mem_error="cannot create sandbox: a memory limit of 1024 bytes is too small to start a sandbox; the minimum is 8 MiB (--memory=8m), or --memory=0 for none"
pids_error="cannot create sandbox: a pids limit of 1 is too small to start a sandbox; the minimum is 8 (--pids=8), or --pids=0 for none"

test_expect_success 'isolate-run: --memory=1k and --pids=1 say which and how much' '
	test_expect_code_err 125 isolate-run --memory=1k -- touch ran &&
	grep -x "error: $mem_error" err &&
	test_expect_code_err 125 isolate-run --pids=1 -- touch ran &&
	grep -x "error: $pids_error" err &&
	test ! -e ran &&
	test_line_count = 1 err
'

opt_mem_error="option '--memory': 1024 bytes is too small to start a sandbox; the minimum is 8 MiB (--memory=8m), or --memory=0 for none"
opt_pids_error="option '--pids': 1 is too small to start a sandbox; the minimum is 8 (--pids=8), or --pids=0 for none"

# the command line alone shows it: a usage error (gosbx(1) EXIT STATUS)
test_expect_success 'gosbx open: a bad option value, 129, nothing left behind' '
	test_expect_code_err 129 gosbx open --memory=1k &&
	grep -x "error: $opt_mem_error" err &&
	test_expect_code_err 129 gosbx open --pids=1 &&
	grep -x "error: $opt_pids_error" err &&
	gosbx claims -o json >claims &&
	test "$(tr -d " \n" <claims)" = "[]"
'

test_expect_success 'gosbx exec: the same, exit status 129' '
	test_expect_code_err 129 gosbx exec --memory=1k -- true &&
	grep -x "error: $opt_mem_error" err &&
	test_expect_code_err 129 gosbx exec --pids=7 -- true &&
	grep "option .--pids.: 7 is too small to start a sandbox; the minimum is 8" err
'

test_expect_success MEMCG,PIDSCG 'at the minimum a sandbox starts and runs' '
	isolate-run --memory=8m --pids=8 -- sh -c "echo ran" >out &&
	echo ran >expect &&
	test_cmp expect out
'

# a gosbx-runtime built with a sanitizer needs more than 8 MiB itself
test_expect_success MEMCG,PIDSCG,NOT_SANITIZED 'at the minimum gosbx exec runs' '
	gosbx exec --memory=8m --pids=8 -- "echo ran" >out &&
	echo ran >expect &&
	test_cmp expect out
'

test_done
