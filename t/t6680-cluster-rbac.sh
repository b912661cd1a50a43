#!/bin/sh
test_description='impersonation and a refused port-forward on a real control plane'
# The real authorizer: a kubeconfig whose user impersonates ('as') gets
# its port-forward upgrade authorized as the impersonated user too, and a
# user RBAC gives no pods/portforward is told so at once (one refused
# upgrade in the audit log), not retried for 20 s and blamed on the
# router. CLUSTER_RELEASE: default versions.sh's.
. "$(dirname "$0")"/test-lib.sh
GOSBX_TEST_BACKEND=cluster
. "$TEST_DIRECTORY"/lib-backend.sh

# as <user> <file>: the admin kubeconfig, impersonating <user>
as_kubeconfig() {
	sed "s|^  user:\$|  user:\\n    as: $1|" "$CLUSTER_ADMIN" >"$2" &&
	chmod 600 "$2"
}

# rbac.yaml's Role without its pods/portforward rule, named gosbx-nopf
cat >nopf-role.py <<\EOF_
import re, sys
s = open(sys.argv[1]).read()
role = [d for d in re.split(r"(?m)^---\s*$", s)
	if re.search(r"(?m)^kind: Role\s*$", d)][0]
role, n = re.subn(r'(?m)^  - apiGroups: \[""\]\n    resources: \["pods/portforward"\]\n'
		  r'    verbs: \[[^]]*\]\n', "", role)
assert n == 1, "no pods/portforward rule in rbac.yaml's Role"
print(role.replace("name: gosbx-client", "name: gosbx-nopf"))
EOF_

test_expect_success 'setup: a ServiceAccount with rbac.yaml'"'"'s Role less pods/portforward' '
	kadm create serviceaccount gosbx-nopf &&
	python3 nopf-role.py "$GOSBX_SOURCE_DIR/manifests/rbac.yaml" >nopf-role.yaml &&
	test_grep ! portforward nopf-role.yaml &&
	kadm apply -f - <nopf-role.yaml &&
	kadm create rolebinding gosbx-nopf --role=gosbx-nopf \
		--serviceaccount=default:gosbx-nopf &&
	as_kubeconfig system:serviceaccount:default:gosbx-client as-client.kubeconfig &&
	as_kubeconfig system:serviceaccount:default:gosbx-nopf as-nopf.kubeconfig
'

test_expect_success 'impersonation reaches the port-forward upgrade' '
	gosbx --kubeconfig=as-client.kubeconfig exec -- echo hi >out &&
	echo hi >expect &&
	test_cmp expect out &&
	cluster_audit audit.txt &&
	grep "/portforward" audit.txt >pf &&
	cat pf >&3 &&
	test_grep "^get kubernetes-admin(as:system:serviceaccount:default:gosbx-client) 101 /api/v1/namespaces/default/pods/sandbox-router-[a-z0-9-]*/portforward" pf &&
	test_grep ! "^[a-z]* kubernetes-admin 101 " pf
'

test_expect_success 'no pods/portforward: said at once, as RBAC, one upgrade tried' '
	test_expect_code_err 125 gosbx --kubeconfig=as-nopf.kubeconfig exec -- echo hi &&
	cat err >&3 &&
	test_grep "^error: the API server refuses this user a port-forward to the sandbox-router (HTTP 403): RBAC must grant get and create on pods/portforward in namespace .default." err &&
	test_grep ! "router cannot reach" err &&
	cluster_audit audit.txt &&
	grep "(as:system:serviceaccount:default:gosbx-nopf) 403 .*/portforward" audit.txt >refused &&
	test_line_count = 1 refused &&
	no_claims
'

test_expect_success 'doctor names the impersonated user and the missing permission' '
	test_expect_code 1 gosbx --kubeconfig=as-nopf.kubeconfig doctor >out &&
	test_grep "^ok    credentials: accepted (user .kubernetes-admin.), acting as .system:serviceaccount:default:gosbx-nopf." out &&
	test_grep "^fail  RBAC: 2 of [0-9]* permissions missing in namespace .default.: get pods/portforward, create pods/portforward" out
'

test_done
