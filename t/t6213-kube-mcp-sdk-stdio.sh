#!/bin/sh
# t4100-mcp-sdk-stdio (gosbx mcp over stdio, driven by the official TypeScript SDK)
# with --backend=kube against fake-kube: every sandbox is a SandboxClaim
# reached through the native port-forward (t/lib-backend.sh).
GOSBX_TEST_BACKEND=kube
BACKEND_KUBE_MEMORY_LIMIT=512Mi
. "$(dirname "$0")"/t4100-mcp-sdk-stdio.sh
