#!/bin/sh
test_description='gosbx cp, exec -f, -i and -t on the url backend driving sandboxd

Each case against gosbx-runtime'"'"'s sandboxd listeners and upstream
sandboxd built from the Go module (t/lib-sandboxd.sh): files go through
the REST files API (GET, HEAD, PUT, DELETE /v1/files/<path>), stdin and
terminals through Start with a PTY, WriteStdin and ResizeTTY (script(1)
and tmux give gosbx a terminal).'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-sandboxd.sh

. "$TEST_DIRECTORY"/lib-tmux.sh

# sgosbx <name> <args>: gosbx on the url backend at server <name>
sgosbx() {
	_n=$1
	shift
	GOSBX_URL=$(sbd_url "$_n") gosbx --backend=url "$@"
}

test_expect_success 'setup: local files' '
	head -c 5242880 /dev/urandom >big.bin &&
	mkdir -p tree/sub tree/empty &&
	echo one >tree/a.txt &&
	echo two >"tree/sub/with space.txt" &&
	printf "#!/bin/sh\necho run\n" >tree/sub/run.sh &&
	chmod 0750 tree/sub/run.sh &&
	echo spaced >"name with space.txt" &&
	mkdir linktree && ln -s ../big.bin linktree/link
'

files_checks() {
	test_expect_success "$1: cp up and down is byte-identical (5 MiB)" "
		sgosbx $1 cp big.bin x:big.bin &&
		cmp big.bin \"\$(cat $1.root)/big.bin\" &&
		sgosbx $1 cp x:big.bin back-$1.bin &&
		cmp big.bin back-$1.bin
	"

	test_expect_success "$1: a name with a space, both ways" "
		sgosbx $1 cp 'name with space.txt' 'x:d/name with space.txt' &&
		test_cmp 'name with space.txt' \
			\"\$(cat $1.root)/d/name with space.txt\" &&
		sgosbx $1 cp 'x:d/name with space.txt' 'back-$1 space.txt' &&
		test_cmp 'name with space.txt' 'back-$1 space.txt'
	"

	test_expect_success "$1: a tree up keeps files, modes, empty dirs" "
		sgosbx $1 cp tree x:up-tree &&
		r=\$(cat $1.root)/up-tree &&
		test_cmp tree/a.txt \"\$r/a.txt\" &&
		test_cmp 'tree/sub/with space.txt' \"\$r/sub/with space.txt\" &&
		test \"\$(stat -c %a \"\$r/sub/run.sh\")\" = 750 &&
		test -d \"\$r/empty\" &&
		! test -e \"\$r/empty/.gosbx-keep\" &&
		sgosbx $1 exec -- 'ls -a; ls up-tree/sub' >out &&
		! grep gosbx-cp out &&
		grep run.sh out
	"

	test_expect_success "$1: a tree down keeps files and modes" "
		sgosbx $1 cp x:up-tree down-$1 &&
		test_cmp tree/a.txt down-$1/a.txt &&
		test_cmp 'tree/sub/with space.txt' 'down-$1/sub/with space.txt' &&
		test \"\$(stat -c %a down-$1/sub/run.sh)\" = 750 &&
		test -d down-$1/empty
	"

	test_expect_success "$1: exec -f writes the file before the command" "
		printf 'hello from f\n' >f.txt &&
		sgosbx $1 exec -f f.txt -- 'cat f.txt' >out &&
		test_cmp f.txt out
	"

	test_expect_success "$1: the REPL's :put and :get use the files API" "
		echo repl data >repl-$1.txt &&
		rm -f repl-$1.in && mkfifo repl-$1.in && : >repl-$1.out &&
		{ GOSBX_URL=\$(sbd_url $1) script -qec \"gosbx --backend=url exec\" \
			/dev/null <repl-$1.in >repl-$1.out 2>&1 & } &&
		repl=\$! &&
		exec 7>repl-$1.in &&
		echo \":put repl-$1.txt in/r.txt\" >&7 &&
		test_retry 100 0.1 grep \"as /app/in/r.txt\" repl-$1.out &&
		test_cmp repl-$1.txt \"\$(cat $1.root)/in/r.txt\" &&
		echo \":get in/r.txt back-repl-$1.txt\" >&7 &&
		test_retry 100 0.1 grep \"got /app/in/r.txt\" repl-$1.out &&
		test_cmp repl-$1.txt back-repl-$1.txt &&
		echo \":get in back-dir-$1\" >&7 &&
		test_retry 100 0.1 grep \"cannot get .in.: a directory\" repl-$1.out &&
		! test -e back-dir-$1 &&
		echo :quit >&7 &&
		exec 7>&- &&
		wait \$repl
	"

	test_expect_success "$1: a missing file is a clear error" "
		expect_code 125 sgosbx $1 cp x:no-such-file got 2>err &&
		grep \"cannot read 'no-such-file' in the sandbox: no such file\" err &&
		! test -e got
	"

	test_expect_success "$1: a path escaping the root is refused (403)" "
		ln -s / \"\$(cat $1.root)/esc\" &&
		expect_code 125 sgosbx $1 cp x:esc/etc/hostname got 2>err &&
		grep 'sandboxd refuses paths outside its root' err &&
		! test -e got &&
		expect_code 125 sgosbx $1 exec -f \"f.txt:esc\$PWD/put-$1\" \
			-- true 2>err &&
		grep \"cannot write 'esc/.*' in the sandbox: 403\" err &&
		! test -e put-$1
	"

	test_expect_success "$1: a local symlink is refused by name" "
		expect_code 125 sgosbx $1 cp linktree x:with-link 2>err &&
		grep 'cannot make symlinks' err
	"

	test_expect_success "$1: -i passes stdin through WriteStdin" "
		printf 'one\\ntwo\\n' >in &&
		expect_code 3 sgosbx $1 exec -i -- 'cat; exit 3' <in >out &&
		test_cmp in out
	"

	test_expect_success "$1: -t: a /dev/pts terminal of the local size" "
		GOSBX_URL=\$(sbd_url $1) && export GOSBX_URL &&
		expect_code 5 script -qec \
			\"stty rows 30 cols 100; gosbx --backend=url exec -t -- 'tty; stty size; exit 5'\" \
			/dev/null >out </dev/null &&
		grep '^/dev/pts/[0-9]' out &&
		grep '^30 100' out
	"

	test_expect_success "$1: -it: keys in, a resize (SIGWINCH), the status" "
		tm -f /dev/null new-session -d -s $1 -x 80 -y 24 \
			\"exec env PS1='local\\$ ' GOSBX_URL=\$(sbd_url $1) sh\" &&
		screen_has $1 'local\$' &&
		tm send-keys -t $1 'gosbx --backend=url exec -it -- sh' Enter &&
		tm send-keys -t $1 'a=in; b=sandbox; echo \$a-\$b' Enter &&
		screen_has $1 in-sandbox &&
		size_shown $1 '24 80' &&
		tm resize-window -t $1 -x 100 -y 30 &&
		size_shown $1 '30 100' &&
		tm send-keys -t $1 'exit 7' Enter &&
		gosbx_gone $1 &&
		tm send-keys -t $1 'echo status=\$?' Enter &&
		screen_has $1 status=7
	"
}

test_expect_success 'setup: gosbx-runtime with sandboxd listeners' '
	sbd_start_gosbx --name=gs
'
files_checks gs

# gosbx-runtime ends a gRPC connection idle for its idle timeout (GOAWAY,
# Documentation/gosbx-runtime.txt); the REPL's next line connects again
test_expect_success 'the REPL connects again after an idle connection ended' '
	{
		SANDBOX_GRPC_IDLE_TIMEOUT=1s && export SANDBOX_GRPC_IDLE_TIMEOUT &&
		sbd_start_gosbx --name=idle &&
		unset SANDBOX_GRPC_IDLE_TIMEOUT &&
		mkfifo repl.in && : >repl.out
	} || exit 1
	GOSBX_URL=$(sbd_url idle) script -qec "gosbx --backend=url exec" \
		/dev/null <repl.in >repl.out 2>&1 &
	repl=$!
	exec 7>repl.in &&
	echo "echo one-\$((40+2))" >&7 &&
	test_retry 100 0.1 grep one-42 repl.out &&
	test_retry 100 0.1 grep "idle connection closed" idle.log &&
	echo "echo two-\$((40+2))" >&7 &&
	test_retry 100 0.1 grep two-42 repl.out &&
	echo :quit >&7 &&
	exec 7>&- &&
	wait $repl &&
	test_grep ! -i "error" repl.out
'

test_expect_success 'setup: upstream sandboxd built from the module' '
	sbd_build &&
	sbd_start_upstream --name=up
'
files_checks up

test_done
