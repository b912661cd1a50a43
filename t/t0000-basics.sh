#!/bin/sh
test_description='gosbx basics: version, help, dispatch, usage errors'
. "$(dirname "$0")/test-lib.sh"

test_expect_success '--version prints the version' '
	gosbx --version >out &&
	grep "^gosbx version [0-9][0-9.]*" out
'

test_expect_success '-h prints the global usage and exits 0' '
	gosbx -h >out &&
	grep "^usage: gosbx" out &&
	grep -e "--backend" out
'

test_expect_success 'no command lists the commands' '
	gosbx >out &&
	sed -n "/^commands:/,/^\$/p" out | awk "NR > 1 && NF { print \$1 }" \
		>commands &&
	for c in open close claims doctor help; do
		grep -x "$c" commands || return 1
	done
'

test_expect_success 'the command list is alphabetical' '
	grep -v -x help commands >listed &&
	sort listed >sorted &&
	test_cmp sorted listed
'

test_expect_success '<cmd> -h exits 0 with its usage for every command' '
	for c in $(cat listed); do
		gosbx $c -h >out 2>err || return 1
		grep "^usage: gosbx $c" out || return 1
		test_line_count = 0 err || return 1
	done
'

test_expect_success 'help <cmd> prints the same usage as <cmd> -h' '
	for c in $(cat listed); do
		gosbx help $c >help.out &&
		gosbx $c -h >h.out &&
		test_cmp h.out help.out || return 1
	done
'

test_expect_success 'help without a command lists the commands' '
	gosbx help >out &&
	grep "^commands:" out
'

test_expect_success 'an unknown command exits 129 and says so' '
	expect_code_err 129 gosbx no-such-command &&
	grep "no-such-command" err &&
	grep "not a gosbx command" err
'

test_expect_success 'help of an unknown command exits 129' '
	expect_code_err 129 gosbx help no-such-command &&
	grep "no-such-command" err
'

test_expect_success 'an unknown global option exits 129' '
	expect_code_err 129 gosbx --no-such-option open &&
	grep "no-such-option" err
'

test_expect_success 'an unknown option of a command exits 129' '
	for c in open close claims doctor; do
		expect_code_err 129 gosbx $c --no-such-option &&
		grep "unknown option" err || return 1
	done
'

test_expect_success 'an unknown backend exits 129' '
	expect_code_err 129 gosbx --backend=nowhere claims &&
	grep "nowhere" err &&
	expect_code_err 129 env GOSBX_BACKEND=nowhere gosbx claims &&
	grep "nowhere" err
'

test_expect_success 'stray arguments are usage errors' '
	test_expect_code 129 gosbx open extra &&
	test_expect_code 129 gosbx doctor extra &&
	test_expect_code 129 gosbx claims extra &&
	test_expect_code 129 gosbx claims prune extra &&
	test_expect_code 129 gosbx claims --dry-run &&
	test_expect_code 129 gosbx claims -o yaml &&
	test_expect_code 129 gosbx doctor -o yaml &&
	test_expect_code 129 gosbx close &&
	test_expect_code 129 gosbx close --all some-name &&
	test_expect_code 129 gosbx close --all --disconnect
'

test_expect_success 'a write error on stdout is not silent' '
	test -w /dev/full || return 0
	expect_code_err 125 gosbx claims >/dev/full &&
	grep "write" err
'

test_done
