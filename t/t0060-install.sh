#!/bin/sh
test_description='make install and make uninstall

make install puts the programs into bin, the man pages (built from
Documentation/ with asciidoc and xmlto) into share/man/man1 and the
shell completions of contrib/completion/, when there are any, into
share/bash-completion and share/zsh; it builds no test program.
The installed pages render with man, without a FIXME, and every
gosbx page they name is installed. make uninstall removes every file
that make install put there.'
. "$(dirname "$0")"/test-lib.sh

# the top Makefile, in the source tree, on the build directory of this
# run (nothing is out of date there: the test run built it), without
# the make that runs the tests (its jobserver's fds are not ours)
top_make() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$GOSBX_SOURCE_DIR" \
		--no-print-directory O="$GOSBX_BUILD_DIR" \
		SANITIZE="${SANITIZE:-}" "$@"
}

D=$TRASH_DIRECTORY/d
P=/usr/local

test_expect_success 'make install: programs, man pages, completions' '
	top_make install DESTDIR="$D" prefix=$P >out 2>&1 &&
	{
		echo "$P/bin/gosbx" &&
		echo "$P/bin/gosbx-runtime" &&
		for t in "$GOSBX_SOURCE_DIR"/Documentation/gosbx*.txt
		do
			echo "$P/share/man/man1/$(basename "$t" .txt).1"
		done &&
		if test -f "$GOSBX_SOURCE_DIR/contrib/completion/gosbx.bash"
		then
			echo "$P/share/bash-completion/completions/gosbx"
		fi &&
		if test -f "$GOSBX_SOURCE_DIR/contrib/completion/_gosbx"
		then
			echo "$P/share/zsh/site-functions/_gosbx"
		fi
	} | sort >expect &&
	(cd "$D" && find . -type f | sed "s|^\.||") | sort >actual &&
	test_cmp expect actual &&
	test_line_count -gt 10 actual
'

test_expect_success 'the installed gosbx runs' '
	"$D$P/bin/gosbx" --version >out &&
	test_grep "^gosbx version " out
'

test_expect_success 'man renders the installed gosbx(1), with no FIXME' '
	MANWIDTH=80 man -l "$D$P/share/man/man1/gosbx.1" >page 2>err &&
	test_grep "^NAME" page &&
	test_grep "gosbx - " page &&
	test_grep ! FIXME page &&
	test_grep ! "man.base.url" page &&
	test_grep ! "^AUTHOR" page
'

test_expect_success 'no installed page has a FIXME or names a missing page' '
	: >missing &&
	for f in "$D$P"/share/man/man1/*.1
	do
		test_grep ! FIXME "$f" || return 1
		MANWIDTH=80 man -l "$f" >page 2>/dev/null || return 1
		grep -o "gosbx[a-z-]*([0-9])" page | sort -u >refs
		while read -r ref
		do
			name=${ref%%(*}
			sec=${ref#*(}
			sec=${sec%)}
			test -f "$D$P/share/man/man$sec/$name.$sec" ||
			echo "$(basename "$f"): $ref" >>missing
		done <refs
	done &&
	test_line_count = 0 missing
'

test_expect_success 'man finds the pages through PATH alone' '
	(
		unset MANPATH &&
		PATH="$D$P/bin:$PATH" &&
		man -w gosbx >where
	) &&
	echo "$D$P/share/man/man1/gosbx.1" >expect &&
	test_cmp expect where
'

test_expect_success 'make uninstall removes every installed file' '
	top_make uninstall DESTDIR="$D" prefix=$P >out 2>&1 &&
	(cd "$D" && find . -type f) >left &&
	test_line_count = 0 left
'

test_expect_success 'make and make install build no test program' '
	top_make -n install O="$TRASH_DIRECTORY/fresh" DESTDIR="$D" \
		>plan 2>&1 &&
	test_grep "gosbx\.o" plan &&
	test_grep ! "t/helper\|t/unit" plan &&
	top_make -n O="$TRASH_DIRECTORY/fresh" >plan 2>&1 &&
	test_grep ! "t/helper\|t/unit" plan &&
	top_make -n test O="$TRASH_DIRECTORY/fresh" >plan 2>&1 &&
	test_grep "t/helper/" plan &&
	test_grep "t/unit/" plan
'

test_expect_success 'make runs one job a core unless -j is given' '
	# -p prints the database, -q builds nothing
	{ top_make -pq all >db 2>/dev/null || :; } &&
	grep "^MAKEFLAGS = " db >flags &&
	test_grep " -j$(nproc)" flags &&
	{ top_make -j1 -pq all >db 2>/dev/null || :; } &&
	grep "^MAKEFLAGS = " db >flags &&
	test_grep -e " -j1 " -e " -j1$" flags &&
	{ test "$(nproc)" = 1 || test_grep ! " -j$(nproc)" flags; }
'

test_done
