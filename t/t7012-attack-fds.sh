#!/bin/sh
test_description='attack: no descriptor of the caller reaches a sandbox

Sandbox code can open /proc/<pid>/fd/<n> of every process it sees,
bwrap and the resident gosbx-runtime included: an inherited terminal
gives it the user'"'"'s keystrokes and their screen for the claim'"'"'s
life, an inherited file its content. stdin is /dev/null unless the
caller gives one, and nothing else is inherited.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

echo "the user's secret" >t7012-secret.txt

# Run inside: "HOST <fd> -> <target>" for each descriptor of a process
# we see that is the secret file or a terminal, "fd0 <pid> <target>"
# for the stdin of bwrap (pid 1) and of the runtime, or "fd0 <pid>
# sealed" when the runtime's descriptors cannot be read at all (it is
# non-dumpable, as are its spawner and shims: code of the same uid
# cannot open them), then "done".
cat >scan.sh <<\EOF
for l in /proc/[0-9]*/fd/*; do
	t=$(readlink "$l" 2>/dev/null) || continue
	case "$t" in
	*t7012-secret* | */pts/* | /dev/tty* | /dev/console)
		echo "HOST $l -> $t" ;;
	esac
done
for p in /proc/[0-9]*; do
	case "$(cat $p/cmdline 2>/dev/null | tr '\0' ' ')" in
	*bwrap* | *gosbx-runtime*)
		if t=$(readlink $p/fd/0); then
			echo "fd0 ${p#/proc/} $t"
		elif ! ls $p/fd >/dev/null 2>&1; then
			echo "fd0 ${p#/proc/} sealed"
		else
			echo "fd0 ${p#/proc/} unreadable"
		fi ;;
	esac
done
echo done
EOF

# check_scan <output>: nothing of the host, every stdin seen /dev/null
# or out of reach (sealed)
check_scan() {
	cat "$1" >&4 &&
	grep -x done "$1" &&
	! grep "^HOST " "$1" &&
	grep "^fd0 " "$1" >fd0 &&
	test -s fd0 &&
	! grep -v -e " /dev/null\$" -e " sealed\$" fd0
}

test_expect_success 'isolate-run: stdin a file, fd 7 open: neither inside' '
	isolate-run -- sh scan.sh <t7012-secret.txt 7<t7012-secret.txt >out &&
	check_scan out &&
	echo | isolate-run -- sh -c "cat; echo end" <t7012-secret.txt >out &&
	echo end >expect &&
	test_cmp expect out
'

test_expect_success 'gosbx exec: the throwaway runtime gets none of ours' '
	gosbx exec --file=scan.sh -- sh scan.sh \
		<t7012-secret.txt 7<t7012-secret.txt >out &&
	check_scan out
'

test_expect_success 'gosbx open: the kept runtime gets none of ours' '
	name=$(gosbx open -q <t7012-secret.txt 7<t7012-secret.txt) &&
	test_atexit "gosbx close $name" &&
	gosbx exec --claim="$name" --file=scan.sh -- sh scan.sh >out &&
	check_scan out &&
	gosbx close "$name"
'

command -v script >/dev/null 2>&1 && test_set_prereq SCRIPT

test_expect_success SCRIPT 'gosbx open on a terminal: the terminal stays out' '
	# script(1) runs it with a pseudo-terminal as stdin, stdout, stderr
	script -qec "gosbx open -q >name" /dev/null </dev/null >script.out &&
	name=$(cat name) &&
	test -n "$name" &&
	test_atexit "gosbx close $name" &&
	gosbx exec --claim="$name" --file=scan.sh -- sh scan.sh >out &&
	check_scan out &&
	gosbx close "$name"
'

. "$TEST_DIRECTORY"/lib-mcp.sh

test_expect_success 'gosbx mcp --http: its sandboxes get none of its fds' '
	port=$(test_free_port) &&
	echo t7012-token >token &&
	{
		gosbx mcp --http=127.0.0.1:$port --token-file=token \
			<t7012-secret.txt 7<t7012-secret.txt \
			>srv.out 2>srv.log &
	} &&
	echo $! >srv.pid &&
	test_atexit "kill \$(cat srv.pid)" &&
	test_retry 300 0.1 curl -s -o /dev/null -X POST \
		"http://127.0.0.1:$port/mcp" &&
	node -e "
const fs = require(\"fs\");
fs.writeFileSync(\"args.json\", JSON.stringify({
	command: \"sh scan.sh\",
	files: { \"scan.sh\": fs.readFileSync(\"scan.sh\", \"utf8\") },
}));
" &&
	mcp_client --url=http://127.0.0.1:$port/mcp --token-file=token \
		--save-text=text call run_go_code @args.json >out 2>err &&
	mcp_check out "r[0].ok && r[0].result.isError === false" &&
	sed -n "/stdout/,/stderr/p" text >scan &&
	check_scan scan
'

test_done
