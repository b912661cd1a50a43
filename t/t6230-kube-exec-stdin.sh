#!/bin/sh
# t2040 (gosbx exec -i) with --backend=kube against fake-kube, through
# a sandbox-router that passes WebSocket upgrades (as v0.5.2 and later
# do): the interactive channel is one WebSocket inside the port-forward.
GOSBX_TEST_BACKEND=kube
BACKEND_KUBE_OPTS=--router-websocket
T2010_STDIN_MIB=16 # fake-kube relays port-forwards slowly (t2050-cp.sh)
. "$(dirname "$0")"/t2040-exec-stdin.sh
