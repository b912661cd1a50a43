#!/bin/sh
test_description='the upstream Python SDK drives gosbx-runtime'"'"'s sandboxd

k8s-agent-sandbox 1.0.8 from PyPI (a venv, t/lib-sdk.sh), through its
public API only (t/sandboxd-python-sdk/sdk.py), against fake-kube as in
t3112: a warm pool whose template starts gosbx-runtime with the sandboxd
listeners on its (loopback) pod IP. The SDK chooses the runtime API by
its connection config: SandboxdInClusterConnectionConfig (in-cluster-
pod-ip) speaks sandboxd (REST files, gRPC ProcessService), anything else
the legacy python-runtime API, here SandboxDirectConnectionConfig to
fake-kube'"'"'s router. Both reach the same gosbx-runtime.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-kube.sh
. "$TEST_DIRECTORY"/lib-sdk.sh

# sdk <step>...: the SDK on a new sandbox of pool sdk-pool (sandboxd),
# its output in "out"
sdk() {
	"$(cat python)" "$TEST_DIRECTORY/sandboxd-python-sdk/sdk.py" \
		--pool=sdk-pool --rest-port="$(cat rest.port)" \
		--grpc-port="$(cat grpc.port)" "$@" >out 2>sdk.err
}

# sdk_legacy <step>...: the same through the router, the legacy API
sdk_legacy() {
	"$(cat python)" "$TEST_DIRECTORY/sandboxd-python-sdk/sdk.py" \
		--pool=sdk-pool --api-url="$(cat kube.router)" "$@" \
		>out 2>sdk.err
}

# sdk_expect <expected line>... -- <step>...
sdk_expect() {
	: >expect
	while test "$1" != --; do
		printf "%s\n" "$1" >>expect
		shift
	done
	shift
	sdk "$@" &&
	test_cmp expect out
}

test_expect_success 'setup: the SDK in a venv, fake-kube' '
	sdk_python_venv >python &&
	test_free_port >rest.port &&
	test_free_port >grpc.port &&
	sdk_pod_template "$(cat rest.port)" "$(cat grpc.port)" \
		>templates.yaml &&
	kube_start --release=v0.5.6 -- --load=templates.yaml \
		--pod-ip-prefix="$(sdk_pod_ip_prefix)" \
		--warm-pool=sdk-pool:sdk-template:1
'
KUBECONFIG=$TRASH_DIRECTORY/kube.kubeconfig
export KUBECONFIG

test_expect_success 'the venv holds the pinned SDK' '
	"$(cat python)" -c "import importlib.metadata as m; print(m.version(\"k8s-agent-sandbox\"))" >actual &&
	echo 1.0.8 >expect &&
	test_cmp expect actual
'

test_expect_success 'run: exit code, stdout and stderr (gRPC Execute)' '
	sdk_expect "exit 3" "stdout '"'"'out\\n'"'"'" "stderr '"'"'err\\n'"'"'" -- \
		run "echo out; echo err >&2; exit 3" &&
	rt_poll 30 no_sdk_claims
'

test_expect_success 'run: env and cwd (sandboxd only)' '
	printf "hello\\n" >hello.txt &&
	sdk_expect "exit 0" "stdout '"'"'x=1\\n'"'"'" "stderr '"'"''"'"'" \
		written "exit 0" "stdout '"'"'f\\n'"'"'" "stderr '"'"''"'"'" -- \
		run-env X=1 "echo x=\$X" write d/f hello.txt \
		run-cwd d "ls"
'

# the SDK cancels the call at the deadline (RST_STREAM); the runtime
# then ends the command (polled from the sandbox, 10 s at most), and the
# next call on the connection does not wait for it
test_expect_success 'run: command_timeout ends a long command (exit 124)' '
	sdk_expect "exit 124" "stdout '"'"''"'"'" \
		"stderr '"'"'Command timed out after 1 seconds'"'"'" \
		"timed_out True" "exit 0" "stdout '"'"'gone\\n'"'"'" \
		"stderr '"'"''"'"'" -- \
		run-timeout 1 "exec sleep 30.3112" \
		run "for i in \$(seq 100); do
			pgrep -fx \"sleep 30.3112\" >/dev/null ||
				{ echo gone; exit 0; }
			sleep 0.1
		done; echo alive"
'

test_expect_success 'files: write, read, exists, list, delete' '
	printf "hello\\n" >hello &&
	sdk_expect written "content b'"'"'hello\\n'"'"'" "exists True" \
		"exists False" written \
		"entry f.txt file 6 0644" "entry sub directory - 0755" \
		deleted "exists False" deleted "exists False" -- \
		write d/f.txt hello cat d/f.txt exists d/f.txt \
		exists d/nothing write d/sub/g hello list d \
		delete d/f.txt exists d/f.txt delete-r d exists d
'

test_expect_success 'errors: the SDK refuses an escape; the server 403/404' '
	test_must_fail sdk cat ../x cat-unsafe ../../etc/passwd \
		cat nothing delete nothing &&
	sed "s/^\(error [A-Za-z]*\( [0-9]*\)\{0,1\}\):.*/\1/" out >actual &&
	cat >expect <<-\EOT &&
	error ValueError
	error SandboxRequestError 403
	error SandboxRequestError 404
	error SandboxRequestError 404
	EOT
	test_cmp expect actual
'

test_expect_success 'a 20 MiB file goes there and back unchanged' '
	head -c 20971520 /dev/urandom >big &&
	sum=$(sha256sum <big | cut -d" " -f1) &&
	sdk_expect written "read 20971520" "exit 0" \
		"stdout '"'"'$sum  big\\n'"'"'" "stderr '"'"''"'"'" -- \
		write big big read big big.back run "sha256sum big" &&
	cmp big big.back
'

test_expect_success 'legacy API (SandboxDirectConnectionConfig): the router' '
	printf "hello\\n" >hello &&
	sdk_legacy write l.txt hello run "cat l.txt; echo \$0" \
		exists l.txt list . cat l.txt &&
	cat >expect <<-\EOT &&
	written
	exit 0
	stdout '"'"'hello\nsh\n'"'"'
	stderr '"'"''"'"'
	exists True
	entry l.txt file 6 
	content b'"'"'hello\n'"'"'
	EOT
	test_cmp expect out &&
	test_must_fail sdk_legacy run-cwd d true delete l.txt &&
	grep -c "^error NotImplementedError" out >count &&
	echo 2 >expect &&
	test_cmp expect count
'

test_done
