#!/bin/sh
test_description='gosbx open: memory limit (reason oom), network on and off'
. "$(dirname "$0")/test-lib.sh"

if command -v bwrap >/dev/null &&
	bwrap --unshare-user --ro-bind / / true 2>/dev/null; then
	test_set_prereq SANDBOX
	test_limits_prereq
fi

test_atexit 'gosbx close --all'

test_expect_success SANDBOX,PYTHON,LIMITS 'open --memory=64m' '
	gosbx open -q --name=small --memory=64m >/dev/null &&
	awk "\$1 == \"memory\" { print \$2 }" \
		"$XDG_STATE_HOME/gosbx/claims/small/meta" >memcg
'

# a user whose sandboxes get no limits: an explicit one fails closed,
# and the claim of the network tests below has none
test_expect_success SANDBOX,PYTHON,NOLIMITS 'open --memory=64m fails closed' '
	test_expect_code_err 125 gosbx open -q --name=small --memory=64m &&
	grep "cannot create sandbox: cgroup memory controller" err &&
	test ! -e "$XDG_STATE_HOME/gosbx/claims/small" &&
	gosbx open -q --name=small >/dev/null
'

test_expect_success SANDBOX,PYTHON,LIMITS 'allocating beyond the limit ends with reason oom (137)' '
	test_expect_code 137 gosbx exec --claim=small --json -- \
		"python3 -c \"b = bytearray(200 << 20); print(len(b))\"" >out.json &&
	python3 -c "import json, sys
r = json.load(open(sys.argv[1]))
assert r[\"reason\"] == \"oom\", r
assert r[\"stdout\"] == \"\", r" out.json
'

test_expect_success SANDBOX,PYTHON,LIMITS 'the claim still works after the OOM kill' '
	gosbx exec --claim=small -- \
		"python3 -c \"b = bytearray(8 << 20); print(len(b))\"" >out &&
	echo 8388608 >expect &&
	test_cmp expect out &&
	gosbx claims >list &&
	grep "^small  *local  *ready " list
'

test_expect_success SANDBOX 'open with no limits (0) runs commands' '
	gosbx open -q --name=unlimited --memory=0 --pids=0 --cpus=0 >/dev/null &&
	gosbx exec --claim=unlimited -- "echo ok" >out &&
	echo ok >expect &&
	test_cmp expect out &&
	! grep "^memory " "$XDG_STATE_HOME/gosbx/claims/unlimited/meta" &&
	gosbx close unlimited
'

test_expect_success SANDBOX,LIMITS 'open with explicit limits runs commands' '
	gosbx open -q --name=limited --memory=256m --pids=64 --cpus=0.5 >/dev/null &&
	gosbx exec --claim=limited -- "echo ok" >out &&
	test_cmp expect out &&
	gosbx close limited
'

# start_listener PORT: an HTTP server on the host's loopback
start_listener() {
	(cd www && exec python3 -m http.server --bind 127.0.0.1 "$1" \
		>../http.log 2>&1) &
	echo $! >http.pid
}

test_expect_success SANDBOX,PYTHON 'start a listener on 127.0.0.1' '
	port=$(test_free_port) &&
	echo $port >port &&
	mkdir www &&
	echo served >www/index.html &&
	start_listener $port &&
	test_retry 100 0.1 python3 -c "import socket
socket.create_connection((\"127.0.0.1\", $port), 2)"
'
test_atexit 'test -f http.pid && kill $(cat http.pid)'

connect='python3 -c "import socket, sys
socket.create_connection((\"127.0.0.1\", int(sys.argv[1])), 2)
print(\"connected\")"'

test_expect_success SANDBOX,PYTHON 'without --network the host is unreachable' '
	test_must_fail gosbx exec --claim=small -- "$connect $(cat port)" >out &&
	test_line_count = 0 out
'

test_expect_success SANDBOX,PYTHON 'with --network the host listener answers' '
	gosbx open -q --name=online --network >/dev/null &&
	gosbx exec --claim=online -- "$connect $(cat port)" >out &&
	echo connected >expect &&
	test_cmp expect out
'

# --disk is a quota on the claim's storage (gosbx-open(1) "DISK AND
# CACHES"): as root a loop-mounted image, else it fails closed
if test_have_prereq ROOT && test -w /dev/loop-control; then
	test_set_prereq QUOTA
else
	test_set_prereq NOQUOTA
fi

test_expect_success SANDBOX,QUOTA 'a write past --disk is ENOSPC; the claim goes on' '
	gosbx open -q --name=smalldisk --disk=16m >/dev/null &&
	test_expect_code 1 gosbx exec --claim=smalldisk -- \
		"dd if=/dev/zero of=big bs=1M count=32 2>/dev/null" &&
	gosbx exec --claim=smalldisk -- "rm big; head -c 500000 /dev/zero >ok; wc -c <ok" >out &&
	echo 500000 >expect &&
	test_cmp expect out &&
	gosbx close smalldisk
'

test_expect_success SANDBOX,NOQUOTA 'without a quota mechanism --disk fails closed' '
	test_must_fail gosbx open -q --name=smalldisk --disk=16m 2>err &&
	! test -e "$XDG_STATE_HOME/gosbx/claims/smalldisk"
'

test_expect_success 'bad --disk values are usage errors' '
	test_expect_code 129 gosbx open --disk=lots &&
	test_expect_code 129 gosbx exec --disk=-1 -- true
'

test_done
