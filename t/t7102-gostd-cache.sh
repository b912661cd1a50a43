#!/bin/sh
test_description='local: the standard library'"'"'s shared, read-only build cache

The first sandbox of a Go starts a trusted `go build std` on the host
(lib/local/gostd.h); every sandbox after it gets that cache as the
lower layer of an overlay under its own GOCACHE: it builds nothing of
std again, and what it writes or changes stays in its own layer.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test_have_prereq GO || test_skip_all 'go is not installed'

# a layer directory of this script's own, built from scratch
GOSBX_GOSTD_DIR=$PWD/gostd
export GOSBX_GOSTD_DIR
layer_of() {
	ls -d "$GOSBX_GOSTD_DIR"/go*-*-*-* 2>/dev/null |
	grep -v "\.\(lock\|log\|tmp\|home\)\$"
}

cat >main.go <<\EOF || exit 1
package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
)

func main() {
	s := httptest.NewServer(http.NotFoundHandler())
	defer s.Close()
	r, err := http.Get(s.URL)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.StatusCode)
}
EOF

test_expect_success 'the first sandbox starts the build of the layer' '
	gosbx exec -- true &&
	# in /, not in the caller'"'"'s directory, which it outlives
	pgrep -f "build std" >pids &&
	found= &&
	for p in $(cat pids)
	do
		case "$(tr "\0" " " <"/proc/$p/cmdline" 2>/dev/null)" in
		*"$GOSBX_GOSTD_DIR"*) found=1 && test "$(readlink "/proc/$p/cwd")" = / || return 1 ;;
		esac
	done &&
	test -n "$found" &&
	test_retry 1800 0.1 sh -c "test -n \"\$(ls -d \"$GOSBX_GOSTD_DIR\"/go*-*-*-* 2>/dev/null | grep -v \"\\.\\(lock\\|log\\|tmp\\|home\\)\$\")\"" &&
	layer=$(layer_of) &&
	case "$layer" in
	*/$(go env GOVERSION)-$(go env GOOS)-$(go env GOARCH)-*) ;;
	*) false ;;
	esac &&
	test -f "$layer/README" &&
	find "$layer" -type f | sort >files.before
'

test_expect_success 'a sandbox gets it under its own GOCACHE' '
	gosbx exec -- sh -c "grep \"/home/sandbox/.cache/go-build \" /proc/self/mountinfo" >mnt &&
	test_grep "overlay" mnt &&
	gosbx exec --file=main.go -- sh -c "go run main.go" >out &&
	echo 404 >expect &&
	test_cmp expect out
'

test_expect_success 'it builds no package of std again' '
	gosbx exec --file=main.go -- sh -c "go build -x -o /tmp/m main.go" 2>trace &&
	! grep "compile.*-p net/http " trace &&
	! grep "compile.*-p fmt " trace
'

test_expect_success 'what a sandbox writes or changes stays its own' '
	name=$(gosbx open) &&
	test_atexit "gosbx close $name" &&
	gosbx exec --claim="$name" -- sh -c "
		for f in \$(find /home/sandbox/.cache/go-build -type f -name \"*-d\" | head -50)
		do
			# root'"'"'s layer is not even the sandbox'"'"'s to write;
			# a user'"'"'s is, and the write lands in the upper layer
			echo tampered 2>/dev/null >\"\$f\"
		done
		touch /home/sandbox/.cache/go-build/planted" &&
	test_must_fail gosbx exec --claim="$name" -- \
		touch /opt/gosbx/go-build-std/planted &&
	layer=$(layer_of) &&
	find "$layer" -type f | sort >files.after &&
	test_cmp files.before files.after &&
	! grep -rl tampered "$layer" &&
	gosbx exec --file=main.go -- go run main.go >out &&
	echo 404 >expect &&
	test_cmp expect out
'

test_expect_success 'GOSBX_GOSTD_DIR=off: no layer' '
	GOSBX_GOSTD_DIR=off gosbx exec -- sh -c "grep \"/home/sandbox/.cache/go-build \" /proc/self/mountinfo" >mnt;
	test ! -s mnt
'

test_done
