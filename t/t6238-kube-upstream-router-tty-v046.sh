#!/bin/sh
# t2041 (gosbx exec -it in tmux) with --backend=kube through the
# upstream sandbox-router v0.4.6 (GOSBX_TEST_UPSTREAM_ROUTER, see
# t/lib-kube.sh; skipped without it), where t6235 has the imitation.
GOSBX_TEST_BACKEND=kube
BACKEND_KUBE_UPSTREAM_ROUTER=t2041
. "$(dirname "$0")"/t2041-exec-tty.sh
