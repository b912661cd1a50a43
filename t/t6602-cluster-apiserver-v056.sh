#!/bin/sh
test_description='a real kube-apiserver with the CRDs of agent-sandbox v0.5.6'
# t6600's checks against v0.5.6's CRDs: v1beta1 stored, v1alpha1 served
# through the controller's conversion webhook (not running here)
CLUSTER_RELEASE=v0.5.6
. "$(dirname "$0")"/t6600-cluster-apiserver.sh
