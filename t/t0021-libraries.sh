#!/bin/sh
test_description='the two libraries: gosbx-runtime has no client code (Makefile)

gosbx links libgosbx-client.a (the HTTP client over libcurl, sessions,
the local and kube backends, the MCP server) and libgosbx-base.a;
gosbx-runtime links the base alone, so it can neither call client code
nor need libcurl. A runtime file that needs a client function fails to
link; these tests catch a link line that brings the client back.'
. "$(dirname "$0")"/test-lib.sh

CLIENT=$GOSBX_BUILD_DIR/libgosbx-client.a
BASE=$GOSBX_BUILD_DIR/libgosbx-base.a

# defined <file>: the global symbols it defines, one a line, sorted
defined() {
	nm -g --defined-only "$1" >nm.out &&
	sed -n "s/^[0-9a-fA-F]* [A-Z] \(.*\)/\1/p" nm.out | sort -u
}

test_expect_success 'both libraries are built and define symbols' '
	test -f "$CLIENT" && test -f "$BASE" &&
	defined "$CLIENT" >client.syms &&
	defined "$BASE" >base.syms &&
	test_grep "^http_client_new$" client.syms &&
	test_grep "^session_open$" client.syms &&
	test_grep "^strbuf_addf$" base.syms
'

test_expect_success 'no symbol is defined in both libraries' '
	comm -12 client.syms base.syms >both &&
	test_cmp /dev/null both
'

test_expect_success 'gosbx-runtime defines no symbol of libgosbx-client.a' '
	defined "$GOSBX_BUILD_DIR/gosbx-runtime" >runtime.syms &&
	test_grep "^strbuf_addf$" runtime.syms &&
	comm -12 client.syms runtime.syms >leaked &&
	test_cmp /dev/null leaked
'

test_expect_success 'gosbx defines the client symbols it needs' '
	defined "$GOSBX_BUILD_DIR/gosbx" >gosbx.syms &&
	test_grep "^session_open$" gosbx.syms
'

test_expect_success 'gosbx-runtime does not link libcurl, gosbx does' '
	readelf -d "$GOSBX_BUILD_DIR/gosbx-runtime" >dyn &&
	test_grep "(NEEDED)" dyn &&
	! grep "(NEEDED).*libcurl" dyn &&
	readelf -d "$GOSBX_BUILD_DIR/gosbx" >dyn &&
	test_grep "(NEEDED).*\[libcurl\." dyn
'

# full RELRO: both parse hostile input (a sandbox's answers, requests),
# so their GOT is read-only once they start (-z relro -z now)
test_expect_success 'gosbx and gosbx-runtime bind now, with RELRO' '
	for b in gosbx gosbx-runtime
	do
		readelf -d -l "$GOSBX_BUILD_DIR/$b" >dyn &&
		test_grep "(FLAGS) *BIND_NOW" dyn &&
		test_grep "GNU_RELRO" dyn || return 1
	done
'

test_done
