#!/bin/sh
# t2060 (gosbx logs) with --backend=kube through the upstream
# sandbox-router v0.4.6 (GOSBX_TEST_UPSTREAM_ROUTER, see t/lib-kube.sh;
# skipped without it), where t6236 has the imitation.
GOSBX_TEST_BACKEND=kube
BACKEND_KUBE_UPSTREAM_ROUTER=t2060
. "$(dirname "$0")"/t2060-logs.sh
