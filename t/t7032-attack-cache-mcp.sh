#!/bin/sh
test_description='attack: two clients of one gosbx mcp --http and the Go build cache

Issue 9 finding 4 through MCP: one HTTP gosbx mcp serves several
clients, each with its own sandbox. Client A poisons the Go build
cache while client B keeps its sandbox; B'"'"'s next run_go_code must
still run B'"'"'s code.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-mcp.sh"

test_have_prereq GO || test_skip_all 'go is not installed'
test_have_prereq PYTHON || test_skip_all 'python3 is not installed'

http() {
	mcp_client --url="$(cat "$TRASH_DIRECTORY/srv.url")" \
		--token-file="$TRASH_DIRECTORY/srv.token" "$@"
}

# The programs and the poisoning script of t7030; the run_go_code
# arguments are made with python3 (JSON strings of whole files).
cat >victim.go <<\EOF
package main

import "fmt"

func main() { fmt.Println("paid account 1") }
EOF
sed "s/account 1\"/account 666\"/" victim.go >evil.go
printf 'module m\n\ngo 1.19\n' >go.mod
sed -n '/^cat >poison.sh <<\\EOF$/,/^EOF$/p' \
	"$TEST_DIRECTORY/t7030-attack-cache.sh" | sed '1d;$d' >poison.sh

python3 - <<\EOF
import json
src = {n: open(n).read() for n in ("victim.go", "evil.go", "go.mod", "poison.sh")}
def put(name, obj):
    with open(name, "w") as f:
        json.dump(obj, f)
put("victim-build.json", {"files": {"main.go": src["victim.go"], "go.mod": src["go.mod"]},
                          "command": "go run main.go"})
put("victim-run.json", {"command": "go run main.go"})
put("wait.json", {"command": "sleep 7032.5"})
put("attack.json", {"files": {n: src[n] for n in ("victim.go", "evil.go", "go.mod", "poison.sh")},
                    "command": "sh poison.sh && go run main.go"})
EOF

test_expect_success 'setup: the poisoning script and an HTTP server' '
	grep "rewrote" poison.sh &&
	mcp_http_start
'

test_expect_success 'B builds, A poisons the cache, B builds again' '
	mcp_client_bg victim --url="$(cat srv.url)" --token-file=srv.token \
		call run_go_code @victim-build.json \
		--abort-on=poisoned call run_go_code @wait.json \
		call run_go_code @victim-run.json &&
	wait_running "sleep 7032.5" &&
	http call run_go_code @attack.json >attacker.out 2>attacker.err &&
	# the attack works where it lands: in A'"'"'s own sandbox
	mcp_check attacker.out "r[0].ok && /rewrote [1-9]/.test(text(0)) &&
		text(0).includes(\"paid account 666\")" &&
	>poisoned &&
	test_expect_code 1 mcp_client_wait victim &&
	mcp_check victim.out "r[0].ok && text(0).includes(\"paid account 1\")" &&
	mcp_check victim.out "!r[1].ok && r[2].ok &&
		text(2).includes(\"paid account 1\") &&
		!text(2).includes(\"666\")"
'

test_expect_success 'the server stops cleanly and closes both sandboxes' '
	mcp_http_stop &&
	wait_no_claims
'

test_done
