#!/bin/sh
test_description='gosbx mcp driven by @modelcontextprotocol/inspector-cli'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-mcp.sh"

GOSBX=$GOSBX_BUILD_DIR/gosbx

test_expect_success 'stdio: tools/list lists run_go_code' '
	mcp_inspector "$GOSBX" mcp --method tools/list >out 2>err &&
	mcp_check out "r[0].tools.some((t) => t.name === \"run_go_code\" &&
		t.inputSchema.required.includes(\"command\"))"
'

# inspector-cli reads the first page of tools/list only
test_expect_success 'stdio: tools/list shows all 16 tools of every toolset' '
	mcp_inspector "$GOSBX" mcp --tools=go,sandbox,jobs \
		--method tools/list >out 2>err &&
	mcp_check out "r[0].tools.length === 16 &&
		r[0].tools.some((t) => t.name === \"get_job_logs\")"
'

test_expect_success 'stdio: tools/call runs a command' '
	mcp_inspector "$GOSBX" mcp --method tools/call --tool-name run_go_code \
		--tool-arg "command=echo hi from the inspector" >out 2>err &&
	mcp_check out "r[0].isError === false &&
		r[0].content[0].text.includes(H(\"stdout\") +
			\"\\nhi from the inspector\\n\")" &&
	wait_no_claims
'

test_expect_success 'stdio: tools/call with files (a JSON object argument)' '
	mcp_inspector "$GOSBX" mcp --method tools/call --tool-name run_go_code \
		--tool-arg "files={\"dir/a.txt\":\"from a file\"}" \
		"command=cat dir/a.txt; exit 3" >out 2>err &&
	mcp_check out "r[0].isError === true &&
		r[0].content[0].text.startsWith(\"exit=3  (\") &&
		r[0].content[0].text.includes(H(\"stdout\") + \"\\nfrom a file\\n\")" &&
	wait_no_claims
'

test_expect_success 'http: start gosbx mcp --http' '
	mcp_http_start
'

test_expect_success 'http: tools/list and tools/call' '
	auth="Authorization: Bearer $(cat srv.token)" &&
	mcp_inspector "$(cat srv.url)" --transport http --header "$auth" \
		--method tools/list >out 2>err &&
	mcp_check out "r[0].tools.some((t) => t.name === \"run_go_code\")" &&
	mcp_inspector "$(cat srv.url)" --transport http --header "$auth" \
		--method tools/call --tool-name run_go_code \
		--tool-arg "command=echo over http" >out 2>err &&
	mcp_check out "r[0].isError === false &&
		r[0].content[0].text.includes(H(\"stdout\") + \"\\nover http\\n\")"
'

test_expect_success 'http: without the token the inspector fails' '
	{
		mcp_inspector "$(cat srv.url)" --transport http \
			--method tools/list >out 2>err
		echo $? >rc
	} &&
	test "$(cat rc)" = 1 &&
	test_grep "Failed to connect" err
'

test_expect_success 'http: the server stops cleanly, no sandbox left' '
	mcp_http_stop &&
	wait_no_claims
'

test_done
