#!/bin/sh
test_description='gosbx exec -d, jobs, logs --job, kill, wait, attach'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test_have_prereq LOCAL && test_atexit 'gosbx close --all'

test_expect_success 'setup' '
	if ! test_have_prereq URL
	then
		gosbx open -q --name=t2110 >/dev/null
	fi
'

test_expect_success 'exec -d without --claim is a usage error' '
	test_expect_code_err 129 gosbx exec -d -- true &&
	test_grep "needs --claim" err
'

test_expect_success 'exec -d prints the job; the job runs on after gosbx exits' '
	gosbx exec -d --claim=t2110 -- "echo start; read line; echo got \$line; exit 7" >job &&
	grep -q "^t2110/j[0-9a-f]*\$" job &&
	gosbx jobs --claim=t2110 >list &&
	head -n 1 list | grep -q "^ID *STATE *START *EXIT/REASON *CPU *PEAK MEM *COMMAND" &&
	grep "^$(cat job) *running" list &&
	gosbx jobs --claim=t2110 -o json >list.json &&
	grep -q "\"state\":\"running\"" list.json
'

test_expect_success 'logs --job replays the output from the start' '
	test_retry 300 0.1 eval "gosbx logs --job=$(cat job) >out && grep -q start out" &&
	echo start >expect &&
	test_cmp expect out
'

test_expect_success 'attach sends stdin; logs -f and wait give the status' '
	echo hello | gosbx attach $(cat job) >attach.out;
	test $? = 7 &&
	test_grep "got hello" attach.out &&
	test_expect_code 7 gosbx logs -f --job=$(cat job) >out &&
	printf "start\ngot hello\n" >expect &&
	test_cmp expect out &&
	test_expect_code 7 gosbx wait $(cat job) &&
	gosbx logs --job=$(cat job) --since=6 >out &&
	echo "got hello" >expect &&
	test_cmp expect out
'

test_expect_success 'a bare id with --claim; kill -s gives 128+N' '
	gosbx exec -d --claim=t2110 -- "sleep 300" >job2 &&
	id=$(sed "s|.*/||" job2) &&
	gosbx kill --claim=t2110 -s USR1 $id &&
	test_expect_code 138 gosbx wait --claim=t2110 $id &&
	gosbx jobs --claim=t2110 >list &&
	grep "^t2110/$id *exited .* signal 10 " list
'

test_expect_success 'a job survives a SIGKILLed logs -f' '
	gosbx exec -d --claim=t2110 -- "echo a; read x; echo b\$x" >job3 &&
	{ gosbx logs -f --job=$(cat job3) >follow & } &&
	pid=$! &&
	test_retry 300 0.1 grep -q "^a" follow &&
	kill -KILL $pid &&
	{ wait $pid; true; } &&
	gosbx jobs --claim=t2110 >list &&
	grep "^$(cat job3) *running" list &&
	printf "c\n" | gosbx attach $(cat job3) >out &&
	printf "a\nbc\n" >expect &&
	test_cmp expect out
'

test_expect_success 'output over the bound is trimmed with a marker' '
	gosbx exec -d --claim=t2110 -- "head -c 70000000 /dev/zero | tr \\\\0 x; echo; echo end" >job4 &&
	gosbx wait $(cat job4) &&
	gosbx logs --job=$(cat job4) >out 2>err &&
	test_grep "bytes of output trimmed" err &&
	tail -n 1 out >last &&
	echo end >expect &&
	test_cmp expect last &&
	test $(wc -c <out) -le 67108864
'

test_expect_success 'unknown and malformed jobs: clear errors' '
	test_expect_code_err 125 gosbx wait t2110/jdeadbeef0000 &&
	test_grep "no job .jdeadbeef0000." err &&
	test_expect_code_err 125 gosbx kill t2110/jdeadbeef0000 &&
	test_grep "no job" err &&
	test_expect_code_err 129 gosbx wait jdeadbeef0000 &&
	test_grep "name its claim" err &&
	test_expect_code_err 129 gosbx kill "t2110/j/x" &&
	test_expect_code_err 129 gosbx logs --job=t2110/NOPE &&
	test_expect_code_err 125 gosbx kill -s NOPE $(cat job4) &&
	test_grep "signal" err
'

test_done
