#!/bin/sh
# t2100 (gosbx push) on a real control plane with agent-sandbox v0.4.6:
# the release's controller and router, a real gosbx-runtime behind
# each of kwok's sandbox pods (GOSBX_TEST_BACKEND=cluster,
# t/lib-backend.sh)
GOSBX_TEST_BACKEND=cluster
CLUSTER_RELEASE=v0.4.6
. "$(dirname "$0")"/t2100-push-basic.sh
