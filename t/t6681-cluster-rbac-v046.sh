#!/bin/sh
# t6680 (impersonation, a refused port-forward) with agent-sandbox v0.4.6
CLUSTER_RELEASE=v0.4.6
. "$(dirname "$0")"/t6680-cluster-rbac.sh
