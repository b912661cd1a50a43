#!/bin/sh
# t4040 (the MCP jobs toolset) on a real control plane with agent-sandbox v0.4.6:
# the release's controller and router, a real gosbx-runtime behind
# each of kwok's sandbox pods (GOSBX_TEST_BACKEND=cluster,
# t/lib-backend.sh)
GOSBX_TEST_BACKEND=cluster
CLUSTER_RELEASE=v0.4.6
BACKEND_KUBE_MEMORY_LIMIT=512Mi
. "$(dirname "$0")"/t4040-mcp-jobs.sh
