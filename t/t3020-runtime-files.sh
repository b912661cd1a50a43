#!/bin/sh
test_description='gosbx-runtime: download, list, exists, PUT and DELETE files'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

test_expect_success 'setup' '
	rt_start &&
	python3 -c "import sys; sys.stdout.buffer.write(bytes(range(256)) * 64)" \
		>work/all-bytes.bin &&
	printf "0123456789" >work/digits.txt &&
	mkdir -p work/dir/sub &&
	printf "hello" >"work/dir/a b.txt" &&
	printf "%%41" >"work/%41" &&
	printf "A" >work/A
'

test_expect_success 'download: the bytes, application/octet-stream' '
	rt_expect 200 GET /download/all-bytes.bin &&
	test_cmp work/all-bytes.bin body &&
	rt_header Content-Type >ct &&
	echo application/octet-stream >expect &&
	test_cmp expect ct
'

test_expect_success 'download: a percent-encoded nested path' '
	rt_expect 200 GET /download/dir/a%20b.txt &&
	printf hello >expect &&
	test_cmp expect body
'

test_expect_success 'download: leading slashes are stripped' '
	printf 0123456789 >expect &&
	rt_expect 200 GET /download//digits.txt &&
	test_cmp expect body &&
	rt_expect 200 GET /download///dir//a%20b.txt &&
	printf hello >expect &&
	test_cmp expect body
'

test_expect_success 'download: the path is percent-decoded exactly once' '
	rt_expect 200 GET /download/%2541 &&
	printf "%%41" >expect &&
	test_cmp expect body
'

test_expect_success 'download: Range gives 206 with Content-Range' '
	rt_expect 206 GET /download/digits.txt -H "Range: bytes=2-5" &&
	printf 2345 >expect &&
	test_cmp expect body &&
	rt_header Content-Range >cr &&
	echo "bytes 2-5/10" >expect &&
	test_cmp expect cr
'

test_expect_success 'download: an open-ended Range' '
	rt_expect 206 GET /download/digits.txt -H "Range: bytes=7-" &&
	printf 789 >expect &&
	test_cmp expect body
'

test_expect_success 'download: a missing file is 404 file not found' '
	rt_expect_error 404 "file not found" GET /download/nope.txt &&
	rt_expect_error 404 "file not found" GET /download/dir/nope/x
'

test_expect_success 'download: a directory is 400 path is a directory' '
	rt_expect_error 400 "path is a directory" GET /download/dir
'

test_expect_success 'download: an empty file' '
	: >work/empty &&
	rt_expect 200 GET /download/empty &&
	test_must_fail test -s body
'

cat >check-list.py <<\EOF
import json, os, sys
body, d = sys.argv[1], sys.argv[2]
j = json.load(open(body))
assert isinstance(j, list), j
names = [e["name"] for e in j]
want = sorted(os.listdir(d))
assert names == want, (names, want)
for e in j:
    assert sorted(e) == ["mod_time", "name", "size", "type"], e
    p = os.path.join(d, e["name"])
    st = os.lstat(p)
    assert e["type"] == ("directory" if os.path.isdir(p) else "file"), e
    if e["type"] == "file":
        assert e["size"] == st.st_size, (e, st.st_size)
    assert isinstance(e["size"], int), e
    assert isinstance(e["mod_time"], (int, float)), e
    assert abs(e["mod_time"] - st.st_mtime) < 1.0, (e, st.st_mtime)
EOF

test_expect_success 'list: the workdir, sorted by name, types and sizes' '
	mkdir work/list && printf 1 >work/list/b && printf 22 >work/list/C &&
	printf 333 >work/list/a.txt && mkdir work/list/a work/list/Z &&
	touch -d @1600000000 work/list/b &&
	rt_expect 200 GET /list/list &&
	python3 check-list.py body work/list
'

test_expect_success 'list: names in byte order, mod_time as epoch seconds' '
	python3 -c "
import json, sys
j = json.load(open(\"body\"))
assert [e[\"name\"] for e in j] == [\"C\", \"Z\", \"a\", \"a.txt\", \"b\"], j
b = [e for e in j if e[\"name\"] == \"b\"][0]
assert abs(b[\"mod_time\"] - 1600000000) < 1, b
assert b[\"type\"] == \"file\" and b[\"size\"] == 1, b
z = [e for e in j if e[\"name\"] == \"Z\"][0]
assert z[\"type\"] == \"directory\", z
"
'

test_expect_success 'list: /list/ is the workdir' '
	rt_expect 200 GET /list/ &&
	python3 check-list.py body work &&
	rt_header Content-Type >ct &&
	test_grep "^application/json" ct
'

test_expect_success 'list: an empty directory is []' '
	mkdir work/emptydir &&
	rt_expect 200 GET /list/emptydir &&
	json_is body . "[]"
'

test_expect_success 'list: a missing directory is 404, a file is 400' '
	rt_expect_error 404 "directory not found" GET /list/nope &&
	rt_expect_error 400 "path is not a directory" GET /list/digits.txt
'

test_expect_success 'exists: a file, a directory, a missing path' '
	rt_expect 200 GET /exists/digits.txt &&
	json_is body exists true && json_is body path /digits.txt &&
	rt_expect 200 GET /exists/dir/sub &&
	json_is body exists true && json_is body path /dir/sub &&
	rt_expect 200 GET /exists/nope/deeper &&
	json_is body exists false && json_is body path /nope/deeper
'

test_expect_success 'exists: the path is resolved lexically' '
	rt_expect 200 GET /exists/dir/../digits.txt &&
	json_is body exists true && json_is body path /digits.txt &&
	rt_expect 200 GET /exists/a/../b &&
	json_is body exists false && json_is body path /b &&
	rt_expect 200 GET /exists/dir/./sub/ &&
	json_is body path /dir/sub
'

test_expect_success 'exists: the workdir itself is /' '
	rt_expect 200 GET /exists/ &&
	json_is body exists true && json_is body path / &&
	rt_expect 200 GET /exists/. &&
	json_is body path /
'

test_expect_success 'exists: a symlink inside the workdir resolves to its target' '
	ln -s dir/sub work/link-to-sub &&
	rt_expect 200 GET /exists/link-to-sub &&
	json_is body exists true && json_is body path /dir/sub
'

test_expect_success 'exists: a percent-encoded name' '
	rt_expect 200 GET /exists/dir/a%20b.txt &&
	json_is body exists true && json_is body path "/dir/a b.txt"
'

test_expect_success 'PUT /v1/files: creates parents, answers path and size' '
	printf "put body\n" >expect &&
	rt_expect 200 PUT /v1/files/new/deep/put.txt --data-binary @expect &&
	json_is body path /new/deep/put.txt &&
	json_is body size 9 &&
	test_cmp expect work/new/deep/put.txt
'

test_expect_success 'PUT /v1/files: binary bytes intact, overwrite' '
	rt_expect 200 PUT /v1/files/new/deep/put.txt \
		--data-binary @work/all-bytes.bin &&
	json_is body size 16384 &&
	test_cmp work/all-bytes.bin work/new/deep/put.txt
'

test_expect_success 'PUT /v1/files: an empty body makes an empty file' '
	rt_expect 200 PUT /v1/files/zero.txt --data-binary "" &&
	json_is body size 0 &&
	test -f work/zero.txt && test_must_fail test -s work/zero.txt
'

test_expect_success 'PUT /v1/files: a percent-encoded name' '
	rt_expect 200 PUT "/v1/files/sp%20ace/%C3%A9.txt" --data-binary x &&
	json_is body path "/sp ace/$(printf "\303\251").txt" &&
	test -f "work/sp ace/$(printf "\303\251").txt"
'

test_expect_success 'PUT /v1/files: no temp file left behind' '
	rt_workdir_is %41 A all-bytes.bin digits.txt dir empty emptydir \
		link-to-sub list new "sp ace" zero.txt &&
	(cd work/new/deep && ls -A) >actual &&
	echo put.txt >expect &&
	test_cmp expect actual
'

test_expect_success 'PUT /v1/files onto a directory fails, the tree intact' '
	rt_req PUT /v1/files/dir --data-binary x &&
	test "$(cat status)" -ge 400 && test "$(cat status)" -lt 500 &&
	test -d work/dir && test -f "work/dir/a b.txt"
'

test_expect_success 'DELETE /v1/files: a file' '
	printf x >work/del.txt &&
	rt_expect 200 DELETE /v1/files/del.txt &&
	json_is body path /del.txt &&
	json_is body deleted true &&
	! test -e work/del.txt
'

test_expect_success 'DELETE /v1/files: a directory tree' '
	mkdir -p work/tree/a/b && printf x >work/tree/a/b/c &&
	rt_expect 200 DELETE /v1/files/tree &&
	json_is body path /tree &&
	! test -e work/tree
'

test_expect_success 'DELETE /v1/files: a symlink, not its target' '
	printf keep >work/target.txt &&
	ln -s target.txt work/link.txt &&
	mkdir work/tdir && printf keep >work/tdir/f &&
	ln -s tdir work/link-dir &&
	rt_expect 200 DELETE /v1/files/link.txt &&
	! test -h work/link.txt &&
	test -f work/target.txt &&
	rt_expect 200 DELETE /v1/files/link-dir &&
	! test -h work/link-dir &&
	test -f work/tdir/f
'

test_expect_success 'DELETE /v1/files: missing is 404 file not found' '
	rt_expect_error 404 "file not found" DELETE /v1/files/nope
'

test_expect_success 'DELETE /v1/files: never the workdir itself' '
	rt_expect_error 400 "refusing to delete the workdir" DELETE /v1/files/ &&
	rt_expect_error 400 "refusing to delete the workdir" DELETE /v1/files/. &&
	rt_expect_error 400 "refusing to delete the workdir" DELETE /v1/files/dir/.. &&
	test -f work/digits.txt
'

test_expect_success 'a file written by PUT is seen by /execute and download' '
	rt_expect 200 PUT /v1/files/script.sh --data-binary "echo from-put" &&
	rt_exec "{\"command\":\"sh script.sh\"}" &&
	json_is body stdout from-put &&
	rt_expect 200 GET /download/script.sh &&
	printf "echo from-put" >expect && test_cmp expect body
'

test_expect_success 'the servers stop cleanly, no sanitizer report' '
	rt_stop_check
'

test_done
