#!/bin/sh
test_description='gosbx push: files and trees into /app as one tar stream'
. "$(dirname "$0")/test-lib.sh"

# local by default; t6222 runs this suite with GOSBX_TEST_BACKEND=kube
. "$TEST_DIRECTORY"/lib-backend.sh

test_atexit 'gosbx close --all'

test_expect_success 'setup: a claim, a file and a tree' '
	gosbx open -q --name=t2100 >/dev/null &&
	echo "package main" >main.go &&
	mkdir -p proj/a/b proj/empty &&
	echo top >proj/top.txt &&
	echo deep >proj/a/b/deep.txt &&
	printf "#!/bin/sh\necho run\n" >proj/run.sh &&
	chmod 755 proj/run.sh &&
	ln -s a/b/deep.txt proj/link
'

test_expect_success 'push of a file and a tree, silent on success' '
	gosbx push --claim=t2100 main.go proj >out 2>err &&
	test ! -s out &&
	test ! -s err
'

test_expect_success 'exec sees the files, the nested dirs and the symlink' '
	gosbx exec --claim=t2100 -- \
		"cd proj && find . | LC_ALL=C sort" >out &&
	cat >expect <<-\EOF &&
	.
	./a
	./a/b
	./a/b/deep.txt
	./empty
	./link
	./run.sh
	./top.txt
	EOF
	test_cmp expect out &&
	gosbx exec --claim=t2100 -- \
		"cat main.go proj/link; readlink proj/link; ./proj/run.sh" >out &&
	printf "package main\ndeep\na/b/deep.txt\nrun\n" >expect &&
	test_cmp expect out &&
	gosbx exec --claim=t2100 -- "ls -R proj" >out &&
	test_grep "deep.txt" out
'

test_expect_success 'push --to=sub puts the paths under /app/sub' '
	gosbx push --claim=t2100 --to=sub/dir main.go proj &&
	gosbx exec --claim=t2100 -- \
		"cat sub/dir/main.go sub/dir/proj/a/b/deep.txt" >out &&
	printf "package main\ndeep\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a second push replaces changed files' '
	echo changed >proj/top.txt &&
	gosbx push --claim=t2100 proj &&
	gosbx exec --claim=t2100 -- cat proj/top.txt >out &&
	echo changed >expect &&
	test_cmp expect out
'

test_expect_success 'GOSBX_CLAIM names the claim; -v says what happened' '
	echo v >v.txt &&
	GOSBX_CLAIM=t2100 gosbx push -v v.txt 2>err &&
	test_grep "pushed .v.txt. into claim .t2100." err &&
	gosbx exec --claim=t2100 -- cat v.txt >out &&
	echo v >expect &&
	test_cmp expect out
'

test_expect_success '--to that escapes /app is a usage error' '
	for to in ../x /etc a/../../x
	do
		expect_code 129 gosbx push --claim=t2100 --to=$to main.go \
			2>err &&
		test_grep "under /app" err || return 1
	done &&
	gosbx exec --claim=t2100 -- "test ! -e ../x && test ! -e /etc/main.go"
'

test_expect_success 'push without a claim or without paths is a usage error' '
	expect_code 129 gosbx push main.go 2>err &&
	test_grep "claim" err &&
	expect_code 129 gosbx push --claim=t2100 2>err &&
	test_grep "nothing to push" err
'

test_expect_success 'a missing path or an unknown claim fails with 125' '
	expect_code 125 gosbx push --claim=t2100 no-such-file 2>err &&
	test_grep "no-such-file" err &&
	expect_code 125 gosbx push --claim=no-such-claim main.go 2>err &&
	test_grep -E "no such claim|no claim .no-such-claim." err
'

test_done
