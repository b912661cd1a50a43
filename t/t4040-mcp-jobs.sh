#!/bin/sh
test_description='gosbx mcp --tools=jobs: the jobs toolset (seed 003)'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq PYTHON || test_skip_all 'python3 is not installed'
# local by default; t6212 runs this suite with GOSBX_TEST_BACKEND=kube
. "$TEST_DIRECTORY"/lib-backend.sh

# The limits are set with GOSBX_JOBS_CPU_BUDGET_MS and
# GOSBX_JOBS_MAX_CONCURRENT (read by the toolset).
# --structured-content: the checks below read structuredContent; the
# default (text alone) is checked at the end
MCP_SERVER="gosbx mcp --tools=jobs --structured-content"
export MCP_SERVER

# A short state directory: the runtime's unix socket lives under it,
# and the trash directory's path is long for sun_path (108 bytes).
XDG_STATE_HOME=$(mktemp -d /tmp/gosbx-t4040.XXXXXX) || exit 1
export XDG_STATE_HOME
test_atexit 'rm -rf "$XDG_STATE_HOME"'
test_atexit 'gosbx close --all'

. "$TEST_DIRECTORY/lib-mcp-raw.sh"

test_expect_success 'setup: the test client' '
	mcp_run "c = Client(); c.close()"
'

test_expect_success 'tools/list: five tools, wait defaults to true' '
	mcp_run "
c = Client()
tools = {t[\"name\"]: t for t in c.request(\"tools/list\", {})[\"result\"][\"tools\"]}
assert sorted(tools) == [\"check_job_status\", \"execute_bash\",
    \"execute_javascript\", \"execute_python\", \"get_job_logs\"], tools
assert tools[\"execute_bash\"][\"inputSchema\"][\"required\"] == [\"script\"]
assert tools[\"execute_python\"][\"inputSchema\"][\"properties\"][\"wait\"][\"default\"] is True
assert tools[\"check_job_status\"][\"annotations\"][\"readOnlyHint\"] is True
c.close()
"
'

# url: the jobs share the one runtime, whose limits gosbx does not set;
# the tools say so instead of promising a fresh sandbox of 512 MB
test_expect_success 'the job tools say what a job runs in' '
	mcp_run "
c = Client()
tools = {t[\"name\"]: t for t in c.request(\"tools/list\", {})[\"result\"][\"tools\"]}
d = tools[\"execute_python\"][\"description\"]
shared = \"shared by every call and job\" in d
assert shared == (\"$GOSBX_TEST_BACKEND\" == \"url\"), d
c.close()
"
'

# Job sandboxes are limited to 512 MiB: for a user whose sandboxes get no
# limits (NOLIMITS) every job fails closed, and only that is tested.
test_expect_success LOCAL,NOLIMITS 'jobs fail closed where their limit cannot be applied' '
	mcp_run "
c = Client()
res, text = err(c.call(\"execute_bash\", script=\"echo ran\"))
assert \"cannot create sandbox: cgroup memory controller\" in text, text
assert \"ran\" not in res[\"structuredContent\"].get(\"stdout\", \"\"), res
c.close()
" &&
	no_claims
'

test_expect_success JOBS 'wait=true: output, exit code and metrics in python, node, bash' '
	mcp_run "
c = Client()
res, text = ok(c.call(\"execute_python\", code=\"import sys\nprint(sum(range(10)))\nprint(\\\"warn\\\", file=sys.stderr)\"))
s = res[\"structuredContent\"]
assert s[\"status\"] == \"completed\" and s[\"exit_code\"] == 0, s
assert s[\"stdout\"] == \"45\n\" and s[\"stderr\"] == \"warn\n\", s
assert s[\"cpu_seconds\"] >= 0 and s[\"peak_memory_mb\"] > 0, s
assert len(s[\"job_id\"]) == 16 and int(s[\"job_id\"], 16) >= 0, s
assert \"completed: exit=0  (\" in text and \"cpu=\" in text and \"peak_memory=\" in text, text
assert \"── stdout ──\n45\n\" in text and \"── stderr ──\nwarn\n\" in text, text
res, text = ok(c.call(\"execute_javascript\", code=\"console.log([1,2,3].map(x => x * 2).join(\\\",\\\"))\"))
assert res[\"structuredContent\"][\"stdout\"] == \"2,4,6\n\", res
res, text = ok(c.call(\"execute_bash\", script=\"echo hello | tr a-z A-Z; pwd\", wait=True))
out = res[\"structuredContent\"][\"stdout\"]
assert out == \"HELLO\n%s\n\" % (\"$BACKEND_WORKDIR\" or out.split()[-1]), res
# the job is remembered: status and logs by id
jid = res[\"structuredContent\"][\"job_id\"]
res, text = ok(c.call(\"check_job_status\", job_id=jid))
assert res[\"structuredContent\"][\"status\"] == \"completed\", res
assert res[\"structuredContent\"][\"exit_code\"] == 0, res
res, text = ok(c.call(\"get_job_logs\", job_id=jid))
assert res[\"structuredContent\"][\"stdout\"] == out, res
c.close()
" &&
	no_claims
'

# url: the jobs share the runtime's workdir, each its own main-<id>.<ext>
test_expect_success URL 'url: the jobs left no program file in the shared workdir' '
	mcp_run "
import glob
c = Client()
res, text = ok(c.call(\"execute_bash\", script=\"ls; pwd\"))
lines = res[\"structuredContent\"][\"stdout\"].split()
assert [l for l in lines if l.startswith(\"main-\")] == [\"main-%s.sh\" % res[\"structuredContent\"][\"job_id\"]], lines
assert glob.glob(lines[-1] + \"/main-*\") == [], glob.glob(lines[-1] + \"/main-*\")
c.close()
"
'

test_expect_success JOBS 'a failing script shows its exit code' '
	mcp_run "
c = Client()
res, text = err(c.call(\"execute_bash\", script=\"echo partial; echo oops >&2; exit 3\"))
s = res[\"structuredContent\"]
assert s[\"status\"] == \"completed\" and s[\"exit_code\"] == 3, s
assert \"exit=3\" in text and \"oops\" in text, text
res, text = err(c.call(\"execute_python\", code=\"raise SystemExit(5)\"))
assert res[\"structuredContent\"][\"exit_code\"] == 5, res
res, text = err(c.call(\"execute_javascript\", code=\"throw new Error(\\\"bad\\\")\"))
assert res[\"structuredContent\"][\"exit_code\"] != 0, res
assert \"Error: bad\" in res[\"structuredContent\"][\"stderr\"], res
c.close()
" &&
	no_claims
'

test_expect_success JOBS 'wait=false: a job_id at once, status polling, then logs' '
	mcp_run "
import time
c = Client()
res, text = ok(c.call(\"execute_bash\", script=\"echo first; sleep 1; echo second; exit 4\", wait=False))
jid = res[\"structuredContent\"][\"job_id\"]
assert jid in text, text
assert res[\"structuredContent\"][\"status\"] in (\"queued\", \"running\"), res
seen = set()
for i in range(600):
    res, text = ok(c.call(\"check_job_status\", job_id=jid))
    st = res[\"structuredContent\"][\"status\"]
    seen.add(st)
    assert st in (\"queued\", \"running\", \"completed\"), res
    if st == \"completed\":
        break
    assert \"exit_code\" not in res[\"structuredContent\"], res
    time.sleep(0.1)
assert st == \"completed\", seen
assert res[\"structuredContent\"][\"exit_code\"] == 4, res
res, text = ok(c.call(\"get_job_logs\", job_id=jid))
assert res[\"structuredContent\"][\"stdout\"] == \"first\nsecond\n\", res
assert \"── stdout ──\nfirst\nsecond\n\" in text, text
c.close()
" &&
	no_claims
'

test_expect_success 'unknown job ids and bad arguments are tool errors' '
	mcp_run "
c = Client()
res, text = err(c.call(\"check_job_status\", job_id=\"0123456789abcdef\"))
assert \"unknown job_id\" in text, text
err(c.call(\"get_job_logs\", job_id=\"nope\"))
err(c.call(\"get_job_logs\"))
err(c.call(\"check_job_status\", job_id=7))
res, text = err(c.call(\"execute_python\"))
assert \"code\" in text, text
err(c.call(\"execute_python\", code=1))
err(c.call(\"execute_bash\", code=\"echo wrong key\"))
err(c.call(\"execute_python\", code=\"print(1)\", wait=\"yes\"))
c.close()
"
'

# No network and the OOM kill are the local backend's doing; on kube a
# job pod has what its template and the cluster's NetworkPolicies give
# (t6207 checks that the template's memory limit is within 512 MiB).
test_expect_success LOCAL,LIMITS 'job sandboxes have no network' '
	mcp_run "
import socket
srv = socket.socket()
srv.bind((\"127.0.0.1\", 0))
srv.listen(5)
port = srv.getsockname()[1]
c = Client()
code = \"\"\"import socket
try:
    s = socket.socket()
    s.settimeout(5)
    s.connect((\\\"127.0.0.1\\\", %d))
    print(\\\"connected\\\")
except OSError as e:
    print(\\\"blocked\\\", type(e).__name__)
\"\"\" % port
res, text = ok(c.call(\"execute_python\", code=code))
assert res[\"structuredContent\"][\"stdout\"].startswith(\"blocked\"), res
srv.settimeout(0.5)
try:
    srv.accept()
    raise AssertionError(\"the job reached the host\")
except socket.timeout:
    pass
# only a loopback interface in the network namespace of a job
res, text = ok(c.call(\"execute_bash\", script=\"tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d \\\" \\\"\"))
assert res[\"structuredContent\"][\"stdout\"] in (\"lo\\n\", \"\"), res
c.close()
"
'

# not url: there every job runs in the one runtime and its workdir
test_expect_success JOBS,!URL 'each job runs in a fresh sandbox' '
	mcp_run "
c = Client()
ok(c.call(\"execute_bash\", script=\"echo data >left-behind; ls\"))
res, text = ok(c.call(\"execute_bash\", script=\"ls -A\"))
assert res[\"structuredContent\"][\"stdout\"] == \"main.sh\n\", res
c.close()
"
'

test_expect_success LOCAL,LIMITS 'memory is limited to 512 MiB: a hog fails with reason oom' '
	mcp_run "
c = Client()
res, text = err(c.call(\"execute_python\", code=\"b = b\\\"x\\\" * (800 << 20)\nprint(len(b))\"))
s = res[\"structuredContent\"]
assert \"800\" not in s[\"stdout\"], s
assert s[\"status\"] == \"failed\" and s[\"reason\"] == \"oom\", s
assert s[\"peak_memory_mb\"] < 600, s
assert \"reason=oom\" in text, text
c.close()
" &&
	no_claims
'

test_expect_success JOBS 'CPU budget: over it, rate limit exceeded with a retry time' '
	GOSBX_JOBS_CPU_BUDGET_MS=300 mcp_run "
import re
c = Client()
burn = \"import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5:\n    pass\nprint(\\\"burnt\\\")\"
res, text = ok(c.call(\"execute_python\", code=burn))
assert res[\"structuredContent\"][\"cpu_seconds\"] >= 0.3, res
res, text = err(c.call(\"execute_python\", code=\"print(1)\"))
m = re.search(r\"rate limit exceeded, retry after (\\d+) s\", text)
assert m and 1 <= int(m.group(1)) <= 60, text
res, text = err(c.call(\"execute_bash\", script=\"true\", wait=False))
assert \"rate limit exceeded, retry after \" in text, text
c.close()
" &&
	no_claims
'

# Queued jobs (issue 17). A job running BLOCK waits until the file "go"
# appears in its workdir; release() puts it there with gosbx exec in the
# job's sandbox (its claim is "job-" and the first 8 digits of its id).
cat >lib_blocking.py <<\EOF
import os, re, subprocess, time
from lib_mcp_raw import ok
BLOCK = "echo started; while ! test -e go; do sleep 0.1; done; echo done"
# url (t/lib-backend.sh): every job runs in the one runtime's workdir, so
# a job takes its "go" away, for the next job to wait for one of its own
if os.environ.get("GOSBX_BACKEND") == "url":
    BLOCK = "echo started; while ! rm go 2>/dev/null; do sleep 0.1; done; echo done"

def status(c, jid):
    res, text = ok(c.call("check_job_status", job_id=jid))
    return res["structuredContent"]["status"]

def until_started(c, jid):
    for i in range(600):
        res, text = ok(c.call("get_job_logs", job_id=jid))
        if res["structuredContent"]["stdout"] == "started\n":
            return
        time.sleep(0.1)
    raise AssertionError("job %s did not start: %s" % (jid, res))

def poll(cond):
    for i in range(600):
        r = cond()
        if r:
            return r
        time.sleep(0.1)
    raise AssertionError("condition not met")

def logged(what):
    # job ids the server logged as "job <id> <what> (<language>)"
    with open("server.err") as f:
        return re.findall(r"^job ([0-9a-f]{16}) %s " % what, f.read(), re.M)

# Let job jid's BLOCK end. The job may end, and the server delete its
# sandbox, before this exec's answer is through (the job looks every
# 0.1 s): a failure is an error only while the sandbox still exists.
# What the release did is checked by the caller's next assertions.
def release(jid):
    claim = "job-" + jid[:8]
    r = subprocess.run(["gosbx", "exec", "--claim=" + claim, "--",
                        "touch", "go"])
    if r.returncode != 0:
        listed = subprocess.run(["gosbx", "claims"], capture_output=True,
                                text=True).stdout
        assert not re.search(r"^%s .*ready" % claim, listed, re.M), listed
EOF

test_expect_success JOBS 'over the concurrency limit jobs queue and start in order' '
	MCP_SERVER="$MCP_SERVER --jobs-max-concurrent=1" mcp_run "
from lib_blocking import *
c = Client()
res, text = ok(c.call(\"execute_bash\", script=BLOCK, wait=False))
a = res[\"structuredContent\"][\"job_id\"]
until_started(c, a)
assert status(c, a) == \"running\"
res, text = ok(c.call(\"execute_bash\", script=BLOCK, wait=False))
b = res[\"structuredContent\"][\"job_id\"]
assert res[\"structuredContent\"][\"status\"] == \"queued\", res
assert \"queued behind 1 job (at most 1 run at once)\" in text, text
res, text = ok(c.call(\"execute_python\", code=\"print(7)\", wait=False))
cj = res[\"structuredContent\"][\"job_id\"]
assert \"queued behind 2 jobs\" in text, text
# wait=true waits through the queue
d = c.start(\"tools/call\", {\"name\": \"execute_bash\",
                            \"arguments\": {\"script\": \"echo d\"}})
assert status(c, b) == \"queued\" and status(c, cj) == \"queued\"
res, text = ok(c.call(\"get_job_logs\", job_id=b))
assert res[\"structuredContent\"][\"stdout\"] == \"\", res
# A ends: B, the first queued, starts; C still waits
release(a)
until_started(c, b)
assert status(c, a) == \"completed\"
assert status(c, b) == \"running\" and status(c, cj) == \"queued\"
# B ends: C, then D run; D answers when done, after C
release(b)
r = c.wait(d)[\"result\"]
assert not r.get(\"isError\"), r
assert r[\"structuredContent\"][\"status\"] == \"completed\", r
assert r[\"structuredContent\"][\"stdout\"] == \"d\n\", r
res, text = ok(c.call(\"get_job_logs\", job_id=cj))
assert res[\"structuredContent\"][\"status\"] == \"completed\", res
assert res[\"structuredContent\"][\"stdout\"] == \"7\n\", res
assert status(c, b) == \"completed\"
c.close()
" &&
	no_claims
'

test_expect_success JOBS 'the queue is bounded; a cancelled or left queued job never starts' '
	MCP_SERVER="$MCP_SERVER --jobs-max-concurrent=1" mcp_run "
from lib_blocking import *
c = Client()
res, text = ok(c.call(\"execute_bash\", script=BLOCK, wait=False))
a = res[\"structuredContent\"][\"job_id\"]
until_started(c, a)
# a waiting call cancelled while its job is queued: the job never runs
# (a cancelled call has no answer: the server logs its job_id)
n = len(logged(\"queued\"))
q = c.start(\"tools/call\", {\"name\": \"execute_bash\",
                            \"arguments\": {\"script\": \"echo ran\"}})
qid = poll(lambda: logged(\"queued\")[n:])[0]
c.send({\"jsonrpc\": \"2.0\", \"method\": \"notifications/cancelled\",
        \"params\": {\"requestId\": q}})
poll(lambda: status(c, qid) == \"failed\")
res, text = ok(c.call(\"get_job_logs\", job_id=qid))
s = res[\"structuredContent\"]
assert s[\"error\"] == \"cancelled before it started\", s
assert s[\"stdout\"] == \"\", s
assert status(c, a) == \"running\"
queued = []
for i in range(16):
    res, text = ok(c.call(\"execute_bash\", script=\"echo ran\", wait=False))
    assert res[\"structuredContent\"][\"status\"] == \"queued\", res
    queued.append(res[\"structuredContent\"][\"job_id\"])
res, text = err(c.call(\"execute_bash\", script=\"echo ran\", wait=False))
assert \"rate limit exceeded, retry after \" in text, text
assert \"1 job is running and 16 queued (limit 1 running and 16 queued per client)\" in text, text
assert all(status(c, j) == \"queued\" for j in queued)
assert status(c, a) == \"running\"
# the session ends: the running job is cancelled, the queued never start
c.close()
" &&
	no_claims
'

test_expect_success JOBS 'concurrent waiting jobs within the limit run side by side' '
	GOSBX_JOBS_MAX_CONCURRENT=2 mcp_run "
c = Client()
a = c.start(\"tools/call\", {\"name\": \"execute_bash\", \"arguments\": {\"script\": \"echo a\"}})
b = c.start(\"tools/call\", {\"name\": \"execute_bash\", \"arguments\": {\"script\": \"echo b\"}})
ra = c.wait(a)[\"result\"]
rb = c.wait(b)[\"result\"]
assert ra[\"structuredContent\"][\"stdout\"] == \"a\n\", ra
assert rb[\"structuredContent\"][\"stdout\"] == \"b\n\", rb
c.close()
" &&
	no_claims
'


test_expect_success JOBS 'by default: text alone, the job_id in the text' '
	MCP_SERVER="gosbx mcp --tools=jobs" mcp_run "
import re, time
c = Client()
tools = c.request(\"tools/list\", {})[\"result\"][\"tools\"]
assert len(tools) == 5 and not any(\"outputSchema\" in t for t in tools), tools
res, text = ok(c.call(\"execute_bash\", script=\"echo hi\"))
assert \"structuredContent\" not in res, res
assert re.match(r\"job \\S+ completed: exit=0  \\(\", text), text
assert text.endswith(\"\\n\\u2500\\u2500 stdout \\u2500\\u2500\\nhi\\n\"), text
res, text = ok(c.call(\"execute_bash\", script=\"sleep 0.3; echo later\",
                      wait=False))
assert \"structuredContent\" not in res, res
jid = re.match(r\"job (\\S+) submitted\", text).group(1)
for i in range(300):
    res, text = ok(c.call(\"check_job_status\", job_id=jid))
    assert \"structuredContent\" not in res, res
    if json.loads(text)[\"status\"] == \"completed\":
        break
    time.sleep(0.1)
res, text = ok(c.call(\"get_job_logs\", job_id=jid))
assert text.endswith(\"\\u2500\\u2500 stdout \\u2500\\u2500\\nlater\\n\"), text
c.close()
" &&
	no_claims
'

test_expect_success JOBS 'stdin: fed to the job, then closed; bounded' '
	mcp_run "
import time
c = Client()
tools = {t[\"name\"]: t for t in c.request(\"tools/list\", {})[\"result\"][\"tools\"]}
for t in (\"execute_python\", \"execute_javascript\", \"execute_bash\"):
    p = tools[t][\"inputSchema\"][\"properties\"][\"stdin\"]
    assert p[\"type\"] == \"string\" and \"1 MiB\" in p[\"description\"], p
res, text = ok(c.call(\"execute_python\", code=\"import sys\nprint(sys.stdin.read().upper(), end=str())\",
                      stdin=\"hello\nworld\n\"))
assert res[\"structuredContent\"][\"stdout\"] == \"HELLO\nWORLD\n\", res
res, text = ok(c.call(\"execute_bash\", script=\"wc -l; cat\", stdin=\"a\nb\n\"))
assert res[\"structuredContent\"][\"stdout\"] == \"2\n\", res
res, text = ok(c.call(\"execute_bash\", script=\"tr a-z A-Z\", stdin=\"x\" * 200000,
                      wait=False))
jid = res[\"structuredContent\"][\"job_id\"]
for i in range(600):
    res, text = ok(c.call(\"get_job_logs\", job_id=jid))
    if res[\"structuredContent\"][\"status\"] == \"completed\":
        break
    time.sleep(0.1)
assert res[\"structuredContent\"][\"stdout\"].startswith(\"XXXX\"), res
assert \"[183616 bytes elided]\" in res[\"structuredContent\"][\"stdout\"], res
# without stdin the program reads end of file at once
res, text = ok(c.call(\"execute_bash\", script=\"cat; echo end\"))
assert res[\"structuredContent\"][\"stdout\"] == \"end\n\", res
res, text = err(c.call(\"execute_bash\", script=\"cat\", stdin=\"x\" * ((1 << 20) + 1)))
assert \"stdin\" in text and \"is 1048577 bytes: the limit is 1048576\" in text, text
res, text = err(c.call(\"execute_python\", code=\"1\", stdin=5))
assert \"stdin\" in text and \"must be a string\" in text, text
c.close()
" &&
	no_claims
'

# --persistent: jobs outlive a killed server. Its records are under
# $XDG_STATE_HOME/gosbx/mcp-jobs.
test_expect_success JOBS '--persistent: a running job and a queued one across a SIGKILL of the server' '
	MCP_SERVER="$MCP_SERVER --persistent --jobs-max-concurrent=1" mcp_run "
import os, stat
from lib_blocking import *
c = Client()
res, text = ok(c.call(\"execute_bash\", script=BLOCK + \"; cat\", stdin=\"fed\n\",
                      wait=False))
a = res[\"structuredContent\"][\"job_id\"]
until_started(c, a)
res, text = ok(c.call(\"execute_python\", code=\"print(1)\", wait=False))
q = res[\"structuredContent\"][\"job_id\"]
assert res[\"structuredContent\"][\"status\"] == \"queued\", res
c.p.kill()
c.p.wait()
d = os.environ[\"XDG_STATE_HOME\"] + \"/gosbx/mcp-jobs\"
assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
for j, st in ((a, \"running\"), (q, \"queued\")):
    rec = json.load(open(d + \"/\" + j + \".json\"))
    assert rec[\"status\"] == st and rec[\"job_id\"] == j, rec
    assert stat.S_IMODE(os.stat(d + \"/\" + j + \".json\").st_mode) == 0o600
rec = json.load(open(d + \"/\" + a + \".json\"))
# url: no claims, the claim recorded is the URL of the runtime
if os.environ.get(\"GOSBX_BACKEND\") == \"url\":
    assert rec[\"runtime_job\"], rec
else:
    assert rec[\"claim\"] == \"job-\" + a[:8] and rec[\"runtime_job\"], rec
assert rec[\"language\"] == \"bash\" and rec[\"submitted\"] > 0, rec
# a new server, a new client: the job still runs, then really ends
c = Client()
assert status(c, a) == \"running\"
until_started(c, a)
release(a)
poll(lambda: status(c, a) == \"completed\")
res, text = ok(c.call(\"get_job_logs\", job_id=a))
s = res[\"structuredContent\"]
assert s[\"stdout\"] == \"started\ndone\nfed\n\" and s[\"exit_code\"] == 0, s
assert \"── stdout ──\nstarted\ndone\nfed\n\" in text, text
res, text = ok(c.call(\"check_job_status\", job_id=q))
s = res[\"structuredContent\"]
assert s[\"status\"] == \"failed\", s
assert s[\"error\"] == \"server restarted before the job started\", s
poll(lambda: json.load(open(d + \"/\" + a + \".json\"))[\"status\"] == \"completed\")
c.close()
# the finished job answers from its record after another restart
c = Client()
res, text = ok(c.call(\"get_job_logs\", job_id=a))
assert res[\"structuredContent\"][\"stdout\"] == \"started\ndone\nfed\n\", res
res, text = err(c.call(\"check_job_status\", job_id=\"0123456789abcdef\"))
assert \"unknown job_id\" in text, text
c.close()
" &&
	no_claims
'

test_expect_success JOBS 'without --persistent a job is gone with its server' '
	mcp_run "
from lib_blocking import *
c = Client()
res, text = ok(c.call(\"execute_bash\", script=BLOCK, wait=False))
a = res[\"structuredContent\"][\"job_id\"]
until_started(c, a)
c.p.kill()
c.p.wait()
c = Client()
res, text = err(c.call(\"check_job_status\", job_id=a))
assert \"unknown job_id\" in text, text
c.close()
" &&
	if test_have_prereq LOCAL
	then
		# the killed server could not delete the sandbox: it is dead
		gosbx claims prune >/dev/null
	elif test_have_prereq URL
	then
		# url: the runtime outlives the killed server, its job too (as
		# a pod on kube); no claims to see: let the job end
		gosbx exec -- touch go
	else
		# on kube the pod outlives the killed server, bounded by the
		# shutdownTime every claim of the toolset carries
		gosbx claims -o json >left.json &&
		python3 -c "
import json
left = json.load(open(\"left.json\"))
assert len(left) == 1 and left[0][\"name\"].startswith(\"job-\"), left
assert left[0].get(\"shutdown_time\"), left
" &&
		gosbx close --all >/dev/null
	fi &&
	no_claims
'

test_done
