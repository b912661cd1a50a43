#!/bin/sh
# t4030 (gosbx mcp --tools=sandbox) with --backend=kube against
# fake-kube: every sandbox is a SandboxClaim reached through the native
# port-forward (t/lib-backend.sh).
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t4030-mcp-sandbox.sh
