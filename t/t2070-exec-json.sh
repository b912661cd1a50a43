#!/bin/sh
test_description='gosbx exec -o json: one object at the end, the status passed through

The keys and types are those of Documentation/gosbx-exec.txt "JSON
OUTPUT"; --json is the same as -o json; another format, and -o json
with -i, -t or the REPL, are usage errors (129).'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test_have_prereq PYTHON || test_skip_all 'python3 is needed to read JSON'

test_atexit 'gosbx close --all'

# check_result FILE: one line, one object with exactly the documented
# keys, each of its documented type
cat >check-result.py <<\EOF
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
assert text.endswith("\n") and text.count("\n") == 1, repr(text)
o = json.loads(text)
types = {
    "claim": str, "exit_code": int, "reason": str,
    "signal": (int, type(None)), "duration_ms": int,
    "cpu_ms": (int, type(None)), "peak_rss_kb": (int, type(None)),
    "stdout": str, "stderr": str,
    "stdout_truncated": bool, "stderr_truncated": bool,
}
assert sorted(o) == sorted(types), sorted(o)
for k, t in types.items():
    assert isinstance(o[k], t), (k, o[k])
    assert not isinstance(o[k], bool) or t is bool, (k, o[k])
assert o["reason"] in ("exited", "signaled", "timeout", "oom",
    "cancelled", "output_limit", "start_failed"), o
assert o["duration_ms"] >= 0, o
EOF
check_result() {
	python3 check-result.py "$1"
}

# field FILE KEY: the value of KEY, as Python's repr
field() {
	python3 -c "import json, sys
print(repr(json.load(open(sys.argv[1], encoding=\"utf-8\"))[sys.argv[2]]))" \
		"$1" "$2"
}

test_expect_success 'a kept claim to run in' '
	gosbx open -q --name=t2070 >/dev/null 2>err &&
	test_drop_limits_warning err &&
	test ! -s err
'

test_expect_success 'exit 3: exit_code 3, gosbx exits 3, stdout in the object' '
	test_expect_code 3 gosbx exec --claim=t2070 -o json -- \
		sh -c "echo out; echo err >&2; exit 3" >out.json 2>err &&
	test ! -s err &&
	check_result out.json &&
	test "$(field out.json exit_code)" = 3 &&
	test "$(field out.json reason)" = "'"'exited'"'" &&
	test "$(field out.json signal)" = None &&
	test "$(field out.json stdout)" = "'"'out\\\\n'"'" &&
	test "$(field out.json stderr)" = "'"'err\\\\n'"'" &&
	test "$(field out.json claim)" = "'"'t2070'"'" &&
	test "$(field out.json stdout_truncated)" = False
'

test_expect_success 'a throwaway sandbox: its name, and the same status' '
	test_expect_code 0 gosbx exec -o json -- true >out.json 2>err &&
	test_drop_limits_warning err &&
	test ! -s err &&
	check_result out.json &&
	field out.json claim >claim &&
	grep "^.sandbox-" claim &&
	test "$(backend_claims)" = t2070
'

test_expect_success 'a signal: exit_code -1, signal 9, status 137' '
	test_expect_code 137 gosbx exec --claim=t2070 -o json -- \
		"kill -KILL \$\$" >out.json &&
	check_result out.json &&
	test "$(field out.json signal)" = 9 &&
	test "$(field out.json exit_code)" = -1 &&
	test "$(field out.json reason)" = "'"'signaled'"'"
'

test_expect_success 'a timeout: reason timeout, status 124, output so far' '
	test_expect_code 124 gosbx exec --claim=t2070 -o json --timeout=3s \
		-- "echo started; sleep 1000.2070" >out.json &&
	check_result out.json &&
	test "$(field out.json reason)" = "'"'timeout'"'" &&
	test "$(field out.json stdout)" = "'"'started\\\\n'"'"
'

test_expect_success 'bytes that are not UTF-8 each become U+FFFD; the rest stays' '
	gosbx exec --claim=t2070 -o json -- \
		"printf \"a\\377b\\303\\n\"; printf \"\\342\\202\\254\\001\" >&2" \
		>out.json &&
	check_result out.json &&
	python3 -c "import json
o = json.load(open(\"out.json\", encoding=\"utf-8\"))
assert o[\"stdout\"] == \"a\\ufffdb\\ufffd\\n\", o
assert o[\"stderr\"] == \"\\u20ac\\u0001\", o" &&
	# a control character is a JSON escape, not a raw byte
	grep -F "\\u0001" out.json
'

test_expect_success '--json is the same as -o json' '
	test_expect_code 4 gosbx exec --claim=t2070 -o json -- \
		"echo same; exit 4" >a.json &&
	test_expect_code 4 gosbx exec --claim=t2070 --json -- \
		"echo same; exit 4" >b.json &&
	python3 -c "import json
a, b = (json.load(open(f)) for f in (\"a.json\", \"b.json\"))
for o in (a, b):
    for k in (\"duration_ms\", \"cpu_ms\", \"peak_rss_kb\"):
        del o[k]
assert a == b, (a, b)
assert a[\"exit_code\"] == 4 and a[\"stdout\"] == \"same\\n\", a"
'

test_expect_success '-o text is the default: the output streams' '
	test_expect_code 3 gosbx exec --claim=t2070 -o text -- \
		"echo plain; exit 3" >out &&
	echo plain >expect &&
	test_cmp expect out
'

test_expect_success 'another format is a usage error (129)' '
	test_expect_code_err 129 gosbx exec --claim=t2070 -o yaml -- true &&
	grep "unknown output format .yaml. (expected text or json)" err &&
	test_expect_code_err 129 gosbx exec --claim=t2070 -o text --json \
		-- true &&
	grep "json and -o text do not go together" err
'

test_expect_success '-o json with -i or -t is a usage error (129)' '
	test_expect_code_err 129 gosbx exec --claim=t2070 -o json -i -- cat &&
	grep "o json cannot be used with -i or -t" err
'

test_expect_success '-o json in the REPL (a terminal, no command) is a usage error' '
	cat >on-pty.py <<-\EOF &&
	import os, pty, sys
	pid, fd = pty.fork()
	if pid == 0:
	    os.execvp(sys.argv[1], sys.argv[1:])
	out = b""
	while True:
	    try:
	        chunk = os.read(fd, 4096)
	    except OSError:
	        break
	    if not chunk:
	        break
	    out += chunk
	open("pty.out", "wb").write(out)
	sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
	EOF
	test_expect_code 129 python3 on-pty.py gosbx exec --claim=t2070 -o json &&
	grep "json, -f, --timeout, --env and --cwd need a command" pty.out
'

test_done
