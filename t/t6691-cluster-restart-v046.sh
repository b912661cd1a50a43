#!/bin/sh
# t6690 (etcd compacted, the API server restarted, a real 410) with
# agent-sandbox v0.4.6
CLUSTER_RELEASE=v0.4.6
. "$(dirname "$0")"/t6690-cluster-restart.sh
