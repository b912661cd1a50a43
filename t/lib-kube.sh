# Helpers for the Kubernetes tests (t6xxx): a fake API server
# (t/helper/fake-kube.c) with TLS and a required client certificate,
# like a kind cluster. Source after test-lib.sh:
#
#	. "$(dirname "$0")"/test-lib.sh
#	. "$TEST_DIRECTORY"/lib-kube.sh
#
# (lib-runtime.sh is sourced too: json_get, json_is, rt_poll...)
#
# Servers: kube_start [--name=<n>] [--release=<v>] [--insecure]
# [--no-runtime] [--upstream-router] [--] [fake-kube options...] starts
# fake-kube on a free port with a fresh state directory, the CRDs of the
# release (default v0.4.6), one gosbx-runtime per Sandbox and
# --ready-delay=100, waits until it listens and writes a kind-style
# kubeconfig
# (certificate-authority-data, client-certificate-data, client-key-data).
# Its files are named after the server (default "kube"):
#
#	<n>.url         https://127.0.0.1:PORT (http:// with --insecure)
#	<n>.router      http://127.0.0.1:PORT, the router's plain HTTP side
#	<n>.pid         fake-kube's pid     <n>.log  its stderr
#	<n>.kubeconfig  kubeconfig for it   <n>-state/  its state directory
#
# GOSBX_TEST_IMAGE=<image> (e.g. localhost/gosbx-runtime:debian from
# `make image`): each Sandbox's runtime is that image, run by podman
# (runc, slirp4netns, its port 8888 published on 127.0.0.1, explicit
# ulimits; containers labelled gosbx.test=<trash dir>, removed at the
# end) instead of a local gosbx-runtime: the router and port-forward
# of fake-kube reach the runtime inside the container.
#
# GOSBX_TEST_UPSTREAM_ROUTER=<dir>, a directory holding the upstream
# sandbox-router v0.4.6 (sandbox_router.py from kubernetes-sigs/
# agent-sandbox, clients/python/agentic-sandbox-client/sandbox-router;
# by default from the Go module of that version, see below): with it and
# a venv of its requirements.txt (made once, test_python_venv), the
# prerequisite UPSTREAM_ROUTER is set and kube_start --upstream-router
# runs that router (uvicorn on a free loopback port) in place of
# fake-kube's imitation: the port-forward to the router pod's 8080
# reaches it (--router-upstream) and it reaches the pods through
# fake-kube's pod network (--pod-network-port, its HTTP_PROXY).
#
#	<n>.upstream    http://127.0.0.1:PORT, the real router
#	<n>-router.log  its stdout and stderr ("Proxying request for
#	                sandbox '<name>' to URL: ..." per request)
#	<n>-router.pid  its pid
#
# Every server still running at the end is stopped (SIGTERM, which also
# stops its runtimes; SIGKILL after 10 s) by an atexit handler, and the
# upstream router with it; kube_stop [<n>] stops one earlier.
#
# Certificates: kube_pki [<dir>] makes (once) a CA, a server
# certificate for 127.0.0.1/localhost and a client certificate
# (CN=kubernetes-admin, O=system:masters) with openssl into
# $TRASH_DIRECTORY/pki: ca.crt, server.crt, server.key, client.crt,
# client.key; and other-ca.crt, other.crt, other.key (a client signed by
# another CA, which the server must refuse).
#
# fails_err cmd...: cmd fails with a status from 1 to 128 (not a usage
# error, not a signal); its stderr is kept in the file err.
#
# Requests: KUBE=<n> selects the server (default kube).
#   kube_curl <path> [curl options...]      prints the body
#   kube_req <method> <path> [curl options...]  answer in the files
#       body, headers and status
#   kube_expect <status> <method> <path> [curl options...]  as kube_req,
#       fails (showing the answer) unless the status matches
#   kube_apply <path> <json>   POST a JSON body (application/json)
#   kube_py <file> <expr>      print a Python expression of the JSON
#       document v of <file>, e.g. kube_py body 'v["status"]["sandbox"]'
#       (strings raw, other values as JSON)
#   kube_wait_json <seconds> <path> <expr>  poll GET <path> until the
#       expression is true (the last answer stays in body)
#   kube_ws <path> [options]   the WebSocket client below, with the
#       server's URL and the client certificate
#
# kube_ws (python3, stdlib only) speaks RFC 6455 and the port-forward
# protocol (v4.channel.k8s.io: binary frames, first byte the channel,
# first message on channels 0 and 1 the port, little-endian):
#   --send=<file>  bytes to send on channel 0 (default: nothing)
#   --hold         send nothing; wait until the server closes
#   --ready=<file> created once both port messages arrived
#   --timeout=<s>  give up after this long (default 30)
# Channel 0 data goes to stdout, channel 1 text to stderr. Exit 0 when
# the server closed the WebSocket (close frame or EOF), 2 handshake
# refused (status line on stderr), 3 an error arrived on channel 1,
# 4 timeout, 5 protocol error.

test -n "${TRASH_DIRECTORY:-}" || {
	echo >&2 "lib-kube.sh: source test-lib.sh first"
	exit 1
}
. "$TEST_DIRECTORY"/lib-runtime.sh

if ! command -v openssl >/dev/null 2>&1; then
	test_skip_all "openssl is needed for the test certificates"
fi
if ! test -x "$GOSBX_BUILD_DIR/t/helper/fake-kube"; then
	test_skip_all "fake-kube is not built in $GOSBX_BUILD_DIR"
fi

# the CRDs of the Go module sigs.k8s.io/agent-sandbox at each release
# (t/crds.sh; t/run-tests.sh sets GOSBX_CRDS_DIR); a suite without them
# fails, it does not skip
KUBE_CRDS=${GOSBX_CRDS_DIR:-$GOSBX_BUILD_DIR/t/crds}
if ! test -d "$KUBE_CRDS/v0.4.6"; then
	KUBE_CRDS=$(HOME=$TEST_REAL_HOME "$TEST_DIRECTORY"/crds.sh \
		"$GOSBX_BUILD_DIR/t/crds" 2>&4) || KUBE_CRDS=
fi
if ! test -f "$KUBE_CRDS/v0.4.6/extensions.agents.x-k8s.io_sandboxclaims.yaml"; then
	test_expect_success 'the agent-sandbox CRDs are there (t/crds.sh)' false
	test_done
fi
KUBE_PKI=$TRASH_DIRECTORY/pki

# KUBE_TEMPLATE: the SandboxTemplate users apply (manifests/base), as
# v1alpha1, the version of manifests/v1alpha1 (t6000 checks that it is
# base with this apiVersion and nothing else changed). The fakes serve
# v0.4.6 (v1alpha1 only) unless told --release=v0.5.6 (both).
KUBE_TEMPLATE=$TRASH_DIRECTORY/sandbox-template-v1alpha1.yaml
sed "s|^apiVersion: extensions.agents.x-k8s.io/v1beta1$|apiVersion: extensions.agents.x-k8s.io/v1alpha1|" \
	"$GOSBX_SOURCE_DIR/manifests/base/sandbox-template.yaml" >"$KUBE_TEMPLATE"

# The upstream router comes with the Go module sigs.k8s.io/agent-sandbox
# v0.4.6 (the module holds the whole repository): from the module cache
# when GOSBX_TEST_UPSTREAM_ROUTER does not name a directory, downloaded
# through the go command's proxy (GOPROXY) the first time.
# GOSBX_TEST_UPSTREAM_ROUTER_REQUIRED=1 (CI) fails the scripts that
# need it, instead of skipping them, when it cannot be had.
if test -z "${GOSBX_TEST_UPSTREAM_ROUTER:-}" &&
	test -n "${BACKEND_KUBE_UPSTREAM_ROUTER:-}" &&
	command -v go >/dev/null 2>&1; then
	_ku_dir=$(cd "$TRASH_DIRECTORY" &&
		test_real_go mod download -json sigs.k8s.io/agent-sandbox@v0.4.6 \
		2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin).get("Dir", ""))' \
		2>/dev/null)
	_ku_dir=$_ku_dir/clients/python/agentic-sandbox-client/sandbox-router
	test -f "$_ku_dir/sandbox_router.py" &&
		GOSBX_TEST_UPSTREAM_ROUTER=$_ku_dir
fi
# the router runs with what its image installs: its requirements.txt,
# hash-pinned, in a venv (test_python_venv; Debian's python3-uvicorn
# 0.17 kills a streamed answer with its keep-alive timer)
if test -n "${GOSBX_TEST_UPSTREAM_ROUTER:-}" &&
	test -n "${BACKEND_KUBE_UPSTREAM_ROUTER:-}" &&
	test -f "$GOSBX_TEST_UPSTREAM_ROUTER/sandbox_router.py" &&
	KUBE_ROUTER_PYTHON=$(test_python_venv /usr/bin/python3 \
		"$GOSBX_TEST_UPSTREAM_ROUTER/requirements.txt" --require-hashes)
then
	test_set_prereq UPSTREAM_ROUTER
elif test -n "${BACKEND_KUBE_UPSTREAM_ROUTER:-}" &&
	test "${GOSBX_TEST_UPSTREAM_ROUTER_REQUIRED:-}" = 1; then
	echo "not ok 1 - the upstream sandbox-router v0.4.6 is required" \
		"(GOSBX_TEST_UPSTREAM_ROUTER_REQUIRED=1): not in the Go module" \
		"cache, or its requirements could not be installed (pip)"
	echo "1..1"
	exit 1 # run-tests.sh counts a script that ends so as one failure
fi

kube_pki() {
	_kp=${1:-$KUBE_PKI}
	test -f "$_kp/client.key" && return 0
	mkdir -p "$_kp" &&
	(
		cd "$_kp" &&
		_kp_ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
		# shellcheck disable=SC2086
		openssl req -x509 $_kp_ec -keyout ca.key -out ca.crt -days 3 \
			-subj /CN=fake-kube-ca \
			-addext basicConstraints=critical,CA:TRUE \
			-addext keyUsage=critical,keyCertSign,cRLSign &&
		openssl req -x509 $_kp_ec -keyout other-ca.key \
			-out other-ca.crt -days 3 -subj /CN=other-ca \
			-addext basicConstraints=critical,CA:TRUE \
			-addext keyUsage=critical,keyCertSign,cRLSign &&
		printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" \
			"basicConstraints=CA:FALSE" \
			"keyUsage=critical,digitalSignature,keyEncipherment" \
			"extendedKeyUsage=serverAuth" >server.ext &&
		printf '%s\n' "basicConstraints=CA:FALSE" \
			"keyUsage=critical,digitalSignature,keyEncipherment" \
			"extendedKeyUsage=clientAuth" >client.ext &&
		openssl req $_kp_ec -keyout server.key -out server.csr \
			-subj /CN=fake-kube &&
		openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key \
			-CAcreateserial -out server.crt -days 3 \
			-extfile server.ext &&
		openssl req $_kp_ec -keyout client.key -out client.csr \
			-subj "/O=system:masters/CN=kubernetes-admin" &&
		openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key \
			-CAcreateserial -out client.crt -days 3 \
			-extfile client.ext &&
		openssl req $_kp_ec -keyout other.key -out other.csr \
			-subj "/O=system:masters/CN=intruder" &&
		openssl x509 -req -in other.csr -CA other-ca.crt \
			-CAkey other-ca.key -CAcreateserial -out other.crt \
			-days 3 -extfile client.ext
	) >"$TRASH_DIRECTORY/pki.log" 2>&1 || {
		cat "$TRASH_DIRECTORY/pki.log" >&4
		return 1
	}
}

# kube_kubeconfig <url> <file>: a kind-style kubeconfig (context
# kind-fake, user kind-fake) with the certificates inline.
kube_kubeconfig() {
	_kk_b64() { base64 <"$1" | tr -d '\n'; }
	cat >"$2" <<EOF
apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: $(_kk_b64 "$KUBE_PKI/ca.crt")
    server: $1
  name: kind-fake
contexts:
- context:
    cluster: kind-fake
    user: kind-fake
  name: kind-fake
current-context: kind-fake
preferences: {}
users:
- name: kind-fake
  user:
    client-certificate-data: $(_kk_b64 "$KUBE_PKI/client.crt")
    client-key-data: $(_kk_b64 "$KUBE_PKI/client.key")
EOF
}

kube_start() {
	_ks_name=kube
	_ks_release=v0.4.6
	_ks_insecure=
	_ks_runtime=t
	_ks_upstream=
	while test $# -gt 0; do
		case "$1" in
		--name=*) _ks_name=${1#--name=} ;;
		--release=*) _ks_release=${1#--release=} ;;
		--insecure) _ks_insecure=t ;;
		--no-runtime) _ks_runtime= ;;
		--upstream-router) _ks_upstream=t ;;
		--)
			shift
			break
			;;
		*) break ;;
		esac
		shift
	done
	set -- --port=0 --release="$_ks_release" \
		--crds="$KUBE_CRDS/$_ks_release" \
		--state-dir="$TRASH_DIRECTORY/$_ks_name-state" \
		--info-file="$TRASH_DIRECTORY/$_ks_name.info" \
		--ready-delay=100 "$@"
	if test -n "$_ks_runtime" && test -n "${GOSBX_TEST_IMAGE:-}"; then
		command -v podman >/dev/null 2>&1 || {
			echo >&4 "kube_start: GOSBX_TEST_IMAGE needs podman"
			return 1
		}
		set -- --runtime-cmd="$(kube_image_cmd)" "$@"
	elif test -n "$_ks_runtime"; then
		set -- --runtime="$GOSBX_BUILD_DIR/gosbx-runtime" "$@"
	fi
	if test -n "$_ks_insecure"; then
		set -- --insecure-http "$@"
	else
		kube_pki || return 1
		set -- --cert="$KUBE_PKI/server.crt" \
			--key="$KUBE_PKI/server.key" \
			--client-ca="$KUBE_PKI/ca.crt" "$@"
	fi
	if test -n "$_ks_upstream"; then
		test_have_prereq UPSTREAM_ROUTER || {
			echo >&4 "kube_start: no upstream router" \
				"(GOSBX_TEST_UPSTREAM_ROUTER)"
			return 1
		}
		_ks_rport=$(test_free_port) || return 1
		echo "http://127.0.0.1:$_ks_rport" \
			>"$TRASH_DIRECTORY/$_ks_name.upstream"
		set -- --router-upstream="http://127.0.0.1:$_ks_rport" \
			--pod-network-port=0 "$@"
	fi
	rm -rf "$TRASH_DIRECTORY/$_ks_name.info" \
		"$TRASH_DIRECTORY/$_ks_name-state"
	"$GOSBX_BUILD_DIR/t/helper/fake-kube" "$@" \
		>"$TRASH_DIRECTORY/$_ks_name.out" \
		2>"$TRASH_DIRECTORY/$_ks_name.log" &
	echo $! >"$TRASH_DIRECTORY/$_ks_name.pid"
	echo "$_ks_name" >>"$TRASH_DIRECTORY/kube-servers"
	if ! rt_poll 30 test -s "$TRASH_DIRECTORY/$_ks_name.info"; then
		echo >&4 "kube_start: fake-kube did not start:"
		cat "$TRASH_DIRECTORY/$_ks_name.log" >&4
		return 1
	fi
	json_get "$TRASH_DIRECTORY/$_ks_name.info" url \
		>"$TRASH_DIRECTORY/$_ks_name.url" &&
	json_get "$TRASH_DIRECTORY/$_ks_name.info" router \
		>"$TRASH_DIRECTORY/$_ks_name.router" &&
	if test -z "$_ks_insecure"; then
		kube_kubeconfig "$(cat "$TRASH_DIRECTORY/$_ks_name.url")" \
			"$TRASH_DIRECTORY/$_ks_name.kubeconfig"
	fi &&
	if test -n "$_ks_upstream"; then
		kube_start_upstream_router_ "$_ks_name" "$_ks_rport"
	fi
}

# kube_start_upstream_router_ <n> <port>: the upstream router on
# 127.0.0.1:<port>, its HTTP_PROXY fake-kube's pod network (and nothing
# else: no HTTPS_PROXY, ALL_PROXY, NO_PROXY); wait for GET /healthz
kube_start_upstream_router_() {
	_ksu_net=$(json_get "$TRASH_DIRECTORY/$1.info" podNetwork) || return 1
	(
		cd "$GOSBX_TEST_UPSTREAM_ROUTER" &&
		unset HTTPS_PROXY https_proxy ALL_PROXY all_proxy \
			NO_PROXY no_proxy PROXY_TIMEOUT_SECONDS &&
		HTTP_PROXY=$_ksu_net http_proxy=$_ksu_net NO_PROXY='' \
			PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 &&
		export HTTP_PROXY http_proxy NO_PROXY PYTHONUNBUFFERED \
			PYTHONDONTWRITEBYTECODE &&
		exec "$KUBE_ROUTER_PYTHON" -m uvicorn sandbox_router:app \
			--host 127.0.0.1 --port "$2"
	) >"$TRASH_DIRECTORY/$1-router.log" 2>&1 &
	echo $! >"$TRASH_DIRECTORY/$1-router.pid"
	if ! rt_poll 30 curl -sf -o /dev/null "http://127.0.0.1:$2/healthz"
	then
		echo >&4 "kube_start: the upstream router did not start:"
		cat "$TRASH_DIRECTORY/$1-router.log" >&4
		return 1
	fi
}

kube_stop() {
	kube_stop_pid_ "$TRASH_DIRECTORY/${1:-kube}-router.pid"
	kube_stop_pid_ "$TRASH_DIRECTORY/${1:-kube}.pid"
}

# SIGTERM the process of a pid file, SIGKILL after 10 s
kube_stop_pid_() {
	_kst_pidf=$1
	test -f "$_kst_pidf" || return 0
	_kst_pid=$(cat "$_kst_pidf")
	kill "$_kst_pid" 2>/dev/null
	_kst_i=0
	while kill -0 "$_kst_pid" 2>/dev/null && test $_kst_i -lt 100; do
		sleep 0.1
		_kst_i=$((_kst_i + 1))
	done
	kill -9 "$_kst_pid" 2>/dev/null
	wait "$_kst_pid" 2>/dev/null
	rm -f "$_kst_pidf"
}

# The shell command fake-kube runs per Sandbox with GOSBX_TEST_IMAGE
# ($1 the port to publish on 127.0.0.1). runc, not crun (crun refuses
# hybrid cgroup hosts); slirp4netns leaves the host's network alone.
kube_image_cmd() {
	printf '%s' "exec podman run --rm --runtime runc --network=slirp4netns \
--ulimit nofile=8192:8192 --ulimit nproc=4096:4096 \
--label gosbx.test='$TRASH_DIRECTORY' -p \"127.0.0.1:\$1:8888\" \
'$GOSBX_TEST_IMAGE'"
}

# the containers of this script (GOSBX_TEST_IMAGE)
kube_image_containers() {
	podman ps -aq --filter "label=gosbx.test=$TRASH_DIRECTORY" 2>/dev/null
}

# Stop every server kube_start started (test bodies run in subshells,
# so the list lives in a file), and remove the containers left.
kube_stop_all_() {
	if test -f "$TRASH_DIRECTORY/kube-servers"; then
		for _ksa in $(sort -u "$TRASH_DIRECTORY/kube-servers"); do
			kube_stop "$_ksa"
		done
	fi
	if test -n "${GOSBX_TEST_IMAGE:-}"; then
		# shellcheck disable=SC2046
		set -- $(kube_image_containers)
		test $# = 0 || podman rm -f -t 0 "$@" >/dev/null 2>&1
	fi
}
test_atexit kube_stop_all_

# fails_err cmd...: cmd fails (not by a signal, not a usage error);
# its stderr is kept in the file err
fails_err() {
	"$@" 2>err
	_fe=$?
	cat err >&4
	test $_fe -ne 0 && test $_fe -lt 129 || {
		echo >&4 "fails_err: exit $_fe: $*"
		return 1
	}
}

kube_url() {
	cat "$TRASH_DIRECTORY/${1:-${KUBE:-kube}}.url"
}

kube_router_url() {
	cat "$TRASH_DIRECTORY/${1:-${KUBE:-kube}}.router"
}

# curl with the client certificate (for https) and the server's URL
kube_curl_() {
	_kc_url=$(kube_url) || return 1
	_kc_path=$1
	shift
	case "$_kc_url" in
	https:*)
		curl -sS --max-time 60 --cacert "$KUBE_PKI/ca.crt" \
			--cert "$KUBE_PKI/client.crt" \
			--key "$KUBE_PKI/client.key" "$@" "$_kc_url$_kc_path"
		;;
	*) curl -sS --max-time 60 "$@" "$_kc_url$_kc_path" ;;
	esac
}

kube_curl() {
	kube_curl_ "$@"
}

kube_req() {
	_kr_m=$1
	shift
	_kr_p=$1
	shift
	kube_curl_ "$_kr_p" -X "$_kr_m" -D headers -o body \
		-w '%{http_code}' "$@" >status
}

kube_expect() {
	_ke_want=$1
	shift
	kube_req "$@" || return 1
	if test "$(cat status)" != "$_ke_want"; then
		echo >&4 "kube_expect: $* answered $(cat status), want $_ke_want:"
		cat body >&4
		echo >&4
		return 1
	fi
}

kube_apply() {
	kube_req POST "$1" -H 'Content-Type: application/json' \
		--data-binary "$2"
}

kube_py() {
	python3 -c '
import json, sys
with open(sys.argv[1], "rb") as f:
    v = json.loads(f.read().decode("utf-8"))
try:
    r = eval(sys.argv[2])
except (KeyError, IndexError, TypeError) as e:
    sys.stderr.write("kube_py: %s: %r\n" % (sys.argv[2], e))
    sys.exit(1)
if isinstance(r, str):
    sys.stdout.write(r)
else:
    sys.stdout.write(json.dumps(r))
' "$1" "$2"
}

kube_wait_json_() {
	kube_req GET "$1" &&
	test "$(kube_py body "$2" 2>/dev/null)" = true
}

kube_wait_json() {
	rt_poll "$1" kube_wait_json_ "$2" "$3" || {
		echo >&4 "kube_wait_json: $3 never true for $2; last answer:"
		cat body >&4
		echo >&4
		return 1
	}
}

cat >"$TRASH_DIRECTORY/kube-ws.py" <<'EOF'
import base64, hashlib, os, select, socket, ssl, struct, sys, time
from urllib.parse import urlsplit

args = dict(a[2:].split("=", 1) if "=" in a else (a[2:], "1")
            for a in sys.argv[2:])
url = urlsplit(args["url"])
path = sys.argv[1]
deadline = time.time() + float(args.get("timeout", "30"))

sock = socket.create_connection((url.hostname, url.port), timeout=10)
if url.scheme == "https":
    ctx = ssl.create_default_context(cafile=args["ca"])
    if "cert" in args:
        ctx.load_cert_chain(args["cert"], args["key"])
    sock = ctx.wrap_socket(sock, server_hostname=url.hostname)
key = base64.b64encode(os.urandom(16)).decode()
sock.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\n"
              "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
              "Sec-WebSocket-Key: %s\r\n"
              "Sec-WebSocket-Protocol: %s\r\n\r\n"
              % (path, url.netloc, key,
                 args.get("protocol", "v4.channel.k8s.io"))).encode())
buf = b""
while b"\r\n\r\n" not in buf:
    d = sock.recv(65536)
    if not d:
        break
    buf += d
head, _, buf = buf.partition(b"\r\n\r\n")
lines = head.decode("latin-1").split("\r\n")
hdrs = dict((l.split(":", 1)[0].strip().lower(), l.split(":", 1)[1].strip())
            for l in lines[1:] if ":" in l)
if not lines[0].startswith("HTTP/1.1 101"):
    want = int(hdrs.get("content-length", "-1"))
    while want < 0 or len(buf) < want:
        d = sock.recv(65536)
        if not d:
            break
        buf += d
    sys.stderr.write(lines[0] + "\n" + buf.decode("utf-8", "replace") + "\n")
    sys.exit(2)
want = base64.b64encode(hashlib.sha1(
    (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
if hdrs.get("sec-websocket-accept") != want:
    sys.stderr.write("bad Sec-WebSocket-Accept\n")
    sys.exit(5)
if hdrs.get("sec-websocket-protocol") != "v4.channel.k8s.io":
    sys.stderr.write("bad Sec-WebSocket-Protocol\n")
    sys.exit(5)

def send_frame(opcode, payload):
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        h = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 65536:
        h = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        h = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    sock.sendall(h + mask + bytes(b ^ mask[i % 4]
                                  for i, b in enumerate(payload)))

def read_exact(n):
    global buf
    while len(buf) < n:
        left = deadline - time.time()
        if left <= 0:
            sys.stderr.write("timeout\n")
            sys.exit(4)
        if not (isinstance(sock, ssl.SSLSocket) and sock.pending()):
            r, _, _ = select.select([sock], [], [], min(left, 1))
            if not r:
                continue
        try:
            d = sock.recv(65536)
        except (ConnectionResetError, ssl.SSLError, OSError):
            d = b""
        if not d:
            return None
        buf += d
    out, buf = buf[:n], buf[n:]
    return out

def read_frame():
    h = read_exact(2)
    if h is None:
        return None
    op, n = h[0] & 0x0f, h[1] & 0x7f
    if h[1] & 0x80:
        sys.stderr.write("masked frame from the server\n")
        sys.exit(5)
    if n == 126:
        n = struct.unpack("!H", read_exact(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", read_exact(8))[0]
    data = read_exact(n) if n else b""
    if data is None:
        return None
    return op, data

seen = {}
err = b""
status = 0
while True:
    f = read_frame()
    if f is None:
        break
    op, data = f
    if op == 8:
        try:
            send_frame(8, data[:2])
        except OSError:
            pass
        break
    if op == 9:
        send_frame(10, data)
        continue
    if op != 2 or not data:
        continue
    ch, data = data[0], data[1:]
    if ch not in seen:
        if len(data) != 2:
            sys.stderr.write("first message on channel %d is not a port\n" % ch)
            sys.exit(5)
        seen[ch] = struct.unpack("<H", data)[0]
        if len(seen) == 2:
            if "ready" in args:
                open(args["ready"], "w").write("%d\n" % seen[0])
            if "send" in args:
                send_frame(2, b"\x00" + open(args["send"], "rb").read())
        continue
    if ch == 0:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    elif ch == 1:
        err += data
if err:
    sys.stderr.write(err.decode("utf-8", "replace") + "\n")
    status = 3
sys.exit(status)
EOF

kube_ws() {
	_kw_path=$1
	shift
	python3 "$TRASH_DIRECTORY/kube-ws.py" "$_kw_path" --url="$(kube_url)" \
		--ca="$KUBE_PKI/ca.crt" --cert="$KUBE_PKI/client.crt" \
		--key="$KUBE_PKI/client.key" "$@"
}
