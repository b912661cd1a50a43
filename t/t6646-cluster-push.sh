#!/bin/sh
# t2100 (gosbx push) on a real control plane:
# the release's controller and router, a real gosbx-runtime behind
# each of kwok's sandbox pods (GOSBX_TEST_BACKEND=cluster,
# t/lib-backend.sh)
GOSBX_TEST_BACKEND=cluster
. "$(dirname "$0")"/t2100-push-basic.sh
