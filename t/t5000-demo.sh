#!/bin/sh
test_description='gosbx demo: the seed flows, --keep, --claim, failures

The flows of seed 001 on the local backend (real Go builds, sharing
the Go build cache), a kept sandbox reattached and deleted, a dead
claim; then, on the url backend against a gosbx-runtime whose "go" is
a shell script, a wrong output and an interrupted step.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-runtime.sh

claims_dir="$XDG_STATE_HOME/gosbx/claims"

if test_have_prereq BWRAP &&
	bwrap --unshare-user --ro-bind / / true 2>/dev/null; then
	test_set_prereq SANDBOX
fi

test_atexit 'gosbx close --all'

# no_claims: the claims directory holds nothing (or does not exist)
no_claims() {
	test -z "$(ls -A "$claims_dir" 2>/dev/null)" || {
		echo >&4 "claims left behind:" && ls -A "$claims_dir" >&4
		return 1
	}
}

# claim_status NAME: the status column of `gosbx claims` for NAME
claim_status_is() {
	gosbx claims >claims.out 2>/dev/null &&
	grep "^$1  *local  *$2 " claims.out >/dev/null
}

# the three lines of the multi-file module's ./app
cat >greetings <<\EOF
hello, Alice — from the multi-file sandbox sample
hello, Bob — from the multi-file sandbox sample
hello, Carol — from the multi-file sandbox sample
EOF

test_expect_success SANDBOX,GO 'done when: demo --flow=all passes with the seed output' '
	gosbx demo --flow=all >out 2>err &&
	head -n 1 out >first &&
	echo "==> opening sandbox (namespace=default template=go-runtime-template claim=\"\")" >expect &&
	test_cmp expect first &&
	test_grep "^    claim=sandbox-" out &&
	test_grep "^=== single-file smoke flow ===$" out &&
	test_grep "^-- go run main.go \[exit=0\] -- hello from the sandbox! sum(1..100)=5050, go=go1\.[0-9.]*/[a-z0-9]*/[a-z0-9]*$" out &&
	test_grep "^-- go build -o app \. \[exit=0\] -- (no output)$" out &&
	test_grep "^-- ./app (re-runs the binary built in the previous call) \[exit=0\] -- hello from the sandbox! sum(1..100)=5050, go=go1\." out &&
	test_grep "^=== multi-file module flow ===$" out &&
	sed -n "/^-- .\/app \[exit=0\] -- /,+2p" out |
		sed "s/^-- .\/app \[exit=0\] -- //" >actual &&
	test_cmp greetings actual &&
	test_grep "^ok  	example.com/multifile/greet	" out &&
	test_grep "^-- go test ./... \[exit=0\] -- " out &&
	test_grep "^==> closing (deleting sandbox sandbox-" out &&
	tail -n 1 out >last &&
	echo "==> PoC complete" >expect &&
	test_cmp expect last &&
	no_claims
'

test_expect_success SANDBOX,GO '--keep keeps the sandbox, --claim reattaches, then deletes it' '
	gosbx demo --flow=smoke --keep >out 2>err &&
	test_grep "^==> disconnecting (sandbox sandbox-.* preserved)$" out &&
	test_grep ! "^=== multi-file module flow ===" out &&
	test_grep "^==> PoC complete$" out &&
	name=$(sed -n "s/^    claim=\([a-z0-9-]*\) kept; reattach with: gosbx demo --claim=\1$/\1/p" out) &&
	test -n "$name" &&
	test_grep "^    delete it with: gosbx close $name$" out &&
	claim_status_is "$name" ready &&
	# the binary of the smoke flow is still there
	gosbx exec --claim="$name" -- "test -x app" &&

	gosbx demo --flow=multi --claim="$name" --keep >out 2>err &&
	test_grep "^==> opening sandbox (namespace=default template=go-runtime-template claim=\"$name\")$" out &&
	test_grep "^    claim=$name$" out &&
	test_grep ! "^=== single-file smoke flow ===" out &&
	test_grep "^=== multi-file module flow ===$" out &&
	test_grep "^hello, Carol — from the multi-file sandbox sample$" out &&
	test_grep "^==> PoC complete$" out &&
	claim_status_is "$name" ready &&
	# the multi-file flow starts from an empty /app
	gosbx exec --claim="$name" -- "test -d greet && ! test -e main.go.orig" &&

	gosbx demo --flow=smoke --claim="$name" >out 2>err &&
	test_grep "^==> closing (deleting sandbox $name)$" out &&
	test_grep "^==> PoC complete$" out &&
	no_claims
'

test_expect_success SANDBOX,PYTHON 'a demo against a dead claim fails clearly' '
	gosbx open -q --name=victim >/dev/null &&
	pid=$(awk "\$1 == \"pid\" { print \$2 }" "$claims_dir/victim/meta") &&
	child=$(awk "\$1 == \"child-pid\" { print \$2 }" "$claims_dir/victim/meta") &&
	test -n "$pid" && test -n "$child" &&
	kill -9 $child $pid &&
	test_retry 60 0.5 claim_status_is victim dead &&
	test_expect_code_err 125 gosbx demo --claim=victim >out &&
	test_grep "claim .victim. is dead" err &&
	test_grep "cannot open the sandbox .victim." err &&
	test_grep ! "===" out &&
	test_grep ! "PoC complete" out &&
	gosbx close victim &&
	no_claims
'

test_expect_success 'a demo against a missing claim fails clearly' '
	test_expect_code_err 125 gosbx demo --claim=nosuch >out &&
	test_grep "no such claim .nosuch." err &&
	test_grep ! "PoC complete" out
'

test_expect_success 'bad options are usage errors' '
	test_expect_code_err 129 gosbx demo --flow=bogus &&
	test_grep "unknown flow .bogus. (expected smoke, multi or all)" err &&
	test_expect_code 129 gosbx demo extra &&
	test_expect_code 129 gosbx demo --open-timeout=0 &&
	test_expect_code 129 gosbx demo --claim=Bad/Name &&
	no_claims
'

# A gosbx-runtime on loopback (the url backend) whose "go" is a script:
# it prints what the samples print, except as go-mode says:
# "wrong-greeting" builds an ./app that greets wrong, "hang-test" makes
# go test wait (and say so in the file go-test-started).
mkdir -p fakebin
cat >fakebin/go <<EOF
#!/bin/sh
mode=\$(cat "$TRASH_DIRECTORY/go-mode" 2>/dev/null)
case "\$*" in
"run main.go")
	echo "hello from the sandbox! sum(1..100)=5050, go=go1.99/linux/fake" ;;
"build -o app .")
	if grep -q greet main.go && test "\$mode" = wrong-greeting; then
		printf "#!/bin/sh\necho \"hello, Alice\"\n" >app
	elif grep -q greet main.go; then
		cp "$TRASH_DIRECTORY/greetings" greetings.txt &&
		printf "#!/bin/sh\ncat greetings.txt\n" >app
	else
		printf "#!/bin/sh\necho \"hello from the sandbox! sum(1..100)=5050, go=go1.99/linux/fake\"\n" >app
	fi
	chmod +x app ;;
"test ./...")
	if test "\$mode" = hang-test; then
		touch "$TRASH_DIRECTORY/go-test-started"
		exec sleep 5000.789
	fi
	printf "ok  \texample.com/multifile/greet\t0.001s\n" ;;
*)
	echo "fake go: \$*" >&2
	exit 2 ;;
esac
EOF
chmod +x fakebin/go

test_expect_success 'setup: a gosbx-runtime whose go is a script' '
	mkdir -p work &&
	PATH="$TRASH_DIRECTORY/fakebin:$PATH" rt_start &&
	cat rt.url >url
'
GOSBX_URL=$(cat url 2>/dev/null)
export GOSBX_URL

test_expect_success 'the url backend: both flows pass with the fake go' '
	echo ok >go-mode &&
	gosbx --backend=url demo >out 2>err &&
	test_grep "^-- go run main.go \[exit=0\] -- hello from the sandbox! sum(1..100)=5050, go=go1.99/linux/fake$" out &&
	test_grep "^hello, Carol — from the multi-file sandbox sample$" out &&
	test_grep "^==> PoC complete$" out &&
	# the files of the samples were written before the commands ran
	test_grep "func Greet(name string) string" work/greet/greet.go &&
	test_grep "^module example.com/multifile$" work/go.mod &&
	test_grep "^go 1.19$" work/go.mod
'

test_expect_success 'a step whose output is wrong fails the demo and names it' '
	echo wrong-greeting >go-mode &&
	test_expect_code_err 1 gosbx --backend=url demo --flow=all >out &&
	test_grep "^-- ./app \[exit=0\] -- hello, Alice$" out &&
	test_grep "multi flow: step .\./app. failed: its output lacks the line .hello, Alice — from the multi-file sandbox sample." err &&
	test_grep ! "go test" out &&
	test_grep "^==> closing " out &&
	test_grep ! "PoC complete" out
'

test_expect_success 'a step that exits non-zero fails the demo and names it' '
	echo ok >go-mode &&
	mv fakebin/go fakebin/go.real &&
	printf "#!/bin/sh\necho \"cannot build\" >&2\nexit 3\n" >fakebin/go &&
	chmod +x fakebin/go &&
	test_expect_code_err 1 gosbx --backend=url demo --flow=smoke >out;
	rc=$?
	mv fakebin/go.real fakebin/go &&
	test $rc = 0 &&
	test_grep "^-- go run main.go \[exit=3\] -- cannot build$" out &&
	test_grep "smoke flow: step .go run main.go. failed: exit=3$" err &&
	test_grep ! "PoC complete" out
'

test_expect_success 'SIGINT cancels the running step and ends the demo (130)' '
	echo hang-test >go-mode &&
	rm -f go-test-started &&
	gosbx --backend=url demo --flow=multi >out 2>err 3>&- 4>&- 5>&- &
	pid=$! &&
	test_retry 600 0.1 test -f go-test-started &&
	kill -INT $pid &&
	{ wait $pid; rc=$?; } &&
	test $rc = 130 &&
	test_grep "interrupted by signal 2 during step .go test \./\.\.\.." err &&
	test_grep "^==> closing " out &&
	test_grep ! "PoC complete" out &&
	test_retry 100 0.1 sh -c "! pgrep -f \"^sleep 5000.789\" >/dev/null"
'

test_done
