#!/bin/sh
test_description='local isolation: loopback inside, nothing outside

Without --network a sandbox has a network namespace of its own with only
lo: a Go test that starts a net/http/httptest server (127.0.0.1) or
listens on ::1 works, while the host'"'"'s listeners (its loopback too)
and its other addresses are unreachable (issue 10).'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test_have_prereq GO || test_skip_all 'go is not installed'
test_have_prereq PYTHON || test_skip_all 'python3 is not installed'

# A host listener on its loopback, which sandboxes must not reach.
port=$(test_free_port)
mkdir -p www && echo "served from the host" >www/index.html
(cd www && exec python3 -m http.server --bind 127.0.0.1 "$port") \
	>http.log 2>&1 &
echo $! >http.pid
test_atexit 'kill $(cat http.pid)'
test_retry 100 0.1 curl -sf -o /dev/null "http://127.0.0.1:$port/" ||
	test_skip_all 'cannot start a host HTTP listener'
# an address of this host outside its loopback, if it has one
hostip=$(ip -4 route get 1.1.1.1 2>/dev/null |
	sed -n "s/.* src \([0-9.]*\).*/\1/p")
: "${hostip:=192.0.2.1}"

mkdir -p web &&
cat >web/go.mod <<-\EOF &&
module example.com/web

go 1.19
EOF
cat >web/web_test.go <<EOF || exit 1
package web

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestHTTPTestServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(
		func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "hello from httptest")
		}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hello from httptest" {
		t.Fatalf("got %q", b)
	}
}

func TestIPv6Loopback(t *testing.T) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			c.Write([]byte("ok"))
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	if string(b) != "ok" {
		t.Fatalf("got %q", b)
	}
}

func TestOutsideUnreachable(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:$port", "$hostip:$port",
		"$hostip:22"} {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			c.Close()
			t.Errorf("%s reachable from the sandbox", addr)
		} else {
			t.Logf("%s: %v", addr, err)
		}
	}
	ifs, _ := net.Interfaces()
	if len(ifs) != 1 || ifs[0].Name != "lo" {
		t.Errorf("interfaces %v, want lo alone", ifs)
	}
}
EOF

test_expect_success 'the host listener answers on the host' '
	curl -sf "http://127.0.0.1:$port/" >out &&
	test_cmp www/index.html out
'

test_expect_success 'gosbx exec --claim: go test with httptest and ::1 passes' '
	gosbx open -q --name=t7014 &&
	test_atexit "gosbx close t7014" &&
	gosbx push --claim=t7014 web &&
	gosbx exec --claim=t7014 -- "cd web && go test -v -count=1 ./..." \
		>out 2>err &&
	grep -- "--- PASS: TestHTTPTestServer" out &&
	grep -- "--- PASS: TestIPv6Loopback" out &&
	grep -- "--- PASS: TestOutsideUnreachable" out &&
	grep "^ok[[:space:]]*example.com/web" out
'

. "$TEST_DIRECTORY"/lib-mcp.sh

# the claim above, whose Go cache holds the first build of net/http
test_expect_success 'MCP run_go_code: the same test passes' '
	node -e "
const fs = require(\"fs\");
fs.writeFileSync(\"args.json\", JSON.stringify({
	command: \"go test -v -count=1 ./...\",
	files: {
		\"go.mod\": fs.readFileSync(\"web/go.mod\", \"utf8\"),
		\"web_test.go\": fs.readFileSync(\"web/web_test.go\", \"utf8\"),
	},
}));
" &&
	mcp_client --timeout=300000 --save-text=text call run_go_code \
		@args.json -- "$MCP_STDIO" --claim=t7014 >out 2>err &&
	mcp_check out "r[0].ok && r[0].result.isError === false" &&
	grep -- "--- PASS: TestHTTPTestServer" text &&
	grep -- "--- PASS: TestOutsideUnreachable" text &&
	grep "^ok[[:space:]]*example.com/web" text
'

test_done
