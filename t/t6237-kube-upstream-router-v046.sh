#!/bin/sh
# t2040 (gosbx exec -i) with --backend=kube through the upstream
# sandbox-router v0.4.6 itself (GOSBX_TEST_UPSTREAM_ROUTER, see
# t/lib-kube.sh; skipped without it), where t6231 has fake-kube's
# imitation of it: plain HTTP only, so gosbx falls back to exec-input.
GOSBX_TEST_BACKEND=kube
BACKEND_KUBE_UPSTREAM_ROUTER=t2040
T2010_STDIN_MIB=16 # fake-kube relays port-forwards slowly (t2050-cp.sh)
. "$(dirname "$0")"/t2040-exec-stdin.sh
