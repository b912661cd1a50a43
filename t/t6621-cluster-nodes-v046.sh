#!/bin/sh
test_description='claims get Ready on a real control plane with kwok nodes, agent-sandbox v0.4.6'
# t6620's checks with agent-sandbox v0.4.6 and its controller
CLUSTER_RELEASE=v0.4.6
. "$(dirname "$0")"/t6620-cluster-nodes.sh
