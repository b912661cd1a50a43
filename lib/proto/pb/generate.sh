#!/bin/sh
# Regenerate the protobuf-c code of this directory from upstream's
# contract: lib/proto/pb/generate.sh <agent-sandbox module directory>,
# e.g. $(go env GOMODCACHE)/sigs.k8s.io/agent-sandbox@v1.0.3. Needs
# protoc-c (Debian: protobuf-c-compiler); the build does not.
#
# Two steps stand between upstream's process.proto and protoc-c 1.4.1:
# - it refuses proto3 "optional" (ProcessConfig.cwd, StartRequest.pty),
#   so the word is dropped: the wire format is the same, a message field
#   keeps its presence (a NULL pointer) and an empty cwd means "unset",
#   as upstream's server reads it;
# - google/protobuf/empty.proto comes with libprotobuf-dev, not with
#   protoc-c: its one message is written here.
set -e
test $# = 1 || { echo "usage: $0 <agent-sandbox module dir>" >&2; exit 129; }
src=$1/packages/sandboxd/spec/process/v1/process.proto
out=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/process/v1" "$tmp/google/protobuf"
sed 's/^\( *\)optional /\1/' "$src" >"$tmp/process/v1/process.proto"
printf '%s\n' 'syntax = "proto3";' 'package google.protobuf;' \
	'message Empty {}' >"$tmp/google/protobuf/empty.proto"
cd "$tmp"
protoc-c --c_out="$out" process/v1/process.proto google/protobuf/empty.proto
