#!/bin/sh
test_description='doctor --probe and the seed flows on a real control plane, agent-sandbox v0.4.6'
CLUSTER_RELEASE=v0.4.6
. "$(dirname "$0")"/t6670-cluster-seed-flows.sh
