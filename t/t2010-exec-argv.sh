#!/bin/sh
test_description='gosbx exec: several words are an exact argv, one word a shell line'
. "$(dirname "$0")/test-lib.sh"

# local by default; t6224 runs this suite with GOSBX_TEST_BACKEND=kube
. "$TEST_DIRECTORY"/lib-backend.sh

test_atexit 'gosbx close --all'

# Words a shell would change if they were joined into one line: spaces,
# quotes, pipes, globs, expansions, newlines, an empty word, bytes that
# are not UTF-8, options of echo and printf.
cat >words.sh <<\EOF
set -- "" "it's" "a|b" "A|B" "a  b" " lead" "x
y" "
" '$HOME' '${x:-y}' '*' '?' "$(printf '\377\376')" "$(printf 'a\303')" \
	"é" "数据/x.go" '\' '"' "'" "''" -n -e "exit 7" '$(id)' '`id`' "a;b" \
	"x=1" "#c" "~" "%s"
EOF

test_expect_success 'hostile words reach the program unchanged' '
	. ./words.sh &&
	gosbx exec -- printf "%s\\0" "$@" >out &&
	printf "%s\\0" "$@" >expect &&
	test_cmp expect out
'

test_expect_success 'without --: options end at the first word' '
	gosbx exec printf "[%s]" -n "a  b" >out &&
	printf "[-n][a  b]" >expect &&
	test_cmp expect out
'

test_expect_success 'sh -c with its own script: the status is the script'"'"'s' '
	expect_code 7 gosbx exec -- sh -c "exit 7" &&
	expect_code 143 gosbx exec -- sh -c "kill -TERM \$\$" &&
	gosbx exec -- sh -c "echo \"\$0:\$1:\$2\"" zero "one two" "" >out &&
	echo "zero:one two:" >expect &&
	test_cmp expect out
'

test_expect_success PYTHON 'python3 -c "print(1)"' '
	gosbx exec -- python3 -c "print(1)" >out &&
	echo 1 >expect &&
	test_cmp expect out &&
	gosbx exec -- python3 -c \
		"import sys; print(sys.argv[1:] == [\"a b\", \"|\", \"\"])" \
		"a b" "|" "" >out &&
	echo True >expect &&
	test_cmp expect out
'

test_expect_success 'one word is a shell command line' '
	gosbx exec -- "echo a | tr a b" >out &&
	echo b >expect &&
	test_cmp expect out &&
	expect_code 3 gosbx exec -- "exit 3" &&
	gosbx exec -- "x=1; echo \$x" >out &&
	echo 1 >expect &&
	test_cmp expect out
'

test_expect_success 'a shell builtin as the first word works as in sh' '
	expect_code 3 gosbx exec -- exit 3
'

test_expect_success 'a missing program: 127 from sh, as docker exec says' '
	expect_code 127 gosbx exec -- no-such-program-2010 "a|b" 2>err &&
	test_grep "no-such-program-2010" err
'

test_expect_success GO 'go test -run "A|B" ./... runs tests A and B only' '
	mkdir -p mod &&
	printf "module m\n\ngo 1.19\n" >mod/go.mod &&
	cat >mod/m_test.go <<-\EOF &&
	package m

	import "testing"

	func TestA(t *testing.T) {}
	func TestB(t *testing.T) {}
	func TestC(t *testing.T) { t.Fatal("TestC must not run") }
	EOF
	gosbx exec -f mod/go.mod -f mod/m_test.go -- \
		go test -count=1 -v -run "A|B" ./... >out 2>err &&
	test_grep "^--- PASS: TestA" out &&
	test_grep "^--- PASS: TestB" out &&
	test_grep ! "TestC" out
'

test_expect_success 'a kept claim: the same argv rule, and with --json' '
	name=$(gosbx open -q) &&
	echo "$name" >claim &&
	. ./words.sh &&
	gosbx exec --claim="$name" -- printf "%s\\0" "$@" >out &&
	printf "%s\\0" "$@" >expect &&
	test_cmp expect out &&
	expect_code 7 gosbx exec --claim="$name" --json -- sh -c "exit 7" >json &&
	test_grep "\"exit_code\":7" json &&
	gosbx exec --claim="$name" -- sh -c "printf %s \"\$1\" >f" - "a|b c" &&
	gosbx exec --claim="$name" -- cat f >out &&
	printf "a|b c" >expect &&
	test_cmp expect out &&
	gosbx close "$name"
'

if test_have_prereq LOCAL && command -v curl >/dev/null &&
	command -v python3 >/dev/null
then
	. "$TEST_DIRECTORY"/lib-runtime.sh
	. "$TEST_DIRECTORY"/lib-upstream.sh
	test_set_prereq URL_SERVERS
fi

test_expect_success URL_SERVERS 'url backend: gosbx-runtime and an upstream-shaped server' '
	rt_start &&
	upstream_start &&
	. ./words.sh &&
	printf "%s\\0" "$@" >expect &&
	gosbx --backend=url --url="$(cat rt.url)" exec -- \
		sh -c "printf \"%s\\\\0\" \"\$@\" >words.out" - "$@" &&
	test_cmp expect work/words.out &&
	gosbx --backend=url --url="$(cat up.url)" exec -- \
		sh -c "printf \"%s\\\\0\" \"\$@\" >words.out" - "$@" &&
	test_cmp expect upwork/words.out &&
	expect_code 7 gosbx --backend=url --url="$(cat up.url)" exec -- \
		sh -c "exit 7"
'

test_expect_success 'no claim is left behind' '
	no_claims
'

test_done
