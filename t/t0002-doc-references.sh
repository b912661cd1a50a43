#!/bin/sh
test_description='what the docs, man pages and comments point at is in the tree

A clone is all a reader has: the design notes and wire contracts are in
Documentation/ (technical/, protocol/), and no file points outside the
tree (../shared/..., /work/shared of some machine: the agent-sandbox CRDs
come from the Go module, t/crds.sh) or at notes it does not have
(spec/*.md). Every
Documentation/... page named outside the tests (which name missing
ones on purpose) exists. The test reads the source
tree ($GOSBX_SOURCE_DIR) without git, so a copy of it works too.'
. "$(dirname "$0")"/test-lib.sh

SRC=$GOSBX_SOURCE_DIR

# the tracked kinds of files, outside builds, trash and node_modules
find "$SRC" \( -name .git -o -name 'build*' -o -name trash \
	-o -name node_modules \) -prune -o -type f \
	\( -name '*.[ch]' -o -name '*.txt' -o -name '*.md' -o -name '*.sh' \
	-o -name '*.py' -o -name '*.mjs' -o -name '*.js' -o -name Makefile \
	-o -name '*.yaml' -o -name run \) -print |
	sed "s|^$SRC/||" | sort >files

test_expect_success 'the list of files is the tree' '
	grep "^lib/session/session.h\$" files &&
	grep "^Documentation/gosbx.txt\$" files &&
	grep "^Documentation/protocol/runtime-api.md\$" files &&
	grep "^Documentation/technical/design.md\$" files
'

test_expect_success 'nothing points at notes a clone lacks (but the tests of that)' '
	grep -v "^t/t0002-\|^t/t0062-" files >checked &&
	(cd "$SRC" && xargs grep -n -E "(^|[^/a-zA-Z])spec/[a-z-]+\.md|\.\./share[d]/|/work/share[d]|(^|[^/a-z])(DESIGN|STYLE)\.md" <"$TRASH_DIRECTORY/checked") >bad || :
	test_line_count = 0 bad || { cat bad >&4; false; }
'

test_expect_success 'every Documentation/ page named exists (but builtin.h'"'"'s example)' '
	grep -v "^t/" files >docs &&
	(cd "$SRC" && xargs grep -h -o -E "Documentation/[A-Za-z0-9_./-]*\.(txt|md)" <"$TRASH_DIRECTORY/docs") |
	grep -v "^Documentation/gosbx-foo.txt\$" | sort -u >named &&
	test $(wc -l <named) -ge 5 &&
	while read -r p
	do
		test -e "$SRC/$p" || echo "$p"
	done <named >missing &&
	test_line_count = 0 missing || { cat missing >&4; false; }
'

test_done
