#!/bin/sh
# t2050 (gosbx cp) with --backend=url against a gosbx-runtime on a unix
# socket (t/lib-backend.sh): the claim in <claim>:<path> is ignored.
GOSBX_TEST_BACKEND=url
. "$(dirname "$0")"/t2050-cp.sh
