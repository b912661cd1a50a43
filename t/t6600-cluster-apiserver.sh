#!/bin/sh
test_description=${test_description:-'a real kube-apiserver checks what gosbx sends (contrib/cluster)'}
# etcd, kube-apiserver and kube-controller-manager from Go modules
# (contrib/cluster/build.sh), the agent-sandbox CRDs of the Go module,
# manifests/rbac.yaml and manifests/base applied with --validate=strict.
# No nodes and no agent-sandbox controller: a claim is never Ready, but
# the real schema, admission and RBAC authorizer judge gosbx's requests
# (up.sh --no-controller --no-nodes).
# CLUSTER_RELEASE: the agent-sandbox release of the CRDs (default
# versions.sh's; t6601 and t6602 source this script with v0.4.6 and
# v0.5.6).
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-cluster.sh

# what gosbx uses: v0.4.x serves only v1alpha1, whose claims name a
# template; v0.5 and later v1beta1, whose claims name a warm pool
case $CLUSTER_RELEASE in
v0.4.*)
	api=v1alpha1
	ref='v["spec"]["sandboxTemplateRef"]["name"]'
	refname=go-runtime-template
	;;
*)
	api=v1beta1
	ref='v["spec"]["warmPoolRef"]["name"]'
	refname=go-runtime-warmpool
	;;
esac
claims=/apis/extensions.agents.x-k8s.io/$api/namespaces/default/sandboxclaims

# json_field <file> <python expression of the document v>
json_field() {
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
r = eval(sys.argv[2])
print(r if isinstance(r, str) else json.dumps(r))' "$1" "$2"
}

test_expect_success 'up.sh starts the control plane and applies the manifests' '
	cluster_up --no-controller --no-nodes &&
	test_grep "^admin kubeconfig: $CLUSTER_ADMIN\$" cluster-up.out &&
	test_grep "^gosbx kubeconfig: $CLUSTER_USER\$" cluster-up.out &&
	test_grep "rolebinding.rbac.authorization.k8s.io/gosbx-client serverside-applied" cluster-up.out &&
	test_grep "sandboxtemplate.extensions.agents.x-k8s.io/go-runtime-template serverside-applied" cluster-up.out &&
	test_grep "networkpolicy.networking.k8s.io/gosbx-runtime-ingress serverside-applied" cluster-up.out &&
	kadm get --raw=/version >version.json &&
	test "$(json_field version.json "v[\"gitVersion\"]")" = "$CLUSTER_K8S" &&
	test "$(kadm get --raw=/readyz)" = ok
'

test_expect_success 'doctor as the RBAC user: discovery, credentials, RBAC' '
	test_expect_code 1 gosbx_user doctor >doctor.out &&
	cat doctor.out >&3 &&
	test_grep "^ok    API server: .* answers, Kubernetes $CLUSTER_K8S\$" doctor.out &&
	test_grep "^ok    credentials: accepted (user .system:serviceaccount:default:gosbx-client.)" doctor.out &&
	test_grep "^ok    agent-sandbox CRDs: extensions.agents.x-k8s.io serves .*; gosbx uses $api\$" doctor.out &&
	test_grep "^ok    RBAC: all [0-9]* permissions gosbx needs are granted in namespace .default." doctor.out &&
	test_grep "^ok    template: SandboxTemplate .go-runtime-template." doctor.out &&
	test_grep "^warn  warm pool: go-runtime-warmpool: 0 of 2 ready" doctor.out &&
	# no router and no nodes: the one failure
	test_grep "^fail  router: no ready endpoints of Service sandbox-router-svc" doctor.out &&
	test "$(grep -c "^fail" doctor.out)" = 1
'

test_expect_success 'open: the real API server accepts the claim; never Ready' '
	(
		gosbx_user --open-timeout=5s open --name=c1 >open.out 2>open.err
		echo $? >open.status
	) &
	test_retry 100 0.1 kadm get sandboxclaim c1 -o json >claim.json &&
	wait $! &&
	cat open.err >&3 &&
	test "$(cat open.status)" = 125 &&
	test_grep "timed out after 5000 ms waiting for claim c1 to be Ready; no condition seen" open.err &&
	test "$(json_field claim.json "v[\"apiVersion\"]")" = extensions.agents.x-k8s.io/$api &&
	test "$(json_field claim.json "$ref")" = $refname &&
	test "$(json_field claim.json "v[\"spec\"][\"lifecycle\"][\"shutdownPolicy\"]")" = Delete &&
	json_field claim.json "v[\"spec\"][\"lifecycle\"][\"shutdownTime\"]" >shutdown &&
	test_grep "^20[0-9-]*T[0-9:]*Z\$" shutdown &&
	test "$(json_field claim.json "v[\"metadata\"][\"labels\"][\"agents.x-k8s.io/created-by\"]")" = gosbx
'

test_expect_success 'the claim was created (strictly validated) and deleted by the RBAC user' '
	test_must_fail kadm get sandboxclaim c1 &&
	cluster_audit audit.txt &&
	cat audit.txt >&3 &&
	test_grep "^create system:serviceaccount:default:gosbx-client 201 $claims?fieldValidation=Strict\$" audit.txt &&
	test_grep "^delete system:serviceaccount:default:gosbx-client 200 $claims/c1\$" audit.txt
'

test_expect_success 'claims lists and close deletes a claim gosbx made' '
	python3 -c "import json, sys
v = json.load(open(\"claim.json\"))
md = v[\"metadata\"]
for k in (\"uid\", \"resourceVersion\", \"creationTimestamp\", \"generation\"):
	md.pop(k, None)
md[\"name\"] = \"c2\"
json.dump(v, open(\"c2.json\", \"w\"))" &&
	kadm create --validate=strict -f c2.json &&
	gosbx_user claims >claims.out &&
	test_grep "^c2 *default " claims.out &&
	gosbx_user close c2 2>close.err &&
	test_grep "closed claim .c2." close.err &&
	test_must_fail kadm get sandboxclaim c2 &&
	test_expect_code_err 125 gosbx_user close c2 &&
	test_grep "no claim .c2. in namespace .default." err
'

test_expect_success 'the real authorizer refuses what rbac.yaml does not grant' '
	test_must_fail with_err kuser get secrets &&
	test_grep "User \"system:serviceaccount:default:gosbx-client\" cannot list resource \"secrets\"" err &&
	test_must_fail with_err kuser delete sandboxtemplate go-runtime-template &&
	test_grep "cannot delete resource \"sandboxtemplates\"" err &&
	kadm get sandboxtemplate go-runtime-template &&
	test "$(kuser auth can-i create sandboxclaims.extensions.agents.x-k8s.io)" = yes &&
	test "$(kuser auth can-i get pods --subresource=portforward)" = yes
'

test_done
