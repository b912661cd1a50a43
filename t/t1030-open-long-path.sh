#!/bin/sh
test_description='claims deep in the file system: the socket path is too long for sun_path'
. ./test-lib.sh

if ! bwrap --unshare-user --ro-bind / / true 2>/dev/null; then
	test_skip_all "bwrap cannot create a sandbox here"
fi

# a state directory whose runtime.sock path is far past 107 bytes
deep="$TRASH_DIRECTORY/$(printf 'd%.0s' $(seq 1 60))/$(printf 'e%.0s' $(seq 1 60))"
XDG_STATE_HOME=$deep
export XDG_STATE_HOME
test_atexit 'gosbx close --all'

test_expect_success 'open, exec and close work with a long claim path' '
	name=a-rather-long-claim-name-for-paths &&
	sock="$deep/gosbx/claims/$name/run/runtime.sock" &&
	test ${#sock} -gt 108 &&
	gosbx open -q --name=$name >out &&
	echo $name >expect &&
	test_cmp expect out &&
	test -S "$sock" &&
	gosbx exec --claim=$name -- "echo deep" >out &&
	echo deep >expect &&
	test_cmp expect out &&
	gosbx close $name &&
	! test -e "$deep/gosbx/claims/$name"
'

test_done
