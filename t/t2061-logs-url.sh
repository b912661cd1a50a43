#!/bin/sh
# t2060 (gosbx logs) with --backend=url against a gosbx-runtime on a unix
# socket (t/lib-backend.sh): GET /v1/logs of the runtime.
GOSBX_TEST_BACKEND=url
. "$(dirname "$0")"/t2060-logs.sh
