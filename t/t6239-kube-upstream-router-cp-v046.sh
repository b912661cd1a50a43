#!/bin/sh
# t2050 (gosbx cp) with --backend=kube through the upstream
# sandbox-router v0.4.6 (GOSBX_TEST_UPSTREAM_ROUTER, see t/lib-kube.sh;
# skipped without it), where t6233 has the imitation.
GOSBX_TEST_BACKEND=kube
# smaller: fake-kube relays port-forwards slowly (t2050-cp.sh)
: "${T2050_ZEROS_BYTES:=8000000}"
BACKEND_KUBE_UPSTREAM_ROUTER=t2050
. "$(dirname "$0")"/t2050-cp.sh
