#!/bin/sh
# t2000 (gosbx exec) on a real control plane: agent-sandbox's controller
# and router, a real gosbx-runtime behind each of kwok's sandbox pods
# (GOSBX_TEST_BACKEND=cluster, t/lib-backend.sh)
GOSBX_TEST_BACKEND=cluster
. "$(dirname "$0")"/t2000-exec-basic.sh
