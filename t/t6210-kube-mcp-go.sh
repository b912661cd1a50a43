#!/bin/sh
# t4020 (gosbx mcp, run_go_code over stdio) with --backend=kube against
# fake-kube: every sandbox is a SandboxClaim reached through the native
# port-forward (t/lib-backend.sh).
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t4020-mcp-go.sh
