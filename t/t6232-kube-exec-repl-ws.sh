#!/bin/sh
# t2002 (the gosbx exec REPL on a terminal) with --backend=kube against
# fake-kube, through a sandbox-router that passes WebSocket upgrades (as
# v0.5.2 and later do); t6223 runs it through one that does not.
GOSBX_TEST_BACKEND=kube
BACKEND_KUBE_OPTS=--router-websocket
. "$(dirname "$0")"/t2002-exec-repl.sh
