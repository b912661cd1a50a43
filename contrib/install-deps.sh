#!/bin/sh
# Install what gosbx needs to build, run and test on Debian/Ubuntu.
# Used by the README and by .ci/run.
#
# When every package is installed already, it says so and does nothing
# else (no apt-get, no sudo). Otherwise it runs apt-get as root: itself
# when it runs as root, else through sudo when sudo may be used (without
# a password, or with one typed at a terminal). When it may not, it
# prints the apt-get command to run as root and fails.
set -e

# Node.js (a sandbox toolchain, and the MCP test clients): keep one that
# is already installed (e.g. from NodeSource, whose nodejs conflicts with
# Debian's npm); otherwise take Debian's.
node=
command -v node >/dev/null 2>&1 || node=nodejs
command -v npm >/dev/null 2>&1 || node="$node npm"

# python3-fastapi, -httpx, -uvicorn: what the upstream sandbox-router
# (agent-sandbox v0.4.6, from the Go module proxy) runs on, for the
# tests that put it between gosbx and the runtime (t6237-t6240).
# libnghttp2-dev, libprotobuf-c-dev: the sandboxd gRPC ProcessService of
# gosbx-runtime (runtime/runtime-grpc.c).
# python3-pip, -venv: `pip install` in a venv through the allow-list
# proxy (t7103).
# mmdebstrap, podman, runc, slirp4netns: `make image` (the runtime image
# from Debian packages) and the tests that run it (t65xx, .ci/run).
# clang-format, cppcheck, shellcheck: make check.
# asciidoc-base, xmlto, docbook-xsl, man-db: the man pages that make
# install builds and installs. sudo: the README's first command as a
# user (.ci/run runs it as one).
pkgs="build-essential pkg-config ca-certificates
	libcurl4-openssl-dev libwslay-dev libmicrohttpd-dev libjansson-dev
	libarchive-dev libyaml-dev libreadline-dev libseccomp-dev libssl-dev
	libnghttp2-dev libprotobuf-c-dev
	bubblewrap
	golang-go python3 python3-yaml $node
	python3-fastapi python3-httpx python3-uvicorn python3-pip python3-venv
	libcmocka-dev curl openssl procps strace iproute2 tmux zsh
	clang-format cppcheck shellcheck
	clang libclang-rt-dev
	mmdebstrap podman runc slirp4netns uidmap
	asciidoc-base xmlto docbook-xsl man-db sudo"

# missing_packages: those of $pkgs that dpkg does not have installed,
# on one line
missing_packages() {
	# shellcheck disable=SC2086
	dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' $pkgs \
		2>/dev/null | awk '$1 == "ii" { print $2 }' >"$tmp"
	for p in $pkgs; do
		grep -qx "$p" "$tmp" || printf '%s ' "$p"
	done
}

# kubectl is not a Debian package: t6000 renders the manifests with
# `kubectl kustomize` and fails without it.
kubectl_note() {
	if ! command -v kubectl >/dev/null 2>&1; then
		echo "install-deps: kubectl not found: install it from the" \
			"Kubernetes apt repository or the Google Cloud SDK" \
			"(package kubectl); the manifest tests need kubectl" \
			"kustomize" >&2
	fi
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
missing=$(missing_packages)
missing=${missing% }
if [ -z "$missing" ]; then
	echo "install-deps: every package is installed"
	kubectl_note
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	# sudo without a password, or with one typed at a terminal
	if command -v sudo >/dev/null 2>&1 &&
		{ sudo -n true 2>/dev/null || { [ -t 0 ] && sudo -v; }; }; then
		rm -f "$tmp"
		exec sudo "$0" "$@"
	fi
	echo "install-deps: not root, and sudo is not there or may not be" \
		"used: as root, run" >&2
	echo "apt-get update && apt-get install -y --no-install-recommends" \
		"$missing" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
# shellcheck disable=SC2086
apt-get install -y --no-install-recommends $missing
kubectl_note
