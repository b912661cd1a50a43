#!/bin/sh
# t2040 (gosbx exec -i) with --backend=url against a gosbx-runtime on
# a unix socket (t/lib-backend.sh).
GOSBX_TEST_BACKEND=url
: "${T2010_STDIN_MIB:=256}"
. "$(dirname "$0")"/t2040-exec-stdin.sh
