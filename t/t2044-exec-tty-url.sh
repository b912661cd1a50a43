#!/bin/sh
# t2041 (gosbx exec -it in tmux) with --backend=url against a
# gosbx-runtime on a unix socket (t/lib-backend.sh).
GOSBX_TEST_BACKEND=url
. "$(dirname "$0")"/t2041-exec-tty.sh
