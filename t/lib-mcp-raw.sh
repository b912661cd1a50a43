# Helpers for tests that drive `gosbx mcp` over stdio with the python
# client of t/lib_mcp_raw.py. Set MCP_SERVER (the server command) first;
# source t/lib-backend.sh too (no_claims).

MCP_CLIENT_NAME=$this_test
export MCP_CLIENT_NAME

# mcp_run <script>: run a python program with the client ("Client",
# ok(), err(), NS); the server's stderr goes to server.err
mcp_run() {
	PYTHONPATH="$TEST_DIRECTORY${PYTHONPATH:+:$PYTHONPATH}" \
		python3 -c "from lib_mcp_raw import *
$1"
}
