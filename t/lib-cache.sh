# What the test suite and t/perf/run.sh share to keep what is expensive
# to build: TEST_CACHE and the suite-wide locks. Sourced by test-lib.sh;
# needs TEST_DIRECTORY (t/), TEST_REAL_HOME and GOSBX_BUILD_DIR.

# Where the suite keeps what is expensive to make and depends only on a
# version (upstream sandboxd, the Python SDK's venv): outside the build
# directory, so that a fresh clone, `make clean` and the sanitizer
# build (another build directory) reuse it; each entry is named after
# its version or checksum. $GOSBX_TEST_CACHE, else the real home's
# ~/.cache/gosbx/test, else the build directory's t/.
if test -n "${GOSBX_TEST_CACHE:-}"; then
	TEST_CACHE=$GOSBX_TEST_CACHE
elif test -n "$TEST_REAL_HOME" && test "$TEST_REAL_HOME" != /; then
	TEST_CACHE=$TEST_REAL_HOME/.cache/gosbx/test
else
	TEST_CACHE=$GOSBX_BUILD_DIR/t
fi

# test_lock <name> <seconds>: take the suite-wide lock <name> (a
# directory t/trash/.<name>.lock holding its owner's pid), waiting at
# most <seconds>; a lock whose owner died is taken over. Scripts run in
# parallel (run-tests.sh), so whatever installs into a shared place
# takes one. Fails, saying so on fd 4, when the wait runs out.
# test_unlock <name>: give it back.
test_lock() {
	_tl_dir=$TEST_DIRECTORY/trash/.$1.lock
	_tl_left=$(($2 * 10))
	mkdir -p "$TEST_DIRECTORY/trash" || return 1
	until mkdir "$_tl_dir" 2>/dev/null; do
		_tl_owner=$(cat "$_tl_dir/pid" 2>/dev/null)
		if test -n "$_tl_owner" && ! kill -0 "$_tl_owner" 2>/dev/null
		then
			rm -rf "$_tl_dir"
			continue
		fi
		_tl_left=$((_tl_left - 1))
		if test "$_tl_left" -le 0; then
			echo >&4 "test_lock: waited $2 s for $_tl_dir"
			return 1
		fi
		sleep 0.1
	done
	echo $$ >"$_tl_dir/pid"
}
test_unlock() {
	rm -rf "$TEST_DIRECTORY/trash/.$1.lock"
}
