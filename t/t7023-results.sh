#!/bin/sh
test_description='what a result says about how a command ended

cpu_ms counts every process a command started, also those killed at
the end (a timeout); every result carries reason, signal, CPU and peak
RSS where the tool has a place for them: gosbx exec --json, the stderr
line of run_go_code, the sandbox toolset and the jobs toolset.'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq BWRAP || test_skip_all 'bwrap is not installed'
bwrap --unshare-user --ro-bind / / true 2>/dev/null ||
	test_skip_all 'unprivileged user namespaces do not work here'

test_atexit 'gosbx close --all'

claims="$XDG_STATE_HOME/gosbx/claims"

# burn.sh: leave the session, work for a while, write down our own CPU
# time (ms, from /proc/self/stat), then wait to be killed
cat >burn.sh <<\EOF
i=0
while test $i -lt 300000; do i=$((i + 1)); done
set -- $(cat /proc/$$/stat)
echo $(((${14} + ${15}) * 1000 / $(getconf CLK_TCK))) >cpu.new
mv cpu.new cpu
exec sleep 1005
EOF

test_expect_success PYTHON 'exec --json: cpu_ms counts what the timeout killed' '
	gosbx open -q --name=burn >/dev/null &&
	cp burn.sh "$claims/burn/fs/app/" &&
	{ gosbx exec --claim=burn --json --timeout=30s -- \
		"setsid sh burn.sh & while ! test -e cpu; do sleep 0.1; done; sleep 1005" \
		>out 2>err; echo $? >rc; } &&
	cat out >&4 && cat "$claims/burn/fs/app/cpu" >&4 &&
	python3 -c "
import json
o = json.load(open(\"out\"))
burnt = int(open(\"$claims/burn/fs/app/cpu\").read())
assert o[\"reason\"] == \"timeout\" and o[\"signal\"] == 9, o
# the shell and sleep use next to nothing: the child must be counted
assert burnt >= 50, burnt
assert o[\"cpu_ms\"] >= burnt, (o, burnt)
assert o[\"peak_rss_kb\"] > 0, o
" &&
	gosbx close burn
'

. "$TEST_DIRECTORY/lib-mcp-raw.sh"
MCP_SERVER="gosbx mcp --tools=go,sandbox,jobs --structured-content"
export MCP_SERVER

# jobs always run with a memory limit: not for a user who cannot have
# one (cgroup v1 without a delegated group)
gosbx exec --memory=512m -- true >/dev/null 2>&1 && test_set_prereq MEMLIMIT

test_expect_success PYTHON 'the sandbox tools say signal, cpu and memory' '
	mcp_run "
c = Client()
res, text = c.call(\"sandbox_start\", sandbox=\"s1\", namespace=\"t\")
assert not res.get(\"isError\"), text
res, text = err(c.call(\"sandbox_run_command\", sandbox=\"s1\",
    namespace=\"t\", command=\"kill -9 \$\$\"))
s = res[\"structuredContent\"]
assert s.get(\"signal\") == 9 and s.get(\"reason\") == \"signaled\", s
assert s[\"cpu_ms\"] >= 0 and s[\"peak_rss_kb\"] > 0, s
assert \"  signal=9\" in text and \"  cpu=\" in text, text
assert \"  peak_memory=\" in text, text
res, text = ok(c.call(\"sandbox_run_command\", sandbox=\"s1\",
    namespace=\"t\", command=\"true\"))
s = res[\"structuredContent\"]
assert \"signal\" not in s and s[\"cpu_ms\"] >= 0, s
c.close()
"
'

test_expect_success PYTHON,MEMLIMIT 'the jobs tools say the signal' '
	mcp_run "
c = Client()
# (the job runs as sh -c \"bash main.sh\": kill the sh)
res, text = err(c.call(\"execute_bash\", script=\"kill -9 \$PPID\", wait=True))
s = res[\"structuredContent\"]
assert s.get(\"signal\") == 9 and s[\"status\"] == \"failed\", s
assert \"  signal=9\" in text, text
res, text = ok(c.call(\"check_job_status\", job_id=s[\"job_id\"]))
assert res[\"structuredContent\"][\"signal\"] == 9, res
c.close()
"
'

test_expect_success PYTHON 'run_go_code logs reason, cpu and memory on stderr' '
	: >server.err &&
	mcp_run "
c = Client()
res, text = ok(c.call(\"run_go_code\", command=\"echo ok\"))
res, text = c.call(\"run_go_code\", command=\"kill -9 \$\$\")
c.close()
" &&
	cat server.err >&4 &&
	grep "run_go_code: claim=[^ ]* exit=0 reason=exited duration_ms=[0-9]* cpu_ms=[0-9]* peak_rss_kb=[1-9][0-9]*\$" server.err &&
	grep "run_go_code: claim=[^ ]* exit=-1 reason=signaled signal=9 duration_ms=[0-9]* cpu_ms=" server.err
'

# run_go_code: a command that was cut short is an error, whatever the
# exit status of its shell (issue 17, "results that tell the truth")
test_expect_success PYTHON 'run_go_code: a timeout is isError even when the shell said 0' '
	mcp_run "
c = Client(\"--call-timeout=1s\")
# the shell exits 0 at once; a process it left holds stdout open, and
# the time limit comes before the runtime gives up waiting for it (2 s)
res, text = err(c.call(\"run_go_code\",
    command=\"sh -c \\\"exec sleep 7023.5\\\" & echo started\"))
assert \"  [timed out after 1s]\" in text.splitlines()[0], text
assert res[\"structuredContent\"][\"reason\"] == \"timeout\", res
c.close()
"
'

test_expect_success PYTHON,MEMLIMIT 'run_go_code: the memory limit names itself' '
	mcp_run "
c = Client(\"--memory=256m\")
res, text = err(c.call(\"run_go_code\",
    command=\"head -c 600000000 /dev/zero | tail -c 600000000 >/dev/null\"))
first = text.splitlines()[0]
assert \"  [out of memory: limit 256 MiB]\" in first, text
assert res[\"structuredContent\"][\"reason\"] == \"oom\", res
c.close()
"
'

test_expect_success PYTHON 'run_go_code: a background process holding the output does not hold the call' '
	mcp_run "
c = Client(\"--call-timeout=60s\")
# go run server.go & in small: the shell exits, the process it left
# keeps stdout open, writes later (once the second call says so: its
# output must come after the first answer) and keeps running
res, text = ok(c.call(\"run_go_code\",
    command=\"(until test -e go-7023; do sleep 0.05; done; echo late-7023; exec sleep 7023.7) & echo now-7023\"))
first = text.splitlines()[0]
assert first.startswith(\"exit=0  (\"), text
assert \"timed out\" not in first, text
assert \"  [a background process still holds the output; its later output goes to /tmp/gosbx-output-\" in first, text
assert \"now-7023\" in text, text
held = first.split(\"goes to \")[1].rstrip(\"]\")
res, text = ok(c.call(\"run_go_code\",
    command=\"touch go-7023; i=0; until grep -q late-7023 %s; do i=\$((i+1)); test \$i -lt 300 || exit 9; sleep 0.1; done; cat %s; pgrep -f \\\"^sleep 7023[.]7\\\" >/dev/null && echo still-running\" % (held, held)))
assert \"late-7023\" in text and \"still-running\" in text, text
c.close()
"
'

# a sandbox that died under its owner: the next call says so first
test_expect_success PYTHON 'run_go_code: a dead sandbox is replaced, with a death certificate' '
	: >server.err &&
	mcp_run "
import os, re, signal, time
c = Client()
res, text = ok(c.call(\"run_go_code\", command=\"echo kept >/app/k.txt\"))
claim = re.search(r\"sandbox open: claim=(\\S+)\", open(\"server.err\").read()).group(1)
meta = open(os.path.join(\"$claims\", claim, \"meta\")).read()
pid = int(re.search(r\"^child-pid (\\d+)\", meta, re.M).group(1))
os.kill(pid, signal.SIGKILL)
res, text = c.call(\"run_go_code\", command=\"cat /app/k.txt; echo new-sandbox\")
first = text.splitlines()[0]
assert first.startswith(\"[sandbox %r died: \" % claim), text
assert \"killed by signal 9\" in first and \"its files are gone\" in first, text
assert \"new-sandbox\" in text and \"kept\" not in text.split(\"stdout\")[-1], text
new = re.search(r\"new sandbox .([a-z0-9-]+).\", first).group(1)
assert new != claim, text
res, text = ok(c.call(\"run_go_code\", command=\"echo again\"))
assert text.startswith(\"exit=0\"), text
c.close()
" &&
	grep "died: its runtime was killed by signal 9" server.err
'

test_done
