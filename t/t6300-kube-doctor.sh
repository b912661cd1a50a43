#!/bin/sh
test_description='gosbx doctor --backend=kube against fake-kube

A healthy fake, missing permissions, a missing template, a template
without spec.service, no router, a broken kubeconfig, bad credentials,
an unreachable server, and --probe with a ready and a stuck pod.'
. "$(dirname "$0")"/test-lib.sh
test -f "$TEST_DIRECTORY"/lib-kube.sh ||
	test_skip_all "t/lib-kube.sh (the fake API server) is not there yet"
. "$TEST_DIRECTORY"/lib-kube.sh

# doctor <kubeconfig> [options]: gosbx doctor for the kube backend
doctor() {
	_d_kc=$1
	shift
	gosbx doctor --backend=kube --kubeconfig="$_d_kc" "$@"
}

# started here, not in a test: test_atexit (stopping them) does not
# reach out of a test's subshell
kube_start -- --load="$KUBE_TEMPLATE" \
	--template=bare
kube_start --name=rbac --no-runtime -- \
	--forbid=get:pods/portforward --forbid=list:events

test_expect_success 'setup: a healthy fake and one with missing RBAC' '
	test -s kube.kubeconfig &&
	test -s rbac.kubeconfig
'

test_expect_success 'a healthy cluster: no check fails' '
	doctor kube.kubeconfig >out &&
	test_grep "^ok    kubeconfig: context .kind-fake. .*from .*kube.kubeconfig; namespace .default." out &&
	test_grep "^ok    API server: https://127.0.0.1:[0-9]* answers, Kubernetes v1.31.0" out &&
	test_grep "^ok    credentials: accepted" out &&
	test_grep "^ok    agent-sandbox CRDs: .*v1alpha1: agent-sandbox v0.4.x" out &&
	test_grep "^ok    RBAC: all 19 permissions" out &&
	test_grep "^ok    router: Service sandbox-router-svc has 1 ready endpoint" out &&
	test_grep "^ok    template: SandboxTemplate .go-runtime-template. in .default. has spec.service: true" out &&
	test_grep "^ok    warm pool: no SandboxWarmPool" out &&
	test_grep "^kube backend: .* 0 failed" out &&
	! grep "^fail" out &&
	! grep probe out
'

test_expect_success 'JSON output' '
	doctor kube.kubeconfig -o json >out.json &&
	json_is out.json "ok" true &&
	python3 -c "
import json, sys
v = json.load(open(\"out.json\"))
names = [c[\"name\"] for c in v[\"checks\"]]
assert v[\"backend\"] == \"kube\", v
for n in (\"kubeconfig\", \"API server\", \"credentials\", \"RBAC\", \"router\", \"template\"):
    assert n in names, names
assert v[\"summary\"][\"fail\"] == 0, v
"
'

test_expect_success 'missing permissions are listed, with manifests/rbac.yaml' '
	test_expect_code 1 doctor rbac.kubeconfig >out &&
	test_grep "^fail  RBAC: 2 of 19 permissions missing in namespace .default.: get pods/portforward, list events$" out &&
	test_grep "fix: kubectl -n default apply -f manifests/rbac.yaml" out
'

test_expect_success 'a missing template fails with how to apply it' '
	test_expect_code 1 doctor rbac.kubeconfig >out &&
	test_grep "^fail  template: no SandboxTemplate .go-runtime-template. in namespace .default." out &&
	test_grep "fix: kubectl kustomize manifests/v1alpha1 .*kubectl -n default apply -f -; or name another template with --template" out
'

test_expect_success 'a template without spec.service: warning about the 502' '
	doctor kube.kubeconfig --template=bare >out &&
	test_grep "^warn  template: SandboxTemplate .bare. in .default. lacks spec.service: true" out &&
	test_grep "502 Could not connect to the backend sandbox" out &&
	test_grep "fix: add .service: true. under spec" out
'

test_expect_success 'no router in the namespace: fail with the install commands' '
	test_expect_code 1 doctor kube.kubeconfig -n elsewhere >out &&
	test_grep "^fail  router: no Service sandbox-router-svc in namespace .elsewhere." out &&
	test_grep "fix: deploy the router in namespace elsewhere: .*sandbox_router.yaml.*rollout status deployment/sandbox-router-deployment" out
'

test_expect_success 'a router Service without ready endpoints' '
	KUBE=rbac kube_curl "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices" >slices &&
	for s in $(kube_py slices "\" \".join(i[\"metadata\"][\"name\"] for i in v[\"items\"])")
	do
		KUBE=rbac kube_expect 200 DELETE \
			"/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/$s" ||
		return 1
	done &&
	test_expect_code 1 doctor rbac.kubeconfig >out &&
	test_grep "^fail  router: Service sandbox-router-svc in .default. has no ready endpoints" out &&
	test_grep "rollout status deployment/sandbox-router-deployment" out
'

test_expect_success 'a broken kubeconfig: fail naming the file and line' '
	sed "s/^current-context:/current-contxt:/" kube.kubeconfig >bad.kubeconfig &&
	line=$(grep -n "^current-contxt:" bad.kubeconfig | cut -d: -f1) &&
	test_expect_code 1 doctor bad.kubeconfig >out &&
	test_grep "^fail  kubeconfig: no current context in kubeconfig .*bad.kubeconfig. .*(kubeconfig .*bad.kubeconfig.: line $line: unknown field .current-contxt. ignored)" out &&
	test_grep "fix: fix the file at the line named" out &&
	test_line_count = 3 out
'

test_expect_success 'credentials the server refuses (401)' '
	b64() { base64 <"$1" | tr -d "\n"; } &&
	sed -e "s|client-certificate-data: .*|client-certificate-data: $(b64 "$KUBE_PKI/other.crt")|" \
		-e "s|client-key-data: .*|client-key-data: $(b64 "$KUBE_PKI/other.key")|" \
		kube.kubeconfig >other.kubeconfig &&
	test_expect_code 1 doctor other.kubeconfig >out &&
	test_grep "^fail  credentials: the API server refused the credentials of user .kind-fake. (401 Unauthorized)" out &&
	test_grep "fix: renew the credentials of user .kind-fake." out
'

test_expect_success 'an unreachable server' '
	port=$(test_free_port) &&
	sed "s|server: .*|server: https://127.0.0.1:$port|" kube.kubeconfig >down.kubeconfig &&
	test_expect_code 1 doctor down.kubeconfig >out &&
	test_grep "^fail  API server: cannot reach .https://127.0.0.1:$port." out &&
	test_grep "fix: check that the cluster runs" out
'

# doctor_error <kubeconfig>: doctor's failed "API server" check as the
# one error line open and exec print, into expect; numbers of ms are N
doctor_error() {
	test_expect_code 1 doctor "$1" >out &&
	detail=$(sed -n "s/^fail  API server: //p" out) &&
	fix=$(sed -n "s/^      fix: //p" out) &&
	test -n "$detail" && test -n "$fix" &&
	printf "error: %s; %s\n" "$detail" "$fix" | ms_n >expect
}

ms_n() {
	sed "s/[0-9][0-9]* m/N m/g"
}

# gosbx <args> at kubeconfig $1 fails (125) with doctor's text; timeout
# only guards against a hang (no timing is asserted)
as_doctor() {
	_ad_kc=$1
	shift
	test_expect_code_err 125 timeout 20 gosbx --backend=kube \
		--kubeconfig="$_ad_kc" "$@" &&
	ms_n <err >actual &&
	test_cmp expect actual
}

test_expect_success 'open and exec at an unreachable server: doctor'"'"'s text' '
	doctor_error down.kubeconfig &&
	test_grep "cannot reach .https://127.0.0.1:$port." expect &&
	as_doctor down.kubeconfig open &&
	as_doctor down.kubeconfig exec -- true
'

test_expect_success PYTHON 'setup: a server that takes connections and never answers' '
	cat >hang.py <<-\EOF &&
	import os, signal, socket, sys
	s = socket.socket()
	s.bind(("127.0.0.1", 0))
	s.listen(16)
	with open(sys.argv[1] + ".tmp", "w") as f:
	    f.write("%d %d\n" % (os.getpid(), s.getsockname()[1]))
	os.rename(sys.argv[1] + ".tmp", sys.argv[1])
	signal.pause()
	EOF
	{ python3 hang.py hang.pid >/dev/null 2>&1 & } &&
	test_retry 100 0.1 test -s hang.pid &&
	read hang_pid hang_port <hang.pid &&
	test_atexit "kill $hang_pid" &&
	sed "s|server: .*|server: https://127.0.0.1:$hang_port|" \
		kube.kubeconfig >hang.kubeconfig
'

test_expect_success PYTHON 'open and exec at a server that never answers: doctor'"'"'s text' '
	read hang_pid hang_port <hang.pid &&
	doctor_error hang.kubeconfig &&
	test_grep "https://127.0.0.1:$hang_port" expect &&
	as_doctor hang.kubeconfig open &&
	as_doctor hang.kubeconfig exec -- true
'

test_expect_success '--probe: a claim timed to Ready, then deleted' '
	doctor kube.kubeconfig --probe >out &&
	test_grep "^ok    probe: claim sandbox-claim-[a-z0-9]* Ready in [0-9]* ms (sandbox sandbox-claim-" out &&
	kube_wait_json 30 /apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/default/sandboxclaims \
		"len(v[\"items\"]) == 0"
'

test_expect_success '--probe with a pod that cannot pull its image' '
	kube_expect 200 POST "/fake/stuck?template=go-runtime-template" &&
	test_expect_code 1 doctor kube.kubeconfig --probe --probe-timeout=2s >out &&
	test_grep "^fail  probe: timed out after 2000 ms waiting for claim" out &&
	test_grep "Failed to pull image" out &&
	test_grep "fix: kubectl -n default describe pod " out &&
	kube_expect 200 POST "/fake/stuck?template=go-runtime-template&stuck=false" &&
	kube_wait_json 30 /apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/default/sandboxclaims \
		"len(v[\"items\"]) == 0"
'

test_done
