# gosbx test library: source it from t/tNNNN-*.sh after setting
# test_description. Prints TAP; each script runs in its own trash
# directory, which is removed on success (kept with --debug or when a
# test failed). Helpers: test_expect_success, test_expect_failure,
# test_must_fail, test_cmp, test_grep, test_set_prereq, test_done.
#
# Environment: GOSBX_BUILD_DIR (built binaries, default ../build),
# GOSBX_TEST_VERBOSE=1 shows the commands' output.

TEST_DIRECTORY=$(cd "$(dirname "$0")" && pwd)
GOSBX_SOURCE_DIR=$(cd "$TEST_DIRECTORY/.." && pwd)
: "${GOSBX_BUILD_DIR:=$GOSBX_SOURCE_DIR/build}"
export GOSBX_BUILD_DIR GOSBX_SOURCE_DIR TEST_DIRECTORY
PATH="$GOSBX_BUILD_DIR:$GOSBX_BUILD_DIR/t/helper:$PATH"
export PATH

this_test=$(basename "$0" .sh)
TRASH_DIRECTORY="$TEST_DIRECTORY/trash/$this_test"
# As root a local claim's storage is a mount (lib/local/storage.h): detach
# any that an earlier run left behind before removing its directory.
if test -d "$TRASH_DIRECTORY" && test "$(id -u)" = 0; then
	awk -v p="$TRASH_DIRECTORY/" 'index($5, p) == 1 { print $5 }' \
		/proc/self/mountinfo | sort -r | while read -r mnt; do
		umount -l "$mnt"
	done
fi
rm -rf "$TRASH_DIRECTORY" "$TRASH_DIRECTORY.out"
mkdir -p "$TRASH_DIRECTORY" || exit 1

# Keep the tests away from the user's real state and caches (the real
# home stays known for the Go module cache, which holds what tests
# fetch through GOPROXY: t/lib-kube.sh).
TEST_REAL_HOME=${HOME:-}
TEST_REAL_XDG_CACHE_HOME=${XDG_CACHE_HOME:-}
TEST_REAL_XDG_CONFIG_HOME=${XDG_CONFIG_HOME:-}
HOME="$TRASH_DIRECTORY/home"
XDG_STATE_HOME="$HOME/.local/state"
XDG_CACHE_HOME="$HOME/.cache"
XDG_CONFIG_HOME="$HOME/.config"
XDG_RUNTIME_DIR="$TRASH_DIRECTORY/run"
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
export HOME XDG_STATE_HOME XDG_CACHE_HOME XDG_CONFIG_HOME XDG_RUNTIME_DIR

. "$TEST_DIRECTORY"/lib-cache.sh

# test_real_go <go arguments>: the go command of the real user, with
# that user's module cache, build cache and go env file. HOME alone is
# not enough: the go command finds its build cache and env file through
# XDG_CACHE_HOME and XDG_CONFIG_HOME first, which point into the trash
# directory here, so every build of a test program (upstream sandboxd,
# the SDK and conformance programs) compiled all its dependencies anew:
# minutes a script.
test_real_go() {
	env HOME="$TEST_REAL_HOME" XDG_CACHE_HOME="$TEST_REAL_XDG_CACHE_HOME" \
		XDG_CONFIG_HOME="$TEST_REAL_XDG_CONFIG_HOME" go "$@"
}

# test_python_venv <python> <requirements file> [<pip options>]: a
# venv of <python> with the requirements installed by pip (through the
# registry of the user's pip configuration), kept in $TEST_CACHE as
# venv-<checksum of the file, python's path and version>, made once:
# a stamp marks a complete install, test_lock python-venv keeps two
# scripts from installing at once. Prints its python; fails with pip's
# output on fd 4.
test_python_venv() {
	_tv_py=$1
	_tv_req=$2
	shift 2
	_tv_sum=$({ cat "$_tv_req" && echo "$_tv_py" &&
		"$_tv_py" --version; } | cksum | cut -d" " -f1) &&
	_tv_venv=$TEST_CACHE/venv-$_tv_sum &&
	test_lock python-venv 600 || return 1
	if ! test -f "$_tv_venv/.gosbx-installed"; then
		rm -rf "$_tv_venv" &&
		"$_tv_py" -m venv "$_tv_venv" &&
		HOME=$TEST_REAL_HOME "$_tv_venv/bin/pip" install -q \
			--disable-pip-version-check "$@" -r "$_tv_req" \
			>"$TRASH_DIRECTORY/pip.log" 2>&1 &&
		: >"$_tv_venv/.gosbx-installed" || {
			cat "$TRASH_DIRECTORY/pip.log" >&4
			rm -rf "$_tv_venv"
			test_unlock python-venv
			return 1
		}
	fi
	test_unlock python-venv
	echo "$_tv_venv/bin/python"
}

unset GOSBX_BACKEND GOSBX_URL GOSBX_MCP_TOKEN KUBECONFIG
# the standard library's build cache of local sandboxes (lib/local/gostd.h):
# built once for the whole run, in the background by the first sandbox,
# instead of once a script
: "${GOSBX_GOSTD_DIR:=$GOSBX_BUILD_DIR/t/gostd}"
export GOSBX_GOSTD_DIR
LC_ALL=C
export LC_ALL
# The sanitizers: abort on the first report so a test fails visibly.
ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS UBSAN_OPTIONS

test_count=0
test_success=0
test_failure=0
test_skipped=0
test_fixed=0
test_broken=0
debug=
verbose=${GOSBX_TEST_VERBOSE:-}
for arg in "$@"; do
	case "$arg" in
	-d | --debug) debug=t ;;
	-v | --verbose) verbose=t ;;
	esac
done

exec 5>&1
if test -n "$verbose"; then
	exec 4>&2 3>&1
else
	exec 4>/dev/null 3>/dev/null
fi

cd "$TRASH_DIRECTORY" || exit 1

# Cleanup actions registered with test_atexit run when the script ends
# (in the trash directory, so relative pid files are found),
# last registered first. They are kept in a file, so that a test body
# (which runs in a subshell) can register them too.
test_atexit_file="$TRASH_DIRECTORY/.test-atexit"
: >"$test_atexit_file"
test_atexit() {
	{
		printf '%s\n' "$*"
		cat "$test_atexit_file"
	} >"$test_atexit_file.new" && mv "$test_atexit_file.new" "$test_atexit_file"
}
test_run_atexit() {
	if test -s "$test_atexit_file"; then
		# each line is one command: run them all, whatever fails
		while IFS= read -r cmd; do
			(cd "$TRASH_DIRECTORY" 2>/dev/null; eval "$cmd") \
				>/dev/null 2>&1
		done <"$test_atexit_file"
		: >"$test_atexit_file"
	fi
	test_kill_leftovers
}

# test_kill_leftovers: after the cleanups, a process of ours that still
# runs in the trash directory (a helper server whose pid was lost, a
# daemon a test forgot) is killed and named in the log, so that it
# neither outlives the script nor holds the runner's output open.
# Tests of gosbx's own leftovers (t7022) check before this runs.
test_kill_leftovers() {
	# (twice: what the cleanups just killed may still be ending)
	for _tk_pass in 1 2; do
		_tk_found=
		for _tk_p in /proc/[0-9]*; do
			test "${_tk_p#/proc/}" = "$$" && continue
			test -O "$_tk_p" || continue
			case "$(readlink "$_tk_p/cwd" 2>/dev/null)" in
			"$TRASH_DIRECTORY" | "$TRASH_DIRECTORY"/*) ;;
			*) continue ;;
			esac
			_tk_found=1
			test $_tk_pass = 2 || continue
			echo >&2 "warning: leftover process killed:" \
				"$(tr '\0' ' ' <"$_tk_p/cmdline" 2>/dev/null |
					cut -c1-200)"
			kill -9 "${_tk_p#/proc/}" 2>/dev/null
		done
		test -n "$_tk_found" || return 0
		test $_tk_pass = 2 || sleep 1
	done
}
trap 'test_run_atexit' EXIT

say() { echo "$*" >&5; }

test_set_prereq() { eval "prereq_$1=t"; }
# test_have_prereq A,B,!C: A and B are set, C is not
test_have_prereq() {
	for p in $(echo "$1" | tr , ' '); do
		case "$p" in
		!*)
			eval "v=\${prereq_${p#!}:-}"
			test -z "$v" || return 1
			;;
		*)
			eval "v=\${prereq_$p:-}"
			test -n "$v" || return 1
			;;
		esac
	done
	return 0
}

# Without --verbose a test's output (stdout, stderr and the diagnostics
# on fd 4) goes to one file per test, beside the trash directory, and a
# failing test's last lines are printed after its body: a CI log says
# why, not only which.
test_output="$TRASH_DIRECTORY.out"
test_run_() {
	if test -n "$verbose"; then
		(
			eval "$1"
		) 2>&4 >&3
	else
		: >"$test_output"
		(
			eval "$1"
		) 3>>"$test_output" 4>>"$test_output" 2>&4 >&3
	fi
}

# test_say_output_: the failed test's last 40 lines of output, as comments
test_say_output_() {
	test -z "$verbose" && test -s "$test_output" || return 0
	echo "#	--- its output (the last 40 lines):" >&5
	tail -n 40 "$test_output" | cut -c1-300 | sed -e 's/^/#	> /' >&5
}

# test_expect_success [PREREQ] 'title' 'commands'
test_expect_success() {
	prereq=
	if test $# = 3; then
		prereq=$1
		shift
	fi
	test_count=$((test_count + 1))
	if test -n "$prereq" && ! test_have_prereq "$prereq"; then
		test_skipped=$((test_skipped + 1))
		say "ok $test_count # skip $1 (missing $prereq)"
		return 0
	fi
	if test -n "$verbose"; then
		echo "expecting success: $2" >&3
	fi
	if test_run_ "$2"; then
		test_success=$((test_success + 1))
		say "ok $test_count - $1"
	else
		test_failure=$((test_failure + 1))
		say "not ok $test_count - $1"
		echo "$2" | sed -e 's/^/#	/' >&5
		test_say_output_
	fi
}

# A known breakage: it is reported, not counted as a failure.
test_expect_failure() {
	prereq=
	if test $# = 3; then
		prereq=$1
		shift
	fi
	test_count=$((test_count + 1))
	if test -n "$prereq" && ! test_have_prereq "$prereq"; then
		test_skipped=$((test_skipped + 1))
		say "ok $test_count # skip $1 (missing $prereq)"
		return 0
	fi
	if test_run_ "$2"; then
		test_fixed=$((test_fixed + 1))
		say "ok $test_count - $1 # TODO known breakage vanished"
	else
		test_broken=$((test_broken + 1))
		say "not ok $test_count - $1 # TODO known breakage"
	fi
}

# test_must_fail cmd...: the command fails with a status below 129
# that is not a crash (signals give >128; sanitizers abort).
test_must_fail() {
	"$@" 2>&4
	exit_code=$?
	if test $exit_code -eq 0; then
		echo >&4 "test_must_fail: command succeeded: $*"
		return 1
	elif test $exit_code -gt 129 && test $exit_code -le 192; then
		echo >&4 "test_must_fail: died by signal $((exit_code - 128)): $*"
		return 1
	elif test $exit_code -eq 127; then
		echo >&4 "test_must_fail: command not found: $*"
		return 1
	fi
	return 0
}

# test_expect_code N cmd...
test_expect_code() {
	want=$1
	shift
	"$@" 2>&4
	exit_code=$?
	if test $exit_code -ne "$want"; then
		echo >&4 "test_expect_code: want $want, got $exit_code: $*"
		return 1
	fi
	return 0
}

# expect_code N cmd...: like test_expect_code, but the caller's
# redirections of stderr stay in effect (`expect_code 125 gosbx ... 2>err`)
expect_code() {
	_want=$1
	shift
	"$@"
	_got=$?
	test "$_got" = "$_want" || {
		echo >&4 "want exit $_want, got $_got: $*"
		return 1
	}
}

# expect_code_err N cmd...: cmd exits N; its stderr is kept in err
# (and shown in the verbose log)
expect_code_err() {
	want=$1
	shift
	"$@" 2>err
	rc=$?
	cat err >&4
	if test $rc -ne "$want"; then
		echo >&4 "want exit $want, got $rc: $*"
		return 1
	fi
}

# with_err cmd...: run cmd with its stderr in the file "err", for
# test_must_fail (which sends stderr to the verbose log):
# `test_must_fail with_err gosbx exec ...`, then test_grep ... err
with_err() {
	"$@" 2>err
}

# test_expect_code_err N cmd...: cmd exits N; its stderr is kept in
# the file "err" (test_expect_code sends stderr to the verbose log)
test_expect_code_err() {
	want=$1
	shift
	"$@" 2>err
	exit_code=$?
	cat err >&4
	if test $exit_code -ne "$want"; then
		echo >&4 "test_expect_code_err: want $want, got $exit_code: $*"
		return 1
	fi
}

test_cmp() {
	if ! cmp -s "$1" "$2"; then
		diff -u "$1" "$2" >&4
		return 1
	fi
}

# test_grep [-v] [grep options] pattern file
test_grep() {
	if test "$1" = "!"; then
		shift
		if grep "$@" >/dev/null; then
			echo >&4 "test_grep: found unexpected '$*':"
			cat "$(eval echo \${$#})" >&4 2>/dev/null
			return 1
		fi
		return 0
	fi
	if ! grep "$@" >/dev/null; then
		echo >&4 "test_grep: did not find '$*' in:"
		cat "$(eval echo \${$#})" >&4 2>/dev/null
		return 1
	fi
}

test_line_count() {
	actual=$(wc -l <"$3" | tr -d ' ')
	if ! test "$actual" "$1" "$2"; then
		echo >&4 "test_line_count: $actual lines, want $1 $2 in $3"
		return 1
	fi
}

# test_ended <pid>...: none of them runs; a zombie has ended (this
# machine's init may reap it seconds later, and kill -0 succeeds on
# it). pgrep -f stops matching a killed process as soon as its memory
# is gone, which is before its children are told of its death: wait
# with this, by pid, for what the test asserts next.
test_ended() {
	for _te_p; do
		case "$(sed -n "s/.*) \(.\).*/\1/p" "/proc/$_te_p/stat" 2>/dev/null)" in
		"" | Z | X) ;;
		*) return 1 ;;
		esac
	done
}

# Wait until a command succeeds: test_retry <tries> <sleep-s> cmd...
test_retry() {
	tries=$1
	pause=$2
	shift 2
	while test "$tries" -gt 0; do
		"$@" && return 0
		tries=$((tries - 1))
		sleep "$pause"
	done
	return 1
}

# A free TCP port on 127.0.0.1 (the helper binds port 0 and reports).
test_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# test_limits_prereq: set LIMITS when this user's local sandboxes get
# their memory, pids and CPU limits (root, or cgroups delegated to the
# user), else NOLIMITS: then (a normal user on cgroup v1, for one) each
# sandbox warns once on stderr that it runs without its default limits,
# and an explicit limit fails closed. test_drop_limits_warning FILE
# removes that warning from FILE. lib-backend.sh calls it.
test_limits_prereq() {
	# a claim directory of its own: as root, isolate-run gives it to
	# the sandbox's uid, and the trash directory (HOME) stays ours
	mkdir -p "$TRASH_DIRECTORY/.limits-probe" &&
	if "$GOSBX_BUILD_DIR/t/helper/isolate-run" --memory=64m --pids=64 \
		--cpus=1 --claim-dir="$TRASH_DIRECTORY/.limits-probe" \
		-- true >/dev/null 2>&1
	then
		test_set_prereq LIMITS
	else
		test_set_prereq NOLIMITS
	fi
}
# A normal user whose sandboxes cannot have their default limits (CI's
# unprivileged run): gosbx mcp refuses to start without them unless
# told GOSBX_ALLOW_NO_LIMITS=1, which the suites say for that user (the
# refusal itself is t7033's to test, with the variable unset).
if test "$(id -u)" != 0 && test -x "$GOSBX_BUILD_DIR/t/helper/isolate-run"
then
	test_limits_prereq
	if test_have_prereq NOLIMITS; then
		GOSBX_ALLOW_NO_LIMITS=1
		export GOSBX_ALLOW_NO_LIMITS
	fi
fi

test_drop_limits_warning() {
	sed "/^warning: sandbox runs without some default limits: /d" "$1" \
		>"$1.nolimits" && mv "$1.nolimits" "$1"
}

test_skip_all() {
	say "1..0 # SKIP $*"
	echo "# $this_test: 0 passed, 0 failed, skipped: $*" >&5
	test_run_atexit
	cd "$TEST_DIRECTORY" && rm -rf "$TRASH_DIRECTORY"
	exit 0
}

# test_at_done <cmd>: run <cmd> (eval) when the script reaches
# test_done, before the cleanups of test_atexit: the last tests that a
# library adds to a suite it was sourced into (e.g. lib-backend.sh's
# check that the upstream router carried the requests)
test_at_done_cmds=
test_at_done() {
	test_at_done_cmds="$test_at_done_cmds$*
"
}

test_done() {
	_td_cmds=$test_at_done_cmds
	test_at_done_cmds=
	eval "$_td_cmds"
	test_run_atexit
	say "1..$test_count"
	if test -n "${GOSBX_TEST_RESULTS:-}"; then
		echo "$this_test $test_success $test_failure $test_skipped $test_broken" \
			>>"$GOSBX_TEST_RESULTS"
	fi
	if test "$test_failure" = 0; then
		if test -z "$debug"; then
			cd "$TEST_DIRECTORY" && rm -rf "$TRASH_DIRECTORY"
		fi
		exit 0
	fi
	say "# failed $test_failure among $test_count test(s)"
	exit 1
}

test_set_prereq POSIXPERM
command -v go >/dev/null 2>&1 && test_set_prereq GO
command -v python3 >/dev/null 2>&1 && test_set_prereq PYTHON
command -v node >/dev/null 2>&1 && test_set_prereq NODE
command -v bwrap >/dev/null 2>&1 && test_set_prereq BWRAP
test -n "${SANITIZE:-}" && test_set_prereq SANITIZED
test -z "${SANITIZE:-}" && test_set_prereq NOT_SANITIZED
test "$(id -u)" = 0 && test_set_prereq ROOT
