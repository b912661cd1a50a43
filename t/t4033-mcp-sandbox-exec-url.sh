#!/bin/sh
# t4032 (sandbox_exec_*: background commands of the sandbox toolset,
# a --persistent server killed and restarted mid-command) with
# --backend=url against one gosbx-runtime on a unix socket
# (t/lib-backend.sh)
GOSBX_TEST_BACKEND=url
. "$(dirname "$0")"/t4032-mcp-sandbox-exec.sh
