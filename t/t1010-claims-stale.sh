#!/bin/sh
test_description='gosbx claims: json listing, TTL expiry, dead claims, prune'
. "$(dirname "$0")/test-lib.sh"

claims_dir="$XDG_STATE_HOME/gosbx/claims"

if command -v bwrap >/dev/null &&
	bwrap --unshare-user --ro-bind / / true 2>/dev/null; then
	test_set_prereq SANDBOX
fi

test_atexit 'gosbx close --all'

# status NAME: the claim's status as `gosbx claims -o json` says
status() {
	gosbx claims -o json |
	python3 -c 'import json, sys
for c in json.load(sys.stdin):
    if c["name"] == sys.argv[1]:
        print(c["status"])' "$1"
}

# reason NAME: why the claim no longer runs, as `gosbx claims -o json` says
reason() {
	gosbx claims -o json |
	python3 -c 'import json, sys
for c in json.load(sys.stdin):
    if c["name"] == sys.argv[1]:
        print(c.get("reason", "-"))' "$1"
}

# status_is NAME STATUS
status_is() {
	test "$(status "$1")" = "$2"
}

# the cgroup directories listed in a claim's meta file
claim_cgroups() {
	awk '$1 ~ /^(memory|pids|cpu)$/ { print $2 }' "$claims_dir/$1/meta"
}

test_expect_success SANDBOX,PYTHON 'claims -o json has every field' '
	gosbx open -q --name=listed --ttl=90m >/dev/null &&
	gosbx exec --claim=listed -- "head -c 20000 /dev/zero >blob" &&
	gosbx open -q --name=netted --network >/dev/null &&
	gosbx claims -o json >claims.json &&
	python3 - claims.json <<-\EOF
	import json, sys, datetime
	claims = json.load(open(sys.argv[1]))
	assert [c["name"] for c in claims] == ["listed", "netted"], claims
	want = {"name", "backend", "status", "created", "last_used",
	        "age_s", "idle_s", "app_bytes", "ttl_s", "network", "keep"}
	for c in claims:
	    assert want <= set(c), (want - set(c), c)
	    assert c["backend"] == "local" and c["status"] == "ready", c
	    for k in ("created", "last_used"):
	        assert c[k].endswith("Z"), c
	        t = datetime.datetime.strptime(c[k], "%Y-%m-%dT%H:%M:%SZ")
	        now = datetime.datetime.utcnow()
	        assert abs((now - t).total_seconds()) < 600, (k, c)
	    for k in ("age_s", "idle_s", "app_bytes"):
	        assert isinstance(c[k], int) and c[k] >= 0, c
	    assert c["keep"] is True, c
	    assert c["idle_s"] <= c["age_s"], c
	l, n = claims
	assert l["ttl_s"] == 5400 and n["ttl_s"] == 3600, claims
	assert l["network"] is False and n["network"] is True, claims
	assert l["app_bytes"] >= 20000 > n["app_bytes"], claims
	EOF
'

test_expect_success SANDBOX 'the table shows the size in human units' '
	gosbx claims >list &&
	grep "^listed  *local  *ready  *[0-9]*s  *[0-9]*s  *2[0-9]K  *running$" list
'

test_expect_success SANDBOX,PYTHON 'a claim idle past its TTL expires' '
	gosbx open -q --name=brief --ttl=2s >/dev/null &&
	claim_cgroups brief >brief.cgroups &&
	test_retry 60 0.5 status_is brief expired &&
	gosbx claims >list &&
	grep "^brief  *local  *expired " list &&
	grep "^listed  *local  *ready " list
'

test_expect_success SANDBOX,PYTHON 'an expired claim is refused clearly, not reopened' '
	expect_code_err 125 gosbx exec --claim=brief -- true &&
	grep "claim .brief. expired" err &&
	expect_code_err 125 gosbx open --name=brief &&
	grep "already exists" err &&
	status_is brief expired
'

test_expect_success SANDBOX,PYTHON 'a killed sandbox is listed dead, never replaced' '
	gosbx open -q --name=victim >/dev/null &&
	claim_cgroups victim >victim.cgroups &&
	pid=$(awk "\$1 == \"pid\" { print \$2 }" "$claims_dir/victim/meta") &&
	child=$(awk "\$1 == \"child-pid\" { print \$2 }" "$claims_dir/victim/meta") &&
	test -n "$pid" && test -n "$child" &&
	kill -9 $child $pid &&
	test_retry 60 0.5 status_is victim dead &&
	gosbx claims >list &&
	grep "^victim  *local  *dead " list &&
	expect_code_err 125 gosbx exec --claim=victim -- true &&
	grep "claim .victim. is dead" err &&
	expect_code_err 125 gosbx open --name=victim &&
	grep "already exists" err &&
	status_is victim dead
'

# Issue 17: how a claim ended is said wherever it is listed or used,
# from bwrap's record (run/status), by any process.
test_expect_success SANDBOX,PYTHON 'how each claim ended: in claims -o json, under the table' '
	test "$(reason listed)" = - &&
	test "$(reason brief)" = "it expired after being idle for its TTL" &&
	gosbx open -q --name=twice >/dev/null &&
	pid=$(awk "\$1 == \"pid\" { print \$2 }" "$claims_dir/twice/meta") &&
	child=$(awk "\$1 == \"child-pid\" { print \$2 }" "$claims_dir/twice/meta") &&
	kill -9 $pid &&
	kill -9 $child &&
	test_retry 60 0.5 status_is twice dead &&
	test "$(reason twice)" = "its runtime is gone (how it ended was not recorded: bwrap was killed too)" &&
	gosbx close twice &&
	gosbx open -q --name=shot >/dev/null &&
	child=$(awk "\$1 == \"child-pid\" { print \$2 }" "$claims_dir/shot/meta") &&
	kill -9 $child &&
	test_retry 60 0.5 status_is shot dead &&
	test "$(reason shot)" = "its runtime was killed by signal 9 (Killed)" &&
	gosbx claims >list 2>list.err &&
	grep "^shot  *local  *dead " list &&
	grep -x "shot: dead: its runtime was killed by signal 9 (Killed)" list.err &&
	grep -x "brief: expired: it expired after being idle for its TTL" list.err &&
	! grep "^listed:" list.err
'

test_expect_success SANDBOX 'using a dead claim says how it died' '
	expect_code_err 125 gosbx exec --claim=shot -- true &&
	grep "^error: claim .shot. is dead: its runtime was killed by signal 9 (Killed), last log: " err
'

test_expect_success SANDBOX 'gosbx logs shows a dead claim'"'"'s log, then how it died' '
	gosbx logs shot >log 2>err &&
	grep "msg=listening\|level=INFO" log &&
	echo "gosbx: claim '"'"'shot'"'"' is dead: its runtime was killed by signal 9 (Killed)" >expect &&
	test_cmp expect err &&
	gosbx logs -f brief >log 2>err &&
	grep -x "gosbx: claim .brief. is expired: it expired after being idle for its TTL" err &&
	gosbx close shot
'

test_expect_success SANDBOX 'doctor warns about the stale claims' '
	gosbx doctor >out;
	grep "^warn  claims: 2 of 4 claims expired or dead: brief (expired), victim (dead)" out &&
	grep -A1 "^warn  claims: " out | grep "fix: gosbx claims prune"
'

test_expect_success SANDBOX 'prune --dry-run lists, removes nothing' '
	gosbx claims prune --dry-run >out &&
	printf "brief\nvictim\n" >expect &&
	test_cmp expect out &&
	test -d "$claims_dir/brief" &&
	test -d "$claims_dir/victim"
'

test_expect_success SANDBOX 'prune removes the expired and dead claims and their cgroups' '
	gosbx claims prune >out &&
	test_cmp expect out &&
	! test -e "$claims_dir/brief" &&
	! test -e "$claims_dir/victim" &&
	cat brief.cgroups victim.cgroups >cgroups &&
	if test_have_prereq ROOT; then test -s cgroups; fi &&
	while read cg; do
		! test -e "$cg" || return 1
	done <cgroups &&
	gosbx claims >list &&
	grep "^listed  *local  *ready " list &&
	grep "^netted  *local  *ready " list &&
	test_line_count = 3 list &&
	gosbx claims prune >out &&
	test_line_count = 0 out
'

test_expect_success SANDBOX,PYTHON 'close removes a dead claim and its cgroups' '
	gosbx open -q --name=dead2 >/dev/null &&
	claim_cgroups dead2 >dead2.cgroups &&
	child=$(awk "\$1 == \"child-pid\" { print \$2 }" "$claims_dir/dead2/meta") &&
	kill -9 $child &&
	test_retry 60 0.5 status_is dead2 dead &&
	gosbx close dead2 &&
	! test -e "$claims_dir/dead2" &&
	while read cg; do
		! test -e "$cg" || return 1
	done <dead2.cgroups
'

test_expect_success ROOT,SANDBOX 'the removed claims had v1 cgroups, all gone' '
	test -d /sys/fs/cgroup/memory || return 0
	cat brief.cgroups victim.cgroups dead2.cgroups >all.cgroups &&
	for n in brief victim dead2; do
		for c in memory pids; do
			grep "^/sys/fs/cgroup/$c/gosbx/$n-[a-z0-9]*\$" all.cgroups ||
			return 1
		done
	done &&
	while read cg; do
		! test -e "$cg" || return 1
	done <all.cgroups
'

test_done
