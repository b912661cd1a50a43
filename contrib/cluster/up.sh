#!/bin/sh
# contrib/cluster/up.sh [--dir=<state dir>] [--agent-sandbox=<release>]
#	[--k8s=<version>] [--etcd=<version>] [--namespace=<ns>]
#	[--no-controller] [--no-nodes] [--no-router]
#	[--router-namespace=<ns>] [--runtime=<gosbx-runtime>]
#	[--sandboxd=<sandboxd>]
#
# Starts a real Kubernetes control plane from the binaries
# contrib/cluster/build.sh put in its cache, in a network namespace of
# its own (loopback only; as a user, in a user namespace of that user):
# enter it with contrib/cluster/in.sh, where the API server is on
# 127.0.0.1 and the pods' IPs are local addresses. etcd, kube-apiserver
# (TLS with client certificates, Node and RBAC authorization,
# service-account tokens, the default admission plugins) and
# kube-controller-manager. Then the agent-sandbox controller of
# <release> (build.sh --agent-sandbox=<release>; --no-controller: none)
# as the ServiceAccount agent-sandbox-system/agent-sandbox-controller
# with the module's own ClusterRoles. Then kube-scheduler and kwok with
# one node, kwok-node-0 (--no-nodes: neither; sandbox pods then stay
# Pending and claims are never Ready): kwok's stages make scheduled pods
# Running and Ready with an IP of 10.244.0.0/24.
#
# Then applies, with kubectl --server-side: the CRDs of agent-sandbox at
# <release> (default in versions.sh; from the Go module, t/crds.sh),
# manifests/rbac.yaml, manifests/base and manifests/warmpool (or their
# v1alpha1 variants where v1beta1 is not served; --validate=strict)
# into <ns> (default "default").
#
# Then (unless --no-router, --no-nodes or --no-controller) pods.py, a
# container runtime for kwok's node: a real gosbx-runtime (--runtime,
# default build/gosbx-runtime) at the IP of each sandbox pod, and the
# router of <release> for the router's pod, which up.sh applies as the
# release's module deploys it (one replica, in <ns>, or in the namespace
# of --router-namespace, e.g. agent-sandbox-system as v1.0 ships it); kwok's
# PortForwards make pods/portforward reach them. up.sh waits until the
# router answers its probe. With --sandboxd, pods.py also runs that
# binary (agent-sandbox's sandboxd, KEP-539.2) for each container whose
# image names sandboxd.
#
# The state directory (default ${TMPDIR:-/tmp}/gosbx-cluster-<uid>)
# holds:
#	pki/                  CA, serving and client certificates (openssl)
#	admin.kubeconfig      user kubernetes-admin, group system:masters
#	gosbx.kubeconfig      the ServiceAccount gosbx-client of <ns>,
#	                      allowed only what manifests/rbac.yaml grants
#	                      (a token from the TokenRequest API)
#	<component>.pid/.log  etcd, kube-apiserver, kube-controller-manager,
#	                      agent-sandbox-controller, kube-scheduler, kwok,
#	                      pods.py
#	netns.pid             the process holding the network namespace
#	pods/<ns>_<pod>/      a pod's directory: its process's log, workdir
#	url                   https://127.0.0.1:<port>
#	etcd-url              http://127.0.0.1:<port>, etcd's client URL
#	audit.log             the API server's audit log (JSON lines): each
#	                      write to a SandboxClaim with its request body,
#	                      each watch of them and each pods/portforward
#	                      (metadata)
# and the two kubeconfig paths are printed. contrib/cluster/down.sh
# stops it all and removes the directory.
#
# Exit 0 when the API server is ready and everything applied; 1 when a
# step failed (its output and the logs' last lines on stderr; what was
# started is stopped, the directory kept); 129 on a usage error.
set -e
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here"/versions.sh
dir=${TMPDIR:-/tmp}/gosbx-cluster-$(id -u)
k8s=$GOSBX_CLUSTER_K8S
etcd=$GOSBX_CLUSTER_ETCD
release=$GOSBX_CLUSTER_AGENT_SANDBOX
ns=default
controller=1
nodes=1
router=1
router_ns=
runtime=${GOSBX_BUILD_DIR:-$top/build}/gosbx-runtime
sandboxd=

usage="usage: contrib/cluster/up.sh [--dir=<state dir>] [--agent-sandbox=<release>] [--k8s=<version>] [--etcd=<version>] [--namespace=<ns>] [--no-controller] [--no-nodes] [--no-router] [--router-namespace=<ns>] [--runtime=<gosbx-runtime>] [--sandboxd=<sandboxd>]"
for arg; do
	case $arg in
	--dir=?*) dir=${arg#--dir=} ;;
	--agent-sandbox=v*) release=${arg#--agent-sandbox=} ;;
	--k8s=v*) k8s=${arg#--k8s=} ;;
	--etcd=v*) etcd=${arg#--etcd=} ;;
	--namespace=?*) ns=${arg#--namespace=} ;;
	--no-controller) controller= ;;
	--no-nodes) nodes= ;;
	--no-router) router= ;;
	--router-namespace=?*) router_ns=${arg#--router-namespace=} ;;
	--runtime=?*) runtime=${arg#--runtime=} ;;
	--sandboxd=?*) sandboxd=${arg#--sandboxd=} ;;
	-h | --help)
		echo "$usage"
		exit 0
		;;
	*)
		echo "$usage" >&2
		exit 129
		;;
	esac
done
case $dir in
/*) ;;
*) dir=$PWD/$dir ;;
esac
case $runtime in
/*) ;;
*) runtime=$PWD/$runtime ;;
esac
# the routers and runtimes run on kwok's node, by the controller's pods
test -n "$nodes" && test -n "$controller" || router=

die() {
	echo "up.sh: $*" >&2
	exit 1
}

bin_etcd=$GOSBX_CLUSTER_CACHE/etcd-$etcd/bin/etcd
bin_api=$GOSBX_CLUSTER_CACHE/kube-apiserver-$k8s/bin/kube-apiserver
bin_kcm=$GOSBX_CLUSTER_CACHE/kube-controller-manager-$k8s/bin/kube-controller-manager
bin_sched=$GOSBX_CLUSTER_CACHE/kube-scheduler-$k8s/bin/kube-scheduler
bin_kwok=$GOSBX_CLUSTER_CACHE/kwok-$GOSBX_CLUSTER_KWOK/bin/kwok
set -- "$bin_etcd" "$bin_api" "$bin_kcm"
test -z "$nodes" || set -- "$@" "$bin_sched" "$bin_kwok"
for b; do
	test -x "$b" ||
		die "'$b' is not built: run contrib/cluster/build.sh --k8s=$k8s --etcd=$etcd (or up.sh --no-nodes)"
done
for f in stages.yaml crds/kwok.x-k8s.io_portforwards.yaml; do
	if test -n "$nodes" && ! test -f "${bin_kwok%/bin/kwok}/$f"; then
		die "'${bin_kwok%/bin/kwok}/$f' is missing: run contrib/cluster/build.sh"
	fi
done
bin_asc=$GOSBX_CLUSTER_CACHE/agent-sandbox-controller-$release/bin/agent-sandbox-controller
# the router of the release: the Go one (v0.5+) built by build.sh, or
# the Python one (v0.4.x) from the module's source, run by Debian's
# python3 with fastapi, httpx and uvicorn
bin_router=$GOSBX_CLUSTER_CACHE/sandbox-router-$release/bin/sandbox-router
if test -n "$router"; then
	test -x "$runtime" ||
		die "'$runtime' is not built: run make (or give up.sh --runtime=<gosbx-runtime>)"
	case $release in
	v0.[0-4].*)
		bin_router=
		/usr/bin/python3 -c 'import fastapi, httpx, uvicorn' 2>/dev/null ||
			die "the router of agent-sandbox $release needs /usr/bin/python3 with fastapi, httpx and uvicorn (contrib/install-deps.sh)"
		;;
	*)
		test -x "$bin_router" ||
			die "'$bin_router' is not built: run contrib/cluster/build.sh --agent-sandbox=$release (or up.sh --no-router)"
		;;
	esac
fi
if test -n "$controller" && ! test -x "$bin_asc"; then
	die "'$bin_asc' is not built: run contrib/cluster/build.sh --agent-sandbox=$release (or up.sh --no-controller)"
fi
for c in openssl kubectl python3 unshare nsenter; do
	command -v $c >/dev/null || die "'$c' is needed"
done
if test -z "${GOSBX_CLUSTER_NETNS:-}"; then
	if test -e "$dir/gosbx-cluster"; then
		die "a cluster runs in '$dir' already (contrib/cluster/down.sh --dir=$dir)"
	fi
	# down.sh removes the directory: never one with something else in it
	if test -d "$dir" && test -n "$(ls -A "$dir")"; then
		die "'$dir' is not empty: give up.sh a new or empty --dir"
	fi
fi
# The cluster gets a network namespace of its own (loopback only; the
# pod CIDR routed to lo, so that every pod IP is a local address for
# pods.py's processes), held by a sleeping process: up.sh runs again
# inside it (GOSBX_CLUSTER_NETNS), and so does everything it starts.
# As a user, a user namespace owns it (unshare --map-root-user).
pod_cidr=10.244.0.0/24
if test -z "${GOSBX_CLUSTER_NETNS:-}"; then
	ip=$(command -v ip || echo /sbin/ip)
	mkdir -p "$dir"
	: >"$dir/gosbx-cluster"
	if test "$(id -u)" = 0; then
		set -- --net
	else
		set -- --user --map-root-user --net
	fi
	unshare "$@" -- sh -c "'$ip' link set lo up &&
		'$ip' route add local $pod_cidr dev lo table local &&
		echo ready && exec sleep infinity" >"$dir/netns.log" 2>&1 </dev/null &
	echo $! >"$dir/netns.pid"
	i=0
	until grep -q ready "$dir/netns.log" 2>/dev/null; do
		if ! kill -0 "$(cat "$dir/netns.pid")" 2>/dev/null || test $i -ge 100; then
			cat "$dir/netns.log" >&2
			"$here"/down.sh --dir="$dir" --keep >/dev/null 2>&1
			die "cannot make a network namespace (unshare $*)"
		fi
		sleep 0.1
		i=$((i + 1))
	done
	set --
	test -z "$controller" && set -- "$@" --no-controller
	test -z "$nodes" && set -- "$@" --no-nodes
	test -z "$router" && set -- "$@" --no-router
	test -n "$router_ns" && set -- "$@" --router-namespace="$router_ns"
	test -n "$sandboxd" && set -- "$@" --sandboxd="$sandboxd"
	GOSBX_CLUSTER_NETNS=1 exec "$here"/in.sh --dir="$dir" "$0" \
		--dir="$dir" --agent-sandbox="$release" --k8s="$k8s" \
		--etcd="$etcd" --namespace="$ns" --runtime="$runtime" "$@"
fi

# on failure: the logs' last lines, then stop what was started
fail() {
	st=$?
	trap - EXIT
	test $st = 0 && return 0
	for f in "$dir"/*.log; do
		test -s "$f" || continue
		echo "--- last lines of $f" >&2
		tail -n 15 "$f" >&2
	done
	"$here"/down.sh --dir="$dir" --keep >&2 || :
	echo "up.sh: failed; logs kept in '$dir'" >&2
	exit 1
}
trap fail EXIT

# free loopback TCP ports, one per argument
free_ports() {
	python3 -c '
import socket, sys
ss = []
for _ in range(int(sys.argv[1])):
	s = socket.socket()
	s.bind(("127.0.0.1", 0))
	ss.append(s)
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}
# shellcheck disable=SC2046
set -- $(free_ports 7)
etcd_port=$1 etcd_peer=$2 api_port=$3 kcm_port=$4 asc_port=$5
sched_port=$6 kwok_port=$7
url=https://127.0.0.1:$api_port
echo "$url" >"$dir/url"
echo "http://127.0.0.1:$etcd_port" >"$dir/etcd-url"

# --- certificates (EC P-256; a day is enough for a test cluster)
pki=$dir/pki
mkdir -p "$pki"
(
	cd "$pki"
	ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
	# shellcheck disable=SC2086
	openssl req -x509 $ec -keyout ca.key -out ca.crt -days 2 \
		-subj /CN=gosbx-cluster-ca \
		-addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign
	printf '%s\n' "basicConstraints=CA:FALSE" \
		"keyUsage=critical,digitalSignature,keyEncipherment" \
		"extendedKeyUsage=clientAuth" >client.ext
	{
		printf '%s\n' "basicConstraints=CA:FALSE" \
			"keyUsage=critical,digitalSignature,keyEncipherment" \
			"extendedKeyUsage=serverAuth"
		printf 'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,'
		printf 'DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,'
		printf 'DNS:kubernetes.default.svc,'
		printf 'DNS:kubernetes.default.svc.cluster.local\n'
	} >server.ext
	# cert <name> <subject> <ext file>
	cert() {
		# shellcheck disable=SC2086
		openssl req $ec -keyout "$1.key" -out "$1.csr" -subj "$2"
		openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key \
			-CAcreateserial -out "$1.crt" -days 2 -extfile "$3"
	}
	cert apiserver /CN=kube-apiserver server.ext
	cert admin "/O=system:masters/CN=kubernetes-admin" client.ext
	cert kcm /CN=system:kube-controller-manager client.ext
	cert scheduler /CN=system:kube-scheduler client.ext
	# kwok's kubelet endpoint, which the API server verifies
	{
		printf '%s\n' "basicConstraints=CA:FALSE" \
			"keyUsage=critical,digitalSignature,keyEncipherment" \
			"extendedKeyUsage=serverAuth" \
			"subjectAltName=IP:127.0.0.1,DNS:kwok-node-0"
	} >kubelet.ext
	cert kubelet /CN=system:node:kwok-node-0 kubelet.ext
	# the API server's client to the kubelets (none yet; kwok later)
	cert kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" \
		client.ext
	# service-account token signing key pair
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
		-out sa.key
	openssl pkey -in sa.key -pubout -out sa.pub
) >"$dir/pki.log" 2>&1 || die "openssl failed: $(tail -n 5 "$dir/pki.log")"

# kubeconfig <file> <user> [cert <name> | token <token>]
kubeconfig() {
	b64() { base64 <"$1" | tr -d '\n'; }
	{
		cat <<EOF
apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: $(b64 "$pki/ca.crt")
    server: $url
  name: gosbx-cluster
contexts:
- context:
    cluster: gosbx-cluster
    namespace: $ns
    user: $2
  name: gosbx-cluster
current-context: gosbx-cluster
users:
- name: $2
  user:
EOF
		if test "$3" = cert; then
			echo "    client-certificate-data: $(b64 "$pki/$4.crt")"
			echo "    client-key-data: $(b64 "$pki/$4.key")"
		else
			echo "    token: $4"
		fi
	} >"$1"
	chmod 600 "$1"
}
kubeconfig "$dir/admin.kubeconfig" kubernetes-admin cert admin
kubeconfig "$dir/kcm.kubeconfig" system:kube-controller-manager cert kcm
kubeconfig "$dir/scheduler.kubeconfig" system:kube-scheduler cert scheduler

# start <name> <command...>: in the background, its pid in <name>.pid
start() {
	n=$1
	shift
	nohup "$@" >"$dir/$n.log" 2>&1 </dev/null &
	echo $! >"$dir/$n.pid"
}

# poll <seconds> <what> <command...>: until the command succeeds
poll() {
	end=$(($(date +%s) + $1))
	what=$2
	shift 2
	until "$@" >/dev/null 2>&1; do
		test "$(date +%s)" -lt $end || die "$what: not within the time"
		sleep 0.2
	done
}
# run <command...>: its output shown, or on failure on stderr
run() {
	"$@" >"$dir/apply.log" 2>&1 || {
		cat "$dir/apply.log" >&2
		die "failed: $*"
	}
	cat "$dir/apply.log"
}
alive() {
	kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null ||
		die "$1 exited (see $dir/$1.log)"
}

# --- etcd (plain HTTP on loopback, one member)
start etcd "$bin_etcd" --name=gosbx --data-dir="$dir/etcd" \
	--listen-client-urls="http://127.0.0.1:$etcd_port" \
	--advertise-client-urls="http://127.0.0.1:$etcd_port" \
	--listen-peer-urls="http://127.0.0.1:$etcd_peer" \
	--initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer" \
	--initial-cluster="gosbx=http://127.0.0.1:$etcd_peer" \
	--listen-metrics-urls= --log-level=warn
etcd_ready() {
	alive etcd
	python3 -c '
import sys, urllib.request
r = urllib.request.urlopen(sys.argv[1] + "/health", timeout=2)
sys.exit(0 if b"\"health\":\"true\"" in r.read() else 1)' \
		"http://127.0.0.1:$etcd_port"
}
poll 30 "etcd on port $etcd_port" etcd_ready

# the audit policy: what clients send to SandboxClaims, who watches
# them and who opens port-forwards, nothing else
cat >"$dir/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Request
  resources:
  - group: extensions.agents.x-k8s.io
    resources: [sandboxclaims]
  verbs: [create, update, patch, delete, deletecollection]
- level: Metadata
  resources:
  - group: ""
    resources: [pods/portforward]
- level: Metadata
  resources:
  - group: extensions.agents.x-k8s.io
    resources: [sandboxclaims]
  verbs: [watch]
- level: None
EOF

# --- kube-apiserver (its address is loopback, which the reconciler of
# the kubernetes Service's endpoints refuses: no reconciler)
start kube-apiserver "$bin_api" \
	--bind-address=127.0.0.1 --secure-port="$api_port" \
	--advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
	--etcd-servers="http://127.0.0.1:$etcd_port" \
	--tls-cert-file="$pki/apiserver.crt" \
	--tls-private-key-file="$pki/apiserver.key" \
	--client-ca-file="$pki/ca.crt" \
	--authorization-mode=Node,RBAC \
	--service-account-issuer=https://kubernetes.default.svc.cluster.local \
	--service-account-key-file="$pki/sa.pub" \
	--service-account-signing-key-file="$pki/sa.key" \
	--service-cluster-ip-range=10.96.0.0/16 \
	--kubelet-client-certificate="$pki/kubelet-client.crt" \
	--kubelet-client-key="$pki/kubelet-client.key" \
	--kubelet-certificate-authority="$pki/ca.crt" \
	--audit-policy-file="$dir/audit-policy.yaml" \
	--audit-log-path="$dir/audit.log" --audit-log-format=json \
	--audit-log-mode=blocking \
	--enable-bootstrap-token-auth=false --profiling=false \
	--v=1
kadm() { kubectl --kubeconfig="$dir/admin.kubeconfig" "$@"; }
api_ready() {
	alive kube-apiserver
	test "$(kadm get --raw=/readyz 2>/dev/null)" = ok
}
poll 90 "kube-apiserver /readyz on $url" api_ready

# --- kube-controller-manager (its own certificate; RBAC's default
# system:kube-controller-manager binding; one service-account
# credential per controller)
start kube-controller-manager "$bin_kcm" \
	--kubeconfig="$dir/kcm.kubeconfig" \
	--authentication-kubeconfig="$dir/kcm.kubeconfig" \
	--authorization-kubeconfig="$dir/kcm.kubeconfig" \
	--bind-address=127.0.0.1 --secure-port="$kcm_port" \
	--service-account-private-key-file="$pki/sa.key" \
	--root-ca-file="$pki/ca.crt" \
	--use-service-account-credentials=true \
	--cluster-signing-cert-file="$pki/ca.crt" \
	--cluster-signing-key-file="$pki/ca.key" \
	--leader-elect=false --profiling=false --v=1
# healthz <name> <port>: its /healthz over HTTPS answers ok
healthz() {
	alive "$1"
	python3 -c '
import ssl, sys, urllib.request
c = ssl._create_unverified_context()
r = urllib.request.urlopen(sys.argv[1] + "/healthz", timeout=2, context=c)
sys.exit(0 if r.read() == b"ok" else 1)' "https://127.0.0.1:$2"
}
poll 60 "kube-controller-manager /healthz on port $kcm_port" \
	healthz kube-controller-manager "$kcm_port"

# --- kube-scheduler and kwok: one node whose kubelet kwok plays (as
# admin: it writes node and pod status); kwok's built-in stages
if test -n "$nodes"; then
	start kube-scheduler "$bin_sched" \
		--kubeconfig="$dir/scheduler.kubeconfig" \
		--authentication-kubeconfig="$dir/scheduler.kubeconfig" \
		--authorization-kubeconfig="$dir/scheduler.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port="$sched_port" \
		--leader-elect=false --profiling=false --v=1
	poll 60 "kube-scheduler /healthz on port $sched_port" \
		healthz kube-scheduler "$sched_port"
	# kwok's PortForward resources, which pods.py writes (one a pod)
	run kadm apply --server-side \
		-f "${bin_kwok%/bin/kwok}/crds/kwok.x-k8s.io_portforwards.yaml"
	run kadm wait --for=condition=Established --timeout=60s \
		crd/portforwards.kwok.x-k8s.io
	start kwok "$bin_kwok" --kubeconfig="$dir/admin.kubeconfig" \
		--config="${bin_kwok%/bin/kwok}/stages.yaml" \
		--enable-crds=PortForward \
		--manage-all-nodes=false \
		--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
		--node-ip=127.0.0.1 --node-port="$kwok_port" \
		--cidr="${pod_cidr%.0/*}.1/${pod_cidr#*/}" \
		--server-address="127.0.0.1:$kwok_port" \
		--tls-cert-file="$pki/kubelet.crt" \
		--tls-private-key-file="$pki/kubelet.key" \
		--node-lease-duration-seconds=40
	cat >"$dir/node.yaml" <<EOF
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-0
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    kubernetes.io/hostname: kwok-node-0
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", ephemeral-storage: 1Ti}
  capacity: {cpu: "32", memory: 256Gi, pods: "110", ephemeral-storage: 1Ti}
EOF
	run kadm apply --server-side -f "$dir/node.yaml"
	node_ready() {
		alive kwok
		test "$(kadm get node kwok-node-0 \
			-o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True
	}
	poll 60 "node kwok-node-0 Ready (kwok)" node_ready
fi

# --- agent-sandbox CRDs, the project's RBAC and template
# (GOSBX_CRDS_DIR: a directory of t/crds.sh's that has the release)
crds=${GOSBX_CRDS_DIR:-}
if ! test -f "$crds/$release/extensions.agents.x-k8s.io_sandboxclaims.yaml"; then
	crds=$(AGENT_SANDBOX_RELEASES=$release "$top"/t/crds.sh "$dir/crds")
fi
run kadm apply --server-side -f "$crds/$release/"
# kubectl wait fails at once ("accessor error: <nil>") on a CRD whose
# status has no conditions yet, which happens under load: wait for
# the conditions to be there first (bounded), then for Established
for crd in sandboxclaims.extensions.agents.x-k8s.io \
	sandboxtemplates.extensions.agents.x-k8s.io sandboxes.agents.x-k8s.io; do
	tries=0
	until test -n "$(kadm get "crd/$crd" \
		-o jsonpath='{.status.conditions[*].type}' 2>/dev/null)"; do
		tries=$((tries + 1))
		test $tries -le 600 || die "CRD $crd has no status after 60 s"
		sleep 0.1
	done
done
run kadm wait --for=condition=Established --timeout=60s \
	crd/sandboxclaims.extensions.agents.x-k8s.io \
	crd/sandboxtemplates.extensions.agents.x-k8s.io \
	crd/sandboxes.agents.x-k8s.io
kadm get namespace "$ns" >/dev/null 2>&1 || run kadm create namespace "$ns"
run kadm -n "$ns" apply --server-side --validate=strict \
	-f "$top/manifests/rbac.yaml"
# manifests/base and manifests/warmpool are extensions.agents.x-k8s.io/
# v1beta1 (agent-sandbox v0.5.x and v1.0); manifests/v1alpha1 and
# manifests/v1alpha1/warmpool are the same as v1alpha1, for v0.4.x. The
# variant is the one the served CRD asks for: v0.5.x serves both, and
# its v1alpha1 would go through the controller's conversion webhook,
# which does not run here.
served=$(kadm get crd sandboxtemplates.extensions.agents.x-k8s.io \
	-o 'jsonpath={.spec.versions[?(@.served==true)].name}')
case " $served " in
*" v1beta1 "*) template=manifests/base pool=manifests/warmpool ;;
*" v1alpha1 "*) template=manifests/v1alpha1 pool=manifests/v1alpha1/warmpool ;;
*) die "sandboxtemplates served in versions '$served', neither v1alpha1 nor v1beta1" ;;
esac
echo "note: agent-sandbox $release serves '$served': applying $template and $pool"
kadm kustomize "$top/$template" >"$dir/base.yaml"
run kadm -n "$ns" apply --server-side --validate=strict -f "$dir/base.yaml"
kadm kustomize "$top/$pool" >"$dir/warmpool.yaml"
run kadm -n "$ns" apply --server-side --validate=strict -f "$dir/warmpool.yaml"

# the ServiceAccount's token (TokenRequest), a day long
token=$(kadm -n "$ns" create token gosbx-client --duration=24h) ||
	die "cannot get a token for serviceaccount '$ns/gosbx-client'"
kubeconfig "$dir/gosbx.kubeconfig" "system:serviceaccount:$ns:gosbx-client" \
	token "$token"

# --- the agent-sandbox controller: the module's ClusterRoles, bound as
# its own k8s/controller.yaml and extensions.yaml do (their Deployment
# and Service left out: the controller runs here, not in a pod)
if test -n "$controller"; then
	k8sdir=$(cd -P "$crds/$release" && cd .. && pwd)
	python3 -c '
import re, sys
for f in sys.argv[1:]:
	for doc in re.split(r"(?m)^---\s*$", open(f).read()):
		if re.search(r"(?m)^kind: *(Deployment|Service)\s*$", doc) or \
		   not re.search(r"(?m)^kind:", doc):
			continue
		print("---")
		print(doc.strip("\n"))' "$k8sdir/controller.yaml" \
		"$k8sdir/rbac.generated.yaml" "$k8sdir/extensions.yaml" \
		"$k8sdir/extensions-rbac.generated.yaml" >"$dir/controller-rbac.yaml"
	run kadm apply --server-side -f "$dir/controller-rbac.yaml"
	asc_token=$(kadm -n agent-sandbox-system create token \
		agent-sandbox-controller --duration=24h) ||
		die "cannot get a token for the agent-sandbox controller"
	kubeconfig "$dir/controller.kubeconfig" agent-sandbox-controller \
		token "$asc_token"
	start agent-sandbox-controller \
		env KUBECONFIG="$dir/controller.kubeconfig" \
		"$bin_asc" --extensions --leader-elect=false \
		--metrics-bind-address=0 \
		--health-probe-bind-address="127.0.0.1:$asc_port"
	asc_ready() {
		alive agent-sandbox-controller
		python3 -c '
import sys, urllib.request
r = urllib.request.urlopen(sys.argv[1] + "/readyz", timeout=2)
sys.exit(0 if r.status == 200 else 1)' "http://127.0.0.1:$asc_port"
	}
	poll 60 "agent-sandbox-controller /readyz on port $asc_port" asc_ready
fi

# --- the pods' processes (pods.py) and the router of the release, as
# its module deploys it, in <ns> (where gosbx and the upstream SDKs look
# for sandbox-router-svc), one replica
if test -n "$router"; then
	moddir=$(cd -P "$crds/$release" && cd ../.. && pwd)
	set -- --dir="$dir" --node=kwok-node-0 --release="$release" \
		--runtime="$runtime"
	test -n "$sandboxd" && set -- "$@" --sandboxd="$sandboxd"
	if test -n "$bin_router"; then
		set -- "$@" --router-go="$bin_router"
		for f in serviceaccount rbac service deployment; do
			echo "---"
			cat "$moddir/sandbox-router/deploy/$f.yaml"
		done >"$dir/router.yaml"
		probe=8081/readyz
	else
		rpy=$moddir/clients/python/agentic-sandbox-client/sandbox-router
		set -- "$@" --router-py="$rpy"
		cat "$rpy/sandbox_router.yaml" >"$dir/router.yaml"
		probe=8080/healthz
	fi
	start pods.py python3 "$here"/pods.py "$@"
	rns=${router_ns:-$ns}
	kadm get namespace "$rns" >/dev/null 2>&1 ||
		run kadm create namespace "$rns"
	sed -i -e "s|^\( *namespace:\) agent-sandbox-system\$|\1 $rns|" \
		-e 's|^\( *replicas:\) [0-9]*|\1 1|' \
		-e "s|\\\${ROUTER_IMAGE}|sandbox-router:$release|" "$dir/router.yaml"
	run kadm -n "$rns" apply --server-side -f "$dir/router.yaml"
	# ready: its pod has an IP and the router answers its probe there
	router_ready() {
		alive pods.py
		rip=$(kadm -n "$rns" get pods -l app=sandbox-router \
			-o 'jsonpath={.items[0].status.podIP}') &&
			test -n "$rip" &&
			python3 -c '
import sys, urllib.request
r = urllib.request.urlopen(sys.argv[1], timeout=2)
sys.exit(0 if r.status == 200 else 1)' "http://$rip:${probe%%/*}/${probe#*/}"
	}
	poll 90 "the sandbox-router of $release answering at its pod IP" \
		router_ready
fi

trap - EXIT
if test -n "$controller"; then
	what="agent-sandbox $release with its controller"
else
	what="agent-sandbox $release CRDs, no controller"
fi
test -z "$router" || what="$what, its router"
if test -n "$nodes"; then
	what="$what, node kwok-node-0"
else
	what="$what, no nodes"
fi
echo "kubernetes $k8s (etcd $etcd, $what) at $url"
echo "admin kubeconfig: $dir/admin.kubeconfig"
echo "gosbx kubeconfig: $dir/gosbx.kubeconfig"
echo "its network: $here/in.sh --dir=$dir <command>"
