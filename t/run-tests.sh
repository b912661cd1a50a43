#!/bin/sh
# Run the unit tests (t/unit, cmocka) and the shell tests (t/t*.sh),
# then print one summary line: "N passed, N failed".
# Arguments: shell-test globs relative to t/ (default: all).
# GOSBX_TEST_JOBS: scripts run in parallel (default 2).
# GOSBX_TEST_TIMEOUT: seconds a script may take (default 1500); one that
# takes longer is stopped (SIGTERM, SIGKILL 30 s later) and fails, so
# that a hang costs one script, not the run.
# GOSBX_TEST_UNIT=1: the unit tests too when globs are given (they
# always run without).
cd "$(dirname "$0")" || exit 1
: "${GOSBX_BUILD_DIR:=$(cd .. && pwd)/build}"
export GOSBX_BUILD_DIR
results=$(mktemp)
GOSBX_TEST_RESULTS=$results
export GOSBX_TEST_RESULTS
jobs=${GOSBX_TEST_JOBS:-2}
GOSBX_TEST_TIMEOUT=${GOSBX_TEST_TIMEOUT:-1500}
export GOSBX_TEST_TIMEOUT
logdir=trash/logs
rm -rf "$logdir"
mkdir -p "$logdir"

# the agent-sandbox CRDs (t/crds.sh) for the unit tests and the kube
# suites; without them those fail (t/lib-kube.sh), never skip
if test -z "${GOSBX_CRDS_DIR:-}"; then
	if GOSBX_CRDS_DIR=$(./crds.sh "$GOSBX_BUILD_DIR/t/crds"); then
		export GOSBX_CRDS_DIR
	else
		echo "*** the agent-sandbox CRDs could not be had (t/crds.sh)"
		echo "crds 0 1 0 0" >>"$results"
	fi
fi

unit_pass=0
unit_fail=0
if test $# = 0 || test "${GOSBX_TEST_UNIT:-}" = 1; then
	for u in "$GOSBX_BUILD_DIR"/t/unit/u-*; do
		test -x "$u" || continue
		name=$(basename "$u")
		if CMOCKA_MESSAGE_OUTPUT=TAP "$u" >"$logdir/$name.out" 2>&1; then
			:
		fi
		p=$(grep -c '^ok ' "$logdir/$name.out")
		f=$(grep -c '^not ok ' "$logdir/$name.out")
		if ! grep -q '^1\.\.' "$logdir/$name.out"; then
			f=$((f + 1)) # crashed before its plan
		fi
		unit_pass=$((unit_pass + p))
		unit_fail=$((unit_fail + f))
		if test "$f" -gt 0; then
			echo "*** unit $name: $f failed"
			cat "$logdir/$name.out"
		else
			echo "unit $name: $p passed"
		fi
	done
fi
test $# = 0 && set -- t[0-9]*.sh

scripts=
for g in "$@"; do
	found=
	for s in $g; do
		test -f "$s" && scripts="$scripts $s" && found=1
	done
	if test -z "$found"; then
		# a selection that runs nothing is a mistake, not a pass
		echo "*** no test script matches '$g'"
		echo "$g 0 1 0 0" >>"$results"
	fi
done


if test -n "$scripts"; then
	# xargs -P runs scripts in parallel; each writes its own log (the
	# list splits into names; the inner script's variables are its own)
	# shellcheck disable=SC2086,SC2016
	printf '%s\n' $scripts |
		xargs -P "$jobs" -I{} sh -c '
			s={}; name=$(basename "$s" .sh); start=$(date +%s)
			timeout -k 30 "$GOSBX_TEST_TIMEOUT" sh "$s" \
				>"trash/logs/$name.out" 2>&1
			st=$?
			if test $st = 0; then
				echo "$name: ok ($(grep -c "^ok " "trash/logs/$name.out") tests, $(($(date +%s) - start)) s)"
			else
				test $st = 124 || test $st = 137 &&
					echo "*** $name: TIMED OUT (GOSBX_TEST_TIMEOUT=$GOSBX_TEST_TIMEOUT s)"
				echo "*** $name: FAILED after $(($(date +%s) - start)) s"
				grep -v "^ok " "trash/logs/$name.out" | head -120
				grep -q "^$name " "$GOSBX_TEST_RESULTS" ||
					echo "$name 0 1 0 0" >>"$GOSBX_TEST_RESULTS"
			fi'
fi

passed=$unit_pass
failed=$unit_fail
skipped=0
while read -r name p f s _; do
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
done <"$results"
rm -f "$results"
# Skips are never silent: each one, with the prerequisite it lacked.
if test "$skipped" -gt 0; then
	echo "skipped:"
	grep -H '^ok [0-9]* # skip ' "$logdir"/t*.out 2>/dev/null |
		sed -e 's|^.*/\(t[0-9]*\)[^/]*\.out:ok \([0-9]*\) # skip |  \1 #\2: |'
fi
# Each failure again, last, with the end of its output: a CI log that
# shows only its head and its tail still says why.
if test "$failed" -gt 0; then
	echo "failed:"
	# a unit test: its name and the lines of its failure
	for f in "$logdir"/u-*.out; do
		grep -q '^not ok ' "$f" 2>/dev/null || continue
		grep -A3 '^not ok ' "$f" | grep -v '^ok ' |
			sed "s|^|  $(basename "$f" .out): |"
	done
	for f in "$logdir"/t*.out; do
		grep -q '^not ok [0-9]* - ' "$f" 2>/dev/null || continue
		awk -v t="$(basename "$f" .out | sed 's/-.*//')" '
			function flush() {
				if (title == "") return
				print "  " t " #" title
				for (i = (n > 15 ? n - 14 : 1); i <= n; i++)
					print "    " out[i]
				title = ""; n = 0
			}
			/^not ok [0-9]+ - / && !/# TODO/ {
				flush(); title = substr($0, 8); sub(/ - /, ": ", title); next
			}
			/^(ok|not ok) / { flush(); next }
			title != "" && /^#\t> / { out[++n] = substr($0, 5) }
			END { flush() }' "$f"
	done
fi
echo "$passed passed, $failed failed, $skipped skipped"
test "$failed" = 0
