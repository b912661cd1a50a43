#!/bin/sh
test_description='gosbx-runtime: POST /upload'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

TOO_LARGE="file too large (limit $RT_UPLOAD_LIMIT bytes)"

# big_upload <filename> <bytes> [curl options]: stream a multipart body
# with <bytes> zero bytes in its file part, never stored on disk.
# With --length the Content-Length is sent, else the body is chunked.
big_upload() {
	_name=$1 _size=$2
	shift 2
	printf -- "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\nContent-Type: application/octet-stream\r\n\r\n" \
		"$RT_BOUNDARY" "$_name" >big.head &&
	printf "\r\n--%s--\r\n" "$RT_BOUNDARY" >big.tail &&
	if test "$1" = --length; then
		shift
		_len=$(($(wc -c <big.head) + _size + $(wc -c <big.tail)))
		set -- -H "Transfer-Encoding:" -H "Content-Length: $_len" "$@"
	fi
	# the server may answer and close before the end: curl then
	# fails to send; the status it read is what counts
	{ cat big.head && head -c "$_size" /dev/zero && cat big.tail; } |
	rt_req POST /upload -T - -H "Content-Type: $RT_MULTIPART" "$@"
	return 0
}

test_expect_success 'setup' '
	rt_start &&
	python3 -c "import sys; sys.stdout.buffer.write(bytes(range(256)) * 1000)" \
		>src.bin
'

test_expect_success 'upstream shape: a file part, answer filename and size' '
	rt_expect 200 POST /upload -F "file=@src.bin" &&
	json_is body filename src.bin &&
	json_is body size 256000 &&
	json_keys body >actual &&
	printf "filename\nsize\n" >expect &&
	test_cmp expect actual &&
	test_cmp src.bin work/src.bin &&
	rt_header Content-Type >ct &&
	test_grep "^application/json" ct
'

test_expect_success 'the base name of the part filename is used' '
	rt_expect 200 POST /upload -F "file=@src.bin;filename=a/b/../c/base.bin" &&
	json_is body filename base.bin &&
	test_cmp src.bin work/base.bin &&
	! test -e work/a && ! test -e work/c
'

test_expect_success 'an absolute or escaping filename lands in the workdir' '
	rt_multipart mp file "../../outside-t3040.bin" src.bin &&
	rt_expect 200 POST /upload -H "Content-Type: $RT_MULTIPART" \
		--data-binary @mp &&
	json_is body filename outside-t3040.bin &&
	test_cmp src.bin work/outside-t3040.bin &&
	! test -e ../outside-t3040.bin && ! test -e outside-t3040.bin &&
	rt_multipart mp file "/tmp/abs-t3040.bin" src.bin &&
	rt_expect 200 POST /upload -H "Content-Type: $RT_MULTIPART" \
		--data-binary @mp &&
	json_is body filename abs-t3040.bin &&
	test -f work/abs-t3040.bin &&
	! test -e /tmp/abs-t3040.bin
'

test_expect_success 'a name with spaces and UTF-8' '
	name="my file $(printf "\303\251").txt" &&
	rt_multipart mp file "$name" src.bin &&
	rt_expect 200 POST /upload -H "Content-Type: $RT_MULTIPART" \
		--data-binary @mp &&
	json_is body filename "$name" &&
	test_cmp src.bin "work/$name"
'

test_expect_success 'an upload overwrites, leaving no temp file' '
	printf "second version" >v2 &&
	rt_expect 200 POST /upload -F "file=@v2;filename=src.bin" &&
	json_is body size 14 &&
	test_cmp v2 work/src.bin &&
	rt_workdir_is src.bin base.bin outside-t3040.bin abs-t3040.bin \
		"my file $(printf "\303\251").txt"
'

test_expect_success 'an empty file' '
	: >empty &&
	rt_expect 200 POST /upload -F "file=@empty" &&
	json_is body size 0 &&
	test -f work/empty && ! test -s work/empty
'

test_expect_success 'other form fields are ignored' '
	rt_expect 200 POST /upload -F "note=hello" -F "file=@v2;filename=other.txt" \
		-F "more=x" &&
	json_is body filename other.txt &&
	test_cmp v2 work/other.txt
'

for bad in "" . ..
do
	test_expect_success "filename '$bad' is 400 invalid filename" "
		rt_multipart mp file '$bad' v2 &&
		rt_expect_error 400 'invalid filename' POST /upload \
			-H \"Content-Type: \$RT_MULTIPART\" --data-binary @mp &&
		rt_alive
	"
done

test_expect_success 'a filename whose base name is .. is refused' '
	rt_multipart mp file "dir/.." v2 &&
	rt_expect_error 400 "invalid filename" POST /upload \
		-H "Content-Type: $RT_MULTIPART" --data-binary @mp
'

test_expect_success 'no file part: 400 missing file part' '
	rt_expect_error 400 "missing file part '"'file'"'" POST /upload \
		-F "note=hello" &&
	rt_expect_error 400 "missing file part '"'file'"'" POST /upload \
		-F "document=@v2" &&
	rt_alive
'

test_expect_success 'a body that is not multipart is 400' '
	rt_expect 400 POST /upload -H "Content-Type: application/json" \
		--data-binary "{\"file\":\"x\"}" &&
	json_type body detail >t && echo str >expect && test_cmp expect t &&
	rt_expect 400 POST /upload --data-binary @v2 &&
	rt_alive
'

test_expect_success 'a truncated multipart body is 400, nothing written' '
	rt_multipart mp file trunc.bin src.bin &&
	head -c 1000 mp >mp.cut &&
	rt_expect 400 POST /upload -H "Content-Type: $RT_MULTIPART" \
		--data-binary @mp.cut &&
	! test -e work/trunc.bin &&
	rt_alive
'

test_expect_success 'upload then download: the same bytes' '
	head -c 3000000 /dev/urandom >rand.bin &&
	rt_expect 200 POST /upload -F "file=@rand.bin" &&
	rt_expect 200 GET /download/rand.bin &&
	test_cmp rand.bin body &&
	rm work/rand.bin
'

# The seed client ships files without "/" one /upload each, then runs
# its command through /execute (spec "How the seed's client ships").
test_expect_success 'seed client path: per-file uploads then /execute' '
	printf "package main\n" >main.go &&
	printf "module x\n" >go.mod &&
	rt_expect 200 POST /upload -F "file=@main.go" &&
	rt_expect 200 POST /upload -F "file=@go.mod" &&
	rt_exec "{\"command\":\"cat go.mod main.go\"}" &&
	printf "module x\npackage main\n" >expect &&
	json_get body stdout >actual &&
	test_cmp expect actual
'

test_expect_success 'exactly the limit (256 MiB, chunked) is accepted' '
	big_upload limit.bin $RT_UPLOAD_LIMIT &&
	test "$(cat status)" = 200 &&
	json_is body size $RT_UPLOAD_LIMIT &&
	test "$(stat -c %s work/limit.bin)" = $RT_UPLOAD_LIMIT &&
	rm work/limit.bin
'

test_expect_success '300 MiB (chunked) is 413 and the old file stays' '
	printf "old bytes" >old &&
	rt_expect 200 POST /upload -F "file=@old;filename=big.bin" &&
	(cd work && ls -A) >listing.before &&
	big_upload big.bin 314572800 &&
	test "$(cat status)" = 413 &&
	json_is body detail "$TOO_LARGE" &&
	test_cmp old work/big.bin
'

test_expect_success '300 MiB with a Content-Length is 413 too' '
	big_upload big.bin 314572800 --length &&
	test "$(cat status)" = 413 &&
	json_is body detail "$TOO_LARGE" &&
	test_cmp old work/big.bin
'

test_expect_success 'after the 413s: no temp file, memory bounded, alive' '
	(cd work && ls -A) >listing.after &&
	test_cmp listing.before listing.after &&
	rt_memory_bounded VmRSS &&
	rt_alive
'

test_expect_success 'the servers stop cleanly, no sanitizer report' '
	rt_stop_check
'

test_done
