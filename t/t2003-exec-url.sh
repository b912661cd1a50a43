#!/bin/sh
test_description='gosbx exec and push on the url backend: gosbx-runtime and an upstream-shaped server'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-runtime.sh

expect_code() {
	_want=$1
	shift
	"$@"
	_got=$?
	test "$_got" = "$_want" || {
		echo >&4 "want exit $_want, got $_got: $*"
		return 1
	}
}

test_expect_success 'setup: gosbx-runtime on loopback' '
	rt_start &&
	GOSBX_URL=$(cat rt.url) &&
	echo "$GOSBX_URL" >url
'
GOSBX_URL=$(cat url 2>/dev/null)
export GOSBX_URL

test_expect_success 'exec: live output, exit status, files (extended path)' '
	echo data >f &&
	expect_code 3 gosbx --backend=url exec -f f:d/f -- \
		"cat d/f; echo err >&2; exit 3" >out 2>err &&
	echo data >expect && test_cmp expect out &&
	echo err >expect && test_cmp expect err &&
	test_cmp f work/d/f
'

test_expect_success 'exec: --timeout kills on the server (124)' '
	expect_code 124 gosbx --backend=url exec --timeout=300ms -- \
		"sleep 1000.456" &&
	test_retry 100 0.1 sh -c "! pgrep -f \"^sleep 1000.456\" >/dev/null"
'

test_expect_success 'push into the runtime at --url needs no claim' '
	mkdir -p tree/a &&
	echo x >tree/a/x &&
	gosbx --backend=url push --to=p tree &&
	test_cmp tree/a/x work/p/tree/a/x
'

test_expect_success 'exec: a throwaway on the url backend deletes nothing' '
	gosbx --backend=url exec -- true &&
	test -f work/d/f
'

# An upstream-shaped server (spec/runtime-api.md, the seed's contract):
# GET / without features, POST /execute and POST /upload only.
cat >upstream.py <<\EOF
import cgi, json, os, subprocess, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

work = sys.argv[2]

class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/":
            self.reply(200, {"status": "ok"})
        else:
            self.reply(404, {"error": "not found"})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        if self.path == "/execute":
            req = json.loads(self.rfile.read(n))
            p = subprocess.run(["sh", "-c", req["command"]], cwd=work,
                               capture_output=True)
            self.reply(200, {"stdout": p.stdout.decode(errors="replace"),
                             "stderr": p.stderr.decode(errors="replace"),
                             "exit_code": p.returncode})
        elif self.path == "/upload":
            form = cgi.FieldStorage(fp=self.rfile, headers=self.headers,
                                    environ={"REQUEST_METHOD": "POST"})
            item = form["file"]
            with open(os.path.join(work, item.filename), "wb") as f:
                f.write(item.file.read())
            self.reply(200, {"message": "ok"})
        else:
            self.reply(404, {"error": "not found"})

HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF

test_expect_success 'setup: the upstream-shaped server' '
	mkdir -p upwork &&
	port=$(test_free_port) || return 1
	python3 -W ignore upstream.py $port "$PWD/upwork" 2>up.log &
	echo $! >up.pid &&
	echo "http://127.0.0.1:$port" >up.url &&
	test_retry 100 0.1 curl -sf -o /dev/null "$(cat up.url)/"
'
test_atexit 'kill $(cat up.pid)'

test_expect_success 'exec through /execute: output, status, seed upload' '
	echo seed >s.txt &&
	expect_code 4 gosbx --backend=url --url="$(cat up.url)" exec \
		-f s.txt -- "cat s.txt; echo e >&2; exit 4" >out 2>err &&
	echo seed >expect && test_cmp expect out &&
	echo e >expect && test_cmp expect err &&
	test_cmp s.txt upwork/s.txt
'

test_expect_success PYTHON 'exec --json through /execute' '
	gosbx --backend=url --url="$(cat up.url)" exec --json -- echo hi >out &&
	python3 -c "
import json
o = json.load(open(\"out\"))
assert o[\"exit_code\"] == 0 and o[\"stdout\"] == \"hi\\n\", o
assert o[\"cpu_ms\"] is None and o[\"peak_rss_kb\"] is None, o
"
'

test_done
