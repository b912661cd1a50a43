#!/bin/sh
# t2100 (gosbx push) with --backend=kube against fake-kube
# (t/lib-backend.sh).
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t2100-push-basic.sh
