#!/bin/sh
# Install what gosbx needs to build, run and test on Debian/Ubuntu.
# Run as root (or through sudo). Used by the README and by .ci/run.
set -e
if [ "$(id -u)" != 0 ]; then
	exec sudo "$0" "$@"
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends \
	build-essential pkg-config ca-certificates \
	libcurl4-openssl-dev libwslay-dev libmicrohttpd-dev libjansson-dev \
	libarchive-dev libyaml-dev libreadline-dev libseccomp-dev \
	bubblewrap \
	golang-go python3 nodejs npm \
	libcmocka-dev curl procps tmux strace iproute2 \
	clang-format cppcheck
