# Helpers for the gosbx-runtime tests (t3xxx). Source after test-lib.sh:
#
#	. "$(dirname "$0")"/test-lib.sh
#	. "$TEST_DIRECTORY"/lib-runtime.sh
#
# Servers: rt_start starts a gosbx-runtime in the trash directory and
# waits until GET / answers. Its state lives in files named after the
# server (default "rt"; choose another with --name=<n>, then address
# it with RT=<n> rt_curl ...), so a server started inside one
# test_expect_success body is usable from the next ones:
#
#	<name>.pid   the server's pid        <name>.log  its stderr
#	<name>.url   http://127.0.0.1:PORT or unix:/path/to/socket
#	<name>.work  its workdir (default $TRASH_DIRECTORY/work)
#
# Every server still running when the script ends is stopped (SIGTERM,
# then SIGKILL) by an atexit handler.
#
# Requests: rt_curl <path> [curl options...] prints the answer body;
# rt_req <method> <path> [curl options...] stores the answer in the files
# `body`, `headers` and `status`; rt_expect <status> <method> <path> ...
# does the same and fails (showing the answer) unless the status matches.
#
# JSON (jq is not available): json_get FILE KEY prints one value (a
# string raw, without a newline; other values as JSON); KEY is a dotted
# path, numbers index arrays ("0.name"), "." is the whole document.
# json_is FILE KEY VALUE, json_type FILE KEY, json_keys FILE [KEY].

test -n "${TRASH_DIRECTORY:-}" || {
	echo >&2 "lib-runtime.sh: source test-lib.sh first"
	exit 1
}

if ! command -v curl >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1
then
	test_skip_all "curl and python3 are needed"
fi
# Version managers (pyenv) put a slow shell shim first in PATH; these
# tests call python3 hundreds of times, so call the interpreter itself.
RT_PYTHON=$(command python3 -c 'import sys; print(sys.executable)') &&
test -x "$RT_PYTHON" || RT_PYTHON=$(command -v python3)
python3() {
	"$RT_PYTHON" "$@"
}
if ! test -x "$GOSBX_BUILD_DIR/gosbx-runtime"; then
	test_skip_all "gosbx-runtime is not built in $GOSBX_BUILD_DIR"
fi

# The limits of the contract (Documentation/protocol/runtime-api.md, runtime-contract.md).
RT_JSON_LIMIT=1048576
RT_UPLOAD_LIMIT=268435456
RT_STREAM_CAP=8388608
# Upper bound on the server's memory in the bounded-memory tests (kB).
RT_RSS_LIMIT_KB=65536

# Poll a command until it succeeds: rt_poll <seconds> cmd...
rt_poll() {
	_rt_tries=$(($1 * 10))
	shift
	test_retry "$_rt_tries" 0.1 "$@"
}

# rt_start [--name=<n>] [--unix] [--any] [--env] [--workdir=<dir>] [--]
#          [runtime options]
# Start a server on a free loopback TCP port (or a unix socket in the
# trash directory; or --any: the address ":PORT") and wait until GET /
# answers 200. --env passes address and workdir as SANDBOX_ADDR and
# SANDBOX_WORKDIR instead of options. Extra options go to gosbx-runtime.
# Fails (showing the log) if the server died.
rt_start() {
	_rt_name=rt
	_rt_unix=
	_rt_any=
	_rt_env=
	_rt_work=$TRASH_DIRECTORY/work
	while test $# -gt 0; do
		case "$1" in
		--name=*) _rt_name=${1#--name=} ;;
		--unix) _rt_unix=t ;;
		--any) _rt_any=t ;;
		--env) _rt_env=t ;;
		--workdir=*) _rt_work=${1#--workdir=} ;;
		--) shift; break ;;
		*) break ;;
		esac
		shift
	done
	_rt_base=$TRASH_DIRECTORY/$_rt_name
	echo "$_rt_work" >"$_rt_base.work"
	for _rt_try in 1 2 3; do
		if test -n "$_rt_unix"; then
			rm -f "$_rt_base.sock"
			_rt_addr=unix:$_rt_base.sock
			echo "$_rt_addr" >"$_rt_base.url"
		else
			_rt_port=$(test_free_port) || return 1
			_rt_addr=127.0.0.1:$_rt_port
			echo "http://$_rt_addr" >"$_rt_base.url"
			test -n "$_rt_any" && _rt_addr=:$_rt_port
		fi
		# fds 3-5 are the test library's: the server must not keep
		# them (nor a pipe reading the TAP output) open
		if test -n "$_rt_env"; then
			SANDBOX_ADDR=$_rt_addr SANDBOX_WORKDIR=$_rt_work \
			gosbx-runtime "$@" \
				</dev/null >"$_rt_base.out" 2>"$_rt_base.log" \
				3>&- 4>&- 5>&- &
		else
			gosbx-runtime --addr="$_rt_addr" --workdir="$_rt_work" \
				"$@" </dev/null >"$_rt_base.out" \
				2>"$_rt_base.log" 3>&- 4>&- 5>&- &
		fi
		echo $! >"$_rt_base.pid"
		echo $! >>"$TRASH_DIRECTORY/.rt-pids"
		# up to 60 s (sanitized builds start slowly), unless it died
		_rt_i=600
		while test $_rt_i -gt 0; do
			rt_ready_ "$_rt_name"
			case $? in
			0) return 0 ;;
			2) break ;;
			esac
			_rt_i=$((_rt_i - 1))
			sleep 0.1
		done
		if test $_rt_i = 0; then
			echo >&4 "rt_start: server $_rt_name never answered GET /"
			cat "$_rt_base.log" >&4
			return 1
		fi
		# a port taken between test_free_port and bind: try another
		test -z "$_rt_unix" && grep -qi "in use" "$_rt_base.log" &&
			continue
		break
	done
	echo >&4 "rt_start: server $_rt_name exited; its log:"
	cat "$_rt_base.log" >&4
	return 1
}

rt_ready_() {
	kill -0 "$(cat "$TRASH_DIRECTORY/$1.pid")" 2>/dev/null || return 2
	_rt_code=$(RT=$1 RT_MAX_TIME=5 rt_curl / -o /dev/null \
		-w '%{http_code}' 2>/dev/null)
	test "$_rt_code" = 200
}

# The pid and workdir of a server (default "rt", or $RT).
rt_pid() {
	cat "$TRASH_DIRECTORY/${1:-${RT:-rt}}.pid"
}
rt_workdir() {
	cat "$TRASH_DIRECTORY/${1:-${RT:-rt}}.work"
}
rt_log() {
	echo "$TRASH_DIRECTORY/${1:-${RT:-rt}}.log"
}

# rt_stop [<name>]: SIGTERM, wait up to 30 s, then SIGKILL.
rt_stop() {
	_rt_pid=$(rt_pid "$@") || return 1
	kill -TERM "$_rt_pid" 2>/dev/null || return 0
	rt_poll 30 rt_dead_ "$_rt_pid" && return 0
	kill -KILL "$_rt_pid" 2>/dev/null
	return 1
}

rt_dead_() {
	! kill -0 "$1" 2>/dev/null
}

rt_stop_all_() {
	test -f "$TRASH_DIRECTORY/.rt-pids" || return 0
	for _rt_pid in $(cat "$TRASH_DIRECTORY/.rt-pids"); do
		kill -TERM "$_rt_pid" 2>/dev/null
	done
	for _rt_pid in $(cat "$TRASH_DIRECTORY/.rt-pids"); do
		rt_poll 30 rt_dead_ "$_rt_pid" ||
			kill -KILL "$_rt_pid" 2>/dev/null
	done
	rm -f "$TRASH_DIRECTORY/.rt-pids"
}
test_atexit rt_stop_all_

# rt_curl <path> [curl options...]: talk to server $RT (default "rt").
# Paths go out as written (--path-as-is); every call is bounded by
# $RT_MAX_TIME seconds (default 120) so a hung server fails a test
# instead of hanging it.
rt_curl() {
	_rt_path=$1
	shift
	_rt_url=$(cat "$TRASH_DIRECTORY/${RT:-rt}.url") || return 1
	case "$_rt_url" in
	unix:*)
		set -- --unix-socket "${_rt_url#unix:}" "$@"
		_rt_url=http://localhost
		;;
	esac
	# the body type gosbx sends, unless the caller names one: the
	# server refuses a body type that a web page can send
	# (gosbx-runtime(1), WEB PAGES)
	case " $* " in
	*[Cc]ontent-[Tt]ype:* | *" -F "* | *" --form "*) ;;
	*)
		case "$_rt_path" in
		/execute | /v1/exec | /v1/exec/*/control | /v1/jobs | \
			/v1/jobs/*/signal | /v1/jobs/*/resize)
			set -- -H "Content-Type: application/json" "$@"
			;;
		/v1/exec/*/stdin | /v1/jobs/*/stdin*)
			set -- -H "Content-Type: application/octet-stream" "$@"
			;;
		/v1/archive*)
			set -- -H "Content-Type: application/x-tar" "$@"
			;;
		esac
		;;
	esac
	# a server started with --token-file=<trash>/<name>.token
	_rt_tok=$TRASH_DIRECTORY/${RT:-rt}.token
	case " $* " in
	*Authorization:*) ;;
	*)
		test -f "$_rt_tok" &&
			set -- -H "Authorization: Bearer $(cat "$_rt_tok")" "$@"
		;;
	esac
	curl -sS --path-as-is --max-time "${RT_MAX_TIME:-120}" "$@" \
		"$_rt_url$_rt_path"
}

# rt_req <method> <path> [curl options...]: the answer goes into the
# files body, headers and status. Returns curl's exit status.
rt_req() {
	_rt_method=$1
	_rt_p=$2
	shift 2
	rm -f body headers status
	rt_curl "$_rt_p" -X "$_rt_method" -o body -D headers \
		-w '%{http_code}' "$@" >status
}

# rt_expect <status> <method> <path> [curl options...]
rt_expect() {
	_rt_want=$1
	shift
	rt_req "$@"
	_rt_ret=$?
	if test "$(cat status 2>/dev/null)" != "$_rt_want"; then
		echo >&4 "rt_expect: $1 $2: want status $_rt_want, got" \
			"'$(cat status 2>/dev/null)' (curl exit $_rt_ret); body:"
		head -c 2000 body >&4 2>/dev/null
		echo >&4
		return 1
	fi
	return 0
}

# rt_expect_error <status> <detail> <method> <path> [curl options...]:
# the status, and the error body {"detail":"<detail>"} exactly.
rt_expect_error() {
	_rt_st=$1
	_rt_detail=$2
	shift 2
	rt_expect "$_rt_st" "$@" && json_is body detail "$_rt_detail" &&
		json_keys body >keys.actual && echo detail >keys.expect &&
		test_cmp keys.expect keys.actual
}

# rt_exec <json body> [curl options...]: POST /execute, expect 200.
rt_exec() {
	_rt_json=$1
	shift
	rt_expect 200 POST /execute -H "Content-Type: application/json" \
		--data-binary "$_rt_json" "$@"
}

# rt_header <name>: the value of a header of the last rt_req (no CR).
rt_header() {
	tr -d '\r' <headers | sed -n "s/^$1: *//Ip" | tail -n 1
}

# rt_alive: the server still answers GET / and runs a command.
rt_alive() {
	RT_MAX_TIME=60 rt_curl / -o alive.body -w '%{http_code}' \
		>alive.status &&
	test "$(cat alive.status)" = 200 &&
	RT_MAX_TIME=60 rt_curl /execute -o alive.body -w '%{http_code}' \
		-H "Content-Type: application/json" \
		--data-binary '{"command":"echo alive"}' >alive.status &&
	test "$(cat alive.status)" = 200 &&
	printf 'alive\n' >alive.expect &&
	json_get alive.body stdout >alive.actual &&
	test_cmp alive.expect alive.actual
}

# rt_proc_kb <field> [<name>]: a Vm* field of /proc/<pid>/status in kB.
rt_proc_kb() {
	sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" \
		"/proc/$(rt_pid "$2")/status"
}

# rt_memory_bounded [<field>]: VmRSS (or the given field, e.g. VmHWM)
# of the server is below RT_RSS_LIMIT_KB.
rt_memory_bounded() {
	_rt_kb=$(rt_proc_kb "${1:-VmRSS}") || return 1
	if test -z "$_rt_kb" || test "$_rt_kb" -ge "$RT_RSS_LIMIT_KB"; then
		echo >&4 "server ${1:-VmRSS} is ${_rt_kb:-unknown} kB" \
			"(limit $RT_RSS_LIMIT_KB kB)"
		return 1
	fi
}

# rt_no_process <regex>: no process's command line matches, polled for up
# to 30 s (killing a process group is asynchronous).
rt_no_process() {
	rt_poll 30 rt_no_process_ "$1" && return 0
	echo >&4 "still running after 30 s:"
	pgrep -a -f "$1" >&4
	return 1
}
rt_no_process_() {
	! pgrep -f "$1" >/dev/null
}

# rt_wait_process <regex>: a matching process exists (polled, 30 s).
rt_wait_process() {
	rt_poll 30 pgrep -f "$1" >/dev/null
}

# rt_workdir_is <names...>: the workdir holds exactly these entries
# (top level, hidden ones included), so no temp file was left behind.
rt_workdir_is() {
	printf '%s\n' "$@" | LC_ALL=C sort >workdir.expect
	(cd "$(rt_workdir)" && ls -A) | LC_ALL=C sort >workdir.actual
	sed -i '/^$/d' workdir.expect
	test_cmp workdir.expect workdir.actual
}

# json_get FILE KEY
json_get() {
	python3 -c '
import json, sys
try:
    with open(sys.argv[1], "rb") as f:
        v = json.loads(f.read().decode("utf-8"))
except Exception as e:
    sys.stderr.write("json_get: %s: %s\n" % (sys.argv[1], e))
    sys.exit(2)
key = sys.argv[2]
if key != ".":
    for k in key.split("."):
        try:
            v = v[int(k)] if isinstance(v, list) else v[k]
        except (KeyError, IndexError, ValueError, TypeError):
            sys.stderr.write("json_get: %s: no key %s\n" % (sys.argv[1], key))
            sys.exit(1)
if isinstance(v, str):
    sys.stdout.buffer.write(v.encode("utf-8", "surrogatepass"))
else:
    sys.stdout.write(json.dumps(v, ensure_ascii=False))
' "$1" "$2"
}

# json_is FILE KEY VALUE: the value printed by json_get equals VALUE.
json_is() {
	_rt_v=$(json_get "$1" "$2") || return 1
	if test "$_rt_v" != "$3"; then
		echo >&4 "json_is: $2 is '$_rt_v', want '$3' in $1:"
		head -c 2000 "$1" >&4
		echo >&4
		return 1
	fi
}

# json_type FILE KEY: str, int, float, bool, null, list or dict
json_type() {
	python3 -c '
import json, sys
v = json.load(open(sys.argv[1], encoding="utf-8"))
if sys.argv[2] != ".":
    for k in sys.argv[2].split("."):
        v = v[int(k)] if isinstance(v, list) else v[k]
print({str: "str", bool: "bool", int: "int", float: "float",
       type(None): "null", list: "list", dict: "dict"}[type(v)])
' "$1" "$2"
}

# json_keys FILE [KEY]: the keys of an object, sorted, one a line
json_keys() {
	python3 -c '
import json, sys
v = json.load(open(sys.argv[1], encoding="utf-8"))
if len(sys.argv) > 2 and sys.argv[2] != ".":
    for k in sys.argv[2].split("."):
        v = v[int(k)] if isinstance(v, list) else v[k]
for k in sorted(v):
    print(k)
' "$@"
}

# rt_multipart <out> <field> <filename> <content file>: a multipart body
# with one part, boundary RT_BOUNDARY. Content-Type for it: $RT_MULTIPART.
RT_BOUNDARY=gosbx-test-boundary-7e3f91
RT_MULTIPART="multipart/form-data; boundary=$RT_BOUNDARY"
rt_multipart() {
	python3 -c '
import sys
out, field, name, src = sys.argv[1:5]
b = sys.argv[5].encode()
data = open(src, "rb").read()
with open(out, "wb") as f:
    f.write(b"--" + b + b"\r\n")
    f.write(b"Content-Disposition: form-data; name=\"" + field.encode() +
            b"\"; filename=\"" + name.encode() + b"\"\r\n")
    f.write(b"Content-Type: application/octet-stream\r\n\r\n")
    f.write(data)
    f.write(b"\r\n--" + b + b"--\r\n")
' "$1" "$2" "$3" "$4" "$RT_BOUNDARY"
}

# rt_mktar [--gz|--bz2|--xz] <out>: a tar built from a spec on stdin,
# one entry a line, in this order:
#	file <name> <content>      (content may be empty)
#	dir <name>
#	symlink <name> <target>
#	hardlink <name> <target>
#	chr <name> / blk <name> / fifo <name>
# Names are stored as written (absolute, "..", anything).
rt_mktar() {
	_rt_mode=w
	case "$1" in
	--gz) _rt_mode=w:gz; shift ;;
	--bz2) _rt_mode=w:bz2; shift ;;
	--xz) _rt_mode=w:xz; shift ;;
	esac
	python3 -c '
import io, sys, tarfile
out, mode = sys.argv[1], sys.argv[2]
with tarfile.open(out, mode, format=tarfile.GNU_FORMAT) as t:
    for line in sys.stdin.read().splitlines():
        if not line.strip():
            continue
        parts = line.split(" ", 2)
        kind, name = parts[0], parts[1]
        arg = parts[2] if len(parts) > 2 else ""
        ti = tarfile.TarInfo(name)
        ti.mtime = 1600000000
        ti.mode = 0o644
        data = None
        if kind == "file":
            data = arg.encode()
            ti.size = len(data)
        elif kind == "dir":
            ti.type = tarfile.DIRTYPE
            ti.mode = 0o755
        elif kind == "symlink":
            ti.type = tarfile.SYMTYPE
            ti.linkname = arg
        elif kind == "hardlink":
            ti.type = tarfile.LNKTYPE
            ti.linkname = arg
        elif kind in ("chr", "blk"):
            ti.type = tarfile.CHRTYPE if kind == "chr" else tarfile.BLKTYPE
            ti.devmajor, ti.devminor = 1, 3
        elif kind == "fifo":
            ti.type = tarfile.FIFOTYPE
        else:
            sys.exit("rt_mktar: unknown kind " + kind)
        t.addfile(ti, io.BytesIO(data) if data is not None else None)
' "$1" "$_rt_mode"
}

# rt_tar_list <tar file>: "type name size" of each entry, in order
rt_tar_list() {
	python3 -c '
import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    for m in t.getmembers():
        kind = "dir" if m.isdir() else "file" if m.isfile() else \
            "symlink" if m.issym() else "other"
        print(kind, m.name.rstrip("/"), m.size if m.isfile() else 0)
' "$1"
}

# rt_tree <dir>: every path under dir (type, relative name, size of
# files) sorted, for "nothing changed" checks.
rt_tree() {
	(cd "$1" && find . -printf '%y %p %s\n' | sed 's/^\(d .*\) [0-9]*$/\1/' |
		LC_ALL=C sort)
}

# rt_ndjson <file>: check a POST /v1/exec answer (one JSON object a
# line, types stdout/stderr/exit, each output event with exactly one of
# data or b64, exactly one exit event and it is last) and split it into
# stream.out and stream.err (the bytes, decoded), stream.exit (the exit
# event) and stream.types (the event types in order, one a line).
rt_ndjson() {
	python3 -c '
import base64, json, sys
raw = open(sys.argv[1], "rb").read()
if raw and not raw.endswith(b"\n"):
    sys.exit("rt_ndjson: last line not terminated")
out = {"stdout": bytearray(), "stderr": bytearray()}
types, exits = [], []
for n, line in enumerate(raw.split(b"\n")[:-1], 1):
    ev = json.loads(line.decode("utf-8"))
    if not isinstance(ev, dict):
        sys.exit("rt_ndjson: line %d is not an object" % n)
    t = ev.get("type")
    types.append(str(t))
    if t in out:
        keys = sorted(ev)
        if keys == ["data", "type"]:
            out[t] += ev["data"].encode("utf-8")
        elif keys == ["b64", "type"]:
            out[t] += base64.b64decode(ev["b64"], validate=True)
        else:
            sys.exit("rt_ndjson: line %d: keys %s" % (n, keys))
    elif t == "exit":
        exits.append(ev)
    else:
        sys.exit("rt_ndjson: line %d: type %r" % (n, t))
if len(exits) != 1 or types[-1] != "exit":
    sys.exit("rt_ndjson: %d exit events, last type %s" %
             (len(exits), types[-1] if types else None))
open("stream.out", "wb").write(out["stdout"])
open("stream.err", "wb").write(out["stderr"])
json.dump(exits[0], open("stream.exit", "w"))
open("stream.types", "w").write("\n".join(types) + "\n")
' "$1"
}

# rt_stop_check: stop every server of this script, then fail if any log
# holds a sanitizer report (leaks show up only at exit) or a crash.
rt_stop_check() {
	rt_stop_all_ &&
	if grep -l -E "Sanitizer|runtime error:|^==[0-9]+==" \
		"$TRASH_DIRECTORY"/*.log >sanitizer.logs 2>/dev/null; then
		for _rt_f in $(cat sanitizer.logs); do
			echo >&4 "$_rt_f:"
			grep -A 30 -E "Sanitizer|runtime error:" "$_rt_f" >&4
		done
		return 1
	fi
}

# rt_loaded <command...>: the command with three busy loops beside it
# (ended after it), for races that show only on a loaded machine
rt_loaded() {
	rm -f "$TRASH_DIRECTORY/hogs"
	for _rt_i in 1 2 3
	do
		{ timeout 300 sh -c "while :; do :; done" & } &&
		echo $! >>"$TRASH_DIRECTORY/hogs" || return 1
	done
	"$@"
	_rt_st=$?
	kill $(cat "$TRASH_DIRECTORY/hogs") 2>/dev/null
	return $_rt_st
}
