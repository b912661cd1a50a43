# An upstream-shaped runtime server for the tests of the seed client's
# fallbacks (Documentation/protocol/runtime-api.md: the contract of the public
# go-runtime-sandbox server): GET / answers {"status":"ok"} without
# features, POST /execute runs `sh -c <command>` in the workdir, POST
# /upload stores the part "file" under its file name; nothing else.
# Source after test-lib.sh:
#
#	. "$TEST_DIRECTORY"/lib-upstream.sh
#	upstream_start		# up.url, up.pid; workdir $TRASH_DIRECTORY/upwork
#	gosbx --backend=url --url="$(cat up.url)" exec -- ...
#
# The server is stopped when the script ends. Needs python3 and curl.

test -n "${TRASH_DIRECTORY:-}" || {
	echo >&2 "lib-upstream.sh: source test-lib.sh first"
	exit 1
}

cat >"$TRASH_DIRECTORY/upstream.py" <<\EOF
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

# upstream_start: start the server on a free loopback port; its URL in
# up.url, its pid in up.pid, its workdir upwork/ (all in the trash
# directory)
upstream_start() {
	mkdir -p "$TRASH_DIRECTORY/upwork" &&
	_up_port=$(test_free_port) || return 1
	# exec: with test-lib.sh's EXIT trap dash would keep a shell
	# between us and python, and $! would be that shell
	(exec python3 -W ignore "$TRASH_DIRECTORY/upstream.py" "$_up_port" \
		"$TRASH_DIRECTORY/upwork" 2>"$TRASH_DIRECTORY/up.log" \
		</dev/null >/dev/null 3>&- 4>&- 5>&-) &
	echo $! >"$TRASH_DIRECTORY/up.pid" &&
	test_atexit "kill $!" &&
	echo "http://127.0.0.1:$_up_port" >"$TRASH_DIRECTORY/up.url" &&
	test_retry 100 0.1 curl -sf -o /dev/null "http://127.0.0.1:$_up_port/"
}
