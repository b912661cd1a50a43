#!/bin/sh
test_description='realistic Go loops, through gosbx exec --claim and MCP run_go_code'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq GO || test_skip_all 'go is not installed'
# The backend of t/lib-backend.sh (local by default).
# With node and npm, through MCP too (lib-mcp.sh sources lib-backend.sh)
if command -v node >/dev/null && command -v npm >/dev/null &&
	command -v curl >/dev/null && test_have_prereq PYTHON
then
	. "$TEST_DIRECTORY"/lib-mcp.sh
	test_set_prereq MCP
else
	. "$TEST_DIRECTORY"/lib-backend.sh
fi

test_atexit 'gosbx close --all'

# Both paths work in one kept claim, each under a directory of its own
# (ex/ for exec, mcp/ for MCP): gosbx mcp --claim reattaches to it, so
# the Go caches (the race runtime takes a minute to build) are shared.
E=$(printf '\303\251')
DATA=$(printf '\346\225\260\346\215\256')

# 1. A test whose testdata changes with the same size
mkdir -p src/cache/testdata
printf 'module cache\n\ngo 1.19\n' >src/cache/go.mod
cat >src/cache/cache_test.go <<\EOF
package cache

import (
	"os"
	"testing"
)

func TestData(t *testing.T) {
	b, err := os.ReadFile("testdata/in.txt")
	if err != nil || string(b) != "good" {
		t.Fatalf("testdata/in.txt: %q, %v", b, err)
	}
}
EOF
printf good >src/cache/testdata/in.txt
printf baad >src/baad.txt

# 2. A module with a replace to a local module
mkdir -p src/rep/app src/rep/lib
cat >src/rep/app/go.mod <<\EOF
module example.com/app

go 1.19

require example.com/lib v0.0.0

replace example.com/lib => ../lib
EOF
cat >src/rep/app/main.go <<\EOF
package main

import (
	"fmt"

	"example.com/lib"
)

func main() { fmt.Println(lib.Hello()) }
EOF
printf 'module example.com/lib\n\ngo 1.19\n' >src/rep/lib/go.mod
printf 'package lib\n\nfunc Hello() string { return "hello from lib v1" }\n' \
	>src/rep/lib/lib.go
printf 'package lib\n\nfunc Hello() string { return "hello from lib v2" }\n' \
	>src/lib-v2.go

# 3. A benchmark
mkdir -p src/bench
printf 'module bench\n\ngo 1.19\n' >src/bench/go.mod
cat >src/bench/sum_test.go <<\EOF
package bench

import "testing"

func sum(n int) (s int) {
	for i := 0; i < n; i++ {
		s += i
	}
	return
}

func BenchmarkSum(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sum(1000)
	}
}
EOF

# 4. A data race
mkdir -p src/race
printf 'module race\n\ngo 1.19\n' >src/race/go.mod
cat >src/race/race_test.go <<\EOF
package race

import "testing"

func TestNoRace(t *testing.T) {}

func TestRace(t *testing.T) {
	x := 0
	done := make(chan bool)
	go func() { x++; done <- true }()
	x++
	<-done
}
EOF

# 5. UTF-8 file names
mkdir -p "src/utf8/testdata"
printf 'module utf8\n\ngo 1.19\n' >src/utf8/go.mod
cat >"src/utf8/${DATA}_test.go" <<EOF
package utf8

import (
	"os"
	"testing"
)

func TestData(t *testing.T) {
	b, err := os.ReadFile("testdata/$E.txt")
	if err != nil || string(b) != "$DATA" {
		t.Fatalf("%q, %v", b, err)
	}
}
EOF
printf '%s' "$DATA" >"src/utf8/testdata/$E.txt"

# put <dest-dir> <src-dir>: -f options that copy the tree src/<src-dir>
put() {
	(cd src/"$2" && find . -type f) | sed 's|^\./||' | sort |
	while IFS= read -r f; do
		printf '%s\n' "-f" "src/$2/$f:$1/$f"
	done
}

# x <dir> <words...>: gosbx exec --claim=t2020 --cwd=<dir> -- <words>
x() {
	_dir=$1
	shift
	gosbx exec --claim=t2020 --cwd="$_dir" -- "$@"
}

test_expect_success 'setup: a kept claim for both paths' '
	gosbx open -q --name=t2020 >/dev/null
'

test_expect_success 'exec: testdata changed with the same size is tested again' '
	put ex/cache cache >opts &&
	xargs -d "\n" sh -c "gosbx exec --claim=t2020 \"\$@\" -- true" - <opts &&
	x ex/cache sh -c "sleep 2 && go test ./..." >out &&
	test_grep "^ok[[:space:]]*cache" out &&
	test_grep ! "(cached)" out &&
	x ex/cache go test ./... >out &&
	test_grep "^ok[[:space:]]*cache.*(cached)" out &&
	test_expect_code 1 gosbx exec --claim=t2020 \
		-f src/baad.txt:ex/cache/testdata/in.txt \
		--cwd=ex/cache -- go test ./... >out &&
	test_grep "^FAIL" out &&
	test_grep "testdata/in.txt: \"baad\"" out &&
	test_grep ! "(cached)" out
'

test_expect_success 'exec: a module with a replace to a local module' '
	put ex/rep rep >opts &&
	xargs -d "\n" sh -c "gosbx exec --claim=t2020 \"\$@\" -- true" - <opts &&
	x ex/rep/app go run . >out &&
	echo "hello from lib v1" >expect &&
	test_cmp expect out &&
	gosbx exec --claim=t2020 -f src/lib-v2.go:ex/rep/lib/lib.go \
		--cwd=ex/rep/app -- go run . >out &&
	echo "hello from lib v2" >expect &&
	test_cmp expect out &&
	x ex/rep/app go build -o app . &&
	x ex/rep/app ./app >out &&
	test_cmp expect out
'

test_expect_success 'exec: a benchmark' '
	put ex/bench bench >opts &&
	xargs -d "\n" sh -c "gosbx exec --claim=t2020 \"\$@\" -- true" - <opts &&
	x ex/bench go test -run "^$" -bench . -benchtime=100x ./... >out &&
	test_grep "^BenchmarkSum" out &&
	test_grep "ns/op" out &&
	test_grep "^ok[[:space:]]*bench" out
'

test_expect_success 'exec: UTF-8 file names in a package and its testdata' '
	put ex/utf8 utf8 >opts &&
	xargs -d "\n" sh -c "gosbx exec --claim=t2020 \"\$@\" -- true" - <opts &&
	x ex/utf8 go test -v ./... >out &&
	test_grep "^--- PASS: TestData" out &&
	test_grep "^ok[[:space:]]*utf8" out
'

# -race: Debian's Go needs cgo for it, and sandboxes run with
# CGO_ENABLED=0; with CGO_ENABLED=1 it works where the sandbox has a C
# compiler. Probe once (it builds the race runtime into the claim's
# cache); skip, saying why, where it cannot work.
put ex/race race >race.opts
if xargs -d "\n" sh -c 'gosbx exec --claim=t2020 "$@" -- true' - <race.opts &&
	x ex/race env CGO_ENABLED=1 go test -race -run TestNoRace ./... \
		>race-probe.out 2>&1
then
	test_set_prereq RACE
else
	say "# no -race in the sandbox: $(tail -n 1 race-probe.out)"
fi

test_expect_success RACE 'exec: go test -race finds the data race' '
	{ x ex/race env CGO_ENABLED=1 go test -race ./...; echo $? >rc; } \
		>out 2>&1 &&
	echo 1 >expect && test_cmp expect rc &&
	test_grep "^WARNING: DATA RACE" out &&
	test_grep "race detected during execution of test" out &&
	test_grep "^--- FAIL: TestRace" out
'

# MCP: the same loops through run_go_code, files as JSON

# args <command> <dest-dir> <src-dir>...: run_go_code arguments with the
# files of each src/<src-dir> under <dest-dir>/, and the command
args() {
	python3 - "$@" <<-\EOF
	import json, os, sys
	cmd, pairs = sys.argv[1], sys.argv[2:]
	files = {}
	for dest, src in zip(pairs[::2], pairs[1::2]):
	    top = os.path.join("src", src)
	    for d, _, names in os.walk(top):
	        for n in names:
	            p = os.path.join(d, n)
	            rel = os.path.relpath(p, top)
	            files[dest + "/" + rel] = open(p, encoding="utf-8").read()
	a = {"command": cmd}
	if files:
	    a["files"] = files
	print(json.dumps(a, ensure_ascii=False))
	EOF
}

# mcp_loops <client steps...>: one MCP session on the claim t2020
mcp_loops() {
	mcp_client "$@" -- "$MCP_STDIO" --claim=t2020 --persistent \
		--structured-content
}

test_expect_success MCP 'MCP: testdata changed with the same size is tested again' '
	args "cd mcp/cache && sleep 2 && go test ./..." mcp/cache cache >1.json &&
	args "cd mcp/cache && go test ./..." >2.json &&
	python3 -c "import json; print(json.dumps({\"files\": {\"mcp/cache/testdata/in.txt\": \"baad\"}, \"command\": \"cd mcp/cache && go test ./...\"}))" >3.json &&
	mcp_loops --timeout=600000 call run_go_code @1.json \
		--timeout=600000 call run_go_code @2.json \
		--timeout=600000 call run_go_code @3.json >out 2>err &&
	mcp_check out "r[0].result.structuredContent.exit_code === 0" &&
	mcp_check out "/^ok\\s+cache/m.test(r[0].result.structuredContent.stdout)" &&
	mcp_check out "!r[0].result.structuredContent.stdout.includes(\"(cached)\")" &&
	mcp_check out "/^ok\\s+cache.*\\(cached\\)/m.test(r[1].result.structuredContent.stdout)" &&
	mcp_check out "r[2].result.isError === true" &&
	mcp_check out "r[2].result.structuredContent.exit_code === 1" &&
	mcp_check out "/^FAIL/m.test(r[2].result.structuredContent.stdout)" &&
	mcp_check out "!r[2].result.structuredContent.stdout.includes(\"(cached)\")"
'

test_expect_success MCP 'MCP: a replace to a local module, a benchmark, UTF-8 names' '
	args "cd mcp/rep/app && go run ." mcp/rep rep >1.json &&
	python3 -c "import json; print(json.dumps({\"files\": {\"mcp/rep/lib/lib.go\": open(\"src/lib-v2.go\").read()}, \"command\": \"cd mcp/rep/app && go run .\"}))" >2.json &&
	args "cd mcp/bench && go test -run \"^$\" -bench . -benchtime=100x ./..." \
		mcp/bench bench >3.json &&
	args "cd mcp/utf8 && go test -v ./..." mcp/utf8 utf8 >4.json &&
	mcp_loops --timeout=600000 call run_go_code @1.json \
		--timeout=600000 call run_go_code @2.json \
		--timeout=600000 call run_go_code @3.json \
		--timeout=600000 call run_go_code @4.json >out 2>err &&
	mcp_check out "r.every((x) => x.ok && x.result.isError === false)" &&
	mcp_check out "r[0].result.structuredContent.stdout === \"hello from lib v1\\n\"" &&
	mcp_check out "r[1].result.structuredContent.stdout === \"hello from lib v2\\n\"" &&
	mcp_check out "/^BenchmarkSum.*ns\\/op/m.test(r[2].result.structuredContent.stdout)" &&
	mcp_check out "/^--- PASS: TestData/m.test(r[3].result.structuredContent.stdout)"
'

test_expect_success MCP,RACE 'MCP: go test -race finds the data race' '
	args "cd mcp/race && CGO_ENABLED=1 go test -race ./..." mcp/race race >1.json &&
	mcp_loops --timeout=600000 call run_go_code @1.json >out 2>err &&
	mcp_check out "r[0].result.isError === true" &&
	mcp_check out "/^WARNING: DATA RACE/m.test(r[0].result.structuredContent.stdout)" &&
	mcp_check out "/^--- FAIL: TestRace/m.test(r[0].result.structuredContent.stdout)"
'

test_expect_success 'the claim is closed' '
	gosbx close t2020
'

test_done
