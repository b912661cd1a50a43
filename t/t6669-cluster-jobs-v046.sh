#!/bin/sh
# t2110 (detached commands) on a real control plane with agent-sandbox
# v0.4.6 (GOSBX_TEST_BACKEND=cluster, t/lib-backend.sh)
GOSBX_TEST_BACKEND=cluster
CLUSTER_RELEASE=v0.4.6
. "$(dirname "$0")"/t2110-jobs.sh
