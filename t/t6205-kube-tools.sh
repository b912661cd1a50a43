#!/bin/sh
test_description='the seed flows on the kube backend

gosbx demo, gosbx smoke (its gosbx mcp gets the backend) and a
run_go_code call through gosbx mcp, each against fake-kube over the
native port-forward, with real Go builds.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-kube.sh

CLAIMS=/apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/default/sandboxclaims

no_claims() {
	kube_curl "$CLAIMS" >claims.json &&
	test "$(kube_py claims.json "len(v[\"items\"])")" = 0
}

test_atexit "kube_stop kube"
test_expect_success 'setup: fake-kube' '
	kube_start -- --template=go-runtime-template
'
KUBECONFIG=$TRASH_DIRECTORY/kube.kubeconfig
GOSBX_BACKEND=kube
export KUBECONFIG GOSBX_BACKEND

cat >greetings <<\EOF
hello, Alice — from the multi-file sandbox sample
hello, Bob — from the multi-file sandbox sample
hello, Carol — from the multi-file sandbox sample
EOF

test_expect_success GO 'gosbx --backend=kube demo --flow=all' '
	gosbx --backend=kube demo --flow=all >out 2>err &&
	test_grep "^    claim=sandbox-claim-" out &&
	test_grep "^-- go run main.go \[exit=0\] -- hello from the sandbox! sum(1..100)=5050, go=go1\." out &&
	test_grep "^-- ./app (re-runs the binary built in the previous call) \[exit=0\] -- hello from the sandbox! sum(1..100)=5050" out &&
	sed -n "/^-- .\/app \[exit=0\] -- /,+2p" out |
		sed "s/^-- .\/app \[exit=0\] -- //" >actual &&
	test_cmp greetings actual &&
	test_grep "^-- go test ./... \[exit=0\] -- " out &&
	test_grep "^==> closing (deleting sandbox sandbox-claim-" out &&
	tail -n 1 out >last &&
	echo "==> PoC complete" >expect &&
	test_cmp expect last &&
	rt_poll 10 no_claims
'

test_expect_success GO 'gosbx --backend=kube smoke (gosbx mcp on kube)' '
	gosbx --backend=kube smoke >out 2>err &&
	test_grep "hello from mcp smoke" out &&
	test_grep "^hi from sub-package$" out &&
	test_grep "undefined: broken" out &&
	tail -n 1 out >last &&
	echo "smoke complete" >expect &&
	test_cmp expect last &&
	test_grep "^sandbox open: claim=sandbox-claim-" err &&
	test_grep "^closing (deleting sandbox sandbox-claim-" err &&
	rt_poll 10 no_claims
'

test_expect_success GO 'run_go_code through gosbx --backend=kube mcp' '
	cat >req.py <<-\EOF &&
	import json, subprocess, sys
	p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE,
	                     stdout=subprocess.PIPE)
	def send(m):
	    p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
	def answer(i):
	    while True:
	        a = json.loads(p.stdout.readline())
	        if a.get("id") == i:
	            return a
	send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
	      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
	                 "clientInfo": {"name": "t6205", "version": "1"}}})
	answer(1)
	send({"jsonrpc": "2.0", "method": "notifications/initialized"})
	main = "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from kube mcp\") }\n"
	send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
	      "params": {"name": "run_go_code", "arguments": {
	          "files": {"go.mod": "module x\n\ngo 1.19\n", "main.go": main},
	          "command": "go run main.go"}}})
	r = answer(2)["result"]
	open("result.txt", "w").write(r["content"][0]["text"])
	p.stdin.close()
	sys.exit(1 if r.get("isError") or p.wait() else 0)
	EOF
	python3 req.py gosbx --backend=kube mcp 2>mcp.err &&
	test_grep "^exit=0  (" result.txt &&
	test_grep "^hello from kube mcp$" result.txt &&
	test_grep "^sandbox open: claim=sandbox-claim-" mcp.err &&
	rt_poll 10 no_claims
'

test_done
