#!/bin/sh
test_description='what each backend can do, asked through its ops

The url backend has no claim to delete: close says so instead of
"closed claim"; --all needs a backend that lists claims. --tools names
toolsets from one table.'
. "$(dirname "$0")"/test-lib.sh

# nothing listens there: close must not need the runtime
URL=http://127.0.0.1:9

test_expect_success 'url: close says there is nothing to close' '
	gosbx --backend=url --url=$URL close x 2>err &&
	test_grep "nothing to close on the url backend" err &&
	! grep "closed claim" err
'

test_expect_success 'url: close --all is a usage error naming the backend' '
	test_expect_code_err 129 gosbx --backend=url --url=$URL close --all &&
	test_grep "not .url." err
'

test_expect_success 'local: closing an unknown claim fails' '
	test_expect_code_err 125 gosbx close no-such-claim &&
	test_grep "no such claim .no-such-claim." err
'

test_expect_success 'an unknown toolset is a usage error naming the known ones' '
	test_expect_code_err 129 gosbx mcp --tools=go,nope </dev/null &&
	test_grep "unknown toolset .nope. in --tools (expected go, sandbox, jobs)" err
'

test_expect_success 'an unknown backend names the known ones' '
	test_expect_code_err 129 gosbx --backend=nope claims &&
	test_grep "unknown backend .nope. (expected local, kube or url)" err
'

test_done
