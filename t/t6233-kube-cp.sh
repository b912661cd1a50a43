#!/bin/sh
# t2050 (gosbx cp) with --backend=kube against fake-kube, through the
# port-forward and the sandbox-router.
GOSBX_TEST_BACKEND=kube
# smaller: fake-kube relays port-forwards slowly (t2050-cp.sh)
: "${T2050_ZEROS_BYTES:=8000000}"
. "$(dirname "$0")"/t2050-cp.sh
