#!/bin/sh
# t2000 (gosbx exec: files, output, exit statuses, options) with
# --backend=kube against fake-kube (t/lib-backend.sh).
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t2000-exec-basic.sh
