#!/bin/sh
# gosbx benchmarks (`make perf`). Runs each section, prints every raw
# measurement as it goes ("# bench=... key=value ..."), then one table
# with each goal, the measured value, the ratio and PASS/MISS.
#
# It reports, it does not gate: the exit status is 0 even when a goal is
# missed; it is 1 only when a benchmark could not run (a server did not
# start, a request failed), because then the numbers mean nothing.
#
# Usage: t/perf/run.sh [<section>...]     (default: every section)
# Sections: runtime local mcp kube net cluster sandboxd
#
# Environment:
#   GOSBX_BUILD_DIR      built binaries (default: ../../build from here)
#   GOSBX_PERF_RUNTIME   the server program to measure (default:
#                        $GOSBX_BUILD_DIR/gosbx-runtime); it must take
#                        --addr=unix:<path>|<host:port>, --workdir, --log-level
#   GOSBX_PERF_LOCAL_IDLE  idle sandboxes in the local section (default 50)
#   GOSBX_PERF_QUICK=1   small runs (seconds instead of a minute), for
#                        checking that the script works; numbers are noisy
#
# To add a benchmark: write a section_<name>() function that measures
# and calls perf_info/perf_goal, add <name> to all_sections, and
# describe it in t/perf/README.md.

PERF_DIR=$(cd "$(dirname "$0")" && pwd)
: "${GOSBX_BUILD_DIR:=$PERF_DIR/../../build}"
GOSBX_BUILD_DIR=$(cd "$GOSBX_BUILD_DIR" 2>/dev/null && pwd) || {
	echo "fatal: no build directory (set GOSBX_BUILD_DIR)" >&2
	exit 1
}
BENCH=$GOSBX_BUILD_DIR/t/helper/bench-runtime
RUNTIME=${GOSBX_PERF_RUNTIME:-$GOSBX_BUILD_DIR/gosbx-runtime}
LC_ALL=C
export LC_ALL

all_sections="runtime local mcp kube net cluster sandboxd"

if test -n "${GOSBX_PERF_QUICK:-}"; then
	perf_n=200
	perf_warmup=20
	perf_duration=1s
	perf_stream_bytes=67108864
	local_open_n=5
	local_exec_n=20
	local_go_n=2
	local_idle_n=${GOSBX_PERF_LOCAL_IDLE:-10}
	mcp_n=200
	mcp_warmup=10
	mcp_duration=1s
	kube_open_n=5
	cluster_claim_n=10
	kube_ready_n=5
	kube_n=200
	kube_warmup=20
else
	perf_n=2000
	perf_warmup=200
	perf_duration=5s
	perf_stream_bytes=1073741824
	local_open_n=30
	local_exec_n=100
	local_go_n=10
	local_idle_n=${GOSBX_PERF_LOCAL_IDLE:-50}
	mcp_n=2000
	mcp_warmup=50
	mcp_duration=5s
	kube_open_n=10
	cluster_claim_n=50
	kube_ready_n=20
	kube_n=2000
	kube_warmup=100
fi
perf_clients=8

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gosbx-perf.XXXXXX") || exit 1
results=$tmp/results
: >"$results"
perf_errors=0
server_pid=
server_log=
local_root=
mcp_pid=
kube_pid=
kube_watch_pid=
kube_plain_pid=

cleanup() {
	server_stop
	sandboxd_stop
	mcp_stop
	kube_cleanup
	local_cleanup
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() {
	printf '%s\n' "$*"
}

# Report a benchmark that could not run; the run will exit 1.
perf_error() {
	say "error: $*" >&2
	perf_errors=$((perf_errors + 1))
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "-" "-" "-" "ERROR" >>"$results"
}

# kv <line> <key>: the value of key=value in a bench-runtime line.
kv() {
	printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# perf_info <metric> <value text> [<ratio text>]: a row without a goal.
perf_info() {
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "-" "${3:--}" "info" \
		>>"$results"
}

# perf_goal <metric> <value> <unit> <op> <goal> [<extra ratio text>]
# op is "<=" or ">="; the ratio printed is value/goal, so a goal of
# "<=" passes at ratio <= 1 and a goal of ">=" at ratio >= 1.
perf_goal() {
	awk -v m="$1" -v v="$2" -v u="$3" -v op="$4" -v g="$5" -v x="$6" '
	function fmt(n) {
		if (n >= 100) return sprintf("%.0f", n)
		if (n >= 10) return sprintf("%.1f", n)
		return sprintf("%.3g", n)
	}
	BEGIN {
		r = (g > 0) ? v / g : 0
		ok = (op == "<=") ? (v <= g) : (v >= g)
		ratio = sprintf("%.2fx goal", r)
		if (x != "") ratio = ratio ", " x
		printf "%s\t%s %s\t%s %s %s\t%s\t%s\n", m, fmt(v), u,
			op, g, u, ratio, ok ? "PASS" : "MISS"
	}' >>"$results"
}

# Run bench-runtime, echo its line as "# ..." and keep it in $line.
bench() {
	bench_with "$BENCH" "$@"
}

# bench_with <program> <arg>...: the same for another helper (or for
# `env ... helper ...`).
bench_with() {
	line=$("$@" 2>"$tmp/bench.err")
	rc=$?
	say "# $line"
	if test -s "$tmp/bench.err"; then
		sed 's/^/#   /' "$tmp/bench.err" | head -n 10
	fi
	if test $rc != 0 && test -n "$server_pid" && test -s "$server_log"
	then
		say "# server log (end):"
		tail -n 10 "$server_log" | sed 's/^/#   /'
	fi
	return $rc
}

# server_start <name> <addr>: start a fresh server in its own workdir
# and wait until GET / answers; sets server_pid and server_target (the
# bench-runtime option that reaches it).
server_start() {
	mkdir -p "$tmp/$1.work"
	"$RUNTIME" --addr="$2" --workdir="$tmp/$1.work" --log-level=warn \
		</dev/null >"$tmp/$1.log" 2>&1 &
	server_pid=$!
	server_log=$tmp/$1.log
	case "$2" in
	unix:*) server_target=--unix=${2#unix:} ;;
	*) server_target=--tcp=$2 ;;
	esac
	if ! bench wait "$server_target" --timeout=20s; then
		say "# server log:"
		sed 's/^/#   /' "$server_log" | tail -n 20
		server_stop
		return 1
	fi
	server_name=$(kv "$line" server)
	server_version=$(kv "$line" version)
}

# Stop the running server (SIGTERM, then SIGKILL after ~5 s).
server_stop() {
	test -n "$server_pid" || return 0
	kill "$server_pid" 2>/dev/null
	i=0
	while kill -0 "$server_pid" 2>/dev/null && test $i -lt 50; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$server_pid" 2>/dev/null
	wait "$server_pid" 2>/dev/null
	server_pid=
}

# proc_kb <pid> <field>: a /proc/<pid>/status field in kB (VmRSS...).
proc_kb() {
	awk -v f="$2:" '$1 == f { print $2; found = 1 } END {
		if (!found) print 0 }' "/proc/$1/status" 2>/dev/null
}

# proc_cpu_s <pid>: user + system CPU seconds the process used so far.
proc_cpu_s() {
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null |
		awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($12 + $13) / hz }'
}

us_to_ms() {
	awk -v u="$1" 'BEGIN { printf "%.3f", u / 1000 }'
}

kb_to_mib() {
	awk -v k="$1" 'BEGIN { printf "%.2f", k / 1024 }'
}

# ---------------------------------------------------------------------
# Section "runtime": gosbx-runtime (Documentation/protocol/runtime-api.md) on its own,
# no isolation around it.
#   1. POST /execute of `true` vs posix_spawn("sh -c true"): added
#      latency at the median <= 1 ms, unix socket and TCP
#   2. requests/s with 8 keep-alive clients >= 1,000/s, unix and TCP
#   3. 1 GiB through POST /v1/exec >= 500 MB/s, server peak RSS
#      (VmHWM of a fresh server) <= 16 MiB
#   4. idle server RSS (VmRSS after start and one GET /) <= 2 MiB

# runtime_execute <unix|tcp> <addr>: latency and requests/s over one
# transport, against a fresh server.
runtime_execute() {
	if ! server_start "execute-$1" "$2"; then
		perf_error "runtime: server on $1 did not start"
		return
	fi
	if bench latency "$server_target" --n=$perf_n --warmup=$perf_warmup
	then
		med=$(kv "$line" median_us)
		p90=$(kv "$line" p90_us)
		vs=$(awk -v a="$med" -v b="$direct_med" \
			'BEGIN { printf "%.2fx direct", (b > 0) ? a / b : 0 }')
		perf_info "runtime: POST /execute true, $1: median" \
			"$(us_to_ms "$med") ms" "$vs"
		perf_info "runtime: POST /execute true, $1: p90" \
			"$(us_to_ms "$p90") ms"
		if test "$(kv "$line" connects)" != 0; then
			say "# note: the server closed keep-alive connections" \
				"($(kv "$line" connects) reconnects)"
		fi
		if test -n "$direct_med"; then
			added=$(awk -v a="$med" -v b="$direct_med" \
				'BEGIN { printf "%.3f", (a - b) / 1000 }')
			perf_goal "runtime: added latency, $1 (median)" \
				"$added" ms "<=" 1
		fi
	else
		perf_error "runtime: POST /execute latency, $1"
	fi
	if bench rps "$server_target" --clients=$perf_clients \
		--duration=$perf_duration --warmup=20
	then
		perf_goal "runtime: requests/s, $1, $perf_clients clients" \
			"$(kv "$line" rps)" "/s" ">=" 1000 \
			"p90 $(us_to_ms "$(kv "$line" p90_us)") ms"
	else
		perf_error "runtime: requests/s, $1"
	fi
	server_stop
}

section_runtime() {
	if ! test -x "$RUNTIME"; then
		perf_error "runtime: no server program '$RUNTIME'"
		return
	fi
	if ! test -x "$BENCH"; then
		perf_error "runtime: no '$BENCH' (make it first)"
		return
	fi

	# 1 baseline: what the server cannot avoid doing itself
	direct_med=
	if bench direct --n=$perf_n --warmup=$perf_warmup; then
		direct_med=$(kv "$line" median_us)
		perf_info "runtime: sh -c true by posix_spawn: median" \
			"$(us_to_ms "$direct_med") ms"
		perf_info "runtime: sh -c true by posix_spawn: p90" \
			"$(us_to_ms "$(kv "$line" p90_us)") ms"
	else
		perf_error "runtime: direct posix_spawn baseline"
	fi

	# 1 and 2, per transport
	runtime_execute unix "unix:$tmp/execute.sock"
	port=$("$BENCH" free-port) || port=
	if test -n "$port"; then
		runtime_execute tcp "127.0.0.1:$port"
	else
		perf_error "runtime: no free loopback port"
	fi

	# 4 then 3: a fresh server, idle, then the streams through it.
	# The data is a 64 MiB file of 64-byte printable lines, made
	# beforehand in the workdir and sent as often as needed by one
	# `cat`, so that the server, not a producer pipeline, sets the
	# pace; the same bytes from `yes | head` (a pipeline costing about
	# as much CPU as the server) follow as context.
	mkdir -p "$tmp/stream.work"
	chunk=67108864
	test "$perf_stream_bytes" -lt $chunk && chunk=$perf_stream_bytes
	yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa |
		head -c $chunk >"$tmp/stream.work/stream.txt"
	stream_cmd="cat"
	i=0
	while test $((i * chunk)) -lt "$perf_stream_bytes"; do
		stream_cmd="$stream_cmd stream.txt"
		i=$((i + 1))
	done
	mib=$((i * chunk / 1048576))
	if ! server_start stream "unix:$tmp/stream.sock"; then
		perf_error "runtime: server for the stream did not start"
		return
	fi
	idle=$(proc_kb "$server_pid" VmRSS)
	anon=$(proc_kb "$server_pid" RssAnon)
	pss=$(awk '$1 == "Pss:" { print $2 }' \
		"/proc/$server_pid/smaps_rollup" 2>/dev/null)
	say "# idle server: VmRSS=${idle}kB RssAnon=${anon}kB" \
		"RssFile=$(proc_kb "$server_pid" RssFile)kB Pss=${pss:-?}kB" \
		"Threads=$(awk '$1 == "Threads:" { print $2 }' \
			"/proc/$server_pid/status")"
	perf_goal "runtime: idle server RSS (VmRSS)" \
		"$(kb_to_mib "$idle")" MiB "<=" 2 \
		"anon $(kb_to_mib "$anon") MiB"
	cpu0=$(proc_cpu_s "$server_pid")
	if bench stream "$server_target" --command="$stream_cmd" \
		--bytes=$((i * chunk)) --timeout=120s
	then
		cpu=$(awk -v a="$cpu0" -v b="$(proc_cpu_s "$server_pid")" \
			'BEGIN { printf "%.2f", b - a }')
		pct=$(awk -v c="$cpu" -v s="$(kv "$line" seconds)" \
			'BEGIN { printf "%.0f", (s > 0) ? c * 100 / s : 0 }')
		perf_goal "runtime: /v1/exec stream of $mib MiB, unix" \
			"$(kv "$line" mb_per_s)" "MB/s" ">=" 500 \
			"$(kv "$line" events) events"
		perf_info "runtime: server CPU in that stream" "$cpu s" \
			"$pct% of one core"
	else
		perf_error "runtime: /v1/exec stream of $mib MiB"
	fi
	if bench stream "$server_target" --bytes=$((i * chunk)) \
		--timeout=120s
	then
		perf_info "runtime: same, from yes | head" \
			"$(awk -v v="$(kv "$line" mb_per_s)" \
				'BEGIN { printf "%.0f", v }') MB/s"
	else
		perf_error "runtime: /v1/exec stream from yes | head"
	fi
	hwm=$(proc_kb "$server_pid" VmHWM)
	perf_goal "runtime: server peak RSS in the streams" \
		"$(kb_to_mib "$hwm")" MiB "<=" 16
	server_stop
}

# ---------------------------------------------------------------------
# Section "local": sandboxes of the local backend (bubblewrap, seccomp
# and cgroups around a resident gosbx-runtime), driven through the
# gosbx command as a user runs it, with a temporary HOME,
# XDG_STATE_HOME and XDG_CACHE_HOME (never the user's own claims or
# caches); every claim is closed at the end, also on Ctrl-C.
#   1. gosbx open to ready (it returns once the runtime answers):
#      p50 <= 15 ms, p90 shown; gosbx resume of a suspended claim to
#      ready (issue 20): p50 <= 50 ms, p90 shown
#   2. gosbx exec --claim=X true vs sh -c true, both whole processes:
#      added latency at the median <= 3 ms
#   3. go run hello.go in a warm sandbox vs on the host (warm
#      GOCACHE each): ratio of medians <= 1.05
#   4. 50 idle kept sandboxes: mean RSS of all the processes of one
#      sandbox <= 2 MiB (mean PSS shown)

GOSBX=$GOSBX_BUILD_DIR/gosbx
BENCH_LOCAL=$GOSBX_BUILD_DIR/t/helper/bench-local

# The gosbx of this benchmark: local backend, the temporary state.
lgosbx() {
	"$GOSBX" --backend=local "$@"
}

# Close every claim of the temporary state (EXIT trap).
local_cleanup() {
	test -n "$local_root" || return 0
	if test -d "$XDG_STATE_HOME/gosbx/claims" &&
		test -n "$(ls "$XDG_STATE_HOME/gosbx/claims")"; then
		lgosbx close --all >/dev/null 2>&1 ||
			say "warning: gosbx close --all failed" \
				"(claims in $XDG_STATE_HOME)" >&2
	fi
	# the Go module cache is read-only
	chmod -R u+w "$local_root" 2>/dev/null
	local_root=
}

local_setup() {
	local_root=$tmp/local
	mkdir -p "$local_root/home" "$local_root/state" "$local_root/cache" \
		"$local_root/hello"
	HOME=$local_root/home
	XDG_STATE_HOME=$local_root/state
	XDG_CACHE_HOME=$local_root/cache
	XDG_CONFIG_HOME=$local_root/home/.config
	export HOME XDG_STATE_HOME XDG_CACHE_HOME XDG_CONFIG_HOME GOSBX
	unset GOSBX_BACKEND GOSBX_URL GOSBX_CLAIM
	cat >"$local_root/hello/hello.go" <<-\GO
	package main

	import "fmt"

	func main() {
		fmt.Println("hello, world")
	}
	GO
	printf 'module hello\n\ngo 1.19\n' >"$local_root/hello/go.mod"
}

# gostd_wait <dir>: wait (at most 10 minutes) until the first sandbox's
# background build of the standard library's layer (lib/local/gostd.h)
# in <dir> is done, so that it does not share the CPUs with what is
# measured next; 1 when it is not
gostd_wait() {
	i=0
	while ! ls -d "$1"/go*-*-*-* 2>/dev/null |
		grep -qv '\.\(lock\|log\|tmp\|home\)$'; do
		test $i -ge 6000 && return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# local_open <name>: open a kept sandbox; on failure show why.
local_open() {
	if lgosbx open -q --name="$1" >/dev/null 2>"$tmp/open.err"; then
		return 0
	fi
	sed 's/^/#   /' "$tmp/open.err" | head -n 10
	return 1
}

# sandbox_pids <meta file>: the pids of a sandbox, its bwrap processes
# ("pid", "child-pid") and all their descendants.
sandbox_pids() {
	todo=$(sed -n 's/^pid //p; s/^child-pid //p' "$1")
	seen=
	while test -n "$todo"; do
		next=
		for p in $todo; do
			case " $seen " in
			*" $p "*) continue ;;
			esac
			test -d "/proc/$p" || continue
			seen="$seen $p"
			next="$next $(cat /proc/"$p"/task/*/children \
				2>/dev/null)"
		done
		# shellcheck disable=SC2086 # squeeze the blanks
		todo=$(say $next)
	done
	# shellcheck disable=SC2086
	say $seen
}

# sandbox_mem <meta file>: "<procs> <VmRSS kB> <Pss kB> <RssAnon kB>"
# summed over the processes of the sandbox; with a second argument,
# also one "# " line per process.
sandbox_mem() {
	files=
	for p in $(sandbox_pids "$1"); do
		test -r "/proc/$p/smaps_rollup" &&
			files="$files /proc/$p/status /proc/$p/smaps_rollup"
	done
	test -n "$files" || { say "0 0 0 0"; return; }
	# shellcheck disable=SC2086 # one word per file
	awk -v show="$2" '
	FILENAME ~ /status$/ && $1 == "Name:" { n++; name = $2 }
	FILENAME ~ /status$/ && $1 == "Pid:" { pid = $2 }
	FILENAME ~ /status$/ && $1 == "VmRSS:" { rss += $2; r = $2 }
	FILENAME ~ /status$/ && $1 == "RssAnon:" { anon += $2; a = $2 }
	FILENAME ~ /smaps_rollup$/ && $1 == "Pss:" {
		pss += $2
		if (show != "")
			printf "#   pid %s %s: VmRSS=%dkB RssAnon=%dkB" \
				" Pss=%dkB\n", pid, name, r, a, $2
	}
	END { print n, rss, pss, anon }' $files
}

# local 1: gosbx open to ready, each claim closed outside the timing
local_open_bench() {
	# shellcheck disable=SC2016 # expanded by bench-local's sh -c
	after='"$GOSBX" --backend=local close perf-open-{} >/dev/null 2>&1'
	if bench_with "$BENCH_LOCAL" run --n="$local_open_n" --warmup=2 \
		--after="$after" \
		-- "$GOSBX" --backend=local open -q --name=perf-open-{}
	then
		perf_goal "local: gosbx open to ready (p50)" \
			"$(us_to_ms "$(kv "$line" median_us)")" ms "<=" 15 \
			"$local_open_n opens"
		perf_info "local: gosbx open to ready (p90)" \
			"$(us_to_ms "$(kv "$line" p90_us)") ms"
	else
		perf_error "local: gosbx open"
	fi
}

# local 1b: gosbx resume of a suspended claim to ready, the claim
# suspended again after each run, outside the timing
local_resume_bench() {
	if ! local_open perf-resume ||
		! lgosbx suspend perf-resume >/dev/null 2>"$tmp/open.err"; then
		sed 's/^/#   /' "$tmp/open.err" | head -n 10
		perf_error "local: gosbx resume (cannot open and suspend)"
		return
	fi
	# shellcheck disable=SC2016 # expanded by bench-local's sh -c
	after='"$GOSBX" --backend=local suspend perf-resume >/dev/null 2>&1'
	if bench_with "$BENCH_LOCAL" run --n="$local_open_n" --warmup=2 \
		--after="$after" \
		-- "$GOSBX" --backend=local resume perf-resume
	then
		perf_goal "local: gosbx resume to ready (p50)" \
			"$(us_to_ms "$(kv "$line" median_us)")" ms "<=" 50 \
			"$local_open_n resumes"
		perf_info "local: gosbx resume to ready (p90)" \
			"$(us_to_ms "$(kv "$line" p90_us)") ms"
	else
		perf_error "local: gosbx resume"
	fi
	lgosbx close perf-resume >/dev/null 2>&1
}

# local 2: gosbx exec --claim true vs sh -c true, alternating
local_exec_bench() {
	if bench_with "$BENCH_LOCAL" run --n="$local_exec_n" --warmup=5 \
		-- sh -c true \
		--vs "$GOSBX" --backend=local exec --claim=perf-warm true
	then
		sh_med=$(kv "$line" median_us)
		ex_med=$(kv "$line" vs_median_us)
		perf_info "local: sh -c true (process): median" \
			"$(us_to_ms "$sh_med") ms"
		perf_info "local: gosbx exec --claim true: median" \
			"$(us_to_ms "$ex_med") ms" \
			"$(awk -v a="$ex_med" -v b="$sh_med" \
				'BEGIN { printf "%.1fx sh", (b > 0) ? a / b : 0 }')"
		perf_info "local: gosbx exec --claim true: p90" \
			"$(us_to_ms "$(kv "$line" vs_p90_us)") ms"
		perf_goal "local: exec added latency (median)" \
			"$(awk -v a="$ex_med" -v b="$sh_med" \
				'BEGIN { printf "%.3f", (a - b) / 1000 }')" \
			ms "<=" 3 "$local_exec_n runs each"
	else
		perf_error "local: gosbx exec true vs sh -c true"
	fi
	# the floor of any gosbx command: starting the program
	if bench_with "$BENCH_LOCAL" run --n="$local_exec_n" --warmup=5 \
		-- "$GOSBX" -h
	then
		perf_info "local: gosbx -h (process): median" \
			"$(us_to_ms "$(kv "$line" median_us)") ms"
	else
		perf_error "local: gosbx -h"
	fi
}

# local 3: go run hello.go, host vs the warm sandbox, alternating; the
# first (warm-up) run of each fills its empty build cache. The host
# runs with the sandbox's Go environment and its own temporary GOCACHE.
local_go_bench() {
	if ! command -v go >/dev/null 2>&1; then
		perf_error "local: no go on the host"
		return
	fi
	if ! lgosbx exec --claim=perf-warm -f "$local_root/hello/hello.go" \
		-f "$local_root/hello/go.mod" true 2>"$tmp/exec.err"
	then
		sed 's/^/#   /' "$tmp/exec.err" | head -n 10
		perf_error "local: cannot put hello.go into the sandbox"
		return
	fi
	say "# host: $(go version 2>&1);" \
		"sandbox: $(lgosbx exec --claim=perf-warm go version 2>&1)"
	olddir=$PWD
	cd "$local_root/hello" || return
	if bench_with env GOCACHE="$local_root/host-gocache" \
		GOPATH="$HOME/go" GOMODCACHE="$HOME/go/pkg/mod" \
		GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false \
		GOPROXY=off "$BENCH_LOCAL" run --n="$local_go_n" --warmup=1 \
		--timeout=300s -- go run hello.go \
		--vs "$GOSBX" --backend=local exec --claim=perf-warm \
		-- go run hello.go
	then
		host=$(kv "$line" median_us)
		sbx=$(kv "$line" vs_median_us)
		perf_info "local: go run hello.go, host: median" \
			"$(us_to_ms "$host") ms"
		perf_info "local: go run hello.go, sandbox: median" \
			"$(us_to_ms "$sbx") ms"
		perf_goal "local: go run hello.go, sandbox/host" \
			"$(awk -v a="$sbx" -v b="$host" \
				'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }')" \
			x "<=" 1.05 "$local_go_n runs each"
		perf_goal "local: go run hello.go, kept claim (warm)" \
			"$(us_to_ms "$sbx")" ms "<=" 200 \
			"the claim's own cache"
	else
		perf_error "local: go run hello.go"
	fi
	cd "$olddir" || return
	local_cold_bench
}

# local 3b: the first `go run hello.go` of a new claim, whose Go caches
# are its own and empty. Each run's claim is opened and given hello.go
# by the untimed --after step of the run before (the first one here).
local_cold_bench() {
	# shellcheck disable=SC2016 # expanded by bench-local's sh -c
	next='"$GOSBX" --backend=local close perf-cold-{} >/dev/null 2>&1;
		n=$(({} + 1));
		"$GOSBX" --backend=local open -q --name=perf-cold-$n \
			>/dev/null 2>&1 &&
		"$GOSBX" --backend=local exec --claim=perf-cold-$n \
			-f "$local_root/hello/hello.go" \
			-f "$local_root/hello/go.mod" true'
	if ! local_root="$local_root" sh -c "$(echo "$next" | sed 's/{}/-1/g')"; then
		perf_error "local: cannot open a claim for the cold build"
		return
	fi
	if bench_with env local_root="$local_root" "$BENCH_LOCAL" run \
		--n="$local_go_n" --warmup=0 --timeout=300s --after="$next" \
		-- "$GOSBX" --backend=local exec --claim=perf-cold-{} \
		-- go run hello.go
	then
		perf_info "local: go run hello.go, new claim (cold): median" \
			"$(us_to_ms "$(kv "$line" median_us)") ms" \
			"p90 $(us_to_ms "$(kv "$line" p90_us)") ms"
	else
		perf_error "local: go run hello.go in a new claim"
	fi
	lgosbx close "perf-cold-$local_go_n" >/dev/null 2>&1
}

# local 4: many idle kept sandboxes, their memory, closing them
local_idle_bench() {
	n=$local_idle_n
	if ! bench_with "$BENCH_LOCAL" run --n="$n" --warmup=0 \
		-- "$GOSBX" --backend=local open -q --name=perf-idle-{}
	then
		perf_error "local: opening $n sandboxes"
		lgosbx close --all >/dev/null 2>&1
		return
	fi
	perf_info "local: gosbx open with 0..$((n - 1)) others open" \
		"$(us_to_ms "$(kv "$line" median_us)") ms" \
		"p90 $(us_to_ms "$(kv "$line" p90_us)") ms"
	sleep 1
	: >"$tmp/idle.mem"
	i=0
	while test $i -lt "$n"; do
		meta=$XDG_STATE_HOME/gosbx/claims/perf-idle-$i/meta
		if test $i = 0; then
			say "# idle sandbox perf-idle-0:"
			sandbox_mem "$meta" show | sed -n '/^#/p'
		fi
		sandbox_mem "$meta" >>"$tmp/idle.mem"
		i=$((i + 1))
	done
	mem=$(awk '{ n++; p += $1; r += $2; s += $3; a += $4
		if ($1 < 3) bad++ }
		END { printf "%.1f %.0f %.0f %.0f %d", p / n, r / n, s / n,
			a / n, bad }' "$tmp/idle.mem")
	# shellcheck disable=SC2086 # the five numbers
	set -- $mem
	say "# idle sandboxes: $n, per sandbox: processes=$1" \
		"VmRSS=${2}kB Pss=${3}kB RssAnon=${4}kB;" \
		"$5 with fewer than 3 processes"
	if test "$5" != 0; then
		perf_error "local: $5 of the $n idle sandboxes are not running"
	else
		perf_goal "local: idle sandbox RSS, mean of $n" \
			"$(kb_to_mib "$2")" MiB "<=" 2 \
			"anon $(kb_to_mib "$4") MiB"
		perf_info "local: idle sandbox PSS, mean of $n" \
			"$(kb_to_mib "$3") MiB" "$1 processes each"
	fi
	names=
	i=0
	while test $i -lt "$n"; do
		names="$names perf-idle-$i"
		i=$((i + 1))
	done
	t0=$(date +%s%N)
	# shellcheck disable=SC2086 # one word per name
	if lgosbx close $names >/dev/null 2>"$tmp/close.err"; then
		perf_info "local: gosbx close of $n sandboxes" \
			"$(awk -v a="$t0" -v b="$(date +%s%N)" \
				'BEGIN { printf "%.0f ms", (b - a) / 1e6 }')"
	else
		sed 's/^/#   /' "$tmp/close.err" | head -n 10
		perf_error "local: gosbx close of $n sandboxes"
	fi
}

section_local() {
	for f in "$GOSBX" "$GOSBX_BUILD_DIR/gosbx-runtime" "$BENCH_LOCAL"; do
		if ! test -x "$f"; then
			perf_error "local: no '$f' (make it first)"
			return
		fi
	done
	local_setup
	say "# local: $(bwrap --version 2>&1), temporary state in" \
		"$local_root"
	if ! local_open perf-warm; then
		perf_error "local: gosbx open failed (see gosbx doctor)"
		return
	fi
	# the steady state: the std layer the first sandbox started built
	gostd_wait "${GOSBX_GOSTD_DIR:-$XDG_CACHE_HOME/gosbx/gostd}" ||
		perf_error "local: the std layer was not built in 10 minutes"
	local_open_bench
	local_resume_bench
	local_exec_bench
	local_go_bench
	lgosbx close perf-warm >/dev/null 2>&1
	local_idle_bench
	local_cleanup
}

# ---------------------------------------------------------------------
# Section "mcp": gosbx mcp (MCP over stdio and streamable HTTP) with the
# `go` toolset on the local backend, driven by bench-mcp, a C client;
# the same temporary HOME and XDG directories as the local section, and
# every server and sandbox gone at the end, also on Ctrl-C.
#   1. tools/call run_go_code {"command":"true"} on the session's warm
#      sandbox, over stdio and over HTTP (one keep-alive session), vs
#      POST /execute of `true` straight to a sandbox runtime's socket:
#      added latency at the median <= 2 ms for each transport; the
#      whole-process `gosbx exec --claim=X true` shown for context
#   2. tool calls/s from 8 HTTP sessions (8 threads, a sandbox each),
#      info, with the ratio to the runtime's requests/s from 8 clients
#      on one sandbox

BENCH_MCP=$GOSBX_BUILD_DIR/t/helper/bench-mcp

# Stop the HTTP MCP server: SIGTERM (it closes its sessions' sandboxes),
# then SIGKILL after ~15 s.
mcp_stop() {
	test -n "$mcp_pid" || return 0
	kill "$mcp_pid" 2>/dev/null
	i=0
	while kill -0 "$mcp_pid" 2>/dev/null && test $i -lt 150; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$mcp_pid" 2>/dev/null; then
		say "warning: gosbx mcp did not stop; killing it" >&2
		kill -9 "$mcp_pid" 2>/dev/null
	fi
	wait "$mcp_pid" 2>/dev/null
	mcp_pid=
}

# mcp_claims: the claims of the temporary state other than perf-mcp,
# on one line.
mcp_claims() {
	names=
	for d in "$XDG_STATE_HOME"/gosbx/claims/*; do
		test -d "$d" || continue
		test "${d##*/}" = perf-mcp || names="$names ${d##*/}"
	done
	say "${names# }"
}

# mcp 1, the reference: POST /execute to the runtime of a kept sandbox
# (its socket reached through a short symlink to the claim's run/).
mcp_runtime_bench() {
	ln -s "$XDG_STATE_HOME/gosbx/claims/perf-mcp/run" "$tmp/mcp-run"
	mcp_sock=--unix=$tmp/mcp-run/runtime.sock
	rt_med=
	if bench latency "$mcp_sock" --n=$mcp_n --warmup=$mcp_warmup; then
		rt_med=$(kv "$line" median_us)
		perf_info "mcp: runtime POST /execute true: median" \
			"$(us_to_ms "$rt_med") ms" \
			"p90 $(us_to_ms "$(kv "$line" p90_us)") ms"
	else
		perf_error "mcp: POST /execute to a sandbox's runtime"
	fi
	if bench_with "$BENCH_LOCAL" run --n="$local_exec_n" --warmup=5 \
		-- "$GOSBX" --backend=local exec --claim=perf-mcp true
	then
		perf_info "mcp: gosbx exec --claim true (process): median" \
			"$(us_to_ms "$(kv "$line" median_us)") ms" \
			"p90 $(us_to_ms "$(kv "$line" p90_us)") ms"
	else
		perf_error "mcp: gosbx exec --claim true"
	fi
}

# mcp_latency_rows <transport>: the rows of a bench-mcp stdio|http line
mcp_latency_rows() {
	med=$(kv "$line" median_us)
	perf_info "mcp: run_go_code true, $1: first call" \
		"$(us_to_ms "$(kv "$line" first_call_us)") ms" \
		"opens the sandbox"
	perf_info "mcp: run_go_code true, $1: median" \
		"$(us_to_ms "$med") ms" \
		"$(awk -v a="$med" -v b="$rt_med" \
			'BEGIN { printf "%.2fx runtime", (b > 0) ? a / b : 0 }')"
	perf_info "mcp: run_go_code true, $1: p90" \
		"$(us_to_ms "$(kv "$line" p90_us)") ms"
	if test -n "$rt_med"; then
		perf_goal "mcp: added latency over runtime, $1" \
			"$(awk -v a="$med" -v b="$rt_med" \
				'BEGIN { printf "%.3f", (a - b) / 1000 }')" \
			ms "<=" 2 "$mcp_n calls"
	fi
}

# mcp 1, stdio: bench-mcp spawns the server and ends it (end of input)
mcp_stdio_bench() {
	if bench_with "$BENCH_MCP" stdio --n=$mcp_n --warmup=$mcp_warmup \
		-- "$GOSBX" --backend=local mcp
	then
		mcp_latency_rows stdio
	else
		perf_error "mcp: run_go_code over stdio"
	fi
	left=$(mcp_claims)
	if test -n "$left"; then
		perf_error "mcp: sandboxes left after the stdio server: $left"
	fi
}

# mcp 1 and 2 over HTTP, against one server (--dev: no token)
mcp_http_bench() {
	port=$("$BENCH" free-port) || port=
	if test -z "$port"; then
		perf_error "mcp: no free loopback port"
		return
	fi
	url=http://127.0.0.1:$port/mcp
	"$GOSBX" --backend=local mcp --http="127.0.0.1:$port" --dev \
		</dev/null >"$tmp/mcp-http.log" 2>&1 &
	mcp_pid=$!
	# bench-mcp retries initialize while the server starts (20 s)
	if bench_with "$BENCH_MCP" http --url="$url" --n=$mcp_n \
		--warmup=$mcp_warmup
	then
		mcp_latency_rows http
		test "$(kv "$line" connects)" = 0 ||
			say "# note: the server closed keep-alive connections"
	else
		perf_error "mcp: run_go_code over HTTP"
		say "# server log (end):"
		tail -n 10 "$tmp/mcp-http.log" | sed 's/^/#   /'
	fi
	if bench_with "$BENCH_MCP" rps --url="$url" --clients=$perf_clients \
		--duration=$mcp_duration --warmup=$mcp_warmup
	then
		mcp_rps=$(kv "$line" calls_per_s)
		mcp_p90=$(kv "$line" p90_us)
	else
		mcp_rps=
		perf_error "mcp: tool calls/s over HTTP"
		say "# server log (end):"
		tail -n 10 "$tmp/mcp-http.log" | sed 's/^/#   /'
	fi
	mcp_stop
	left=$(mcp_claims)
	if test -n "$left"; then
		perf_error "mcp: sandboxes left after the HTTP server: $left"
	fi
	# the same load straight to one sandbox's runtime, for the ratio
	test -n "$mcp_rps" || return
	if bench rps "$mcp_sock" --clients=$perf_clients \
		--duration=$mcp_duration --warmup=$mcp_warmup
	then
		rt_rps=$(kv "$line" rps)
		perf_info "mcp: runtime POST /execute/s, $perf_clients clients" \
			"$(awk -v v="$rt_rps" 'BEGIN { printf "%.0f /s", v }')" \
			"p90 $(us_to_ms "$(kv "$line" p90_us)") ms"
	else
		rt_rps=
		perf_error "mcp: runtime requests/s in a sandbox"
	fi
	perf_info "mcp: tool calls/s, HTTP, $perf_clients sessions" \
		"$(awk -v v="$mcp_rps" 'BEGIN { printf "%.0f /s", v }')" \
		"$(awk -v a="$mcp_rps" -v b="$rt_rps" -v p="$mcp_p90" '
		BEGIN {
			if (b > 0) printf "%.2fx runtime, ", a / b
			printf "p90 %.3f ms", p / 1000
		}')"
}

section_mcp() {
	for f in "$GOSBX" "$GOSBX_BUILD_DIR/gosbx-runtime" "$BENCH" \
		"$BENCH_LOCAL" "$BENCH_MCP"; do
		if ! test -x "$f"; then
			perf_error "mcp: no '$f' (make it first)"
			return
		fi
	done
	local_setup
	rm -f "$tmp/mcp-run"
	say "# mcp: local backend, temporary state in $local_root"
	if ! local_open perf-mcp; then
		perf_error "mcp: gosbx open failed (see gosbx doctor)"
		return
	fi
	mcp_runtime_bench
	mcp_stdio_bench
	mcp_http_bench
	lgosbx close perf-mcp >/dev/null 2>&1
	local_cleanup
}

# ---------------------------------------------------------------------
# Section "kube": the kube backend against t/helper/fake-kube (a fake
# Kubernetes API server over TLS with a required client certificate,
# playing the agent-sandbox controller and the sandbox-router, one real
# gosbx-runtime per Sandbox), driven through the gosbx command with the
# same temporary HOME and XDG directories as the local section; every
# claim is closed, and the fake (and its runtimes) stopped, at the end.
# Issue 5's two goals are measured in-process by bench-kube (the
# library as lib/kube/backend-kube.c uses it):
#   1. bench-kube ready: create a claim, wait for Ready on the watch,
#      delete it, 20 times: the client's create->Ready minus the
#      fake's own (from receiving the create to setting Ready=True,
#      CLOCK_MONOTONIC instants from GET /fake/state): <= 5 ms at the
#      median
#   2. bench-kube forward: POST /execute of `true` through gosbx's
#      native port-forward (WebSocket to the router pod, router
#      headers) vs straight to that sandbox runtime's unix socket:
#      added latency at the median <= 1 ms
# Context (info): the whole `gosbx open -q` against a watcher of the
# claims, the fake router alone (plain HTTP), and the port-forward
# against a second fake without TLS (--insecure-http).

FAKE_KUBE=$GOSBX_BUILD_DIR/t/helper/fake-kube
BENCH_KUBE=$GOSBX_BUILD_DIR/t/helper/bench-kube
kube_ready_delay=200

# Stop the fake (SIGTERM stops its runtimes too; SIGKILL after 10 s).
kube_stop() {
	test -n "$kube_pid" || return 0
	kill "$kube_pid" 2>/dev/null
	i=0
	while kill -0 "$kube_pid" 2>/dev/null && test $i -lt 100; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$kube_pid" 2>/dev/null
	wait "$kube_pid" 2>/dev/null
	kube_pid=
	kube_plain_stop
	if test -n "$kube_watch_pid"; then
		kill "$kube_watch_pid" 2>/dev/null
		wait "$kube_watch_pid" 2>/dev/null
		kube_watch_pid=
	fi
}

kgosbx() {
	"$GOSBX" --backend=kube --kubeconfig="$tmp/kube/kubeconfig" "$@"
}

# Close the claims of the temporary state, then stop the fake.
kube_cleanup() {
	kube_plain_stop
	test -n "$kube_pid" || return 0
	if test -d "$XDG_STATE_HOME/gosbx/claims" &&
		test -n "$(ls "$XDG_STATE_HOME/gosbx/claims")"; then
		kgosbx close --all >/dev/null 2>&1 ||
			say "warning: gosbx close --all failed" >&2
	fi
	kube_stop
}

# A CA, a server certificate for 127.0.0.1 and a client certificate
# (O=system:masters), as t/lib-kube.sh's kube_pki makes them.
kube_pki() {
	# shellcheck disable=SC2086 # $ec: the openssl options
	(
		cd "$tmp/kube" &&
		ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
		openssl req -x509 $ec -keyout ca.key -out ca.crt -days 3 \
			-subj /CN=fake-kube-ca \
			-addext basicConstraints=critical,CA:TRUE \
			-addext keyUsage=critical,keyCertSign,cRLSign &&
		printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" \
			"basicConstraints=CA:FALSE" \
			"keyUsage=critical,digitalSignature,keyEncipherment" \
			"extendedKeyUsage=serverAuth" >server.ext &&
		printf '%s\n' "basicConstraints=CA:FALSE" \
			"keyUsage=critical,digitalSignature,keyEncipherment" \
			"extendedKeyUsage=clientAuth" >client.ext &&
		openssl req $ec -keyout server.key -out server.csr \
			-subj /CN=fake-kube &&
		openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key \
			-CAcreateserial -out server.crt -days 3 \
			-extfile server.ext &&
		openssl req $ec -keyout client.key -out client.csr \
			-subj "/O=system:masters/CN=kubernetes-admin" &&
		openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key \
			-CAcreateserial -out client.crt -days 3 \
			-extfile client.ext
	) >"$tmp/kube/pki.log" 2>&1
}

# kube_json <file> <key>: a top-level string of a JSON file
kube_json() {
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

kube_start() {
	mkdir -p "$tmp/kube"
	if ! kube_pki; then
		sed 's/^/#   /' "$tmp/kube/pki.log" | tail -n 10
		return 1
	fi
	crds=${GOSBX_CRDS_DIR:-}
	test -d "$crds/v0.4.6" ||
		crds=$("$PERF_DIR"/../crds.sh "$GOSBX_BUILD_DIR/t/crds") ||
		return 1
	"$FAKE_KUBE" --port=0 --cert="$tmp/kube/server.crt" \
		--key="$tmp/kube/server.key" --client-ca="$tmp/kube/ca.crt" \
		--release=v0.4.6 --crds="$crds/v0.4.6" \
		--state-dir="$tmp/kube/state" --info-file="$tmp/kube/info" \
		--runtime="$GOSBX_BUILD_DIR/gosbx-runtime" \
		--template=go-runtime-template \
		--ready-delay=$kube_ready_delay \
		</dev/null >"$tmp/kube/out" 2>"$tmp/kube/log" &
	kube_pid=$!
	i=0
	while ! test -s "$tmp/kube/info" && test $i -lt 200; do
		kill -0 "$kube_pid" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	if ! test -s "$tmp/kube/info"; then
		sed 's/^/#   /' "$tmp/kube/log" | tail -n 10
		return 1
	fi
	kube_url=$(kube_json "$tmp/kube/info" url) &&
	kube_router=$(kube_json "$tmp/kube/info" router) || return 1
	b64() { base64 <"$1" | tr -d '\n'; }
	cat >"$tmp/kube/kubeconfig" <<-EOF
	apiVersion: v1
	kind: Config
	clusters:
	- cluster:
	    certificate-authority-data: $(b64 "$tmp/kube/ca.crt")
	    server: $kube_url
	  name: fake
	contexts:
	- context:
	    cluster: fake
	    user: fake
	  name: fake
	current-context: fake
	users:
	- name: fake
	  user:
	    client-certificate-data: $(b64 "$tmp/kube/client.crt")
	    client-key-data: $(b64 "$tmp/kube/client.key")
	EOF
}

# A watcher of the claims of namespace default (python3, TLS with the
# client certificate): one line per event, "<CLOCK_REALTIME ns> <type>
# <claim> <Ready status>", into $tmp/kube/watch.
kube_watch_start() {
	python3 -u - "$kube_url" "$tmp/kube" >"$tmp/kube/watch" \
		2>"$tmp/kube/watch.err" <<-\PY &
	import http.client, json, ssl, sys, time
	url, d = sys.argv[1], sys.argv[2]
	ctx = ssl.create_default_context(cafile=d + "/ca.crt")
	ctx.load_cert_chain(d + "/client.crt", d + "/client.key")
	host, port = url.split("//")[1].split(":")
	c = http.client.HTTPSConnection(host, int(port), context=ctx)
	c.request("GET", "/apis/extensions.agents.x-k8s.io/v1alpha1"
		  "/namespaces/default/sandboxclaims?watch=1"
		  "&timeoutSeconds=600")
	r = c.getresponse()
	print("0 START - -")
	while True:
	    line = r.readline()
	    if not line:
	        break
	    t = time.time_ns()
	    ev = json.loads(line)
	    o = ev["object"]
	    ready = "-"
	    for cond in (o.get("status") or {}).get("conditions") or []:
	        if cond.get("type") == "Ready":
	            ready = cond.get("status")
	    print(t, ev["type"], o["metadata"]["name"], ready)
	PY
	kube_watch_pid=$!
	i=0
	while ! test -s "$tmp/kube/watch" && test $i -lt 100; do
		sleep 0.1
		i=$((i + 1))
	done
	test -s "$tmp/kube/watch"
}

# kube 1: open N claims one by one, each closed outside the timing
kube_open_bench() {
	n=$kube_open_n
	: >"$tmp/kube/opens"
	i=0
	while test $i -lt $((n + 2)); do
		t0=$(date +%s%N)
		name=$(kgosbx open -q 2>"$tmp/open.err")
		rc=$?
		t1=$(date +%s%N)
		if test $rc != 0 || test -z "$name"; then
			sed 's/^/#   /' "$tmp/open.err" | head -n 10
			perf_error "kube: gosbx open"
			return
		fi
		# the first two are warm-up
		test $i -ge 2 && say "$name $t0 $t1" >>"$tmp/kube/opens"
		kgosbx close "$name" >/dev/null 2>&1
		i=$((i + 1))
	done
	sleep 0.3
	# per open: wall, wall - ready delay, the fake's create->Ready
	# (watcher's ADDED to first Ready=True), wall minus that, then its
	# two parts: start to ADDED seen, Ready=True seen to exit
	awk -v d=$kube_ready_delay '
	FNR == NR { if ($2 == "ADDED") add[$3] = $1
		if ($4 == "True" && !($3 in rdy)) rdy[$3] = $1; next }
	{
		if (!($1 in add) || !($1 in rdy)) { bad++; next }
		w = ($3 - $2) / 1e3; f = (rdy[$1] - add[$1]) / 1e3
		print w, w - d * 1000, f, w - f, (add[$1] - $2) / 1e3,
			($3 - rdy[$1]) / 1e3
	}
	END { if (bad) print "bad", bad > "/dev/stderr" }' \
		"$tmp/kube/watch" "$tmp/kube/opens" >"$tmp/kube/open.us" \
		2>"$tmp/kube/open.bad"
	if test -s "$tmp/kube/open.bad" ||
		test "$(wc -l <"$tmp/kube/open.us")" != "$n"; then
		perf_error "kube: the watcher missed claims of gosbx open"
		return
	fi
	# col <k> <pct>: nearest-rank percentile of column k, in us
	col() {
		awk -v k="$1" '{ print $k }' "$tmp/kube/open.us" | sort -n |
			awk -v p="$2" '{ v[NR] = $1 } END {
				r = int((p * NR + 99) / 100); if (r < 1) r = 1
				printf "%.0f", v[r] }'
	}
	say "# bench=kube-open n=$n ready_delay_ms=$kube_ready_delay" \
		"wall_median_us=$(col 1 50) wall_p90_us=$(col 1 90)" \
		"fake_ready_median_us=$(col 3 50)" \
		"fake_ready_p90_us=$(col 3 90)" \
		"client_median_us=$(col 4 50) client_p90_us=$(col 4 90)" \
		"to_added_median_us=$(col 5 50)" \
		"ready_to_exit_median_us=$(col 6 50)"
	perf_info "kube: gosbx open -q, wall: median" \
		"$(us_to_ms "$(col 1 50)") ms" \
		"p90 $(us_to_ms "$(col 1 90)") ms, $n opens"
	perf_info "kube: open wall - ready-delay: median" \
		"$(us_to_ms "$(col 2 50)") ms" \
		"p90 $(us_to_ms "$(col 2 90)") ms (fake tick)"
	perf_info "kube: fake create->Ready (watcher): median" \
		"$(us_to_ms "$(col 3 50)") ms" \
		"p90 $(us_to_ms "$(col 3 90)") ms"
	perf_info "kube: open wall - fake create->Ready: median" \
		"$(us_to_ms "$(col 4 50)") ms" \
		"p90 $(us_to_ms "$(col 4 90)") ms (whole process)"
	perf_info "kube: open, start -> claim ADDED: median" \
		"$(us_to_ms "$(col 5 50)") ms" \
		"p90 $(us_to_ms "$(col 5 90)") ms"
	perf_info "kube: open, claim Ready -> exit: median" \
		"$(us_to_ms "$(col 6 50)") ms" \
		"p90 $(us_to_ms "$(col 6 90)") ms (port-forward)"
	if bench_with "$BENCH_LOCAL" run --n=20 --warmup=2 -- \
		"$GOSBX" -h
	then
		perf_info "kube: gosbx -h (process start)" \
			"$(us_to_ms "$(kv "$line" median_us)") ms" \
			"p90 $(us_to_ms "$(kv "$line" p90_us)") ms"
	fi
}

# ms_diff <us a> <us b>: (a - b) in ms, 3 decimals
ms_diff() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (a - b) / 1000 }'
}

# kube 1 (goal): the client's create->Ready beyond the fake's own
kube_ready_bench() {
	if ! bench_with "$BENCH_KUBE" ready \
		--kubeconfig="$tmp/kube/kubeconfig" --n=$kube_ready_n \
		--warmup=2 --template=go-runtime-template
	then
		perf_error "kube: bench-kube ready"
		return
	fi
	perf_goal "kube: create->Ready beyond the fake's (median)" \
		"$(us_to_ms "$(kv "$line" overhead_median_us)")" ms "<=" 5 \
		"p90 $(us_to_ms "$(kv "$line" overhead_p90_us)") ms"
	perf_info "kube: create->Ready, client: median" \
		"$(us_to_ms "$(kv "$line" client_median_us)") ms" \
		"p90 $(us_to_ms "$(kv "$line" client_p90_us)") ms"
	perf_info "kube: create->Ready, fake-kube's own: median" \
		"$(us_to_ms "$(kv "$line" fake_median_us)") ms" \
		"p90 $(us_to_ms "$(kv "$line" fake_p90_us)") ms"
	perf_info "kube: create POST -> fake has it: median" \
		"$(us_to_ms "$(kv "$line" to_received_median_us)") ms" \
		"p90 $(us_to_ms "$(kv "$line" to_received_p90_us)") ms"
	perf_info "kube: fake sets Ready -> watch has it: median" \
		"$(us_to_ms "$(kv "$line" ready_seen_median_us)") ms" \
		"p90 $(us_to_ms "$(kv "$line" ready_seen_p90_us)") ms"
}

# kube 2 (goal): one kube sandbox's runtime through the native
# port-forward and direct; the fake router alone as context
kube_forward_bench() {
	if ! name=$(kgosbx open -q 2>"$tmp/open.err"); then
		sed 's/^/#   /' "$tmp/open.err" | head -n 10
		perf_error "kube: gosbx open for the port-forward"
		return
	fi
	# the runtime sockets' paths must fit in sun_path
	ln -s "$tmp/kube/state" "$tmp/ks"
	if bench_with "$BENCH_KUBE" forward \
		--kubeconfig="$tmp/kube/kubeconfig" --claim="$name" \
		--state-dir="$tmp/ks" --n=$kube_n --warmup=$kube_warmup
	then
		rt_med=$(kv "$line" direct_median_us)
		perf_goal "kube: added by the port-forward (median)" \
			"$(us_to_ms "$(kv "$line" added_median_us)")" ms "<=" 1 \
			"$kube_n calls"
		perf_info "kube: POST /execute true, port-forward" \
			"$(us_to_ms "$(kv "$line" forward_median_us)") ms" \
			"p90 $(us_to_ms "$(kv "$line" forward_p90_us)") ms"
		perf_info "kube: POST /execute true, runtime socket" \
			"$(us_to_ms "$rt_med") ms" \
			"p90 $(us_to_ms "$(kv "$line" direct_p90_us)") ms"
		test "$(kv "$line" tunnels)" = 0 ||
			say "# note: the forward opened new tunnels after the" \
				"warm-up (connection not kept alive)"
	else
		perf_error "kube: bench-kube forward"
		rt_med=
	fi
	if test -n "$rt_med" && bench latency \
		--tcp="${kube_router#http://}" --n=$kube_n \
		--warmup=$kube_warmup --header="X-Sandbox-ID: $name" \
		--header="X-Sandbox-Namespace: default" \
		--header="X-Sandbox-Port: 8888"
	then
		perf_info "kube: added by the fake router alone" \
			"$(ms_diff "$(kv "$line" median_us)" "$rt_med") ms" \
			"plain HTTP, bench-runtime"
	elif test -n "$rt_med"; then
		perf_error "kube: POST /execute through the fake router"
	fi
	kgosbx close "$name" >/dev/null 2>&1
}

kube_plain_stop() {
	test -n "$kube_plain_pid" || return 0
	kill "$kube_plain_pid" 2>/dev/null
	i=0
	while kill -0 "$kube_plain_pid" 2>/dev/null && test $i -lt 100; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$kube_plain_pid" 2>/dev/null
	wait "$kube_plain_pid" 2>/dev/null
	kube_plain_pid=
}

# kube 2, context: the same port-forward against a second fake without
# TLS (--insecure-http), which shows the share of the fake's TLS relay
kube_plain_bench() {
	d=$tmp/kp
	mkdir -p "$d"
	"$FAKE_KUBE" --port=0 --insecure-http --release=v0.4.6 \
		--crds="$crds/v0.4.6" --state-dir="$d/state" \
		--info-file="$d/info" \
		--runtime="$GOSBX_BUILD_DIR/gosbx-runtime" \
		--template=go-runtime-template --ready-delay=0 \
		</dev/null >"$d/out" 2>"$d/log" &
	kube_plain_pid=$!
	i=0
	while ! test -s "$d/info" && test $i -lt 200; do
		kill -0 "$kube_plain_pid" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	if ! test -s "$d/info" || ! url=$(kube_json "$d/info" url); then
		sed 's/^/#   /' "$d/log" | tail -n 10
		perf_error "kube: fake-kube --insecure-http did not start"
		kube_plain_stop
		return
	fi
	cat >"$d/kubeconfig" <<-EOF
	apiVersion: v1
	kind: Config
	clusters:
	- cluster:
	    server: $url
	  name: plain
	contexts:
	- context:
	    cluster: plain
	    user: plain
	  name: plain
	current-context: plain
	users:
	- name: plain
	  user: {}
	EOF
	if bench_with "$BENCH_KUBE" forward --kubeconfig="$d/kubeconfig" \
		--state-dir="$d/state" --n=$kube_n --warmup=$kube_warmup
	then
		perf_info "kube: added by the port-forward, no TLS" \
			"$(us_to_ms "$(kv "$line" added_median_us)") ms" \
			"fake-kube --insecure-http"
	else
		perf_error "kube: bench-kube forward without TLS"
	fi
	kube_plain_stop
}

section_kube() {
	for f in "$GOSBX" "$GOSBX_BUILD_DIR/gosbx-runtime" "$BENCH" \
		"$BENCH_LOCAL" "$BENCH_KUBE" "$FAKE_KUBE"; do
		if ! test -x "$f"; then
			perf_error "kube: no '$f' (make it first)"
			return
		fi
	done
	for f in openssl python3 curl; do
		if ! command -v $f >/dev/null 2>&1; then
			perf_error "kube: $f is needed"
			return
		fi
	done
	local_setup
	rm -f "$tmp/ks"
	if ! kube_start; then
		perf_error "kube: fake-kube did not start"
		return
	fi
	say "# kube: fake-kube $kube_url, router $kube_router," \
		"--ready-delay=$kube_ready_delay, temporary state in $local_root"
	if ! kube_watch_start; then
		sed 's/^/#   /' "$tmp/kube/watch.err" | tail -n 10
		perf_error "kube: the claim watcher did not start"
		return
	fi
	kube_ready_bench
	kube_forward_bench
	kube_open_bench
	kube_plain_bench
	kube_cleanup
}

# ---------------------------------------------------------------------

print_table() {
	say
	say "gosbx perf: $(nproc 2>/dev/null || echo '?') cores," \
		"$(uname -sr), $(sed -n 's/^model name[[:space:]]*: //p' \
			/proc/cpuinfo 2>/dev/null | head -n 1)"
	case " $sections " in
	*" runtime "*)
		say "server: $RUNTIME (${server_name:--}" \
			"${server_version:--})"
		;;
	esac
	case " $sections " in
	*" local "*)
		say "local: $("$GOSBX" --version 2>&1 | head -n 1), $(bwrap --version \
			2>&1), $(go version 2>&1 | sed 's/^go version //'); load" \
			"average before: $load_before"
		;;
	esac
	case " $sections " in
	*" mcp "*)
		say "mcp: $("$GOSBX" --version 2>&1 | head -n 1) mcp, local backend," \
			"bench-mcp over stdio and HTTP/1.1 (libcurl)"
		;;
	esac
	awk -F '\t' '
	BEGIN {
		printf "%-46s %-14s %-14s %-30s %s\n", "metric", "value",
			"goal", "ratio", "result"
	}
	{
		printf "%-46s %-14s %-14s %-30s %s\n", $1, $2, $3, $4, $5
		if ($5 == "PASS") p++
		if ($5 == "MISS") m++
		if ($5 == "ERROR") e++
	}
	END {
		printf "%d goals met, %d missed, %d errors\n", p, m, e
	}' "$results"
}

# ---------------------------------------------------------------------
# Section "net": what issue 18 promised, on the local backend with the
# local section's temporary state.
#   1. the first `go run` of a net/http program in a new sandbox, once
#      the standard library's shared layer is built (lib/local/gostd.h):
#      <= 1 s; the same without the layer, info
#   2. a module version through netd's verified cache: first fetch (the
#      cache empty) and cached, vs `go mod download` on the host, info
#      (the sandbox's go still asks the checksum database through netd,
#      which relays every lookup)
#   3. the allow-list proxy: throughput of one CONNECT tunnel from a host
#      origin (>= 100 MB/s) and the time a connection through the proxy
#      adds to a small request (median, <= 5 ms)

# median of the numbers on stdin
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

net_gostd_bench() {
	GOSBX_GOSTD_DIR=$local_root/gostd
	export GOSBX_GOSTD_DIR
	cat >"$local_root/nh.go" <<-\GO
	package main

	import (
		"fmt"
		"net/http"
		"net/http/httptest"
	)

	func main() {
		s := httptest.NewServer(http.NotFoundHandler())
		defer s.Close()
		r, _ := http.Get(s.URL)
		fmt.Println(r.StatusCode)
	}
	GO
	cat >"$local_root/time-run.sh" <<-\SH
	s=$(date +%s%N); go run nh.go >/dev/null || exit 1; e=$(date +%s%N)
	echo $(((e - s) / 1000000))
	SH
	lgosbx exec -- true >/dev/null 2>&1
	if ! gostd_wait "$GOSBX_GOSTD_DIR"; then
		perf_error "net: the std layer was not built in 10 minutes"
		return
	fi
	ms=$(cd "$local_root" && GOSBX_GOSTD_DIR=off lgosbx exec \
		--file=nh.go --file=time-run.sh -- sh time-run.sh)
	say "# bench=gostd layer=off first_go_run_ms=$ms"
	perf_info "net: go run net/http, new sandbox, no layer" "$ms ms"
	for n in 1 2 3 4 5; do
		(cd "$local_root" && lgosbx exec --file=nh.go \
			--file=time-run.sh -- sh time-run.sh)
	done >"$tmp/gostd.ms"
	say "# bench=gostd layer=on first_go_run_ms=$(tr '\n' ' ' <"$tmp/gostd.ms")"
	perf_goal "net: go run net/http, new sandbox (median)" \
		"$(median <"$tmp/gostd.ms")" ms "<=" 1000
}

net_modules_bench() {
	mod=github.com/google/uuid@v1.6.0
	s=$(date +%s%N)
	GOMODCACHE=$tmp/host-modcache GOFLAGS=-modcacherw go mod download \
		"$mod" || { perf_error "net: go mod download on the host"; return; }
	e=$(date +%s%N)
	host=$(((e - s) / 1000000))
	rm -rf "$tmp/host-modcache"
	cat >"$local_root/fetch.sh" <<-SH
	s=\$(date +%s%N); go mod download $mod || exit 1; e=\$(date +%s%N)
	echo \$(((e - s) / 1000000))
	SH
	first=$(cd "$local_root" && lgosbx exec --file=fetch.sh -- sh fetch.sh)
	cached=$(cd "$local_root" && lgosbx exec --file=fetch.sh -- sh fetch.sh)
	say "# bench=modules host_ms=$host first_ms=$first cached_ms=$cached"
	perf_info "net: go mod download, host (direct)" "$host ms"
	perf_info "net: go mod download, sandbox, first" "$first ms" \
		"$(awk -v a="$first" -v b="$host" 'BEGIN { printf "%.1fx host", a / b }')"
	perf_info "net: go mod download, sandbox, cached" "$cached ms" \
		"$(awk -v a="$cached" -v b="$host" 'BEGIN { printf "%.1fx host", a / b }')"
}

net_proxy_bench() {
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	bytes=$((perf_stream_bytes))
	python3 - "$port" "$bytes" >"$tmp/origin.log" 2>&1 <<-\PY &
	import socket, sys, threading
	port, total = int(sys.argv[1]), int(sys.argv[2])
	buf = b"\0" * (1 << 20)
	def serve(c):
	    req = b""
	    while b"\r\n\r\n" not in req:
	        d = c.recv(4096)
	        if not d:
	            return
	        req += d
	    n = total if b"GET /big" in req else 2
	    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % n)
	    while n > 0:
	        k = min(n, len(buf))
	        c.sendall(buf[:k])
	        n -= k
	    c.close()
	s = socket.socket()
	s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind(("127.0.0.1", port))
	s.listen(64)
	while True:
	    c, _ = s.accept()
	    threading.Thread(target=serve, args=(c,), daemon=True).start()
	PY
	origin=$!
	i=0
	until curl -s -o /dev/null "http://127.0.0.1:$port/small"; do
		i=$((i + 1))
		test $i -lt 100 || { perf_error "net: no origin"; kill $origin; return; }
		sleep 0.1
	done
	cat >"$local_root/proxy.sh" <<-SH
	curl --noproxy "" -sS -p -o /dev/null -w "%{size_download} %{time_total}\n" http://127.0.0.1:$port/big || exit 1
	for i in \$(seq 20); do
		curl --noproxy "" -sS -p -o /dev/null -w "%{time_total}\n" http://127.0.0.1:$port/small || exit 1
	done
	SH
	out=$(cd "$local_root" && lgosbx exec --allow-net="127.0.0.1:$port" \
		--file=proxy.sh -- sh proxy.sh) ||
		{ perf_error "net: curl through the proxy failed"; kill $origin; return; }
	direct=$(for i in $(seq 20); do
		curl -sS -o /dev/null -w "%{time_total}\n" \
			"http://127.0.0.1:$port/small"
	done | median)
	kill $origin
	set -- $(printf '%s\n' "$out" | head -n 1)
	mbs=$(awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f", b / t / 1e6 }')
	via=$(printf '%s\n' "$out" | tail -n 20 | median)
	added=$(awk -v a="$via" -v b="$direct" 'BEGIN { printf "%.2f", (a - b) * 1000 }')
	say "# bench=proxy bytes=$1 seconds=$2 small_via_ms=$via small_direct_s=$direct"
	perf_goal "net: proxy CONNECT tunnel throughput" "$mbs" MB/s ">=" 100
	perf_goal "net: proxy added latency a connection" "$added" ms "<=" 5
}

section_net() {
	for f in "$GOSBX" "$GOSBX_BUILD_DIR/gosbx-runtime"; do
		if ! test -x "$f"; then
			perf_error "net: no '$f' (make it first)"
			return
		fi
	done
	local_setup
	net_gostd_bench
	net_modules_bench
	net_proxy_bench
	local_cleanup
}

# ---------------------------------------------------------------------
# cluster: a real control plane (contrib/cluster/up.sh; its binaries
# from contrib/cluster/build.sh) with each agent-sandbox release's
# controller and router and real gosbx-runtimes behind kwok's pods.
# Per release, $cluster_claim_n throwaway `gosbx exec -- true` one
# after another, as the RBAC-bound user, through the API server's
# port-forward and the router, over a warm pool of 4 (manifests/warmpool,
# scaled): the time from the claim's creation to Ready (its create and
# the watch that saw it Ready, as gosbx -v measures them), next to
# agent-sandbox's published p50 of 92 ms, and the whole command (process
# start, discovery, claim, router, the first command, the delete).

cluster_bench() { # <release>
	cdir=$tmp/cluster-$1
	if ! "$PERF_DIR"/../../contrib/cluster/up.sh --dir="$cdir" \
		--agent-sandbox="$1" --runtime="$GOSBX_BUILD_DIR/gosbx-runtime" \
		>"$tmp/cluster-up.out" 2>&1; then
		sed 's/^/#   /' "$tmp/cluster-up.out" | tail -n 15
		perf_error "cluster $1: up.sh failed"
		return
	fi
	cin() { "$PERF_DIR"/../../contrib/cluster/in.sh --dir="$cdir" "$@"; }
	cin kubectl --kubeconfig="$cdir/admin.kubeconfig" patch \
		sandboxwarmpool go-runtime-warmpool --type=merge \
		-p '{"spec":{"replicas":4}}' >/dev/null
	: >"$tmp/cluster.ms"
	i=0
	while test $i -lt $((cluster_claim_n + 2)); do
		# a full pool first: each claim adopts a warm sandbox
		j=0
		until test "$(cin kubectl --kubeconfig="$cdir/admin.kubeconfig" \
			get sandboxwarmpool go-runtime-warmpool \
			-o 'jsonpath={.status.readyReplicas}')" = 4 ||
			test $j -ge 300; do
			sleep 0.1
			j=$((j + 1))
		done
		t0=$(date +%s%N)
		if ! cin "$GOSBX" --backend=kube \
			--kubeconfig="$cdir/gosbx.kubeconfig" -v exec -- true \
			2>"$tmp/cluster.err"; then
			sed 's/^/#   /' "$tmp/cluster.err" | head -n 10
			perf_error "cluster $1: gosbx exec -- true"
			break
		fi
		t1=$(date +%s%N)
		# claim to Ready: the create and the watch that saw it Ready
		# (-v: their times as gosbx measured them)
		ready=$(sed -n -e 's|^kube: POST .*/sandboxclaims?.*: 201 (\([0-9]*\) ms)$|\1|p' \
			-e 's|^kube: GET .*/sandboxclaims?watch=1.*: ended by gosbx (\([0-9]*\) ms)$|\1|p' \
			"$tmp/cluster.err" | awk '{ t += $1; n++ } END { if (n == 2) print t }')
		if test -z "$ready"; then
			sed 's/^/#   /' "$tmp/cluster.err" | head -n 10
			perf_error "cluster $1: no create and watch times in gosbx -v"
			break
		fi
		# the first two are warm-up
		test $i -lt 2 ||
			echo "$(((t1 - t0) / 1000)) $((ready * 1000))" >>"$tmp/cluster.ms"
		i=$((i + 1))
	done
	"$PERF_DIR"/../../contrib/cluster/down.sh --dir="$cdir" >/dev/null 2>&1
	test "$(wc -l <"$tmp/cluster.ms")" = "$cluster_claim_n" || return
	# pct <column> <p>: nearest rank, in ms
	pct() {
		cut -d ' ' -f "$1" "$tmp/cluster.ms" | sort -n |
			awk -v p="$2" '{ v[NR] = $1 } END {
			r = int((p * NR + 99) / 100); if (r < 1) r = 1
			printf "%.1f", v[r] / 1000 }'
	}
	r50=$(pct 2 50) r90=$(pct 2 90) r99=$(pct 2 99)
	p50=$(pct 1 50) p90=$(pct 1 90) p99=$(pct 1 99)
	say "# bench=cluster release=$1 n=$cluster_claim_n ready_p50_ms=$r50 ready_p90_ms=$r90 ready_p99_ms=$r99 exec_p50_ms=$p50 exec_p90_ms=$p90 exec_p99_ms=$p99"
	perf_goal "cluster $1: claim created to Ready, p50" "$r50" ms "<=" 92 \
		"agent-sandbox's published p50"
	perf_info "cluster $1: claim created to Ready, p90 / p99" "$r90 / $r99 ms"
	perf_info "cluster $1: gosbx exec -- true (claim to first command, delete), p50" "$p50 ms"
	perf_info "cluster $1: gosbx exec -- true, p90 / p99" "$p90 / $p99 ms"
}

section_cluster() {
	. "$PERF_DIR"/../../contrib/cluster/versions.sh
	for r in $GOSBX_CLUSTER_CONTROLLERS; do
		cluster_bench "$r"
	done
}

# ---------------------------------------------------------------------
# Section "sandboxd": issue 22, gosbx-runtime's sandboxd listeners
# (--sandboxd-rest, --sandboxd-grpc) against upstream sandboxd built from
# the Go module at the pinned version (t/lib-sandboxd.sh, cached in the
# suite's TEST_CACHE, t/lib-cache.sh), in the same run, through the same client
# (t/sandboxd-conformance: upstream's generated gRPC client):
#   1. Execute of `true`, p50 and p99 over $perf_n calls, each server;
#      goal: gosbx-runtime's p50 at most half of sandboxd's
#   2. Start of `head -c 1073741824 /dev/zero` ($perf_stream_bytes):
#      wall time and MB/s, each server, info
#   3. RSS of each server after start and after the runs, info
#   4. the floor, info: posix_spawnp("true") and waitpid from C, the
#      least any server that runs a process per Execute must spend
#      (glibc spawns with CLONE_VM|CLONE_VFORK, as Go's os/exec does)

# the test library's few helpers that t/lib-sandboxd.sh uses
sandboxd_lib() {
	TRASH_DIRECTORY=$tmp
	TEST_REAL_HOME=$HOME
	test_atexit() { :; }
	test_retry() {
		_tr_n=$1 _tr_p=$2
		shift 2
		while test "$_tr_n" -gt 0; do
			"$@" && return 0
			_tr_n=$((_tr_n - 1))
			sleep "$_tr_p"
		done
		return 1
	}
	test_free_port() {
		python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
	}
	# this process has the real HOME and XDG directories already
	test_real_go() { go "$@"; }
	TEST_DIRECTORY=$(cd "$PERF_DIR"/.. && pwd)
	# TEST_CACHE and test_lock: the suite's, so both share one build
	. "$TEST_DIRECTORY"/lib-cache.sh
	PATH=$GOSBX_BUILD_DIR:$PATH
	. "$TEST_DIRECTORY"/lib-sandboxd.sh
}

sandboxd_stop() {
	command -v sbd_stop_all_ >/dev/null 2>&1 || return 0
	sbd_stop_all_
}

# sandboxd_bench <up|gs> <label>
sandboxd_bench() {
	kb0=$(proc_kb "$(cat "$tmp/$1.pid")" VmRSS)
	line=$("$tmp/conf" bench-exec "$(cat "$tmp/$1.grpc")" "$perf_n" \
		2>"$tmp/bench.err") || {
		sed 's/^/#   /' "$tmp/bench.err" | head -n 5
		perf_error "sandboxd $2: Execute of true"
		return 1
	}
	p50=$(printf '%s\n' "$line" | sed -n 's/^p50_us //p')
	p99=$(printf '%s\n' "$line" | sed -n 's/^p99_us //p')
	eval "p50_$1=$p50"
	say "# bench=sandboxd-exec server=$2 n=$perf_n p50_us=$p50 p99_us=$p99"
	line=$("$tmp/conf" bench-stream "$(cat "$tmp/$1.grpc")" \
		"$perf_stream_bytes" 2>"$tmp/bench.err") || {
		sed 's/^/#   /' "$tmp/bench.err" | head -n 5
		perf_error "sandboxd $2: Start of head -c $perf_stream_bytes"
		return 1
	}
	sec=$(printf '%s\n' "$line" | sed -n 's/^seconds //p')
	mbs=$(printf '%s\n' "$line" | sed -n 's/^mb_per_s //p')
	kb1=$(proc_kb "$(cat "$tmp/$1.pid")" VmRSS)
	hwm=$(proc_kb "$(cat "$tmp/$1.pid")" VmHWM)
	say "# bench=sandboxd-stream server=$2 bytes=$perf_stream_bytes seconds=$sec mb_per_s=$mbs rss_start_kb=$kb0 rss_after_kb=$kb1 hwm_kb=$hwm"
	perf_info "sandboxd $2: Execute true, p50 / p99" \
		"$(us_to_ms "$p50") / $(us_to_ms "$p99") ms"
	perf_info "sandboxd $2: Start stream $((perf_stream_bytes >> 20)) MiB" \
		"$sec s, $mbs MB/s"
	perf_info "sandboxd $2: RSS idle after start / after the runs" \
		"$(kb_to_mib "$kb0") / $(kb_to_mib "$kb1") MiB"
}

section_sandboxd() {
	sandboxd_lib
	if ! sbd_build 4>"$tmp/sbd-build.log"; then
		sed 's/^/#   /' "$tmp/sbd-build.log" | tail -n 10
		perf_error "sandboxd: building upstream sandboxd $SBD_VERSION"
		return
	fi
	if ! (cp -R "$PERF_DIR/../sandboxd-conformance" "$tmp/conf.src" &&
		cd "$tmp/conf.src" && GOFLAGS=-mod=mod go build -o "$tmp/conf" .) \
		>"$tmp/conf-build.log" 2>&1; then
		sed 's/^/#   /' "$tmp/conf-build.log" | tail -n 10
		perf_error "sandboxd: building t/sandboxd-conformance"
		return
	fi
	if ! sbd_start_upstream --name=up 4>"$tmp/sbd-start.log" ||
		! sbd_start_gosbx --name=gs -- --log-level=warn \
			4>>"$tmp/sbd-start.log"; then
		sed 's/^/#   /' "$tmp/sbd-start.log" | tail -n 10
		perf_error "sandboxd: starting the servers"
		return
	fi
	say "# sandboxd: upstream $("$SBD_BIN" --version | head -n 1)," \
		"gosbx $("$RUNTIME" --version 2>&1 | head -n 1)"
	p50_up= p50_gs= p50_floor=
	if bench direct --no-shell --command=true --n=$perf_n \
		--warmup=$perf_warmup; then
		p50_floor=$(kv "$line" median_us)
		perf_info "sandboxd: the floor: posix_spawnp true, p50 / p99" \
			"$(us_to_ms "$p50_floor") / $(us_to_ms "$(kv "$line" p99_us)") ms"
	else
		perf_error "sandboxd: posix_spawnp of true (the floor)"
	fi
	sandboxd_bench up "upstream $SBD_VERSION"
	sandboxd_bench gs gosbx-runtime
	if test -n "$p50_up" && test -n "$p50_gs"; then
		perf_goal "sandboxd: gosbx-runtime Execute p50 vs sandboxd's" \
			"$(us_to_ms "$p50_gs")" ms "<=" \
			"$(awk -v u="$p50_up" 'BEGIN { printf "%.3f", u / 2000 }')" \
			"half of sandboxd's $(us_to_ms "$p50_up") ms${p50_floor:+;}${p50_floor:+ the floor $(us_to_ms "$p50_floor") ms}"
	fi
	sandboxd_stop
}

sections=${*:-$all_sections}
load_before=$(cut -d ' ' -f 1-3 /proc/loadavg)
start=$(date +%s)
for s in $sections; do
	case " $all_sections " in
	*" $s "*) ;;
	*)
		say "fatal: unknown section '$s' (have: $all_sections)" >&2
		exit 1
		;;
	esac
	say "# section $s"
	"section_$s"
done
print_table
say "($(($(date +%s) - start)) s)"
test "$perf_errors" = 0
