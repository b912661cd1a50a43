#!/bin/sh
test_description='libraries loaded on first use (dlopen shims, lib/dl/dl.h)

gosbx loads libarchive, libmicrohttpd and readline only when a command
needs them (readline: the REPL of gosbx exec, tested in t2002), and
gosbx-runtime loads libarchive only for its archive endpoints. When a
library cannot be loaded, the command or the request fails with a
message that names the library and the package to install, and a server
keeps serving. GOSBX_TEST_DL_DIR points the shims at a directory without the
libraries.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

NOLIB=$TRASH_DIRECTORY/no-libs
mkdir -p "$NOLIB"

if command -v readelf >/dev/null 2>&1; then
	test_set_prereq READELF
fi

# needed <program>: the libraries it is linked with, one a line
needed() {
	readelf -d "$GOSBX_BUILD_DIR/$1" >dyn &&
	sed -n "s/.*(NEEDED).*\[\(.*\)\]/\1/p" dyn
}

test_expect_success READELF 'gosbx links no libarchive, libmicrohttpd, readline' '
	needed gosbx >libs &&
	test_grep "^libcurl" libs &&
	! grep -E "^lib(archive|microhttpd|readline)" libs
'

# the runtime image has libmicrohttpd, libjansson, libarchive (loaded on
# first use) and no libcurl (runtime-image/build-debian.sh)
test_expect_success READELF 'gosbx-runtime links libmicrohttpd, not libarchive or libcurl' '
	needed gosbx-runtime >libs &&
	test_grep "^libmicrohttpd\.so\." libs &&
	! grep -E "^lib(archive|curl)" libs
'

test_expect_success 'setup: a server with libarchive and one without' '
	mkdir -p work nowork &&
	rt_start --unix &&
	(
		GOSBX_TEST_DL_DIR=$NOLIB &&
		export GOSBX_TEST_DL_DIR &&
		rt_start --name=nolib --unix --workdir="$TRASH_DIRECTORY/nowork"
	) &&
	echo hello >f.txt &&
	mkdir -p tree/sub &&
	echo deep >tree/sub/deep.txt
'

# fails_with_err <cmd>...: like test_must_fail, but stderr goes to "err"
fails_with_err() {
	"$@" 2>err
	_code=$?
	cat err >&4
	if test $_code -eq 0 || test $_code -eq 127 ||
		{ test $_code -gt 129 && test $_code -le 192; }; then
		echo >&4 "fails_with_err: exit $_code: $*"
		return 1
	fi
}

# the one-line reason of the shims for libarchive
archive_reason() {
	test_grep "libarchive\.so\.13 could not be loaded: .*$NOLIB/libarchive\.so\.13.*; install libarchive13" "$@"
}

test_expect_success 'POST /v1/archive without libarchive: 500 with the reason' '
	tar -cf in.tar f.txt &&
	RT=nolib rt_req POST "/v1/archive?dir=." --data-binary @in.tar \
		-H "Content-Type: application/x-tar" &&
	test "$(cat status)" = 500 &&
	json_get body detail >detail &&
	archive_reason detail &&
	! test -e nowork/f.txt
'

test_expect_success 'GET /v1/archive without libarchive: 500 before any tar' '
	echo x >nowork/x.txt &&
	RT=nolib rt_req GET "/v1/archive?path=x.txt" &&
	test "$(cat status)" = 500 &&
	json_get body detail >detail &&
	archive_reason detail
'

test_expect_success 'the server without libarchive keeps serving' '
	RT=nolib rt_alive &&
	RT=nolib rt_expect 200 PUT /v1/files/put.txt --data-binary put &&
	printf put >expect &&
	test_cmp expect nowork/put.txt
'

test_expect_success 'gosbx push without libarchive fails with the reason' '
	url=$(cat rt.url) &&
	fails_with_err env GOSBX_TEST_DL_DIR="$NOLIB" \
		gosbx --backend=url --url="$url" push f.txt tree &&
	archive_reason err &&
	test_line_count = 1 err &&
	! test -e work/f.txt &&
	! test -e work/tree
'

test_expect_success 'gosbx push through the shim works with libarchive' '
	url=$(cat rt.url) &&
	gosbx --backend=url --url="$url" push f.txt tree &&
	test_cmp f.txt work/f.txt &&
	test_cmp tree/sub/deep.txt work/tree/sub/deep.txt
'

test_expect_success 'the seed client tar (exec -f a/b) fails with the reason' '
	url=$(cat rt.url) &&
	fails_with_err env GOSBX_TEST_DL_DIR="$NOLIB" \
		gosbx --backend=url --url="$url" exec -f f.txt:d/g.txt -- \
		cat d/g.txt >out &&
	archive_reason err &&
	! test -e work/d/g.txt
'

# a library under the right name without the right symbols: jansson's
WRONG=$TRASH_DIRECTORY/wrong-libs
mkdir -p "$WRONG"
jansson=$(ldd "$GOSBX_BUILD_DIR/gosbx" 2>/dev/null |
	sed -n "s/.*libjansson\.so\.4 => \(\/[^ ]*\).*/\1/p")
if test -n "$jansson" && test -f "$jansson"; then
	ln -s "$jansson" "$WRONG/libarchive.so.13" &&
	test_set_prereq WRONGLIB
fi

test_expect_success WRONGLIB 'a libarchive without its symbols: the reason names one' '
	url=$(cat rt.url) &&
	fails_with_err env GOSBX_TEST_DL_DIR="$WRONG" \
		gosbx --backend=url --url="$url" push f.txt &&
	test_grep "libarchive\.so\.13 could not be loaded: no symbol .archive_[a-z_]*. (.*); install libarchive13" err
'

test_expect_success 'gosbx mcp --http without libmicrohttpd fails with the reason' '
	fails_with_err env GOSBX_TEST_DL_DIR="$NOLIB" \
		gosbx mcp --http=127.0.0.1:0 --dev </dev/null >out &&
	test_grep "libmicrohttpd\.so\.12 could not be loaded: .*$NOLIB/libmicrohttpd\.so\.12.*; install libmicrohttpd12" err &&
	test_grep "cannot start the HTTP server" err
'

test_expect_success 'commands that need none of them ignore missing ones' '
	env GOSBX_TEST_DL_DIR="$NOLIB" gosbx --version >out 2>err &&
	test_grep "^gosbx version " out &&
	test ! -s err
'

test_expect_success 'the servers stop cleanly, no sanitizer report' '
	rt_stop &&
	rt_stop nolib &&
	! grep -E "Sanitizer|runtime error" rt.log nolib.log
'

test_done
