#!/bin/sh
# t2060 (gosbx logs) with --backend=kube against fake-kube, through the
# port-forward and the sandbox-router: GET /v1/logs of the runtime.
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t2060-logs.sh
