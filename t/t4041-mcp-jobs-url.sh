#!/bin/sh
# t4040 (gosbx mcp --tools=jobs, a --persistent server killed and
# restarted mid-job) with --backend=url against one gosbx-runtime on a
# unix socket (t/lib-backend.sh)
GOSBX_TEST_BACKEND=url
. "$(dirname "$0")"/t4040-mcp-jobs.sh
