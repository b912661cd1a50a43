#!/bin/sh
# t2002 (the gosbx exec REPL on a terminal) with --backend=kube against
# fake-kube (t/lib-backend.sh).
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t2002-exec-repl.sh
