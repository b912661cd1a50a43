#!/bin/sh
# t2040 (gosbx exec -i) with --backend=kube against fake-kube, through
# a sandbox-router that carries plain HTTP only (as v0.4.6 does): the
# upgrade is refused on the way and gosbx falls back to exec-input (the
# output streams while the input goes through requests of its own).
GOSBX_TEST_BACKEND=kube
T2010_STDIN_MIB=16 # fake-kube relays port-forwards slowly (t2050-cp.sh)
. "$(dirname "$0")"/t2040-exec-stdin.sh
