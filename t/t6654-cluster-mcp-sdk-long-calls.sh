#!/bin/sh
# t4160 (long silent calls through the official TypeScript SDK:
# heartbeats, the timeout argument) on a real control plane: the
# release's controller and router, a real gosbx-runtime behind each of
# kwok's sandbox pods, a template limited to 512Mi (the jobs' limit)
# (GOSBX_TEST_BACKEND=cluster, t/lib-backend.sh)
GOSBX_TEST_BACKEND=cluster
BACKEND_KUBE_MEMORY_LIMIT=512Mi
. "$(dirname "$0")"/t4160-mcp-sdk-long-calls.sh
