#!/bin/sh
# t4120-mcp-inspector (gosbx mcp driven by @modelcontextprotocol/inspector-cli)
# with --backend=kube against fake-kube: every sandbox is a SandboxClaim
# reached through the native port-forward (t/lib-backend.sh).
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t4120-mcp-inspector.sh
