#ifndef LISTEN_H
#define LISTEN_H

#include "compat.h"
#include "strbuf.h"

#include <sys/socket.h>

/*
 * Listening sockets for gosbx-runtime (--addr) and gosbx mcp --http.
 *
 * addr is "host:port", "[v6 address]:port", ":port", "unix:/path" or
 * "fd:N". "fd:N" takes descriptor N, a stream socket that already
 * listens (bound and listening by whoever started us, e.g. the local
 * backend of gosbx, which keeps the socket's path out of the sandbox's
 * reach); it is only checked and made close-on-exec, its path is never
 * unlinked, and backlog is ignored.
 * A missing host means default_host; default_host NULL means every
 * interface (IPv6 and IPv4 where the host has both: the runtime's
 * ":8888", as the upstream Go server listens). Port 0 picks a free
 * port. A stale socket file at a unix path is replaced (only if it is
 * a socket).
 *
 * On success returns the listening socket (close-on-exec) and fills
 * out: the bound address (ss) and, for a unix socket, its path (owned,
 * for the caller to unlink and free with listen_info_release()). On
 * failure returns -1 with error() naming addr and the cause.
 */
struct listen_info {
	struct sockaddr_storage ss;
	char *unix_path;
};

int listen_address(const char *addr, const char *default_host, int backlog,
		   struct listen_info *out);
void listen_info_release(struct listen_info *li);

/*
 * Check addr as listen_address() takes it, without listening: the
 * syntax, a port from 0 to 65535, a host that resolves. *loopback is 1
 * when every address it stands for is loopback (or a unix socket), 0
 * when one is not, -1 when unknown ("fd:N"). Returns 0, or -1 with
 * error() naming addr. For options checked before anything starts
 * (gosbx mcp --http).
 */
int listen_address_check(const char *addr, const char *default_host,
			 int *loopback);

/* True for 127.0.0.0/8, ::1 and unix sockets. */
int listen_is_loopback(const struct listen_info *li);

/*
 * Append a printable form of the bound address: "127.0.0.1:5555",
 * "[::1]:40123", "unix:/path".
 */
void listen_describe(const struct listen_info *li, struct strbuf *out);

/*
 * Append the address a client on this machine dials to reach li: as
 * listen_describe(), but a wildcard address (0.0.0.0, ::) is
 * "localhost", as in the SANDBOXD_*_ADDR values of KEP-539.2
 * ("Endpoint discovery": localhost:9090).
 */
void listen_connect_address(const struct listen_info *li, struct strbuf *out);

#endif /* LISTEN_H */
