# Helpers for the tests of the upstream SDKs against gosbx-runtime's
# sandboxd (t3112 Go, t3113 Python). Source after lib-kube.sh.
#
# sdk_pod_template <rest port> <grpc port>: a v1beta1 SandboxTemplate
# "sdk-template" whose container runs gosbx-runtime (fake-kube appends
# the container args to its own) with the sandboxd REST and gRPC
# listeners on the pod IP, given by the downward API as a kubelet
# gives it (env POD_IP from fieldRef status.podIP, "$(POD_IP)" in args).
#
# sdk_pod_ip_prefix: a loopback prefix 127.<n> for fake-kube's
# --pod-ip-prefix, so that the pod IPs are addresses the runtimes can
# listen on and the SDKs dial (connectivity in-cluster-pod-ip); <n>
# from the pid, so that two tests at once rarely share one.
#
# sdk_python_venv: a venv with the Python SDK and what it needs, as
# pinned in t/sandboxd-python-sdk/requirements.txt, installed by pip
# through the registry of the user's pip configuration; prints the
# venv's python: test_python_venv (test-lib.sh), so the first run
# installs and later runs, the sanitizer build's among them, reuse it.
#
# no_sdk_claims: no SandboxClaim is left in namespace default (the SDK
# deletes its claim when it closes the sandbox).

sdk_pod_template() {
	cat <<-EOT
	apiVersion: extensions.agents.x-k8s.io/v1beta1
	kind: SandboxTemplate
	metadata:
	  name: sdk-template
	  namespace: default
	spec:
	  podTemplate:
	    spec:
	      containers:
	      - name: runtime
	        image: gosbx-runtime:test
	        args:
	        - --sandboxd-rest=\$(POD_IP):$1
	        - --sandboxd-grpc=\$(POD_IP):$2
	        env:
	        - name: POD_IP
	          valueFrom:
	            fieldRef:
	              fieldPath: status.podIP
	EOT
}

sdk_pod_ip_prefix() {
	echo "127.$(($$ % 200 + 20))"
}

no_sdk_claims() {
	kube_curl /apis/extensions.agents.x-k8s.io/v1beta1/namespaces/default/sandboxclaims \
		>claims.json &&
	test "$(kube_py claims.json "len(v[\"items\"])")" = 0
}

SDK_PYTHON_REQ=$TEST_DIRECTORY/sandboxd-python-sdk/requirements.txt

sdk_python_venv() {
	test_python_venv python3 "$SDK_PYTHON_REQ"
}
