#!/bin/sh
test_description='shutdownTime and a replaced router on a real control plane, agent-sandbox v0.4.6'
CLUSTER_RELEASE=v0.4.6
. "$(dirname "$0")"/t6682-cluster-lifecycle.sh
