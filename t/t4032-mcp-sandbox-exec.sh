#!/bin/sh
test_description='gosbx mcp --tools=sandbox: background commands (sandbox_exec_*)'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq PYTHON || test_skip_all 'python3 is not installed'
. "$TEST_DIRECTORY"/lib-backend.sh

MCP_SERVER="gosbx mcp --tools=sandbox --structured-content"
export MCP_SERVER

# a short state directory: the runtime's unix socket lives under it
XDG_STATE_HOME=$(mktemp -d /tmp/gosbx-t4032.XXXXXX) || exit 1
export XDG_STATE_HOME
test_atexit 'rm -rf "$XDG_STATE_HOME"'
test_atexit 'gosbx close --all'

. "$TEST_DIRECTORY/lib-mcp-raw.sh"

# poll_end(c, sb, id, since): poll with wait until the exec ended, gathering
# its output; returns (stdout, stderr, last structuredContent)
cat >helpers.py <<-\EOF
import os
from lib_mcp_raw import *

# --backend=url (t/lib-backend.sh): one runtime behind every sandbox name
ONE_RUNTIME = os.environ.get("GOSBX_BACKEND") == "url"

def exec_call(c, tool, sb, **kw):
    return c.call(tool, sandbox=sb, namespace=NS, **kw)

def poll_end(c, sb, id, since=0, tries=60):
    out = err = ""
    for _ in range(tries):
        res, text = ok(exec_call(c, "sandbox_exec_poll", sb, exec_id=id,
                                 since=since, wait=5))
        sc = res["structuredContent"]
        assert sc["since"] == since, sc
        out += sc["stdout"]
        err += sc["stderr"]
        since = sc["next"]
        if sc["state"] == "exited" and not sc["more"]:
            return out, err, sc, text
    raise AssertionError("exec %s did not end: %r" % (id, text))
EOF

run() {
	mcp_run "from helpers import *
$1"
}

test_expect_success 'start, poll with offsets, the end' '
	run "
c = Client()
ok(c.call(\"sandbox_start\", sandbox=\"e\", namespace=NS))
res, text = ok(exec_call(c, \"sandbox_exec_start\", \"e\",
    command=\"printf one; printf oops >&2; sleep 0.2; printf \\\"%s\\\\n\\\"\",
    args=[\"two words\"]))
sc = res[\"structuredContent\"]
id = sc[\"exec_id\"]
assert sc[\"state\"] == \"running\" and sc[\"stdin\"] is False, sc
assert text.startswith(\"exec_id=\" + id + \"  state=running\"), text
out, err_, sc, text = poll_end(c, \"e\", id)
assert out == \"onetwo words\\n\" and err_ == \"oops\", (out, err_)
assert sc[\"exit_code\"] == 0 and sc[\"reason\"] == \"exited\", sc
assert \"state=exited  exit=0  (\" in text, text
# from 0 again: all of it; from next: nothing new
res, text = ok(exec_call(c, \"sandbox_exec_poll\", \"e\", exec_id=id))
assert res[\"structuredContent\"][\"stdout\"] == \"onetwo words\\n\", res
end = res[\"structuredContent\"][\"next\"]
assert end == len(\"onetwo words\\noops\"), res
res, text = ok(exec_call(c, \"sandbox_exec_poll\", \"e\", exec_id=id,
    since=3))
assert res[\"structuredContent\"][\"stdout\"] in (\"two words\\n\", \"\"), res
res, text = ok(exec_call(c, \"sandbox_exec_poll\", \"e\", exec_id=id,
    since=end))
assert \"(no new output)\" in text, text
res, text = err(exec_call(c, \"sandbox_exec_poll\", \"e\", exec_id=id,
    since=end + 1))
assert \"past the end\" in text, text
# an exit code and an environment
res, text = ok(exec_call(c, \"sandbox_exec_start\", \"e\",
    command=\"echo \$GREETING; exit 3\", env=[\"GREETING=hey\"]))
out, err_, sc, text = poll_end(c, \"e\", res[\"structuredContent\"][\"exec_id\"])
assert out == \"hey\\n\" and sc[\"exit_code\"] == 3, sc
ok(c.call(\"sandbox_stop\", sandbox=\"e\", namespace=NS))
c.close()
" &&
	no_claims
'

test_expect_success 'bad arguments, unknown ids, a sandbox not started' '
	run "
c = Client()
res, text = err(exec_call(c, \"sandbox_exec_start\", \"nope\", command=\"true\"))
assert \"is not running\" in text, text
ok(c.call(\"sandbox_start\", sandbox=\"a\", namespace=NS))
ok(c.call(\"sandbox_start\", sandbox=\"b\", namespace=NS))
res, text = ok(exec_call(c, \"sandbox_exec_start\", \"a\", command=\"sleep 60\"))
id = res[\"structuredContent\"][\"exec_id\"]
# the id of another sandbox is unknown there (not on url, where every
# sandbox name reaches the one runtime that runs it)
if not ONE_RUNTIME:
    res, text = err(exec_call(c, \"sandbox_exec_poll\", \"b\", exec_id=id))
    assert \"unknown exec id\" in text, text
    res, text = err(exec_call(c, \"sandbox_exec_signal\", \"b\", exec_id=id))
    assert \"unknown exec id\" in text, text
    res, text = err(exec_call(c, \"sandbox_exec_close\", \"b\", exec_id=id))
    assert \"unknown exec id\" in text, text
for bad in [\"../../v1/exec\", \"j123\", \"J0123456789ab\", \"x\" * 5000]:
    res, text = err(exec_call(c, \"sandbox_exec_poll\", \"a\", exec_id=bad))
    assert \"exec id\" in text, text
res, text = err(exec_call(c, \"sandbox_exec_poll\", \"a\", exec_id=id,
    since=-1))
assert \"byte offset\" in text, text
res, text = err(exec_call(c, \"sandbox_exec_poll\", \"a\", exec_id=id,
    wait=100000))
assert \"--call-timeout\" in text, text
res, text = err(exec_call(c, \"sandbox_exec_start\", \"a\", command=\"true\",
    timeout=-1))
assert \"timeout\" in text, text
res, text = err(exec_call(c, \"sandbox_exec_start\", \"a\", command=\"true\",
    env=[\"1X=y\"]))
assert \"env[0]\" in text, text
res, text = err(exec_call(c, \"sandbox_exec_start\", \"a\", command=\"true\",
    bogus=1))
assert \"unknown argument\" in text, text
res, text = err(exec_call(c, \"sandbox_exec_start\", \"a\", command=\"true\",
    cwd=\"../..\"))
assert \"within workdir\" in text, text
ok(c.call(\"sandbox_run_command\", sandbox=\"a\", namespace=NS,
    command=\"mkdir -p sub\"))
res, text = ok(exec_call(c, \"sandbox_exec_start\", \"a\", command=\"pwd\",
    cwd=\"sub\"))
out, e, sc, text = poll_end(c, \"a\", res[\"structuredContent\"][\"exec_id\"])
assert out.endswith(\"/sub\\n\"), out
# a timeout ends it
res, text = ok(exec_call(c, \"sandbox_exec_start\", \"a\", command=\"sleep 30\",
    timeout=0.5))
out, e, sc, text = poll_end(c, \"a\", res[\"structuredContent\"][\"exec_id\"])
assert sc[\"reason\"] == \"timeout\", sc
c.close()
" &&
	no_claims
'

test_expect_success 'a command that prints without end: bounded polls, trimmed output' '
	run "
c = Client()
ok(c.call(\"sandbox_start\", sandbox=\"y\", namespace=NS))
res, text = ok(exec_call(c, \"sandbox_exec_start\", \"y\",
    command=\"yes 0123456789abcdef\"))
id = res[\"structuredContent\"][\"exec_id\"]
res, text = ok(exec_call(c, \"sandbox_exec_poll\", \"y\", exec_id=id, wait=5))
sc = res[\"structuredContent\"]
assert len(sc[\"stdout\"]) <= 65536, len(sc[\"stdout\"])
assert sc[\"next\"] == sc.get(\"trimmed_bytes\", 0) + len(sc[\"stdout\"]), sc
for _ in range(100):
    res, text = ok(exec_call(c, \"sandbox_exec_poll\", \"y\", exec_id=id,
        since=0, wait=1))
    sc = res[\"structuredContent\"]
    if sc.get(\"trimmed_bytes\"):
        break
else:
    raise AssertionError(text[:300])
assert sc[\"more\"] is True and sc[\"state\"] == \"running\", sc[\"state\"]
assert sc[\"next\"] == sc[\"trimmed_bytes\"] + len(sc[\"stdout\"]), sc[\"next\"]
assert len(sc[\"stdout\"]) == 65536, len(sc[\"stdout\"])
assert \"bytes of output trimmed\" in text.split(\"\\n\")[0], text[:300]
assert \"[more output: poll again from next]\" in text.split(\"\\n\")[0]
res, text = ok(exec_call(c, \"sandbox_exec_close\", \"y\", exec_id=id))
res, text = err(exec_call(c, \"sandbox_exec_poll\", \"y\", exec_id=id))
assert \"unknown exec id\" in text, text
res, text = err(exec_call(c, \"sandbox_exec_close\", \"y\", exec_id=id))
assert \"unknown exec id\" in text, text
c.close()
" &&
	no_claims
'

test_expect_success 'write_stdin to cat and read; eof; stdin not open' '
	run "
c = Client()
ok(c.call(\"sandbox_start\", sandbox=\"i\", namespace=NS))
res, text = ok(exec_call(c, \"sandbox_exec_start\", \"i\", command=\"cat\",
    stdin=True))
id = res[\"structuredContent\"][\"exec_id\"]
assert \"stdin=open\" in text, text
ok(exec_call(c, \"sandbox_exec_write_stdin\", \"i\", exec_id=id,
    data=\"hello\\n\"))
res, text = ok(exec_call(c, \"sandbox_exec_poll\", \"i\", exec_id=id, wait=10))
assert res[\"structuredContent\"][\"stdout\"] == \"hello\\n\", res
assert res[\"structuredContent\"][\"state\"] == \"running\", res
res, text = err(exec_call(c, \"sandbox_exec_write_stdin\", \"i\", exec_id=id,
    data=\"x\" * (1024 * 1024 + 1)))
assert \"above the limit\" in text, text
res, text = err(exec_call(c, \"sandbox_exec_write_stdin\", \"i\", exec_id=id))
assert \"missing argument\" in text, text
res, text = ok(exec_call(c, \"sandbox_exec_write_stdin\", \"i\", exec_id=id,
    data=\"bye\\n\", eof=True))
assert \"stdin closed\" in text, text
out, e, sc, text = poll_end(c, \"i\", id)
assert out == \"hello\\nbye\\n\" and sc[\"exit_code\"] == 0, (out, sc)
res, text = err(exec_call(c, \"sandbox_exec_write_stdin\", \"i\", exec_id=id,
    data=\"late\"))
assert \"is not open\" in text, text
# a shell read
res, text = ok(exec_call(c, \"sandbox_exec_start\", \"i\",
    command=\"read name; echo hi \$name\", stdin=True))
id = res[\"structuredContent\"][\"exec_id\"]
ok(exec_call(c, \"sandbox_exec_write_stdin\", \"i\", exec_id=id,
    data=\"model\\n\"))
out, e, sc, text = poll_end(c, \"i\", id)
assert out == \"hi model\\n\", out
# without stdin: cat reads end of file at once
res, text = ok(exec_call(c, \"sandbox_exec_start\", \"i\", command=\"cat\"))
id = res[\"structuredContent\"][\"exec_id\"]
out, e, sc, text = poll_end(c, \"i\", id)
assert out == \"\" and sc[\"exit_code\"] == 0, sc
res, text = err(exec_call(c, \"sandbox_exec_write_stdin\", \"i\", exec_id=id,
    data=\"x\"))
assert \"is not open\" in text, text
c.close()
" &&
	no_claims
'

test_expect_success 'signal: names, numbers, bad ones, an ended exec' '
	run "
c = Client()
ok(c.call(\"sandbox_start\", sandbox=\"s\", namespace=NS))
res, text = ok(exec_call(c, \"sandbox_exec_start\", \"s\", command=\"sleep 100\"))
id = res[\"structuredContent\"][\"exec_id\"]
for bad in [\"TERM; reboot\", \"\", 0, 99, True, \"x\" * 100]:
    res, text = err(exec_call(c, \"sandbox_exec_signal\", \"s\", exec_id=id,
        signal=bad))
    assert \"argument \x27signal\x27\" in text, text
res, text = err(exec_call(c, \"sandbox_exec_signal\", \"s\", exec_id=id,
    signal=\"NOPE\"))
assert \"unknown signal\" in text, text
res, text = ok(exec_call(c, \"sandbox_exec_signal\", \"s\", exec_id=id))
assert \"sent signal TERM\" in text, text
out, e, sc, text = poll_end(c, \"s\", id)
assert sc[\"signal\"] == 15 and \"signal=15\" in text, text
res, text = err(exec_call(c, \"sandbox_exec_signal\", \"s\", exec_id=id,
    signal=\"KILL\"))
assert \"has ended\" in text, text
res, text = ok(exec_call(c, \"sandbox_exec_start\", \"s\", command=\"sleep 100\"))
id = res[\"structuredContent\"][\"exec_id\"]
ok(exec_call(c, \"sandbox_exec_signal\", \"s\", exec_id=id, signal=9))
out, e, sc, text = poll_end(c, \"s\", id)
assert sc[\"signal\"] == 9, sc
c.close()
" &&
	no_claims
'

test_expect_success 'an exec outlives its gosbx mcp --persistent' '
	run "
c = Client(\"--persistent\")
ok(c.call(\"sandbox_start\", sandbox=\"p\", namespace=NS))
res, text = ok(exec_call(c, \"sandbox_exec_start\", \"p\",
    command=\"echo begun; while ! test -e go; do sleep 0.1; done; echo finished\"))
id = res[\"structuredContent\"][\"exec_id\"]
res, text = ok(exec_call(c, \"sandbox_exec_poll\", \"p\", exec_id=id, wait=10))
assert res[\"structuredContent\"][\"stdout\"] == \"begun\\n\", res
c.p.kill()
c.p.wait()
c = Client(\"--persistent\")
res, text = ok(c.call(\"sandbox_start\", sandbox=\"p\", namespace=NS))
assert \"reattached\" in text, text
res, text = ok(exec_call(c, \"sandbox_exec_poll\", \"p\", exec_id=id))
assert res[\"structuredContent\"][\"state\"] == \"running\", res
ok(c.call(\"sandbox_run_command\", sandbox=\"p\", namespace=NS,
    command=\"touch go\"))
out, e, sc, text = poll_end(c, \"p\", id)
assert out == \"begun\\nfinished\\n\" and sc[\"exit_code\"] == 0, (out, sc)
ok(c.call(\"sandbox_stop\", sandbox=\"p\", namespace=NS))
c.close()
" &&
	test_grep "reattaching to kept claim default-p-" server.err &&
	no_claims
'

test_done
