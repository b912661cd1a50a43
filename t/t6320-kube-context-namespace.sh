#!/bin/sh
test_description='the kubeconfig context namespace through every command

The context names the namespace "team" (the only one with a template and
a router): open, exec, push, claims, close, demo and mcp (go and sandbox
toolsets) all work in it without --namespace (issue 12: mcp used to
fill in "default").'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-kube.sh

CLAIMS=/apis/extensions.agents.x-k8s.io/v1alpha1/namespaces

kube_start -- --namespace=team --template=go-runtime-template

# a context whose namespace is team
sed -e "s/^    user: kind-fake\$/&\n    namespace: team/" \
	kube.kubeconfig >team.kubeconfig
KUBECONFIG=$PWD/team.kubeconfig
export KUBECONFIG

test_expect_success 'setup: the context names team' '
	grep "^    namespace: team\$" team.kubeconfig
'

export GOSBX_BACKEND=kube GOSBX_OPEN_TIMEOUT=30s

cat >mcp.py <<\EOF
import json, subprocess, sys
tools, calls = sys.argv[1], json.loads(sys.argv[2])
p = subprocess.Popen(['gosbx', 'mcp', '--tools=' + tools],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=open('mcp.log', 'w'), text=True)
def send(m):
    p.stdin.write(json.dumps(dict(m, jsonrpc='2.0')) + '\n')
    p.stdin.flush()
def recv(want):
    for line in p.stdout:
        m = json.loads(line)
        if m.get('id') == want:
            return m
    sys.exit('no answer to %d' % want)
send({'id': 0, 'method': 'initialize',
      'params': {'protocolVersion': '2025-06-18', 'capabilities': {},
                 'clientInfo': {'name': 't6320', 'version': '0'}}})
recv(0)
send({'method': 'notifications/initialized'})
for i, (name, args) in enumerate(calls, 1):
    send({'id': i, 'method': 'tools/call',
          'params': {'name': name, 'arguments': args}})
    r = recv(i)['result']
    print(json.dumps(r['content'][0]['text']))
    if r.get('isError'):
        sys.exit('call %d failed: %s' % (i, r['content'][0]['text']))
p.stdin.close()
sys.exit(p.wait())
EOF

test_expect_success 'open creates the claim in the context namespace' '
	gosbx open --name=nsc -q >out &&
	echo nsc >expect &&
	test_cmp expect out &&
	kube_expect 200 GET "$CLAIMS/team/sandboxclaims/nsc" &&
	kube_expect 404 GET "$CLAIMS/default/sandboxclaims/nsc"
'

test_expect_success 'exec and push reach it there' '
	echo pushed >f.txt &&
	gosbx push --claim=nsc f.txt &&
	gosbx exec --claim=nsc -- cat f.txt >out &&
	echo pushed >expect &&
	test_cmp expect out
'

test_expect_success 'claims lists it in team' '
	gosbx claims >out &&
	test_grep "^nsc  *team " out
'

test_expect_success 'close deletes it there' '
	gosbx close nsc 2>err &&
	test_grep "closed claim .nsc." err &&
	kube_expect 404 GET "$CLAIMS/team/sandboxclaims/nsc"
'

test_expect_success 'demo says and uses the context namespace' '
	gosbx demo --flow=smoke >out &&
	test_grep "^==> opening sandbox (namespace=team template=go-runtime-template" out
'

test_expect_success 'mcp go toolset: run_go_code opens in team' '
	python3 mcp.py go "[[\"run_go_code\", {\"files\": {\"a.txt\": \"from team\"}, \"command\": \"cat a.txt\"}]]" >out &&
	test_grep "from team" out &&
	test_grep "^opening sandbox (namespace=team template=go-runtime-template claim=\"\")\$" mcp.log
'

test_expect_success 'mcp sandbox toolset: sandbox_start opens in team' '
	python3 mcp.py sandbox "[[\"sandbox_start\", {\"sandbox\": \"s1\", \"namespace\": \"n\"}], [\"sandbox_run_command\", {\"sandbox\": \"s1\", \"namespace\": \"n\", \"command\": \"echo in-team\"}]]" >out &&
	test_grep "in-team" out
'

test_expect_success 'an explicit --namespace still wins' '
	test_must_fail gosbx --namespace=elsewhere open --name=nsd -q 2>err &&
	kube_expect 404 GET "$CLAIMS/team/sandboxclaims/nsd"
'

test_done
