#!/bin/sh
# t4032 (sandbox_exec_*: background commands of the sandbox toolset,
# a --persistent server killed and restarted mid-command) on a real
# control plane: the release's controller and router, a real
# gosbx-runtime behind each of kwok's sandbox pods
# (GOSBX_TEST_BACKEND=cluster, t/lib-backend.sh)
GOSBX_TEST_BACKEND=cluster
. "$(dirname "$0")"/t4032-mcp-sandbox-exec.sh
