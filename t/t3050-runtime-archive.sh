#!/bin/sh
test_description='gosbx-runtime: POST and GET /v1/archive

Hostile archives are refused as a whole: 400, nothing extracted (not even
the harmless entries before the bad one), the outside untouched.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

# an absolute path that a broken server would write; removed at exit
ABS_PROBE=/etc/gosbx-t3050-absolute-probe
test_atexit "rm -f $ABS_PROBE"

# post_tar <tar file> [<dir>]: POST it to /v1/archive?dir=<dir>
post_tar() {
	rt_req POST "/v1/archive?dir=${2:-.}" --data-binary "@$1" \
		-H "Content-Type: application/x-tar"
}

# The last answer is a refusal naming the entry, nothing changed.
refused() {
	test "$(cat status)" = 400 &&
	json_get body detail >detail &&
	test_grep "^refusing entry '$1': ." detail &&
	rt_tree work >work.after &&
	test_cmp work.before work.after &&
	rt_tree outside >outside.after &&
	test_cmp outside.before outside.after &&
	! test -e $ABS_PROBE &&
	rt_alive
}

test_expect_success 'setup' '
	mkdir -p outside work/existing &&
	printf "outside secret" >outside/secret &&
	printf "kept" >work/existing/kept.txt &&
	rt_start
'

snapshot() {
	rt_tree work >work.before &&
	rt_tree outside >outside.before
}

test_expect_success 'extract a tree: files and bytes counted' '
	rt_mktar tree.tar <<-\EOF &&
	dir proj
	dir proj/sub
	file proj/a.txt alpha
	file proj/sub/b.txt bravo!
	file top.txt t
	EOF
	post_tar tree.tar &&
	test "$(cat status)" = 200 &&
	json_is body files 3 &&
	json_is body bytes 12 &&
	printf alpha >expect && test_cmp expect work/proj/a.txt &&
	printf "bravo!" >expect && test_cmp expect work/proj/sub/b.txt &&
	printf t >expect && test_cmp expect work/top.txt &&
	printf kept >expect && test_cmp expect work/existing/kept.txt
'

test_expect_success 'extract under ?dir=, creating it' '
	post_tar tree.tar into/here &&
	test "$(cat status)" = 200 &&
	printf alpha >expect && test_cmp expect work/into/here/proj/a.txt
'

test_expect_success 'extraction overwrites existing files' '
	rt_mktar over.tar <<-\EOF &&
	file top.txt new
	EOF
	post_tar over.tar &&
	test "$(cat status)" = 200 &&
	printf new >expect && test_cmp expect work/top.txt
'

test_expect_success 'file modes survive' '
	python3 -c "
import io, tarfile
with tarfile.open(\"mode.tar\", \"w\") as t:
    ti = tarfile.TarInfo(\"run.sh\"); d = b\"echo ran\\n\"
    ti.size = len(d); ti.mode = 0o755
    t.addfile(ti, io.BytesIO(d))
" &&
	post_tar mode.tar &&
	test "$(cat status)" = 200 &&
	test -x work/run.sh
'

for z in gz bz2 xz
do
	test_expect_success "a $z-compressed tar is detected" "
		rt_mktar --$z c.tar.$z <<-\EOF &&
		file comp-$z.txt packed-$z
		EOF
		post_tar c.tar.$z &&
		test \"\$(cat status)\" = 200 &&
		printf packed-$z >expect && test_cmp expect work/comp-$z.txt
	"
done

command -v zstd >/dev/null 2>&1 && test_set_prereq ZSTD
test_expect_success ZSTD 'a zstd-compressed tar is detected' '
	rt_mktar plain.tar <<-\EOF &&
	file comp-zst.txt packed-zst
	EOF
	zstd -q -f plain.tar -o c.tar.zst &&
	post_tar c.tar.zst &&
	test "$(cat status)" = 200 &&
	printf packed-zst >expect && test_cmp expect work/comp-zst.txt
'

test_expect_success 'a symlink that stays inside is extracted' '
	rt_mktar inlink.tar <<-\EOF &&
	file target.txt T
	symlink proj/to-target ../target.txt
	EOF
	post_tar inlink.tar &&
	test "$(cat status)" = 200 &&
	test -h work/proj/to-target &&
	printf T >expect && test_cmp expect work/proj/to-target
'

test_expect_success 'GET /v1/archive of a directory: names relative to the workdir' '
	rt_expect 200 GET "/v1/archive?path=proj" &&
	rt_header Content-Type >ct &&
	echo application/x-tar >expect && test_cmp expect ct &&
	mv body proj.tar &&
	rt_tar_list proj.tar | grep -v "^symlink" | LC_ALL=C sort >actual &&
	cat >expect <<-\EOF &&
	dir proj 0
	dir proj/sub 0
	file proj/a.txt 5
	file proj/sub/b.txt 6
	EOF
	test_cmp expect actual &&
	mkdir x && tar -xf proj.tar -C x &&
	test_cmp work/proj/a.txt x/proj/a.txt &&
	test_cmp work/proj/sub/b.txt x/proj/sub/b.txt
'

test_expect_success 'GET /v1/archive of one file' '
	rt_expect 200 GET "/v1/archive?path=proj/sub/b.txt" &&
	mv body one.tar &&
	rt_tar_list one.tar >actual &&
	echo "file proj/sub/b.txt 6" >expect &&
	test_cmp expect actual
'

test_expect_success 'round trip: GET a tree, POST it elsewhere, same bytes' '
	head -c 200000 /dev/urandom >work/proj/sub/rand.bin &&
	rt_expect 200 GET "/v1/archive?path=proj" &&
	mv body rt.tar &&
	post_tar rt.tar copy &&
	test "$(cat status)" = 200 &&
	test_cmp work/proj/sub/rand.bin work/copy/proj/sub/rand.bin &&
	test_cmp work/proj/a.txt work/copy/proj/a.txt
'

test_expect_success 'GET /v1/archive of a missing path is 404' '
	rt_expect 404 GET "/v1/archive?path=nope" &&
	json_type body detail >t && echo str >expect && test_cmp expect t
'

test_expect_success 'GET /v1/archive outside the workdir is 403' '
	rt_expect 403 GET "/v1/archive?path=../outside" &&
	! grep -q secret body
'

# The seed client on an upstream server: one tar uploaded as
# .goruntime-upload.tar, extracted by tar through /execute.
test_expect_success 'seed client path: tar through /upload and /execute' '
	rt_mktar seed.tar <<-\EOF &&
	dir cmd/
	dir cmd/app/
	file cmd/app/main.go package main
	file go.mod module seed
	EOF
	rt_expect 200 POST /upload -F "file=@seed.tar;filename=.goruntime-upload.tar" &&
	rt_exec "{\"command\":\"tar -xf .goruntime-upload.tar && rm -f .goruntime-upload.tar\"}" &&
	json_is body exit_code 0 &&
	printf "package main" >expect && test_cmp expect work/cmd/app/main.go &&
	! test -e work/.goruntime-upload.tar
'

test_expect_success 'extended client path: the same tar in one call' '
	rm -rf work/cmd work/go.mod &&
	post_tar seed.tar &&
	test "$(cat status)" = 200 &&
	json_is body files 2 &&
	printf "package main" >expect && test_cmp expect work/cmd/app/main.go &&
	printf "module seed" >expect && test_cmp expect work/go.mod
'

test_expect_success 'setup: a symlink in the workdir that points out' '
	ln -s ../outside work/out-link &&
	snapshot
'

hostile() {
	title=$1 name=$2
	test_expect_success "refuse $title" "
		snapshot &&
		rt_mktar evil.tar &&
		post_tar evil.tar &&
		refused '$name'
	"
}

# Each spec starts with a harmless file that must not be extracted.
hostile 'a .. path' '../escape.txt' <<-\EOF
file harmless-1.txt ok
file ../escape.txt pwned
EOF

hostile 'a .. inside the path' 'a/../../escape.txt' <<-\EOF
file harmless-2.txt ok
file a/../../escape.txt pwned
EOF

hostile 'an absolute path' "$ABS_PROBE" <<EOF
file harmless-3.txt ok
file $ABS_PROBE pwned
EOF

hostile 'a symlink pointing out, then a file through it' 'lnk' <<-\EOF
file harmless-4.txt ok
symlink lnk ../outside
file lnk/evil.txt pwned
EOF

hostile 'an absolute symlink pointing out' 'etc-lnk' <<-\EOF
file harmless-5.txt ok
symlink etc-lnk /etc
EOF

hostile 'a file through a symlink that points inside' 'ilnk/f.txt' <<-\EOF
file harmless-6.txt ok
dir realdir
symlink ilnk realdir
file ilnk/f.txt through
EOF

hostile 'a file through a symlink already in the workdir' 'out-link/evil.txt' <<-\EOF
file harmless-7.txt ok
file out-link/evil.txt pwned
EOF

hostile 'a hard link to /etc/passwd' 'hl' <<-\EOF
file harmless-8.txt ok
hardlink hl /etc/passwd
EOF

hostile 'a hard link out of the workdir' 'hl2' <<-\EOF
file harmless-9.txt ok
hardlink hl2 ../outside/secret
EOF

hostile 'a character device' 'null-dev' <<-\EOF
file harmless-10.txt ok
chr null-dev
EOF

hostile 'a block device' 'blk-dev' <<-\EOF
file harmless-11.txt ok
blk blk-dev
EOF

hostile 'a fifo' 'pipe' <<-\EOF
file harmless-12.txt ok
fifo pipe
EOF

test_expect_success 'a corrupt archive is 400 invalid archive' '
	snapshot &&
	head -c 5000 /dev/urandom >junk &&
	post_tar junk &&
	test "$(cat status)" = 400 &&
	json_get body detail >detail &&
	test_grep "^invalid archive: " detail &&
	rt_tree work >work.after && test_cmp work.before work.after &&
	rt_alive
'

test_expect_success 'a truncated archive is refused before anything is written' '
	snapshot &&
	rt_mktar whole.tar <<-\EOF &&
	file trunc-1.txt first
	file trunc-2.txt second
	EOF
	head -c 1100 whole.tar >cut.tar &&
	post_tar cut.tar &&
	test "$(cat status)" = 400 &&
	rt_tree work >work.after && test_cmp work.before work.after &&
	rt_alive
'

test_expect_success 'an empty body extracts nothing or is refused' '
	snapshot &&
	: >empty.tar &&
	post_tar empty.tar &&
	case "$(cat status)" in 200 | 400) ;; *) false ;; esac &&
	rt_tree work >work.after && test_cmp work.before work.after
'

test_expect_success '?dir= outside the workdir is refused' '
	snapshot &&
	rt_mktar ok.tar <<-\EOF &&
	file placed.txt x
	EOF
	post_tar ok.tar ../outside &&
	test "$(cat status)" -ge 400 && test "$(cat status)" -lt 500 &&
	post_tar ok.tar out-link &&
	test "$(cat status)" -ge 400 && test "$(cat status)" -lt 500 &&
	rt_tree outside >outside.after && test_cmp outside.before outside.after &&
	rt_tree work >work.after && test_cmp work.before work.after
'

test_expect_success 'a body over 256 MiB is 413' '
	snapshot &&
	{
		head -c 314572800 /dev/zero |
		rt_req POST "/v1/archive?dir=." -T - \
			-H "Content-Type: application/x-tar"
		true
	} &&
	test "$(cat status)" = 413 &&
	rt_tree work >work.after && test_cmp work.before work.after &&
	rt_alive
'

test_expect_success 'the servers stop cleanly, no sanitizer report' '
	rt_stop_check
'

test_done
