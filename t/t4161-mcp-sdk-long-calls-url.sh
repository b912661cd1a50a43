#!/bin/sh
# t4160 (long silent calls through the official TypeScript SDK:
# heartbeats, the timeout argument) with --backend=url against one
# gosbx-runtime on a unix socket (t/lib-backend.sh)
GOSBX_TEST_BACKEND=url
. "$(dirname "$0")"/t4160-mcp-sdk-long-calls.sh
