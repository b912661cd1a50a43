#!/bin/sh
test_description='the kube backend fails closed on limits it cannot honour

A claim has no resources of its own: its limits are the
SandboxTemplate'"'"'s. Asked for --memory or --cpus, gosbx reads the
template (v1beta1: the warm pool'"'"'s) and refuses, before creating
anything, unless every container is limited to at most that; --pids
and --disk are refused outright; a forbidden template read refuses
too. Reattaching with limits checks the claim'"'"'s pod. The jobs and
sandbox MCP toolsets, which ask for memory, get the same answer as a
tool error.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-kube.sh

CLAIMS=/apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/default/sandboxclaims

no_kube_claims() {
	kube_curl "$CLAIMS" >claims.json &&
	test "$(kube_py claims.json "len(v[\"items\"])")" = 0
}

# the fake's global resourceVersion now
state_rv() {
	kube_curl /fake/state >state.json &&
	kube_py state.json 'v["resourceVersion"]'
}

# claims_added <rv>: how many claims were created since <rv> (a watch
# from <rv> replays the fake's history, then ends after a second)
claims_added() {
	kube_curl "$CLAIMS?watch=1&resourceVersion=$1&timeoutSeconds=1" \
		>events &&
	python3 -c '
import json, sys
n = 0
for line in open("events"):
    if line.strip():
        e = json.loads(line)
        if e["type"] == "ERROR":
            sys.exit("watch error: %r" % e)
        n += e["type"] == "ADDED"
print(n)'
}

# fails_err <command>: fails (not a usage error), stderr in err
fails_err() {
	"$@" 2>err
	_fe=$?
	cat err >&4
	test $_fe -ne 0 && test $_fe -lt 129 || {
		echo >&4 "fails_err: exit $_fe: $*"
		return 1
	}
}

# refused <command>: fails_err, and no claim was created meanwhile
refused() {
	_rv=$(state_rv) &&
	fails_err "$@" &&
	test "$(claims_added "$_rv")" = 0 &&
	no_kube_claims
}

# a template whose one container "runtime" has the given limits (JSON)
template() {
	cat <<EOF
---
apiVersion: extensions.agents.x-k8s.io/v1alpha1
kind: SandboxTemplate
metadata:
  name: $1
spec:
  podTemplate:
    spec:
      containers:
      - name: runtime
        image: gosbx-runtime:latest
        ports:
        - containerPort: 8888
        resources:
          requests:
            cpu: 250m
            memory: 128Mi
          limits: $2
EOF
}

test_expect_success 'setup: templates limited to 2Gi/2, 512Mi/1, none' '
	{
		template go-runtime-template "{memory: 2Gi, cpu: \"2\"}" &&
		template small "{memory: 512Mi, cpu: 500m}" &&
		template unlimited "{}" &&
		cat <<-\EOF
		---
		apiVersion: extensions.agents.x-k8s.io/v1alpha1
		kind: SandboxTemplate
		metadata:
		  name: two
		spec:
		  podTemplate:
		    spec:
		      containers:
		      - name: runtime
		        image: gosbx-runtime:latest
		        resources:
		          limits: {memory: 256Mi, cpu: "1"}
		      - name: sidecar
		        image: busybox
		        resources:
		          limits: {memory: 1Gi, cpu: "1"}
		EOF
	} >templates.yaml &&
	kube_start -- --load=templates.yaml
'
KUBECONFIG=$TRASH_DIRECTORY/kube.kubeconfig
GOSBX_BACKEND=kube
export KUBECONFIG GOSBX_BACKEND

test_expect_success 'open --memory below the 2Gi template: refused, nothing created' '
	refused gosbx open --memory=512M &&
	test_grep "error: template .go-runtime-template. in namespace .default. does not honour the limits asked: container .runtime. has memory limit 2Gi, above the 512Mi asked; use a template with resources.limits.memory at most 512Mi in every container (--template=<name>)" err
'

test_expect_success 'open --memory=512M against the 512Mi template works' '
	rv=$(state_rv) &&
	gosbx --template=small open --memory=512M -q >claim &&
	test "$(claims_added "$rv")" = 1 &&
	claim=$(cat claim) &&
	gosbx exec --claim="$claim" -- echo hi >out &&
	echo hi >expect &&
	test_cmp expect out &&
	gosbx close "$claim" &&
	rt_poll 10 no_kube_claims
'

test_expect_success 'a larger limit asked, or none, is fine: 4G, 0 (none)' '
	gosbx --template=small open --memory=4G -q >claim &&
	gosbx close "$(cat claim)" &&
	gosbx --template=unlimited open --memory=0 --cpus=0 -q >claim &&
	gosbx close "$(cat claim)" &&
	rt_poll 10 no_kube_claims
'

test_expect_success 'no limit in the template: refused' '
	refused gosbx --template=unlimited open --memory=1G &&
	test_grep "template .unlimited. .*: container .runtime. has no memory limit (1Gi asked)" err
'

test_expect_success 'every container counts: a 1Gi sidecar refuses 512M' '
	refused gosbx --template=two open --memory=512M &&
	test_grep "container .sidecar. has memory limit 1Gi, above the 512Mi asked" err &&
	gosbx --template=two open --memory=1G -q >claim &&
	gosbx close "$(cat claim)" &&
	rt_poll 10 no_kube_claims
'

test_expect_success '--cpus: refused above the asked, accepted within' '
	refused gosbx open --cpus=1 &&
	test_grep "container .runtime. has cpu limit 2, above the 1 asked; use a template with resources.limits.cpu at most 1 in every container" err &&
	refused gosbx --template=small open --cpus=0.25 &&
	test_grep "cpu limit 500m, above the 0.25 asked" err &&
	gosbx --template=small open --cpus=0.5 --memory=1G -q >claim &&
	gosbx close "$(cat claim)" &&
	rt_poll 10 no_kube_claims
'

test_expect_success 'exec (a throwaway sandbox) is refused the same way' '
	refused gosbx exec --memory=1G -- true &&
	test_grep "memory limit 2Gi, above the 1Gi asked" err
'

test_expect_success '--pids and --disk are refused on the kube backend' '
	refused gosbx --template=small open --pids=100 &&
	test_grep "error: --pids is not available on the kube backend" err &&
	refused gosbx --template=small open --disk=1G &&
	test_grep "error: --disk is not available on the kube backend" err &&
	gosbx --template=small open --pids=0 -q >claim &&
	gosbx close "$(cat claim)" &&
	rt_poll 10 no_kube_claims
'

test_expect_success 'a missing template is refused before the claim' '
	refused gosbx --template=nope open --memory=1G &&
	test_grep "cannot check the limits asked: no SandboxTemplate .nope. in namespace .default." err
'

# MCP toolsets that ask for memory: the jobs toolset (512 MiB per job)
# and the sandbox toolset'"'"'s config.memory (MiB)
MCP_SERVER="gosbx --backend=kube mcp --tools=jobs,sandbox --structured-content"
export MCP_SERVER
. "$TEST_DIRECTORY/lib-mcp-raw.sh"

test_expect_success PYTHON 'reattach with limits checks the claim'"'"'s pod' '
	gosbx open -q >claim &&
	CLAIM=$(cat claim) &&
	export CLAIM &&
	cat >reattach.py <<-\EOF &&
	import os
	claim = os.environ["CLAIM"]
	c = Client("--claim=" + claim, "--memory=512M")
	res, text = err(c.call("run_go_code", files={"main.go": "package main\n"},
	                       command="go run main.go"))
	assert text == ("could not open sandbox: claim \x27%s\x27 does not honour "
	    "the limits asked: its pod \x27%s\x27: container \x27runtime\x27 has memory "
	    "limit 2Gi, above the 512Mi asked; open a new sandbox from a "
	    "template with resources.limits.memory at most 512Mi in every "
	    "container (--template=<name>), or leave the limits out to "
	    "reattach" % (claim, claim)), text
	c.close()
	EOF
	MCP_SERVER="gosbx --backend=kube mcp" mcp_run "$(cat reattach.py)"
'

test_expect_success GO 'reattach within the limits runs' '
	CLAIM=$(cat claim) &&
	export CLAIM &&
	cat >reattach-ok.py <<-\EOF &&
	import os
	c = Client("--claim=" + os.environ["CLAIM"], "--memory=2G", "--cpus=2")
	main = "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"within\") }\n"
	res, text = ok(c.call("run_go_code", files={"go.mod": "module x\n\ngo 1.19\n", "main.go": main},
	                      command="go run main.go"))
	assert "within" in text, text
	c.close()
	EOF
	MCP_SERVER="gosbx --backend=kube mcp" mcp_run "$(cat reattach-ok.py)"
'

# (gosbx mcp without --persistent deletes the claim it used as it exits)
test_expect_success 'cleanup: no claim is left' '
	kube_req DELETE "$CLAIMS/$(cat claim)" &&
	rt_poll 10 no_kube_claims
'

test_expect_success 'setup: a fake-kube that forbids reading templates' '
	kube_start --name=kf -- --load=templates.yaml \
		--forbid=get:sandboxtemplates
'

test_expect_success 'a forbidden template read refuses and names the permission' '
	KUBECONFIG=$TRASH_DIRECTORY/kf.kubeconfig &&
	export KUBECONFIG &&
	KUBE=kf refused gosbx --template=small open --memory=1G &&
	test_grep "cannot check the limits asked against SandboxTemplate .small.: .*forbidden.*; the client needs .get. on sandboxtemplates.extensions.agents.x-k8s.io in namespace .default. (manifests/rbac.yaml)" err &&
	gosbx --template=small open -q >claim &&
	gosbx close "$(cat claim)" &&
	KUBE=kf rt_poll 10 no_kube_claims
'

test_expect_success 'setup: v0.5.6 (v1beta1 claims name a warm pool)' '
	sed "s|extensions.agents.x-k8s.io/v1alpha1|extensions.agents.x-k8s.io/v1beta1|" \
		templates.yaml >templates-beta.yaml &&
	kube_start --name=kb --release=v0.5.6 -- --load=templates-beta.yaml \
		--warm-pool=big-pool:go-runtime-template:0 \
		--warm-pool=small-pool:small:0
'

test_expect_success 'v1beta1: the warm pool'"'"'s template is checked' '
	KUBECONFIG=$TRASH_DIRECTORY/kb.kubeconfig &&
	export KUBECONFIG &&
	refused_kb() { KUBE=kb refused "$@"; } &&
	refused_kb gosbx open --memory=512M &&
	test_grep "error: template .go-runtime-template. (of warm pool .big-pool.) in namespace .default. does not honour the limits asked: container .runtime. has memory limit 2Gi, above the 512Mi asked; use a template with resources.limits.memory at most 512Mi in every container (--template=<name>, --warm-pool=<name>)" err &&
	refused_kb gosbx --warm-pool=no-pool open --memory=512M &&
	test_grep "no warm pool .no-pool. in namespace .default." err &&
	gosbx --warm-pool=small-pool open --memory=512M -q >claim &&
	gosbx close "$(cat claim)" &&
	gosbx --template=small open --memory=512M -q >claim &&
	gosbx close "$(cat claim)"
'

test_expect_success PYTHON 'jobs: a 2Gi template is a tool error that says why' '
	cat >jobs-big.py <<-\EOF &&
	c = Client()
	res, text = err(c.call("execute_python", code="print(6*7)"))
	assert "could not open sandbox" in text, text
	assert "container '"'"'runtime'"'"' has memory limit 2Gi, above the 512Mi asked" in text, text
	assert "--template=<name>" in text, text
	c.close()
	EOF
	rv=$(state_rv) &&
	mcp_run "$(cat jobs-big.py)" &&
	test "$(claims_added "$rv")" = 0
'

test_expect_success PYTHON 'jobs: the 512Mi template runs the job' '
	cat >jobs-small.py <<-\EOF &&
	c = Client("--template=small")
	res, text = ok(c.call("execute_python", code="print(6*7)"))
	assert res["structuredContent"]["stdout"] == "42\n", res
	assert res["structuredContent"]["exit_code"] == 0, res
	c.close()
	EOF
	mcp_run "$(cat jobs-small.py)" &&
	rt_poll 10 no_kube_claims
'

test_expect_success PYTHON 'sandbox toolset: config.memory is checked too' '
	cat >sbx.py <<-\EOF &&
	c = Client("--template=small")
	res, text = err(c.call("sandbox_start", sandbox="tight", namespace=NS,
	                       config={"memory": 256}))
	assert "container '"'"'runtime'"'"' has memory limit 512Mi, above the 256Mi asked" in text, text
	res, text = err(c.call("sandbox_start", sandbox="cpu", namespace=NS,
	                       config={"cpus": 0.25}))
	assert "cpu limit 500m, above the 0.25 asked" in text, text
	ok(c.call("sandbox_start", sandbox="roomy", namespace=NS,
	          config={"memory": 512, "cpus": 1}))
	res, text = ok(c.call("sandbox_run_command", sandbox="roomy",
	                      namespace=NS, command="echo", args=["in"]))
	assert res["structuredContent"]["stdout"] == "in\n", res
	ok(c.call("sandbox_stop", sandbox="roomy", namespace=NS))
	c.close()
	EOF
	rv=$(state_rv) &&
	mcp_run "$(cat sbx.py)" &&
	test "$(claims_added "$rv")" = 1 &&
	rt_poll 10 no_kube_claims
'

test_done
