# Slowloris against one of gosbx's HTTP servers (t7041):
#
#   python3 slowloris.py <host> <port> <honest request file> <n> [<head>]
#
# Opens <n> TCP connections that send nothing (or, given <head>, a file
# holding a whole request head that announces a body: each sends the
# head and then stalls its body), and one that sends a request head one
# byte a second; while all of them are held, sends the
# honest request (the bytes of the file, a whole HTTP/1.1 request with
# "Connection: close") on a new connection and expects an answer within
# 8 s (the server's head timeout is 10 s: it must be served while the
# idle connections still stand, not after they time out). Then it waits
# (at most 20 s) until the server has closed every idle connection and
# the slow one, and sends the honest request once more.
#
# Prints one "key value" line per fact: idle_open (connections made),
# honest_status, slow_closed_s (when the slow one was closed, seconds
# after its start), idle_closed (how many the server closed), and
# honest_after. Exits 1 when a step fails.
import resource, select, socket, sys, time

host, port, req_file, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
    int(sys.argv[4])
honest = open(req_file, "rb").read()
head = open(sys.argv[5], "rb").read() if len(sys.argv) > 5 else b""

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = n + 64
if soft < want:
    if hard != resource.RLIM_INFINITY and hard < want:
        print("skip the fd limit is %d, %d needed" % (hard, want))
        sys.exit(2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def ask(timeout):
    """the status of the honest request, or an error text"""
    s = socket.create_connection((host, port), timeout=timeout)
    s.settimeout(timeout)
    s.sendall(honest)
    data = b""
    try:
        while b"\r\n" not in data:
            d = s.recv(4096)
            if not d:
                break
            data += d
    except OSError as e:
        return "error %s" % e
    finally:
        s.close()
    line = data.split(b"\r\n", 1)[0].decode(errors="replace")
    return line.split(" ")[1] if line.startswith("HTTP/1.") else \
        "bad %r" % line


idle = []
for i in range(n):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect((host, port))
        if head:
            s.sendall(head)
    except OSError:
        s.close()
        continue
    s.setblocking(False)
    idle.append(s)
print("idle_open %d" % len(idle))

slow = socket.create_connection((host, port), timeout=5)
slow_start = time.monotonic()
slow.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
slow.setblocking(False)

status = ask(8)
print("honest_status %s" % status)


def closed(s):
    """the server closed it: end of file or a reset"""
    try:
        return s.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


deadline = time.monotonic() + 20
slow_closed = None
open_ = list(idle)
while time.monotonic() < deadline and (open_ or slow_closed is None):
    if slow_closed is None:
        if closed(slow):
            slow_closed = time.monotonic() - slow_start
        else:
            try:
                slow.send(b"x")  # one byte a second: never idle
            except OSError:
                slow_closed = time.monotonic() - slow_start
    p = select.poll()
    for s in open_:
        p.register(s, select.POLLIN)
    ready = {fd for fd, ev in p.poll(0)}
    open_ = [s for s in open_ if not (s.fileno() in ready and closed(s))]
    time.sleep(1)
print("slow_closed_s %s" % ("%.1f" % slow_closed if slow_closed else "no"))
print("idle_closed %d" % (len(idle) - len(open_)))
print("honest_after %s" % ask(8))
ok = (status in ("200", "202") and slow_closed is not None and
      not open_ and len(idle) == n)
sys.exit(0 if ok else 1)
