#!/bin/sh
test_description='gosbx exec -i: standard input streamed to the command'
. "$(dirname "$0")/test-lib.sh"

# local by default; t2042 (url), t6230 and t6231 (kube through a router
# that passes WebSockets, and through one that carries plain HTTP only)
# run this suite on the other backends
. "$TEST_DIRECTORY"/lib-backend.sh

test_have_prereq LOCAL && test_atexit 'gosbx close --all'
command -v openssl >/dev/null && test_set_prereq OPENSSL
test -x /usr/bin/time && test_set_prereq GNUTIME

# MiB of stdin for the streaming test (1 GiB unless told otherwise)
: "${T2010_STDIN_MIB:=1024}"

# A reproducible pseudo-random stream of $1 MiB (AES-CTR of zeros).
random_mib() {
	openssl enc -aes-128-ctr -nosalt -K 000102030405060708090a0b0c0d0e0f \
		-iv 0 -in /dev/zero 2>/dev/null | head -c $(($1 << 20))
}

test_expect_success 'setup: a kept claim' '
	if ! test_have_prereq URL
	then
		gosbx open -q --name=t2040 >/dev/null
	fi
'

test_expect_success 'without -i the command reads nothing and stdin stays unread' '
	printf "line1\nline2\n" >in &&
	{ gosbx exec --claim=t2040 -- "cat; echo done" && cat; } <in >out &&
	printf "done\nline1\nline2\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a while-read loop runs the command once per line' '
	printf "a\nb\nc\n" | while read x
	do
		gosbx exec --claim=t2040 -- "echo got-$x" || exit 1
	done >out &&
	printf "got-a\ngot-b\ngot-c\n" >expect &&
	test_cmp expect out
'

test_expect_success '-i passes stdin on; EOF and the exit status come through' '
	printf "no newline" >in &&
	expect_code 7 gosbx exec -i --claim=t2040 -- \
		"cat; echo; echo EOF; exit 7" <in >out &&
	printf "no newline\nEOF\n" >expect &&
	test_cmp expect out
'

test_expect_success 'stdout and stderr stay apart with -i' '
	echo in | gosbx exec -i --claim=t2040 -- \
		"cat; echo to-stderr >&2" >out 2>err &&
	echo in >expect && test_cmp expect out &&
	echo to-stderr >expect && test_cmp expect err
'

test_expect_success OPENSSL '-i is binary-safe' '
	openssl rand 300000 >bin &&
	printf "\0\377\r\n\033[2J" >>bin &&
	gosbx exec -i --claim=t2040 -- cat <bin >out &&
	cmp bin out
'

test_expect_success '-i in a throwaway sandbox' '
	echo throwaway | gosbx exec -i -- "tr a-z A-Z" >out &&
	echo THROWAWAY >expect &&
	test_cmp expect out
'

test_expect_success 'a command that stops reading ends the run' '
	yes | gosbx exec -i --claim=t2040 -- "head -c 6" >out &&
	printf "y\ny\ny\n" >expect &&
	test_cmp expect out
'

test_expect_success 'interactive input: each line is answered before the next is sent' '
	rm -f fifo && mkfifo fifo &&
	{
		gosbx exec -i --claim=t2040 -- \
			"while read l; do echo \"re:\$l\"; done" <fifo >out &
	} &&
	exec 6>fifo &&
	echo one >&6 &&
	test_retry 600 0.1 grep -q "^re:one$" out &&
	echo two >&6 &&
	test_retry 600 0.1 grep -q "^re:two$" out &&
	exec 6>&- &&
	wait &&
	printf "re:one\nre:two\n" >expect &&
	test_cmp expect out
'

# gosbx's peak RSS bound (kB); the sanitizers' quarantine (256 MiB)
# keeps freed buffers resident
if test_have_prereq SANITIZED
then
	STDIN_RSS_MAX_KB=400000
else
	STDIN_RSS_MAX_KB=100000
fi

test_expect_success OPENSSL,GNUTIME "$T2010_STDIN_MIB MiB of stdin stream through with bounded memory" '
	random_mib $T2010_STDIN_MIB | sha256sum >expect &&
	random_mib $T2010_STDIN_MIB |
		/usr/bin/time -f %M -o rss.kb \
		gosbx exec -i --claim=t2040 -- sha256sum >out &&
	test_cmp expect out &&
	echo >&4 "gosbx peak RSS: $(cat rss.kb) kB" &&
	test "$(cat rss.kb)" -lt $STDIN_RSS_MAX_KB
'

test_expect_success 'SIGINT cancels the command (130) and it is killed' '
	{ gosbx exec -i --claim=t2040 -- "sleep 1000.2040$$" </dev/zero & } &&
	pid=$! &&
	test_retry 600 0.1 pgrep -f "^sleep 1000.2040$$" >/dev/null &&
	kill -INT $pid &&
	{ wait $pid; test $? = 130; } &&
	test_retry 300 0.1 sh -c "! pgrep -f \"^sleep 1000.2040$$\""
'

test_expect_success '-i and -t need a command; no --json with them (129)' '
	expect_code 129 gosbx exec -i --claim=t2040 </dev/null 2>err &&
	test_grep "need a command" err &&
	expect_code 129 gosbx exec -i --json --claim=t2040 -- true 2>err &&
	test_grep "json" err
'

test_expect_success LOCAL 'a runtime without the channel is named, not guessed (125)' '
	cat >old-runtime.py <<-\EOF &&
	import json, sys
	from http.server import BaseHTTPRequestHandler, HTTPServer
	class H(BaseHTTPRequestHandler):
	    def do_GET(self):
	        body = json.dumps({"status": "ok"}).encode()
	        self.send_response(200)
	        self.send_header("Content-Type", "application/json")
	        self.send_header("Content-Length", str(len(body)))
	        self.end_headers()
	        self.wfile.write(body)
	    def log_message(self, *a):
	        pass
	s = HTTPServer(("127.0.0.1", 0), H)
	open("old.port", "w").write(str(s.server_port))
	s.serve_forever()
	EOF
	{ python3 old-runtime.py & } &&
	echo $! >old.pid &&
	test_atexit "kill $(cat old.pid)" &&
	test_retry 300 0.1 test -s old.port &&
	echo x | expect_code 125 gosbx --backend=url \
		--url=http://127.0.0.1:$(cat old.port) exec -i -- cat 2>err &&
	test_grep "has no interactive channel" err
'

test_done
