#!/bin/sh
# Install what gosbx needs to build, run and test on Debian/Ubuntu.
# Run as root (or through sudo). Used by the README and by .ci/run.
set -e
if [ "$(id -u)" != 0 ]; then
	exec sudo "$0" "$@"
fi
export DEBIAN_FRONTEND=noninteractive
# Node.js (a sandbox toolchain, and the MCP test clients): keep one that
# is already installed (e.g. from NodeSource, whose nodejs conflicts with
# Debian's npm); otherwise take Debian's.
node=
command -v node >/dev/null 2>&1 || node=nodejs
command -v npm >/dev/null 2>&1 || node="$node npm"
apt-get update
# shellcheck disable=SC2086
apt-get install -y --no-install-recommends \
	build-essential pkg-config ca-certificates \
	libcurl4-openssl-dev libwslay-dev libmicrohttpd-dev libjansson-dev \
	libarchive-dev libyaml-dev libreadline-dev libseccomp-dev libssl-dev \
	bubblewrap \
	golang-go python3 python3-yaml $node \
	python3-fastapi python3-httpx python3-uvicorn python3-pip python3-venv \
	libcmocka-dev curl openssl procps strace iproute2 tmux zsh \
	clang-format cppcheck \
	clang libclang-rt-dev \
	mmdebstrap podman runc slirp4netns uidmap
# python3-fastapi, -httpx, -uvicorn: what the upstream sandbox-router
# (agent-sandbox v0.4.6, from the Go module proxy) runs on, for the
# tests that put it between gosbx and the runtime (t6237-t6240).
# python3-pip, -venv: `pip install` in a venv through the allow-list
# proxy (t7103).
# mmdebstrap, podman, runc, slirp4netns: `make image` (the runtime image
# from Debian packages) and the tests that run it (t65xx, .ci/run).
# kubectl is not a Debian package: t6000 renders the manifests with
# `kubectl kustomize` and fails without it.
if ! command -v kubectl >/dev/null 2>&1; then
	echo "install-deps: kubectl not found: install it from the Kubernetes" \
		"apt repository or the Google Cloud SDK (package kubectl);" \
		"the manifest tests need kubectl kustomize" >&2
fi
