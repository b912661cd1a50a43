#!/bin/sh
# Put a Go release into a directory as its GOROOT, for the runtime
# image. The release comes as the Go module golang.org/toolchain, the
# one the go command itself switches to for GOTOOLCHAIN=go1.x.y: `go mod
# download` fetches it through GOPROXY and checks it against the
# checksum database (GOSUMDB) before it enters the module cache. No
# download site, and no checksum of our own to keep up to date.
# runtime-image/build-debian.sh and the Dockerfile's builder stage run
# this, so both images carry the same release.
#
# Usage: runtime-image/go-toolchain.sh [--go=<x.y.z>] [--cache=<dir>] <goroot>
#
#   --go     the Go release (default: that of the `go` on PATH when it is
#            a release of Go 1.26 or later, so the image agrees with the
#            local backend, which runs that go; else DEFAULT_GO below)
#   --cache  the module cache that keeps verified toolchains between
#            runs, one a release (default
#            ${XDG_CACHE_HOME:-$HOME/.cache}/gosbx/image-go; rm -rf
#            frees it)
#   <goroot> where the toolchain goes; it must not exist yet
#
# Needs a go command on PATH to fetch with (Go 1.19 or later: Debian
# bookworm's golang-go will do, it only downloads) and dpkg (the Debian
# architecture of the image). Refuses GOSUMDB=off: the toolchain would
# not be checked.
set -eu

# The release the seed runs; runtime-image/Dockerfile's GO_VERSION is
# the same (t/t6500-runtime-image.sh checks).
DEFAULT_GO=1.26.8

GO=
CACHE=${XDG_CACHE_HOME:-${HOME:?}/.cache}/gosbx/image-go
DEST=

die() {
	printf 'go-toolchain: %s\n' "$*" >&2
	exit 1
}

for arg; do
	case "$arg" in
	--go=*) GO=${arg#--go=} ;;
	--cache=*) CACHE=${arg#--cache=} ;;
	-h | --help)
		sed -n '/^# Usage/,/^# not be checked/p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*) die "unknown option '$arg' (see --help)" ;;
	*)
		[ -z "$DEST" ] || die "more than one <goroot> ('$DEST', '$arg')"
		DEST=$arg
		;;
	esac
done
[ -n "$DEST" ] || die "no <goroot> given (see --help)"
case "$DEST" in /*) ;; *) DEST=$PWD/$DEST ;; esac
case "$CACHE" in /*) ;; *) CACHE=$PWD/$CACHE ;; esac
# shellcheck disable=SC2015 # die when either test fails
[ ! -e "$DEST" ] && [ ! -L "$DEST" ] || die "'$DEST' exists already"
command -v go >/dev/null 2>&1 ||
	die "no go command on PATH to fetch the toolchain (Debian: golang-go)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/gosbx-go.XXXXXX")
made=
# a <goroot> half made is removed (it did not exist before)
trap 'rm -rf "$TMP"; [ -n "$made" ] || rm -rf "$DEST"' EXIT
# outside any module (a go.mod above the cwd would be consulted)
cd "$TMP"

# the go on PATH, not a toolchain it would switch to
if [ -z "$GO" ]; then
	have=$(GOTOOLCHAIN=local go env GOVERSION 2>/dev/null || true)
	minor=$(expr "$have" : 'go1\.\([0-9][0-9]*\)\.[0-9][0-9]*$' || true)
	if [ -n "$minor" ] && [ "$minor" -ge 26 ]; then
		GO=${have#go}
		echo >&2 "go-toolchain: Go $GO, that of the go on PATH"
	else
		GO=$DEFAULT_GO
		echo >&2 "go-toolchain: Go $GO (the go on PATH, '${have:-none}'," \
			"is no release of 1.26 or later)"
	fi
fi
expr "$GO" : '[1-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*$' >/dev/null ||
	die "'$GO' is not a Go release x.y.z (e.g. $DEFAULT_GO)"

# the toolchain modules' names for the Debian architectures
command -v dpkg >/dev/null 2>&1 || die "dpkg not found: build on Debian"
arch=$(dpkg --print-architecture)
case "$arch" in
amd64 | arm64 | loong64 | riscv64 | s390x) goarch=$arch ;;
i386) goarch=386 ;;
armhf) goarch=armv6l ;;
ppc64el) goarch=ppc64le ;;
*) die "no Go toolchain module for the architecture '$arch'" ;;
esac
MOD=golang.org/toolchain@v0.0.1-go$GO.linux-$goarch

# The user's proxy and checksum database, and nothing else of their go
# configuration (GOENV=off): no GONOSUMDB or GOPRIVATE pattern lets the
# toolchain past the check.
proxy=$(go env GOPROXY)
sumdb=$(go env GOSUMDB)
case "$sumdb" in
off | "") die "GOSUMDB is '${sumdb:-}': the toolchain would not be checked" ;;
esac
mkdir -p "$CACHE"
echo >&2 "go-toolchain: go mod download $MOD (GOPROXY=$proxy, GOSUMDB=$sumdb)"
if ! GOENV=off GOPROXY=$proxy GOSUMDB=$sumdb GOMODCACHE=$CACHE \
	GOFLAGS=-modcacherw GOTOOLCHAIN=local GOWORK=off \
	GONOSUMDB='' GONOSUMCHECK='' GONOVERIFY='' GOPRIVATE='' GOINSECURE='' \
	go mod download -json "$MOD" >"$TMP/download.json"; then
	cat >&2 "$TMP/download.json"
	die "cannot download $MOD"
fi
dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' \
	"$TMP/download.json")
[ -f "$dir/VERSION" ] || die "no Go toolchain in '$dir' (go mod download)"
[ "$(sed -n 1p "$dir/VERSION")" = "go$GO" ] ||
	die "'$dir/VERSION' does not say go$GO"

# A copy the go command would have made of it when switching to it
# (cmd/go/internal/toolchain/select.go): the module cache's files are
# read-only, a module zip keeps no execute bits (the go command sets
# them on bin/, pkg/tool/ and lib/'s go_*_*_exec), and it holds each
# go.mod below src/ as _go.mod (a module holds no other module; the go
# command copies them back, src/go.mod being the standard library's).
mkdir -p "$(dirname "$DEST")"
cp -R "$dir" "$DEST"
chmod -R u+w,go-w,a+rX "$DEST"
find "$DEST/bin" "$DEST/pkg/tool" -type f -exec chmod a+x {} +
find "$DEST/lib" -type f -name 'go_?*_?*_exec' -exec chmod a+x {} +
find "$DEST/src" -type f -name _go.mod | while IFS= read -r f; do
	cp "$f" "${f%_go.mod}go.mod"
done
made=1
echo >&2 "go-toolchain: $DEST is the GOROOT of go$GO (linux/$goarch)"
