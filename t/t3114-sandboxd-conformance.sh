#!/bin/sh
test_description='sandboxd Core conformance: upstream sandboxd and gosbx-runtime

One suite (t/sandboxd-conformance, from the contract of agent-sandbox
v1.0.3: packages/sandboxd/spec/filesystem/v1/filesystem.yaml,
spec/process/v1/process.proto, USER_GUIDE.md; the release ships no
runnable suite, only unit tests of its own server) runs against upstream
sandboxd built from the Go module at the pinned version
(t/lib-sandboxd.sh) and against gosbx-runtime --sandboxd-rest
--sandboxd-grpc; each case must pass on both.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-sandboxd.sh

command -v go >/dev/null 2>&1 || test_skip_all "go is needed"
test -x "$GOSBX_BUILD_DIR/gosbx-runtime" ||
	test_skip_all "gosbx-runtime is not built in $GOSBX_BUILD_DIR"

# conf <server> <case>...: the suite against server "up" or "gs"
conf() {
	_c_srv=$1
	shift
	"$TRASH_DIRECTORY/conformance/sandboxd-conformance" run \
		"$(cat "$_c_srv.rest")" "$(cat "$_c_srv.grpc")" \
		"$(cat "$_c_srv.root")" "$@" >out 2>&1
	_c_ret=$?
	cat out >&4
	return $_c_ret
}

test_expect_success 'setup: upstream sandboxd builds at the pinned version' '
	sbd_build &&
	"$SBD_BIN" --version >version &&
	grep "^sandboxd, version $SBD_VERSION " version
'

test_expect_success 'setup: the suite builds, both servers answer' '
	cp -R "$TEST_DIRECTORY/sandboxd-conformance" conformance &&
	(cd conformance &&
		test_real_go build -mod=mod -o sandboxd-conformance .) &&
	conformance/sandboxd-conformance list >cases &&
	test_line_count -gt 20 cases &&
	# the metadata case: one variable inside the prefix, one outside
	SANDBOX_CONFORMANCE=yes CONFORMANCE_HIDDEN=no \
		sbd_start_upstream --name=up &&
	SANDBOX_CONFORMANCE=yes CONFORMANCE_HIDDEN=no \
		sbd_start_gosbx --name=gs &&
	grep "sandboxd listening.*\"version\":\"$SBD_VERSION\"" up.log
'

test -s cases || {
	test_expect_success 'the suite lists its cases' 'false'
	test_done
}

for c in $(cat cases); do
	test_expect_success "upstream sandboxd: $c" "conf up $c"
	test_expect_success "gosbx-runtime: $c" "conf gs $c"
done

test_expect_success 'a failing case fails: an unknown one' '
	test_must_fail conf gs no-such-case &&
	grep "^not ok no-such-case: no such case" out
'

test_expect_success 'both servers still run' '
	kill -0 "$(cat up.pid)" && kill -0 "$(cat gs.pid)" &&
	sbd_stop up && sbd_stop gs
'

test_done
