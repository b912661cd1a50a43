#!/bin/sh
test_description='manifests/ and runtime-image/: valid YAML, kustomize
layout, rendered templates valid against both agent-sandbox releases'
. "$(dirname "$0")"/test-lib.sh

M=$GOSBX_SOURCE_DIR/manifests
CRDS=${GOSBX_CRDS_DIR:-$GOSBX_BUILD_DIR/t/crds}
test -d "$CRDS/v0.4.6" ||
	CRDS=$(HOME=$TEST_REAL_HOME "$TEST_DIRECTORY"/crds.sh "$GOSBX_BUILD_DIR/t/crds") ||
	CRDS=
test -d "$CRDS/v0.4.6" && test -d "$CRDS/v0.5.6" && test -d "$CRDS/v1.0.3" &&
	test_set_prereq CRDS

test_expect_success 'the agent-sandbox CRDs of each release are there (t/crds.sh)' '
	test_have_prereq CRDS
'

# Every kustomization is rendered by the real kustomize, the one kubectl
# carries (kubectl kustomize): it, not an imitation, decides what
# `kubectl apply -k` sends. The tests need it; without kubectl they
# fail, loudly, rather than skip (CI has it: contrib/install-deps.sh).
if command -v kubectl >/dev/null 2>&1 &&
	kubectl kustomize --help >/dev/null 2>&1; then
	test_set_prereq KUBECTL
fi

# render <kustomization dir>: kubectl kustomize, the SandboxTemplate as
# one JSON line (the NetworkPolicy beside it is checked on its own)
render() {
	kubectl kustomize "$1" >rendered.yaml &&
	crd-validate --json rendered.yaml >rendered.json &&
	grep "^{\"apiVersion\":\"extensions.agents.x-k8s.io/[^\"]*\",\"kind\":\"SandboxTemplate\"" rendered.json
}

test_expect_success 'every manifest parses and has a basic shape' '
	# (JSON 6902 patches are lists of operations, not objects)
	for f in $(find "$M" -name "*.yaml" ! -name "remove-*.yaml" \
		! -name "container-security.yaml" ! -name "replicas-0.yaml" \
		! -name "api-version.yaml"); do
		crd-validate "$f" >out || { cat out; return 1; }
	done &&
	crd-validate --json "$M/overlays/gke-gvisor/remove-service.yaml" >out &&
	test_grep "\"op\":\"remove\"" out &&
	crd-validate --json "$M/overlays/gke-gvisor/container-security.yaml" >out &&
	test_grep "\"path\":\"/spec/podTemplate/spec/containers/0/securityContext\"" out
'

test_expect_success 'kustomizations list files that exist' '
	for k in $(find "$M" -name kustomization.yaml); do
		d=$(dirname "$k") &&
		crd-validate --json "$k" >k.json &&
		python3 -c "
import json, os, sys
k = json.load(open(\"k.json\"))
d = sys.argv[1]
for r in k.get(\"resources\", []):
    assert os.path.exists(os.path.join(d, r)), r
for p in k.get(\"patches\", []):
    assert os.path.isfile(os.path.join(d, p[\"path\"])), p
for c in k.get(\"components\", []):
    assert os.path.isfile(os.path.join(d, c, \"kustomization.yaml\")), c
" "$d" || return 1
	done
'

test_expect_success 'overlays build on ../base and ../gvisor' '
	test_grep "^  - \.\./\.\./base$" "$M/overlays/gvisor/kustomization.yaml" &&
	test_grep "^  - \.\./gvisor$" "$M/overlays/gke-gvisor/kustomization.yaml"
'

test_expect_success 'kubectl kustomize is installed (it renders the overlays)' '
	test_have_prereq KUBECTL || {
		echo >&4 "kubectl not found: the manifests are rendered with" \
			"kubectl kustomize (kubectl 1.27+; see contrib/install-deps.sh)"
		return 1
	}
'

test_expect_success KUBECTL 'every kustomization renders with kubectl kustomize' '
	for k in $(find "$M" -name kustomization.yaml); do
		kubectl kustomize "$(dirname "$k")" >out 2>err || {
			cat err >&4
			return 1
		}
	done
'

test_expect_success KUBECTL 'render base and overlays' '
	render "$M/base" >base.json &&
	render "$M/overlays/gvisor" >gvisor.json &&
	render "$M/overlays/gke-gvisor" >gke.json &&
	test_line_count = 1 base.json &&
	test_line_count = 1 gvisor.json &&
	test_line_count = 1 gke.json &&
	test_grep "\"runtimeClassName\":\"gvisor\"" gvisor.json &&
	test_grep ! runtimeClassName base.json
'

# Each manifest set: the one apiVersion of its agent-sandbox objects,
# the releases whose CRDs must accept it (strict) and the one that must
# refuse it (it serves no such version). base and the pools are v1beta1
# (v0.5.x, v1.0); v1alpha1/ and GKE's overlay are v1alpha1 (v0.4.x, the
# addon).
manifest_sets='
base                v1beta1  v0.5.6,v1.0.3 v0.4.6
overlays/gvisor     v1beta1  v0.5.6,v1.0.3 v0.4.6
warmpool            v1beta1  v0.5.6,v1.0.3 v0.4.6
cold-start          v1beta1  v0.5.6,v1.0.3 v0.4.6
v1alpha1            v1alpha1 v0.4.6,v0.5.6 v1.0.3
v1alpha1/warmpool   v1alpha1 v0.4.6,v0.5.6 v1.0.3
overlays/gke-gvisor v1alpha1 v0.4.6,v0.5.6 v1.0.3
'

test_expect_success 'every kustomization is one of the manifest sets' '
	echo "$manifest_sets" | sed -n "s/^\([^ ]*\) .*/\1/p" | sort >want &&
	(cd "$M" && find . -name kustomization.yaml) |
	sed -e "s|^\./||" -e "s|/kustomization.yaml$||" |
	grep -v "^components/" | sort >have &&
	test_cmp want have
'

while read -r set ver ok bad; do
	test -n "$set" || continue
	test_expect_success CRDS,KUBECTL "$set renders $ver, valid on $ok, refused by $bad" "
		kubectl kustomize '$M/$set' >set.yaml &&
		crd-validate --json set.yaml >set.json &&
		grep '\"apiVersion\":\"extensions.agents.x-k8s.io/' set.json >objs &&
		test -s objs &&
		! grep -v '\"apiVersion\":\"extensions.agents.x-k8s.io/$ver\"' objs &&
		for r in \$(echo '$ok' | tr , ' '); do
			crd-validate --strict --crds='$CRDS/'\$r set.yaml >out ||
			{ cat out; return 1; }
			test_grep ': ok (extensions.agents.x-k8s.io/$ver)' out ||
			return 1
		done &&
		test_must_fail crd-validate --strict --crds='$CRDS/$bad' set.yaml
	"
done <<EOF
$manifest_sets
EOF

test_expect_success KUBECTL,PYTHON 'the pools: 2 pre-warmed, 0 for a cold start' '
	for set in warmpool:2 cold-start:0 v1alpha1/warmpool:2; do
		kubectl kustomize "$M/${set%:*}" >pool.yaml &&
		crd-validate --json pool.yaml >pool.json &&
		python3 -c "
import json, sys
(p,) = [json.loads(l) for l in open(\"pool.json\")]
assert p[\"kind\"] == \"SandboxWarmPool\", p
assert p[\"metadata\"][\"name\"] == \"go-runtime-warmpool\", p
assert p[\"spec\"] == {\"replicas\": int(sys.argv[1]),
    \"sandboxTemplateRef\": {\"name\": \"go-runtime-template\"}}, p
" "${set#*:}" || return 1
	done
'

test_expect_success KUBECTL 'v1alpha1/ is base but for the apiVersion' '
	kubectl kustomize "$M/base" >b.yaml &&
	kubectl kustomize "$M/v1alpha1" >a.yaml &&
	sed "s|^apiVersion: extensions.agents.x-k8s.io/v1beta1$|apiVersion: extensions.agents.x-k8s.io/v1alpha1|" \
		b.yaml >b-as-alpha.yaml &&
	! cmp -s b.yaml a.yaml &&
	test_cmp b-as-alpha.yaml a.yaml
'

test_expect_success CRDS,KUBECTL 'the validator does reject a bad template' '
	sed "s|\"service\":true|\"service\":\"yes\",\"sevrice\":1|" \
		base.json >bad.json &&
	test_must_fail crd-validate --strict --crds="$CRDS/v1.0.3" bad.json >out &&
	test_grep "spec.service: Invalid value: \"string\"" out &&
	test_grep "unknown field \"spec.sevrice\"" out
'

test_expect_success KUBECTL,PYTHON 'gke-gvisor drops spec.service and locks the pod down' '
	test_grep "\"service\":true" base.json &&
	test_grep ! "\"service\"" gke.json &&
	python3 -c "
import json
t = json.load(open(\"gke.json\"))
p = t[\"spec\"][\"podTemplate\"][\"spec\"]
c = p[\"containers\"][0]
assert p[\"runtimeClassName\"] == \"gvisor\"
assert p[\"nodeSelector\"] == {\"sandbox.gke.io/runtime\": \"gvisor\"}
assert p[\"tolerations\"][0][\"key\"] == \"sandbox.gke.io/runtime\"
assert p[\"securityContext\"][\"runAsNonRoot\"] is True
assert c[\"securityContext\"][\"allowPrivilegeEscalation\"] is False
assert c[\"securityContext\"][\"capabilities\"][\"drop\"] == [\"ALL\"]
assert c[\"securityContext\"][\"seccompProfile\"][\"type\"] == \"RuntimeDefault\"
# the container of the base, whole: kustomize replaces a list that a
# strategic merge patch names (no schema for SandboxTemplate)
b = json.load(open(\"base.json\"))[\"spec\"][\"podTemplate\"][\"spec\"]
bc = b[\"containers\"][0]
assert len(p[\"containers\"]) == 1
for k in (\"image\", \"ports\", \"env\", \"readinessProbe\",
          \"livenessProbe\", \"resources\", \"workingDir\"):
    assert c.get(k) == bc[k], k
assert p[\"automountServiceAccountToken\"] is False
"
'

# the runtime runs what it is asked: only the router may connect
test_expect_success KUBECTL,PYTHON 'a NetworkPolicy admits only the router to the runtime' '
	for k in base overlays/gvisor overlays/gke-gvisor; do
		kubectl kustomize "$M/$k" >np.yaml &&
		python3 -c "
import json, yaml
docs = [d for d in yaml.safe_load_all(open(\"np.yaml\")) if d]
nps = [d for d in docs if d[\"kind\"] == \"NetworkPolicy\"]
assert len(nps) == 1, nps
np = nps[0]
assert np[\"apiVersion\"] == \"networking.k8s.io/v1\", np
s = np[\"spec\"]
tpl = [d for d in docs if d[\"kind\"] == \"SandboxTemplate\"][0]
pod = tpl[\"spec\"][\"podTemplate\"][\"metadata\"][\"labels\"]
# it selects the template pods
assert all(pod.get(k) == v for k, v in s[\"podSelector\"][\"matchLabels\"].items()), (s, pod)
assert s[\"podSelector\"][\"matchLabels\"], s
assert s[\"policyTypes\"] == [\"Ingress\"], s
(rule,) = s[\"ingress\"]
assert rule[\"ports\"] == [{\"protocol\": \"TCP\", \"port\": 8888}], rule
peers = rule[\"from\"]
# every peer is a sandbox-router pod: no ipBlock, no empty selector
for p in peers:
    assert set(p) <= {\"podSelector\", \"namespaceSelector\"}, p
    assert p[\"podSelector\"][\"matchLabels\"][\"app\"] == \"sandbox-router\", p
assert {\"podSelector\": {\"matchLabels\": {\"app\": \"sandbox-router\"}}} in peers
assert {\"namespaceSelector\": {\"matchLabels\": {\"kubernetes.io/metadata.name\": \"agent-sandbox-system\"}},
        \"podSelector\": {\"matchLabels\": {\"app\": \"sandbox-router\",
            \"app.kubernetes.io/name\": \"sandbox-router\"}}} in peers
" || return 1
	done
'

# The routers as agent-sandbox ships them: the pod labels and namespace
# of v1.0.3's Go router (sandbox-router/deploy) and of the v0.4.6
# Python router, read from the modules, against the policy's selectors.
test_expect_success CRDS,KUBECTL,PYTHON 'the policy admits the routers of v0.4.6 and v1.0.3, no other pod' '
	kubectl kustomize "$M/base" >np.yaml &&
	python3 -c "
import yaml, sys
np = [d for d in yaml.safe_load_all(open(\"np.yaml\"))
      if d and d[\"kind\"] == \"NetworkPolicy\"][0]
peers = np[\"spec\"][\"ingress\"][0][\"from\"]
NS = \"sandboxes\"   # the namespace the policy is applied in
def sel(s, labels):
    return all(labels.get(k) == v for k, v in s[\"matchLabels\"].items())
def admits(ns, labels):
    for p in peers:
        if \"namespaceSelector\" in p:
            ok = sel(p[\"namespaceSelector\"], {\"kubernetes.io/metadata.name\": ns})
        else:
            ok = ns == NS
        if ok and sel(p[\"podSelector\"], labels):
            return True
    return False
def pod(path):
    d = [d for d in yaml.safe_load_all(open(path))
         if d and d[\"kind\"] == \"Deployment\"][0]
    return d[\"metadata\"].get(\"namespace\"), d[\"spec\"][\"template\"][\"metadata\"][\"labels\"]
v10 = sys.argv[1] + \"/sandbox-router/deploy/deployment.yaml\"
v04 = sys.argv[2] + \"/clients/python/agentic-sandbox-client/sandbox-router/sandbox_router.yaml\"
ns10, l10 = pod(v10)
ns04, l04 = pod(v04)
assert ns10 == \"agent-sandbox-system\", ns10
assert ns04 is None, ns04   # applied in the sandboxes\u2019 namespace
assert admits(ns10, l10), l10
assert admits(NS, l10), l10   # v1.0.3 router moved beside the sandboxes
assert admits(NS, l04), l04
ctl = pod(sys.argv[1] + \"/k8s/controller.yaml\")
for ns, labels in [
    ctl,                                         # the controller
    (\"agent-sandbox-system\", {\"app\": \"sandbox-router\"}),
    (\"agent-sandbox-system\", {\"app.kubernetes.io/name\": \"sandbox-router\"}),
    (\"kube-system\", l10), (\"other\", l04),       # routers elsewhere
    (NS, {\"app.kubernetes.io/name\": \"sandbox-router\"}),
    (NS, {\"app.kubernetes.io/name\": \"gosbx-runtime\"}),   # a sandbox
    (NS, {}),
]:
    assert not admits(ns, labels), (ns, labels)
" "$CRDS/v1.0.3/../.." "$CRDS/v0.4.6/../.."
'

test_expect_success KUBECTL,PYTHON 'the base template runs the runtime as the spec says' '
	python3 -c "
import json
t = json.load(open(\"base.json\"))
assert t[\"metadata\"][\"name\"] == \"go-runtime-template\"
assert t[\"spec\"][\"service\"] is True
p = t[\"spec\"][\"podTemplate\"][\"spec\"]
c = p[\"containers\"][0]
assert c[\"ports\"] == [{\"name\": \"http\", \"containerPort\": 8888, \"protocol\": \"TCP\"}]
assert c[\"readinessProbe\"][\"httpGet\"] == {\"path\": \"/\", \"port\": 8888}
assert c[\"workingDir\"] == \"/app\"
env = {e[\"name\"]: e[\"value\"] for e in c[\"env\"]}
assert env == {\"SANDBOX_ADDR\": \":8888\", \"SANDBOX_WORKDIR\": \"/app\",
               \"SANDBOX_ALLOW_HOSTS\": \"*.svc,*.svc.cluster.local\"}
assert p[\"securityContext\"][\"runAsUser\"] == 1000
# no API token for code in the sandbox; disk asked for (GKE Autopilot
# gives 1 GiB otherwise); a readiness probe as tight as upstream\u2019s
assert p[\"automountServiceAccountToken\"] is False
r = c[\"resources\"]
assert r[\"requests\"][\"ephemeral-storage\"] and r[\"limits\"][\"ephemeral-storage\"]
assert c[\"readinessProbe\"][\"periodSeconds\"] == 1
assert c[\"readinessProbe\"][\"initialDelaySeconds\"] == 0
assert c[\"livenessProbe\"][\"httpGet\"][\"path\"] == \"/\"
"
'

test_expect_success PYTHON 'the Role has exactly the verbs of the spec' '
	crd-validate --json "$M/rbac.yaml" >rbac.json &&
	python3 -c "
import json
docs = [json.loads(l) for l in open(\"rbac.json\")]
kinds = sorted(d[\"kind\"] for d in docs)
assert kinds == [\"Role\", \"RoleBinding\", \"ServiceAccount\"], kinds
role = [d for d in docs if d[\"kind\"] == \"Role\"][0]
got = {}
for r in role[\"rules\"]:
    for g in r[\"apiGroups\"]:
        for res in r[\"resources\"]:
            got.setdefault((g, res), set()).update(r[\"verbs\"])
want = {
    (\"extensions.agents.x-k8s.io\", \"sandboxclaims\"):
        {\"create\", \"get\", \"list\", \"watch\", \"delete\", \"patch\"},
    (\"agents.x-k8s.io\", \"sandboxes\"): {\"get\", \"list\", \"watch\", \"patch\"},
    (\"extensions.agents.x-k8s.io\", \"sandboxtemplates\"): {\"get\", \"list\"},
    (\"extensions.agents.x-k8s.io\", \"sandboxwarmpools\"): {\"get\", \"list\"},
    (\"\", \"pods\"): {\"get\"},
    (\"\", \"pods/portforward\"): {\"get\", \"create\"},
    (\"discovery.k8s.io\", \"endpointslices\"): {\"list\"},
    (\"\", \"events\"): {\"list\"},
}
assert got == want, got
b = [d for d in docs if d[\"kind\"] == \"RoleBinding\"][0]
assert b[\"roleRef\"][\"name\"] == role[\"metadata\"][\"name\"]
"
'

test_expect_success CRDS 'crd-validate: warn mode prunes, strict refuses' '
	cat >claim.yaml <<-\EOF &&
	apiVersion: extensions.agents.x-k8s.io/v1alpha1
	kind: SandboxClaim
	metadata: {generateName: sandbox-claim-}
	spec:
	  sandboxTemplateRef: {name: go-runtime-template}
	  service: true
	---
	apiVersion: v1
	kind: ConfigMap
	metadata: {name: x}
	EOF
	crd-validate --crds="$CRDS/v0.4.6" claim.yaml >out &&
	test_grep "claim.yaml:1: SandboxClaim/?: warning: unknown field \"spec.service\"" out &&
	test_grep "claim.yaml:7: ConfigMap/x: not checked against a CRD (v1)" out &&
	test_expect_code 1 crd-validate --strict --crds="$CRDS/v0.4.6" claim.yaml >out &&
	test_grep "error: unknown field \"spec.service\"" out &&
	crd-validate --default --json --crds="$CRDS/v0.4.6" claim.yaml >out &&
	test_grep "\"warmpool\":\"default\"" out
'

test_expect_success 'crd-validate: YAML errors name file, line and column' '
	printf "a: 1\nb:\n  c: 1\n    d: 2\n" >bad.yaml &&
	test_expect_code 1 crd-validate bad.yaml >out &&
	test_grep "^cannot parse .bad.yaml.: line 4, column 6: mapping values" out
'

# A small Dockerfile lint (no hadolint or Docker engine here).
test_expect_success 'the runtime Dockerfile passes the lint' '
	D=$GOSBX_SOURCE_DIR/runtime-image/Dockerfile &&
	grep "^FROM " "$D" >froms &&
	test_line_count = 2 froms &&
	! grep -E "^FROM [^ :@]+( |$)|:latest" froms &&
	test_grep "^USER 1000" "$D" &&
	test_grep "^WORKDIR /app" "$D" &&
	test_grep -E "^ENTRYPOINT \[\"[^\"]*gosbx-runtime\"" "$D" &&
	test_grep "^EXPOSE 8888" "$D" &&
	test_grep -E "^HEALTHCHECK|^# No HEALTHCHECK" "$D" &&
	! grep -E "^ADD +(https?|ftp)://" "$D" &&
	test_grep "go build std" "$D" &&
	for v in GOCACHE=/home/sandbox/.cache/go-build \
		GOMODCACHE=/home/sandbox/go/pkg/mod GOTOOLCHAIN=local \
		CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOPATH=; do
		test_grep "$v" "$D" || return 1
	done &&
	test -f "$GOSBX_SOURCE_DIR/runtime-image/README.md"
'

# Docker (and podman) read .dockerignore at the root of the context
# only; without it a host-built build/ lands in the image.
test_expect_success 'the build context leaves build output and .git out' '
	I=$GOSBX_SOURCE_DIR/.dockerignore &&
	for p in .git build "build-\\*" "t/trash"; do
		grep -qx "$p" "$I" || {
			echo >&4 "$p is not ignored" && return 1
		}
	done
'

# No Docker engine here: check that the builder stage installs the
# Debian -dev package of every library the Makefile links, as this
# (Debian) machine resolves them.
test_expect_success 'the Dockerfile builder has every library make needs' '
	D=$GOSBX_SOURCE_DIR/runtime-image/Dockerfile &&
	sed -n "/^FROM .* AS builder/,/^FROM /p" "$D" >builder &&
	pkgs=$(sed -n "s/^PKGS = //p; s/^DL_PKGS = //p" \
		"$GOSBX_SOURCE_DIR/Makefile") &&
	test -n "$pkgs" &&
	for p in $pkgs; do
		pc=$(pkg-config --path "$p") &&
		deb=$(dpkg -S "$pc" | sed -n "1s/:.*//p") &&
		grep -q "[[:space:]]$deb\([[:space:]]\|$\)" builder || {
			echo >&4 "the builder lacks $deb (pkg-config $p)" &&
			return 1
		}
	done &&
	grep -q "[[:space:]]libwslay-dev\([[:space:]]\|$\)" builder
'

test_done
