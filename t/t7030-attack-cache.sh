#!/bin/sh
test_description='attack: one claim reads or rewrites the Go build cache of another

Issue 9 finding 4: the Go build cache was shared read-write by every
local sandbox of a user, so a claim could read what another compiled
and rewrite cache entries so that the other claim'"'"'s next build ran
the attacker'"'"'s code. Each claim now has caches of its own.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test_have_prereq GO || test_skip_all 'go is not installed'

test_atexit 'gosbx close --all'

# The victim's program: it pays account 1. The attacker knows its
# source (a sample, a public repository) and has its own program that
# pays account 666 with the same imports.
cat >victim.go <<\EOF
package main

import "fmt"

func main() { fmt.Println("paid account 1") }
EOF
sed "s/account 1\"/account 666\"/" victim.go >evil.go
cat >secret.go <<\EOF
package main

import "fmt"

func main() { fmt.Println("the victim's secret is s3cr3t-7030") }
EOF
printf 'module m\n\ngo 1.19\n' >go.mod

# Runs inside the attacker's sandbox: build the victim's program and
# its own as the victim does (`go run main.go` in /app: the directory
# is part of the cache key), find their compiled packages in the
# build cache by their strings, and point the cache entry of the
# victim's package at the attacker's package (an entry is "v1
# <action> <output> <size> <time>"; Go trusts it as it is).
cat >poison.sh <<\EOF
set -e
c=$(go env GOCACHE)
cp victim.go main.go
go run main.go >/dev/null
cp evil.go main.go
go run main.go >/dev/null
cp victim.go main.go
v=$(grep -rl --include="*-d" "paid account 1" "$c" | head -n 1)
e=$(grep -rl --include="*-d" "paid account 666" "$c" | head -n 1)
test -n "$v" && test -n "$e"
vid=$(basename "$v" -d)
eid=$(basename "$e" -d)
size=$(wc -c <"$e")
n=0
for a in $(grep -rl --include="*-a" "$vid" "$c"); do
	awk -v o="$eid" -v s="$size" \
		'{ printf "v1 %s %s %20d %20s\n", $2, o, s, $5 }' "$a" >"$a.new"
	mv "$a.new" "$a"
	n=$((n + 1))
done
echo "rewrote $n"
EOF

test_expect_success 'setup: a victim and an attacker claim' '
	gosbx open -q --name=victim >/dev/null &&
	gosbx open -q --name=attacker >/dev/null &&
	gosbx exec --claim=victim -f victim.go:main.go -f go.mod \
		-f secret.go:secret/main.go -f go.mod:secret/go.mod \
		"go run main.go && cd secret && go run main.go" >out &&
	printf "paid account 1\nthe victim'"'"'s secret is s3cr3t-7030\n" \
		>expect &&
	test_cmp expect out
'

test_expect_success 'the attacker cannot read what the victim compiled' '
	gosbx exec --claim=attacker \
		"grep -rl s3cr3t-7030 \"\$(go env GOCACHE)\" /tmp \$HOME || true" \
		>found &&
	: >expect &&
	test_cmp expect found
'

test_expect_success 'the attacker can poison only its own cache' '
	gosbx exec --claim=attacker -f victim.go -f evil.go -f go.mod \
		-f poison.sh "sh poison.sh" >out &&
	grep "^rewrote [1-9]" out &&
	# the attack works where it lands: the attacker'"'"'s own build
	gosbx exec --claim=attacker "go run main.go" >out &&
	echo "paid account 666" >expect &&
	test_cmp expect out
'

test_expect_success 'the victim'"'"'s next build runs the victim'"'"'s code' '
	gosbx exec --claim=victim "go run main.go" >out &&
	echo "paid account 1" >expect &&
	test_cmp expect out
'

test_expect_success 'a new claim does not inherit the poisoned entries' '
	gosbx exec -f victim.go:main.go -f go.mod "go run main.go" >out &&
	echo "paid account 1" >expect &&
	test_cmp expect out
'

test_expect_success 'closing the claims leaves no cache behind' '
	gosbx close victim &&
	gosbx close attacker &&
	no_claims &&
	! test -e "$XDG_CACHE_HOME/gosbx/go-build"
'

test_done
