#!/bin/sh
# t/crds.sh <dir>: the agent-sandbox CRDs of each release the tests
# use, from the Go module sigs.k8s.io/agent-sandbox at that version
# (its k8s/crds/), as <dir>/<version> -> the module cache. The go
# command fetches and verifies the module (go.sum of the checksum
# database) through the user's GOPROXY; nothing is copied by hand.
# Releases: AGENT_SANDBOX_RELEASES (default below). Run by
# t/run-tests.sh, t/perf/run.sh and t/lib-kube.sh when GOSBX_CRDS_DIR
# is not set; prints the directory. Exit 1 with the go command's error
# when a release cannot be had.
set -e
dir=${1:?usage: t/crds.sh <dir>}
releases=${AGENT_SANDBOX_RELEASES:-v0.4.6 v0.5.6 v1.0.3}
mkdir -p "$dir"
for v in $releases; do
	if test -f "$dir/$v/extensions.agents.x-k8s.io_sandboxclaims.yaml"; then
		continue
	fi
	# outside any module, whatever GOFLAGS says (-mod=vendor)
	out=$(cd / && GOFLAGS='' go mod download -json "sigs.k8s.io/agent-sandbox@$v") || {
		echo "t/crds.sh: cannot download sigs.k8s.io/agent-sandbox@$v:" >&2
		echo "$out" | sed -n 's/^[[:space:]]*"Error": //p' >&2
		exit 1
	}
	mod=$(echo "$out" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	if ! test -f "$mod/k8s/crds/extensions.agents.x-k8s.io_sandboxclaims.yaml"; then
		echo "t/crds.sh: no k8s/crds in sigs.k8s.io/agent-sandbox@$v ($mod)" >&2
		exit 1
	fi
	rm -f "$dir/$v"
	ln -s "$mod/k8s/crds" "$dir/$v"
done
echo "$dir"
