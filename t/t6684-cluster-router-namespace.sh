#!/bin/sh
test_description='the sandbox-router in agent-sandbox-system, as v1.0 ships it

agent-sandbox v1.0 deploys its router in agent-sandbox-system
(sandbox-router/deploy/ of the module), not in the claims namespace
where the seed and v0.x put it. On a real control plane with the v1.0
router there (up.sh --router-namespace): gosbx, with no router in the
claims namespace, looks there; the real authorizer refuses the user
that only manifests/rbac.yaml binds, and gosbx and doctor say so and
name manifests/rbac-router-namespace.yaml; once applied, exec works;
--router-namespace names the one namespace to use.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-cluster.sh

# gosbx_user with GOSBX_ROUTER_NAMESPACE=default
user_router_ns_default() {
	(
		GOSBX_ROUTER_NAMESPACE=default
		export GOSBX_ROUTER_NAMESPACE
		gosbx_user "$@"
	)
}

test_expect_success 'up.sh: the router runs in agent-sandbox-system' '
	cluster_up --router-namespace=agent-sandbox-system &&
	test "$(kadm -n agent-sandbox-system get pods -l app=sandbox-router -o name | wc -l)" = 1 &&
	test "$(kadm -n default get pods -l app=sandbox-router -o name | wc -l)" = 0
'

# admitted <netpol.json> <pod.json> <ns.json>: does a from-peer of the
# NetworkPolicy select this pod in this namespace (matchLabels, as the
# policy uses)?
admitted() {
	python3 - "$@" <<-\PY
	import json, sys
	np, pod, ns = (json.load(open(f)) for f in sys.argv[1:4])
	def sel(s, labels):
	    return all(labels.get(k) == v
	               for k, v in (s.get("matchLabels") or {}).items())
	same = ns["metadata"]["name"] == np["metadata"]["namespace"]
	ok = False
	for rule in np["spec"]["ingress"]:
	    for peer in rule.get("from", []):
	        nsel, psel = peer.get("namespaceSelector"), peer.get("podSelector")
	        in_ns = sel(nsel, ns["metadata"]["labels"]) if nsel is not None else same
	        if in_ns and sel(psel or {}, pod["metadata"]["labels"]):
	            ok = True
	sys.exit(0 if ok else 1)
	PY
}

test_expect_success 'the NetworkPolicy the API server took admits the real router pod there' '
	kadm -n default get networkpolicy gosbx-runtime-ingress -o json >np.json &&
	kadm -n agent-sandbox-system get pods -l app=sandbox-router -o json >pods.json &&
	python3 -c "import json,sys; json.dump(json.load(open(sys.argv[1]))[\"items\"][0], open(sys.argv[2], \"w\"))" pods.json router.json &&
	kadm get namespace agent-sandbox-system -o json >ns.json &&
	admitted np.json router.json ns.json &&
	# and not another pod, there or in the claims namespace
	kadm get namespace default -o json >default.json &&
	python3 -c "import json,sys; p = {\"metadata\": {\"name\": \"x\", \"labels\": {\"app\": \"other\"}}}; json.dump(p, open(sys.argv[1], \"w\"))" other.json &&
	! admitted np.json other.json ns.json &&
	! admitted np.json other.json default.json
'

test_expect_success 'without RBAC there: the error names the namespace and the fix' '
	test_expect_code_err 125 gosbx_user --open-timeout=60s exec -- true &&
	test_grep "^error: no ready sandbox-router pod in namespace .default. (EndpointSlices of Service sandbox-router-svc), nor in .agent-sandbox-system. (.*forbidden.*) (RBAC: manifests/rbac-router-namespace.yaml" err &&
	test_grep ! "timed out" err &&
	# the claim it made is gone again
	test "$(kadm get sandboxclaims -o name | wc -l)" = 0
'

test_expect_success 'doctor: the router check fails with the lookup it could not make' '
	test_expect_code 1 gosbx_user doctor >doctor.out &&
	cat doctor.out >&3 &&
	test_grep "^fail  router: no ready endpoints of Service sandbox-router-svc in namespace .default. (nor can this user look in .agent-sandbox-system.: .*forbidden" doctor.out
'

test_expect_success 'manifests/rbac-router-namespace.yaml: the real API server takes it' '
	sed "s/CLAIMS_NAMESPACE/default/" \
		"$GOSBX_SOURCE_DIR"/manifests/rbac-router-namespace.yaml >rbac-router.yaml &&
	kadm apply --server-side --validate=strict -f - <rbac-router.yaml &&
	test "$(kuser -n agent-sandbox-system auth can-i create pods --subresource=portforward)" = yes &&
	test "$(kuser -n agent-sandbox-system auth can-i get pods --subresource=portforward)" = yes &&
	test "$(kuser -n agent-sandbox-system auth can-i list endpointslices.discovery.k8s.io)" = yes &&
	# nothing more: no pods, no secrets there
	test "$(kuser -n agent-sandbox-system auth can-i get secrets || :)" = no &&
	test "$(kuser -n agent-sandbox-system auth can-i list pods || :)" = no
'

test_expect_success 'then gosbx finds the router there and exec works' '
	gosbx_user -v --open-timeout=60s exec -- echo through-the-router >out 2>err &&
	test_grep "^through-the-router\$" out &&
	test_grep "^kube: GET /apis/discovery.k8s.io/v1/namespaces/default/endpointslices?.*: 200" err &&
	test_grep "^kube: GET /apis/discovery.k8s.io/v1/namespaces/agent-sandbox-system/endpointslices?.*: 200" err &&
	cluster_audit audit.txt &&
	test_grep "^get system:serviceaccount:default:gosbx-client 101 /api/v1/namespaces/agent-sandbox-system/pods/sandbox-router-[^/]*/portforward" audit.txt
'

test_expect_success 'doctor: ok, and says where the router is' '
	gosbx_user doctor >doctor.out &&
	cat doctor.out >&3 &&
	test_grep "^ok    router: Service sandbox-router-svc has 1 ready endpoint in .agent-sandbox-system. (sandbox-router-.*), none in the claims. namespace .default.\$" doctor.out
'

test_expect_success '--router-namespace names the only namespace looked in' '
	gosbx_user --router-namespace=agent-sandbox-system -v --open-timeout=60s exec -- echo named >out 2>err &&
	test_grep "^named\$" out &&
	test_grep ! "namespaces/default/endpointslices" err &&
	test_expect_code_err 125 user_router_ns_default --open-timeout=60s exec -- true &&
	test_grep "^error: no ready sandbox-router pod in namespace .default. (--router-namespace;" err &&
	test_grep ! "agent-sandbox-system" err
'

test_done
