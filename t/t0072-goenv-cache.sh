#!/bin/sh
test_description='go env, asked once and kept on disk (lib/goenv.h)

gosbx open, resume and netd need a few `go env` values; one `go env -json`
answers them and is kept in $XDG_CACHE_HOME/gosbx/goenv, keyed by the go
binary, the go env files and the GO* environment. The tests forge the
kept answer to see whether gosbx reads it or asks go again.'
. "$(dirname "$0")"/test-lib.sh

real_version=$(go env GOVERSION)
export XDG_CACHE_HOME="$TRASH_DIRECTORY/cache"
export GOENV="$TRASH_DIRECTORY/go-env"
unset GOFLAGS GOSUMDB GOSBX_GOENV_CACHE

# make the kept answer say GOVERSION go9.99.9
forge() {
	set -- "$XDG_CACHE_HOME"/gosbx/goenv/* &&
	test $# = 1 &&
	sed -i "s/\"GOVERSION\": \"[^\"]*\"/\"GOVERSION\": \"go9.99.9\"/" "$1" &&
	grep -q go9.99.9 "$1"
}

test_expect_success 'the first gosbx asks go and keeps the answer' '
	gosbx version >out &&
	grep "^go: $real_version (" out &&
	set -- "$XDG_CACHE_HOME"/gosbx/goenv/* &&
	test $# = 1 &&
	head -n 1 "$1" >magic &&
	echo "gosbx goenv 1" >expect &&
	test_cmp expect magic &&
	grep "^go $(realpath "$(command -v go)") " "$1" &&
	grep "^user-env $GOENV none$" "$1" &&
	grep "\"GOSUMDB\":" "$1" &&
	test "$(stat -c %a "$1")" = 600 &&
	test "$(stat -c %a "$XDG_CACHE_HOME/gosbx/goenv")" = 700
'

test_expect_success 'the next gosbx reads it instead of running go' '
	forge &&
	gosbx version >out &&
	grep "^go: go9.99.9 (" out
'

test_expect_success 'go env -w changes the key: go is asked again' '
	go env -w GOFLAGS=-count=1 &&
	gosbx version >out &&
	grep "^go: $real_version (" out &&
	set -- "$XDG_CACHE_HOME"/gosbx/goenv/* &&
	test $# = 2 &&
	grep -l "\"GOFLAGS\": \"-count=1\"" "$@"
'

test_expect_success 'a GO variable of the environment changes the key' '
	rm -rf "$XDG_CACHE_HOME" &&
	gosbx version >/dev/null &&
	forge &&
	GOSUMDB=off gosbx version >out &&
	grep "^go: $real_version (" out &&
	set -- "$XDG_CACHE_HOME"/gosbx/goenv/* &&
	test $# = 2 &&
	grep -l "^env GOSUMDB=off$" "$@" >with &&
	xargs grep "\"GOSUMDB\": \"off\"" <with
'

test_expect_success 'a changed go binary changes the key' '
	rm -rf "$XDG_CACHE_HOME" &&
	mkdir -p goroot &&
	cp -R "$(go env GOROOT)"/bin goroot/ &&
	cp "$(go env GOROOT)"/go.env goroot/ 2>/dev/null || : &&
	ln -s "$(go env GOROOT)"/pkg goroot/pkg &&
	ln -s "$(go env GOROOT)"/src goroot/src &&
	PATH="$PWD/goroot/bin:$PATH" gosbx version >out &&
	grep "^go: $real_version (" out &&
	forge &&
	PATH="$PWD/goroot/bin:$PATH" gosbx version >out &&
	grep "^go: go9.99.9 (" out &&
	touch goroot/bin/go &&
	PATH="$PWD/goroot/bin:$PATH" gosbx version >out &&
	grep "^go: $real_version (" out
'

test_expect_success 'a kept answer of another key, or damaged, is not used' '
	rm -rf "$XDG_CACHE_HOME" &&
	gosbx version >/dev/null &&
	set -- "$XDG_CACHE_HOME"/gosbx/goenv/* &&
	sed -i "s/^env HOME=/env HOME=x/" "$1" &&
	forge &&
	gosbx version >out &&
	grep "^go: $real_version (" out &&
	set -- "$XDG_CACHE_HOME"/gosbx/goenv/* &&
	printf "gosbx goenv 1\\nnot json" >"$1" &&
	gosbx version >out &&
	grep "^go: $real_version (" out
'

test_expect_success 'GOSBX_GOENV_CACHE=off: nothing is read or kept' '
	rm -rf "$XDG_CACHE_HOME" &&
	gosbx version >/dev/null &&
	forge &&
	GOSBX_GOENV_CACHE=off gosbx version >out &&
	grep "^go: $real_version (" out &&
	rm -rf "$XDG_CACHE_HOME" &&
	GOSBX_GOENV_CACHE=off gosbx version >/dev/null &&
	! test -e "$XDG_CACHE_HOME/gosbx/goenv"
'

test_done
