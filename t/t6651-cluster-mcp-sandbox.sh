#!/bin/sh
# t4030 (the MCP sandbox toolset) on a real control plane:
# the release's controller and router, a real gosbx-runtime behind
# each of kwok's sandbox pods (GOSBX_TEST_BACKEND=cluster,
# t/lib-backend.sh)
GOSBX_TEST_BACKEND=cluster
. "$(dirname "$0")"/t4030-mcp-sandbox.sh
