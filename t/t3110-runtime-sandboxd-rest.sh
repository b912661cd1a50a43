#!/bin/sh
test_description='gosbx-runtime --sandboxd-rest: the sandboxd REST API

The contract is agent-sandbox v1.0.3,
packages/sandboxd/spec/filesystem/v1/filesystem.yaml: /v1/files/<path>
(GET file or DirectoryListing, HEAD, PUT atomic with mode, DELETE with
recursive), /v1/health, /v1/metadata, errors {"code","message"}.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

# Requests to the sandboxd listener go through the lib-runtime.sh
# helpers as server "sbx" (its address in sbx.url).
sbx_expect() {
	RT=sbx rt_expect "$@"
}

# sbx_expect_error <status> <code> <method> <path> [curl options]: the
# status and an Error object with exactly code and message.
sbx_expect_error() {
	_st=$1 _code=$2
	shift 2
	sbx_expect "$_st" "$@" && json_is body code "$_code" &&
	json_type body message >type && echo str >type.expect &&
	test_cmp type.expect type &&
	json_keys body >keys.actual && printf "code\nmessage\n" >keys.expect &&
	test_cmp keys.expect keys.actual
}

# sbx_listen <name> <port>: the sandboxd listener of server <name>
# answers /v1/health (it starts beside the runtime's own listener)
sbx_listen() {
	echo "http://127.0.0.1:$2" >"$1.url" &&
	rt_poll 60 sbx_up "$1"
}

# sbx_up <name> [curl options]: GET /v1/health of server <name> is 200
sbx_up() {
	_n=$1
	shift
	RT=$_n rt_curl /v1/health -o /dev/null -f "$@"
}

test_expect_success 'setup' '
	port=$(test_free_port) &&
	SANDBOX_GREETING=hi SANDBOX_API_TOKEN=secret \
		rt_start --sandboxd-rest=127.0.0.1:$port &&
	sbx_listen sbx $port &&
	mkdir -p work/dir/sub outside &&
	printf hello >work/dir/a.txt &&
	printf secret >outside/secret.txt &&
	ln -s ../outside work/out-link &&
	ln -s dir/a.txt work/in-link
'

test_expect_success 'health: status ok and uptime_seconds' '
	sbx_expect 200 GET /v1/health &&
	json_is body status ok &&
	json_type body uptime_seconds >type && echo int >expect &&
	test_cmp expect type
'

test_expect_success 'metadata: SANDBOX_ variables, never a secret' '
	sbx_expect 200 GET /v1/metadata &&
	json_is body env.SANDBOX_GREETING hi &&
	json_keys body env >keys &&
	! grep TOKEN keys
'

test_expect_success 'GET a file: its bytes, application/octet-stream' '
	sbx_expect 200 GET /v1/files/dir/a.txt &&
	printf hello >expect && test_cmp expect body &&
	rt_header Content-Type >ct &&
	echo application/octet-stream >expect && test_cmp expect ct
'

test_expect_success 'GET with a Range: 206' '
	sbx_expect 206 GET /v1/files/dir/a.txt -H "Range: bytes=1-3" &&
	printf ell >expect && test_cmp expect body
'

test_expect_success 'HEAD a file: 200, its length, no body' '
	sbx_expect 200 HEAD /v1/files/dir/a.txt -I &&
	rt_header Content-Length >len && echo 5 >expect &&
	test_cmp expect len &&
	sbx_expect 404 HEAD /v1/files/nope -I
'

cat >check-listing.py <<\EOF
import json, os, re, stat, sys
body, path, d = sys.argv[1], sys.argv[2], sys.argv[3]
j = json.load(open(body))
assert sorted(j) == ["entries", "path"], j
assert j["path"] == path, j
names = [e["name"] for e in j["entries"]]
assert names == sorted(names), names
want = sorted(n for n in os.listdir(d)
	      if not os.path.islink(os.path.join(d, n)) or
	      os.path.realpath(os.path.join(d, n)).startswith(
		      os.path.realpath(sys.argv[4]) + "/"))
assert names == want, (names, want)
for e in j["entries"]:
	st = os.stat(os.path.join(d, e["name"]))
	assert e["type"] == ("directory" if stat.S_ISDIR(st.st_mode)
			     else "file"), e
	assert e["size"] == st.st_size, e
	assert e["mode"] == "%04o" % (st.st_mode & 0o777), e
	assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",
			    e["modified_at"]), e
EOF

test_expect_success 'GET a directory: a DirectoryListing' '
	sbx_expect 200 GET /v1/files/dir &&
	rt_header Content-Type >ct &&
	echo application/json >expect && test_cmp expect ct &&
	python3 check-listing.py body /dir work/dir work
'

test_expect_success 'GET the root: links that leave it are left out' '
	sbx_expect 200 GET /v1/files/ &&
	python3 check-listing.py body / work work &&
	! grep out-link body &&
	grep in-link body
'

test_expect_success 'GET a missing path: 404 NOT_FOUND' '
	sbx_expect_error 404 NOT_FOUND GET /v1/files/nope.txt &&
	sbx_expect_error 404 NOT_FOUND GET /v1/files/dir/a.txt/x
'

test_expect_success 'hostile paths are 403 PERMISSION_DENIED' '
	sbx_expect_error 403 PERMISSION_DENIED GET /v1/files/../outside/secret.txt &&
	sbx_expect_error 403 PERMISSION_DENIED \
		GET /v1/files/dir%2F..%2F..%2Foutside%2Fsecret.txt &&
	sbx_expect_error 403 PERMISSION_DENIED GET /v1/files/out-link/secret.txt &&
	sbx_expect_error 403 PERMISSION_DENIED GET /v1/files/out-link &&
	sbx_expect_error 403 PERMISSION_DENIED PUT /v1/files/../x \
		--data-binary x &&
	sbx_expect_error 403 PERMISSION_DENIED PUT /v1/files/out-link/x \
		--data-binary x &&
	sbx_expect_error 403 PERMISSION_DENIED DELETE /v1/files/../outside &&
	sbx_expect_error 403 PERMISSION_DENIED \
		DELETE /v1/files/out-link/secret.txt &&
	test ! -e x && test ! -e outside/x &&
	test -f outside/secret.txt
'

test_expect_success 'an absolute path is under the root, as upstream' '
	sbx_expect_error 404 NOT_FOUND GET /v1/files//etc/passwd &&
	sbx_expect 200 GET /v1/files//dir/a.txt &&
	printf hello >expect && test_cmp expect body
'

test_expect_success 'GET a FIFO: 403 PERMISSION_DENIED, never a hang' '
	mkfifo work/fifo &&
	sbx_expect_error 403 PERMISSION_DENIED GET /v1/files/fifo &&
	rm work/fifo
'

test_expect_success 'a NUL in the path: 400 INVALID_ARGUMENT' '
	sbx_expect_error 400 INVALID_ARGUMENT GET /v1/files/dir%00x
'

test_expect_success 'PUT: 204, parents created, mode 0644' '
	printf new >new.txt &&
	sbx_expect 204 PUT /v1/files/p/q/new.txt --data-binary @new.txt &&
	test_must_fail test -s body &&
	test_cmp new.txt work/p/q/new.txt &&
	echo 644 >expect && stat -c %a work/p/q/new.txt >actual &&
	test_cmp expect actual
'

test_expect_success 'PUT an empty body: an empty file' '
	printf x >work/e.txt &&
	sbx_expect 204 PUT "/v1/files/e.txt?mode=" --data-binary "" &&
	test -f work/e.txt && test_must_fail test -s work/e.txt
'

test_expect_success 'PUT with mode: the file gets it, umask aside' '
	sbx_expect 204 PUT "/v1/files/run.sh?mode=0751" --data-binary x &&
	echo 751 >expect && stat -c %a work/run.sh >actual &&
	test_cmp expect actual
'

test_expect_success 'PUT with a bad mode: 400 INVALID_ARGUMENT, nothing written' '
	for m in 644 0888 07555 abcd 0x64; do
		sbx_expect_error 400 INVALID_ARGUMENT \
			PUT "/v1/files/m.txt?mode=$m" --data-binary x ||
		return 1
	done &&
	test ! -e work/m.txt
'

test_expect_success 'PUT overwrites, through a link inside the root' '
	sbx_expect 204 PUT /v1/files/in-link --data-binary changed &&
	printf changed >expect && test_cmp expect work/dir/a.txt &&
	test -h work/in-link &&
	printf hello >work/dir/a.txt
'

test_expect_success 'PUT a multipart body: the file part' '
	python3 -c "import sys; sys.stdout.buffer.write(bytes(range(256)) * 99)" \
		>bytes.bin &&
	sbx_expect 204 PUT /v1/files/form.bin -F other=1 -F file=@bytes.bin &&
	test_cmp bytes.bin work/form.bin &&
	sbx_expect_error 400 INVALID_ARGUMENT PUT /v1/files/form2.bin \
		-F other=1 &&
	test ! -e work/form2.bin
'

test_expect_success 'PUT on a directory: 400 INVALID_ARGUMENT' '
	sbx_expect_error 400 INVALID_ARGUMENT PUT /v1/files/dir \
		--data-binary x &&
	sbx_expect_error 400 INVALID_ARGUMENT PUT /v1/files/ --data-binary x &&
	test -d work/dir
'

test_expect_success 'PUT under a file: 400 INVALID_ARGUMENT' '
	sbx_expect_error 400 INVALID_ARGUMENT PUT /v1/files/dir/a.txt/x \
		--data-binary x
'

test_expect_success 'a big file goes both ways' '
	head -c 50000000 /dev/urandom >big.bin &&
	sbx_expect 204 PUT /v1/files/big.bin -T big.bin &&
	test_cmp big.bin work/big.bin &&
	sbx_expect 200 GET /v1/files/big.bin &&
	test_cmp big.bin body &&
	rm -f big.bin body work/big.bin
'

test_expect_success 'PUT over the upload limit: 413, the old file stays' '
	printf old >work/limit.bin &&
	{
		head -c $((RT_UPLOAD_LIMIT + 1)) /dev/zero |
		RT=sbx rt_req PUT /v1/files/limit.bin -T - \
			-H "Transfer-Encoding:" \
			-H "Content-Length: $((RT_UPLOAD_LIMIT + 1))"
		true
	} &&
	test "$(cat status)" = 413 &&
	json_is body code RESOURCE_EXHAUSTED &&
	printf old >expect && test_cmp expect work/limit.bin
'

cat >cut-put.py <<\EOF
import socket, sys
host, port = sys.argv[1].split("//")[1].split(":")
s = socket.create_connection((host, int(port)))
s.sendall(b"PUT /v1/files/cut.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	  b"Content-Length: 1000000\r\n\r\n" + b"x" * 300000)
s.close()
EOF

# cut_logged <n>: the server logged the end of n PUTs of cut.txt
cut_logged() {
	test "$(grep -c "path=/v1/files/cut.txt " rt.log)" = "$1"
}

test_expect_success 'a PUT cut off midway leaves no file, the old one stays' '
	printf old >work/cut.txt &&
	python3 cut-put.py "$(cat sbx.url)" &&
	python3 cut-put.py "$(cat sbx.url)" &&
	# both requests ended (their log lines) before we look
	rt_poll 30 cut_logged 2 &&
	printf old >expect && test_cmp expect work/cut.txt &&
	ls -A work >names && ! grep -e tmp names
'

test_expect_success 'DELETE a file: 204' '
	printf x >work/del.txt &&
	sbx_expect 204 DELETE /v1/files/del.txt &&
	test ! -e work/del.txt &&
	sbx_expect_error 404 NOT_FOUND DELETE /v1/files/del.txt
'

test_expect_success 'DELETE a non-empty directory: 409 CONFLICT' '
	mkdir -p work/full/deep && printf x >work/full/deep/f &&
	sbx_expect_error 409 CONFLICT DELETE /v1/files/full &&
	sbx_expect_error 409 CONFLICT DELETE "/v1/files/full?recursive=false" &&
	test -f work/full/deep/f
'

test_expect_success 'DELETE an empty directory without recursive: 204' '
	mkdir work/empty &&
	sbx_expect 204 DELETE /v1/files/empty &&
	test ! -e work/empty
'

test_expect_success 'DELETE recursive=true removes the tree' '
	sbx_expect 204 DELETE "/v1/files/full?recursive=true" &&
	test ! -e work/full
'

test_expect_success 'DELETE with a bad recursive: 400 INVALID_ARGUMENT' '
	printf x >work/keep.txt &&
	sbx_expect_error 400 INVALID_ARGUMENT \
		DELETE "/v1/files/keep.txt?recursive=yes" &&
	test -f work/keep.txt
'

test_expect_success 'DELETE a link removes the link, not its target' '
	ln -s dir/a.txt work/link2 &&
	sbx_expect 204 DELETE /v1/files/link2 &&
	test ! -e work/link2 && test -f work/dir/a.txt
'

test_expect_success 'DELETE the root: 409, recursive=true empties it' '
	sbx_expect_error 409 CONFLICT DELETE /v1/files/ &&
	test -f work/dir/a.txt &&
	sbx_expect 204 DELETE "/v1/files/?recursive=1" &&
	test -d work && ls -A work >names && test_must_fail test -s names &&
	test -f outside/secret.txt
'

test_expect_success 'unknown paths 404, other methods 405, Error shape' '
	sbx_expect_error 404 NOT_FOUND GET /v1/nope &&
	sbx_expect_error 404 NOT_FOUND GET /execute &&
	sbx_expect_error 405 UNIMPLEMENTED POST /v1/files/x -d x &&
	sbx_expect_error 405 UNIMPLEMENTED POST /v1/health
'

test_expect_success 'web pages and foreign Hosts are refused, as on --addr' '
	sbx_expect_error 403 PERMISSION_DENIED GET /v1/health \
		-H "Origin: http://example.com" &&
	sbx_expect_error 403 PERMISSION_DENIED GET /v1/health \
		-H "Host: rebind.example.com" &&
	sbx_expect 200 GET /v1/health -H "Origin: http://127.0.0.1:1"
'

test_expect_success 'the runtime API still answers on --addr' '
	rt_alive &&
	rt_expect 404 GET /v1/health
'

test_expect_success '--token-file guards the sandboxd listener too' '
	port=$(test_free_port) &&
	echo s3cret >tok.token &&
	rt_start --name=tok --workdir="$TRASH_DIRECTORY/work2" \
		--token-file="$TRASH_DIRECTORY/tok.token" \
		--sandboxd-rest=127.0.0.1:$port &&
	echo "http://127.0.0.1:$port" >tokx.url &&
	rt_poll 60 sbx_up tokx \
		-H "Authorization: Bearer s3cret" -f &&
	RT=tokx rt_expect 401 GET /v1/health &&
	json_is body code UNAUTHENTICATED &&
	RT=tokx rt_expect 200 GET /v1/health \
		-H "Authorization: Bearer s3cret"
'

test_expect_success 'a unix socket works, and is removed at exit' '
	rt_start --name=ux --workdir="$TRASH_DIRECTORY/work3" \
		--sandboxd-rest=unix:"$TRASH_DIRECTORY/sbx.sock" &&
	echo "unix:$TRASH_DIRECTORY/sbx.sock" >uxs.url &&
	rt_poll 60 sbx_up uxs &&
	RT=uxs rt_expect 204 PUT /v1/files/u.txt --data-binary u &&
	printf u >expect && test_cmp expect work3/u.txt &&
	rt_stop ux &&
	test ! -e sbx.sock
'

# whether 127.0.0.1:8080 can be bound now (another program may hold it)
port_8080_free() {
	python3 -c "import socket; socket.socket().bind((\"127.0.0.1\", 8080))"
}

test_expect_success 'alone, --sandboxd-rest is 127.0.0.1:8080' '
	if port_8080_free; then
		rt_start --name=def --workdir="$TRASH_DIRECTORY/work4" \
			--sandboxd-rest &&
		sbx_listen defx 8080 &&
		grep "msg=\"sandboxd listening\"" def.log >line &&
		grep "127.0.0.1:8080" line
	else
		# taken: the failure to listen names the default address
		test_expect_code 1 gosbx-runtime --addr=127.0.0.1:0 \
			--workdir="$TRASH_DIRECTORY/work4" --sandboxd-rest \
			2>err &&
		grep "cannot listen.*127.0.0.1:8080" err
	fi
'

# KEP-539.2 "Endpoint discovery": the workload finds sandboxd by
# SANDBOXD_REST_ADDR and SANDBOXD_GRPC_ADDR; the runtime tells its
# commands the addresses its listeners got.
test_expect_success 'commands find the listeners by SANDBOXD_*_ADDR' '
	cat >discover.json <<-\EOF &&
	{"command": "echo \"$SANDBOXD_REST_ADDR\"; curl -sf http://$SANDBOXD_REST_ADDR/v1/health"}
	EOF
	rt_exec "$(cat discover.json)" &&
	json_get body stdout >out &&
	sed "s,^http://,," sbx.url >expect &&
	head -n 1 out >first &&
	test_cmp expect first &&
	test_grep "\"status\":\"ok\"" out
'

test_expect_success 'a wildcard or port 0 is told as a client dials it' '
	SANDBOXD_REST_ADDR=127.0.0.1:0 rt_start --name=env \
		--workdir="$TRASH_DIRECTORY/work5" --sandboxd-grpc=:0 &&
	RT=env rt_exec "{\"command\":\"echo \$SANDBOXD_REST_ADDR \$SANDBOXD_GRPC_ADDR\"}" &&
	json_get body stdout >out &&
	tr ": " "  " <out >words &&
	read rhost rest ghost grpc <words &&
	test "$rhost" = 127.0.0.1 && test "$ghost" = localhost &&
	test "$rest" -gt 0 && test "$grpc" -gt 0 &&
	echo "http://127.0.0.1:$rest" >envx.url &&
	sbx_up envx &&
	rt_stop env
'

test_expect_success 'without the listeners, commands get no SANDBOXD_*' '
	rt_start --name=none --workdir="$TRASH_DIRECTORY/work6" &&
	RT=none rt_exec "{\"command\":\"env | grep ^SANDBOXD_ || echo none\"}" &&
	json_is body stdout none &&
	rt_stop none
'

test_done
