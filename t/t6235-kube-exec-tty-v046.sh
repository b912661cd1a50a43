#!/bin/sh
# t2041 (gosbx exec -it in tmux) with --backend=kube against fake-kube,
# through a sandbox-router that carries plain HTTP only (as v0.4.6).
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t2041-exec-tty.sh
