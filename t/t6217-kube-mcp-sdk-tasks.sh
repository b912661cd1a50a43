#!/bin/sh
# t4170 (MCP Tasks through the official TypeScript SDK, stdio and HTTP)
# with --backend=kube against fake-kube: every task's sandbox is a
# SandboxClaim reached through the native port-forward (t/lib-backend.sh)
GOSBX_TEST_BACKEND=kube
BACKEND_KUBE_MEMORY_LIMIT=512Mi
. "$(dirname "$0")"/t4170-mcp-sdk-tasks.sh
