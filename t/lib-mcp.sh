# Helpers for the tests that drive `gosbx mcp` with real MCP clients
# (t41xx): the official TypeScript SDK and inspector-cli, installed from
# t/mcp-client/package-lock.json. Source after test-lib.sh:
#
#	. "$(dirname "$0")"/test-lib.sh
#	. "$TEST_DIRECTORY"/lib-mcp.sh
#
# Sourcing it skips the whole script unless node, npm, curl, a built gosbx
# and the backend (t/lib-backend.sh: bubblewrap for local) are here, and installs the clients once per checkout: `npm
# ci` into t/mcp-client/node_modules when that is missing or was installed
# from another lock file. A lock (test_lock mcp-client)
# keeps scripts that run in parallel from running npm at the same time.
#
# Clients (their output: one JSON line per step; see the .mjs headers):
#	mcp_client [options] step... [-- gosbx mcp ...]   t/mcp-client/client.mjs
#	mcp_swarm [options]                               t/mcp-client/swarm.mjs
#	mcp_inspector [args]   npx @modelcontextprotocol/inspector-cli --cli
#
# Checks on a client's output: mcp_check FILE 'JS expression' succeeds
# when the expression is true, with r = the steps' JSON lines (r[0] is the
# first step), text(i) = the first text block of r[i]'s result, errs = the
# errors the SDK reported outside a request (onerror), all = every line,
# H("stdout") = the heading "── stdout ──"; a file that is one JSON
# document (inspector-cli's output) is r[0]. Otherwise it shows the file
# and fails. mcp_get FILE 'expression' prints the value (a string raw).
# mcp_client_bg <n> [client arguments] runs a client in the background
# (<n>.out, <n>.err, <n>.pid); mcp_client_wait <n> returns its status.
#
# HTTP server: mcp_http_start [--name=<n>] [gosbx mcp options] starts
# `gosbx mcp --http=127.0.0.1:<free port> --token-file=<n>.token` and
# waits until it answers; <n>.url holds the endpoint URL, <n>.token the
# token, <n>.pid the pid, <n>.log its stderr (default name "srv").
# mcp_http_stop [<n>] stops it (SIGTERM) and fails unless it exited 0
# without a sanitizer report.
# Every server still running when the script ends is stopped.
#
# stdio server: $MCP_STDIO runs `gosbx mcp "$@"` with its stderr appended
# to stdio.log (the SDK's stdio transport gives a server its own stderr;
# this keeps every server's, where mcp_no_sanitizer_report looks).
# $MCP_TEE <heartbeat> [options] also keeps both streams (see below).
#
# Processes: wait_running / wait_gone '<command line>' wait (bounded) for
# a process whose whole command line is exactly that; no_claims and
# wait_no_claims check that `gosbx claims -o json` is empty.

test -n "${TRASH_DIRECTORY:-}" || {
	echo >&2 "lib-mcp.sh: source test-lib.sh first"
	exit 1
}

MCP_CLIENT_DIR=$GOSBX_SOURCE_DIR/t/mcp-client
export MCP_CLIENT_DIR

command -v node >/dev/null 2>&1 || test_skip_all 'node is not installed'
command -v npm >/dev/null 2>&1 || test_skip_all 'npm is not installed'
command -v curl >/dev/null 2>&1 || test_skip_all 'curl is not installed'
test -x "$GOSBX_BUILD_DIR/gosbx" || test_skip_all "gosbx is not built"
# the backend: local (bwrap needed), or kube with GOSBX_TEST_BACKEND=kube
. "$TEST_DIRECTORY"/lib-backend.sh

# Poll a command until it succeeds: mcp_poll <seconds> cmd...
mcp_poll() {
	_mcp_tries=$(($1 * 10))
	shift
	test_retry "$_mcp_tries" 0.1 "$@"
}

# The installed tree matches the lock file when the stamp written after
# npm ci holds the lock file's checksum (npm ci removes node_modules
# first, so an interrupted install has no stamp). $1: the directory of
# a package.json and its lock (default t/mcp-client).
mcp_client_installed_() {
	_mcp_dir=${1:-$MCP_CLIENT_DIR}
	test -f "$_mcp_dir/node_modules/.gosbx-installed" &&
	test "$(cat "$_mcp_dir/node_modules/.gosbx-installed")" = \
		"$(cksum <"$_mcp_dir/package-lock.json")"
}

mcp_client_install_() {
	_mcp_dir=${1:-$MCP_CLIENT_DIR}
	test_lock mcp-client 300 || {
		echo >&5 "Bail out! waited 5 minutes for the lock mcp-client"
		exit 1
	}
	if ! mcp_client_installed_ "$_mcp_dir"; then
		# npm's cache and logs stay out of the user's home (test-lib
		# points HOME to the trash directory); the cache is kept in
		# t/trash for the next install
		if ! npm ci --prefix "$_mcp_dir" --no-audit --no-fund \
			--cache "$TEST_DIRECTORY/trash/.npm-cache" \
			>"$TRASH_DIRECTORY/npm-ci.log" 2>&1
		then
			test_unlock mcp-client
			sed 's/^/# /' "$TRASH_DIRECTORY/npm-ci.log" >&5
			echo >&5 "Bail out! npm ci in $_mcp_dir failed"
			exit 1
		fi
		cksum <"$_mcp_dir/package-lock.json" \
			>"$_mcp_dir/node_modules/.gosbx-installed"
	fi
	test_unlock mcp-client
}

mcp_client_installed_ || mcp_client_install_

# mcp_hosts_install: the real agent hosts and the conformance suite of
# t/mcp-hosts (t413x; big: installed only by the scripts that use them),
# the same way; their commands are then in $MCP_HOSTS_BIN.
MCP_HOSTS_DIR=$GOSBX_SOURCE_DIR/t/mcp-hosts
MCP_HOSTS_BIN=$MCP_HOSTS_DIR/node_modules/.bin
mcp_hosts_install() {
	mcp_client_installed_ "$MCP_HOSTS_DIR" ||
	mcp_client_install_ "$MCP_HOSTS_DIR"
}

# mcp_host_run API SCRIPT LOG command...: run a host against the scripted
# model (t/mcp-hosts/with-model.sh: $MODEL_URL in the command's
# environment, every request body in LOG). As root, all of it runs in a
# network namespace of its own whose only interface is loopback: a host
# can reach the model and nothing else (no account, no telemetry); its
# sandboxes are local and need no network either.
mcp_host_run() {
	if test "$(id -u)" = 0 && unshare -n true 2>/dev/null &&
		command -v ip >/dev/null 2>&1
	then
		MCP_NETNS=1 unshare -n sh "$MCP_HOSTS_DIR/with-model.sh" "$@"
	else
		sh "$MCP_HOSTS_DIR/with-model.sh" "$@"
	fi
}

MCP_STDIO=$TRASH_DIRECTORY/bin/gosbx-mcp
mkdir -p "$TRASH_DIRECTORY/bin" &&
cat >"$MCP_STDIO" <<EOF &&
#!/bin/sh
exec "$GOSBX_BUILD_DIR/gosbx" mcp "\$@" 2>>"$TRASH_DIRECTORY/stdio.log"
EOF
chmod +x "$MCP_STDIO" || exit 1

# $MCP_TEE <heartbeat> [gosbx mcp options]: a stdio server as a host
# registers it, with GOSBX_MCP_HEARTBEAT=<heartbeat>; what the client
# sent is kept in c2s.<heartbeat>.log, what the server answered in
# s2c.<heartbeat>.log (in the trash directory), its stderr in stdio.log
MCP_TEE=$TRASH_DIRECTORY/bin/gosbx-mcp-tee
cat >"$MCP_TEE" <<EOF &&
#!/bin/sh
hb=\$1
shift
tee -a "$TRASH_DIRECTORY/c2s.\$hb.log" |
GOSBX_MCP_HEARTBEAT=\$hb "$GOSBX_BUILD_DIR/gosbx" mcp "\$@" \\
	2>>"$TRASH_DIRECTORY/stdio.log" |
tee -a "$TRASH_DIRECTORY/s2c.\$hb.log"
EOF
chmod +x "$MCP_TEE" || exit 1

# mcp_heartbeats <file>: how many heartbeats ("running, <s> s") the
# server sent in a s2c log of $MCP_TEE
mcp_heartbeats() {
	grep -c "\"method\":\"notifications/progress\".*\"message\":\"running, " \
		"$1" || :
}

# mcp_no_sanitizer_report FILE...: no ASan/UBSan/LSan report in the files
mcp_no_sanitizer_report() {
	if grep -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$@" >&4
	then
		return 1
	fi
	return 0
}

# On a real control plane (GOSBX_TEST_BACKEND=cluster) every gosbx runs
# in the cluster's network namespace (t/lib-backend.sh), and so must the
# clients that reach its --http listener or start it over stdio:
# $MCP_IN <command> runs it there (in.sh execs it: the same process);
# elsewhere it is empty.
MCP_IN=
if test "$GOSBX_TEST_BACKEND" = cluster; then
	MCP_IN="$CLUSTER_SCRIPTS/in.sh --dir=$CLUSTER_DIR"
fi

mcp_client() {
	$MCP_IN node "$MCP_CLIENT_DIR/client.mjs" "$@"
}

mcp_swarm() {
	$MCP_IN node "$MCP_CLIENT_DIR/swarm.mjs" "$@"
}

# inspector-cli 1.0.3 reads its own package.json after checking
# fs.existsSync("../package.json") relative to the current directory but
# imports it relative to its module (build/index.js): it only starts from
# a directory whose parent holds a package.json. Give it one in the trash
# directory, with the installed node_modules beside it, where npx finds
# the package (--no-install: never the registry).
mcp_inspector() {
	_mcp_insp=$TRASH_DIRECTORY/inspector
	if ! test -d "$_mcp_insp/cwd"; then
		mkdir -p "$_mcp_insp/cwd" &&
		echo '{ "private": true }' >"$_mcp_insp/package.json" &&
		ln -s "$MCP_CLIENT_DIR/node_modules" "$_mcp_insp/node_modules" ||
		return 1
	fi
	(
		cd "$_mcp_insp/cwd" &&
		npx --no-install @modelcontextprotocol/inspector-cli --cli "$@"
	)
}

# mcp_eval_ check|get FILE EXPR
mcp_eval_() {
	node -e '
const fs = require("fs");
const [mode, file, expr] = process.argv.slice(1);
const raw = fs.readFileSync(file, "utf8");
let all;
try {
	all = [JSON.parse(raw)];	/* one document (inspector-cli) */
} catch {
	all = raw.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}
/* a heading of the result text: H("stdout") is "── stdout ──" */
const H = (s) => "\u2500\u2500 " + s + " \u2500\u2500";
const errs = all.filter((l) => l.event === "onerror");
const r = all.filter((l) => l.event === undefined);
const text = (i) => {
	const b = (r[i]?.result?.content ?? []).find((c) => c.type === "text");
	return b === undefined ? undefined : b.text;
};
let v;
try {
	v = eval(expr);
} catch (e) {
	console.error(`${expr}: ${e.message}`);
	process.exit(2);
}
if (mode === "get") {
	if (v !== undefined)
		process.stdout.write(typeof v === "string" ? v : JSON.stringify(v));
	process.exit(0);
}
process.exit(v ? 0 : 1);
' "$@"
}

mcp_check() {
	if ! mcp_eval_ check "$1" "$2"; then
		echo >&4 "mcp_check: false: $2"
		echo >&4 "in $1:"
		cut -c1-3000 "$1" >&4
		return 1
	fi
}

mcp_get() {
	mcp_eval_ get "$1" "$2"
}

# The claims of the backend (gosbx claims) as JSON: none left. The url
# backend has none (`gosbx claims` refuses it, t/lib-backend.sh): there
# every sandbox is the one runtime, nothing to leave behind.
no_claims() {
	if test "$GOSBX_TEST_BACKEND" = url; then
		echo "[]" >claims.json
		return 0
	fi
	gosbx claims -o json >claims.json 2>>claims.err &&
	test "$(tr -d ' \n' <claims.json)" = "[]"
}

# wait_no_claims: every claim is deleted within 30 s
wait_no_claims() {
	mcp_poll 30 no_claims || {
		echo >&4 "claims left behind:"
		cat claims.json >&4
		return 1
	}
}

# A process whose whole command line is exactly $1 (a sleep that a tool
# runs; the client's own command line holds more than that). Each script
# sleeps for its own number of seconds (t4100: "sleep 4100.xxx"), so
# that scripts running at the same time do not see each other's.
mcp_running() {
	pgrep -f "^$1\$" >/dev/null
}
mcp_not_running() {
	! pgrep -f "^$1\$" >/dev/null
}
wait_running() {
	mcp_poll 60 mcp_running "$1" || {
		echo >&4 "no process '$1' appeared within 60 s"
		return 1
	}
}
wait_gone() {
	mcp_poll 30 mcp_not_running "$1" || {
		echo >&4 "still running after 30 s:"
		pgrep -af "^$1\$" >&4
		return 1
	}
}

# mcp_http_start [--name=<n>] [gosbx mcp options]
mcp_http_start() {
	_mcp_name=srv
	case "${1:-}" in
	--name=*)
		_mcp_name=${1#--name=}
		shift
		;;
	esac
	_mcp_port=$(test_free_port) || return 1
	# 32 random bytes as hex
	od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$_mcp_name.token" &&
	echo "http://127.0.0.1:$_mcp_port/mcp" >"$_mcp_name.url" || return 1
	rm -f "$_mcp_name.pid" "$_mcp_name.status"
	# the subshell waits for the server, so that its exit status is
	# kept even when a later test body (another subshell) stops it
	(
		gosbx mcp --http="127.0.0.1:$_mcp_port" \
			--token-file="$TRASH_DIRECTORY/$_mcp_name.token" "$@" \
			</dev/null >"$_mcp_name.out" 2>"$_mcp_name.log" &
		echo $! >"$_mcp_name.pid.tmp" &&
		mv "$_mcp_name.pid.tmp" "$_mcp_name.pid"
		wait $!
		echo $? >"$_mcp_name.status.tmp" &&
			mv "$_mcp_name.status.tmp" "$_mcp_name.status"
	) &
	test_retry 100 0.1 test -f "$_mcp_name.pid" || return 1
	echo "$_mcp_name" >>"$TRASH_DIRECTORY/.mcp-servers"
	# up when it answers HTTP at all (without a token: 401)
	_mcp_tries=300
	while test "$_mcp_tries" -gt 0; do
		if test -f "$_mcp_name.status"; then
			echo >&4 "gosbx mcp exited with $(cat "$_mcp_name.status"):"
			cat "$_mcp_name.log" >&4
			return 1
		fi
		_mcp_code=$($MCP_IN curl -s -o /dev/null -w '%{http_code}' \
			-X POST "$(cat "$_mcp_name.url")" 2>/dev/null)
		test -n "$_mcp_code" && test "$_mcp_code" != 000 && return 0
		_mcp_tries=$((_mcp_tries - 1))
		sleep 0.1
	done
	echo >&4 "gosbx mcp did not answer on $(cat "$_mcp_name.url"):"
	cat "$_mcp_name.log" >&4
	return 1
}

# At the end: stop the servers and the background clients still there.
mcp_kill_all_() {
	for _mcp_n in $(cat "$TRASH_DIRECTORY/.mcp-servers" \
			"$TRASH_DIRECTORY/.mcp-bg" 2>/dev/null); do
		_mcp_pid=$(cat "$TRASH_DIRECTORY/$_mcp_n.pid" 2>/dev/null) ||
			continue
		test -f "$TRASH_DIRECTORY/$_mcp_n.status" ||
			kill "$_mcp_pid" 2>/dev/null
	done
	for _mcp_n in $(cat "$TRASH_DIRECTORY/.mcp-servers" \
			"$TRASH_DIRECTORY/.mcp-bg" 2>/dev/null); do
		_mcp_pid=$(cat "$TRASH_DIRECTORY/$_mcp_n.pid" 2>/dev/null) ||
			continue
		mcp_poll 10 test -f "$TRASH_DIRECTORY/$_mcp_n.status" ||
			kill -9 "$_mcp_pid" 2>/dev/null
	done
	rm -f "$TRASH_DIRECTORY/.mcp-servers" "$TRASH_DIRECTORY/.mcp-bg"
}
test_atexit mcp_kill_all_

# mcp_client_bg <n> [client arguments]: run mcp_client in the background,
# stdout to <n>.out, stderr to <n>.err, its pid in <n>.pid;
# mcp_client_wait <n> waits (at most 120 s) and returns its exit status.
mcp_client_bg() {
	_mcp_name=$1
	shift
	rm -f "$_mcp_name.pid" "$_mcp_name.status"
	(
		$MCP_IN node "$MCP_CLIENT_DIR/client.mjs" "$@" \
			>"$_mcp_name.out" 2>"$_mcp_name.err" &
		echo $! >"$_mcp_name.pid.tmp" &&
		mv "$_mcp_name.pid.tmp" "$_mcp_name.pid"
		wait $!
		echo $? >"$_mcp_name.status.tmp" &&
			mv "$_mcp_name.status.tmp" "$_mcp_name.status"
	) &
	test_retry 100 0.1 test -f "$_mcp_name.pid" || return 1
	echo "$_mcp_name" >>"$TRASH_DIRECTORY/.mcp-bg"
}

mcp_client_wait() {
	mcp_poll 120 test -f "$1.status" || {
		echo >&4 "client $1 still running after 120 s"
		return 125
	}
	return "$(cat "$1.status")"
}

# mcp_http_stop [<n>]: SIGTERM; the server exits 0 within 30 s
mcp_http_stop() {
	_mcp_name=${1:-srv}
	_mcp_pid=$(cat "$_mcp_name.pid") || return 1
	kill -TERM "$_mcp_pid" || return 1
	mcp_poll 30 test -f "$_mcp_name.status" || {
		echo >&4 "gosbx mcp (pid $_mcp_pid) ignored SIGTERM for 30 s"
		kill -9 "$_mcp_pid"
		return 1
	}
	rm -f "$_mcp_name.pid"
	if test "$(cat "$_mcp_name.status")" != 0; then
		echo >&4 "gosbx mcp exited with $(cat "$_mcp_name.status"):"
		cat "$_mcp_name.log" >&4
		return 1
	fi
	mcp_no_sanitizer_report "$_mcp_name.log"
}
