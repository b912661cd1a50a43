#!/bin/sh
test_description='the README works as written

Every relative path that README.md links to or names in backquotes,
below one of the top directories of the tree (or ..), exists in the
tree (a program built from the tree: its source, <path>.c). The first command of "Start here" installs into ~/.local and puts
~/.local/bin on PATH (.ci/run runs it, as root and as a user with
sudo). The "Using it" block runs as pasted, in an empty directory, with
gosbx on PATH and no terminal: there the REPL line runs its standard
input as a script (on end of file alone it fails: no script), here
"ls mymodule", which shows that the push before it worked.'
. "$(dirname "$0")"/test-lib.sh

README=$GOSBX_SOURCE_DIR/README.md

# sh_blocks <section>: the ```sh blocks of the README's "## <section>",
# each line as it is, blocks separated by a line "```"
sh_blocks() {
	awk -v want="## $1" '
	/^## / { in_sec = ($0 == want); next }
	in_sec && !code && /^```sh[[:space:]]*$/ { code = 1; next }
	code && /^```[[:space:]]*$/ { code = 0; print "```"; next }
	code { print }
	' "$README"
}

# the first block of a section
first_block() {
	sh_blocks "$1" | awk '/^```$/ { exit } { print }'
}

test_expect_success 'the relative paths in README.md exist in the tree' '
	# the tree as a clone has it: not the build directories
	ls "$GOSBX_SOURCE_DIR" | grep -v "^build" >top &&
	{
		grep -o "](\([^)#]*\)" "$README" | sed "s/^](//"
		grep -o "\`[^\` ]*\`" "$README" | tr -d "\`"
	} | sort -u >names &&
	: >missing &&
	while read -r n
	do
		case "$n" in
		http*:* | /* | "~"* | "\$"* | -*) continue ;;
		../*) ;;
		*/*)
			grep -qx "${n%%/*}" top || continue
			;;
		*) continue ;;
		esac
		# a program of the tree: its source
		test -e "$GOSBX_SOURCE_DIR/$n" ||
		test -e "$GOSBX_SOURCE_DIR/$n.c" || echo "$n" >>missing
	done <names &&
	test_line_count = 0 missing
'

test_expect_success 'the path check finds a missing file' '
	printf "%s\n" "see [x](Documentation/no-such.txt) and \`../shared/X.md\`" >fake.md &&
	README=$PWD/fake.md &&
	grep -o "](\([^)#]*\)" "$README" | sed "s/^](//" >names &&
	echo Documentation/no-such.txt >expect &&
	test_cmp expect names &&
	grep -o "\`[^\` ]*\`" "$README" | tr -d "\`" >names &&
	echo ../shared/X.md >expect &&
	test_cmp expect names
'

test_expect_success '"Start here" is one line that installs into ~/.local' '
	first_block "Start here (Debian 12 / Ubuntu)" >first &&
	test_line_count = 1 first &&
	test_grep "^\./contrib/install-deps\.sh && " first &&
	test_grep "make install prefix=\"\$HOME/\.local\"" first &&
	test_grep "export PATH=\"\$HOME/\.local/bin:\$PATH\"" first &&
	test_grep "&& gosbx exec " first &&
	sh_blocks "Start here (Debian 12 / Ubuntu)" >blocks &&
	test_grep -x "export PATH=\"\$HOME/\.local/bin:\$PATH\"" blocks
'

test_expect_success 'the MCP token recipe makes a file only its owner reads' '
	grep -E "^(mkdir -p|\(umask).*gosbx" "$GOSBX_SOURCE_DIR/README.md" >recipe &&
	test_line_count = 2 recipe &&
	(HOME=$TRASH_DIRECTORY/tok && mkdir "$HOME" && export HOME && sh -e recipe) &&
	test "$(stat -c %a tok/.config/gosbx/mcp-token)" = 600 &&
	test -s tok/.config/gosbx/mcp-token
'

test_expect_success GO,BWRAP 'the "Using it" block runs as pasted' '
	first_block "Using it" >using.sh &&
	test_line_count -gt 5 using.sh &&
	test_atexit "gosbx close --all" &&
	mkdir try &&
	echo "ls mymodule" >repl-in &&
	(cd try && sh -ex ../using.sh <../repl-in) >out 2>err &&
	test_grep "^go version go" out &&
	test_grep -x hello out &&
	test_grep -x main.go out &&
	name=$(sed -n "s/^+ name=//p" err) &&
	test -n "$name" &&
	test_grep "gosbx close $name" err &&
	gosbx claims >claims &&
	test_grep ! "$name" claims
'

test_done
