#!/bin/sh
# t2040 (exec -i) on a real control plane:
# the release's controller and router, a real gosbx-runtime behind
# each of kwok's sandbox pods (GOSBX_TEST_BACKEND=cluster,
# t/lib-backend.sh)
GOSBX_TEST_BACKEND=cluster
T2010_STDIN_MIB=64 # through the API server, kwok and the router
. "$(dirname "$0")"/t2040-exec-stdin.sh
