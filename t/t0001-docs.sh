#!/bin/sh
test_description='each man page SYNOPSIS matches the usage its program prints

For every Documentation/gosbx-<x>.txt whose program exists (a built
gosbx-<x> such as gosbx-runtime, else the command "gosbx <x>"), the lines
of the SYNOPSIS block must be the "usage:" / "   or:" lines printed by
"gosbx-<x> -h" or "gosbx <x> -h", up to the first empty line.

The SYNOPSIS block is either a [verse] paragraph (git style, up to the
first empty line) or a ---- / .... delimited block. Before comparing,
quotes around the program name (asciidoc emphasis) are dropped and runs
of blanks are squeezed, so continuation lines may be indented freely.'
. "$(dirname "$0")"/test-lib.sh

DOCDIR=$GOSBX_SOURCE_DIR/Documentation

# normalize: drop the usage prefixes and asciidoc quotes, squeeze blanks
normalize() {
	sed -e '/^[[:space:]]*$/d' -e 's/^usage: //' -e 's/^   or: //' \
		-e "s/^'\([^']*\)'/\1/" -e "s/ '\([a-z-]*\)' / \1 /" \
		-e 's/[[:space:]][[:space:]]*/ /g' -e 's/^ //' -e 's/ $//'
}

# synopsis_of <file.txt>: the SYNOPSIS block's lines
synopsis_of() {
	awk '
	state == 0 && /^SYNOPSIS[[:space:]]*$/ { state = 1; next }
	state == 1 && /^-+[[:space:]]*$/ { state = 2; next }
	state == 1 { exit }
	state == 2 && /^[[:space:]]*$/ { next }
	state == 2 && /^\[verse\]/ { next }
	state == 2 && /^(----|\.\.\.\.)-*\.*[[:space:]]*$/ { state = 4; next }
	state == 2 { state = 3 }
	state == 3 && /^[[:space:]]*$/ { exit }
	state == 3 { print; next }
	state == 4 && /^(----|\.\.\.\.)-*\.*[[:space:]]*$/ { exit }
	state == 4 { print }
	' "$1"
}

# usage_of <cmd...>: the usage lines of "<cmd> -h"
usage_of() {
	"$@" -h >usage.raw 2>usage.err || return 1
	awk '/^[[:space:]]*$/ { exit } { print }' usage.raw
}

checked=0
for doc in "$DOCDIR"/gosbx-*.txt
do
	test -f "$doc" || continue
	name=$(basename "$doc" .txt)
	sub=${name#gosbx-}
	if test -x "$GOSBX_BUILD_DIR/$name"; then
		prog=$name
	elif test -x "$GOSBX_BUILD_DIR/gosbx" &&
		gosbx "$sub" -h >/dev/null 2>&1; then
		prog="gosbx $sub"
	else
		test_expect_success "$name: no program or command yet (not checked)" 'true'
		continue
	fi
	checked=$((checked + 1))
	test_expect_success "$name: SYNOPSIS matches '$prog -h'" "
		synopsis_of '$doc' | normalize >expect &&
		test -s expect &&
		usage_of $prog | normalize >actual &&
		test -s actual &&
		test_cmp expect actual
	"
done

test_expect_success 'the man page of gosbx-runtime is there and checked' '
	test -f "$DOCDIR/gosbx-runtime.txt" &&
	test $checked -ge 1
'

test_expect_success 'the SYNOPSIS parser reads a [verse] paragraph' '
	cat >fake.txt <<-\EOF &&
	NAME
	----
	gosbx-fake - a test

	SYNOPSIS
	--------
	[verse]
	'"'gosbx fake'"' [--a=<b>]
	      [--c]

	DESCRIPTION
	-----------
	EOF
	synopsis_of fake.txt | normalize >actual &&
	printf "gosbx fake [--a=<b>]\n[--c]\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'the SYNOPSIS parser reads a delimited block' '
	cat >fake.txt <<-\EOF &&
	SYNOPSIS
	--------
	....
	gosbx fake [--a=<b>]

	   or: gosbx fake --list
	....
	EOF
	synopsis_of fake.txt | normalize >actual &&
	printf "gosbx fake [--a=<b>]\ngosbx fake --list\n" >expect &&
	test_cmp expect actual
'

test_done
