#!/bin/sh
test_description='gosbx suspend and resume refused on agent-sandbox v0.4.6'
# v0.4.6's Sandbox (agents.x-k8s.io/v1alpha1) has spec.replicas and no
# spec.operatingMode: gosbx says which API it found and what it needs,
# and changes nothing.
CLUSTER_RELEASE=v0.4.6
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-cluster.sh

claim_ready() {
	test "$(kadm get sandboxclaim c1 \
		-o "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}")" = True
}

test_expect_success 'setup: a v1alpha1 claim gets Ready' '
	cluster_up &&
	cat >claim.yaml <<-\YAML &&
	apiVersion: extensions.agents.x-k8s.io/v1alpha1
	kind: SandboxClaim
	metadata:
	  name: c1
	  labels:
	    agents.x-k8s.io/created-by: gosbx
	spec:
	  sandboxTemplateRef: {name: go-runtime-template}
	YAML
	test_retry 150 0.2 kadm apply --server-side -f claim.yaml &&
	test_retry 150 0.2 claim_ready &&
	kadm get sandboxclaim c1 -o "jsonpath={.status.sandbox.name}" >sandbox &&
	test -s sandbox
'

for verb in suspend resume; do
	test_expect_success "$verb: refused, naming the API and the version it needs" "
		test_expect_code_err 125 gosbx_user $verb c1 &&
		test_grep \"^error: cannot $verb claim .c1.: the Sandbox API in use (agents.x-k8s.io/v1alpha1) has no spec.operatingMode; suspending needs the v1beta1 API of agent-sandbox v0.5 or later (v0.4.x serves v1alpha1 only)\$\" err &&
		claim_ready &&
		test -z \"\$(kadm get sandbox \"\$(cat sandbox)\" -o jsonpath={.spec.operatingMode})\"
	"
done

test_expect_success 'claims shows no mode' '
	gosbx_user claims >out &&
	test_grep "^c1  .*  -$" out
'

test_done
