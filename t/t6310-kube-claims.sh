#!/bin/sh
test_description='gosbx claims --backend=kube against fake-kube

Listing (namespace, -A, --all, JSON) and prune of expired and failed
claims gosbx made, never of others.'
. "$(dirname "$0")"/test-lib.sh
test -f "$TEST_DIRECTORY"/lib-kube.sh ||
	test_skip_all "t/lib-kube.sh (the fake API server) is not there yet"
. "$TEST_DIRECTORY"/lib-kube.sh

CLAIMS=/apis/extensions.agents.x-k8s.io/v1alpha1/namespaces

# claim <ns> <name> <shutdownTime> <policy> [gosbx|other] [persistent]
claim() {
	if test "${5:-gosbx}" = gosbx; then
		_c_labels="{\"agents.x-k8s.io/created-by\":\"gosbx\",\"gosbx/persistent\":\"${6:-false}\"}"
	else
		_c_labels="{\"app\":\"someone-else\"}"
	fi
	kube_apply "$CLAIMS/$1/sandboxclaims" "{
		\"apiVersion\":\"extensions.agents.x-k8s.io/v1alpha1\",
		\"kind\":\"SandboxClaim\",
		\"metadata\":{\"name\":\"$2\",\"labels\":$_c_labels},
		\"spec\":{\"sandboxTemplateRef\":{\"name\":\"go-runtime-template\"},
		\"lifecycle\":{\"shutdownTime\":\"$3\",\"shutdownPolicy\":\"$4\"}}}" &&
	test "$(cat status)" = 201
}

claims() {
	gosbx claims --backend=kube --kubeconfig=kube.kubeconfig "$@"
}

# started here, not in a test: test_atexit (stopping it) does not reach
# out of a test's subshell
kube_start --no-runtime -- --template=go-runtime-template

test_expect_success 'setup: claims of gosbx and of others, in two namespaces' '
	test -s kube.kubeconfig &&
	claim default kept 2099-01-01T00:00:00Z Delete gosbx true &&
	claim default expired 2020-01-01T00:00:00Z Retain &&
	claim default foreign 2099-01-01T00:00:00Z Delete other &&
	claim other failed 2099-01-01T00:00:00Z Delete &&
	kube_wait_json 30 "$CLAIMS/default/sandboxclaims/kept" \
		"any(c[\"type\"] == \"Ready\" and c[\"status\"] == \"True\" for c in v[\"status\"][\"conditions\"])" &&
	kube_wait_json 30 "$CLAIMS/default/sandboxclaims/expired" \
		"any(c.get(\"reason\") == \"ClaimExpired\" for c in v[\"status\"][\"conditions\"])" &&
	kube_wait_json 30 "$CLAIMS/other/sandboxclaims/failed" \
		"any(c.get(\"reason\") == \"TemplateNotFound\" for c in v[\"status\"][\"conditions\"])"
'

test_expect_success 'the global kube options reach claims and doctor' '
	gosbx --backend=kube --kubeconfig=kube.kubeconfig --namespace=other \
		claims --all >out &&
	test_grep "^failed  *other " out &&
	! grep "^kept " out &&
	test_must_fail gosbx --backend=kube --kubeconfig=missing.kubeconfig \
		doctor >out 2>&1 &&
	test_grep "missing.kubeconfig" out
'

test_expect_success 'the namespace: only the claims gosbx made' '
	claims >out &&
	head -n 1 out >header &&
	test_grep "^NAME  *NAMESPACE  *READY  *SANDBOX  *AGE  *EXPIRES  *PERSISTENT  *MODE$" header &&
	test_grep "^kept  *default  *True  *kept  *[0-9]*s  *[0-9]*d  *yes  *-$" out &&
	test_grep "^expired  *default  *False (ClaimExpired)  *-  *[0-9]*s  *expired  *no  *-$" out &&
	! grep foreign out &&
	! grep failed out &&
	test_line_count = 3 out &&
	# the columns line up, whatever the width of a READY cell
	awk "NR == 1 { at = index(\$0, \"SANDBOX\") }
	     NR > 1 && substr(\$0, at, 1) == \" \" { print \"off: \" \$0; bad = 1 }
	     NR > 1 && substr(\$0, at - 2, 2) != \"  \" { print \"off: \" \$0; bad = 1 }
	     END { exit bad }" out
'

test_expect_success '--all shows every claim, -A every namespace' '
	claims --all >out &&
	test_grep "^foreign  *default" out &&
	claims -A >out &&
	test_grep "^failed  *other  *False (TemplateNotFound)" out &&
	test_grep "^kept  *default" out &&
	! grep foreign out &&
	test_line_count = 4 out
'

test_expect_success 'JSON' '
	claims -A -o json >out.json &&
	python3 -c "
import json
v = {c[\"name\"]: c for c in json.load(open(\"out.json\"))}
assert sorted(v) == [\"expired\", \"failed\", \"kept\"], v
k = v[\"kept\"]
assert k[\"namespace\"] == \"default\" and k[\"ready\"] is True, k
assert k[\"sandbox\"] == \"kept\" and k[\"persistent\"] is True, k
assert k[\"shutdown_time\"] == \"2099-01-01T00:00:00Z\", k
assert k[\"expired\"] is False and k[\"gosbx\"] is True, k
assert isinstance(k[\"age_s\"], int), k
e = v[\"expired\"]
assert e[\"expired\"] is True and e[\"reason\"] == \"ClaimExpired\", e
assert e[\"sandbox\"] is None, e
# a v1alpha1 Sandbox has no spec.operatingMode: the mode is unknown
assert k[\"mode\"] is None and e[\"mode\"] is None, v
assert v[\"failed\"][\"namespace\"] == \"other\", v
"
'

test_expect_success 'prune --dry-run deletes nothing' '
	claims prune --dry-run >out &&
	test_grep "^expired: expired at 2020-01-01T00:00:00Z$" out &&
	test_line_count = 1 out &&
	kube_expect 200 GET "$CLAIMS/default/sandboxclaims/expired"
'

test_expect_success 'prune deletes the expired claim of the namespace' '
	claims prune >out &&
	test_grep "^expired: expired at 2020-01-01T00:00:00Z$" out &&
	test_line_count = 1 out &&
	kube_expect 404 GET "$CLAIMS/default/sandboxclaims/expired" &&
	kube_expect 200 GET "$CLAIMS/default/sandboxclaims/kept" &&
	kube_expect 200 GET "$CLAIMS/default/sandboxclaims/foreign" &&
	kube_expect 200 GET "$CLAIMS/other/sandboxclaims/failed"
'

test_expect_success 'prune -A: a failed claim elsewhere; never a foreign one' '
	claims prune -A >out &&
	test_grep "^other/failed: failed: TemplateNotFound$" out &&
	test_line_count = 1 out &&
	kube_expect 404 GET "$CLAIMS/other/sandboxclaims/failed" &&
	kube_expect 200 GET "$CLAIMS/default/sandboxclaims/foreign"
'

test_expect_success 'prune: a claim whose sandbox is gone is orphaned' '
	kube_expect 200 DELETE \
		/apis/agents.x-k8s.io/v1alpha1/namespaces/default/sandboxes/kept &&
	claims prune >out &&
	test_grep "^kept: orphaned: sandbox kept is gone$" out &&
	kube_expect 404 GET "$CLAIMS/default/sandboxclaims/kept"
'

test_expect_success 'usage errors' '
	test_expect_code 129 claims prune --all &&
	test_expect_code 129 gosbx claims --backend=local -A
'

test_done
