#!/bin/sh
test_description='files gosbx writes: the time of the write as mtime, UTF-8 names, every write path'
. "$(dirname "$0")/test-lib.sh"

# local by default; t6225 runs this suite with GOSBX_TEST_BACKEND=kube.
# With node and npm, the MCP tools too (lib-mcp.sh sources lib-backend.sh)
if command -v node >/dev/null && command -v npm >/dev/null &&
	command -v curl >/dev/null
then
	. "$TEST_DIRECTORY"/lib-mcp.sh
	test_set_prereq MCP
else
	. "$TEST_DIRECTORY"/lib-backend.sh
fi

test_atexit 'gosbx close --all'

# é and 数据 (data), as bytes: the test library runs in LC_ALL=C
E=$(printf '\303\251')
DATA=$(printf '\346\225\260\346\215\256')

test_expect_success 'setup: a kept claim' '
	gosbx open -q --name=t2030 >claim
'

# newer <path>...: each path in the claim is newer than its file "stamp"
# (find -newer: strictly later), as make(1) compares them
newer() {
	gosbx exec --claim=t2030 -- find "$@" -maxdepth 0 -newer stamp \
		>newer.out &&
	for p in "$@"; do
		echo "$p" || return 1
	done >newer.expect &&
	test_cmp newer.expect newer.out
}

test_expect_success 'exec -f: files get the time of the write, not 1970' '
	gosbx exec --claim=t2030 -- touch stamp &&
	echo one >one.txt &&
	gosbx exec --claim=t2030 -f one.txt -f one.txt:sub/dir/one.txt -- true &&
	newer one.txt sub/dir/one.txt sub/dir
'

test_expect_success 'make rebuilds after exec -f rewrites its input (same size)' '
	printf "out.txt: in.txt\n\tcp in.txt out.txt\n" >Makefile &&
	echo v1 >in.txt &&
	gosbx exec --claim=t2030 -f Makefile -f in.txt -- make -s &&
	echo v2 >in.txt &&
	gosbx exec --claim=t2030 -f in.txt -- make -s &&
	gosbx exec --claim=t2030 -- cat out.txt >out &&
	echo v2 >expect &&
	test_cmp expect out
'

for locale in C C.UTF-8; do
	test_expect_success "exec -f: UTF-8 names under LC_ALL=$locale" '
		echo "$E" >"$E.txt" &&
		LC_ALL='$locale' gosbx exec --claim=t2030 -f "$E.txt" \
			-f "$E.txt:$DATA/$E.go" -f "$E.txt:$DATA/x.go" -- \
			cat "$E.txt" "$DATA/$E.go" "$DATA/x.go" >out &&
		printf "$E\n$E\n$E\n" >expect &&
		test_cmp expect out &&
		LC_ALL='$locale' gosbx exec -f "$E.txt:$DATA/$E.txt" -- \
			cat "$DATA/$E.txt" >out &&
		echo "$E" >expect &&
		test_cmp expect out
	'
done

test_expect_success 'push keeps local mtimes and UTF-8 names' '
	mkdir -p "tree/$DATA" &&
	echo x >"tree/$DATA/$E.txt" &&
	touch -d @1500000000 "tree/$DATA/$E.txt" &&
	gosbx push --claim=t2030 tree &&
	gosbx exec --claim=t2030 -- stat -c %Y "tree/$DATA/$E.txt" >out &&
	echo 1500000000 >expect &&
	test_cmp expect out
'

test_expect_success 'the claim is closed' '
	gosbx close t2030
'

if test_have_prereq LOCAL && command -v curl >/dev/null &&
	command -v python3 >/dev/null
then
	. "$TEST_DIRECTORY"/lib-runtime.sh
	. "$TEST_DIRECTORY"/lib-upstream.sh
	test_set_prereq URL_SERVERS
fi

# url_newer <workdir> <path>...: like newer, in a local workdir
url_newer() {
	_dir=$1
	shift
	(cd "$_dir" && find "$@" -maxdepth 0 -newer stamp) >newer.out &&
	for p in "$@"; do
		echo "$p" || return 1
	done >newer.expect &&
	test_cmp newer.expect newer.out
}

test_expect_success URL_SERVERS 'url: gosbx-runtime (POST /v1/archive?mtime=now)' '
	rt_start &&
	touch work/stamp &&
	echo "$E" >"$E.txt" &&
	gosbx --backend=url --url="$(cat rt.url)" exec -f "$E.txt" \
		-f "$E.txt:$DATA/$E.txt" -- true &&
	test_cmp "$E.txt" "work/$DATA/$E.txt" &&
	url_newer work "$E.txt" "$DATA/$E.txt"
'

test_expect_success URL_SERVERS 'url: mtime=now is the only value gosbx-runtime takes' '
	rt_expect 400 POST "/v1/archive?mtime=0" \
		-H "Content-Type: application/x-tar" --data-binary @/dev/null &&
	test_grep "invalid mtime" body
'

test_expect_success URL_SERVERS 'url: an upstream server (/upload, and tar -xmf)' '
	upstream_start &&
	echo "$E" >"$E.txt" &&
	touch upwork/stamp &&
	gosbx --backend=url --url="$(cat up.url)" exec -f "$E.txt" -- true &&
	gosbx --backend=url --url="$(cat up.url)" exec \
		-f "$E.txt:$DATA/$E.txt" -- true &&
	test_cmp "$E.txt" "upwork/$DATA/$E.txt" &&
	url_newer upwork "$E.txt" "$DATA/$E.txt"
'

# MCP: the files of run_go_code and the code of sandbox_run_code
cat >mcp-files.json <<EOF
{"files":{"$E.txt":"a","$DATA/x.go":"b","plain.txt":"c"},
 "command":"find $E.txt $DATA/x.go plain.txt $DATA -maxdepth 0 -newer stamp"}
EOF

test_expect_success MCP 'MCP run_go_code: files get the time of the write, UTF-8 names' '
	mcp_client call run_go_code "{\"command\":\"touch stamp\"}" \
		call run_go_code @mcp-files.json -- "$MCP_STDIO" --structured-content >out 2>err &&
	mcp_check out "r[1].ok && r[1].result.isError === false" &&
	printf "$E.txt\n$DATA/x.go\nplain.txt\n$DATA\n" >expect &&
	mcp_get out "r[1].result.structuredContent.stdout" >actual &&
	test_cmp expect actual &&
	wait_no_claims
'

cat >mcp-code.json <<\EOF
{"sandbox":"t2030","namespace":"n","language":"python",
 "code":"import os\nprint(os.stat(__file__).st_mtime_ns > os.stat('stamp').st_mtime_ns)\n"}
EOF

test_expect_success MCP,PYTHON 'MCP sandbox_run_code: the code file gets the time of the write' '
	mcp_client \
		call sandbox_start "{\"sandbox\":\"t2030\",\"namespace\":\"n\"}" \
		call sandbox_run_command "{\"sandbox\":\"t2030\",\"namespace\":\"n\",\"command\":\"touch\",\"args\":[\"stamp\"]}" \
		call sandbox_run_code @mcp-code.json \
		-- "$MCP_STDIO" --tools=sandbox >out 2>err &&
	mcp_check out "r.every((x) => x.ok && !x.result.isError)" &&
	mcp_check out "text(2).includes(\"True\")" &&
	wait_no_claims
'

test_done
