#!/bin/sh
# t4032 (sandbox_exec_*: background commands of the sandbox toolset,
# a --persistent server killed and restarted mid-command) with
# --backend=kube against fake-kube, through the port-forward and the
# sandbox-router (t/lib-backend.sh)
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t4032-mcp-sandbox-exec.sh
