#!/bin/sh
test_description='attacks on the idle TTL from inside a sandbox

Only the owner of a claim keeps it alive: requests code in the sandbox
makes to its own runtime, and processes it leaves running, do not; once
the TTL ends the runtime, nothing of the sandbox runs on.'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq BWRAP || test_skip_all 'bwrap is not installed'
bwrap --unshare-user --ro-bind / / true 2>/dev/null ||
	test_skip_all 'unprivileged user namespaces do not work here'

claims="$XDG_STATE_HOME/gosbx/claims"
test_atexit 'gosbx close --all'

# status NAME: the claim's status as `gosbx claims -o json` says
status() {
	gosbx claims -o json |
	python3 -c 'import json, sys
for c in json.load(sys.stdin):
    if c["name"] == sys.argv[1]:
        print(c["status"])' "$1"
}

status_is() {
	test "$(status "$1")" = "$2"
}

# gone <regex>: no process matches (anchored: the command line of the
# gosbx exec that ran a command holds the command's text too)
gone() {
	! pgrep -f "^$1" >/dev/null
}

cat >poke.py <<\PYEOF
# Keep calling the runtime from inside, on every unix socket there is
# (what kept a killed client's sandbox alive: /run/gosbx/runtime.sock).
import glob, os, socket, sys, time
os.setsid()
while True:
    for path in glob.glob("/run/gosbx/*.sock") + glob.glob("/run/*.sock"):
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
            s.recv(100)
            s.close()
        except OSError:
            pass
    time.sleep(0.2)
PYEOF

test_expect_success PYTHON 'requests from inside do not keep a claim alive' '
	gosbx open -q --name=poked --ttl=10s >/dev/null &&
	cp poke.py "$claims/poked/fs/app/" &&
	gosbx exec --claim=poked -- \
		"python3 poke.py sleep-1001.20 >/dev/null 2>&1 &" &&
	test_retry 120 0.5 status_is poked expired &&
	test_retry 60 0.5 gone "python3 poke.py sleep-1001.20"
'

test_expect_success PYTHON 'a daemon does not keep it alive, and ends with it' '
	gosbx open -q --name=daemon --ttl=6s >/dev/null &&
	gosbx exec --claim=daemon -- \
		"setsid sleep 1001.21 >/dev/null 2>&1 & echo started" >out &&
	echo started >expect && test_cmp expect out &&
	# "started" says the child was forked; it still has to exec sleep
	test_retry 100 0.1 pgrep -f "^sleep 1001\.21" &&
	test_retry 120 0.5 status_is daemon expired &&
	test_retry 60 0.5 gone "sleep 1001\.21"
'

test_expect_success PYTHON 'the expired claims stay listed until closed' '
	gosbx claims >list &&
	grep "^poked  *local  *expired " list &&
	grep "^daemon  *local  *expired " list &&
	gosbx close poked daemon &&
	! test -e "$claims/poked"
'

test_done
