#ifndef NETD_H
#define NETD_H

#include "compat.h"
#include "strbuf.h"
#include "strvec.h"

/*
 * netd: the host side of a local sandbox's network
 * (Documentation/protocol/network.md).
 *
 * A sandbox has a network namespace of its own with only `lo`. When it
 * may reach a module proxy or allowed hosts, gosbx creates, from inside
 * that namespace, a TCP socket listening on 127.0.0.1:NETD_PORT (and a
 * UDP socket on 127.0.0.1:53 for DNS), and hands both to `gosbx netd`,
 * a process of its own that runs on the host, outside every namespace
 * of the sandbox, for as long as the sandbox lives. What connects to
 * that port reaches netd and nothing else:
 *
 *   - SOCKS5 (first byte 0x05, RFC 1928): egress.h
 *   - HTTP CONNECT host:port and absolute-form requests
 *     ("GET http://host/..."), RFC 9110 9.3.6 and RFC 9112 3.2.2:
 *     egress.h; both only to hosts of the allow-list
 *   - origin-form requests under NETD_GOPROXY_PATH: the GOPROXY
 *     protocol and the checksum database proxy (modproxy.h)
 *   - anything else: 404 or 400
 *
 * The sandbox's environment names it: HTTP_PROXY, HTTPS_PROXY,
 * ALL_PROXY (and lowercase forms) = http://127.0.0.1:NETD_PORT,
 * NO_PROXY=localhost,127.0.0.1,::1, GOPROXY=http://127.0.0.1:NETD_PORT
 * NETD_GOPROXY_PATH.
 *
 * Every decision is logged with lib/log.h (log_fd is the claim's
 * runtime.log, which `gosbx logs` shows, opened for appending): one line per
 * connection or module request, with msg "net allow", "net deny" or
 * "module", and keys host, port, addr, via (connect, http, socks5,
 * dns, goproxy), why (for a denial), bytes.
 */

/* the port netd listens on in the sandbox's namespace, on 127.0.0.1 */
#define NETD_PORT 3128
/* the GOPROXY path prefix: GOPROXY=http://127.0.0.1:3128/mod */
#define NETD_GOPROXY_PATH "/mod"
/* largest request head (request line and header fields), bytes */
#define NETD_HEAD_MAX 16384
/* netd's log lines (log_rate_limit()): per second, and a burst */
#define NETD_LOG_LINES_PER_S 50
#define NETD_LOG_BURST 500
/* how long a request head may take to arrive, ms */
#define NETD_HEAD_TIMEOUT_MS 30000

/*
 * One HTTP/1.x request head as the sandbox sent it (RFC 9112 2-5).
 * netd reads it (netd_head_read()) and passes it to a handler, which
 * answers on the same descriptor.
 */
struct netd_head {
	char *method; /* "CONNECT", "GET", ...: a token */
	char *target; /* the request-target, as sent */
	int minor;    /* HTTP/1.<minor>: 0 or 1 */
	/* the fields in order, names as sent; values trimmed */
	struct strvec names, values;
	/* bytes read after the head: the start of a body or a tunnel */
	struct strbuf rest;
};

void netd_head_init(struct netd_head *h);
void netd_head_release(struct netd_head *h);

/*
 * Read a request head from fd (blocking; each read waits at most what
 * is left of NETD_HEAD_TIMEOUT_MS). start/start_len: bytes already read
 * from fd that begin the head (may be 0). Fills h. Returns 0, or -1 with
 * why set ("malformed request line", "request head over 16384 bytes",
 * "timed out", "connection closed") and nothing answered: the caller
 * answers 400 (netd_reply()) or just closes.
 */
int netd_head_read(int fd, const char *start, size_t start_len,
		   struct netd_head *h, struct strbuf *why);

/* The value of the first field named name (any case), or NULL. */
const char *netd_head_get(const struct netd_head *h, const char *name);

/*
 * Answer with a complete HTTP/1.1 response and "Connection: close":
 * status code and reason phrase (the reason phrase carries the
 * message: curl, pip and Go show it for a refused CONNECT), a text/plain
 * body (NULL: none) with a final newline added. Returns 0, or -1 when
 * the write failed (the peer is gone; nothing to report).
 */
int netd_reply(int fd, int code, const char *reason, const char *body);

/*
 * Write all of buf to fd, waiting at most timeout_ms for the peer to
 * read each part (a peer that never reads fails the write instead of
 * holding the thread). Returns 0 or -1 with errno (ETIMEDOUT).
 */
int netd_write_all(int fd, const void *buf, size_t len, int timeout_ms);

#endif
