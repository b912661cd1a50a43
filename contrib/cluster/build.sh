#!/bin/sh
# contrib/cluster/build.sh [--k8s=<version>] [--etcd=<version>]
#	[--agent-sandbox=<release>[,<release>...]] [--kwok=<version>]
#
# Builds a Kubernetes control plane from Go modules, for
# contrib/cluster/up.sh: etcd (the main package of the module
# go.etcd.io/etcd/server/v3), kube-apiserver, kube-controller-manager
# and kube-scheduler (k8s.io/kubernetes/cmd/..., through a small
# generated wrapper module with one replace per staging module
# k8s.io/api, k8s.io/apimachinery, ... at v0.<minor>.<patch>, as
# k8s.io/kubernetes replaces them by directories of its own tree), and
# the agent-sandbox controller of each release
# (sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller, its own
# module's requirements; default versions.sh's
# GOSBX_CLUSTER_CONTROLLERS), and kwok (sigs.k8s.io/kwok/cmd/kwok), the
# nodes, with its module's stages in kwok-<version>/stages.yaml and its
# PortForward CRD in kwok-<version>/crds/, and the Go sandbox-router of
# each release that has one (v0.5+).
# The go command fetches and verifies every module through the user's
# GOPROXY and GOSUMDB; nothing is downloaded any other way.
#
# Binaries go to a cache keyed by component and version:
#
#	${XDG_CACHE_HOME:-$HOME/.cache}/gosbx/cluster/<component>-<version>/bin/
#
# (GOSBX_CLUSTER_CACHE overrides the cache directory; the defaults are
# in versions.sh). A component
# already there is not built again ("cached"). Prints each component's
# build time. Builds run under nice, one at a time. Exit 1 when a build
# fails (the go command's errors on stderr), 129 on a usage error.
set -e

. "$(dirname "$0")"/versions.sh
k8s=$GOSBX_CLUSTER_K8S
etcd=$GOSBX_CLUSTER_ETCD
releases=$GOSBX_CLUSTER_CONTROLLERS
kwok=$GOSBX_CLUSTER_KWOK

usage="usage: contrib/cluster/build.sh [--k8s=<version>] [--etcd=<version>] [--agent-sandbox=<release>[,<release>...]] [--kwok=<version>]"
usage() {
	echo "$usage" >&2
	exit 129
}
for arg; do
	case $arg in
	--k8s=v*) k8s=${arg#--k8s=} ;;
	--etcd=v*) etcd=${arg#--etcd=} ;;
	--kwok=v*) kwok=${arg#--kwok=} ;;
	--agent-sandbox=v*)
		releases=$(echo "${arg#--agent-sandbox=}" | tr , " ")
		;;
	-h | --help)
		echo "$usage"
		exit 0
		;;
	*) usage ;;
	esac
done

cache=$GOSBX_CLUSTER_CACHE
command -v go >/dev/null || {
	echo "build.sh: the go command is needed (Go 1.26 or newer)" >&2
	exit 1
}
mkdir -p "$cache/src"

# k8s.io/kubernetes vX.Y.Z -> its staging modules at v0.Y.Z
minor=${k8s#v1.}
stagever=v0.$minor

# build <component> <version> <srcdir> <package>: go build into
# <component>-<version>/bin unless it is there; the time printed counts
# from $t0 when set (the wrapper module's download), else from now
build() {
	out=$cache/$1-$2/bin/$1
	if test -x "$out"; then
		echo "$1 $2: cached ($out)"
		return 0
	fi
	start=${t0:-$(date +%s)}
	t0=
	rm -rf "$cache/$1-$2.tmp"
	mkdir -p "$cache/$1-$2.tmp/bin"
	(cd "$3" && GOFLAGS=-mod=mod nice go build -trimpath \
		-ldflags "$ldflags" -o "$cache/$1-$2.tmp/bin/$1" "$4")
	rm -rf "${out%/bin/*}"
	mv "$cache/$1-$2.tmp" "${out%/bin/*}"
	echo "$1 $2: built in $(($(date +%s) - start)) s ($out)"
}

# wrapper <dir> <module@version> <package>...: a module requiring
# <module> whose tools.go imports the packages, tidied (go.sum filled
# from the checksum database); $replace holds its replace lines
wrapper() {
	test -f "$1/go.sum" && return 0
	rm -rf "$1.tmp"
	mkdir -p "$1.tmp"
	dir=$1
	mod=$2
	shift 2
	{
		echo "module gosbx.invalid/cluster"
		echo
		echo "go 1.26.0"
		echo
		echo "require ${mod%@*} ${mod#*@}"
		test -z "$replace" || printf '\nreplace (\n%s)\n' "$replace"
	} >"$dir.tmp/go.mod"
	{
		echo "//go:build tools"
		echo
		echo "package tools"
		echo
		for p; do
			echo "import _ \"$p\""
		done
	} >"$dir.tmp/tools.go"
	(cd "$dir.tmp" && GOFLAGS=-mod=mod go mod tidy)
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
}

# etcd: go.etcd.io/etcd/server/v3 is the etcd command itself
# (its main.go calls etcdmain.Main)
t0=$(date +%s)
if ! test -x "$cache/etcd-$etcd/bin/etcd"; then
	replace=
	wrapper "$cache/src/etcd-$etcd" "go.etcd.io/etcd/server/v3@$etcd" \
		go.etcd.io/etcd/server/v3/etcdmain
fi
ldflags="-s -w"
build etcd "$etcd" "$cache/src/etcd-$etcd" go.etcd.io/etcd/server/v3

# Kubernetes: the staging modules are the ones k8s.io/kubernetes's
# go.mod replaces by ./staging/src/<module>
src=$cache/src/kubernetes-$k8s
t0=$(date +%s)
if ! test -x "$cache/kube-apiserver-$k8s/bin/kube-apiserver" ||
	! test -x "$cache/kube-controller-manager-$k8s/bin/kube-controller-manager" ||
	! test -x "$cache/kube-scheduler-$k8s/bin/kube-scheduler"; then
	gomod=$(cd / && GOFLAGS='' go list -m -f '{{.GoMod}}' "k8s.io/kubernetes@$k8s")
	replace=$(sed -n "s|^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/src/.*|	\1 => \1 $stagever|p" "$gomod")
	if test -z "$replace"; then
		echo "build.sh: no staging modules in $gomod" >&2
		exit 1
	fi
	replace="$replace
"
	wrapper "$src" "k8s.io/kubernetes@$k8s" \
		k8s.io/kubernetes/cmd/kube-apiserver \
		k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler
fi
# what hack/lib/version.sh stamps, so that /version tells the release
ver="-X k8s.io/component-base/version.gitVersion=$k8s"
ver="$ver -X k8s.io/component-base/version.gitMajor=1"
ver="$ver -X k8s.io/component-base/version.gitMinor=${minor%%.*}"
ver="$ver -X k8s.io/component-base/version.gitTreeState=clean"
ver="$ver -X k8s.io/client-go/pkg/version.gitVersion=$k8s"
ver="$ver -X k8s.io/client-go/pkg/version.gitMajor=1"
ver="$ver -X k8s.io/client-go/pkg/version.gitMinor=${minor%%.*}"
ldflags="-s -w $ver"
build kube-apiserver "$k8s" "$src" k8s.io/kubernetes/cmd/kube-apiserver
build kube-controller-manager "$k8s" "$src" \
	k8s.io/kubernetes/cmd/kube-controller-manager
build kube-scheduler "$k8s" "$src" k8s.io/kubernetes/cmd/kube-scheduler
# the agent-sandbox controller: its module's own requirements
ldflags="-s -w"
for r in $releases; do
	t0=$(date +%s)
	if ! test -x "$cache/agent-sandbox-controller-$r/bin/agent-sandbox-controller"; then
		replace=
		wrapper "$cache/src/agent-sandbox-$r" \
			"sigs.k8s.io/agent-sandbox@$r" \
			sigs.k8s.io/agent-sandbox/controllers
	fi
	build agent-sandbox-controller "$r" "$cache/src/agent-sandbox-$r" \
		sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller
	# and its Go router (v0.5+; v0.4.x has only the Python one, which
	# up.sh runs from the module's source)
	moddir=$(cd "$cache/src/agent-sandbox-$r" && GOFLAGS=-mod=mod \
		go list -m -f '{{.Dir}}' sigs.k8s.io/agent-sandbox)
	if test -f "$moddir/sandbox-router/cmd/main.go"; then
		t0=
		build sandbox-router "$r" "$cache/src/agent-sandbox-$r" \
			sigs.k8s.io/agent-sandbox/sandbox-router/cmd
	fi
done
# kwok: its module's own requirements
t0=$(date +%s)
if ! test -x "$cache/kwok-$kwok/bin/kwok"; then
	replace=
	wrapper "$cache/src/kwok-$kwok" "sigs.k8s.io/kwok@$kwok" \
		sigs.k8s.io/kwok/pkg/kwok/cmd
fi
build kwok "$kwok" "$cache/src/kwok-$kwok" sigs.k8s.io/kwok/cmd/kwok
# and the module's "fast" stages (what kwokctl gives a cluster by
# default): nodes Ready at once with a lease, pods Running and Ready
if ! test -f "$cache/kwok-$kwok/stages.yaml"; then
	st=$(cd "$cache/src/kwok-$kwok" && GOFLAGS=-mod=mod \
		go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage
	for f in node/fast/node-initialize.yaml \
		node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
		pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml \
		pod/fast/pod-delete.yaml; do
		echo "---"
		cat "$st/$f"
	done >"$cache/kwok-$kwok/stages.yaml.tmp"
	mv "$cache/kwok-$kwok/stages.yaml.tmp" "$cache/kwok-$kwok/stages.yaml"
fi
# and its PortForward CRD (pods.py writes one a pod)
if ! test -f "$cache/kwok-$kwok/crds/kwok.x-k8s.io_portforwards.yaml"; then
	crd=$(cd "$cache/src/kwok-$kwok" && GOFLAGS=-mod=mod \
		go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/crd/bases/kwok.x-k8s.io_portforwards.yaml
	mkdir -p "$cache/kwok-$kwok/crds"
	cp "$crd" "$cache/kwok-$kwok/crds/kwok.x-k8s.io_portforwards.yaml.tmp"
	mv "$cache/kwok-$kwok/crds/kwok.x-k8s.io_portforwards.yaml.tmp" \
		"$cache/kwok-$kwok/crds/kwok.x-k8s.io_portforwards.yaml"
fi
echo "$cache"
