#!/bin/sh
test_description='the kubeconfig transport as kubectl uses it

tls-server-name is the TLS name (SNI and the certificate check) while
the connection goes to the server'"'"'s host; proxy-url carries every
request, NO_PROXY notwithstanding; without it HTTPS_PROXY and NO_PROXY
apply, and a loopback server is never proxied; an auth-provider is
refused naming its exec plugin. The port-forward to the router takes
the same way. kubectl runs on the same kubeconfig
each time and must make the same choice: a CONNECT proxy logs what
goes through it.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-kube.sh

# names.crt: a server certificate for DNS names only, not 127.0.0.1
kube_pki || exit 1
(
	cd "$KUBE_PKI" &&
	printf '%s\n' "subjectAltName=DNS:api.internal,DNS:fake.test" \
		"basicConstraints=CA:FALSE" \
		"keyUsage=critical,digitalSignature,keyEncipherment" \
		"extendedKeyUsage=serverAuth" >names.ext &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout names.key -out names.csr -subj /CN=fake-kube &&
	openssl x509 -req -in names.csr -CA ca.crt -CAkey ca.key \
		-CAcreateserial -out names.crt -days 3 -extfile names.ext
) >names.log 2>&1 || {
	cat names.log
	exit 1
}

# started here, not in a test: test_atexit does not reach out of a
# test's subshell
kube_start -- --cert="$KUBE_PKI/names.crt" --key="$KUBE_PKI/names.key" \
	--template=go-runtime-template || exit 1
PORT=$(kube_url | sed 's/.*://')

# An HTTP CONNECT proxy (python3, stdlib): logs each CONNECT target to
# proxy.log; names ending in .test resolve to 127.0.0.1 on the proxy.
# Its pid goes to proxy.pid (that of python, not of a pyenv shim).
cat >proxy.py <<\EOF
import socket, sys
import lib_proxy
log = open(sys.argv[1], "a", buffering=1)
def serve(c):
    head = lib_proxy.read_head(c)
    if head is None:
        return
    line = head.split(b"\r\n")[0].decode()
    method, target = line.split()[:2]
    log.write(line + "\n")
    if method != "CONNECT":
        c.sendall(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
        return c.close()
    host, port = target.rsplit(":", 1)
    host = host.strip("[]")
    if host.endswith(".test"):
        host = "127.0.0.1"
    try:
        u = socket.create_connection((host, int(port)), timeout=5)
    except OSError:
        c.sendall(b"HTTP/1.1 502 Bad Gateway\r\n\r\n")
        return c.close()
    c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    lib_proxy.splice(c, u)
lib_proxy.run(serve, sys.argv[2])
EOF
PYTHONPATH="$TEST_DIRECTORY${PYTHONPATH:+:$PYTHONPATH}" \
	python3 proxy.py proxy.log proxy.port >/dev/null 2>proxy.err </dev/null &
test_atexit 'kill "$(cat proxy.pid)"'
rt_poll 10 test -s proxy.port || {
	cat proxy.err
	exit 1
}
PROXY=http://127.0.0.1:$(cat proxy.port)

# kc <file> <server> [cluster fields...]: kube.kubeconfig with another
# server and extra cluster fields
kc() {
	_f=$1 _s=$2
	shift 2
	sed "s#^    server: .*#    server: $_s#" kube.kubeconfig >"$_f" &&
	for _x in "$@"; do
		sed -i "s#^    server: .*#&\n    $_x#" "$_f" || return 1
	done
}

# both <kubeconfig> ok|fail [env...]: kubectl and gosbx reach the API
# server, or both fail; proxy.log keeps what each sent through the
# proxy (each CONNECT line once), in kubectl.proxy and gosbx.proxy
both() {
	_f=$1 _want=$2
	shift 2
	: >proxy.log &&
	env "$@" kubectl --kubeconfig="$_f" --request-timeout=10s \
		get --raw /version >kubectl.out 2>kubectl.err
	_k=$?
	sort -u proxy.log >kubectl.proxy && : >proxy.log &&
	env "$@" gosbx claims --backend=kube --kubeconfig="$_f" \
		>gosbx.out 2>gosbx.err
	_g=$?
	sort -u proxy.log >gosbx.proxy &&
	cat kubectl.err gosbx.err >&4 &&
	case $_want in
	ok) test $_k = 0 && test $_g = 0 ;;
	fail) test $_k != 0 && test $_g != 0 ;;
	esac || {
		echo >&4 "want $_want: kubectl $_k, gosbx $_g"
		return 1
	}
}

test_empty() {
	test ! -s "$1" || {
		echo >&4 "'$1' is not empty:" && cat "$1" >&4
		return 1
	}
}

test_expect_success 'a certificate without 127.0.0.1: both refuse it' '
	both kube.kubeconfig fail &&
	test_grep "certificate" gosbx.err
'

test_expect_success 'tls-server-name: checked in the certificate, the connection to server' '
	kc tsn.kubeconfig "https://127.0.0.1:$PORT" \
		"tls-server-name: api.internal" &&
	both tsn.kubeconfig ok &&
	test_empty kubectl.proxy &&
	test_empty gosbx.proxy
'

test_expect_success 'a wrong tls-server-name: both refuse it' '
	kc bad.kubeconfig "https://127.0.0.1:$PORT" \
		"tls-server-name: other.internal" &&
	both bad.kubeconfig fail
'

test_expect_success 'HTTPS_PROXY: a loopback server is not proxied' '
	both tsn.kubeconfig ok HTTPS_PROXY="$PROXY" &&
	test_empty kubectl.proxy &&
	test_empty gosbx.proxy
'

test_expect_success 'HTTPS_PROXY: a named server goes through the proxy' '
	kc named.kubeconfig "https://fake.test:$PORT" &&
	both named.kubeconfig ok HTTPS_PROXY="$PROXY" &&
	echo "CONNECT fake.test:$PORT HTTP/1.1" >expect &&
	test_cmp expect kubectl.proxy &&
	test_cmp expect gosbx.proxy
'

test_expect_success 'NO_PROXY: that server is reached directly (and not found)' '
	both named.kubeconfig fail HTTPS_PROXY="$PROXY" NO_PROXY=.test &&
	test_empty kubectl.proxy &&
	test_empty gosbx.proxy
'

test_expect_success 'proxy-url carries a loopback server too, NO_PROXY notwithstanding' '
	kc purl.kubeconfig "https://127.0.0.1:$PORT" \
		"tls-server-name: api.internal" "proxy-url: $PROXY" &&
	both purl.kubeconfig ok NO_PROXY=127.0.0.1 &&
	echo "CONNECT 127.0.0.1:$PORT HTTP/1.1" >expect &&
	test_cmp expect kubectl.proxy &&
	test_cmp expect gosbx.proxy
'

test_expect_success 'proxy-url wins over HTTPS_PROXY' '
	both purl.kubeconfig ok HTTPS_PROXY=http://127.0.0.1:1 &&
	test_cmp expect kubectl.proxy &&
	test_cmp expect gosbx.proxy
'

test_expect_success 'exec: the API calls and the router port-forward use both' '
	kc all.kubeconfig "https://fake.test:$PORT" \
		"tls-server-name: api.internal" "proxy-url: $PROXY" &&
	: >proxy.log &&
	KUBECONFIG=all.kubeconfig gosbx --backend=kube exec -- echo hi >out &&
	echo hi >expect &&
	test_cmp expect out &&
	sort -u proxy.log >seen &&
	echo "CONNECT fake.test:$PORT HTTP/1.1" >expect &&
	test_cmp expect seen &&
	grep -c CONNECT proxy.log >n &&
	test "$(cat n)" -ge 2
'

test_expect_success 'a proxy-url kubectl refuses is refused with its message' '
	for p in ftp://x:1 127.0.0.1:3128; do
		kc p.kubeconfig "https://127.0.0.1:$PORT" "proxy-url: $p" &&
		both p.kubeconfig fail &&
		sed -n "s/^error: //p" kubectl.err >want &&
		test -s want &&
		test_grep "$(cat want)" gosbx.err || return 1
	done
'

test_expect_success 'auth-provider gcp: both name gke-gcloud-auth-plugin' '
	cat >gcp.kubeconfig <<-EOF &&
	apiVersion: v1
	kind: Config
	clusters:
	- name: c
	  cluster: {server: "https://127.0.0.1:$PORT", tls-server-name: api.internal}
	users:
	- name: u
	  user:
	    auth-provider: {name: gcp, config: {}}
	contexts:
	- name: c
	  context: {cluster: c, user: u}
	current-context: c
	EOF
	both gcp.kubeconfig fail &&
	test_grep gke-gcloud-auth-plugin kubectl.err &&
	test_grep "auth-provider .gcp., which kubectl and client-go removed" gosbx.err &&
	test_grep "install gke-gcloud-auth-plugin" gosbx.err
'

test_done
