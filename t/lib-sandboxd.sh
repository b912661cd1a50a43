# Upstream sandboxd and gosbx-runtime's sandboxd listeners, side by side,
# for the suites and benchmarks that hold one against the other
# (KEP-539.2, agent-sandbox v1.0.3: packages/sandboxd). Source after
# test-lib.sh:
#
#	. "$TEST_DIRECTORY"/lib-sandboxd.sh
#	sbd_build || test_skip_all "..."    # upstream's binary, cached
#	sbd_start_upstream --name=up         # up.rest, up.grpc, up.root ...
#	sbd_start_gosbx --name=gs            # gs.rest, gs.grpc, gs.root ...
#	curl "$(cat up.rest)/v1/health"      # http://127.0.0.1:PORT
#	client "$(cat gs.grpc)" ...          # 127.0.0.1:PORT
#	sbd_stop up
#
# Each server's state is in files of the trash directory named after it:
#
#	<name>.pid   its pid                <name>.log   its stderr
#	<name>.rest  http://127.0.0.1:PORT  <name>.grpc  127.0.0.1:PORT
#	<name>.root  the directory its files and working directories are
#	             confined to (upstream --root-dir, gosbx --workdir)
#
# Servers still running when the script ends are stopped (SIGTERM, then
# SIGKILL). Needs curl and python3, and go for sbd_build.
#
# sbd_build builds upstream's daemon from the Go module
# sigs.k8s.io/agent-sandbox@$SBD_VERSION (packages/sandboxd/cmd/sandboxd)
# with the go command (its modules through its proxy: `go env GOPROXY`;
# the module cache and build cache of the real user: test_real_go, so
# a second build compiles nothing) into a cache keyed by the version:
# $TEST_CACHE/sandboxd-$SBD_VERSION/sandboxd (test-lib.sh; SBD_BIN once
# built).
# SANDBOXD_BIN=<path> uses a given binary instead.

test -n "${TRASH_DIRECTORY:-}" || {
	echo >&2 "lib-sandboxd.sh: source test-lib.sh first"
	exit 1
}

SBD_VERSION=v1.0.3
SBD_MODULE=sigs.k8s.io/agent-sandbox
SBD_CACHE=$TEST_CACHE/sandboxd-$SBD_VERSION
SBD_BIN=${SANDBOXD_BIN:-$SBD_CACHE/sandboxd}

# sbd_url <name>: the sandboxd:// URL of a server started here, for
# GOSBX_URL (lib/session/sandboxd.h)
sbd_url() {
	_rest=$(cat "$1.rest") &&
	echo "sandboxd://$(cat "$1.grpc")?rest=${_rest##*:}"
}

# sbd_build: build upstream sandboxd unless the cache holds it. Fails
# (the go command's output on fd 4) when go is missing or the build fails.
sbd_build() {
	test -x "$SBD_BIN" && return 0
	command -v go >/dev/null 2>&1 || {
		echo >&4 "sbd_build: go is needed to build upstream sandboxd"
		return 1
	}
	mkdir -p "$SBD_CACHE" || return 1
	# scripts that run at once build it once (a cold build takes
	# minutes of both cores)
	test_lock sandboxd-build 900 || return 1
	if test -x "$SBD_BIN"; then
		test_unlock sandboxd-build
		return 0
	fi
	# a module of its own that requires only upstream's: minimal
	# version selection takes upstream's go.mod as it is, so nothing
	# else is looked up
	_sbd_mod=$(mktemp -d "$SBD_CACHE/build.XXXXXX") || {
		test_unlock sandboxd-build
		return 1
	}
	(
		cd "$_sbd_mod" &&
		unset GOPATH GOCACHE GOMODCACHE &&
		test_real_go mod init gosbx.test/sandboxd-build &&
		test_real_go mod edit -require="$SBD_MODULE@$SBD_VERSION" &&
		test_real_go build -mod=mod \
			-ldflags="-X $SBD_MODULE/internal/version.gitVersion=$SBD_VERSION" \
			-o sandboxd "$SBD_MODULE/packages/sandboxd/cmd/sandboxd" &&
		./sandboxd --version | grep -q "$SBD_VERSION" &&
		mv sandboxd "$SBD_BIN"
	) >&4 2>&4
	_sbd_ret=$?
	rm -rf "$_sbd_mod"
	test_unlock sandboxd-build
	return $_sbd_ret
}

# sbd_start_upstream [--name=<n>] [--root=<dir>] [--] [sandboxd flags]:
# start upstream sandboxd on two free loopback ports (--listen-host
# 127.0.0.1), its root <dir> (default $TRASH_DIRECTORY/<n>-root), and
# wait until GET /v1/health answers 200 and the gRPC port accepts.
sbd_start_upstream() {
	sbd_args_ up "$@" || return 1
	shift $_sbd_shift
	_sbd_try=0
	while test $_sbd_try -lt 3; do
		_sbd_try=$((_sbd_try + 1))
		sbd_ports_ || return 1
		"$SBD_BIN" --listen-host=127.0.0.1 --rest-port="$_sbd_rport" \
			--grpc-port="$_sbd_gport" --root-dir="$_sbd_root" "$@" \
			</dev/null >/dev/null 2>"$_sbd_base.log" 3>&- 4>&- 5>&- &
		sbd_wait_ "$!" && return 0
		grep -qi "in use" "$_sbd_base.log" || break
	done
	echo >&4 "sbd_start_upstream: $_sbd_name did not start; its log:"
	cat >&4 "$_sbd_base.log"
	return 1
}

# sbd_start_gosbx [--name=<n>] [--root=<dir>] [--] [gosbx-runtime options]:
# the same for gosbx-runtime: --sandboxd-rest and --sandboxd-grpc on free
# loopback ports, its own API (--addr) on a third one (<n>.url), workdir
# <dir>.
sbd_start_gosbx() {
	sbd_args_ gs "$@" || return 1
	shift $_sbd_shift
	_sbd_try=0
	while test $_sbd_try -lt 3; do
		_sbd_try=$((_sbd_try + 1))
		sbd_ports_ && _sbd_aport=$(test_free_port) || return 1
		echo "http://127.0.0.1:$_sbd_aport" >"$_sbd_base.url"
		gosbx-runtime --addr="127.0.0.1:$_sbd_aport" \
			--workdir="$_sbd_root" \
			--sandboxd-rest="127.0.0.1:$_sbd_rport" \
			--sandboxd-grpc="127.0.0.1:$_sbd_gport" "$@" \
			</dev/null >/dev/null 2>"$_sbd_base.log" 3>&- 4>&- 5>&- &
		sbd_wait_ "$!" && return 0
		grep -qi "in use" "$_sbd_base.log" || break
	done
	echo >&4 "sbd_start_gosbx: $_sbd_name did not start; its log:"
	cat >&4 "$_sbd_base.log"
	return 1
}

# sbd_stop [<name>]: SIGTERM, up to 30 s, then SIGKILL (default "up").
sbd_stop() {
	_sbd_pid=$(cat "$TRASH_DIRECTORY/${1:-up}.pid") || return 1
	kill -TERM "$_sbd_pid" 2>/dev/null || return 0
	test_retry 300 0.1 sbd_dead_ "$_sbd_pid" && return 0
	kill -KILL "$_sbd_pid" 2>/dev/null
	return 1
}

# sbd_rss_kb [<name>]: the server's resident set size in kB (VmRSS)
sbd_rss_kb() {
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' \
		"/proc/$(cat "$TRASH_DIRECTORY/${1:-up}.pid")/status"
}

sbd_args_() {
	_sbd_name=$1
	_sbd_root=
	_sbd_shift=0
	shift
	while test $# -gt 0; do
		case "$1" in
		--name=*) _sbd_name=${1#--name=} ;;
		--root=*) _sbd_root=${1#--root=} ;;
		--) _sbd_shift=$((_sbd_shift + 1)); break ;;
		*) break ;;
		esac
		_sbd_shift=$((_sbd_shift + 1))
		shift
	done
	_sbd_base=$TRASH_DIRECTORY/$_sbd_name
	: "${_sbd_root:=$TRASH_DIRECTORY/$_sbd_name-root}"
	mkdir -p "$_sbd_root" && echo "$_sbd_root" >"$_sbd_base.root"
}

sbd_ports_() {
	_sbd_rport=$(test_free_port) && _sbd_gport=$(test_free_port) &&
	while test "$_sbd_gport" = "$_sbd_rport"; do
		_sbd_gport=$(test_free_port) || return 1
	done &&
	echo "http://127.0.0.1:$_sbd_rport" >"$_sbd_base.rest" &&
	echo "127.0.0.1:$_sbd_gport" >"$_sbd_base.grpc"
}

# sbd_wait_ <pid>: record it, wait up to 60 s for both listeners; fails
# at once if the server died
sbd_wait_() {
	echo "$1" >"$_sbd_base.pid"
	echo "$1" >>"$TRASH_DIRECTORY/.sbd-pids"
	_sbd_i=600
	while test $_sbd_i -gt 0; do
		kill -0 "$1" 2>/dev/null || return 1
		if curl -sf -o /dev/null --max-time 5 \
			"http://127.0.0.1:$_sbd_rport/v1/health" &&
			sbd_port_open_ "$_sbd_gport"; then
			return 0
		fi
		_sbd_i=$((_sbd_i - 1))
		sleep 0.1
	done
	echo >&4 "sbd: $_sbd_name never answered on its listeners"
	return 1
}

# sbd_port_open_ <port>: something accepts on 127.0.0.1:<port>
sbd_port_open_() {
	python3 -c 'import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2).close()' \
		"$1" 2>/dev/null
}

sbd_dead_() {
	! kill -0 "$1" 2>/dev/null
}

sbd_stop_all_() {
	test -f "$TRASH_DIRECTORY/.sbd-pids" || return 0
	for _sbd_pid in $(cat "$TRASH_DIRECTORY/.sbd-pids"); do
		kill -TERM "$_sbd_pid" 2>/dev/null
	done
	for _sbd_pid in $(cat "$TRASH_DIRECTORY/.sbd-pids"); do
		test_retry 300 0.1 sbd_dead_ "$_sbd_pid" ||
			kill -KILL "$_sbd_pid" 2>/dev/null
	done
	rm -f "$TRASH_DIRECTORY/.sbd-pids"
}
test_atexit sbd_stop_all_
