#!/usr/bin/env python3
# contrib/cluster/pods.py --dir=<state dir> --node=<node> --release=<v>
#	--runtime=<gosbx-runtime> [--router-go=<sandbox-router>]
#	[--router-py=<dir of sandbox_router.py>] [--sandboxd=<sandboxd>]
#
# What a kubelet's container runtime would do for kwok's node, started by
# contrib/cluster/up.sh inside the cluster's network namespace: kwok makes
# pods Running with an IP of the pod CIDR (local to that namespace: up.sh
# routes the whole CIDR to lo), and this runs a real process at that IP
# for each pod it knows how to run:
#
#   - a container whose image names gosbx-runtime: gosbx-runtime, its
#     environment the container's literal env values;
#   - with --sandboxd, a container whose image names sandboxd
#     (agent-sandbox's KEP-539.2 runtime, as in the module's
#     examples/sandboxd-sandbox): that binary with the container's
#     args, listening on the pod IP (--listen-host), its --root-dir
#     (default /workspace) under the pod's directory;
#   - a pod labelled app=sandbox-router (the label of both releases'
#     router manifests): the router of --release, the Go router
#     (--router-go, agent-sandbox v0.5+) with the container's args, or
#     the Python router (--router-py, v0.4.x) under uvicorn, as the
#     image's CMD has it; the Go router's informer cache uses a token of
#     the pod's ServiceAccount (TokenRequest), as in a pod.
#
# A container address ":<port>" (an env value or an argument) becomes
# "<pod IP>:<port>", which a pod's own network namespace gives; the
# runtime's SANDBOX_WORKDIR moves under <dir>/pods/<ns>_<name>/. For each
# such pod it creates a kwok PortForward (owned by the pod, so the
# garbage collector removes it with the pod) forwarding every container
# port to the pod IP: the API server's pods/portforward reaches the real
# process through kwok, as through a kubelet.
#
# Cluster DNS for the Python router: <dir>/hosts maps
# <service>.<ns>.svc.cluster.local and <service>.<ns>.svc to the ready
# addresses of the Service's EndpointSlices, and the router's
# sitecustomize (<dir>/dns/) answers those names from it.
#
# Its log (stdout) says what it starts and stops; each process's output
# goes to <dir>/pods/<ns>_<name>/<name>.log. Runs until SIGTERM, then
# stops every process it started.
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

args = {}
for a in sys.argv[1:]:
	k, _, v = a.partition("=")
	args[k.lstrip("-")] = v
DIR = args["dir"]
NODE = args["node"]
RELEASE = args["release"]
URL = open(os.path.join(DIR, "url")).read().strip()
PKI = os.path.join(DIR, "pki")

ctx = ssl.create_default_context(cafile=os.path.join(PKI, "ca.crt"))
ctx.load_cert_chain(os.path.join(PKI, "admin.crt"), os.path.join(PKI, "admin.key"))

lock = threading.Lock()
procs = {}  # pod uid -> (Popen, "ns/name")
stopping = False


def log(*a):
	print(time.strftime("%H:%M:%S"), *a, flush=True)


def api(method, path, body=None, timeout=30):
	data = json.dumps(body).encode() if body is not None else None
	req = urllib.request.Request(URL + path, data=data, method=method)
	req.add_header("Accept", "application/json")
	if data is not None:
		req.add_header("Content-Type", "application/json")
	return urllib.request.urlopen(req, context=ctx, timeout=timeout)


def watch(path, on_event):
	"""list then watch path (a collection), relisting on 410 or a broken
	stream; on_event(type, object) for each item and event"""
	sep = "&" if "?" in path else "?"
	while not stopping:
		try:
			with api("GET", path) as r:
				lst = json.load(r)
			on_event("SYNC", lst["items"])
			rv = lst["metadata"]["resourceVersion"]
			while not stopping:
				q = sep + "watch=1&allowWatchBookmarks=true&resourceVersion=" + rv
				with api("GET", path + q, timeout=330) as r:
					for line in r:
						ev = json.loads(line)
						if ev["type"] == "ERROR":
							raise RuntimeError(ev["object"].get("message"))
						rv = ev["object"]["metadata"]["resourceVersion"]
						if ev["type"] != "BOOKMARK":
							on_event(ev["type"], ev["object"])
		except Exception as e:  # relist (410 Gone, a restart, EOF)
			if not stopping:
				log("watch", path.split("?")[0], "ended:", e, "- relisting")
				time.sleep(0.5)


def local_addr(v, ip):
	return ip + v if v.startswith(":") and v[1:].isdigit() else v


def sa_kubeconfig(pod, pdir):
	ns = pod["metadata"]["namespace"]
	sa = pod["spec"].get("serviceAccountName", "default")
	with api("POST", "/api/v1/namespaces/%s/serviceaccounts/%s/token" % (ns, sa),
		 {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
		  "spec": {"expirationSeconds": 86400}}) as r:
		token = json.load(r)["status"]["token"]
	path = os.path.join(pdir, "kubeconfig")
	cfg = {"apiVersion": "v1", "kind": "Config",
	       "clusters": [{"name": "c", "cluster": {"server": URL,
		"certificate-authority": os.path.join(PKI, "ca.crt")}}],
	       "users": [{"name": "u", "user": {"token": token}}],
	       "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": ns}}],
	       "current-context": "c"}
	with open(path, "w", opener=lambda p, f: os.open(p, f, 0o600)) as f:
		json.dump(cfg, f)
	return path


def command_for(pod, pdir):
	"""(argv, env, cwd) of the pod's process, or None"""
	ip = pod["status"]["podIP"]
	c = pod["spec"]["containers"][0]
	env = {"PATH": os.environ["PATH"], "HOME": pdir}
	for e in c.get("env", []):
		if "value" in e:
			env[e["name"]] = local_addr(e["value"], ip)
	labels = pod["metadata"].get("labels", {})
	if labels.get("app") == "sandbox-router":
		if args.get("router-go"):
			argv = [args["router-go"]] + [
				a.split("=", 1)[0] + "=" + local_addr(a.split("=", 1)[1], ip)
				if "=" in a else a for a in c.get("args", [])]
			env["KUBECONFIG"] = sa_kubeconfig(pod, pdir)
			argv.append("--kubeconfig=" + env["KUBECONFIG"])
			return argv, env, pdir
		env["PYTHONPATH"] = os.path.join(DIR, "dns")
		env["GOSBX_CLUSTER_HOSTS"] = os.path.join(DIR, "hosts")
		env["PYTHONDONTWRITEBYTECODE"] = "1"
		env["PYTHONUNBUFFERED"] = "1"
		return (["/usr/bin/python3", "-m", "uvicorn", "sandbox_router:app",
			 "--host", ip, "--port", "8080", "--loop", "asyncio"],
			env, args["router-py"])
	if args.get("sandboxd") and "sandboxd" in c.get("image", ""):
		argv = [args["sandboxd"]] + [a for a in c.get("args", [])
					     if not a.startswith(("--listen-host=", "--root-dir="))]
		root = "/workspace"
		for a in c.get("args", []):
			if a.startswith("--root-dir="):
				root = a.split("=", 1)[1]
		root = os.path.join(pdir, root.lstrip("/"))
		os.makedirs(root, exist_ok=True)
		argv += ["--listen-host=" + ip, "--root-dir=" + root]
		return argv, env, root
	if "gosbx-runtime" in c.get("image", ""):
		env.setdefault("SANDBOX_ADDR", ":8888")
		env["SANDBOX_ADDR"] = local_addr(env["SANDBOX_ADDR"], ip)
		wd = env.get("SANDBOX_WORKDIR", c.get("workingDir", "/app"))
		env["SANDBOX_WORKDIR"] = os.path.join(pdir, wd.lstrip("/"))
		os.makedirs(env["SANDBOX_WORKDIR"], exist_ok=True)
		return [args["runtime"]], env, env["SANDBOX_WORKDIR"]
	return None


def start(pod):
	m = pod["metadata"]
	key = "%s/%s" % (m["namespace"], m["name"])
	pdir = os.path.join(DIR, "pods", "%s_%s" % (m["namespace"], m["name"]))
	os.makedirs(pdir, exist_ok=True)
	cmd = command_for(pod, pdir)
	if cmd is None:
		return
	ip = pod["status"]["podIP"]
	ports = sorted({p["containerPort"] for c in pod["spec"]["containers"]
			for p in c.get("ports", [])})
	pf = {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "PortForward",
	      "metadata": {"name": m["name"], "namespace": m["namespace"],
			   "ownerReferences": [{"apiVersion": "v1", "kind": "Pod",
						"name": m["name"], "uid": m["uid"]}]},
	      "spec": {"forwards": [{"ports": [p], "target": {"port": p, "address": ip}}
				    for p in ports]}}
	try:
		api("POST", "/apis/kwok.x-k8s.io/v1alpha1/namespaces/%s/portforwards"
		    % m["namespace"], pf).close()
	except urllib.error.HTTPError as e:
		if e.code != 409:
			raise
	out = open(os.path.join(pdir, m["name"] + ".log"), "ab")
	p = subprocess.Popen(cmd[0], env=cmd[1], cwd=cmd[2], stdin=subprocess.DEVNULL,
			     stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
	out.close()
	procs[m["uid"]] = (p, key)
	log("started", key, "at", ip, "pid", p.pid, ":", " ".join(cmd[0]))


def stop(uid):
	p, key = procs.pop(uid)
	try:
		os.killpg(p.pid, signal.SIGTERM)
		p.wait(timeout=10)
	except (ProcessLookupError, subprocess.TimeoutExpired):
		try:
			os.killpg(p.pid, signal.SIGKILL)
		except ProcessLookupError:
			pass
		p.wait()
	log("stopped", key)


def on_pod(typ, obj):
	with lock:
		pods = obj if typ == "SYNC" else [obj]
		if typ == "SYNC":
			for uid in set(procs) - {p["metadata"]["uid"] for p in pods}:
				stop(uid)
		for pod in pods:
			uid = pod["metadata"]["uid"]
			gone = typ == "DELETED" or pod["metadata"].get("deletionTimestamp")
			if gone:
				if uid in procs:
					stop(uid)
			elif uid not in procs and pod.get("status", {}).get("podIP"):
				try:
					start(pod)
				except Exception as e:
					log("cannot start", pod["metadata"]["name"], ":", e)


slices = {}  # "ns/slice" -> (service, ns, [addresses])


def on_slice(typ, obj):
	with lock:
		objs = obj if typ == "SYNC" else [obj]
		if typ == "SYNC":
			slices.clear()
		for s in objs:
			m = s["metadata"]
			key = m["namespace"] + "/" + m["name"]
			svc = m.get("labels", {}).get("kubernetes.io/service-name")
			if typ == "DELETED" or not svc:
				slices.pop(key, None)
				continue
			addrs = [a for e in s.get("endpoints") or []
				 if (e.get("conditions") or {}).get("ready", True)
				 for a in e.get("addresses", [])]
			slices[key] = (svc, m["namespace"], addrs)
		tmp = os.path.join(DIR, "hosts.tmp")
		with open(tmp, "w") as f:
			for svc, ns, addrs in slices.values():
				for a in addrs:
					f.write("%s %s.%s.svc.cluster.local %s.%s.svc\n"
						% (a, svc, ns, svc, ns))
		os.rename(tmp, os.path.join(DIR, "hosts"))


SITECUSTOMIZE = '''# cluster DNS for contrib/cluster/pods.py's Python router: names under
# .svc resolve from the hosts file pods.py keeps
import os, socket
_orig = socket.getaddrinfo
def _getaddrinfo(host, port, *a, **kw):
	h = host.decode() if isinstance(host, bytes) else host
	if h and (h.endswith(".svc") or h.endswith(".svc.cluster.local")):
		for line in open(os.environ["GOSBX_CLUSTER_HOSTS"]):
			f = line.split()
			if h in f[1:]:
				return _orig(f[0], port, *a, **kw)
		raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
	return _orig(host, port, *a, **kw)
socket.getaddrinfo = _getaddrinfo
'''


def main():
	global stopping
	os.makedirs(os.path.join(DIR, "dns"), exist_ok=True)
	with open(os.path.join(DIR, "dns", "sitecustomize.py"), "w") as f:
		f.write(SITECUSTOMIZE)
	open(os.path.join(DIR, "hosts"), "a").close()
	ev = threading.Event()
	signal.signal(signal.SIGTERM, lambda *a: ev.set())
	signal.signal(signal.SIGINT, lambda *a: ev.set())
	sel = urllib.parse.quote("spec.nodeName=" + NODE)
	for path, fn in (("/api/v1/pods?fieldSelector=" + sel, on_pod),
			 ("/apis/discovery.k8s.io/v1/endpointslices", on_slice)):
		threading.Thread(target=watch, args=(path, fn), daemon=True).start()
	log("pods.py: node", NODE, "agent-sandbox", RELEASE)
	ev.wait()
	stopping = True
	with lock:
		for uid in list(procs):
			stop(uid)


main()
