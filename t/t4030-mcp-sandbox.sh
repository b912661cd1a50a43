#!/bin/sh
test_description='gosbx mcp --tools=sandbox: the sandbox toolset (seed 002)'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq PYTHON || test_skip_all 'python3 is not installed'
# local by default; t6211 runs this suite with GOSBX_TEST_BACKEND=kube
. "$TEST_DIRECTORY"/lib-backend.sh

# --structured-content: the checks below read structuredContent; the
# default (text alone) is checked at the end
MCP_SERVER="gosbx mcp --tools=sandbox --structured-content"
export MCP_SERVER

# A short state directory: the runtime's unix socket lives under it,
# and the trash directory's path is too long for sun_path (108 bytes)
# with claim names like "research-data-analysis-xxxxx".
XDG_STATE_HOME=$(mktemp -d /tmp/gosbx-t4030.XXXXXX) || exit 1
export XDG_STATE_HOME
test_atexit 'rm -rf "$XDG_STATE_HOME"'
test_atexit 'gosbx close --all'

. "$TEST_DIRECTORY/lib-mcp-raw.sh"

test_expect_success 'setup: the test client' '
	mcp_run "c = Client(); c.close()"
'

test_expect_success 'tools/list: ten tools with schemas and annotations' '
	mcp_run "
c = Client()
tools = {t[\"name\"]: t for t in c.request(\"tools/list\", {})[\"result\"][\"tools\"]}
assert sorted(tools) == [\"sandbox_exec_close\", \"sandbox_exec_poll\",
    \"sandbox_exec_signal\", \"sandbox_exec_start\",
    \"sandbox_exec_write_stdin\", \"sandbox_get_metrics\",
    \"sandbox_run_code\", \"sandbox_run_command\", \"sandbox_start\",
    \"sandbox_stop\"], tools
for t in tools.values():
    assert t[\"inputSchema\"][\"type\"] == \"object\"
    assert t[\"description\"]
m = tools[\"sandbox_get_metrics\"][\"annotations\"]
assert m[\"readOnlyHint\"] is True and m[\"idempotentHint\"] is True, m
assert tools[\"sandbox_stop\"][\"annotations\"][\"destructiveHint\"] is True
assert tools[\"sandbox_run_code\"][\"annotations\"].get(\"readOnlyHint\") is not True
assert tools[\"sandbox_start\"][\"inputSchema\"][\"required\"] == [\"sandbox\", \"namespace\"]
c.close()
"
'

test_expect_success 'run_code in python, nodejs, go and bash; stop; stop twice' '
	mcp_run "
c = Client()
res, text = ok(c.call(\"sandbox_start\", sandbox=\"s1\", namespace=NS))
assert \"started\" in text, text
res, text = ok(c.call(\"sandbox_run_code\", sandbox=\"s1\", namespace=NS,
    language=\"python\", code=\"import math\nprint(f\\\"root {math.sqrt(16)}\\\")\"))
assert res[\"structuredContent\"][\"stdout\"] == \"root 4.0\n\", res
assert res[\"structuredContent\"][\"exit_code\"] == 0
assert text.startswith(\"exit=0  (\"), text
assert \"── stdout ──\nroot 4.0\n\" in text, text
res, text = ok(c.call(\"sandbox_run_code\", sandbox=\"s1\", namespace=NS,
    language=\"nodejs\", code=\"console.log(JSON.stringify({message: \\\"hi\\\"}))\"))
assert res[\"structuredContent\"][\"stdout\"] == \"{\\\"message\\\":\\\"hi\\\"}\n\", res
res, text = ok(c.call(\"sandbox_run_code\", sandbox=\"s1\", namespace=NS,
    language=\"go\", code=\"package main\n\nimport \\\"fmt\\\"\n\nfunc main() { fmt.Println(\\\"hello from go\\\") }\n\"))
assert res[\"structuredContent\"][\"stdout\"] == \"hello from go\n\", res
res, text = ok(c.call(\"sandbox_run_code\", sandbox=\"s1\", namespace=NS,
    language=\"bash\", code=\"echo \$((6*7)); pwd\"))
out = res[\"structuredContent\"][\"stdout\"]
assert out == \"42\n%s\n\" % (\"$BACKEND_WORKDIR\" or out.split()[-1]), res
# code runs in /app and leaves no temporary files behind
res, text = ok(c.call(\"sandbox_run_code\", sandbox=\"s1\", namespace=NS,
    language=\"python\", code=\"open(\\\"kept.txt\\\",\\\"w\\\").write(\\\"x\\\")\"))
res, text = ok(c.call(\"sandbox_run_command\", sandbox=\"s1\", namespace=NS,
    command=\"ls\", args=[\"-A\"]))
assert res[\"structuredContent\"][\"stdout\"] == \"kept.txt\n\", res
res, text = ok(c.call(\"sandbox_stop\", sandbox=\"s1\", namespace=NS))
assert \"stopped\" in text
res, text = err(c.call(\"sandbox_stop\", sandbox=\"s1\", namespace=NS))
assert text == \"sandbox '"'"'default/s1'"'"' is not running; start it with sandbox_start\", text
c.close()
" &&
	test_grep "closing (deleting sandbox default-s1-" server.err &&
	no_claims
'

test_expect_success 'errors: non-zero exits, compile errors, bad language' '
	mcp_run "
c = Client()
ok(c.call(\"sandbox_start\", sandbox=\"e\", namespace=NS))
res, text = err(c.call(\"sandbox_run_code\", sandbox=\"e\", namespace=NS,
    language=\"python\", code=\"import sys\nprint(\\\"out\\\")\nsys.exit(3)\"))
assert res[\"structuredContent\"][\"exit_code\"] == 3, res
assert text.startswith(\"exit=3  (\"), text
res, text = err(c.call(\"sandbox_run_code\", sandbox=\"e\", namespace=NS,
    language=\"python\", code=\"raise ValueError(\\\"boom\\\")\"))
assert \"ValueError: boom\" in res[\"structuredContent\"][\"stderr\"], res
assert \"── stderr ──\" in text
res, text = err(c.call(\"sandbox_run_code\", sandbox=\"e\", namespace=NS,
    language=\"go\", code=\"package main\n\nfunc main() { broken() }\n\"))
assert res[\"structuredContent\"][\"exit_code\"] != 0, res
assert \"undefined: broken\" in res[\"structuredContent\"][\"stderr\"], res
res, text = err(c.call(\"sandbox_run_code\", sandbox=\"e\", namespace=NS,
    language=\"ruby\", code=\"puts 1\"))
assert \"unknown language\" in text and \"python\" in text, text
res, text = err(c.call(\"sandbox_run_code\", sandbox=\"e\", namespace=NS,
    language=\"python\"))
assert \"code\" in text, text
res, text = err(c.call(\"sandbox_run_code\", sandbox=\"e\", namespace=NS,
    language=\"python\", code=\"print(1)\", extra=1))
assert \"extra\" in text, text
res, text = err(c.call(\"sandbox_run_code\", namespace=NS,
    language=\"python\", code=\"print(1)\"))
assert \"sandbox\" in text, text
res, text = ok(c.call(\"sandbox_run_code\", sandbox=\"e\", namespace=NS,
    language=\"bash\", code=\"true\"))
assert text.endswith(\"\n\n(no output)\n\"), text
c.close()
"
'

test_expect_success 'running in a sandbox that was not started fails clearly' '
	mcp_run "
c = Client()
res, text = err(c.call(\"sandbox_run_code\", sandbox=\"nope\", namespace=\"dev\",
    language=\"python\", code=\"print(1)\"))
assert text == \"sandbox '"'"'dev/nope'"'"' is not running; start it with sandbox_start\", text
res, text = err(c.call(\"sandbox_run_command\", sandbox=\"nope\", namespace=\"dev\",
    command=\"ls\"))
assert \"is not running; start it with sandbox_start\" in text, text
# the same name in another namespace is another sandbox
ok(c.call(\"sandbox_start\", sandbox=\"nope\", namespace=\"other\"))
err(c.call(\"sandbox_run_command\", sandbox=\"nope\", namespace=\"dev\", command=\"true\"))
ok(c.call(\"sandbox_run_command\", sandbox=\"nope\", namespace=\"other\", command=\"true\"))
c.close()
" &&
	no_claims
'

test_expect_success 'start twice is an error; the first one keeps working' '
	mcp_run "
c = Client()
ok(c.call(\"sandbox_start\", sandbox=\"d\", namespace=NS))
ok(c.call(\"sandbox_run_command\", sandbox=\"d\", namespace=NS,
    command=\"touch\", args=[\"marker\"]))
res, text = err(c.call(\"sandbox_start\", sandbox=\"d\", namespace=NS))
assert \"already running\" in text, text
res, text = ok(c.call(\"sandbox_run_command\", sandbox=\"d\", namespace=NS,
    command=\"ls\"))
assert res[\"structuredContent\"][\"stdout\"] == \"marker\n\", res
c.close()
"
'

test_expect_success 'run_command quotes each argument' '
	mcp_run "
c = Client()
ok(c.call(\"sandbox_start\", sandbox=\"q\", namespace=NS))
args = [\"it'"'"'s\", \"\$HOME\", \"a b\", \"*\", \"\", \";echo no\"]
res, text = ok(c.call(\"sandbox_run_command\", sandbox=\"q\", namespace=NS,
    command=\"printf\", args=[\"[%s]\n\"] + args))
want = \"\".join(\"[%s]\n\" % a for a in args)
assert res[\"structuredContent\"][\"stdout\"] == want, (res, want)
res, text = ok(c.call(\"sandbox_run_command\", sandbox=\"q\", namespace=NS,
    command=\"ls\", args=[\"-la\", \".\"]))
assert \"total\" in res[\"structuredContent\"][\"stdout\"], res
res, text = err(c.call(\"sandbox_run_command\", sandbox=\"q\", namespace=NS,
    command=\"ls\", args=[\"/no/such/dir\"]))
assert res[\"structuredContent\"][\"exit_code\"] != 0
res, text = err(c.call(\"sandbox_run_command\", sandbox=\"q\", namespace=NS,
    command=\"ls\", args=[1]))
assert \"args[0]\" in text, text
res, text = err(c.call(\"sandbox_run_command\", sandbox=\"q\", namespace=NS,
    command=\"\"))
assert \"command\" in text, text
c.close()
"
'

# memory and cpus: the local backend enforces them; a kube sandbox gets
# its template's limits (t6207 tests how asked limits are checked there)
# (NOLIMITS: this user's local sandboxes get no limits; asked ones fail
# closed, tested below)
cfg_limits=
if test_have_prereq LOCAL && test_have_prereq LIMITS; then
	cfg_limits='"memory": 256, "cpus": 1,'
fi

test_expect_success 'config: envs applied to every command, image, memory, cpus' '
	mcp_run "
c = Client()
res, text = ok(c.call(\"sandbox_start\", sandbox=\"data-analysis\",
    namespace=\"research\", config={\"image\": \"microsandbox/python\",
    $cfg_limits \"envs\": [\"GREETING=hello world\", \"N=7\"]}))
assert res[\"structuredContent\"][\"image\"] == \"microsandbox/python\", res
res, text = ok(c.call(\"sandbox_run_code\", sandbox=\"data-analysis\",
    namespace=\"research\", language=\"python\",
    code=\"import os\nprint(os.environ[\\\"GREETING\\\"], os.environ[\\\"N\\\"])\"))
assert res[\"structuredContent\"][\"stdout\"] == \"hello world 7\n\", res
res, text = ok(c.call(\"sandbox_run_command\", sandbox=\"data-analysis\",
    namespace=\"research\", command=\"echo \$GREETING\"))
assert res[\"structuredContent\"][\"stdout\"] == \"hello world\n\", res
res, text = ok(c.call(\"sandbox_run_code\", sandbox=\"data-analysis\",
    namespace=\"research\", language=\"nodejs\", code=\"console.log(process.env.N)\"))
assert res[\"structuredContent\"][\"stdout\"] == \"7\n\", res
# (stopped again: a client holds at most 4 sandboxes)
for img in [\"node\", \"microsandbox/node\", \"go\", \"bash\", \"python\"]:
    ok(c.call(\"sandbox_start\", sandbox=\"img-\" + img.replace(\"/\", \"-\"),
       namespace=NS, config={\"image\": img}))
    ok(c.call(\"sandbox_stop\", sandbox=\"img-\" + img.replace(\"/\", \"-\"),
       namespace=NS))
c.close()
" &&
	test_grep "closing (deleting sandbox research-data-analys-" server.err &&
	no_claims
'

test_expect_success LOCAL,NOLIMITS 'config: limits this user cannot have fail closed' '
	mcp_run "
c = Client()
res, text = err(c.call(\"sandbox_start\", sandbox=\"lim\", namespace=NS,
    config={\"memory\": 256}))
assert \"cannot create sandbox: cgroup memory controller\" in text, text
c.close()
" &&
	no_claims
'

test_expect_success 'config refusals: volumes, ports, unknown image, bad values' '
	mcp_run "
c = Client()
res, text = err(c.call(\"sandbox_start\", sandbox=\"v\", namespace=NS,
    config={\"volumes\": [\"/tmp:/data\"]}))
assert \"volumes\" in text and \"not supported\" in text, text
res, text = err(c.call(\"sandbox_start\", sandbox=\"v\", namespace=NS,
    config={\"ports\": [\"8080:80\"]}))
assert \"ports\" in text and \"not supported\" in text, text
res, text = err(c.call(\"sandbox_start\", sandbox=\"v\", namespace=NS,
    config={\"image\": \"ubuntu:22.04\"}))
assert \"unknown image\" in text and \"microsandbox/python\" in text, text
for cfg in [{\"memory\": -1}, {\"memory\": \"1G\"}, {\"cpus\": 0},
            {\"envs\": [\"NOEQUALS\"]}, {\"envs\": [\"=x\"]}, {\"envs\": \"A=1\"},
            {\"colour\": \"red\"}, []]:
    res, text = err(c.call(\"sandbox_start\", sandbox=\"v\", namespace=NS, config=cfg))
# nothing was started by the refusals
res, text = err(c.call(\"sandbox_run_command\", sandbox=\"v\", namespace=NS,
    command=\"true\"))
assert \"not running\" in text, text
# empty volumes and ports are fine
ok(c.call(\"sandbox_start\", sandbox=\"v\", namespace=NS,
    config={\"volumes\": [], \"ports\": []}))
c.close()
" &&
	no_claims
'

test_expect_success 'get_metrics: all, one namespace, one sandbox, unknown' '
	mcp_run "
import json
c = Client()
ok(c.call(\"sandbox_start\", sandbox=\"a\", namespace=\"n1\"))
ok(c.call(\"sandbox_start\", sandbox=\"b\", namespace=\"n1\"))
ok(c.call(\"sandbox_start\", sandbox=\"a\", namespace=\"n2\"))
ok(c.call(\"sandbox_run_command\", sandbox=\"a\", namespace=\"n1\",
    command=\"head -c 100000 /dev/zero >blob\"))
res, text = ok(c.call(\"sandbox_get_metrics\", namespace=\"*\"))
assert json.loads(text) == res[\"structuredContent\"], text
l = res[\"structuredContent\"][\"sandboxes\"]
assert sorted((m[\"namespace\"], m[\"name\"]) for m in l) == [
    (\"n1\", \"a\"), (\"n1\", \"b\"), (\"n2\", \"a\")], l
for m in l:
    assert m[\"running\"] is True, m
    for k in (\"cpu_usage\", \"memory_usage\", \"disk_usage\"):
        assert isinstance(m[k], (int, float)) and m[k] >= 0, m
    assert m[\"memory_usage\"] > 0, m
big = [m for m in l if (m[\"namespace\"], m[\"name\"]) == (\"n1\", \"a\")][0]
assert big[\"disk_usage\"] >= 100000, big
res, text = ok(c.call(\"sandbox_get_metrics\", namespace=\"n1\"))
assert sorted(m[\"name\"] for m in res[\"structuredContent\"][\"sandboxes\"]) == [\"a\", \"b\"], res
res, text = ok(c.call(\"sandbox_get_metrics\", namespace=\"n2\", sandbox=\"a\"))
l = res[\"structuredContent\"][\"sandboxes\"]
assert len(l) == 1 and l[0][\"namespace\"] == \"n2\" and l[0][\"running\"], l
res, text = ok(c.call(\"sandbox_get_metrics\", namespace=\"n1\", sandbox=\"zzz\"))
l = res[\"structuredContent\"][\"sandboxes\"]
assert len(l) == 1 and l[0][\"name\"] == \"zzz\" and l[0][\"running\"] is False, l
ok(c.call(\"sandbox_stop\", sandbox=\"b\", namespace=\"n1\"))
res, text = ok(c.call(\"sandbox_get_metrics\", namespace=\"n1\", sandbox=\"b\"))
assert res[\"structuredContent\"][\"sandboxes\"][0][\"running\"] is False, res
res, text = ok(c.call(\"sandbox_get_metrics\", namespace=\"empty\"))
assert res[\"structuredContent\"][\"sandboxes\"] == [], res
err(c.call(\"sandbox_get_metrics\"))
c.close()
" &&
	no_claims
'

test_expect_success 'the client going away deletes every sandbox' '
	mcp_run "
c = Client()
ok(c.call(\"sandbox_start\", sandbox=\"x\", namespace=NS))
ok(c.call(\"sandbox_start\", sandbox=\"y\", namespace=NS))
c.close()
" &&
	no_claims
'

test_expect_success '--persistent keeps the sandboxes' '
	mcp_run "
c = Client(\"--persistent\")
ok(c.call(\"sandbox_start\", sandbox=\"p\", namespace=NS))
c.close()
" &&
	test_grep "disconnecting (claim default-p-" server.err &&
	! no_claims 2>/dev/null &&
	gosbx close --all &&
	no_claims
'


test_expect_success SUSPEND 'sandbox_stop keep suspends; sandbox_start resumes it' '
	mcp_run "
c = Client(\"--persistent\")
ok(c.call(\"sandbox_start\", sandbox=\"k\", namespace=NS))
ok(c.call(\"sandbox_run_command\", sandbox=\"k\", namespace=NS,
          command=\"echo kept >f\"))
res, text = err(c.call(\"sandbox_stop\", sandbox=\"k\", namespace=NS,
                       keep=\"yes\"))
assert text == \"keep must be a boolean\", text
res, text = ok(c.call(\"sandbox_stop\", sandbox=\"k\", namespace=NS,
                      keep=True))
assert \"suspended (claim default-k-\" in text, text
sc = res[\"structuredContent\"]
assert sc[\"suspended\"] is True and sc[\"running\"] is False, sc
open(\"claim\", \"w\").write(sc[\"claim\"])
res, text = err(c.call(\"sandbox_run_command\", sandbox=\"k\", namespace=NS,
                       command=\"true\"))
res, text = ok(c.call(\"sandbox_start\", sandbox=\"k\", namespace=NS))
assert \"resumed\" in text and sc[\"claim\"] in text, text
res, text = ok(c.call(\"sandbox_run_command\", sandbox=\"k\", namespace=NS,
                      command=\"cat f\"))
assert res[\"structuredContent\"][\"stdout\"] == \"kept\\n\", res
ok(c.call(\"sandbox_stop\", sandbox=\"k\", namespace=NS))
c.close()
" &&
	test_grep "suspending claim default-k-" server.err &&
	test_grep "resuming claim default-k-" server.err &&
	no_claims
'

test_expect_success 'sandbox_stop keep needs --persistent' '
	mcp_run "
c = Client()
ok(c.call(\"sandbox_start\", sandbox=\"k\", namespace=NS))
res, text = err(c.call(\"sandbox_stop\", sandbox=\"k\", namespace=NS,
                       keep=True))
assert \"start it with --persistent\" in text, text
ok(c.call(\"sandbox_stop\", sandbox=\"k\", namespace=NS))
c.close()
" &&
	no_claims
'


test_expect_success 'by default: text alone, no outputSchema, no structuredContent' '
	MCP_SERVER="gosbx mcp --tools=sandbox" mcp_run "
c = Client()
tools = c.request(\"tools/list\", {})[\"result\"][\"tools\"]
assert len(tools) == 10 and not any(\"outputSchema\" in t for t in tools), tools
res, text = ok(c.call(\"sandbox_start\", sandbox=\"t\", namespace=NS))
assert \"structuredContent\" not in res and \"started\" in text, res
res, text = ok(c.call(\"sandbox_run_command\", sandbox=\"t\", namespace=NS,
                      command=\"echo\", args=[\"hi\"]))
assert \"structuredContent\" not in res, res
assert text.startswith(\"exit=0  (\"), text
assert text.endswith(\"\\n\\u2500\\u2500 stdout \\u2500\\u2500\\nhi\\n\"), text
res, text = ok(c.call(\"sandbox_get_metrics\", namespace=NS))
assert \"structuredContent\" not in res, res
assert json.loads(text)[\"sandboxes\"][0][\"name\"] == \"t\", text
ok(c.call(\"sandbox_stop\", sandbox=\"t\", namespace=NS))
c.close()
" &&
	no_claims
'

test_expect_success '--call-timeout cuts sandbox_run_command, and the text says so' '
	MCP_SERVER="gosbx mcp --tools=sandbox --call-timeout=1s" mcp_run "
c = Client()
ok(c.call(\"sandbox_start\", sandbox=\"t\", namespace=NS))
res, text = err(c.call(\"sandbox_run_command\", sandbox=\"t\", namespace=NS,
                       command=\"echo started; exec sleep 4030.$$\"))
assert \"  reason=timeout  signal=9  \" in text.split(\"\\n\")[0], text
assert \"started\" in text, text
ok(c.call(\"sandbox_stop\", sandbox=\"t\", namespace=NS))
c.close()
" &&
	! pgrep -f "^sleep 4030.$$\$" &&
	no_claims
'

test_done
