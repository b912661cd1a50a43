#!/bin/sh
test_description='manifests/ and runtime-image/: valid YAML, kustomize
layout, rendered templates valid against both agent-sandbox releases'
. "$(dirname "$0")"/test-lib.sh

M=$GOSBX_SOURCE_DIR/manifests
CRDS=${GOSBX_CRDS_DIR:-$GOSBX_SOURCE_DIR/../shared/crds}
test -d "$CRDS/v0.4.6" || CRDS=/work/shared/crds
test -d "$CRDS/v0.4.6" && test -d "$CRDS/v0.5.6" && test_set_prereq CRDS

# render <overlay dir>: kustomize's resources + patches for the simple
# cases we use (strategic merge of maps and of lists keyed by name,
# JSON 6902 add/replace/remove), one JSON document per line
cat >render.py <<'PY'
import json, os, subprocess, sys

def load(path):
    out = subprocess.run(["crd-validate", "--json", path], check=True,
                         capture_output=True, text=True).stdout
    return [json.loads(l) for l in out.splitlines() if l.strip()]

def smp(dst, src):
    if isinstance(dst, dict) and isinstance(src, dict):
        for k, v in src.items():
            if v is None:
                dst.pop(k, None)
            elif k in dst:
                dst[k] = smp(dst[k], v)
            else:
                dst[k] = v
        return dst
    if (isinstance(dst, list) and isinstance(src, list) and
            all(isinstance(x, dict) and "name" in x for x in dst + src)):
        for item in src:
            for i, d in enumerate(dst):
                if d["name"] == item["name"]:
                    dst[i] = smp(d, item)
                    break
            else:
                dst.append(item)
        return dst
    return src

def pointer(doc, path):
    parts = [p.replace("~1", "/").replace("~0", "~")
             for p in path.split("/")[1:]]
    for p in parts[:-1]:
        doc = doc[int(p)] if isinstance(doc, list) else doc[p]
    return doc, parts[-1]

def json6902(doc, ops):
    for op in ops:
        parent, key = pointer(doc, op["path"])
        if isinstance(parent, list):
            key = len(parent) if key == "-" else int(key)
        if op["op"] == "remove":
            del parent[key]
        elif op["op"] in ("add", "replace"):
            if op["op"] == "add" and isinstance(parent, list):
                parent.insert(key, op["value"])
            else:
                if op["op"] == "replace" and key not in parent:
                    raise SystemExit("replace of missing " + op["path"])
                parent[key] = op["value"]
        else:
            raise SystemExit("unsupported op " + op["op"])

def matches(doc, target):
    if not target:
        return True
    group, _, version = doc["apiVersion"].rpartition("/")
    return (target.get("group", group) == group and
            target.get("version", version) == version and
            target.get("kind", doc["kind"]) == doc["kind"] and
            target.get("name", doc["metadata"]["name"]) ==
            doc["metadata"]["name"])

def render(d):
    k = load(os.path.join(d, "kustomization.yaml"))[0]
    docs = []
    for r in k.get("resources", []):
        p = os.path.join(d, r)
        docs += render(p) if os.path.isdir(p) else load(p)
    for patch in k.get("patches", []):
        body = load(os.path.join(d, patch["path"]))[0]
        for doc in docs:
            if isinstance(body, list):
                if matches(doc, patch.get("target")):
                    json6902(doc, body)
            elif (body["kind"] == doc["kind"] and
                  body["metadata"]["name"] == doc["metadata"]["name"]):
                smp(doc, {k: v for k, v in body.items()
                          if k not in ("apiVersion", "kind", "metadata")})
    return docs

for doc in render(sys.argv[1]):
    print(json.dumps(doc))
PY

test_expect_success 'every manifest parses and has a basic shape' '
	for f in $(find "$M" -name "*.yaml" ! -name "remove-*.yaml"); do
		crd-validate "$f" >out || { cat out; return 1; }
	done &&
	crd-validate --json "$M/overlays/gke-gvisor/remove-service.yaml" >out &&
	test_grep "\"op\":\"remove\"" out
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
" "$d" || return 1
	done
'

test_expect_success 'overlays build on ../base and ../gvisor' '
	test_grep "^  - \.\./\.\./base$" "$M/overlays/gvisor/kustomization.yaml" &&
	test_grep "^  - \.\./gvisor$" "$M/overlays/gke-gvisor/kustomization.yaml"
'

test_expect_success PYTHON 'render base and overlays' '
	python3 render.py "$M/base" >base.json &&
	python3 render.py "$M/overlays/gvisor" >gvisor.json &&
	python3 render.py "$M/overlays/gke-gvisor" >gke.json &&
	test_line_count = 1 base.json &&
	test_grep "\"runtimeClassName\": \"gvisor\"" gvisor.json &&
	test_grep ! runtimeClassName base.json
'

for r in v0.4.6 v0.5.6; do
	test_expect_success CRDS,PYTHON "rendered templates are valid against $r (strict)" "
		for f in base gvisor gke; do
			crd-validate --strict --crds='$CRDS/$r' \$f.json >out ||
			{ cat out; return 1; }
			test_grep ': ok (extensions.agents.x-k8s.io/v1alpha1)' out ||
			return 1
		done &&
		crd-validate --strict --crds='$CRDS/$r' '$M/warmpool.yaml' >out &&
		test_grep 'SandboxWarmPool/go-runtime-warmpool: ok' out
	"
done

test_expect_success CRDS,PYTHON 'as v1beta1 too, against v0.5.6' '
	sed "s|agents.x-k8s.io/v1alpha1|agents.x-k8s.io/v1beta1|" base.json \
		>beta.json &&
	crd-validate --strict --crds="$CRDS/v0.5.6" beta.json >out &&
	test_grep "ok (extensions.agents.x-k8s.io/v1beta1)" out &&
	test_must_fail crd-validate --strict --crds="$CRDS/v0.4.6" beta.json
'

test_expect_success CRDS,PYTHON 'the validator does reject a bad template' '
	sed "s|\"service\": true|\"service\": \"yes\", \"sevrice\": 1|" \
		base.json >bad.json &&
	test_must_fail crd-validate --strict --crds="$CRDS/v0.4.6" bad.json >out &&
	test_grep "spec.service: Invalid value: \"string\"" out &&
	test_grep "unknown field \"spec.sevrice\"" out
'

test_expect_success PYTHON 'gke-gvisor drops spec.service and locks the pod down' '
	test_grep "\"service\": true" base.json &&
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
assert c[\"image\"] and c[\"ports\"][0][\"containerPort\"] == 8888
assert c[\"resources\"][\"limits\"][\"memory\"]
"
'

test_expect_success PYTHON 'the base template runs the runtime as the spec says' '
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
assert env == {\"SANDBOX_ADDR\": \":8888\", \"SANDBOX_WORKDIR\": \"/app\"}
assert p[\"securityContext\"][\"runAsUser\"] == 1000
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
    (\"agents.x-k8s.io\", \"sandboxes\"): {\"get\", \"list\", \"watch\"},
    (\"extensions.agents.x-k8s.io\", \"sandboxtemplates\"): {\"get\", \"list\"},
    (\"extensions.agents.x-k8s.io\", \"sandboxwarmpools\"): {\"get\", \"list\"},
    (\"\", \"pods\"): {\"get\"},
    (\"\", \"pods/portforward\"): {\"create\"},
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
	test -f "$GOSBX_SOURCE_DIR/runtime-image/.dockerignore" &&
	test -f "$GOSBX_SOURCE_DIR/runtime-image/README.md"
'

test_done
