#!/bin/sh
# t4170 (MCP Tasks through the official TypeScript SDK, stdio and HTTP,
# a client gone mid-task) with --backend=url against one gosbx-runtime
# on a unix socket (t/lib-backend.sh)
GOSBX_TEST_BACKEND=url
. "$(dirname "$0")"/t4170-mcp-sdk-tasks.sh
