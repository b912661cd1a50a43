#!/bin/sh
# contrib/cluster/in.sh [--dir=<state dir>] <command> [<args>...]
#
# Runs the command in the network namespace of the cluster that
# contrib/cluster/up.sh started in <state dir> (same default as up.sh),
# where its API server listens on 127.0.0.1 and its pods have their IPs:
#
#	contrib/cluster/in.sh kubectl --kubeconfig=<dir>/admin.kubeconfig get pods
#	contrib/cluster/in.sh gosbx --backend=kube --kubeconfig=<dir>/gosbx.kubeconfig exec -- go version
#
# As a user the namespace belongs to a user namespace of that user,
# entered with the user's own credentials. Exit: the command's, or 1
# when there is no such cluster, 129 on a usage error.
dir=${TMPDIR:-/tmp}/gosbx-cluster-$(id -u)
usage="usage: contrib/cluster/in.sh [--dir=<state dir>] <command> [<args>...]"
case ${1:-} in
--dir=?*)
	dir=${1#--dir=}
	shift
	;;
-h | --help)
	echo "$usage"
	exit 0
	;;
esac
if test $# = 0; then
	echo "$usage" >&2
	exit 129
fi
# shellcheck disable=SC2015 # either failing means no cluster
pid=$(cat "$dir/netns.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null || {
	echo "in.sh: no cluster of up.sh runs in '$dir'" >&2
	exit 1
}
if test "$(id -u)" = 0; then
	exec nsenter --target="$pid" --net -- "$@"
fi
exec nsenter --target="$pid" --user --net --preserve-credentials -- "$@"
