#!/bin/sh
test_description='a real kube-apiserver with the CRDs of agent-sandbox v0.4.6'
# t6600's checks against v0.4.6's CRDs: v1alpha1 only, claims name a
# template
CLUSTER_RELEASE=v0.4.6
. "$(dirname "$0")"/t6600-cluster-apiserver.sh
