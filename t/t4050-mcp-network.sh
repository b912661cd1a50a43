#!/bin/sh
test_description='gosbx mcp: what the model is told of the sandbox, and its allow-list

The tools that run code end their description with the sandbox'"'"'s Go
version, whether Go modules are on, the hosts it may reach and the
limits (issue 18); sandbox_start may narrow the server'"'"'s --allow-net
for one sandbox, never widen it.'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq PYTHON || test_skip_all 'python3 is not installed'
. "$TEST_DIRECTORY"/lib-backend.sh
test_have_prereq LOCAL || test_skip_all 'the local backend only'

XDG_STATE_HOME=$(mktemp -d /tmp/gosbx-t4050.XXXXXX) || exit 1
export XDG_STATE_HOME
test_atexit 'rm -rf "$XDG_STATE_HOME"'
test_atexit 'gosbx close --all'

. "$TEST_DIRECTORY/lib-mcp-raw.sh"

go_version=$(go env GOVERSION)

test_expect_success 'run_go_code says the Go, the modules, the network and the limits' '
	MCP_SERVER="gosbx mcp --memory=1g --pids=100" &&
	export MCP_SERVER &&
	mcp_run "
c = Client()
tools = {t[\"name\"]: t for t in c.request(\"tools/list\", {})[\"result\"][\"tools\"]}
d = tools[\"run_go_code\"][\"description\"]
assert \"Build and run Go code in an isolated sandbox.\" in d, d
assert \"Go: $go_version\" in d, d
assert \"Go modules: on\" in d, d
assert \"network: none\" in d, d
assert \"1024 MiB of memory\" in d and \"100 processes\" in d, d
c.close()
"
'

test_expect_success 'with --allow-net and --modules=off the tools say so' '
	MCP_SERVER="gosbx mcp --tools=go,sandbox,jobs --allow-net=pypi.org,files.pythonhosted.org --modules=off" &&
	export MCP_SERVER &&
	mcp_run "
c = Client()
tools = {t[\"name\"]: t for t in c.request(\"tools/list\", {})[\"result\"][\"tools\"]}
for name in (\"run_go_code\", \"sandbox_run_code\", \"execute_python\"):
    d = tools[name][\"description\"]
    assert \"Go modules: off\" in d, (name, d)
    assert \"only pypi.org,files.pythonhosted.org\" in d, (name, d)
    assert \"pip install --user\" in d, (name, d)
c.close()
"
'

test_expect_success 'sandbox_start narrows the list, never widens it' '
	MCP_SERVER="gosbx mcp --tools=sandbox --allow-net=127.0.0.1:8080,*.example.org" &&
	export MCP_SERVER &&
	mcp_run "
c = Client()
res, text = err(c.call(\"sandbox_start\", sandbox=\"s1\", namespace=NS,
    config={\"allow_net\": [\"pypi.org\"]}))
assert \"not within what this server allows\" in text, text
res, text = err(c.call(\"sandbox_start\", sandbox=\"s1\", namespace=NS,
    config={\"allow_net\": [\"*.org\"]}))
assert \"not within\" in text, text
res, text = err(c.call(\"sandbox_start\", sandbox=\"s1\", namespace=NS,
    config={\"allow_net\": [\"a,b\"]}))
res, text = err(c.call(\"sandbox_start\", sandbox=\"s1\", namespace=NS,
    config={\"allow_net\": \"pypi.org\"}))
res, text = ok(c.call(\"sandbox_start\", sandbox=\"s1\", namespace=NS,
    config={\"allow_net\": [\"api.example.org\", \"127.0.0.1:8080\"]}))
res, text = c.call(\"sandbox_run_command\", sandbox=\"s1\", namespace=NS,
    command=\"curl\", args=[\"-sS\", \"--noproxy\", \"\", \"-p\", \"http://127.0.0.1:9/\"])
assert \"CONNECT tunnel failed, response 403\" in text, text
ok(c.call(\"sandbox_stop\", sandbox=\"s1\", namespace=NS))
c.close()
"
'

test_done
