#!/bin/sh
test_description='gosbx cp: files and trees both ways'
. "$(dirname "$0")/test-lib.sh"

# local by default; t2051 (url) and t6233 (kube) run this suite on the
# other backends
. "$TEST_DIRECTORY"/lib-backend.sh

test_have_prereq LOCAL && test_atexit 'gosbx close --all'

sx() {
	gosbx exec --claim=t2050 -- "$@"
}

# the dense file of zeros that must come out sparse; the kube variants
# make it smaller (fake-kube relays port-forwards at about 400 KB/s:
# libmicrohttpd 0.9.75 relays an upgraded TLS connection 4 bytes at a
# time when the connection's memory pool is used up, as it always is)
: "${T2050_ZEROS_BYTES:=50000000}"

test_expect_success 'setup: a kept claim and an odd tree' '
	if ! test_have_prereq URL
	then
		gosbx open -q --name=t2050 >/dev/null
	fi &&
	mkdir -p "src/with space/ünï" src/empty &&
	printf "plain\n" >src/a.txt &&
	printf "odd\n" >"src/with space/ünï/f ile" &&
	printf "#!/bin/sh\necho run\n" >src/run.sh &&
	chmod 755 src/run.sh &&
	chmod 600 src/a.txt &&
	ln -s a.txt src/link &&
	touch -d "2001-02-03 04:05:06 UTC" src/a.txt "src/with space/ünï/f ile"
'

test_expect_success 'a tree into the sandbox: names, modes, mtimes, symlinks' '
	gosbx cp src t2050:/app/dst &&
	sx "cd dst && find . | LC_ALL=C sort" >out &&
	(cd src && find . | LC_ALL=C sort) >expect &&
	test_cmp expect out &&
	sx "stat -c \"%a %Y %n\" dst/a.txt dst/run.sh \"dst/with space/ünï/f ile\"" >out &&
	printf "600 981173106 dst/a.txt\n755 %s dst/run.sh\n644 981173106 dst/with space/ünï/f ile\n" \
		"$(stat -c %Y src/run.sh)" >expect &&
	test_cmp expect out &&
	sx "readlink dst/link; cat \"dst/with space/ünï/f ile\"" >out &&
	printf "a.txt\nodd\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a file into a directory that exists, and under a new name' '
	sx "mkdir -p there" &&
	gosbx cp src/a.txt t2050:there &&
	gosbx cp src/a.txt t2050:/app/there/renamed.txt &&
	gosbx cp src/a.txt t2050:/app/new/dir/ &&
	sx "cat there/a.txt there/renamed.txt new/dir/a.txt" >out &&
	printf "plain\nplain\nplain\n" >expect &&
	test_cmp expect out &&
	sx "ls -A" >out &&
	test_grep ! gosbx-cp out
'

test_expect_success 'a tree out of the sandbox: names, modes, mtimes, symlinks' '
	gosbx cp t2050:/app/dst back &&
	(cd src && find . | LC_ALL=C sort) >expect &&
	(cd back && find . | LC_ALL=C sort) >out &&
	test_cmp expect out &&
	stat -c "%a %Y" back/a.txt "back/with space/ünï/f ile" back/run.sh >out &&
	printf "600 981173106\n644 981173106\n755 %s\n" \
		"$(stat -c %Y src/run.sh)" >expect &&
	test_cmp expect out &&
	test "$(readlink back/link)" = a.txt &&
	ls -A >out &&
	test_grep ! gosbx-cp out
'

test_expect_success 'a file out, into a directory and under a new name' '
	mkdir -p outdir &&
	gosbx cp "t2050:dst/with space/ünï/f ile" outdir &&
	gosbx cp t2050:/app/dst/run.sh ./copied.sh &&
	echo odd >expect &&
	test_cmp expect "outdir/f ile" &&
	test_cmp src/run.sh copied.sh &&
	test -x copied.sh
'

test_expect_success 'a sandbox symlink that leaves the copy is refused, nothing written' '
	sx "mkdir -p evil && ln -sf /etc/passwd evil/p && echo x >evil/z" &&
	test_expect_code_err 125 gosbx cp t2050:/app/evil evil-out &&
	test_grep "refusing entry" err &&
	! test -e evil-out &&
	ls -A >out &&
	test_grep ! gosbx-cp out
'

# a sandbox decides what a copy out writes here: holes stay holes
test_expect_success 'a 1 TiB file with holes comes out sparse' '
	sx "rm -f holes && truncate -s 1T holes && printf hello-2050 | dd of=holes bs=1 seek=5000000 conv=notrunc 2>/dev/null" &&
	gosbx cp --max-size=100m t2050:/app/holes holes &&
	test "$(stat -c %s holes)" = 1099511627776 &&
	test "$(du -k holes | cut -f1)" -lt 1024 &&
	test "$(tail -c +5000001 holes | head -c 10)" = hello-2050 &&
	rm holes &&
	sx "rm holes"
'

test_expect_success 'runs of zeros come out as holes' '
	sx "head -c $T2050_ZEROS_BYTES /dev/zero >zeros && echo end >>zeros" &&
	gosbx cp t2050:/app/zeros zeros &&
	test "$(stat -c %s zeros)" = $((T2050_ZEROS_BYTES + 4)) &&
	test "$(du -k zeros | cut -f1)" -lt 1024 &&
	test "$(tail -c 4 zeros)" = end &&
	rm zeros &&
	sx "rm zeros"
'

test_expect_success '--max-size bounds a copy out; nothing is written past it' '
	sx "head -c 3000000 /dev/urandom >dense3m" &&
	test_expect_code_err 125 gosbx cp --max-size=1m t2050:/app/dense3m d3 &&
	test_grep "is larger than 1048576 bytes" err &&
	test_grep "max-size=<size> allows a larger copy" err &&
	! test -e d3 &&
	ls -A >out &&
	test_grep ! gosbx-cp out &&
	gosbx cp --max-size=10m t2050:/app/dense3m d3 &&
	test "$(stat -c %s d3)" = 3000000
'

test_expect_success 'paths outside /app, both or neither remote, missing sources' '
	test_expect_code_err 129 gosbx cp t2050:/etc/passwd x &&
	test_grep "outside /app" err &&
	test_expect_code_err 129 gosbx cp t2050:../x x &&
	test_expect_code_err 129 gosbx cp src/a.txt ./b &&
	test_grep "neither path" err &&
	test_expect_code_err 129 gosbx cp t2050:a t2050:b &&
	test_expect_code_err 125 gosbx cp t2050:no-such-file x &&
	test_grep "no-such-file" err &&
	# missing, not too large: no hint about --max-size
	test_grep ! "max-size" err &&
	test_expect_code_err 125 gosbx cp ./no-such t2050:x &&
	test_grep "no-such" err
'

test_done
