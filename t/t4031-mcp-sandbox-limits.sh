#!/bin/sh
test_description='gosbx mcp --tools=sandbox: the operator limits every sandbox

sandbox_start config.memory and config.cpus may lower the limits of
gosbx mcp --memory/--cpus, never raise them; a client holds at most
--max-sandboxes sandboxes; the tool description says both.'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq PYTHON || test_skip_all 'python3 is not installed'
. "$TEST_DIRECTORY"/lib-backend.sh

# memory limits are enforced (cgroups) on this host
isolate-run --memory=64m -- true 2>/dev/null && test_set_prereq MEMCG

MCP_SERVER="gosbx mcp --tools=sandbox --memory=256m --cpus=1 --max-sandboxes=2 --structured-content"
export MCP_SERVER

# short: the runtime's unix socket lives under it (sun_path)
XDG_STATE_HOME=$(mktemp -d /tmp/gosbx-t4031.XXXXXX) || exit 1
export XDG_STATE_HOME
test_atexit 'rm -rf "$XDG_STATE_HOME"'
test_atexit 'gosbx close --all'

. "$TEST_DIRECTORY/lib-mcp-raw.sh"

test_expect_success 'the description states the limits and the cap' '
	mcp_run "
c = Client()
tools = {t[\"name\"]: t for t in c.request(\"tools/list\", {})[\"result\"][\"tools\"]}
d = tools[\"sandbox_start\"][\"description\"]
assert \"every sandbox gets at most 256 MiB of memory and a CPU limit of 1\" in d, d
assert \"may lower these, never raise them\" in d, d
assert \"at most 2 sandboxes at once\" in d, d
c.close()
" &&
	MCP_SERVER="gosbx mcp --tools=sandbox" mcp_run "
c = Client()
tools = {t[\"name\"]: t for t in c.request(\"tools/list\", {})[\"result\"][\"tools\"]}
d = tools[\"sandbox_start\"][\"description\"]
assert \"at most 2048 MiB of memory and a CPU limit of 2\" in d, d
assert \"at most 4 sandboxes at once\" in d, d
c.close()
"
'

test_expect_success LIMITS 'config above the limits is clamped, and the result says so' '
	mcp_run "
c = Client()
res, text = ok(c.call(\"sandbox_start\", sandbox=\"big\", namespace=NS,
    config={\"memory\": 95000000, \"cpus\": 1000}))
assert \"memory 256 MiB, cpus 1)\" in text, text
assert \"config.memory 95000000 MiB is above this server\" in text, text
assert \"the sandbox gets 256 MiB\" in text, text
assert \"config.cpus 1000 is above this server\" in text, text
s = res[\"structuredContent\"]
assert s[\"memory\"] == 256 and s[\"cpus\"] == 1, s
# below the limits: taken as asked, nothing to say
res, text = ok(c.call(\"sandbox_start\", sandbox=\"small\", namespace=NS,
    config={\"memory\": 128, \"cpus\": 0.5}))
assert \"memory 128 MiB, cpus 0.5)\" in text and \"above\" not in text, text
c.close()
" &&
	no_claims
'

test_expect_success MEMCG 'the clamped limit is enforced' '
	mcp_run "
c = Client()
ok(c.call(\"sandbox_start\", sandbox=\"big\", namespace=NS,
    config={\"memory\": 95000000}))
res, text = c.call(\"sandbox_run_code\", sandbox=\"big\", namespace=NS,
    language=\"python\",
    code=\"b = bytearray(400 << 20)\nprint(\\\"allocated\\\")\")
assert res[\"isError\"] is True, text
assert \"allocated\" not in text, text
res, text = ok(c.call(\"sandbox_run_code\", sandbox=\"big\", namespace=NS,
    language=\"python\",
    code=\"b = bytearray(100 << 20)\nprint(\\\"allocated\\\")\"))
assert \"allocated\" in text, text
c.close()
" &&
	no_claims
'

# a user who cannot enforce limits (NOLIMITS): the operator's fail closed
test_expect_success NOLIMITS 'an operator limit this user cannot enforce: no sandbox' '
	mcp_run "
c = Client()
res, text = err(c.call(\"sandbox_start\", sandbox=\"big\", namespace=NS))
assert \"cannot create sandbox: cgroup memory controller\" in text, text
c.close()
" &&
	no_claims
'

# the cap holds with or without limits this user can enforce
test_expect_success 'a client holds at most --max-sandboxes sandboxes' '
	MCP_SERVER="gosbx mcp --tools=sandbox --memory=0 --cpus=0 --max-sandboxes=2 --structured-content" \
	mcp_run "
c = Client()
ok(c.call(\"sandbox_start\", sandbox=\"s1\", namespace=NS))
ok(c.call(\"sandbox_start\", sandbox=\"s2\", namespace=\"other\"))
res, text = err(c.call(\"sandbox_start\", sandbox=\"s3\", namespace=NS))
assert text == \"cannot start sandbox '"'"'default/s3'"'"': this client already has 2 sandboxes, the most this server allows (gosbx mcp --max-sandboxes); stop one with sandbox_stop first\", text
# another client has its own count
d = Client()
ok(d.call(\"sandbox_start\", sandbox=\"s3\", namespace=NS))
d.close()
ok(c.call(\"sandbox_stop\", sandbox=\"s1\", namespace=NS))
ok(c.call(\"sandbox_start\", sandbox=\"s3\", namespace=NS))
res, text = ok(c.call(\"sandbox_get_metrics\", namespace=\"*\"))
assert len(res[\"structuredContent\"][\"sandboxes\"]) == 2, res
c.close()
" &&
	no_claims
'

test_expect_success 'a bad --max-sandboxes is a usage error' '
	test_expect_code 129 gosbx mcp --tools=sandbox --max-sandboxes=0 </dev/null
'

test_done
