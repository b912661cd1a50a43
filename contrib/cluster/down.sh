#!/bin/sh
# contrib/cluster/down.sh [--dir=<state dir>] [--keep]
#
# Stops what contrib/cluster/up.sh started in <state dir> (same default
# as up.sh): pods.py (which stops the pods' processes), kwok,
# kube-scheduler, agent-sandbox-controller, kube-controller-manager,
# kube-apiserver, etcd, each by the pid in its pid file (SIGTERM; SIGKILL
# after 10 s), then every other process left in the cluster's network
# namespace (SIGKILL), then the namespace's holder; then removes the directory
# unless --keep. A directory up.sh did not make (no file gosbx-cluster
# in it) is left alone. Exit 0 when nothing of it runs any
# more, 1 otherwise, 129 on a usage error.
dir=${TMPDIR:-/tmp}/gosbx-cluster-$(id -u)
keep=
for arg; do
	case $arg in
	--dir=?*) dir=${arg#--dir=} ;;
	--keep) keep=1 ;;
	-h | --help)
		echo "usage: contrib/cluster/down.sh [--dir=<state dir>] [--keep]"
		exit 0
		;;
	*)
		echo "usage: contrib/cluster/down.sh [--dir=<state dir>] [--keep]" >&2
		exit 129
		;;
	esac
done
if ! test -f "$dir/gosbx-cluster"; then
	echo "down.sh: no cluster of up.sh in '$dir'" >&2
	exit 1
fi

# alive <pid>: it runs (a zombie has ended: its parent, the namespace's
# holder, reaps it only when it next wakes, seconds later)
alive() {
	kill -0 "$1" 2>/dev/null &&
		! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

status=0
for n in pods.py kwok kube-scheduler agent-sandbox-controller \
	kube-controller-manager kube-apiserver etcd; do
	test -f "$dir/$n.pid" || continue
	pid=$(cat "$dir/$n.pid")
	# only our process: its command line names the binary
	case $({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null) in
	*/$n\ *) ;;
	*)
		rm -f "$dir/$n.pid"
		continue
		;;
	esac
	kill -TERM "$pid" 2>/dev/null
	i=0
	while alive "$pid" && test $i -lt 200; do
		sleep 0.05
		i=$((i + 1))
	done
	if alive "$pid"; then
		kill -KILL "$pid" 2>/dev/null
		sleep 0.2
	fi
	if alive "$pid"; then
		echo "down.sh: $n (pid $pid) does not stop" >&2
		status=1
	else
		rm -f "$dir/$n.pid"
	fi
done
# what is left in the network namespace (a process pods.py could not
# stop), then the namespace's holder (a sleep of up.sh's)
if test -f "$dir/netns.pid"; then
	pid=$(cat "$dir/netns.pid")
	if test "$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null)" = "sleep infinity "; then
		ns=$(readlink "/proc/$pid/ns/net")
		for p in /proc/[0-9]*; do
			test "${p#/proc/}" != "$pid" && test "${p#/proc/}" != $$ &&
				test "$(readlink "$p/ns/net" 2>/dev/null)" = "$ns" &&
				kill -KILL "${p#/proc/}" 2>/dev/null
		done
		kill -KILL "$pid" 2>/dev/null
		i=0
		while alive "$pid" && test $i -lt 50; do
			sleep 0.1
			i=$((i + 1))
		done
	fi
	rm -f "$dir/netns.pid"
fi
if test $status = 0 && test -z "$keep"; then
	rm -rf "$dir"
fi
exit $status
