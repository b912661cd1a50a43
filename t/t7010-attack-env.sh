#!/bin/sh
test_description='attack: the host environment never reaches a sandbox

A sandbox reads the environment of every process it can see through
/proc/<pid>/environ: bwrap (its pid 1) included, which bwrap --clearenv
does not clear (bubblewrap#725). Nothing of the caller may be there:
not through isolate-run, gosbx exec, gosbx open or gosbx mcp.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

secret=t7010-secret-$$

# Run inside: one line "LEAK <file>" per process environment that holds
# the secret; "sealed <file>" when one cannot be read because it is
# gosbx-runtime's (non-dumpable, as are its spawner and shims: code of
# the same uid cannot read them, which is the point), "unreadable
# <file>" when another cannot be read; then how many were read, and
# "pid1:" with the variables of /proc/1/environ, or "pid1: sealed". A
# sleep of the command's own makes sure there is one to read.
cat >scan.sh <<EOF
sleep 3 &
n=0
for f in /proc/[0-9]*/environ; do
	test "\$f" = /proc/\$\$/environ && continue
	test -e "\$f" || continue
	if ! tr '\\0' '\\n' <"\$f" >/tmp/env 2>/dev/null; then
		if tr '\\0' ' ' <"\${f%environ}cmdline" 2>/dev/null |
			grep -q "^/opt/gosbx/gosbx-runtime "; then
			echo "sealed \$f"
		else
			echo "unreadable \$f"
		fi
		continue
	elif grep -q "$secret" /tmp/env; then
		echo "LEAK \$f"
	fi
	n=\$((n + 1))
done
echo "scanned \$n"
printf "pid1:"
if tr '\\0' '\\n' </proc/1/environ >/tmp/env 2>/dev/null; then
	while read -r v; do printf " %s" "\$v"; done </tmp/env
else
	printf " sealed"
fi
echo
kill \$! 2>/dev/null
EOF

# check_scan <output>: no leak, every environment readable but the
# runtime's own (sealed), at least one read, and pid 1 (bwrap, or the
# runtime itself) either sealed or with exactly the PATH isolate.h
# gives it (ISOLATE_EXEC_PATH)
check_scan() {
	cat "$1" >&4 &&
	! grep -E "^(LEAK|unreadable)" "$1" &&
	n=$(sed -n "s/^scanned //p" "$1") &&
	test "$n" -ge 1 &&
	if grep -x "pid1: sealed" "$1"
	then
		grep -x "sealed /proc/1/environ" "$1"
	else
		grep -x "pid1: PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" "$1"
	fi
}

test_expect_success 'isolate-run: no process of the sandbox has our variables' '
	env T7010_SECRET=$secret ANTHROPIC_API_KEY=$secret \
		GOSBX_MCP_TOKEN=$secret \
		isolate-run -- sh -c "sleep 1 & sh /app/scan.sh" >out &&
	check_scan out
'

test_expect_success 'gosbx exec: the throwaway sandbox has none of them' '
	env ANTHROPIC_API_KEY=$secret GOSBX_MCP_TOKEN=$secret \
		gosbx exec --file=scan.sh -- sh scan.sh >out &&
	check_scan out
'

test_expect_success 'gosbx open: the kept runtime has none of them' '
	name=$(env ANTHROPIC_API_KEY=$secret GEMINI_API_KEY=$secret \
		gosbx open -q) &&
	test_atexit "gosbx close $name" &&
	gosbx exec --claim="$name" --file=scan.sh -- sh scan.sh >out &&
	check_scan out &&
	gosbx close "$name"
'

test_expect_success 'the variables of exec --env do reach the command' '
	gosbx exec --env=GREETING=hi -- "echo \$GREETING" >out &&
	echo hi >expect &&
	test_cmp expect out
'

. "$TEST_DIRECTORY"/lib-mcp.sh

cat >scan.go <<EOF
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	files, _ := filepath.Glob("/proc/[0-9]*/environ")
	n := 0
	for _, f := range files {
		if f == fmt.Sprintf("/proc/%d/environ", os.Getpid()) {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			c, _ := os.ReadFile(strings.TrimSuffix(f, "environ") + "cmdline")
			if strings.HasPrefix(string(c), "/opt/gosbx/gosbx-runtime\\x00") {
				fmt.Println("sealed", f)
			} else {
				fmt.Println("unreadable", f)
			}
			continue
		}
		if strings.Contains(string(b), "$secret") {
			fmt.Println("LEAK", f)
		}
		n++
	}
	fmt.Println("scanned", n)
	b, err := os.ReadFile("/proc/1/environ")
	if err != nil {
		fmt.Println("pid1: sealed")
		return
	}
	vars := strings.Split(strings.TrimRight(string(b), "\\x00"), "\\x00")
	fmt.Println("pid1: " + strings.Join(vars, " "))
}
EOF

test_expect_success 'gosbx mcp: run_go_code sees none of the server variables' '
	node -e "
const fs = require(\"fs\");
fs.writeFileSync(\"args.json\", JSON.stringify({
	command: \"go run scan.go\",
	files: { \"scan.go\": fs.readFileSync(\"scan.go\", \"utf8\") },
}));
" &&
	(
		ANTHROPIC_API_KEY=$secret GOSBX_MCP_TOKEN=$secret &&
		export ANTHROPIC_API_KEY GOSBX_MCP_TOKEN &&
		mcp_client --save-text=text call run_go_code @args.json \
			-- "$MCP_STDIO" >out 2>err
	) &&
	mcp_check out "r[0].ok && r[0].result.isError === false" &&
	sed -n "/stdout/,/stderr/p" text >scan &&
	check_scan scan
'

test_done
