#!/bin/sh
test_description='the upstream Go SDK drives gosbx-runtime'"'"'s sandboxd

sigs.k8s.io/agent-sandbox@v1.0.3 clients/go/sandbox, through its public
API only (t/sandboxd-go-sdk, its modules through the go command'"'"'s
proxy), against fake-kube (t/lib-kube.sh, release v0.5.6: v1beta1
claims on a warm pool). The template runs gosbx-runtime with the
sandboxd listeners on its pod IP, as upstream'"'"'s sandboxd image listens
on the pod network: fake-kube gives loopback pod IPs (--pod-ip-prefix)
and expands the container args'"'"' $(POD_IP) from the downward API. The
SDK reaches them with Runtime sandboxd and Connectivity
in-cluster-pod-ip (its pod port-forward is SPDY, which fake-kube does
not speak). Runtime legacy-python with APIURL goes through fake-kube'"'"'s
router to the same runtime'"'"'s own API.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-kube.sh
. "$TEST_DIRECTORY"/lib-sdk.sh

command -v go >/dev/null 2>&1 || test_skip_all "go is needed"

# sdk <step>...: the SDK on a new sandbox of pool sdk-pool (sandboxd),
# its output in "out"
sdk() {
	"$TRASH_DIRECTORY/client/sandboxd-go-sdk" -pool=sdk-pool \
		-rest-port="$(cat rest.port)" -grpc-port="$(cat grpc.port)" \
		"$@" >out
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

test_expect_success 'setup: the SDK program builds, fake-kube starts' '
	cp -R "$TEST_DIRECTORY/sandboxd-go-sdk" client &&
	(cd client && test_real_go build -mod=mod -o sandboxd-go-sdk .) &&
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

test_expect_success 'Run: exit code, stdout and stderr (gRPC Execute)' '
	sdk_expect "exit 3" "stdout \"out\\n\"" "stderr \"err\\n\"" -- \
		run "echo out; echo err >&2; exit 3"
'

test_expect_success 'the runtime listens on the pod IP, the claim goes' '
	kube_curl /api/v1/namespaces/default/pods >pods &&
	ip=$(kube_py pods "[p for p in v[\"items\"] if p[\"metadata\"][\"name\"].startswith(\"sdk-pool-\")][0][\"status\"][\"podIP\"]") &&
	case "$ip" in 127.*) ;; *) false ;; esac &&
	grep "sandboxd grpc listening.*addr=$ip:$(cat grpc.port)" \
		kube-state/rt-*.log &&
	rt_poll 30 no_sdk_claims
'

test_expect_success 'Run: the workdir, a shell line, a missing command' '
	sdk_expect "exit 0" "stdout \"a b\\n\"" "stderr \"\"" \
		"exit 127" "stdout \"\"" "stderr \"\"" -- \
		run "echo a   b" run "no-such-command-here 2>/dev/null" &&
	sdk run pwd &&
	grep "^stdout \".*/kube-state/sbx-[0-9]*\\\\n\"" out
'

test_expect_success 'Write, Read, Exists, List, Delete (REST /v1/files)' '
	printf "hello\\n" >hello &&
	sdk_expect written "content \"hello\\n\"" "exists true" \
		"exists false" written \
		"entry f.txt file 6 0644" "entry sub directory - 0755" \
		deleted "exists false" deleted "exists false" -- \
		write d/f.txt hello cat d/f.txt exists d/f.txt \
		exists d/nothing write d/sub/g hello list d \
		delete d/f.txt exists d/f.txt delete-r d exists d
'

test_expect_success 'errors: the SDK refuses an escape; the server 403/404' '
	test_must_fail sdk write ../x hello read ../../etc/passwd x \
		cat nothing delete nothing &&
	sed -n "1s/^\(error client\): .*escapes the sandbox root)$/\1/p" \
		out >actual &&
	echo "error client" >expect &&
	test_cmp expect actual &&
	sed -n "2,\$s/^error \(http [0-9]*\): .*/\1/p" out >actual &&
	printf "http 403\\nhttp 404\\nhttp 404\\n" >expect &&
	test_cmp expect actual &&
	! test -e ../x
'

test_expect_success 'a 20 MiB file goes there and back unchanged' '
	head -c 20971520 /dev/urandom >big &&
	sum=$(sha256sum <big | cut -d" " -f1) &&
	sdk_expect written "read 20971520" "exit 0" \
		"stdout \"$sum  big\\n\"" "stderr \"\"" -- \
		write big big read big big.back run "sha256sum big" &&
	cmp big big.back
'

test_expect_success 'legacy-python with APIURL: the router, the same runtime' '
	"$TRASH_DIRECTORY/client/sandboxd-go-sdk" -pool=sdk-pool \
		-runtime=legacy-python -api-url="$(cat kube.router)" \
		write l.txt hello run "cat l.txt; echo \$0" exists l.txt \
		list . >out &&
	cat >expect <<-\EOT &&
	written
	exit 0
	stdout "hello\nsh\n"
	stderr ""
	exists true
	entry l.txt file 6 
	EOT
	test_cmp expect out
'

test_done
