#!/bin/sh
test_description='local network: allowed names that resolve to private addresses

A test host in a network namespace this script creates (a veth pair,
10.231.0.1 here and 10.231.0.2 there, an HTTP server there) stands for
a service on the host'"'"'s LAN. Names come from an /etc/hosts of our
own, bound over the real one in a mount namespace of gosbx'"'"'s (netd
resolves with it). An allowed name that resolves to a private or
link-local address is refused unless that address is on the list too
(Documentation/protocol/network.md: rebinding-safe); the address itself, listed, is
reached. Root only: a normal user cannot make the namespaces.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test "$(id -u)" = 0 || test_skip_all 'needs root (network namespaces, veth)'
test_have_prereq PYTHON || test_skip_all 'python3 is not installed'
command -v ip >/dev/null || test_skip_all 'ip (iproute2) is not installed'

ns=gosbx-t7104-$$
ip netns add "$ns" || test_skip_all 'cannot create a network namespace'
test_atexit "ip netns delete $ns"
ip link add "h$$" type veth peer name "s$$" &&
ip link set "s$$" netns "$ns" &&
ip addr add 10.231.0.1/24 dev "h$$" &&
ip link set "h$$" up &&
ip netns exec "$ns" ip addr add 10.231.0.2/24 dev "s$$" &&
ip netns exec "$ns" ip link set "s$$" up &&
ip netns exec "$ns" ip link set lo up || exit 1
test_atexit "ip link delete h$$ 2>/dev/null"

mkdir -p www && echo "a LAN service" >www/index.html
(cd www && exec ip netns exec "$ns" python3 -m http.server --bind 10.231.0.2 8080) \
	>http.log 2>&1 &
echo $! >http.pid
test_atexit 'kill $(cat http.pid)'
test_retry 100 0.1 curl -sf -o /dev/null "http://10.231.0.2:8080/" ||
	test_skip_all 'cannot start the test host'"'"'s server'

# /etc/hosts with the test names, for gosbx and netd only
{ cat /etc/hosts; echo "10.231.0.2 lan.test"; echo "169.254.169.254 meta.test"; } >hosts
with_hosts() {
	unshare -m sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$PWD/hosts" "$@"
}


cat >get.sh <<\EOF || exit 1
exec curl --noproxy "" -sS -v -p "$1"
EOF

test_expect_success 'a name that resolves to a private address is refused' '
	test_must_fail with_err with_hosts gosbx exec --allow-net=lan.test:8080 \
		--file=get.sh -- sh get.sh http://lan.test:8080/ &&
	test_grep "gosbx: lan.test resolves to 10.231.0.2, a private address; pass --allow-net=10.231.0.2:8080 to allow it" err
'

test_expect_success 'with that address on the list it is reached' '
	with_hosts gosbx exec --allow-net=lan.test:8080,10.231.0.2:8080 \
		--file=get.sh -- sh get.sh http://lan.test:8080/index.html >out 2>err &&
	echo "a LAN service" >expect &&
	test_cmp expect out
'

test_expect_success 'the address alone on the list is reached by address, not by a name' '
	with_hosts gosbx exec --allow-net=10.231.0.2:8080 \
		--file=get.sh -- sh get.sh http://10.231.0.2:8080/index.html >out 2>err &&
	test_cmp expect out &&
	test_must_fail with_err with_hosts gosbx exec --allow-net=10.231.0.2:8080 \
		--file=get.sh -- sh get.sh http://lan.test:8080/ &&
	test_grep "lan.test:8080 is not on the sandbox.s allow-list" err
'

test_expect_success 'the cloud metadata address is refused through a name' '
	test_must_fail with_err with_hosts gosbx exec --allow-net=meta.test \
		--file=get.sh -- sh get.sh http://meta.test/latest/meta-data/ &&
	test_grep "meta.test resolves to 169.254.169.254, a private address" err
'

test_expect_success 'without netd the test host is unreachable from a sandbox' '
	test_must_fail with_err gosbx exec --modules=off -- \
		curl -sS --max-time 5 http://10.231.0.2:8080/ &&
	test_grep "Couldn.t connect\|Network is unreachable\|Failed to connect" err
'

test_done
