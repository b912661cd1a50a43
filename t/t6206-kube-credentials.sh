#!/bin/sh
test_description='the kube backend follows rotating API credentials

fake-kube --api-token-file requires a bearer token that the test
rotates. Clients authenticate with a kubeconfig tokenFile (re-read when
the file changes, like a projected service-account token) or an exec
plugin (an ExecCredential whose token the plugin reads from a file).
After each rotation the port-forward tunnels are broken, so the next
runtime request needs a new WebSocket upgrade: a new gosbx process and,
the point of it, the same long-lived gosbx mcp process must both
authenticate with the new token (token file re-read; cached exec token
refused with 401, forgotten and fetched anew; an exec token near its
expiry fetched anew before use). A token the client cannot renew gives
a clear error naming the pod, not a hang.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-kube.sh

CLAIMS=/apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/default/sandboxclaims
PF_401="port-forward to pod 'default/sandbox-router-[^']*' port 8080 refused: HTTP 401: Unauthorized"

# curl to the API with the token the server currently accepts
api_curl() {
	kube_curl "$@" -H "Authorization: Bearer $(cat server-token)"
}

no_claims() {
	api_curl "$CLAIMS" >claims.json &&
	test "$(kube_py claims.json "len(v[\"items\"])")" = 0
}

# mcp_drive <python>: drive `gosbx mcp $MCP_ARGS` over stdio with the
# client of t/lib_mcp_raw.py (Client, ok, err) and sh(<command>); the
# server's stderr goes to server.err; a hang fails after 10 minutes
mcp_drive() {
	rm -f server.err &&
	MCP_SERVER="gosbx mcp $MCP_ARGS" \
	PYTHONPATH="$TEST_DIRECTORY${PYTHONPATH:+:$PYTHONPATH}" \
		timeout 600 python3 -c "from lib_mcp_raw import *
import subprocess
def sh(c):
    subprocess.run(c, shell=True, check=True)
$1" || {
		cat server.err >&4
		return 1
	}
}

# count_401 <pattern>: refused requests fake-kube logged (matching)
count_401() {
	grep -c "^fake-kube: 401 Unauthorized: .*$1" kube.log || :
}

test_atexit "kube_stop kube"
test_expect_success 'setup: fake-kube requiring a bearer token' '
	echo tok-1 >server-token &&
	kube_start --insecure -- --template=go-runtime-template \
		--api-token-file="$TRASH_DIRECTORY/server-token" &&
	url=$(kube_url) &&
	test_expect_code 22 curl -sSf -o /dev/null "$url/api" &&
	api_curl /api >api.json &&
	test_grep APIVersions api.json &&

	# rotate.sh <token> <file>...: replace each file at once (rename,
	# as the kubelet swaps a projected token)
	cat >rotate.sh <<-\EOF &&
	tok=$1
	shift
	for f in "$@"; do
		echo "$tok" >"$f.tmp" && mv "$f.tmp" "$f" || exit 1
	done
	EOF
	# break.sh: close every port-forward WebSocket (there must be one)
	cat >break.sh <<-EOF &&
	curl -sS --max-time 30 -X POST "$url/fake/break-tunnels" >broken.json &&
	python3 -c "import json, sys; sys.exit(0 if json.load(open(\"broken.json\"))[\"broken\"] > 0 else 1)"
	EOF

	cat >plugin.sh <<-EOF &&
	#!/bin/sh
	echo run >>"$TRASH_DIRECTORY/plugin.log"
	ttl=\$(cat "$TRASH_DIRECTORY/plugin-ttl")
	exp=\$(date -u -d "+\$ttl seconds" +%Y-%m-%dT%H:%M:%SZ)
	printf "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\",\"expirationTimestamp\":\"%s\"}}\n" \
		"\$(cat "$TRASH_DIRECTORY/plugin-token")" "\$exp"
	EOF
	chmod +x plugin.sh &&

	for user in tokenfile exec static; do
		cat >$user.kubeconfig <<-EOF || return 1
		apiVersion: v1
		kind: Config
		clusters:
		- name: fake
		  cluster:
		    server: $url
		contexts:
		- name: fake
		  context:
		    cluster: fake
		    user: $user
		current-context: fake
		users:
		- name: $user
		  user:
		EOF
	done &&
	echo "    tokenFile: client-token" >>tokenfile.kubeconfig &&
	cat >>exec.kubeconfig <<-EOF &&
	    exec:
	      apiVersion: client.authentication.k8s.io/v1
	      command: ./plugin.sh
	      interactiveMode: Never
	EOF
	echo "    token: not-the-token" >>static.kubeconfig &&
	cp server-token client-token
'
test_expect_success 'fake-kube over TLS: the client certificate and the token are both needed' '
	echo tls-tok >tls-token &&
	kube_start --name=tls --no-runtime -- \
		--api-token-file="$TRASH_DIRECTORY/tls-token" &&
	KUBE=tls kube_expect 401 GET /api/v1/namespaces/default/pods &&
	test "$(kube_py body "v[\"reason\"]")" = Unauthorized &&
	KUBE=tls kube_expect 401 GET /api/v1/namespaces/default/pods \
		-H "Authorization: Bearer wrong" &&
	KUBE=tls kube_expect 200 GET /api/v1/namespaces/default/pods \
		-H "Authorization: Bearer tls-tok" &&
	curl -sS --max-time 60 --cacert "$KUBE_PKI/ca.crt" -o body \
		-w "%{http_code}" -H "Authorization: Bearer tls-tok" \
		"$(kube_url tls)/api/v1/namespaces/default/pods" >status &&
	echo 401 >expect && echo >>status && test_cmp expect status &&
	echo tls-tok-2 >tls-token &&
	KUBE=tls kube_expect 401 GET /api/v1/namespaces/default/pods \
		-H "Authorization: Bearer tls-tok" &&
	KUBE=tls kube_expect 200 POST /fake/break-tunnels &&
	kube_stop tls
'

GOSBX_BACKEND=kube
KUBECONFIG=$TRASH_DIRECTORY/tokenfile.kubeconfig
export GOSBX_BACKEND KUBECONFIG

test_expect_success 'tokenFile: a kept claim and a command' '
	gosbx open -q >name &&
	gosbx exec --claim="$(cat name)" -- echo one >out &&
	echo one >expect && test_cmp expect out
'

test_expect_success 'tokenFile rotated: a new gosbx exec works' '
	sh rotate.sh tok-2 server-token client-token &&
	gosbx exec --claim="$(cat name)" -- echo two >out &&
	echo two >expect && test_cmp expect out
'

test_expect_success 'tokenFile: the same gosbx mcp forward re-reads the rotated token' '
	n401=$(count_401 /portforward) &&
	MCP_ARGS="--persistent --claim=$(cat name)" &&
	mcp_drive "
c = Client()
res, text = ok(c.call(\"run_go_code\", command=\"echo before\"))
assert \"before\" in text, text
sh(\"sh rotate.sh tok-3 server-token client-token && sh break.sh\")
res, text = ok(c.call(\"run_go_code\", command=\"echo after\"))
assert \"after\" in text, text
c.close()
" &&
	# the file was read anew: no upgrade was refused
	test "$(count_401 /portforward)" = "$n401"
'

test_expect_success 'a token the client cannot renew: a clear error, no hang; then recovery' '
	MCP_ARGS="--persistent --claim=$(cat name)" &&
	mcp_drive "
c = Client()
ok(c.call(\"run_go_code\", command=\"echo before\"))
# the server moves on, the client file does not
sh(\"sh rotate.sh tok-4 server-token && sh break.sh\")
res, text = err(c.call(\"run_go_code\", command=\"echo refused\"))
# the result names the cause, not only the reset connection
assert \"refused: HTTP 401: Unauthorized\" in text, text
# the file catches up: the same forward works again
sh(\"sh rotate.sh tok-4 client-token\")
res, text = ok(c.call(\"run_go_code\", command=\"echo recovered\"))
assert \"recovered\" in text, text
c.close()
" &&
	cat server.err >&4 &&
	test_grep "$PF_401 (again with a fresh credential)" server.err
'

test_expect_success 'a wrong static token: a clear error, no retry loop' '
	fails_err env KUBECONFIG="$TRASH_DIRECTORY/static.kubeconfig" \
		gosbx exec --claim="$(cat name)" -- true &&
	test_grep "Unauthorized" err
'

KUBECONFIG=$TRASH_DIRECTORY/exec.kubeconfig

test_expect_success 'exec plugin: a cached token (1 h) is reused across processes' '
	echo 3600 >plugin-ttl &&
	sh rotate.sh tok-5 server-token plugin-token &&
	gosbx exec --claim="$(cat name)" -- echo five >out &&
	echo five >expect && test_cmp expect out &&
	test_line_count = 1 plugin.log &&
	gosbx exec --claim="$(cat name)" -- echo five >out &&
	test_cmp expect out &&
	test_line_count = 1 plugin.log
'

test_expect_success 'exec plugin: the same gosbx mcp forward gets 401, forgets the token, runs the plugin again' '
	n401=$(count_401 /portforward) &&
	MCP_ARGS="--persistent --claim=$(cat name)" &&
	mcp_drive "
c = Client()
ok(c.call(\"run_go_code\", command=\"echo before\"))
sh(\"sh rotate.sh tok-6 server-token plugin-token && sh break.sh\")
res, text = ok(c.call(\"run_go_code\", command=\"echo after\"))
assert \"after\" in text, text
c.close()
" &&
	# one refused upgrade, one more plugin run (the cache was forgotten)
	test "$(count_401 "/portforward (wrong bearer token)")" = $((n401 + 1)) &&
	test_line_count = 2 plugin.log
'

test_expect_success 'exec plugin: a token near its expiry is fetched anew before the upgrade' '
	echo 5 >plugin-ttl &&
	rm -rf "$XDG_CACHE_HOME/gosbx/kube-exec" &&
	n401=$(count_401 .) &&
	MCP_ARGS="--persistent --claim=$(cat name)" &&
	mcp_drive "
c = Client()
ok(c.call(\"run_go_code\", command=\"echo before\"))
n = len(open(\"plugin.log\").readlines())
sh(\"sh rotate.sh tok-7 server-token plugin-token && sh break.sh\")
res, text = ok(c.call(\"run_go_code\", command=\"echo after\"))
assert \"after\" in text, text
assert len(open(\"plugin.log\").readlines()) > n
c.close()
" &&
	# fetched before use: nothing was refused
	test "$(count_401 .)" = "$n401"
'

test_expect_success 'close' '
	gosbx close "$(cat name)" &&
	rt_poll 10 no_claims
'

test_done
