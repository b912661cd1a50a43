#!/bin/sh
# t2050 (gosbx cp) with --backend=kube against fake-kube, through the
# port-forward and the sandbox-router.
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t2050-cp.sh
