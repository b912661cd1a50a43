#!/bin/sh
# Build the gosbx runtime image from Debian packages and a Go release:
# no Docker engine, no container registry. mmdebstrap makes a bookworm
# root file system with gosbx-runtime, Go (runtime-image/go-toolchain.sh,
# the same release as runtime-image/Dockerfile's) and its pre-warmed
# build cache; `podman import` turns it into an image with the same
# configuration as the Dockerfile (user 1000, workdir /app,
# gosbx-runtime on all interfaces, port 8888). `make image` runs it.
#
# Usage: runtime-image/build-debian.sh [--go=<x.y.z>|1.23|1.19]
#            [--tag=<image>] [--runtime=<gosbx-runtime>] [--tar=<file>]
#            [--mirror=<url>]
#
#   --go       Go toolchain: a Go release x.y.z in /usr/local/go, from
#              the Go module golang.org/toolchain, fetched and checked
#              by runtime-image/go-toolchain.sh (default: the release
#              of the go on PATH when it is 1.26 or later, else the
#              one go-toolchain.sh pins, as runtime-image/Dockerfile);
#              or Debian's packages: 1.23 (golang-1.23-go from
#              bookworm-backports) or 1.19 (bookworm's own golang-go)
#   --tag      the image to make (default localhost/gosbx-runtime:debian)
#   --runtime  the gosbx-runtime to put in (default build/gosbx-runtime,
#              built with make; it must be built on Debian bookworm
#              against bookworm's libraries, without sanitizers)
#   --tar      also keep the root file system as this tarball
#              (docker import / podman import take it too)
#   --mirror   Debian mirror (default http://deb.debian.org/debian)
#
# Needs (as root, or as a user with subuid ranges for mmdebstrap's
# unshare mode): mmdebstrap and podman (contrib/install-deps.sh), and a
# go command to fetch a Go release with. Takes a few minutes, mostly
# downloading packages and `go build std`; the toolchain is kept in
# ${XDG_CACHE_HOME:-$HOME/.cache}/gosbx/image-go between runs.
set -eu

GO=
TAG=localhost/gosbx-runtime:debian
RUNTIME=
TAR=
MIRROR=http://deb.debian.org/debian

die() {
	printf 'build-debian: %s\n' "$*" >&2
	exit 1
}

for arg; do
	case "$arg" in
	--go=*) GO=${arg#--go=} ;;
	--tag=*) TAG=${arg#--tag=} ;;
	--runtime=*) RUNTIME=${arg#--runtime=} ;;
	--tar=*) TAR=${arg#--tar=} ;;
	--mirror=*) MIRROR=${arg#--mirror=} ;;
	-h | --help)
		sed -n '/^# Usage/,/between runs\.$/p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) die "unknown argument '$arg' (see --help)" ;;
	esac
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
: "${RUNTIME:=$ROOT/build/gosbx-runtime}"
# Debian's Go in /usr/lib/go-<x.y>, or a Go release in /usr/local/go
# (go-toolchain.sh, below)
case "$GO" in
1.19) SUITES="bookworm" GOROOT=/usr/lib/go-$GO GOPKG=,golang-$GO-go ;;
1.23) SUITES="bookworm bookworm-backports" GOROOT=/usr/lib/go-$GO \
	GOPKG=,golang-$GO-go ;;
*) SUITES="bookworm" GOROOT=/usr/local/go GOPKG= ;;
esac
for tool in mmdebstrap podman; do
	command -v "$tool" >/dev/null 2>&1 ||
		die "$tool not found: install it (contrib/install-deps.sh)"
done
[ -x "$RUNTIME" ] || die "'$RUNTIME' is not an executable gosbx-runtime (make)"
# a sanitizer build needs libasan in the image and runs slowly: refuse
if ldd "$RUNTIME" 2>/dev/null | grep -q 'lib[at]san'; then
	die "'$RUNTIME' is built with sanitizers; use a plain build"
fi

SBX_PATH=/home/sandbox/go/bin:$GOROOT/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The environment of runtime-image/Dockerfile, one variable a line
# (podman import takes one --change ENV=... per variable).
ENVS="HOME=/home/sandbox
GOPATH=/home/sandbox/go
GOCACHE=/home/sandbox/.cache/go-build
GOMODCACHE=/home/sandbox/go/pkg/mod
GOTOOLCHAIN=local
CGO_ENABLED=0
GOFLAGS=-buildvcs=false
PATH=$SBX_PATH
SANDBOX_ADDR=:8888
SANDBOX_ALLOW_HOSTS=*.svc,*.svc.cluster.local
SANDBOX_WORKDIR=/app
SANDBOXD_REST_ADDR=127.0.0.1:8080
SANDBOXD_GRPC_ADDR=127.0.0.1:9090"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gosbx-image.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp "$RUNTIME" "$WORK/gosbx-runtime"
printf '%s\n' "$ENVS" >"$WORK/env"
if [ -z "$GOPKG" ]; then
	"$ROOT/runtime-image/go-toolchain.sh" ${GO:+"--go=$GO"} "$WORK/go"
	GO=$(sed -n '1s/^go//p' "$WORK/go/VERSION")
fi

# The customize hook runs on the host with the new root in $1: the
# runtime, the Go release (if not Debian's), the user sandbox (uid and
# gid 1000) owning /app and its home, and `go build std` as that user to
# warm the build cache.
cat >"$WORK/customize.sh" <<'EOF'
#!/bin/sh
set -eu
root=$1
work=$2
install -m 0755 "$work/gosbx-runtime" "$root/usr/local/bin/gosbx-runtime"
# every library the runtime is linked with is in the image (the list
# above); else stop here, not when the first pod starts
if chroot "$root" ldd /usr/local/bin/gosbx-runtime | grep "not found"; then
	echo >&2 "build-debian: gosbx-runtime needs a library the image lacks" \
		"(add its package to --include)"
	exit 1
fi
if [ -d "$work/go" ]; then
	cp -R --preserve=mode "$work/go" "$root/usr/local/go"
fi
echo 'sandbox:x:1000:' >>"$root/etc/group"
echo 'sandbox:x:1000:1000:sandbox:/home/sandbox:/bin/sh' >>"$root/etc/passwd"
echo 'sandbox:!:19000:0:99999:7:::' >>"$root/etc/shadow"
mkdir -p "$root/app" "$root/home/sandbox"
chown 1000:1000 "$root/app" "$root/home/sandbox"
chmod 0755 "$root/app" "$root/home/sandbox"
# shellcheck disable=SC2046
chroot --userspec=1000:1000 "$root" /usr/bin/env -i \
	$(cat "$work/env") sh -c 'cd /home/sandbox && go version && go build std'
# no apt inside the image: nothing runs apt in a sandbox
rm -rf "$root/var/lib/apt/lists"/* "$root/var/cache/apt"/*
EOF
chmod +x "$WORK/customize.sh"

set --
for s in $SUITES; do
	set -- "$@" "deb $MIRROR $s main"
done
echo "build-debian: mmdebstrap bookworm with Go $GO"
mmdebstrap --variant=essential \
	--include="ca-certificates,libmicrohttpd12,libjansson4,libwslay1,libssl3,libnghttp2-14,libprotobuf-c1,libarchive13,python3,nodejs,tzdata$GOPKG" \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--customize-hook="$WORK/customize.sh \"\$1\" $WORK" \
	bookworm "$WORK/rootfs.tar" "$@"

set --
while IFS= read -r e; do
	set -- "$@" --change "ENV $e"
done <"$WORK/env"
echo "build-debian: podman import as $TAG"
podman import "$@" \
	--change 'USER 1000:1000' \
	--change 'WORKDIR /app' \
	--change 'EXPOSE 8888' \
	--change 'ENTRYPOINT ["/usr/local/bin/gosbx-runtime"]' \
	--change "LABEL org.opencontainers.image.title=gosbx-runtime" \
	--change "LABEL io.gosbx.go-version=$GO" \
	"$WORK/rootfs.tar" "$TAG" >/dev/null
if [ -n "$TAR" ]; then
	mv "$WORK/rootfs.tar" "$TAR"
fi
echo "build-debian: made $TAG (Go $GO)"
