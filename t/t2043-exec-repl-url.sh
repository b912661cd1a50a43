#!/bin/sh
# t2002 (the gosbx exec REPL on a terminal) with --backend=url against a
# gosbx-runtime on a unix socket (t/lib-backend.sh).
GOSBX_TEST_BACKEND=url
. "$(dirname "$0")"/t2002-exec-repl.sh
