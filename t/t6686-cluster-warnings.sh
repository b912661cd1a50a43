#!/bin/sh
test_description='the API server'"'"'s Warning headers on a real control plane

A ValidatingAdmissionPolicy with validationActions [Warn] makes the real
kube-apiserver answer the claim create with a Warning header (RFC 7234
warn-code 299, KEP-1693); gosbx shows it once, as "warning: kubernetes:
<text>", and goes on.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-cluster.sh

# admin_warned: a dry-run create of a claim draws the policy's warning
admin_warned() {
	kadm create --dry-run=server -f claim.yaml >/dev/null 2>warn.err &&
	grep -q "cost report" warn.err
}

test_expect_success 'a real control plane with a warning policy on claims' '
	cluster_up &&
	cat >vap.yaml <<-\EOF &&
	apiVersion: admissionregistration.k8s.io/v1
	kind: ValidatingAdmissionPolicy
	metadata:
	  name: claims-warn
	spec:
	  failurePolicy: Fail
	  matchConstraints:
	    resourceRules:
	    - apiGroups: ["extensions.agents.x-k8s.io"]
	      apiVersions: ["*"]
	      operations: ["CREATE"]
	      resources: ["sandboxclaims"]
	  validations:
	  - expression: "has(object.metadata.labels) && \"team\" in object.metadata.labels"
	    message: "claims here should carry a team label (cost report)"
	---
	apiVersion: admissionregistration.k8s.io/v1
	kind: ValidatingAdmissionPolicyBinding
	metadata:
	  name: claims-warn
	spec:
	  policyName: claims-warn
	  validationActions: [Warn]
	EOF
	kadm apply --server-side --validate=strict -f - <vap.yaml &&
	cat >claim.yaml <<-\EOF &&
	apiVersion: extensions.agents.x-k8s.io/v1beta1
	kind: SandboxClaim
	metadata:
	  name: probe
	spec:
	  warmPoolRef: {name: go-runtime-warmpool}
	EOF
	# the policy is in force once a create by admin draws the warning
	test_retry 100 0.2 admin_warned
'

test_expect_success 'gosbx exec shows the warning once and runs the command' '
	gosbx_user --open-timeout=60s exec -- echo ran >out 2>err &&
	cat err >&3 &&
	test_grep "^ran\$" out &&
	grep "^warning: kubernetes: .*claims here should carry a team label (cost report)" err >warned &&
	test $(wc -l <warned) = 1
'

test_done
