# shellcheck shell=sh
# The default versions of contrib/cluster/build.sh and up.sh (sourced):
# the newest releases whose modules the go command serves and that
# build with Go 1.26 (Kubernetes v1.37 and etcd v3.6 need go 1.26.0).
GOSBX_CLUSTER_K8S=${GOSBX_CLUSTER_K8S:-v1.37.2}
GOSBX_CLUSTER_ETCD=${GOSBX_CLUSTER_ETCD:-v3.6.16}
# the agent-sandbox release whose CRDs up.sh applies (t/crds.sh)
GOSBX_CLUSTER_AGENT_SANDBOX=${GOSBX_CLUSTER_AGENT_SANDBOX:-v1.0.3}
# the agent-sandbox controllers build.sh builds
GOSBX_CLUSTER_CONTROLLERS=${GOSBX_CLUSTER_CONTROLLERS:-v1.0.3 v0.4.6}
# kwok, the nodes
GOSBX_CLUSTER_KWOK=${GOSBX_CLUSTER_KWOK:-v0.8.0}
# the binaries' cache (build.sh writes, up.sh reads)
GOSBX_CLUSTER_CACHE=${GOSBX_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gosbx/cluster}
