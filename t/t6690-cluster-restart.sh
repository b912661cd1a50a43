#!/bin/sh
test_description='etcd compacted and the API server restarted while gosbx open waits'
# A real control plane: while gosbx open waits for its claim (the
# agent-sandbox controller held with SIGSTOP), etcd is compacted past
# the claim's resourceVersion and kube-apiserver is restarted. gosbx's
# watch breaks, the restarted server no longer has that history, so
# gosbx watches again, and lists after the restarting server's 429 or a
# 410 Gone; then it sees the claim Ready once the controller runs.
. "$(dirname "$0")"/test-lib.sh
GOSBX_TEST_BACKEND=cluster
. "$TEST_DIRECTORY"/lib-backend.sh

# etcd <path> <json>: POST to etcd's JSON gateway, the answer on stdout
etcd() {
	cluster_in python3 -c '
import sys, urllib.request
r = urllib.request.Request(sys.argv[1] + sys.argv[2], data=sys.argv[3].encode(),
	headers={"Content-Type": "application/json"})
print(urllib.request.urlopen(r, timeout=10).read().decode())' \
		"$(cat "$CLUSTER_DIR/etcd-url")" "$1" "$2"
}

# restart_apiserver [<flag>...]: SIGTERM (SIGKILL 5 s later), start it
# again with the same command line (and these flags) in the cluster's
# network namespace
restart_apiserver() {
	cluster_in python3 -c '
import os, subprocess, sys, time
d = sys.argv[1]
pid = int(open(d + "/kube-apiserver.pid").read())
argv = open("/proc/%d/cmdline" % pid, "rb").read().split(b"\0")[:-1]
argv += [a.encode() for a in sys.argv[2:]]
def gone():
	try:
		return open("/proc/%d/stat" % pid).read().split(") ")[1][0] == "Z"
	except FileNotFoundError:
		return True
# SIGTERM; the graceful end waits for long requests: SIGKILL after 5 s
for sig, tries in ((15, 100), (9, 200)):
	os.kill(pid, sig)
	for _ in range(tries):
		if gone():
			break
		time.sleep(0.05)
	if gone():
		break
else:
	sys.exit("kube-apiserver did not stop")
log = open(d + "/kube-apiserver.log", "ab")
p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
	stderr=subprocess.STDOUT, start_new_session=True)
open(d + "/kube-apiserver.pid", "w").write("%d\n" % p.pid)' "$CLUSTER_DIR" "$@"
}

# compact_after <name>: two writes (configmaps <name>-1 and -2), then
# etcd compacted at its newest revision: a watch from before them asks
# for the first, which the compaction removed
compact_after() {
	kadm create configmap "$1-1" --from-literal=a=b &&
	kadm create configmap "$1-2" --from-literal=a=b &&
	etcd /v3/kv/range "{\"key\":\"AA==\",\"limit\":1}" >range.json &&
	rev=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"header\"][\"revision\"])" range.json) &&
	etcd /v3/kv/compaction "{\"revision\":\"$rev\",\"physical\":true}"
}

api_ready() {
	test "$(kadm get --raw=/readyz 2>/dev/null)" = ok
}

# rbac_ready: the restarted server's authorizer lets gosbx watch claims
rbac_ready() {
	test "$(kuser auth can-i watch sandboxclaims.extensions.agents.x-k8s.io 2>/dev/null)" = yes
}

# watching <claim>: gosbx's watch of the claim has started
watching() {
	cluster_audit audit.txt &&
	grep -q "^watch system:serviceaccount:default:gosbx-client 200 .*/sandboxclaims?.*name%3D$1&" audit.txt
}

test_expect_success 'open rides out a compaction and an API server restart' '
	asc=$(cat "$CLUSTER_DIR/agent-sandbox-controller.pid") &&
	kill -STOP "$asc" &&
	test_atexit "kill -CONT $asc" &&
	{ gosbx -v --open-timeout=180s open -q --name=rs >out 2>err & } &&
	pid=$! &&
	test_retry 300 0.1 kadm get sandboxclaim rs &&
	compact_after after-claim &&
	restart_apiserver &&
	test_retry 900 0.1 api_ready &&
	kill -CONT "$asc" &&
	{ wait $pid; status=$?; } &&
	cat err >&3 &&
	test $status = 0 &&
	# the watch broke with the server; gosbx listed the claim again
	grep "^kube: GET .*/sandboxclaims?fieldSelector=metadata.name%3Drs: 200 " err &&
	echo rs >expect &&
	test_cmp expect out &&
	gosbx exec --claim=rs -- echo after >out &&
	echo after >expect &&
	test_cmp expect out &&
	gosbx close rs
'

# A restarted server with its watch cache answers a watch from an old
# revision 429 until its cache is filled, then from the cache (the test
# above lists after the 429); one without (--watch-cache=false) sends
# the watch to etcd, which no longer has the claim's revision: the real
# 410 Gone of the API concepts ("the resourceVersion for the provided
# watch is too old").
test_expect_success 'without a watch cache the restarted server answers 410' '
	asc=$(cat "$CLUSTER_DIR/agent-sandbox-controller.pid") &&
	kill -STOP "$asc" &&
	test_atexit "kill -CONT $asc" &&
	{ gosbx -v --open-timeout=180s open -q --name=gone >out 2>err & } &&
	pid=$! &&
	# gosbx watches the claim (the audit log says), then is held while
	# the server restarts, so that its next watch finds it ready
	test_retry 300 0.1 watching gone &&
	kill -STOP $pid &&
	compact_after after-gone &&
	restart_apiserver --watch-cache=false &&
	test_retry 900 0.1 api_ready &&
	test_retry 300 0.1 rbac_ready &&
	kill -CONT $pid &&
	kill -CONT "$asc" &&
	{ wait $pid; status=$?; } &&
	cat err >&3 &&
	test $status = 0 &&
	# the watch from the old revision got a 410, then gosbx listed
	grep -n -E "^kube: watch of claim gone: ERROR event 410: |^kube: GET .*/sandboxclaims\?.*watch=1.*: 410 " err >gone &&
	grep -n "^kube: GET .*/sandboxclaims?fieldSelector=metadata.name%3Dgone: 200 " err >lists &&
	test "$(head -n 1 gone | cut -d: -f1)" -lt "$(tail -n 1 lists | cut -d: -f1)" &&
	echo gone >expect &&
	test_cmp expect out &&
	gosbx close gone
'

test_done
