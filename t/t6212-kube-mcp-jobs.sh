#!/bin/sh
# t4040 (gosbx mcp --tools=jobs) with --backend=kube against fake-kube:
# every job is a SandboxClaim of a template limited to 512Mi, reached
# through the native port-forward (t/lib-backend.sh).
GOSBX_TEST_BACKEND=kube
BACKEND_KUBE_MEMORY_LIMIT=512Mi
. "$(dirname "$0")"/t4040-mcp-jobs.sh
