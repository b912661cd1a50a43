#!/bin/sh
# t2110 (detached commands) with --backend=url against a gosbx-runtime on
# a unix socket (t/lib-backend.sh).
GOSBX_TEST_BACKEND=url
. "$(dirname "$0")"/t2110-jobs.sh
