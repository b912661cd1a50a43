#!/bin/sh
# Run the libFuzzer harnesses (make fuzz): t/fuzz/run.sh <build dir>
# <seconds> <harness>...
#
# Each harness runs for <seconds> on a working corpus in
# <build dir>/t/fuzz/corpus-<name>/, seeded from the committed
# t/fuzz/corpus/<name>/ (new inputs stay in the build directory; copy
# the interesting ones into t/fuzz/corpus/ by hand). A crash, leak or
# timeout stops that harness: its input is kept as
# <build dir>/t/fuzz/<name>-crash-<sha1> (or leak-, timeout-), the run
# goes on with the others and the script fails at the end.
set -u
dir=$1
seconds=$2
shift 2
src=$(cd "$(dirname "$0")" && pwd)
failed=
for bin in "$@"; do
	name=$(basename "$bin")
	work=$dir/t/fuzz/corpus-$name
	mkdir -p "$work"
	echo "== $name: ${seconds}s"
	if ! "$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$dir/t/fuzz/$name-" \
		"$work" "$src/corpus/$name" >"$dir/t/fuzz/$name.log" 2>&1
	then
		tail -n 40 "$dir/t/fuzz/$name.log"
		failed="$failed $name"
	else
		grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" \
			"$dir/t/fuzz/$name.log" | sed "s/^/   /"
	fi
done
if test -n "$failed"; then
	echo "fuzz: failed:$failed (inputs in $dir/t/fuzz/)"
	exit 1
fi
