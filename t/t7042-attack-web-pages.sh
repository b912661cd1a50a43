#!/bin/sh
test_description='web pages cannot drive gosbx-runtime on a local port

What a page the user has open can make the browser send to
127.0.0.1:<port> (gosbx-runtime(1), WEB PAGES), sent here with the
headers a browser sends: a form post (text/plain, multipart), a no-cors
fetch, a cross-site WebSocket handshake, and after DNS rebinding a
request whose Host is the page'"'"'s own name. Each is refused before
anything runs or is written; what curl, the seed'"'"'s client and gosbx
send still works, and --token-file makes every request show a token.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

evil=http://attacker.example

test_expect_success 'setup: a runtime on TCP with a secret file' '
	rt_start &&
	echo secret-t7042 >"$(rt_workdir)/secret.txt"
'
url=$(cat rt.url)
port=${url##*:}

# page_post <out> <curl options...>: a request as a page would send it;
# the status into <out>.status, the body into <out>
page_post() {
	_out=$1
	shift
	curl -sS --max-time 30 -o "$_out" -w "%{http_code}" "$@" \
		>"$_out.status"
}

test_expect_success 'a form post (text/plain) to /execute runs nothing' '
	page_post form "$url/execute" -H "Origin: $evil" \
		-H "Content-Type: text/plain" \
		--data-binary "{\"command\":\"touch pwned-form\"}" &&
	test "$(cat form.status)" = 403 &&
	test_grep "origin .http://attacker.example. is not allowed" form &&
	! test -e "$(rt_workdir)/pwned-form"
'

test_expect_success 'a no-cors fetch to /execute and /v1/exec runs nothing' '
	for p in /execute /v1/exec; do
		page_post fetch "$url$p" -H "Origin: $evil" \
			-H "Content-Type: text/plain;charset=UTF-8" \
			--data-binary "{\"command\":\"touch pwned-fetch\"}" &&
		test "$(cat fetch.status)" = 403 || return 1
	done &&
	! test -e "$(rt_workdir)/pwned-fetch"
'

test_expect_success 'a command body must say application/json, even without Origin' '
	for ct in "text/plain" "application/x-www-form-urlencoded" \
		"multipart/form-data; boundary=x" ""; do
		page_post ct "$url/execute" -H "Content-Type: $ct" \
			--data-binary "{\"command\":\"touch pwned-ct\"}" &&
		test "$(cat ct.status)" = 415 &&
		test_grep "Content-Type must be application/json" ct ||
			return 1
	done &&
	! test -e "$(rt_workdir)/pwned-ct" &&
	rt_exec "{\"command\":\"echo ok\"}" -H "Content-Type: application/json; charset=utf-8" &&
	test "$(json_get body stdout)" = ok
'

test_expect_success 'archive and input bodies of a type a page can send are refused' '
	tar -cf in.tar -C "$(rt_workdir)" secret.txt &&
	page_post ar "$url/v1/archive?dir=sub" -H "Content-Type: text/plain" \
		--data-binary @in.tar &&
	test "$(cat ar.status)" = 415 &&
	! test -e "$(rt_workdir)/sub" &&
	page_post in "$url/v1/exec/x/stdin" --data-binary abc &&
	test "$(cat in.status)" = 415
'

test_expect_success 'a multipart form post to /upload writes nothing' '
	echo evil >evil.txt &&
	page_post up "$url/upload" -H "Origin: $evil" -F "file=@evil.txt" &&
	test "$(cat up.status)" = 403 &&
	! test -e "$(rt_workdir)/evil.txt"
'

test_expect_success 'a big upload from a page is refused before its body' '
	head -c $((64 << 20)) /dev/zero >big &&
	page_post bigup "$url/upload" -H "Origin: $evil" -F "file=@big" &&
	test "$(cat bigup.status)" = 403 &&
	! test -e "$(rt_workdir)/big"
'

test_expect_success 'a cross-site WebSocket handshake to the exec channel is refused' '
	for o in "$evil" null "http://127.0.0.1.attacker.example"; do
		page_post ws "$url/v1/exec" -H "Origin: $o" \
			-H "Connection: Upgrade" -H "Upgrade: websocket" \
			-H "Sec-WebSocket-Version: 13" \
			-H "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==" &&
		test "$(cat ws.status)" = 403 || return 1
	done
'

test_expect_success 'DNS rebinding: a foreign Host cannot read files' '
	page_post rb "$url/download/secret.txt" \
		-H "Host: attacker.example:$port" &&
	test "$(cat rb.status)" = 403 &&
	test_grep ! secret-t7042 rb &&
	test_grep "host .attacker.example:$port. is not allowed" rb &&
	page_post rb2 "$url/list/" -H "Host: 127.0.0.1.nip.example" &&
	test "$(cat rb2.status)" = 403
'

test_expect_success 'addresses, localhost and local origins are answered' '
	for h in "127.0.0.1:$port" "localhost:$port" "LOCALHOST." "[::1]:$port" "10.1.2.3"; do
		page_post ok "$url/download/secret.txt" -H "Host: $h" &&
		test "$(cat ok.status)" = 200 &&
		test_grep secret-t7042 ok || return 1
	done &&
	for o in "http://localhost:3000" "http://127.0.0.1" "https://[::1]:8443"; do
		page_post ok "$url/execute" -H "Origin: $o" \
			-H "Content-Type: application/json" \
			--data-binary "{\"command\":\"echo hi\"}" &&
		test "$(cat ok.status)" = 200 || return 1
	done
'

test_expect_success '--allow-host answers the names the operator names' '
	rt_start --name=named -- --allow-host="sbx.example,*.svc.cluster.local" &&
	nurl=$(cat named.url) &&
	for h in sbx.example SBX.example:8888 a.ns.svc.cluster.local:8888; do
		page_post n "$nurl/" -H "Host: $h" &&
		test "$(cat n.status)" = 200 || return 1
	done &&
	for h in x.sbx.example svc.cluster.local evilsvc.cluster.local; do
		page_post n "$nurl/" -H "Host: $h" &&
		test "$(cat n.status)" = 403 || return 1
	done
'

test_expect_success '--allow-host refuses a malformed list' '
	test_expect_code_err 129 gosbx-runtime --addr=127.0.0.1:0 \
		--workdir=w --allow-host="a b" &&
	test_grep "invalid host name" err
'

test_expect_success 'a unix socket has no Host to check' '
	rt_start --name=sock --unix &&
	RT=sock rt_req GET /download/secret.txt -H "Host: attacker.example" &&
	test "$(cat status)" != 403 &&
	RT=sock rt_req POST /execute -H "Origin: $evil" \
		-H "Content-Type: application/json" \
		--data-binary "{\"command\":\"echo x\"}" &&
	test "$(cat status)" = 403
'

test_expect_success '--token-file: every request needs the token' '
	head -c 24 /dev/urandom | od -An -tx1 | tr -d " \n" >tok.token &&
	rt_start --name=tok -- --token-file="$TRASH_DIRECTORY/tok.token" &&
	turl=$(cat tok.url) &&
	page_post t0 "$turl/" &&
	test "$(cat t0.status)" = 401 &&
	curl -sS -D t0.h -o /dev/null "$turl/" &&
	test_grep -i "^WWW-Authenticate: Bearer" t0.h &&
	page_post t1 "$turl/execute" -H "Authorization: Bearer nope" \
		-H "Content-Type: application/json" \
		--data-binary "{\"command\":\"touch pwned-tok\"}" &&
	test "$(cat t1.status)" = 401 &&
	! test -e "$(rt_workdir tok)/pwned-tok" &&
	RT=tok rt_exec "{\"command\":\"echo with-token\"}" &&
	test "$(json_get body stdout)" = with-token
'

test_expect_success 'gosbx on the url backend sends the token' '
	turl=$(cat tok.url) &&
	GOSBX_ROUTER_TOKEN=$(cat tok.token) gosbx --backend=url \
		--url="$turl" exec -- echo via-gosbx >out &&
	echo via-gosbx >expect &&
	test_cmp expect out &&
	echo via-file >expect &&
	gosbx --backend=url --url="$turl" --router-token-file=tok.token \
		exec -- echo via-file >out &&
	test_cmp expect out &&
	test_expect_code_err 125 gosbx --backend=url --url="$turl" \
		exec -- echo no-token >out &&
	test_grep "401\|unauthorized\|Unauthorized" err
'

test_expect_success 'a missing token file stops the runtime' '
	test_expect_code_err 1 gosbx-runtime --addr=127.0.0.1:0 --workdir=w \
		--token-file=no-such-file &&
	test_grep "cannot read token file" err
'

test_done
