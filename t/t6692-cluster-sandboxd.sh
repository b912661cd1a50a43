#!/bin/sh
test_description='the kube backend finds sandboxd in the pod and drives it

agent-sandbox v1.0 standardised the in-pod runtime (KEP-539.2,
packages/sandboxd): a workload that sets SANDBOXD_GRPC_ADDR and
SANDBOXD_REST_ADDR serves it, and the SDKs reach it over a port-forward
to the pod, not through the router. On a real control plane, a
SandboxTemplate shaped as upstream'"'"'s examples/sandboxd-sandbox runs
upstream sandboxd (built from the Go module) in its pod: gosbx exec,
exec -i, cp, gosbx mcp and reattaching reach it by discovery, over
port-forwards to its two ports; logs says sandboxd has none.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-sandboxd.sh
. "$TEST_DIRECTORY"/lib-cluster.sh
. "$TEST_DIRECTORY"/lib-mcp-raw.sh

test_expect_success 'setup: upstream sandboxd builds at the pinned version' '
	sbd_build
'

test_expect_success 'up.sh runs sandboxd for the pods whose image names it' '
	cluster_up --sandboxd="$SBD_BIN"
'

# upstream's examples/sandboxd-sandbox/sandbox-template.yaml, with the
# discovery variables of its USER_GUIDE.md
cat >sandboxd-template.yaml <<\EOF
apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxTemplate
metadata:
  name: sandboxd-template
spec:
  podTemplate:
    spec:
      automountServiceAccountToken: false
      containers:
        - name: sandboxd
          image: us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:v1.0.3
          args: ["--rest-port=8080", "--grpc-port=9090"]
          env:
            - name: SANDBOXD_GRPC_ADDR
              value: "localhost:9090"
            - name: SANDBOXD_REST_ADDR
              value: "localhost:8080"
          ports:
            - containerPort: 8080
            - containerPort: 9090
          readinessProbe:
            httpGet:
              path: /v1/health
              port: 8080
---
apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxWarmPool
metadata:
  name: sandboxd-warmpool
spec:
  replicas: 1
  sandboxTemplateRef:
    name: sandboxd-template
EOF

test_expect_success 'the template of upstream sandboxd and its warm pool are applied' '
	kadm apply --server-side -f - <sandboxd-template.yaml
'

sd() { gosbx_user --template=sandboxd-template "$@"; }

test_expect_success 'exec: a throwaway sandbox runs the command in sandboxd' '
	sd exec -- sh -c "echo out; echo err >&2; exit 3" >out 2>err
	test $? = 3 &&
	test "$(cat out)" = out &&
	grep "^err$" err &&
	# sandboxd ran it: its root is the pod directory pods.py gave it
	sd exec -- pwd >pwd &&
	grep "/pods/default_.*/workspace$" pwd
'

test_expect_success 'discovery: port-forwards to the pod ports, no router' '
	cluster_audit audit &&
	grep "^get system:serviceaccount:default:gosbx-client 101 /api/v1/namespaces/default/pods/sandboxd-warmpool-[^/]*/portforward?ports=9090\$" audit &&
	grep "^get system:serviceaccount:default:gosbx-client 101 /api/v1/namespaces/default/pods/sandboxd-warmpool-[^/]*/portforward?ports=8080\$" audit &&
	! grep "pods/sandbox-router" audit
'

test_expect_success 'open, then cp in and out of the kept claim' '
	sd open >claim 2>open.err &&
	# the warm pool'"'"'s new pod: its forward may lag, quietly
	! grep "port-forward" open.err &&
	claim=$(cat claim) &&
	test -n "$claim" &&
	seq 1 200000 >data &&
	sd cp data "$claim:sub/data" &&
	sd exec --claim="$claim" -- sha256sum sub/data >remote &&
	sha256sum <data >local &&
	test "$(cut -d" " -f1 remote)" = "$(cut -d" " -f1 local)" &&
	sd cp "$claim:sub/data" back &&
	test_cmp data back
'

test_expect_success 'exec -i: stdin reaches the command (WriteStdin)' '
	printf "line one\nline two\n" | sd exec -i --claim="$(cat claim)" -- wc -l >wc &&
	test "$(tr -d " " <wc)" = 2
'

test_expect_success 'exec -t: a terminal in the pod, of the local size (Start with a PTY)' '
	cat >tty.sh <<-EOF &&
	stty rows 30 cols 100
	exec "$CLUSTER_SCRIPTS/in.sh" --dir="$CLUSTER_DIR" gosbx --backend=kube \\
		--kubeconfig="$CLUSTER_USER" exec -t --claim="$(cat claim)" -- \\
		"tty; stty size; exit 5"
	EOF
	expect_code 5 script -qec "sh tty.sh" /dev/null >tty.out </dev/null &&
	grep "^/dev/pts/[0-9]" tty.out &&
	grep "^30 100" tty.out
'

test_expect_success 'files persist across reattaching; a hostile path is refused' '
	sd exec --claim="$(cat claim)" -- cat sub/data >again &&
	test_cmp data again &&
	sd exec --claim="$(cat claim)" -- ln -s /etc out-link &&
	expect_code_err 125 sd cp "$(cat claim):out-link/passwd" stolen &&
	! test -e stolen &&
	grep "sandboxd refuses paths outside its root" err
'

test_expect_success 'logs: sandboxd has none, said plainly' '
	expect_code_err 125 sd logs "$(cat claim)" &&
	grep "runs sandboxd, which serves no log of its own" err
'

test_expect_success 'gosbx mcp: run_go_code builds and runs Go in sandboxd' '
	MCP_SERVER="$CLUSTER_SCRIPTS/in.sh --dir=$CLUSTER_DIR gosbx --backend=kube --kubeconfig=$CLUSTER_USER --template=sandboxd-template mcp --persistent --claim=$(cat claim)" &&
	export MCP_SERVER &&
	mcp_run "
c = Client()
files = {\"go.mod\": \"module m\\ngo 1.22\\n\",
	 \"main.go\": \"package main\\nimport \\\"fmt\\\"\\nfunc main() { fmt.Println(\\\"from go\\\") }\\n\"}
res, text = ok(c.call(\"run_go_code\", files=files, command=\"go run .\"))
assert \"from go\" in text, text
res, text = err(c.call(\"run_go_code\", command=\"exit 7\"))
assert \"exit=7\" in text, text
c.close()
" &&
	sd exec --claim="$(cat claim)" -- cat main.go >main.go &&
	grep "from go" main.go
'

test_expect_success 'close deletes the claim' '
	sd close "$(cat claim)" &&
	test_must_fail kadm get sandboxclaim "$(cat claim)"
'

test_done
