#!/bin/sh
test_description='the real agent-sandbox controller v0.4.6 answers gosbx'
# t6610's checks with agent-sandbox v0.4.6: v1alpha1 claims that name a
# template
CLUSTER_RELEASE=v0.4.6
. "$(dirname "$0")"/t6610-cluster-controller.sh
