#!/bin/sh
test_description='gosbx doctor --backend=kube: controller, warm pool, GKE, v0.5.6

The controller deployment (ready, not ready, absent, absent on GKE,
not readable), warm pool ready replicas (filled, never ready), a GKE
cluster whose SandboxTemplate CRD has no spec.service, v1beta1
discovery on agent-sandbox v0.5.6, and the exit status (0 with
warnings, 1 on a failure).'
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

# check_count <status> <name> <out>: how many lines of that check and status
check_count() {
	grep -c "^$1 *$2: " "$3"
}

BASE_TEMPLATE=$KUBE_TEMPLATE
EXT=/apis/extensions.agents.x-k8s.io
WARMPOOLS=$EXT/v1alpha1/namespaces/default/sandboxwarmpools

# GKE's addon CRD: a SandboxTemplate spec with networkPolicy,
# networkPolicyManagement and podTemplate only (seed 001 field notes).
# The other fields of spec.properties (14 spaces in) go, with their
# deeper lines; the test "GKE: the served ... CRD" checks the result.
mkdir gke-crds &&
cp "$KUBE_CRDS"/v0.4.6/*.yaml gke-crds/ &&
awk '
/^              [a-zA-Z]+:$/ {
	skip = $1 != "networkPolicy:" && $1 != "networkPolicyManagement:" &&
		$1 != "podTemplate:"
	if (skip)
		next
}
skip && /^               / { next }
{ skip = 0; print }
' "$KUBE_CRDS/v0.4.6/extensions.agents.x-k8s.io_sandboxtemplates.yaml" \
	>gke-crds/extensions.agents.x-k8s.io_sandboxtemplates.yaml ||
	test_skip_all "cannot make the GKE CRDs"

# started here, not in a test: test_atexit (stopping them) does not
# reach out of a test's subshell
kube_start --name=ctl --no-runtime -- --controller=1:1 \
	--load="$BASE_TEMPLATE" --template=bare \
	--warm-pool=warm:go-runtime-template:2
kube_start --name=sick --no-runtime -- --controller=0:1 \
	--load="$BASE_TEMPLATE" --stuck=stuck --template=stuck \
	--warm-pool=cold:stuck:2
kube_start --name=nodeploy --no-runtime -- --load="$BASE_TEMPLATE"
kube_start --name=gke --no-runtime -- --server-version=v1.35.2-gke.1269000 \
	--crds="$TRASH_DIRECTORY/gke-crds" --template=go-runtime-template
kube_start --name=gkehidden --no-runtime -- \
	--server-version=v1.35.2-gke.1269000 \
	--crds="$TRASH_DIRECTORY/gke-crds" --template=go-runtime-template \
	--forbid=get:customresourcedefinitions
kube_start --name=v05 --release=v0.5.6 --no-runtime -- \
	--load="$BASE_TEMPLATE" --forbid=get:deployments

test_expect_success 'setup: six fakes' '
	for k in ctl sick nodeploy gke gkehidden v05
	do
		test -s $k.kubeconfig || return 1
	done
'

test_expect_success 'a ready controller and a filled warm pool: exit 0' '
	KUBE=ctl kube_wait_json 30 $WARMPOOLS/warm \
		"v[\"status\"][\"readyReplicas\"] == 2" &&
	doctor ctl.kubeconfig >out &&
	test_grep "^ok    controller: deployment agent-sandbox-system/agent-sandbox-controller: 1 of 1 replicas ready$" out &&
	test_grep "^ok    warm pool: warm: 2 of 2 ready$" out &&
	test_grep "^kube backend: 9 ok, 0 warnings, 0 failed$" out
'

test_expect_success 'healthy but with a warning: still exit 0' '
	doctor ctl.kubeconfig --template=bare >out &&
	test_grep "^warn  template: SandboxTemplate .bare. in .default. lacks spec.service: true" out &&
	test_grep "^ok    controller: " out &&
	test_grep "^kube backend: .* 1 warning, 0 failed$" out
'

test_expect_success 'a controller with no ready replica fails: exit 1' '
	test_expect_code 1 doctor sick.kubeconfig >out &&
	test_grep "^fail  controller: deployment agent-sandbox-system/agent-sandbox-controller: 0 of 1 replicas ready$" out &&
	test_grep "^      fix: kubectl -n agent-sandbox-system describe deployment agent-sandbox-controller" out &&
	test $(check_count fail controller out) = 1 &&
	test_grep "^kube backend: .* 1 failed$" out
'

test_expect_success 'a warm pool whose pods never get ready: a warning with why' '
	KUBE=sick kube_wait_json 30 $WARMPOOLS/cold \
		"v[\"status\"][\"replicas\"] == 2" &&
	test_expect_code 1 doctor sick.kubeconfig --template=stuck >out &&
	test_grep "^warn  warm pool: cold: 0 of 2 ready; Pod cold-[a-z0-9]*: Failed: Failed to pull image .gosbx-runtime:latest.: " out &&
	test_grep "fix: kubectl -n default describe sandboxwarmpool cold" out
'

test_expect_success 'no controller deployment: a warning, exit 0' '
	doctor nodeploy.kubeconfig >out &&
	test_grep "^warn  controller: no deployment agent-sandbox-controller in namespace agent-sandbox-system" out &&
	test_grep "^      fix: install agent-sandbox: " out &&
	test_grep "^kube backend: .* 1 warning, 0 failed$" out
'

test_expect_success 'GKE: the served SandboxTemplate CRD rejects spec.service' '
	KUBE=gke kube_curl /apis/apiextensions.k8s.io/v1/customresourcedefinitions/sandboxtemplates.extensions.agents.x-k8s.io >crd &&
	kube_py crd "\" \".join(sorted(v[\"spec\"][\"versions\"][0][\"schema\"][\"openAPIV3Schema\"][\"properties\"][\"spec\"][\"properties\"]))" >props &&
	test "$(cat props)" = "networkPolicy networkPolicyManagement podTemplate" &&
	KUBE=gke kube_apply $EXT/v1alpha1/namespaces/default/sandboxtemplates \
		"{\"apiVersion\":\"extensions.agents.x-k8s.io/v1alpha1\",\"kind\":\"SandboxTemplate\",\"metadata\":{\"name\":\"t\"},\"spec\":{\"service\":true,\"podTemplate\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}" &&
	test "$(cat status)" = 422 &&
	test_grep "spec.service" body
'

test_expect_success 'GKE: no controller deployment is expected, no spec.service is fine' '
	doctor gke.kubeconfig >out &&
	test_grep "^ok    API server: .* answers, Kubernetes v1.35.2-gke.1269000$" out &&
	test_grep "^ok    controller: no deployment agent-sandbox-controller in agent-sandbox-system: expected on GKE" out &&
	test_grep "^ok    template: SandboxTemplate .go-runtime-template. in .default. without spec.service, which this cluster.s SandboxTemplate CRD (as GKE.s addon.s) rejects (manifests/overlays/gke-gvisor strips it): the controller makes the per-sandbox Service itself$" out &&
	! grep "502" out &&
	test_grep "^kube backend: .* 0 warnings, 0 failed$" out
'

test_expect_success 'GKE: a missing template points at the gke-gvisor overlay' '
	test_expect_code 1 doctor gke.kubeconfig --template=missing >out &&
	test_grep "^fail  template: no SandboxTemplate .missing. in namespace .default." out &&
	test_grep "^      fix: this cluster.s SandboxTemplate CRD has no spec.service (as GKE.s addon) and rejects the spec.service of manifests/base (unknown field .spec.service.): apply the gke-gvisor overlay, which strips it: kubectl kustomize manifests/overlays/gke-gvisor | kubectl -n default apply -f -$" out &&
	! grep "kustomize manifests/base" out
'

test_expect_success 'GKE with the CRD not readable: no advice to add spec.service' '
	doctor gkehidden.kubeconfig >out &&
	test_grep "^ok    controller: .*expected on GKE" out &&
	test_grep "^ok    template: SandboxTemplate .go-runtime-template. in .default. without spec.service, which the CRD of GKE.s addon rejects (manifests/overlays/gke-gvisor strips it)" out &&
	! grep "add .service: true." out &&
	test_expect_code 1 doctor gkehidden.kubeconfig --template=missing >out &&
	test_grep "^      fix: on GKE the addon.s SandboxTemplate CRD rejects the spec.service of manifests/base .*kubectl kustomize manifests/overlays/gke-gvisor | kubectl -n default apply -f -$" out &&
	! grep "kustomize manifests/base" out
'

test_expect_success 'v0.5.6: v1beta1 discovered, a warm pool is required' '
	test_expect_code 1 doctor v05.kubeconfig >out &&
	test_grep "^ok    agent-sandbox CRDs: extensions.agents.x-k8s.io serves v1alpha1 and v1beta1: agent-sandbox v0.5 or later; gosbx uses v1beta1$" out &&
	test_grep "^ok    controller: not allowed to read deployments in agent-sandbox-system" out &&
	test_grep "^fail  warm pool: no SandboxWarmPool in .default. uses template .go-runtime-template.: v1beta1 claims name a warm pool$" out &&
	test_grep "^      fix: kubectl -n default apply -k manifests/warmpool (2 pre-warmed sandboxes), or for a cold start a pool of 0 replicas: kubectl -n default apply -k manifests/cold-start (pool go-runtime-warmpool of go-runtime-template; copy it for another template)$" out &&
	test $(check_count fail "[a-zA-Z ]*" out) = 1
'

test_expect_success 'v0.5.6 without a warm pool: the probe fix names the pool, not RBAC' '
	test_expect_code 1 doctor v05.kubeconfig --probe >out &&
	test_grep "^fail  probe: .*names a warm pool" out &&
	test_grep "^      fix: v1beta1 claims name a warm pool, and no SandboxWarmPool in .default. uses template .go-runtime-template.: kubectl -n default apply -k manifests/warmpool (2 pre-warmed sandboxes), or for a cold start a pool of 0 replicas: kubectl -n default apply -k manifests/cold-start " out &&
	! grep "rbac.yaml" out
'

test_expect_success 'v0.5.6, v1alpha1 claims: WarmPoolNotFound names the shadow pool' '
	test_expect_code 1 gosbx --api-version=v1alpha1 doctor --backend=kube \
		--kubeconfig=v05.kubeconfig \
		--probe --probe-timeout=20s >out &&
	test_grep "^fail  probe: .*WarmPoolNotFound.*shadow-pool-go-runtime-template" out &&
	test_grep "^      fix: create the SandboxWarmPool the claim names (SandboxWarmPool .shadow-pool-go-runtime-template. not found): kubectl -n default apply -k manifests/v1alpha1/warmpool " out &&
	! grep "rbac.yaml" out
'

test_expect_success 'v0.5.6 with a ready warm pool: exit 0' '
	KUBE=v05 kube_apply $EXT/v1beta1/namespaces/default/sandboxwarmpools \
		"{\"apiVersion\":\"extensions.agents.x-k8s.io/v1beta1\",\"kind\":\"SandboxWarmPool\",\"metadata\":{\"name\":\"pool\"},\"spec\":{\"replicas\":1,\"sandboxTemplateRef\":{\"name\":\"go-runtime-template\"}}}" &&
	test "$(cat status)" = 201 &&
	KUBE=v05 kube_wait_json 30 $EXT/v1beta1/namespaces/default/sandboxwarmpools/pool \
		"v.get(\"status\", {}).get(\"readyReplicas\") == 1" &&
	doctor v05.kubeconfig >out &&
	test_grep "^ok    warm pool: pool: 1 of 1 ready$" out &&
	test_grep "^kube backend: .* 0 failed$" out
'

test_done
