#!/bin/sh
test_description='gosbx exec and push on the url backend: gosbx-runtime and an upstream-shaped server'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-runtime.sh

test_expect_success 'setup: gosbx-runtime on loopback' '
	rt_start &&
	GOSBX_URL=$(cat rt.url) &&
	echo "$GOSBX_URL" >url
'
GOSBX_URL=$(cat url 2>/dev/null)
export GOSBX_URL

test_expect_success 'exec: live output, exit status, files (extended path)' '
	echo data >f &&
	expect_code 3 gosbx --backend=url exec -f f:d/f -- \
		"cat d/f; echo err >&2; exit 3" >out 2>err &&
	echo data >expect && test_cmp expect out &&
	echo err >expect && test_cmp expect err &&
	test_cmp f work/d/f
'

test_expect_success 'exec: --timeout kills on the server (124)' '
	expect_code 124 gosbx --backend=url exec --timeout=300ms -- \
		"sleep 1000.456" &&
	test_retry 100 0.1 sh -c "! pgrep -f \"^sleep 1000.456\" >/dev/null"
'

test_expect_success 'push into the runtime at --url needs no claim' '
	mkdir -p tree/a &&
	echo x >tree/a/x &&
	gosbx --backend=url push --to=p tree &&
	test_cmp tree/a/x work/p/tree/a/x
'

test_expect_success 'exec: a throwaway on the url backend deletes nothing' '
	gosbx --backend=url exec -- true &&
	test -f work/d/f
'

. "$TEST_DIRECTORY"/lib-upstream.sh

test_expect_success 'setup: the upstream-shaped server' '
	upstream_start
'

test_expect_success 'exec through /execute: output, status, seed upload' '
	echo seed >s.txt &&
	expect_code 4 gosbx --backend=url --url="$(cat up.url)" exec \
		-f s.txt -- "cat s.txt; echo e >&2; exit 4" >out 2>err &&
	echo seed >expect && test_cmp expect out &&
	echo e >expect && test_cmp expect err &&
	test_cmp s.txt upwork/s.txt
'

test_expect_success PYTHON 'exec --json through /execute' '
	gosbx --backend=url --url="$(cat up.url)" exec --json -- echo hi >out &&
	python3 -c "
import json
o = json.load(open(\"out\"))
assert o[\"exit_code\"] == 0 and o[\"stdout\"] == \"hi\\n\", o
assert o[\"cpu_ms\"] is None and o[\"peak_rss_kb\"] is None, o
"
'

test_done
