#!/bin/sh
test_description='gosbx doctor: the local backend checks, failing checks and fixes'
. "$(dirname "$0")/test-lib.sh"

claims_dir="$XDG_STATE_HOME/gosbx/claims"

# start_runtime PORT: a gosbx-runtime on the host's loopback (url backend)
start_runtime() {
	gosbx-runtime --addr="127.0.0.1:$1" --workdir="$PWD/work" \
		>runtime.log 2>&1 &
	echo $! >runtime.pid
}
test_atexit 'test -f runtime.pid && kill $(cat runtime.pid)'

# bwrap, user namespaces and Go are required for a clean bill of health
if command -v bwrap >/dev/null && command -v go >/dev/null &&
	bwrap --unshare-user --ro-bind / / true 2>/dev/null; then
	test_set_prereq SANDBOX
	test_limits_prereq
fi

test_expect_success SANDBOX 'doctor passes on this machine' '
	gosbx doctor >out 2>err &&
	cat out &&
	grep "^ok    bwrap: " out &&
	grep "^ok    user namespaces: " out &&
	grep "^ok    seccomp: " out &&
	grep -E "^(ok|warn) +cgroups: " out &&
	grep -E "^(ok|warn) +memory limit: " out &&
	grep "^ok    go: " out &&
	grep -E "^(ok|warn) +python3: " out &&
	grep -E "^(ok|warn) +node: " out &&
	grep "^ok    state directory: .*gosbx/claims is writable" out &&
	grep "^ok    cache directory: .*gosbx is writable" out &&
	grep "^ok    gosbx-runtime: version " out &&
	grep "^ok    claims: 0 claims" out &&
	grep "^local backend: [0-9]* ok, [0-9]* warnings\{0,1\}, 0 failed$" out &&
	! grep "^fail" out
'

test_expect_success SANDBOX 'toolchains are looked for where sandboxes see them' '
	mkdir -p shadow &&
	printf "#!/bin/sh\nexit 3\n" >shadow/python3 &&
	printf "#!/bin/sh\nexit 3\n" >shadow/node &&
	chmod +x shadow/python3 shadow/node &&
	PATH="$TRASH_DIRECTORY/shadow:$PATH" gosbx doctor >out 2>err &&
	! grep "shadow/" out &&
	for t in python3 node
	do
		if test -x /usr/local/bin/$t || test -x /usr/bin/$t || test -x /bin/$t
		then
			grep -E "^ok +$t: .*\((/usr/local/bin|/usr/bin|/bin)/$t\)\$" out
		else
			grep -E "^warn +$t: .$t. not found in the sandbox.s PATH" out
		fi || return 1
	done
'

test_expect_success SANDBOX 'doctor created the state and cache directories' '
	test -d "$claims_dir" &&
	test -d "$XDG_CACHE_HOME/gosbx" &&
	! ls -a "$claims_dir" | grep gosbx-doctor
'

test_expect_success SANDBOX 'each warning comes with a fix' '
	grep -A1 "^warn" out >warns || return 0
	test $(grep -c "^warn" warns) = $(grep -c "^      fix: " warns)
'

test_expect_success 'without bwrap a check fails, with the fix, exit 1' '
	test_expect_code 1 env GOSBX_BWRAP=/nonexistent/bwrap \
		gosbx doctor >out &&
	grep "^fail  bwrap: " out &&
	grep -A1 "^fail  bwrap: " out | grep "^      fix: install bubblewrap" &&
	grep "^fail  user namespaces: " out &&
	grep "^local backend: .* [1-9][0-9]* failed$" out
'

test_expect_success 'a missing gosbx-runtime fails with the fix' '
	test_expect_code 1 env GOSBX_RUNTIME=/nonexistent/gosbx-runtime \
		gosbx doctor >out &&
	grep "^fail  gosbx-runtime: .*/nonexistent/gosbx-runtime" out &&
	grep -A1 "^fail  gosbx-runtime: " out | grep "^      fix: .*GOSBX_RUNTIME"
'

test_expect_success 'a gosbx-runtime that does not run fails' '
	printf "#!/bin/sh\nexit 3\n" >broken-runtime &&
	chmod +x broken-runtime &&
	test_expect_code 1 env GOSBX_RUNTIME="$PWD/broken-runtime" \
		gosbx doctor >out &&
	grep "^fail  gosbx-runtime: .*broken-runtime --version. failed" out
'

test_expect_success 'an unusable state directory fails with the fix' '
	echo not a directory >state-file &&
	test_expect_code 1 env XDG_STATE_HOME="$PWD/state-file" \
		gosbx doctor >out &&
	grep "^fail  state directory: cannot create .*state-file" out &&
	grep -A1 "^fail  state directory: " out |
		grep "^      fix: .*XDG_STATE_HOME"
'

test_expect_success 'an unusable cache directory fails' '
	test_expect_code 1 env XDG_CACHE_HOME="$PWD/state-file" \
		gosbx doctor >out &&
	grep "^fail  cache directory: " out
'

test_expect_success SANDBOX 'a dead claim is a warning whose fix is prune' '
	mkdir -p "$claims_dir/zombie/app" &&
	printf "name zombie\ncreated 1\nttl_ms 1000\n" >"$claims_dir/zombie/meta" &&
	gosbx doctor >out &&
	grep "^warn  claims: 1 of 1 claim expired or dead: zombie (dead)" out &&
	grep -A1 "^warn  claims: " out | grep "^      fix: gosbx claims prune$" &&
	gosbx claims prune >pruned &&
	echo zombie >expect &&
	test_cmp expect pruned &&
	! test -e "$claims_dir/zombie"
'

test_expect_success SANDBOX,PYTHON 'doctor -o json' '
	env GOSBX_BWRAP=/nonexistent/bwrap gosbx doctor -o json >out.json;
	test $? = 1 &&
	python3 - out.json <<-\EOF
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["backend"] == "local", d
	assert d["ok"] is False, d
	names = [c["name"] for c in d["checks"]]
	for n in ("bwrap", "user namespaces", "seccomp", "cgroups", "go",
	      "python3", "node", "state directory", "cache directory",
	      "gosbx-runtime", "claims"):
	    assert n in names, (n, names)
	s = d["summary"]
	assert s["ok"] + s["warn"] + s["fail"] == len(d["checks"]), s
	for c in d["checks"]:
	    assert c["status"] in ("ok", "warn", "fail"), c
	    assert (c["fix"] is None) == (c["status"] == "ok"), c
	    assert isinstance(c["message"], str) and c["message"], c
	bw = [c for c in d["checks"] if c["name"] == "bwrap"][0]
	assert bw["status"] == "fail" and "bubblewrap" in bw["fix"], bw
	EOF
'

test_expect_success 'doctor --json is -o json; -o yaml is a usage error' '
	test_expect_code 1 env GOSBX_BWRAP=/nonexistent/bwrap \
		gosbx doctor -o json >a.json &&
	test_expect_code 1 env GOSBX_BWRAP=/nonexistent/bwrap \
		gosbx doctor --json >b.json &&
	test_cmp a.json b.json &&
	test_expect_code_err 129 gosbx doctor -o yaml &&
	grep "unknown output format .yaml. (expected text or json)" err &&
	test_expect_code_err 129 gosbx doctor -o text --json &&
	grep "json and -o text do not go together" err
'

test_expect_success SANDBOX 'doctor --probe opens, runs and closes a sandbox' '
	gosbx doctor --probe >out &&
	if test_have_prereq LIMITS
	then
		grep "^ok    probe: opened a sandbox, ran .true. and closed it in [0-9]* ms" out
	else
		# without its default limits: a warning, not a failure
		grep "^warn  probe: opened a sandbox, ran .true. and closed it in [0-9]* ms .*; sandbox runs without some default limits" out
	fi &&
	gosbx claims -o json >claims.json &&
	grep -x "\[\]" claims.json
'

test_expect_success 'doctor --probe without a runtime fails' '
	test_expect_code 1 env GOSBX_RUNTIME=/nonexistent/gosbx-runtime \
		gosbx doctor --probe >out &&
	grep "^fail  probe: " out
'

test_expect_success 'the url backend: a runtime that answers' '
	port=$(test_free_port) &&
	mkdir work &&
	start_runtime $port &&
	test_retry 100 0.1 curl -sf "http://127.0.0.1:$port/" -o /dev/null &&
	gosbx --backend=url --url="http://127.0.0.1:$port" doctor --probe >out &&
	grep "^ok    runtime: http://127.0.0.1:$port answers (server .gosbx-runtime.)" out &&
	grep "^ok    probe: " out &&
	grep "^url backend: 2 ok, 0 warnings, 0 failed$" out
'

test_expect_success 'the url backend: nothing listening fails' '
	kill $(cat runtime.pid) &&
	rm runtime.pid &&
	test_expect_code 1 gosbx --backend=url --url="http://127.0.0.1:$(test_free_port)" \
		doctor >out &&
	grep "^fail  runtime: " out &&
	grep "^      fix: check --url" out &&
	test_expect_code 1 gosbx --backend=url doctor >out &&
	grep "^fail  runtime: the url backend needs a runtime URL" out
'

test_expect_success 'the kube backend has no checks yet' '
	test_expect_code 1 gosbx --backend=kube doctor
'

test_done
