#!/bin/sh
test_description='local network: the allow-list proxy (--allow-net)

A sandbox without --network reaches the outside only through netd, the
host-side proxy on 127.0.0.1:3128 that HTTP_PROXY and the rest name
(Documentation/protocol/network.md): HTTP CONNECT, absolute-form HTTP and SOCKS5 to the
hosts of --allow-net; every other host is refused with a message that
names it and the flag; a name that resolves to loopback or a private
address is refused unless that address is on the list itself; DNS
answers only names on the list; every decision is in the claim log.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test_have_prereq PYTHON || test_skip_all 'python3 is not installed'
command -v curl >/dev/null || test_skip_all 'curl is not installed'

# An origin on the host's loopback, which only the list can open.
port=$(test_free_port)
mkdir -p www && echo "served from the host" >www/index.html
(cd www && exec python3 -m http.server --bind 127.0.0.1 "$port") \
	>http.log 2>&1 &
echo $! >http.pid
test_atexit 'kill $(cat http.pid)'
test_retry 100 0.1 curl -sf -o /dev/null "http://127.0.0.1:$port/" ||
	test_skip_all 'cannot start a host HTTP listener'

# curl in the sandbox, through the proxy even for 127.0.0.1 (NO_PROXY
# keeps the sandbox's own loopback direct)
cat >curl-proxy.sh <<\EOF || exit 1
exec curl --noproxy "" -sS -v "$@"
EOF

sbx_curl() {
	gosbx exec --file=curl-proxy.sh "$@"
}

# run a command with its stderr in the file "err" (test_must_fail
# keeps stderr for the test's own log)

test_expect_success 'the sandbox is told where the proxy is' '
	gosbx exec -- sh -c "echo \$HTTP_PROXY \$HTTPS_PROXY \$ALL_PROXY \$NO_PROXY \$GOPROXY" >out &&
	echo "http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 localhost,127.0.0.1,::1 http://127.0.0.1:3128/mod" >expect &&
	test_cmp expect out
'

test_expect_success 'with --modules=off and no list there is no proxy' '
	gosbx exec --modules=off -- sh -c "echo \${HTTP_PROXY:-none} \$GOPROXY \$GOTOOLCHAIN" >out &&
	echo "none off local" >expect &&
	test_cmp expect out &&
	test_must_fail gosbx exec --modules=off -- \
		curl -sS --max-time 5 http://127.0.0.1:3128/
'

test_expect_success 'a host on the list is reached through CONNECT and plain HTTP' '
	sbx_curl --allow-net="127.0.0.1:$port" -- \
		sh curl-proxy.sh "http://127.0.0.1:$port/index.html" >out 2>err &&
	echo "served from the host" >expect &&
	test_cmp expect out &&
	sbx_curl --allow-net="127.0.0.1:$port" -- \
		sh curl-proxy.sh -p "http://127.0.0.1:$port/index.html" >out 2>err &&
	test_cmp expect out &&
	test_grep "200 Connection established" err
'

test_expect_success 'a host not on the list is refused with the flag that allows it' '
	test_must_fail with_err sbx_curl -- \
		sh curl-proxy.sh -p "http://127.0.0.1:$port/index.html" >out &&
	test_grep "403 gosbx: 127.0.0.1:$port is not on the sandbox.s allow-list; pass --allow-net=127.0.0.1:$port" err &&
	sbx_curl --allow-net="127.0.0.1:1" -- \
		sh curl-proxy.sh "http://127.0.0.1:$port/index.html" >out 2>err &&
	test_grep "< HTTP/1.1 403 " err &&
	test_grep "is not on the sandbox.s allow-list" out
'

test_expect_success 'SOCKS5 follows the same list' '
	gosbx exec --allow-net="127.0.0.1:$port" -- curl -sS --noproxy "" \
		--socks5-hostname 127.0.0.1:3128 \
		"http://127.0.0.1:$port/index.html" >out &&
	echo "served from the host" >expect &&
	test_cmp expect out &&
	test_must_fail with_err gosbx exec -- curl -sS --noproxy "" \
		--socks5-hostname 127.0.0.1:3128 \
		"http://127.0.0.1:$port/index.html"
'

test_expect_success 'a name that resolves to loopback is refused unless its address is listed' '
	test_must_fail with_err sbx_curl --allow-net="localhost:$port" -- \
		sh curl-proxy.sh -p "http://localhost:$port/index.html" &&
	test_grep "gosbx: localhost resolves to 127.0.0.1, a private address; pass --allow-net=127.0.0.1:$port to allow it" err &&
	sbx_curl --allow-net="localhost:$port,127.0.0.1:$port" -- \
		sh curl-proxy.sh -p "http://localhost:$port/index.html" >out 2>err &&
	echo "served from the host" >expect &&
	test_cmp expect out
'

test_expect_success 'every decision is in the claim log' '
	name=$(gosbx open --allow-net="127.0.0.1:$port") &&
	gosbx exec --claim="$name" --file=curl-proxy.sh -- \
		sh curl-proxy.sh -p "http://127.0.0.1:$port/index.html" >out &&
	test_must_fail gosbx exec --claim="$name" --file=curl-proxy.sh -- \
		sh curl-proxy.sh -p "http://127.0.0.2:$port/index.html" &&
	gosbx logs "$name" >log &&
	gosbx close "$name" &&
	test_grep "msg=\"net allow\".*host=127.0.0.1 port=$port" log &&
	test_grep "msg=\"net deny\".*host=127.0.0.2 port=$port" log
'

# a DNS query for name (type A) to the sandbox's 127.0.0.1:53: prints
# the rcode and the addresses of the answer
cat >dns.py <<\EOF || exit 1
import socket, struct, sys
name = sys.argv[1]
q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
for label in name.split("."):
    q += bytes([len(label)]) + label.encode()
q += b"\0" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(10)
s.sendto(q, ("127.0.0.1", 53))
r = s.recv(512)
rcode = r[3] & 15
an = struct.unpack(">H", r[6:8])[0]
out = ["rcode=%d" % rcode]
i = len(q)
for _ in range(an):
    if r[i] & 0xc0 == 0xc0:
        i += 2
    else:
        while r[i]:
            i += r[i] + 1
        i += 1
    t, c, ttl, l = struct.unpack(">HHIH", r[i:i + 10])
    i += 10
    if t == 1:
        out.append(socket.inet_ntoa(r[i:i + l]))
    i += l
print(" ".join(out))
EOF

test_expect_success 'DNS answers names on the list only' '
	gosbx exec --file=dns.py --allow-net="localhost,127.0.0.1" -- \
		python3 dns.py localhost >out &&
	echo "rcode=0 127.0.0.1" >expect &&
	test_cmp expect out &&
	gosbx exec --file=dns.py --allow-net="127.0.0.1" -- \
		python3 dns.py localhost >out &&
	echo "rcode=5" >expect &&
	test_cmp expect out &&
	gosbx exec --file=dns.py --allow-net="localhost" -- \
		python3 dns.py localhost >out &&
	echo "rcode=0" >expect &&
	test_cmp expect out
'

# An origin that sends without end until its peer stops reading: it
# writes the bytes it got out when a send has blocked for 2 s.
cat >flood.py <<\EOF || exit 1
import os, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(1)
open(sys.argv[1] + ".port", "w").write(str(s.getsockname()[1]))
c, _ = s.accept()
c.settimeout(2)
buf = b"x" * 65536
sent = 0
try:
    while True:
        sent += c.send(buf)
except socket.timeout:
    pass
open(sys.argv[1] + ".tmp", "w").write(str(sent))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
c.close()
EOF

# in the sandbox: a tunnel through the proxy whose reader never reads
cat >stall.py <<\EOF || exit 1
import socket, sys, time
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: x\r\n\r\n" % sys.argv[1].encode())
print(s.recv(100).split(b"\r\n")[0].decode(), flush=True)
time.sleep(600)
EOF

# netd's resident size while it holds a stalled tunnel: what it is
# without a peer (about 14 MiB here), not what the origin sends; the
# sanitizers' shadow memory and quarantine add about 30 MiB
max_rss_mib=32
test -z "${SANITIZE:-}" || max_rss_mib=96

test_expect_success 'a client that never reads costs netd bounded memory' '
	python3 flood.py "$PWD/flooded" &
	echo $! >flood.pid &&
	test_atexit "kill $(cat flood.pid) 2>/dev/null" &&
	test_retry 100 0.1 test -s flooded.port &&
	fport=$(cat flooded.port) &&
	name=$(gosbx open --allow-net="127.0.0.1:$fport") &&
	test_atexit "gosbx close $name 2>/dev/null" &&
	{ gosbx exec --claim="$name" --file=stall.py -- \
		python3 stall.py "$fport" >stall.out & } &&
	echo $! >stall.pid &&
	test_retry 600 0.1 test -s flooded &&
	head -n 1 stall.out >status &&
	echo "HTTP/1.1 200 Connection established" >expect &&
	test_cmp expect status &&
	sent=$(cat flooded) &&
	test "$sent" -lt $((64 << 20)) &&
	pid=$(pgrep -f "netd .*--log=$XDG_STATE_HOME/gosbx/claims/$name/") &&
	rss=$(sed -n "s/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p" /proc/$pid/status) &&
	{ test "$rss" -lt $((max_rss_mib << 10)) ||
	  { echo "netd VmRSS $rss kB" >&4; false; }; } &&
	gosbx close "$name" &&
	{ wait $(cat stall.pid) 2>/dev/null; true; }
'

test_expect_success 'bad lists are refused before anything starts' '
	test_expect_code 129 gosbx exec --allow-net= -- true &&
	test_expect_code 129 gosbx exec --allow-net=x --network -- true &&
	test_expect_code 129 gosbx exec --modules=maybe -- true &&
	test_expect_code_err 129 gosbx exec --allow-net="http://example.org" -- true &&
	test_grep "bad --allow-net entry .http://example.org.: a URL" err &&
	test_expect_code 129 gosbx exec --allow-net="*" -- true &&
	test_expect_code 129 gosbx open --allow-net="a:99999" &&
	no_claims
'

test_expect_success 'a backend that cannot enforce the list refuses it' '
	test_must_fail with_err gosbx --backend=url --url=http://127.0.0.1:1 \
		exec --allow-net=example.org -- true &&
	test_grep "the url backend cannot enforce --allow-net" err &&
	test_must_fail with_err gosbx --backend=kube \
		--kubeconfig="$PWD/no-such-kubeconfig" \
		exec --allow-net=example.org -- true &&
	test_grep "the kube backend cannot enforce --allow-net: .*egress NetworkPolicy" err &&
	test_must_fail with_err gosbx --backend=kube \
		--kubeconfig="$PWD/no-such-kubeconfig" \
		exec --go=/usr/local/go -- true &&
	test_grep "the kube backend cannot run the Go of --go" err
'

test_expect_success 'netd keeps no privileges to lose' '
	name=$(gosbx open --allow-net="127.0.0.1:$port") &&
	pid=$(pgrep -f "netd .*--log=$XDG_STATE_HOME/gosbx/claims/$name/") &&
	grep -E "^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs):" /proc/$pid/status >caps &&
	cat >expect <<-\EOF &&
	CapInh:	0000000000000000
	CapPrm:	0000000000000000
	CapEff:	0000000000000000
	CapAmb:	0000000000000000
	NoNewPrivs:	1
	EOF
	test_cmp expect caps &&
	if test "$(id -u)" = 0
	then
		grep "^CapBnd:	0000000000000000\$" /proc/$pid/status
	fi &&
	gosbx close "$name"
'

test_expect_success 'netd ends with its sandbox' '
	name=$(gosbx open --allow-net="127.0.0.1:$port") &&
	pgrep -f "netd .*--log=$XDG_STATE_HOME/gosbx/claims/$name/" >pids &&
	test_line_count = 1 pids &&
	gosbx close "$name" &&
	test_retry 100 0.1 sh -c "! kill -0 $(cat pids) 2>/dev/null"
'

test_done
