#!/bin/sh
# t2110 (detached commands) with --backend=kube against fake-kube, through
# the port-forward and the sandbox-router.
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t2110-jobs.sh
