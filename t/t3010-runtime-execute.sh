#!/bin/sh
test_description='gosbx-runtime: POST /execute, upstream and extended'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

test_expect_success 'setup' '
	GOSBX_T3010_INHERITED=from-server &&
	export GOSBX_T3010_INHERITED &&
	rt_start
'

# The upstream client sends nothing but the command.
test_expect_success 'upstream shape: only command, answer has the three keys' '
	rt_exec "{\"command\":\"echo hi; echo oops >&2\"}" &&
	json_is body exit_code 0 &&
	printf "hi\n" >expect && json_get body stdout >actual &&
	test_cmp expect actual &&
	printf "oops\n" >expect && json_get body stderr >actual &&
	test_cmp expect actual &&
	rt_header Content-Type >ct &&
	test_grep "^application/json" ct
'

test_expect_success 'extended fields are all present with their types' '
	rt_exec "{\"command\":\"true\"}" &&
	json_keys body >actual &&
	printf "%s\n" cpu_ms duration_ms exit_code peak_rss_kb reason stderr \
		stderr_truncated stdout stdout_truncated >expect &&
	test_cmp expect actual &&
	for k in cpu_ms duration_ms exit_code peak_rss_kb
	do
		echo int >expect && json_type body $k >actual &&
		test_cmp expect actual || return 1
	done &&
	json_is body reason exited &&
	json_is body stdout_truncated false &&
	json_is body stderr_truncated false &&
	test "$(json_get body duration_ms)" -ge 0 &&
	test "$(json_get body cpu_ms)" -ge 0 &&
	test "$(json_get body peak_rss_kb)" -ge 0
'

test_expect_success 'the exit status passes through' '
	rt_exec "{\"command\":\"exit 3\"}" &&
	json_is body exit_code 3 &&
	json_is body reason exited
'

test_expect_success 'a command killed by a signal: exit -1, signaled, signal' '
	rt_exec "{\"command\":\"kill -TERM \$\$\"}" &&
	json_is body exit_code -1 &&
	json_is body reason signaled &&
	json_is body signal 15
'

test_expect_success 'signal is absent unless signaled' '
	rt_exec "{\"command\":\"exit 0\"}" &&
	! json_get body signal 2>/dev/null
'

test_expect_success 'the command runs in the workdir through sh -c' '
	rt_exec "{\"command\":\"pwd; echo \$0 >made-here\"}" &&
	json_is body stdout "$TRASH_DIRECTORY/work" &&
	test_grep "sh" work/made-here
'

test_expect_success 'stdin is /dev/null by default' '
	rt_exec "{\"command\":\"cat; readlink /proc/self/fd/0 || true\"}" &&
	json_is body exit_code 0 &&
	json_is body stdout /dev/null
'

test_expect_success 'the server environment is inherited' '
	rt_exec "{\"command\":\"echo \$GOSBX_T3010_INHERITED\"}" &&
	json_is body stdout from-server
'

test_expect_success 'option stdin feeds the command' '
	rt_exec "{\"command\":\"cat\",\"stdin\":\"line 1\\nline 2\\n\"}" &&
	printf "line 1\nline 2\n" >expect &&
	json_get body stdout >actual &&
	test_cmp expect actual
'

test_expect_success 'a large stdin while the command writes a large stdout' '
	python3 -c "import json; print(json.dumps({\"command\": \"cat; echo done >&2\", \"stdin\": \"0123456789abcdef\" * 40000}))" >big.json &&
	rt_exec @big.json &&
	json_get body stdout >actual &&
	test $(wc -c <actual) = 640000 &&
	json_is body stderr done
'

test_expect_success 'a command that ignores its stdin option still ends' '
	python3 -c "import json; print(json.dumps({\"command\": \"echo no-read\", \"stdin\": \"x\" * 500000}))" >ignored.json &&
	rt_exec @ignored.json &&
	json_is body stdout no-read &&
	json_is body exit_code 0
'

test_expect_success 'option env is merged over the server environment' '
	rt_exec "{\"command\":\"echo \$A_T3010 \$GOSBX_T3010_INHERITED \$PATH_SET\",\"env\":{\"A_T3010\":\"one two\",\"PATH_SET\":\"\$x\"}}" &&
	json_is body stdout "one two from-server \$x"
'

test_expect_success 'option env overrides an inherited variable' '
	rt_exec "{\"command\":\"echo \$GOSBX_T3010_INHERITED\",\"env\":{\"GOSBX_T3010_INHERITED\":\"overridden\"}}" &&
	json_is body stdout overridden
'

test_expect_success 'option cwd is relative to the workdir' '
	mkdir -p work/sub/deeper &&
	rt_exec "{\"command\":\"pwd\",\"cwd\":\"sub/deeper\"}" &&
	json_is body stdout "$TRASH_DIRECTORY/work/sub/deeper"
'

test_expect_success 'option cwd that leaves the workdir is refused' '
	rt_expect_error 400 "cwd must be within workdir" POST /execute \
		--data-binary "{\"command\":\"pwd\",\"cwd\":\"..\"}" &&
	rt_expect_error 400 "cwd must be within workdir" POST /execute \
		--data-binary "{\"command\":\"pwd\",\"cwd\":\"sub/../../work\"}" &&
	ln -s /tmp work/to-tmp &&
	rt_expect_error 400 "cwd must be within workdir" POST /execute \
		--data-binary "{\"command\":\"pwd\",\"cwd\":\"to-tmp\"}"
'

test_expect_success 'option cwd that does not exist is refused' '
	rt_expect 400 POST /execute \
		--data-binary "{\"command\":\"pwd\",\"cwd\":\"no/such/dir\"}" &&
	json_get body detail >detail &&
	test_grep "^cwd not found: .*no/such/dir" detail
'

test_expect_success 'option timeout_ms kills the whole process group' '
	rt_exec "{\"command\":\"sleep 1000.123 & (sleep 1000.123; echo x) & sleep 1000.123\",\"timeout_ms\":500}" &&
	json_is body reason timeout &&
	json_is body exit_code -1 &&
	rt_no_process "sleep 1000\\.123"
'

test_expect_success 'timeout_ms 0 means no limit' '
	rt_exec "{\"command\":\"sleep 0.2; echo slept\",\"timeout_ms\":0}" &&
	json_is body stdout slept &&
	json_is body reason exited
'

test_expect_success 'the answer waits for background jobs holding the pipes' '
	rt_exec "{\"command\":\"echo early; (sleep 0.3; echo late) &\"}" &&
	printf "early\nlate\n" >expect &&
	json_get body stdout >actual &&
	test_cmp expect actual
'

test_expect_success 'option max_output_bytes stops a runaway command' '
	rt_exec "{\"command\":\"yes\",\"max_output_bytes\":100000}" &&
	json_is body reason output_limit &&
	json_is body exit_code -1 &&
	test $(json_get body stdout | wc -c) -le $((100000 + 16)) &&
	rt_exec "{\"command\":\"while :; do echo err >&2; done\",\"max_output_bytes\":5000}" &&
	json_is body reason output_limit
'

test_expect_success 'max_output_bytes counts stdout and stderr together' '
	rt_exec "{\"command\":\"head -c 3000 /dev/zero; head -c 3000 /dev/zero >&2; sleep 1000.124\",\"max_output_bytes\":5000,\"timeout_ms\":60000}" &&
	json_is body reason output_limit &&
	rt_no_process "sleep 1000\\.124"
'

test_expect_success 'output under max_output_bytes is complete' '
	rt_exec "{\"command\":\"printf 12345\",\"max_output_bytes\":5}" &&
	json_is body stdout 12345 &&
	json_is body reason exited
'

test_expect_success 'invalid UTF-8 in the output becomes U+FFFD' '
	rt_exec "{\"command\":\"printf \\\"a\\\\377b\\\\376c\\\\303\\\"; printf \\\"x\\\\300y\\\" >&2\"}" &&
	printf "a\357\277\275b\357\277\275c\357\277\275" >expect &&
	json_get body stdout >actual &&
	test_cmp expect actual &&
	printf "x\357\277\275y" >expect &&
	json_get body stderr >actual &&
	test_cmp expect actual
'

test_expect_success 'valid multibyte output is kept as is' '
	rt_exec "{\"command\":\"printf \\\"\\\\303\\\\251t\\\\303\\\\251 \\\\342\\\\202\\\\254 \\\\360\\\\237\\\\220\\\\271\\\"\"}" &&
	printf "\303\251t\303\251 \342\202\254 \360\237\220\271" >expect &&
	json_get body stdout >actual &&
	test_cmp expect actual
'

test_expect_success 'a stream is cut at 8 MiB with the truncation marker' '
	rt_exec "{\"command\":\"head -c 9000000 /dev/zero | tr \\\"\\\\0\\\" y; echo small >&2\"}" &&
	json_is body stdout_truncated true &&
	json_is body stderr_truncated false &&
	json_is body stderr small &&
	json_is body exit_code 0 &&
	python3 -c "
import json, sys
j = json.load(open(\"body\"))
want = \"y\" * 8388608 + \"\\n... [truncated]\"
sys.exit(j[\"stdout\"] != want)
"
'

test_expect_success 'the 8 MiB cut never splits a multibyte character' '
	rt_exec "{\"command\":\"head -c 8388607 /dev/zero | tr \\\"\\\\0\\\" x; printf \\\"\\\\303\\\\251tail\\\"\"}" &&
	json_is body stdout_truncated true &&
	python3 -c "
import json, sys
j = json.load(open(\"body\"))
want = \"x\" * 8388607 + \"\\n... [truncated]\"
if j[\"stdout\"] != want:
    print(repr(j[\"stdout\"][8388600:]))
    sys.exit(1)
"
'

# 2 GiB through a pipe takes a few seconds; the server keeps 8 MiB of it.
test_expect_success '2 GiB of output: 8 MiB kept, memory bounded' '
	rt_start --name=big --workdir="$TRASH_DIRECTORY/bigwork" &&
	RT=big rt_exec "{\"command\":\"yes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx | head -c 2147483648; echo end >&2\"}" &&
	json_is body stdout_truncated true &&
	json_is body exit_code 0 &&
	json_is body stderr end &&
	python3 -c "
import json, sys
j = json.load(open(\"body\"))
line = \"x\" * 47 + \"\\n\"
want = (line * (8388608 // 48 + 1))[:8388608] + \"\\n... [truncated]\"
sys.exit(j[\"stdout\"] != want)
" &&
	RT=big rt_memory_bounded VmHWM &&
	RT=big rt_stop
'

test_expect_success 'a command not found is exit 127 with the shell message' '
	rt_exec "{\"command\":\"no-such-command-t3010\"}" &&
	json_is body exit_code 127 &&
	json_get body stderr >err &&
	test_grep "no-such-command-t3010" err
'

test_expect_success 'a client that disconnects mid-command kills its group' '
	test_expect_code 28 rt_curl /execute --max-time 1 -o /dev/null \
		--data-binary "{\"command\":\"sleep 3010.456 & sleep 3010.456\"}" &&
	rt_no_process "sleep 3010\\.456" &&
	rt_alive
'

test_expect_success 'many commands at once: a quick one is not blocked' '
	rm -f work/release work/started.* &&
	for i in 1 2 3 4 5 6 7 8
	do
		rt_curl /execute -o slow.$i.out \
			--data-binary "{\"command\":\"touch started.$i; while ! test -e release; do sleep 0.05; done; echo slow $i\",\"timeout_ms\":120000}" &
	done &&
	rt_poll 60 test -e work/started.8 -a -e work/started.1 -a \
		-e work/started.2 -a -e work/started.3 -a -e work/started.4 \
		-a -e work/started.5 -a -e work/started.6 -a -e work/started.7 &&
	RT_MAX_TIME=60 rt_exec "{\"command\":\"true\"}" &&
	json_is body exit_code 0 &&
	for i in 1 2 3 4 5 6 7 8
	do
		! test -s slow.$i.out || return 1
	done &&
	touch work/release &&
	wait &&
	for i in 1 2 3 4 5 6 7 8
	do
		json_is slow.$i.out stdout "slow $i" || return 1
	done
'

test_expect_success 'the server logs exec begin and exec done' '
	rt_exec "{\"command\":\"printf abc; printf de >&2; exit 2\"}" &&
	rt_poll 10 grep -q "msg=\"exec done\" command=\"printf abc; printf de >&2; exit 2\" exit=2 stdout_bytes=3 stderr_bytes=2 duration_ms=[0-9]" rt.log &&
	test_grep "msg=\"exec begin\" command=\"printf abc; printf de >&2; exit 2\"" rt.log
'

# exec-options wait_delay_ms: a process the command left that holds its
# output (`server &`) holds the answer only that long (default 2 s)
test_expect_success 'wait_delay_ms: a background process does not hold the answer' '
	# "now" waits for "early": the background process has printed
	# before the command ends and its 200 ms start
	rt_exec "{\"command\":\"(echo early; touch early-t3010; while ! test -e go-t3010; do sleep 0.05; done; echo late-t3010; exec sleep 3010.3) & until test -e early-t3010; do sleep 0.01; done; echo now\",\"wait_delay_ms\":200}" &&
	out=$(json_get body stdout) &&
	case "$out" in "early
now") ;; *) echo >&4 "stdout: $out"; false ;; esac &&
	json_is body reason exited &&
	json_is body output_held true &&
	held=$(json_get body held_output) &&
	case "$held" in /tmp/gosbx-output-*.log) ;; *) false ;; esac &&
	touch "$(rt_workdir)/go-t3010" &&
	rt_poll 100 grep -q late-t3010 "$held" &&
	rt_wait_process "sleep 3010\.3" &&
	pkill -f "sleep 3010\.3"
'

test_expect_success 'wait_delay_ms 0 waits for the output to close; bad values' '
	rt_exec "{\"command\":\"echo now; (sleep 0.5; echo late) &\",\"wait_delay_ms\":0}" &&
	json_is body stdout "now
late" &&
	! grep -q output_held body &&
	rt_expect_error 400 "wait_delay_ms must be a non-negative integer" \
		POST /execute --data-binary "{\"command\":\"true\",\"wait_delay_ms\":-1}"
'

test_expect_success 'the servers stop cleanly, no sanitizer report' '
	rt_stop_check
'

test_done
