#!/bin/sh
# t2020 (gosbx cp) with --backend=kube against fake-kube, through the
# port-forward and the sandbox-router.
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t2020-cp.sh
