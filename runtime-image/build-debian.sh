#!/bin/sh
# Build the gosbx runtime image from Debian packages only: no Docker
# engine, no registry. mmdebstrap makes a bookworm root file system with
# gosbx-runtime, Go and its pre-warmed build cache; `podman import`
# turns it into an image with the same configuration as
# runtime-image/Dockerfile (user 1000, workdir /app, gosbx-runtime on
# all interfaces, port 8888). `make image` runs it.
#
# Usage: runtime-image/build-debian.sh [--go=1.19|1.23] [--tag=<image>]
#            [--runtime=<gosbx-runtime>] [--tar=<file>] [--mirror=<url>]
#
#   --go       Go toolchain: 1.23 (default; golang-1.23-go from
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
# unshare mode): mmdebstrap and podman (contrib/install-deps.sh). Takes
# a few minutes, mostly downloading packages and `go build std`.
set -eu

GO=1.23
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
		sed -n '/^# Usage/,/^# a few/p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) die "unknown argument '$arg' (see --help)" ;;
	esac
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
: "${RUNTIME:=$ROOT/build/gosbx-runtime}"
case "$GO" in
1.19) SUITES="bookworm" ;;
1.23) SUITES="bookworm bookworm-backports" ;;
*) die "unsupported --go '$GO' (1.19 or 1.23)" ;;
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

GOROOT=/usr/lib/go-$GO
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
SANDBOX_WORKDIR=/app"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gosbx-image.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp "$RUNTIME" "$WORK/gosbx-runtime"
printf '%s\n' "$ENVS" >"$WORK/env"

# The customize hook runs on the host with the new root in $1: the
# runtime, the user sandbox (uid and gid 1000) owning /app and its
# home, and `go build std` as that user to warm the build cache.
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
	--include="ca-certificates,libmicrohttpd12,libjansson4,libwslay1,libssl3,libarchive13,golang-$GO-go,python3,nodejs,tzdata" \
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
