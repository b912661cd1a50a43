#!/bin/sh
test_description='local network: Go modules through the host'"'"'s verified cache

A sandbox has no network, yet go get, go mod tidy and go run with
third-party modules work: GOPROXY names netd, which fetches a module
version once through the user'"'"'s GOPROXY with the go command (which
verifies it against GOSUMDB) into a cache no sandbox can write, and
serves it (Documentation/protocol/network.md "Go modules"). A go.mod that asks for a newer
Go gets that toolchain the same way. --modules=off closes the path.
These tests use the real module proxy of `go env GOPROXY`.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test_have_prereq GO || test_skip_all 'go is not installed'


# the host's go: what sandboxes get
host_go_version=$(go env GOVERSION)

mkdir -p mod &&
cat >mod/main.go <<\EOF || exit 1
package main

import (
	"fmt"

	"github.com/google/uuid"
)

func main() {
	fmt.Println(len(uuid.NewString()))
}
EOF

test_expect_success 'the sandbox runs the Go of the PATH, first on its PATH' '
	gosbx exec -- sh -c "go env GOVERSION; command -v go" >out &&
	test_grep "^$host_go_version\$" out &&
	echo "$(go env GOROOT)/bin/go" >expect &&
	sed -n 2p out >actual &&
	test_cmp expect actual
'

test -x /usr/lib/go-1.19/bin/go && test_set_prereq DEBIAN_GO

test_expect_success DEBIAN_GO '--go picks another Go: a GOROOT or a go binary' '
	gosbx exec --go=/usr/lib/go-1.19 -- go version >out &&
	test_grep "^go version go1.19" out &&
	gosbx exec --go=/usr/lib/go-1.19/bin/go -- sh -c "command -v go" >out &&
	echo /usr/lib/go-1.19/bin/go >expect &&
	test_cmp expect out
'

test_expect_success 'a --go that is no Go is an error, not a warning' '
	test_must_fail with_err gosbx exec --go=/nonexistent -- true &&
	test_grep "neither an executable go" err &&
	test_must_fail with_err gosbx exec --go=/etc -- true &&
	test_grep "go" err &&
	test_expect_code 129 gosbx exec --go= -- true
'

test_expect_success 'gosbx doctor says the Go, where modules come from and how they are checked' '
	gosbx doctor >out 2>&1 &&
	test_grep "^ok    go: go version $host_go_version " out &&
	test_grep "^ok    go modules: on: .* GOPROXY=$(go env GOPROXY) .* GOSUMDB=$(go env GOSUMDB) by the go command" out &&
	test_grep "^ok    network: none by default" out &&
	GOSUMDB=off gosbx doctor >out 2>&1;
	test_grep "^warn  go modules: GOSUMDB=off: " out
'

test_expect_success 'go get, go mod tidy and go run fetch a module with no network' '
	gosbx exec --file=mod/main.go -- sh -c "
		go mod init example.com/m &&
		go get github.com/google/uuid@v1.6.0 &&
		go mod tidy &&
		go run ." >out &&
	echo 36 >expect &&
	test_cmp expect out &&
	test -f "$XDG_CACHE_HOME/gosbx/gomod/cache/download/github.com/google/uuid/@v/v1.6.0.zip"
'

test_expect_success 'a second sandbox gets the module from the cache' '
	name=$(gosbx open) &&
	test_atexit "gosbx close $name" &&
	gosbx exec --claim="$name" --file=mod/main.go -- sh -c "
		go mod init example.com/m &&
		go get github.com/google/uuid@v1.6.0 && go run ." >out &&
	echo 36 >expect &&
	test_cmp expect out &&
	gosbx logs "$name" >log &&
	test_grep "msg=module .*module=github.com/google/uuid.*result=hit" log
'

test_expect_success 'the go command in the sandbox checks go.sum against what is served' '
	test_expect_code_err 1 gosbx exec --file=mod/main.go -- sh -c "
		go mod init example.com/m &&
		echo \"github.com/google/uuid v1.6.0 h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\" >go.sum &&
		echo \"require github.com/google/uuid v1.6.0\" >>go.mod &&
		go run ." &&
	test_grep "SECURITY ERROR" err &&
	test_grep "checksum mismatch" err
'

test_expect_success 'the shared cache is not in the sandbox' '
	test -d "$XDG_CACHE_HOME/gosbx/gomod" &&
	test_must_fail gosbx exec -- ls "$XDG_CACHE_HOME/gosbx/gomod"
'

test_expect_success '--modules=off closes the path with Go'"'"'s own message' '
	test_expect_code_err 1 gosbx exec --modules=off --file=mod/main.go -- sh -c "
		go mod init example.com/m && go get github.com/google/uuid@v1.6.0" &&
	test_grep "module lookup disabled by GOPROXY=off" err
'

test_expect_success 'the sandbox cannot make the host fetch anything but module versions' '
	gosbx exec -- sh -c "
		for u in /mod/..%2f..%2fetc/@v/list \
			/mod/github.com/google/uuid/@v/v1.6.0.zip/../../x \
			/mod/file:%2f%2f%2fetc%2fpasswd/@v/list \
			/mod/sumdb/evil.example/lookup/x@v1.0.0 \
			/etc/passwd
		do
			curl -s --noproxy 127.0.0.1 -o /dev/null -w \"%{http_code}\n\" http://127.0.0.1:3128\$u
		done" >codes &&
	test_line_count = 5 codes &&
	! grep -v "^40[04]\$" codes &&
	test ! -e "$XDG_CACHE_HOME/gosbx/gomod/cache/download/evil.example"
'

# the newest patch of the host's minor release that the proxy has
newer_go() {
	minor=$(echo "$host_go_version" | sed -n "s/^go\([0-9]*\.[0-9]*\).*/\1/p")
	go list -m -versions golang.org/toolchain 2>/dev/null | tr " " "\n" |
	sed -n "s/^v0.0.1-go\($minor\.[0-9]*\)\.linux-amd64\$/\1/p" |
	sort -t. -k3 -n | tail -1
}

test_expect_success 'a go.mod that asks for a newer Go gets that toolchain' '
	newer=$(newer_go) &&
	test -n "$newer" &&
	if test "go$newer" = "$host_go_version"
	then
		say "the host has the newest $newer: nothing newer to get"
	else
		gosbx exec -- sh -c "
			printf \"module example.com/t\n\ngo $newer\n\" >go.mod &&
			go version" >out &&
		test_grep "go version go$newer " out
	fi
'

test_expect_success 'without modules, a go.mod that asks for a newer Go fails naming both and how to get it' '
	test_expect_code_err 1 gosbx exec --modules=off -- sh -c "
		printf \"module example.com/t\n\ngo 1.999\n\" >go.mod &&
		go list -m" &&
	test_drop_limits_warning err &&
	test_line_count = 2 err &&
	test_grep "go.mod requires go >= 1.999 (running go ${host_go_version#go}; GOTOOLCHAIN=local)" err &&
	test_grep "^gosbx: this sandbox has go ${host_go_version#go} and may not fetch go 1.999 .*--go=<a GOROOT of go 1.999 or newer>" err
'

test_expect_success 'a go line that the sandbox Go meets gets no hint' '
	gosbx exec --modules=off -- sh -c "
		printf \"module example.com/t\n\ngo 1.20\n\" >go.mod &&
		go list -m" >out 2>err &&
	test_drop_limits_warning err &&
	test_line_count = 0 err
'

test_done
