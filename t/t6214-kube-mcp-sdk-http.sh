#!/bin/sh
# t4110-mcp-sdk-http (gosbx mcp over streamable HTTP, driven by the official TypeScript SDK)
# with --backend=kube against fake-kube: every sandbox is a SandboxClaim
# reached through the native port-forward (t/lib-backend.sh).
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t4110-mcp-sdk-http.sh
