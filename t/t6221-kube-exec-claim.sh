#!/bin/sh
# t2001 (gosbx exec: kept claims, concurrency, SIGINT) with
# --backend=kube against fake-kube (t/lib-backend.sh).
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t2001-exec-claim.sh
