#!/bin/sh
# t4170 (MCP Tasks through the official TypeScript SDK, stdio and HTTP,
# a client gone mid-task) on a real control plane: the release's
# controller and router, a real gosbx-runtime behind each of kwok's
# sandbox pods (GOSBX_TEST_BACKEND=cluster, t/lib-backend.sh)
GOSBX_TEST_BACKEND=cluster
BACKEND_KUBE_MEMORY_LIMIT=512Mi
. "$(dirname "$0")"/t4170-mcp-sdk-tasks.sh
