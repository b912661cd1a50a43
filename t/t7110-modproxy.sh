#!/bin/sh
test_description='the module proxy of netd with the real go command

lib/local/modproxy.c served on a port of 127.0.0.1 by the helper
modproxy-serve, as netd serves it to a sandbox on 127.0.0.1:3128/mod,
and used by the real go command as its GOPROXY with GOSUMDB on: go get,
go mod tidy and go run fetch through it; the host side fetches with the
go command through the user'"'"'s GOPROXY (the registry of `go env
GOPROXY`), into a cache it serves again without fetching; the checksum
database is relayed; the client'"'"'s go command still checks go.sum;
private modules and every path that is not a module version or a
checksum database resource are refused without fetching anything.'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq GO || test_skip_all 'go is not installed'
command -v curl >/dev/null || test_skip_all 'curl is not installed'

# The user's go settings (go env -w), which the tests' HOME hides.
real_goenv=$(HOME=$TEST_REAL_HOME XDG_CONFIG_HOME= go env GOENV 2>/dev/null)
if test -f "$real_goenv"; then
	GOENV=$real_goenv
	export GOENV
fi
host_gosumdb=$(go env GOSUMDB)
# the name of the checksum database (GOSUMDB "<name>[+<key>] [<url>]")
sumdb_name=${host_gosumdb%% *}
sumdb_name=${sumdb_name%%+*}
test "$sumdb_name" = sum.golang.google.cn && sumdb_name=sum.golang.org

# The module cache of the host side (as netd's), and the clients'.
cache=$TRASH_DIRECTORY/gomod
dl=$cache/cache/download
text_zip=$dl/golang.org/x/text/@v/v0.20.0.zip
test_atexit 'chmod -R u+w gomod client-* 2>/dev/null'

# start_proxy <port-file> [VAR=value...]: modproxy-serve in the
# background with the shared cache and the given settings; its log in
# <port-file>.log
start_proxy() {
	_sp_file=$1
	shift
	env "$@" modproxy-serve --port-file="$_sp_file" --cache="$cache" \
		2>"$_sp_file.log" &
	echo $! >"$_sp_file.pid"
	test_atexit "kill \$(cat $_sp_file.pid)"
	test_retry 600 0.1 test -s "$_sp_file" || {
		cat "$_sp_file.log" >&4
		return 1
	}
}

# client_go <client-cache> <go arguments>: the go command with the
# proxy as its GOPROXY and the user's GOSUMDB, as in a sandbox
client_go() {
	_cg_cache=$TRASH_DIRECTORY/$1
	shift
	env GOPROXY="$proxy" GOSUMDB="$host_gosumdb" GONOSUMDB= GONOPROXY= \
		GOPRIVATE= GOFLAGS=-mod=mod GOTOOLCHAIN=local \
		GOMODCACHE="$_cg_cache" go "$@"
}

# http_code <url> [curl options]: the status code only
http_code() {
	_hc_url=$1
	shift
	curl -s --path-as-is -o /dev/null -w "%{http_code}\n" "$@" "$_hc_url"
}

test_expect_success 'the module proxy starts and knows the checksum database' '
	start_proxy port &&
	proxy=http://127.0.0.1:$(cat port)/mod &&
	echo "proxy=$proxy" >proxy.env &&
	test -d "$cache" &&
	test "$(stat -c %a "$cache")" = 700 &&
	test "$(http_code "$proxy/sumdb/$sumdb_name/supported")" = 200 &&
	test "$(http_code "$proxy/sumdb/sum.example.org/supported")" = 404
'
test -f proxy.env && . ./proxy.env

mkdir -p m &&
cat >m/main.go <<\EOF || exit 1
package main

import (
	"fmt"

	"golang.org/x/text/language"
)

func main() {
	fmt.Println(language.MustParse("pt-BR").String())
}
EOF

# what the log says of golang.org/x/text v0.20.0
text="msg=module via=goproxy module=golang.org/x/text version=v0.20.0"

test_expect_success 'go get, go mod tidy and go run fetch through the proxy' '
	(
		cd m &&
		client_go client-1 mod init example.com/m &&
		client_go client-1 get golang.org/x/text@v0.20.0 &&
		client_go client-1 mod tidy &&
		client_go client-1 run . >../out
	) &&
	echo pt-BR >expect &&
	test_cmp expect out &&
	grep "^golang.org/x/text v0.20.0 h1:" m/go.sum &&
	test -f "$text_zip" &&
	test_grep "$text result=fetched" port.log
'

test_expect_success 'the client checked the sums with the database, through the proxy' '
	sumdb="module=sumdb/$sumdb_name" &&
	test_grep "$sumdb version=lookup/golang.org/x/text@v0.20.0 result=fetched" \
		port.log &&
	test_grep "$sumdb version=tile/8/.* result=fetched" port.log
'

test_expect_success 'a second client gets the version from the cache' '
	grep -c "$text result=fetched" port.log >fetched.before &&
	client_go client-2 mod download -json golang.org/x/text@v0.20.0 >dl.json &&
	test_grep "\"Sum\": \"h1:" dl.json &&
	grep -c "$text result=fetched" port.log >fetched.after &&
	test_cmp fetched.before fetched.after &&
	test_grep "$text result=hit bytes=[1-9]" port.log &&
	cmp client-2/cache/download/golang.org/x/text/@v/v0.20.0.zip "$text_zip"
'

test_expect_success 'HEAD answers the length of what GET serves' '
	curl -sS -I "$proxy/golang.org/x/text/@v/v0.20.0.zip" >head &&
	test_grep "^HTTP/1.1 200 OK" head &&
	test_grep "^Content-Length: $(stat -c %s "$text_zip")" head &&
	test_grep "^Content-Type: application/zip" head
'

test_expect_success 'requests for one new version at once all get it' '
	for i in 1 2 3 4
	do
		curl -sS -o "zip.$i" -w "%{http_code}\n" \
			"$proxy/github.com/google/uuid/@v/v1.6.0.zip" >"code.$i" &
	done &&
	wait &&
	echo 200 >expect &&
	for i in 1 2 3 4
	do
		test_cmp expect "code.$i" &&
		cmp "zip.$i" "$dl/github.com/google/uuid/@v/v1.6.0.zip" ||
		return 1
	done
'

test_expect_success 'upper-case module paths travel escaped' '
	client_go client-3 mod download -json \
		github.com/BurntSushi/toml@v1.4.0 >dl.json &&
	test_grep "\"Version\": \"v1.4.0\"" dl.json &&
	test -f "$dl/github.com/!burnt!sushi/toml/@v/v1.4.0.zip" &&
	test_grep "module=github.com/BurntSushi/toml version=v1.4.0 result=fetched" \
		port.log
'

test_expect_success 'list and @latest answer what the go command knows' '
	curl -sS -f "$proxy/golang.org/x/text/@v/list" >list &&
	test_grep -x "v0.20.0" list &&
	! grep -v "^v[0-9]*\.[0-9]*\.[0-9]*" list &&
	curl -sS -f "$proxy/golang.org/x/text/@latest" >latest &&
	test_grep "^{\"Version\":\"v0\.[0-9]*\.[0-9]*\"" latest
'

# (getting a toolchain is t7101'"'"'s: its zip is large)
test_expect_success 'the toolchain module is served like any other' '
	tc=v0.0.1-go1.26.0.linux-amd64 &&
	curl -sS -f "$proxy/golang.org/toolchain/@v/list" >list &&
	test_grep "^v0.0.1-go1.2[0-9]*\.[0-9]*\.linux-amd64\$" list &&
	curl -sS -f "$proxy/golang.org/toolchain/@v/$tc.info" >info &&
	test_grep "\"Version\":\"$tc\"" info
'

test_expect_success 'the client refuses a version whose go.sum line disagrees' '
	mkdir -p bad &&
	(
		cd bad &&
		cat >go.mod <<-\EOF &&
		module example.com/bad

		go 1.21

		require golang.org/x/text v0.20.0
		EOF
		echo "golang.org/x/text v0.20.0 h1:$(printf "%043d" 0)=" >go.sum &&
		test_expect_code_err 1 \
			client_go client-4 mod download golang.org/x/text
	) &&
	test_grep "SECURITY ERROR" bad/err &&
	test_grep "verifying golang.org/x/text@v0.20.0: checksum mismatch" \
		bad/err
'

test_expect_success 'the go command'"'"'s error reaches the client' '
	test_expect_code_err 1 \
		client_go client-5 mod download golang.org/x/text@v0.999.0 &&
	test_grep "404 gosbx: go list -m: golang.org/x/text@v0.999.0" err &&
	test_grep "version=v0.999.0 result=error why=" port.log
'

cat >hostile <<\EOF || exit 1
/../../etc/passwd
/%2e%2e/%2e%2e/etc/@v/list
/..%2f..%2fetc/@v/list
/golang.org/x/text/@v/v0.20.0.zip/../../../x
/golang.org/x/text/@v/v0.21.0.zip/..
/GOLANG.org/x/text/@v/list
/golang.org/x/Text/@v/list
/golang.org/x/text/@v/master.zip
/golang.org/x/text/@v/v0.21.0.zip%00
/golang.org/x/text/@v/v0.21.0.zip?x=1
/golang.org/x/text@v0.21.0/@v/list
/http://evil.example/x/@v/list
/evil.example:8080/x/@v/list
/-x.example/y/@v/list
/sumdb/sum.golang.org/../../etc/passwd
/sumdb/sum.golang.org/lookup/golang.org/x/text@master
/sumdb/sum.golang.org/tile/9/0/000
/sumdb/sum.golang.org/tile/8/0/000.p/256
/sumdb/evil.example/latest
/sumdb/evil.example/lookup/golang.org/x/text@v0.21.0
EOF

test_expect_success 'hostile requests get 400, 404 or 405 and fetch nothing' '
	find "$cache" | sort >cache.before &&
	wc -l <port.log >log.before &&
	while read -r path
	do
		http_code "$proxy$path" || return 1
	done <hostile >codes &&
	long=$(printf "%02000d" 0) &&
	http_code "$proxy/golang.org/$long/@v/list" >>codes &&
	http_code "$proxy/golang.org/x/text/@v/v0.21.0.zip" -X POST >>codes &&
	http_code "$proxy/golang.org/x/text/@v/v0.21.0.zip" -X DELETE >>codes &&
	! grep -v "^40[045]\$" codes &&
	test_line_count = 23 codes &&
	find "$cache" | sort >cache.after &&
	test_cmp cache.before cache.after &&
	sed "1,$(cat log.before)d" port.log >log.new &&
	test_line_count = 23 log.new &&
	! grep -v "result=denied" log.new
'

test_expect_success 'a private module is refused, even when it is in the cache' '
	start_proxy port-private "GOPRIVATE=example.com/*,golang.org/x" &&
	private=http://127.0.0.1:$(cat port-private)/mod &&
	curl -sS -o body -w "%{http_code}\n" \
		"$private/example.com/secret/@v/list" >code &&
	echo 404 >expect &&
	test_cmp expect code &&
	test_grep "gosbx: example.com/secret is private (GOPRIVATE);" body &&
	test_grep "vendor it or push it into the sandbox" body &&
	proxy=$private &&
	test_expect_code_err 1 \
		client_go client-6 mod download golang.org/x/text@v0.20.0 &&
	test_grep "golang.org/x/text is private (GOPRIVATE)" err &&
	test_grep "$text result=denied" port-private.log &&
	! grep "result=fetched\|result=hit" port-private.log
'

# gone <pid>: the process ended (a zombie that nobody reaps counts)
gone() {
	! test -d "/proc/$1" ||
		sed -n "s/^[0-9]* (.*) \([A-Z]\).*/\1/p" "/proc/$1/stat" 2>/dev/null |
		grep -q "^[ZX]\$"
}

test_expect_success 'the proxies end on SIGTERM with no sanitizer report' '
	for f in port port-private
	do
		kill "$(cat $f.pid)" &&
		test_retry 600 0.1 gone "$(cat $f.pid)" &&
		! grep -i "sanitizer\|runtime error" "$f.log" ||
		return 1
	done
'

test_done
