# A TCP proxy for the tests that need one between gosbx and a server
# (t2003: one that holds WebSocket upgrades; t6209: an HTTP CONNECT
# proxy). Stdlib only; import with PYTHONPATH=$TEST_DIRECTORY.
#
#	import lib_proxy
#	def serve(c):            # c: the client's socket, in its thread
#	    head = lib_proxy.read_head(c)
#	    ...
#	    lib_proxy.splice(c, socket.create_connection(...))
#	lib_proxy.run(serve, "proxy.port")
#
# run() listens on 127.0.0.1 (a free port), writes its own pid to
# proxy.pid (that of python, not of a pyenv shim) and then the port to
# port_file, atomically: a test waits for port_file, then connects.
import os
import socket
import threading


def read_head(c):
    """The request's bytes up to and with its blank line (and what came
    with them), or None when the client closed first."""
    head = b""
    while b"\r\n\r\n" not in head:
        d = c.recv(65536)
        if not d:
            return None
        head += d
    return head


def pump(a, b):
    """Copy a to b until either end closes, then shut both down."""
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def splice(c, u):
    """Copy both ways between c and u until one side closes."""
    threading.Thread(target=pump, args=(u, c), daemon=True).start()
    pump(c, u)


def run(serve, port_file):
    """Accept forever, serve(c) each connection in a thread of its own."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    with open("proxy.pid", "w") as f:
        f.write("%d\n" % os.getpid())
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.rename(port_file + ".tmp", port_file)
    while True:
        c, _ = srv.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
