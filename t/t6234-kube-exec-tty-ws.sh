#!/bin/sh
# t2041 (gosbx exec -it in tmux) with --backend=kube against fake-kube,
# through a sandbox-router that passes WebSocket upgrades (v0.5.2+).
GOSBX_TEST_BACKEND=kube
BACKEND_KUBE_OPTS=--router-websocket
. "$(dirname "$0")"/t2041-exec-tty.sh
