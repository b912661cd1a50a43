#include "compat.h"
#include "listen.h"
#include "usage.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/un.h>

void listen_info_release(struct listen_info *li)
{
	free(li->unix_path);
	li->unix_path = NULL;
}

static int listen_unix(const char *addr, const char *path, int backlog,
		       struct listen_info *out)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		return error("cannot listen on '%s': unix socket path too "
			     "long (at most %zu bytes)",
			     addr, sizeof(sun.sun_path) - 1);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (!lstat(path, &st) && S_ISSOCK(st.st_mode))
		unlink(path); /* a stale socket of an earlier run */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_errno("cannot listen on '%s': socket", addr);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(fd, backlog) < 0) {
		error_errno("cannot listen on '%s'", addr);
		close(fd);
		return -1;
	}
	memcpy(&out->ss, &sun, sizeof(sun));
	out->unix_path = xstrdup(path);
	return fd;
}

/* "fd:N": a socket handed down to us that already listens. */
static int listen_inherited(const char *addr, const char *num,
			    struct listen_info *out)
{
	socklen_t sl = sizeof(out->ss), l;
	int fd, type = 0, listening = 0;
	char *end;
	long v;

	errno = 0;
	v = strtol(num, &end, 10);
	if (!*num || *end || errno || v < 0 || v > INT_MAX)
		return error("bad address '%s' (want fd:<descriptor number>)",
			     addr);
	fd = (int)v;
	l = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0)
		return error_errno("cannot listen on '%s'", addr);
	if (type != SOCK_STREAM)
		return error("cannot listen on '%s': not a stream socket",
			     addr);
	l = sizeof(listening);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l) < 0 ||
	    !listening)
		return error("cannot listen on '%s': the socket is not "
			     "listening",
			     addr);
	if (getsockname(fd, (struct sockaddr *)&out->ss, &sl) < 0)
		return error_errno("cannot listen on '%s': getsockname", addr);
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return error_errno("cannot listen on '%s': fcntl", addr);
	return fd;
}

/*
 * Resolve "host:port", "[v6]:port" or ":port" (listen_address()) into
 * *res (freeaddrinfo() it): 0, or -1 with error() naming addr (a port
 * that is not a number from 0 to 65535, an unknown host).
 */
static int resolve(const char *addr, const char *default_host,
		   struct addrinfo **res)
{
	struct addrinfo hints = { 0 };
	struct strbuf host = STRBUF_INIT;
	const char *colon, *port;
	int rc;

	*res = NULL;
	colon = strrchr(addr, ':');
	if (!colon || !colon[1] ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return error("bad address '%s' (want host:port, :port or "
			     "unix:/path)",
			     addr);
	port = colon + 1;
	/* getaddrinfo() takes 99999 as 34463 (the low 16 bits) */
	if (strlen(port) > 5 || atoi(port) > 65535)
		return error("bad address '%s': port %s is above 65535", addr,
			     port);
	strbuf_add(&host, addr, colon - addr);
	if (host.len >= 2 && host.buf[0] == '[' &&
	    host.buf[host.len - 1] == ']') {
		strbuf_remove(&host, 0, 1);
		strbuf_setlen(&host, host.len - 1);
	}
	if (!host.len && default_host)
		strbuf_addstr(&host, default_host);
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	/* every interface: IPv6 with IPv4 mapped when the host has it */
	hints.ai_family = host.len ? AF_UNSPEC : AF_INET6;
	rc = getaddrinfo(host.len ? host.buf : NULL, port, &hints, res);
	if (rc && !host.len) {
		hints.ai_family = AF_INET;
		rc = getaddrinfo(NULL, port, &hints, res);
	}
	strbuf_release(&host);
	if (rc)
		return error("bad address '%s': %s", addr, gai_strerror(rc));
	return 0;
}

int listen_address_check(const char *addr, const char *default_host,
			 int *loopback)
{
	struct addrinfo *res, *ai;
	struct listen_info li = { 0 };

	*loopback = -1;
	if (starts_with(addr, "unix:")) {
		*loopback = 1;
		return 0;
	}
	if (starts_with(addr, "fd:"))
		return 0;
	if (resolve(addr, default_host, &res) < 0)
		return -1;
	*loopback = 1;
	for (ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_addrlen > sizeof(li.ss))
			continue;
		memcpy(&li.ss, ai->ai_addr, ai->ai_addrlen);
		if (!listen_is_loopback(&li))
			*loopback = 0;
	}
	freeaddrinfo(res);
	return 0;
}

int listen_address(const char *addr, const char *default_host, int backlog,
		   struct listen_info *out)
{
	struct addrinfo *res = NULL, *ai;
	const char *path;
	socklen_t sl = sizeof(out->ss);
	int fd = -1, one = 1;

	memset(out, 0, sizeof(*out));
	if (skip_prefix(addr, "unix:", &path))
		return listen_unix(addr, path, backlog, out);
	if (skip_prefix(addr, "fd:", &path))
		return listen_inherited(addr, path, out);
	if (resolve(addr, default_host, &res) < 0)
		return -1;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6) {
			int zero = 0;
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
				   sizeof(zero));
		}
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) &&
		    !listen(fd, backlog))
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return error_errno("cannot listen on '%s'", addr);
	if (getsockname(fd, (struct sockaddr *)&out->ss, &sl) < 0) {
		error_errno("cannot listen on '%s': getsockname", addr);
		close(fd);
		return -1;
	}
	return fd;
}

int listen_is_loopback(const struct listen_info *li)
{
	if (li->ss.ss_family == AF_UNIX)
		return 1;
	if (li->ss.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)&li->ss;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (li->ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)&li->ss;
		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	return 0;
}

void listen_describe(const struct listen_info *li, struct strbuf *out)
{
	char name[INET6_ADDRSTRLEN];

	if (li->ss.ss_family == AF_UNIX) {
		const struct sockaddr_un *sun = (const void *)&li->ss;

		if (li->unix_path)
			strbuf_addf(out, "unix:%s", li->unix_path);
		else
			strbuf_addf(out, "unix:%.*s",
				    (int)strnlen(sun->sun_path,
						 sizeof(sun->sun_path)),
				    sun->sun_path);
	} else if (li->ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)&li->ss;
		inet_ntop(AF_INET6, &in6->sin6_addr, name, sizeof(name));
		strbuf_addf(out, "[%s]:%u", name, ntohs(in6->sin6_port));
	} else {
		const struct sockaddr_in *in = (const void *)&li->ss;
		inet_ntop(AF_INET, &in->sin_addr, name, sizeof(name));
		strbuf_addf(out, "%s:%u", name, ntohs(in->sin_port));
	}
}

void listen_connect_address(const struct listen_info *li, struct strbuf *out)
{
	if (li->ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)&li->ss;

		if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr)) {
			strbuf_addf(out, "localhost:%u", ntohs(in6->sin6_port));
			return;
		}
	} else if (li->ss.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)&li->ss;

		if (in->sin_addr.s_addr == htonl(INADDR_ANY)) {
			strbuf_addf(out, "localhost:%u", ntohs(in->sin_port));
			return;
		}
	}
	listen_describe(li, out);
}
