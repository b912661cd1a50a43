#!/bin/sh
# t2010 (gosbx exec: several words are an exact argv, one word a shell
# line) with --backend=kube against fake-kube (t/lib-backend.sh).
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t2010-exec-argv.sh
