#!/bin/sh
# t4160 (long silent calls through the official TypeScript SDK:
# heartbeats, the timeout argument) with --backend=kube against
# fake-kube: every sandbox is a SandboxClaim of a template limited to
# 512Mi (the jobs' limit), reached through the native port-forward
# (t/lib-backend.sh)
GOSBX_TEST_BACKEND=kube
BACKEND_KUBE_MEMORY_LIMIT=512Mi
. "$(dirname "$0")"/t4160-mcp-sdk-long-calls.sh
