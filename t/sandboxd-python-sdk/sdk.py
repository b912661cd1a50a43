"""sandboxd-python-sdk: drives a sandbox through the public API of the
upstream Python SDK, k8s-agent-sandbox 1.0.8 (PyPI), for
t/t3113-sandboxd-python-sdk.sh. It opens one sandbox (a SandboxClaim on
the warm pool --pool, through the API server of $KUBECONFIG), runs the
steps given as arguments in order, prints one or more lines a step, and
terminates the sandbox (the claim is deleted).

    sdk.py --pool=<name> (--rest-port=<n> --grpc-port=<n> | --api-url=<url>)
           <step>...

The connection config chooses the runtime API, as the SDK does:
SandboxdInClusterConnectionConfig (mode in-cluster-pod-ip: Sandbox
status.podIPs on the two ports) speaks sandboxd, REST files and the gRPC
ProcessService; SandboxDirectConnectionConfig (--api-url, e.g. the
router) speaks the legacy python-runtime API. Steps, as
t/sandboxd-go-sdk has them:

    run <shell line>        exit <code> / stdout <repr> / stderr <repr>
    run-env <K=V> <line>    run with env={K: V}
    run-cwd <dir> <line>    run with cwd=<dir>
    run-timeout <s> <line>  run with command_timeout=<s>: also timed_out
    write <path> <file>     the local file's bytes to path: "written"
    read <path> <file>      path's bytes into the local file: "read <n>"
    cat <path>              content <repr>
    cat-unsafe <path>       cat with allow_unsafe_paths=True
    list <path>             one "entry <name> <type> <size> <mode>" a
                            child, sorted by name
    exists <path>           exists <True|False>
    delete <path>           deleted; delete-r <path>: recursively

A step that fails prints "error <ExceptionClass>[ <status>]: <message>";
the next step still runs and the exit status is 1.
"""

import argparse
import sys

from k8s_agent_sandbox import SandboxClient
from k8s_agent_sandbox.models import (
    SandboxDirectConnectionConfig,
    SandboxdInClusterConnectionConfig,
)

ARITY = {
    "run": 1, "run-env": 2, "run-cwd": 2, "run-timeout": 2, "write": 2,
    "read": 2, "cat": 1, "cat-unsafe": 1, "list": 1, "exists": 1,
    "delete": 1, "delete-r": 1,
}


def show_result(r, timeout=False):
    print("exit %d" % r.exit_code)
    print("stdout %r" % r.stdout)
    print("stderr %r" % r.stderr)
    if timeout:
        print("timed_out %s" % r.timed_out)


def step(sb, name, a):
    if name == "run":
        show_result(sb.commands.run(a[0]))
    elif name == "run-env":
        k, v = a[0].split("=", 1)
        show_result(sb.commands.run(a[1], env={k: v}))
    elif name == "run-cwd":
        show_result(sb.commands.run(a[1], cwd=a[0]))
    elif name == "run-timeout":
        show_result(sb.commands.run(a[1], command_timeout=float(a[0])), True)
    elif name == "write":
        with open(a[1], "rb") as f:
            sb.files.write(a[0], f.read())
        print("written")
    elif name == "read":
        data = sb.files.read(a[0])
        with open(a[1], "wb") as f:
            f.write(data)
        print("read %d" % len(data))
    elif name in ("cat", "cat-unsafe"):
        print("content %r" % sb.files.read(
            a[0], allow_unsafe_paths=name == "cat-unsafe"))
    elif name == "list":
        for e in sorted(sb.files.list(a[0]), key=lambda e: e.name):
            size = "-" if e.type == "directory" else e.size
            print("entry %s %s %s %s" % (e.name, e.type, size, e.mode or ""))
    elif name == "exists":
        print("exists %s" % sb.files.exists(a[0]))
    elif name in ("delete", "delete-r"):
        sb.files.delete(a[0], recursive=name == "delete-r")
        print("deleted")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pool", required=True)
    p.add_argument("--rest-port", type=int)
    p.add_argument("--grpc-port", type=int)
    p.add_argument("--api-url")
    p.add_argument("steps", nargs="*")
    o = p.parse_args()
    if o.api_url:
        cfg = SandboxDirectConnectionConfig(api_url=o.api_url)
    else:
        cfg = SandboxdInClusterConnectionConfig(
            mode="in-cluster-pod-ip", rest_port=o.rest_port,
            grpc_port=o.grpc_port)
    client = SandboxClient(connection_config=cfg)
    sb = client.create_sandbox(o.pool, "default", sandbox_ready_timeout=60)
    failed = False
    args = o.steps
    try:
        while args:
            name = args[0]
            if name not in ARITY or len(args) < ARITY[name] + 1:
                sys.exit("sdk.py: bad step %r" % name)
            try:
                step(sb, name, args[1:ARITY[name] + 1])
            except Exception as e:  # the SDK's errors, shown to the test
                failed = True
                status = getattr(e, "status_code", None)
                print("error %s%s: %s" % (
                    type(e).__name__,
                    " %d" % status if status is not None else "", e))
            sys.stdout.flush()
            args = args[ARITY[name] + 1:]
    finally:
        sb.terminate()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
