#!/bin/sh

test_description='fake-kube: the fake Kubernetes API server of the kube tests'

. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-kube.sh

NS=/apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/default
SBX=/apis/agents.x-k8s.io/v1alpha1/namespaces/default

claim_json() {
	printf '{"apiVersion":"extensions.agents.x-k8s.io/v1alpha1",'
	printf '"kind":"SandboxClaim","metadata":{"generateName":"%s"%s},' \
		"${3:-sandbox-claim-}" "${4:-}"
	printf '"spec":{"sandboxTemplateRef":{"name":"%s"}%s}}' "$1" "${2:-}"
}

template_json() {
	printf '{"apiVersion":"extensions.agents.x-k8s.io/%s",' "${2:-v1alpha1}"
	printf '"kind":"SandboxTemplate","metadata":{"name":"%s"},' "$1"
	printf '"spec":{"podTemplate":{"spec":{"containers":[{"name":"rt",'
	printf '"image":"example.invalid/gosbx-runtime:1","ports":'
	printf '[{"containerPort":8888}]}]}}}}'
}

test_expect_success 'certificates and the fake start (TLS, v0.4.6)' '
	kube_pki &&
	kube_start &&
	grep "^fake-kube: listening on https://127.0.0.1:[0-9]*$" kube.out &&
	grep "^fake-kube: router on http://127.0.0.1:[0-9]*$" kube.out &&
	test -s kube.kubeconfig &&
	grep "client-certificate-data: ." kube.kubeconfig
'

test_expect_success 'the kubeconfig loads (lib/kube/kubeconfig.h)' '
	kubeconfig-dump --kubeconfig=kube.kubeconfig --auth >kc.json &&
	json_is kc.json cluster.server "$(kube_url)" &&
	json_is kc.json context kind-fake &&
	json_get kc.json auth.client-certificate-pem | grep bytes
'

test_expect_success 'TLS: a client certificate of the CA is accepted' '
	kube_expect 200 GET /version &&
	json_is body gitVersion v1.31.0
'

test_expect_success 'TLS: no client certificate is refused' '
	curl -sS --cacert pki/ca.crt -o body -w "%{http_code}" \
		"$(kube_url)/version" >status 2>err;
	test "$(cat status)" = 401 &&
	json_is body kind Status &&
	json_is body reason Unauthorized
'

test_expect_success 'TLS: a certificate of another CA is refused' '
	curl -sS --cacert pki/ca.crt --cert pki/other.crt \
		--key pki/other.key -o body -w "%{http_code}" \
		"$(kube_url)/apis" >status 2>err;
	test "$(cat status)" != 200 &&
	! grep APIGroupList body
'

test_expect_success 'discovery (v0.4.6): groups, versions, resources' '
	kube_expect 200 GET /apis &&
	json_is body kind APIGroupList &&
	kube_py body "[g[\"name\"] for g in v[\"groups\"]]" >groups &&
	grep "\"extensions.agents.x-k8s.io\"" groups &&
	grep "\"agents.x-k8s.io\"" groups &&
	grep "\"discovery.k8s.io\"" groups &&
	kube_expect 200 GET /apis/extensions.agents.x-k8s.io &&
	json_is body kind APIGroup &&
	json_is body preferredVersion.version v1alpha1 &&
	test "$(kube_py body "len(v[\"versions\"])")" = 1 &&
	kube_expect 404 GET /apis/extensions.agents.x-k8s.io/v1beta1 &&
	json_is body kind Status &&
	kube_expect 200 GET /apis/extensions.agents.x-k8s.io/v1alpha1 &&
	json_is body kind APIResourceList &&
	kube_py body "[r[\"name\"] for r in v[\"resources\"]]" >res &&
	grep "\"sandboxclaims\"" res &&
	grep "\"sandboxtemplates\"" res &&
	grep "\"sandboxwarmpools\"" res &&
	grep "\"sandboxclaims/status\"" res &&
	kube_expect 200 GET /apis/agents.x-k8s.io/v1alpha1 &&
	grep "\"sandboxes\"" body &&
	kube_expect 200 GET /api/v1 &&
	grep "\"pods/portforward\"" body &&
	kube_expect 200 GET /apis/discovery.k8s.io/v1 &&
	grep "\"endpointslices\"" body
'

test_expect_success 'a template and a claim with generateName' '
	kube_apply $NS/sandboxtemplates "$(template_json go)" &&
	test "$(cat status)" = 201 &&
	kube_apply $NS/sandboxclaims "$(claim_json go "" sandbox-claim- \
		",\"labels\":{\"app\":\"a\",\"tier\":\"x\"}")" &&
	test "$(cat status)" = 201 &&
	json_get body metadata.name >claim1 &&
	grep -E "^sandbox-claim-[a-z0-9]{5}$" claim1 &&
	json_get body metadata.uid | grep -E "^[0-9a-f-]{36}$" &&
	json_get body metadata.resourceVersion | grep -E "^[0-9]+$" &&
	json_get body metadata.creationTimestamp |
		grep -E "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$" &&
	json_is body metadata.generation 1 &&
	json_is body spec.warmpool default &&
	kube_expect 200 GET $NS/sandboxclaims/$(cat claim1) &&
	json_is body metadata.name "$(cat claim1)"
'

test_expect_success 'the same name again is AlreadyExists' '
	kube_apply $NS/sandboxtemplates "$(template_json go)" &&
	test "$(cat status)" = 409 &&
	json_is body reason AlreadyExists &&
	json_is body code 409
'

test_expect_success 'list with label and field selectors' '
	kube_apply $NS/sandboxclaims "$(claim_json go "" other- \
		",\"labels\":{\"app\":\"b\"}")" &&
	json_get body metadata.name >claim2 &&
	c1=$(cat claim1) && c2=$(cat claim2) &&
	names() {
		kube_expect 200 GET "$NS/sandboxclaims?$1" &&
		json_is body kind SandboxClaimList &&
		kube_py body "\" \".join(sorted(i[\"metadata\"][\"name\"] for i in v[\"items\"]))"
	} &&
	test "$(names labelSelector=app%3Da)" = "$c1" &&
	test "$(names labelSelector=app%21%3Da)" = "$c2" &&
	test "$(names "labelSelector=app%20in%20(a,b)")" = "$(printf "%s\n" $c1 $c2 | sort | tr "\n" " " | sed "s/ $//")" &&
	test "$(names labelSelector=tier)" = "$c1" &&
	test "$(names labelSelector=%21tier)" = "$c2" &&
	test "$(names fieldSelector=metadata.name%3D$c2)" = "$c2" &&
	kube_expect 400 GET "$NS/sandboxclaims?fieldSelector=spec.x%3Dy" &&
	json_is body reason BadRequest
'

test_expect_success 'strict validation: an unknown field is 422 naming it' '
	kube_apply $NS/sandboxclaims "$(claim_json go ",\"service\":true")" &&
	test "$(cat status)" = 422 &&
	json_is body reason Invalid &&
	json_is body code 422 &&
	grep "unknown field \\\\\"spec.service\\\\\"" body &&
	json_is body details.causes.0.field spec.service &&
	kube_apply $NS/sandboxclaims "$(claim_json go \
		",\"lifecycle\":{\"shutdownPolicy\":\"Sometimes\"}")" &&
	test "$(cat status)" = 422 &&
	grep "spec.lifecycle.shutdownPolicy: Unsupported value" body
'

test_expect_success 'the controller makes the claim Ready with a sandbox' '
	c1=$(cat claim1) &&
	kube_wait_json 30 $NS/sandboxclaims/$c1 \
		"[c[\"status\"] for c in v.get(\"status\",{}).get(\"conditions\",[]) if c[\"type\"]==\"Ready\"]==[\"True\"]" &&
	json_is body status.sandbox.name "$c1" &&
	json_get body status.sandbox.podIPs.0 | grep "^10\.244\." &&
	kube_expect 200 GET $SBX/sandboxes/$c1 &&
	test "$(kube_py body "v[\"metadata\"][\"annotations\"][\"agents.x-k8s.io/pod-name\"]")" = "$c1" &&
	kube_expect 200 GET /api/v1/namespaces/default/pods/$c1 &&
	json_is body status.phase Running
'

test_expect_success 'merge patch, and PUT with a stale resourceVersion' '
	c1=$(cat claim1) &&
	kube_expect 200 GET $NS/sandboxclaims/$c1 &&
	cp body before &&
	kube_req PATCH $NS/sandboxclaims/$c1 \
		-H "Content-Type: application/merge-patch+json" \
		--data-binary "{\"metadata\":{\"labels\":{\"patched\":\"yes\"}}}" &&
	test "$(cat status)" = 200 &&
	test "$(kube_py body "v[\"metadata\"][\"labels\"][\"patched\"]")" = yes &&
	test "$(json_get body metadata.resourceVersion)" != \
		"$(json_get before metadata.resourceVersion)" &&
	json_is body status.sandbox.name "$c1" &&
	json_is body metadata.generation 1 &&
	kube_req PATCH $NS/sandboxclaims/$c1 \
		-H "Content-Type: application/merge-patch+json" \
		--data-binary "{\"spec\":{\"lifecycle\":{\"shutdownPolicy\":\"Retain\"}}}" &&
	test "$(cat status)" = 200 &&
	json_is body metadata.generation 2 &&
	json_is body spec.lifecycle.shutdownPolicy Retain &&
	kube_req PATCH $NS/sandboxclaims/$c1 \
		-H "Content-Type: application/json-patch+json" \
		--data-binary "[{\"op\":\"add\",\"path\":\"/metadata/labels/jp\",\"value\":\"1\"}]" &&
	test "$(cat status)" = 200 &&
	test "$(kube_py body "v[\"metadata\"][\"labels\"][\"jp\"]")" = 1 &&
	kube_req PUT $NS/sandboxclaims/$c1 \
		-H "Content-Type: application/json" --data-binary @before &&
	test "$(cat status)" = 409 &&
	json_is body reason Conflict &&
	kube_req PATCH $NS/sandboxclaims/$c1 -H "Content-Type: text/plain" \
		--data-binary x &&
	test "$(cat status)" = 415
'

test_expect_success 'the router: headers pick the sandbox runtime' '
	c1=$(cat claim1) &&
	curl -sS -H "X-Sandbox-ID: $c1" -H "X-Sandbox-Namespace: default" \
		-H "X-Sandbox-Port: 8888" "$(kube_router_url)/" >out &&
	json_is out status ok &&
	json_is out server gosbx-runtime &&
	curl -sS -D hdrs -o /dev/null -H "X-Sandbox-ID: $c1" \
		"$(kube_router_url)/" &&
	grep -i "^Content-Type: application/json" hdrs &&
	curl -sS -H "X-Sandbox-ID: $c1" -H "Content-Type: application/json" \
		-d "{\"command\":\"echo routed >f && cat f\"}" \
		"$(kube_router_url)/execute" >out &&
	json_is out stdout routed &&
	curl -sS -o out -w "%{http_code}" "$(kube_router_url)/" >status &&
	test "$(cat status)" = 400 &&
	json_is out detail "X-Sandbox-ID header is required" &&
	curl -sS -o out -w "%{http_code}" -H "X-Sandbox-ID: nope" \
		"$(kube_router_url)/" >status &&
	test "$(cat status)" = 502 &&
	json_is out detail "Could not connect to the backend sandbox: nope"
'

test_expect_success 'the router Service, EndpointSlice and pod' '
	kube_expect 200 GET /api/v1/namespaces/default/services/sandbox-router-svc &&
	json_is body spec.ports.0.port 8080 &&
	kube_expect 200 GET "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dsandbox-router-svc" &&
	json_is body items.0.endpoints.0.conditions.ready true &&
	json_get body items.0.endpoints.0.targetRef.name >router-pod &&
	grep "^sandbox-router-" router-pod &&
	kube_expect 200 GET /api/v1/namespaces/default/pods/$(cat router-pod)
'

test_expect_success PYTHON 'port-forward to the router reaches the runtime' '
	c1=$(cat claim1) &&
	printf "GET / HTTP/1.1\r\nHost: r\r\nX-Sandbox-ID: %s\r\nX-Sandbox-Namespace: default\r\nX-Sandbox-Port: 8888\r\nConnection: close\r\n\r\n" \
		"$c1" >req &&
	kube_ws "/api/v1/namespaces/default/pods/$(cat router-pod)/portforward?ports=8080" \
		--send=req >out &&
	head -n 1 out | grep "^HTTP/1.1 200" &&
	grep "\"server\":\"gosbx-runtime\"" out
'

test_expect_success PYTHON 'port-forward: two requests on one tunnel, and to a sandbox pod' '
	c1=$(cat claim1) &&
	printf "GET / HTTP/1.1\r\nHost: r\r\nX-Sandbox-ID: %s\r\n\r\n" "$c1" >req &&
	printf "POST /execute HTTP/1.1\r\nHost: r\r\nX-Sandbox-ID: %s\r\nContent-Type: application/json\r\nContent-Length: 24\r\nConnection: close\r\n\r\n{\"command\":\"echo twice\"}" "$c1" >>req &&
	kube_ws "/api/v1/namespaces/default/pods/$(cat router-pod)/portforward?ports=8080" \
		--send=req >out &&
	test "$(grep -o "HTTP/1.1 200" out | wc -l)" = 2 &&
	grep "\"stdout\":\"twice" out &&
	kube_ws "/api/v1/namespaces/default/pods/$c1/portforward?ports=8888" \
		--send=req >out &&
	test "$(grep -o "HTTP/1.1 200" out | wc -l)" = 2 &&
	grep "\"stdout\":\"twice" out
'

test_expect_success PYTHON 'port-forward: missing header 400, unknown sandbox 502' '
	printf "GET / HTTP/1.1\r\nHost: r\r\nConnection: close\r\n\r\n" >req &&
	kube_ws "/api/v1/namespaces/default/pods/$(cat router-pod)/portforward?ports=8080" \
		--send=req >out &&
	head -n 1 out | grep "^HTTP/1.1 400" &&
	grep "X-Sandbox-ID header is required" out &&
	printf "GET / HTTP/1.1\r\nHost: r\r\nX-Sandbox-ID: ghost\r\nConnection: close\r\n\r\n" >req &&
	kube_ws "/api/v1/namespaces/default/pods/$(cat router-pod)/portforward?ports=8080" \
		--send=req >out &&
	head -n 1 out | grep "^HTTP/1.1 502" &&
	grep "Could not connect to the backend sandbox: ghost" out
'

test_expect_success PYTHON 'port-forward: unknown pod is 404, a closed port an error' '
	{ kube_ws "/api/v1/namespaces/default/pods/nope/portforward?ports=8080" 2>err; echo $? >rc; } &&
	test "$(cat rc)" = 2 &&
	grep "404" err &&
	grep "nope.*not found" err &&
	{ kube_ws "/api/v1/namespaces/default/pods/$(cat router-pod)/portforward?ports=9999" 2>err; echo $? >rc; } &&
	test "$(cat rc)" = 3 &&
	grep "error forwarding port 9999" err
'

test_expect_success PYTHON 'break-tunnels closes open port-forwards' '
	rm -f ready &&
	{ kube_ws "/api/v1/namespaces/default/pods/$(cat router-pod)/portforward?ports=8080" \
		--hold --ready=ready --timeout=60 >/dev/null 2>&1 & } &&
	echo $! >ws.pid &&
	rt_poll 30 test -f ready &&
	kube_expect 200 POST /fake/break-tunnels &&
	test "$(json_get body broken)" -ge 1 &&
	rt_poll 30 sh -c "! kill -0 $(cat ws.pid) 2>/dev/null"
'

test_expect_success 'watch: ADDED then MODIFIED with Ready, and bookmarks' '
	kube_expect 200 GET $NS/sandboxclaims &&
	json_get body metadata.resourceVersion >rv0 &&
	{ kube_curl "$NS/sandboxclaims?watch=1&resourceVersion=$(cat rv0)&allowWatchBookmarks=true&timeoutSeconds=30" \
		-N >watch.out 2>/dev/null & } &&
	echo $! >watch.pid &&
	kube_apply $NS/sandboxclaims "$(claim_json go "" watched-)" &&
	json_get body metadata.name >claim3 &&
	c3=$(cat claim3) &&
	rt_poll 30 sh -c "grep \"\\\"MODIFIED\\\".*\\\"$c3\\\".*\\\"status\\\":\\\"True\\\"\" watch.out" &&
	rt_poll 30 grep "\"type\":\"BOOKMARK\"" watch.out &&
	kill $(cat watch.pid) &&
	grep "\"$c3\"" watch.out | head -n 1 >first &&
	grep "^{\"type\":\"ADDED\"" first &&
	grep "\"type\":\"BOOKMARK\".*\"kind\":\"SandboxClaim\"" watch.out
'

test_expect_success 'watch: fieldSelector filters, timeoutSeconds ends the stream' '
	c3=$(cat claim3) &&
	kube_curl "$NS/sandboxclaims?watch=true&resourceVersion=$(cat rv0)&fieldSelector=metadata.name%3D$c3&timeoutSeconds=1" \
		-N >w2.out &&
	grep "\"ADDED\"" w2.out &&
	! grep -v "\"$c3\"" w2.out &&
	kube_curl "$NS/sandboxclaims?watch=1&timeoutSeconds=1" -N >w3.out &&
	grep "^{\"type\":\"ADDED\".*\"$c3\"" w3.out &&
	kube_curl "$NS/sandboxclaims/$c3?watch=1&timeoutSeconds=1" -N >w6.out &&
	test_line_count = 1 w6.out &&
	grep "^{\"type\":\"ADDED\".*\"$c3\"" w6.out
'

test_expect_success 'watch: 410 Expired after expire-history' '
	kube_expect 200 POST /fake/expire-history &&
	kube_curl "$NS/sandboxclaims?watch=1&resourceVersion=$(cat rv0)&timeoutSeconds=5" \
		-N >w4.out &&
	test_line_count = 1 w4.out &&
	grep "^{\"type\":\"ERROR\"" w4.out &&
	grep "\"code\":410" w4.out &&
	grep "\"reason\":\"Expired\"" w4.out &&
	kube_expect 200 GET $NS/sandboxclaims &&
	json_get body metadata.resourceVersion >rv1 &&
	kube_curl "$NS/sandboxclaims?watch=1&resourceVersion=$(cat rv1)&timeoutSeconds=1" \
		-N >w5.out &&
	! grep ERROR w5.out
'

test_expect_success 'controller: a missing template is TemplateNotFound' '
	kube_apply $NS/sandboxclaims "$(claim_json nosuch)" &&
	json_get body metadata.name >claim4 &&
	kube_wait_json 30 $NS/sandboxclaims/$(cat claim4) \
		"[c[\"reason\"] for c in v.get(\"status\",{}).get(\"conditions\",[]) if c[\"type\"]==\"Ready\" and c[\"status\"]==\"False\"]==[\"TemplateNotFound\"]" &&
	grep "SandboxTemplate \\\\\"nosuch\\\\\" not found" body
'

test_expect_success 'controller: a warm pool sandbox is adopted (another name)' '
	kube_apply $NS/sandboxwarmpools "{\"apiVersion\":\"extensions.agents.x-k8s.io/v1alpha1\",\"kind\":\"SandboxWarmPool\",\"metadata\":{\"name\":\"pool\"},\"spec\":{\"replicas\":1,\"sandboxTemplateRef\":{\"name\":\"go\"}}}" &&
	test "$(cat status)" = 201 &&
	kube_wait_json 30 $NS/sandboxwarmpools/pool \
		"v.get(\"status\",{}).get(\"readyReplicas\")==1" &&
	kube_apply $NS/sandboxclaims "$(claim_json go "" warm-)" &&
	json_get body metadata.name >claim5 &&
	c5=$(cat claim5) &&
	kube_wait_json 30 $NS/sandboxclaims/$c5 \
		"[c[\"status\"] for c in v.get(\"status\",{}).get(\"conditions\",[]) if c[\"type\"]==\"Ready\"]==[\"True\"]" &&
	json_get body status.sandbox.name >sbx5 &&
	grep "^pool-" sbx5 &&
	test "$(cat sbx5)" != "$c5" &&
	kube_expect 200 GET $SBX/sandboxes/$(cat sbx5) &&
	test "$(kube_py body "v[\"metadata\"][\"annotations\"][\"agents.x-k8s.io/pod-name\"]")" = "$(cat sbx5)" &&
	json_is body metadata.ownerReferences.0.name "$c5" &&
	kube_wait_json 30 $NS/sandboxwarmpools/pool \
		"v.get(\"status\",{}).get(\"readyReplicas\")==1" &&
	curl -sS -H "X-Sandbox-ID: $(cat sbx5)" "$(kube_router_url)/" >out &&
	json_is out status ok
'

test_expect_success 'deleting a claim deletes its sandbox and runtime' '
	c1=$(cat claim1) &&
	kube_expect 200 DELETE $NS/sandboxclaims/$c1 &&
	json_is body metadata.name "$c1" &&
	kube_expect 404 GET $NS/sandboxclaims/$c1 &&
	json_is body kind Status &&
	json_is body status Failure &&
	json_is body reason NotFound &&
	json_is body code 404 &&
	kube_expect 404 DELETE $NS/sandboxclaims/$c1 &&
	kube_expect 404 GET $SBX/sandboxes/$c1 &&
	kube_expect 200 GET /fake/state &&
	! grep "\"name\":\"$c1\"" body
'

test_expect_success 'stuck template: SandboxNotReady and an image pull event' '
	kube_apply $NS/sandboxtemplates "$(template_json slow)" &&
	kube_expect 200 POST "/fake/stuck?template=slow" &&
	kube_apply $NS/sandboxclaims "$(claim_json slow)" &&
	json_get body metadata.name >claim6 &&
	c6=$(cat claim6) &&
	kube_wait_json 30 $NS/sandboxclaims/$c6 \
		"[c[\"reason\"] for c in v.get(\"status\",{}).get(\"conditions\",[]) if c[\"type\"]==\"Ready\" and c[\"status\"]==\"False\"]==[\"SandboxNotReady\"] and \"ErrImagePull\" not in str(v) or \"pull\" in str(v)" &&
	kube_wait_json 30 "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D$c6" \
		"any(\"Failed to pull image\" in e[\"message\"] for e in v[\"items\"])" &&
	kube_expect 200 GET /api/v1/namespaces/default/pods/$c6 &&
	json_is body status.phase Pending &&
	json_is body status.containerStatuses.0.state.waiting.reason ErrImagePull
'

test_expect_success 'lifecycle: a past shutdownTime deletes (Delete) or expires (Retain)' '
	kube_apply $NS/sandboxclaims "$(claim_json go ",\"lifecycle\":{\"shutdownTime\":\"2001-01-01T00:00:00Z\",\"shutdownPolicy\":\"Delete\"}" gone-)" &&
	json_get body metadata.name >claim7 &&
	claim_deleted() {
		kube_req GET "$NS/sandboxclaims/$1" && test "$(cat status)" = 404
	} &&
	rt_poll 30 claim_deleted "$(cat claim7)" &&
	kube_expect 404 GET $NS/sandboxclaims/$(cat claim7) &&
	kube_apply $NS/sandboxclaims "$(claim_json go ",\"lifecycle\":{\"shutdownTime\":\"2001-01-01T00:00:00Z\"}" kept-)" &&
	json_get body metadata.name >claim8 &&
	kube_wait_json 30 $NS/sandboxclaims/$(cat claim8) \
		"[c[\"reason\"] for c in v.get(\"status\",{}).get(\"conditions\",[]) if c[\"type\"]==\"Ready\"]==[\"ClaimExpired\"]"
'

test_expect_success 'v0.5.6: discovery serves v1beta1 and v1alpha1' '
	kube_start --name=k5 --release=v0.5.6 --template=go \
		--warm-pool=shadow-pool-go:go:0 &&
	KUBE=k5 && export KUBE &&
	kube_expect 200 GET /apis/extensions.agents.x-k8s.io &&
	json_is body preferredVersion.version v1beta1 &&
	test "$(kube_py body "[x[\"version\"] for x in v[\"versions\"]]")" = "[\"v1beta1\", \"v1alpha1\"]" &&
	kube_expect 200 GET /apis/agents.x-k8s.io/v1beta1 &&
	kube_expect 200 GET /apis/agents.x-k8s.io/v1alpha1
'

test_expect_success 'v0.5.6: a v1alpha1 claim is converted both ways' '
	KUBE=k5 && export KUBE &&
	kube_apply $NS/sandboxclaims "$(claim_json go)" &&
	test "$(cat status)" = 201 &&
	grep "Warning: 299" headers &&
	json_get body metadata.name >c5name &&
	json_is body spec.sandboxTemplateRef.name go &&
	B=/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/default &&
	kube_expect 200 GET $B/sandboxclaims/$(cat c5name) &&
	json_is body apiVersion extensions.agents.x-k8s.io/v1beta1 &&
	json_is body spec.warmPoolRef.name shadow-pool-go &&
	kube_wait_json 30 $NS/sandboxclaims/$(cat c5name) \
		"[c[\"status\"] for c in v.get(\"status\",{}).get(\"conditions\",[]) if c[\"type\"]==\"Ready\"]==[\"True\"]" &&
	json_is body apiVersion extensions.agents.x-k8s.io/v1alpha1 &&
	json_is body spec.sandboxTemplateRef.name go &&
	! grep warmPoolRef body
'

test_expect_success 'v0.5.6: a v1beta1 claim names a warm pool' '
	KUBE=k5 && export KUBE &&
	B=/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/default &&
	kube_apply $B/sandboxclaims "{\"apiVersion\":\"extensions.agents.x-k8s.io/v1beta1\",\"kind\":\"SandboxClaim\",\"metadata\":{\"generateName\":\"b-\"},\"spec\":{\"warmPoolRef\":{\"name\":\"nopool\"}}}" &&
	test "$(cat status)" = 201 &&
	json_get body metadata.name >bname &&
	kube_wait_json 30 $B/sandboxclaims/$(cat bname) \
		"[c[\"reason\"] for c in v.get(\"status\",{}).get(\"conditions\",[]) if c[\"type\"]==\"Ready\"]==[\"WarmPoolNotFound\"]" &&
	kube_apply $B/sandboxclaims "{\"apiVersion\":\"extensions.agents.x-k8s.io/v1beta1\",\"kind\":\"SandboxClaim\",\"metadata\":{\"generateName\":\"b-\"},\"spec\":{\"sandboxTemplateRef\":{\"name\":\"go\"}}}" &&
	test "$(cat status)" = 422 &&
	grep "unknown field" body
'

test_expect_success 'forbid and SelfSubjectAccessReview' '
	kube_start --name=kf --no-runtime --forbid=create:sandboxclaims \
		--forbid=get:pods/portforward --template=go &&
	KUBE=kf && export KUBE &&
	kube_apply $NS/sandboxclaims "$(claim_json go)" &&
	test "$(cat status)" = 403 &&
	json_is body reason Forbidden &&
	kube_expect 200 GET $NS/sandboxclaims &&
	kube_apply /apis/authorization.k8s.io/v1/selfsubjectaccessreviews \
		"{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectAccessReview\",\"spec\":{\"resourceAttributes\":{\"namespace\":\"default\",\"verb\":\"get\",\"group\":\"\",\"resource\":\"pods\",\"subresource\":\"portforward\"}}}" &&
	test "$(cat status)" = 201 &&
	json_is body status.allowed false &&
	kube_apply /apis/authorization.k8s.io/v1/selfsubjectaccessreviews \
		"{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectAccessReview\",\"spec\":{\"resourceAttributes\":{\"namespace\":\"default\",\"verb\":\"get\",\"group\":\"extensions.agents.x-k8s.io\",\"resource\":\"sandboxclaims\"}}}" &&
	json_is body status.allowed true
'

test_expect_success 'plain HTTP mode needs no certificate' '
	kube_start --name=kh --insecure --no-runtime &&
	curl -sS "$(kube_url kh)/version" >out &&
	json_is out major 1
'

test_expect_success 'SIGTERM stops the fake and its runtimes' '
	kube_expect 200 GET /fake/state &&
	KUBE=kube kube_curl /fake/state >state &&
	kube_py state "[r[\"pid\"] for r in v[\"runtimes\"]]" | tr -d "[]," >pids &&
	test -s pids &&
	kube_stop kube &&
	for p in $(cat pids); do
		rt_poll 10 sh -c "! kill -0 $p 2>/dev/null" || return 1
	done
'

test_expect_success 'router timeout: a silent answer is cut, a stream is not' '
	kube_start --name=kt --insecure --template=go --router-timeout=3 &&
	KUBE=kt && export KUBE &&
	kube_apply $NS/sandboxclaims "$(claim_json go)" &&
	json_get body metadata.name >ct &&
	kube_wait_json 30 $NS/sandboxclaims/$(cat ct) \
		"[c[\"status\"] for c in v.get(\"status\",{}).get(\"conditions\",[]) if c[\"type\"]==\"Ready\"]==[\"True\"]" &&
	curl -sS -o out -w "%{http_code}" -H "X-Sandbox-ID: $(cat ct)" \
		-H "Content-Type: application/json" -d "{\"command\":\"sleep 8\"}" \
		"$(kube_router_url kt)/execute" >status &&
	test "$(cat status)" = 504 &&
	grep "Timed out waiting for the backend sandbox" out &&
	curl -sS -N -H "X-Sandbox-ID: $(cat ct)" -H "Content-Type: application/json" \
		-d "{\"command\":\"for i in 1 2 3 4 5 6 7 8; do echo \$i; sleep 0.5; done\"}" \
		"$(kube_router_url kt)/v1/exec" >out &&
	grep "\"type\":\"exit\"" out &&
	test "$(grep -c "\"type\":\"stdout\"" out)" -ge 1
'

test_expect_success PYTHON 'pod network: a proxy to the pod IPs; --router-upstream' '
	kube_start --name=kp --insecure --template=go --pod-network-port=0 \
		--router-upstream="$(kube_router_url kt)" &&
	KUBE=kp && export KUBE &&
	json_get kp.info podNetwork >net &&
	grep "^http://127\.0\.0\.1:[0-9]*\$" net &&
	grep "^fake-kube: pod network on $(cat net)\$" kp.out &&
	kube_apply $NS/sandboxclaims "$(claim_json go)" &&
	json_get body metadata.name >cp &&
	kube_wait_json 30 $NS/sandboxclaims/$(cat cp) \
		"[c[\"status\"] for c in v.get(\"status\",{}).get(\"conditions\",[]) if c[\"type\"]==\"Ready\"]==[\"True\"]" &&
	kube_expect 200 GET /api/v1/namespaces/default/pods/$(cat cp) &&
	json_get body status.podIP >ip &&
	curl -sS -x "$(cat net)" -H "Content-Type: application/json" \
		-d "{\"command\":\"echo via-pod-net\"}" \
		"http://$(cat ip):8888/execute" >out &&
	json_is out stdout via-pod-net &&
	curl -sS -o out -w "%{http_code}" -x "$(cat net)" \
		"http://$(cat ip):9999/" >status &&
	test "$(cat status)" = 502 &&
	curl -sS -o out -w "%{http_code}" -x "$(cat net)" \
		"http://10.9.9.9:8888/" >status &&
	test "$(cat status)" = 502 &&
	curl -sS -o out -w "%{http_code}" "$(cat net)/" >status &&
	test "$(cat status)" = 502 &&
	kube_expect 200 GET "/api/v1/namespaces/default/pods?labelSelector=app%3Dsandbox-router" &&
	json_get body items.0.metadata.name >rp &&
	printf "GET / HTTP/1.1\r\nHost: r\r\nX-Sandbox-ID: %s\r\nConnection: close\r\n\r\n" \
		"$(cat ct)" >req &&
	kube_ws "/api/v1/namespaces/default/pods/$(cat rp)/portforward?ports=8080" \
		--send=req >out &&
	head -n 1 out | grep "^HTTP/1.1 200"
'

test_expect_success 'watch-window: a watch older than the window gets 410' '
	kube_start --name=kw --insecure --no-runtime --watch-window=3 &&
	KUBE=kw && export KUBE &&
	kube_expect 200 GET $NS/sandboxtemplates &&
	json_get body metadata.resourceVersion >rvw &&
	for t in a b c d e; do
		kube_apply $NS/sandboxtemplates "$(template_json $t)" || return 1
	done &&
	kube_curl "$NS/sandboxtemplates?watch=1&resourceVersion=$(cat rvw)&timeoutSeconds=5" \
		-N >ww.out &&
	grep "\"code\":410" ww.out &&
	kube_expect 200 GET /fake/state &&
	test "$(json_get body floorResourceVersion)" -gt "$(cat rvw)"
'

test_expect_success 'every fake exits cleanly (no sanitizer report)' '
	kube_stop_all_ &&
	for f in kube k5 kf kh kt kp kw; do
		test -f $f.log || return 1
		! grep -E "Sanitizer|runtime error|fatal:" $f.log || return 1
	done
'

test_done
