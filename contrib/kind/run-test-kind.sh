#!/usr/bin/env bash
# End-to-end test of gosbx's kube backend on a local kind cluster: the
# "Path A" install of the seed (kind + agent-sandbox release manifests +
# sandbox-router + the gosbx runtime image), then gosbx doctor, demo and
# smoke against it. See Documentation/guide-kubernetes.txt.
#
# Run from anywhere inside the repository:
#
#     contrib/kind/run-test-kind.sh
#
# Environment (all optional):
#   CLUSTER        kind cluster name (default gosbx-e2e; reused if it exists)
#   NS             namespace of the router, template and claims (default default)
#   AS_VERSION     agent-sandbox release (default v1.0.3; v0.4.6 is the
#                  documented alternative)
#   AS_RELEASE_URL where the release manifests are downloaded from (default
#                  the GitHub release of AS_VERSION): v1.x
#                  sandbox-with-extensions.yaml, v0.x manifest.yaml and
#                  extensions.yaml
#   ROUTER_SRC     docker build context of the router (default the upstream
#                  repository at AS_VERSION, git context: v1.x the Go router,
#                  sandbox-router/Dockerfile at the root, v0.x the Python one)
#   ROUTER_YAML_URL v0.x: sandbox_router.yaml to deploy (default upstream at
#                  AS_VERSION); v1.x: the directory of the Go router's
#                  sandbox-router/deploy (serviceaccount, rbac, service and
#                  deployment.yaml are applied, moved into NS)
#   ROUTER_IMAGE   tag of the built router image (default
#                  sandbox-router-go:AS_VERSION, v0.x sandbox-router:AS_VERSION)
#   RUNTIME_IMAGE  tag of the built runtime image (default gosbx-runtime:kind-e2e;
#                  not :latest, so the kubelet uses the loaded image)
#   WARMPOOL=1     also apply the warm pool on v0.4.x (manifests/v1alpha1/
#                  warmpool); v0.5 and later always get manifests/warmpool,
#                  as every claim names a pool
#   GOSBX          the gosbx binary (default build/gosbx, built with make)
#   KEEP_CLUSTER=0 delete the kind cluster at the end (default: keep it)
#   SKIP_BUILD=1   do not build or load the images (they are already loaded)
set -euo pipefail

CLUSTER=${CLUSTER:-gosbx-e2e}
NS=${NS:-default}
AS_VERSION=${AS_VERSION:-v1.0.3}
AS_REPO=https://github.com/kubernetes-sigs/agent-sandbox
AS_RAW=https://raw.githubusercontent.com/kubernetes-sigs/agent-sandbox/$AS_VERSION
AS_RELEASE_URL=${AS_RELEASE_URL:-$AS_REPO/releases/download/$AS_VERSION}
# v1.x: the Go router (image sandbox-router-go, built from the repository
# root; its deploy/ puts it in agent-sandbox-system, moved here into NS,
# where gosbx looks for sandbox-router-svc). Its default --authz-mode is
# allow-all: it needs no token (ROUTER_AUTH_TOKEN is the Python router's).
case "$AS_VERSION" in
v0.*)
	GO_ROUTER=0
	ROUTER_SRC=${ROUTER_SRC:-$AS_REPO.git#$AS_VERSION:clients/python/agentic-sandbox-client/sandbox-router}
	ROUTER_YAML_URL=${ROUTER_YAML_URL:-$AS_RAW/clients/python/agentic-sandbox-client/sandbox-router/sandbox_router.yaml}
	ROUTER_IMAGE=${ROUTER_IMAGE:-sandbox-router:$AS_VERSION}
	ROUTER_DEPLOYMENT=sandbox-router-deployment
	;;
*)
	GO_ROUTER=1
	ROUTER_SRC=${ROUTER_SRC:-$AS_REPO.git#$AS_VERSION}
	ROUTER_YAML_URL=${ROUTER_YAML_URL:-$AS_RAW/sandbox-router/deploy}
	ROUTER_IMAGE=${ROUTER_IMAGE:-sandbox-router-go:$AS_VERSION}
	ROUTER_DEPLOYMENT=sandbox-router
	;;
esac
RUNTIME_IMAGE=${RUNTIME_IMAGE:-gosbx-runtime:kind-e2e}
PLACEHOLDER_IMAGE=ghcr.io/gosbx/gosbx-runtime:latest
TEMPLATE=go-runtime-template
WARMPOOL=${WARMPOOL:-0}
# the manifests of the API version the release serves: v0.4.x only
# v1alpha1, v0.5.x both, v1.0 only v1beta1 (every claim names a pool)
case "$AS_VERSION" in
v0.[0-4].*)
	TEMPLATE_DIR=manifests/v1alpha1
	POOL_DIR=manifests/v1alpha1/warmpool
	;;
*)
	TEMPLATE_DIR=manifests/base
	POOL_DIR=manifests/warmpool
	WARMPOOL=1
	;;
esac
KEEP_CLUSTER=${KEEP_CLUSTER:-1}
SKIP_BUILD=${SKIP_BUILD:-0}

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
GOSBX=${GOSBX:-$ROOT/build/gosbx}

say() { printf '==> %s\n' "$*"; }
die() { printf 'run-test-kind: %s\n' "$*" >&2; exit 1; }

# Prerequisites, all checked before anything is changed.
missing=0
need() {
	if ! command -v "$1" >/dev/null 2>&1; then
		printf 'run-test-kind: %s not found: %s\n' "$1" "$2" >&2
		missing=1
	fi
}
need docker "install Docker 20.10+ (https://docs.docker.com/engine/install/)"
need kind "install kind 0.20+ (https://kind.sigs.k8s.io/docs/user/quick-start/#installation)"
need kubectl "install kubectl 1.30+ (https://kubernetes.io/docs/tasks/tools/)"
need curl "install curl (apt-get install curl)"
need make "install make (contrib/install-deps.sh)"
[ "$missing" = 0 ] || exit 1
docker info >/dev/null 2>&1 ||
	die "docker cannot reach a Docker engine (is the daemon running, may you use it?)"

KCTX=kind-$CLUSTER
k() { kubectl --context "$KCTX" "$@"; }
g() {
	"$GOSBX" --backend=kube --context="$KCTX" --namespace="$NS" \
		--template="$TEMPLATE" "$@"
}

cleanup() {
	rc=$?
	set +e
	say "cleaning up per-test resources in namespace $NS"
	k -n "$NS" delete sandboxclaims --all --ignore-not-found --wait=false
	k -n "$NS" delete -k "$POOL_DIR" --ignore-not-found
	k -n "$NS" delete -k "$TEMPLATE_DIR" --ignore-not-found
	k -n "$NS" delete deployment "$ROUTER_DEPLOYMENT" --ignore-not-found
	k -n "$NS" delete service sandbox-router-svc --ignore-not-found
	if [ "$KEEP_CLUSTER" = 0 ]; then
		say "deleting kind cluster $CLUSTER"
		kind delete cluster --name "$CLUSTER"
	else
		say "kept kind cluster $CLUSTER (kind delete cluster --name $CLUSTER)"
	fi
	exit "$rc"
}

say "building gosbx"
if [ "$GOSBX" = "$ROOT/build/gosbx" ]; then
	make -C "$ROOT" >/dev/null
fi
[ -x "$GOSBX" ] || die "$GOSBX is not an executable gosbx"

if kind get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
	say "reusing kind cluster $CLUSTER"
else
	say "creating kind cluster $CLUSTER"
	kind create cluster --name "$CLUSTER"
fi
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$NS" != default ]; then
	k create namespace "$NS" --dry-run=client -o yaml | k apply -f -
fi

say "installing agent-sandbox $AS_VERSION"
if [ "$GO_ROUTER" = 1 ]; then
	k apply -f "$AS_RELEASE_URL/sandbox-with-extensions.yaml"
else
	k apply -f "$AS_RELEASE_URL/manifest.yaml"
	k apply -f "$AS_RELEASE_URL/extensions.yaml"
fi
k wait --for=condition=Established --timeout=120s \
	crd/sandboxes.agents.x-k8s.io \
	crd/sandboxclaims.extensions.agents.x-k8s.io \
	crd/sandboxtemplates.extensions.agents.x-k8s.io
k -n agent-sandbox-system rollout status deployment/agent-sandbox-controller \
	--timeout=180s

if [ "$SKIP_BUILD" != 1 ]; then
	say "building $ROUTER_IMAGE from $ROUTER_SRC"
	if [ "$GO_ROUTER" = 1 ]; then
		docker build -f sandbox-router/Dockerfile -t "$ROUTER_IMAGE" \
			"$ROUTER_SRC"
	else
		docker build -t "$ROUTER_IMAGE" "$ROUTER_SRC"
	fi
	say "building $RUNTIME_IMAGE from runtime-image/Dockerfile"
	# (the repository's .dockerignore keeps build/ and .git out)
	docker build -f runtime-image/Dockerfile -t "$RUNTIME_IMAGE" .
	say "loading the images into $CLUSTER"
	kind load docker-image "$ROUTER_IMAGE" --name "$CLUSTER"
	kind load docker-image "$RUNTIME_IMAGE" --name "$CLUSTER"
fi

say "deploying the sandbox-router in $NS"
if [ "$GO_ROUTER" = 1 ]; then
	for f in serviceaccount rbac service deployment; do
		curl -sfL "$ROUTER_YAML_URL/$f.yaml" || exit 1
		echo ---
	done |
		sed -e "s|namespace: agent-sandbox-system|namespace: $NS|" \
			-e "s|image: registry.k8s.io/agent-sandbox/sandbox-router-go:.*|image: $ROUTER_IMAGE|" |
		k apply -f -
else
	curl -sfL "$ROUTER_YAML_URL" |
		sed -e "s|\${ROUTER_IMAGE}|$ROUTER_IMAGE|g" |
		k -n "$NS" apply -f -
fi
k -n "$NS" rollout status "deployment/$ROUTER_DEPLOYMENT" --timeout=180s

say "applying $TEMPLATE_DIR with $RUNTIME_IMAGE"
k kustomize "$TEMPLATE_DIR" |
	sed -e "s|$PLACEHOLDER_IMAGE|$RUNTIME_IMAGE|g" |
	k -n "$NS" apply -f -

if [ "$WARMPOOL" = 1 ]; then
	say "applying $POOL_DIR"
	k -n "$NS" apply -k "$POOL_DIR"
fi

say "gosbx doctor"
g doctor --probe
say "gosbx demo --flow=all"
g demo --flow=all
say "gosbx smoke"
g smoke
say "kind end-to-end test passed"
