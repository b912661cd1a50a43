#!/bin/sh
# t2110 (detached commands: exec -d, jobs, logs --job, kill, wait, attach)
# on a real control plane: the release's controller and router, a real
# gosbx-runtime behind each of kwok's sandbox pods, every request through
# kube-apiserver's pods/portforward (GOSBX_TEST_BACKEND=cluster,
# t/lib-backend.sh)
GOSBX_TEST_BACKEND=cluster
. "$(dirname "$0")"/t2110-jobs.sh
