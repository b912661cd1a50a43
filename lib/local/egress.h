#ifndef EGRESS_H
#define EGRESS_H

#include "compat.h"
#include "local/netd.h"
#include "strbuf.h"

#include <sys/socket.h>

/*
 * The allow-list egress proxy of a local sandbox
 * (Documentation/protocol/network.md "allow-list"): which hosts a sandbox may
 * reach, and the handlers netd (netd.h) runs on a connection from the sandbox,
 * one thread per connection. The code in the sandbox is hostile: every name is
 * checked against the list before it is resolved (a name not on the list is
 * never resolved, so DNS cannot carry data out), resolution happens on
 * the host, and the address that is then connected to is checked again
 * (an allowed name that resolves to loopback, a private or a metadata
 * address is refused unless that address is on the list itself:
 * DNS-rebinding safe, as the address checked is the one connected to,
 * never re-resolved).
 *
 * Every decision is logged with log.h at LOG_INFO: msg "net allow" or
 * "net deny" with keys via (connect, http, socks5, dns), host, port,
 * addr (the address connected to, or the one refused), why (denials
 * and failures: resolution and connection failures are "net deny"
 * lines too); and when a relay ends, "net close" with bytes_up (sandbox
 * to origin, after the request head) and bytes_down. Request bodies are
 * never logged.
 *
 * The handlers never exit, keep no mutable static state (thread-safe)
 * and allocate nothing in proportion to what a peer sends beyond fixed
 * caps (EGRESS_RELAY_BUF per direction, NETD_HEAD_MAX for a head).
 */

/* bytes buffered per direction of a relay */
#define EGRESS_RELAY_BUF (64 * 1024)
/* a relay in which nothing moved for this long ends, ms */
#define EGRESS_IDLE_TIMEOUT_MS (10 * 60 * 1000)
/* one connect(2) to one resolved address, ms */
#define EGRESS_CONNECT_TIMEOUT_MS 10000
/* resolved addresses tried per connection, at most */
#define EGRESS_CONNECT_TRIES 8
/* the TTL of the address records of egress_dns_reply(), seconds */
#define EGRESS_DNS_TTL 60

/* One entry of the list, normalised (egress_policy_add()). */
struct egress_rule {
	/*
	 * Lower case, no trailing dot: a name, the suffix of a wildcard
	 * (without its "*."), or the literal as inet_ntop(3) prints it
	 * (IPv6 without brackets).
	 */
	char *host;
	/* "*.<host>": any name that ends in ".<host>", not <host> itself */
	int wildcard;
	/* 0 (a name), AF_INET or AF_INET6 (a literal, in addr) */
	int family;
	/*
	 * A literal as an IPv6 address, IPv4 ones in their IPv4-mapped
	 * form (::ffff:a.b.c.d), so that 127.0.0.1 and ::ffff:127.0.0.1
	 * are one address
	 */
	unsigned char addr[16];
	/* 1..65535, or 0: the entry named no port (80 and 443) */
	int port;
};

struct egress_policy {
	struct egress_rule *rules;
	size_t nr, alloc;
};

void egress_policy_init(struct egress_policy *p);
/* Free the entries; p is empty again. */
void egress_policy_release(struct egress_policy *p);

/*
 * Add the entries of list, comma-separated, in Deno's --allow-net
 * convention: host, host:port, *.example.org (subdomains at any depth,
 * not example.org itself), an IPv4 literal (dotted quad, inet_pton(3)),
 * an IPv6 literal bare or as [v6] or [v6]:port. An entry without a port
 * allows 80 and 443. Hosts are case-insensitive; a trailing dot is
 * ignored; spaces around an entry are ignored. Names: letters, digits,
 * '-', '_' and '.', labels of 1..63 bytes, 253 bytes at most, and a
 * last label that is not a number (so "127.1" or "0x7f.1", which
 * resolvers would read as addresses, are refused).
 *
 * Returns 0, or -1 with error() naming the first bad entry ("bad
 * --allow-net entry 'x': ...") and nothing of list added: empty
 * entries, ports outside 1..65535, '*' alone, wildcards anywhere but a
 * leading "*.", URLs ("://"), paths, userinfo ('@'), IPv6 zone ids.
 * Entries already on the list are not added twice.
 */
int egress_policy_add(struct egress_policy *p, const char *list);

/* 1 if the list has no entry (every host is denied), else 0. */
int egress_policy_empty(const struct egress_policy *p);

/*
 * Append the entries, normalised, comma-separated, to out (for logs and
 * tool descriptions): "example.org", "*.example.org:8443",
 * "127.0.0.1:8080", "[::1]:8080", "[::1]" (the caller owns out).
 */
void egress_policy_format(const struct egress_policy *p, struct strbuf *out);

/*
 * 1 if host:port is on the list, else 0 (a host that is not a valid
 * name or literal is never on it). host: a name (any case, trailing dot
 * allowed) or an IPv4 or IPv6 literal (bare or in brackets); a literal
 * matches only literal entries of the same address. port: 1..65535, or
 * 0 for "any port of the list" (the DNS question: is the name on the
 * list for some port).
 */
int egress_host_allowed(const struct egress_policy *p, const char *host,
			int port);

/*
 * 1 if sa is a special address, one a sandbox may not reach through an
 * allowed name, else 0. IPv4: 0/8 (unspecified), 10/8, 100.64/10
 * (CGNAT, with the metadata address 100.100.100.200), 127/8, 169.254/16
 * (link-local, with the metadata address 169.254.169.254), 172.16/12,
 * 192.0.0/24, 192.88.99/24 (6to4 relays), 192.168/16, 198.18/15,
 * 224/4 (multicast) and 240/4 (with the broadcast address): RFC 6890
 * and its updates. IPv6: ::/96 (unspecified, loopback and the
 * IPv4-compatible form), 64:ff9b:1::/48, 100::/64, 2001::/32 (Teredo),
 * 2001:2::/48, 2002::/16 (6to4), fc00::/7 (unique-local, with the
 * metadata address
 * fd00:ec2::254), fe80::/10 and fec0::/10, ff00::/8 (multicast); and
 * the IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96)
 * and NAT64 (64:ff9b::/96, RFC 6052) forms of a special IPv4 address.
 * Any other family is special (fails closed). The documentation
 * ranges (192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32,
 * 3fff::/20) are not: no host service lives there, and some networks
 * give real services such addresses (this project's CI reaches its
 * package registries at one).
 */
int egress_addr_special(const struct sockaddr *sa);

/*
 * 1 if a connection to sa (port: the port connected to, 1..65535, or 0
 * for any port of the list) may go ahead for a host that is allowed: sa
 * is not special, or that very address is on the list with that port
 * (--allow-net=127.0.0.1:8080 or [::1]:8080 allows exactly that). The
 * caller connects to sa itself, never to a name resolved again.
 */
int egress_addr_allowed(const struct egress_policy *p,
			const struct sockaddr *sa, int port);

/*
 * Serve one HTTP proxy request on fd, whose head netd already read (h:
 * netd_head_read(); h->rest holds the bytes read past the head, which
 * go to the origin first):
 *   - CONNECT host:port or [v6]:port (RFC 9110 9.3.6): "HTTP/1.1 200
 *     Connection established", then a relay both ways;
 *   - an absolute-form request "METHOD http://host[:port]/path HTTP/1.x"
 *     (RFC 9112 3.2.2): sent to the origin in origin-form with Host
 *     from the URI, the hop-by-hop fields (Connection and those it
 *     names, Keep-Alive, TE, Upgrade) and Proxy-* removed and
 *     "Connection: close" added; then a relay both ways until the
 *     origin closes (the response is not rewritten: an origin that got
 *     "close" closes after its response, RFC 9112 9.6);
 *   - anything else (origin-form, https:// or other schemes,
 *     userinfo): 400 with the reason.
 * A host not on the list: 403 "gosbx: <host>:<port> is not on the
 * sandbox's allow-list; pass --allow-net=<host>" (<host>:<port> when the
 * port is not 80 or 443); a name whose every address is special: 403
 * "gosbx: <host> resolves to <addr>, a private address; pass
 * --allow-net=<addr> to allow it" (again <addr>:<port> for other
 * ports); a name that does not resolve: 502 "gosbx: cannot resolve
 * <host>: <getaddrinfo error>"; no address connects: 502 "gosbx: cannot
 * connect to <host>:<port>: <errno text>". The message is both the
 * reason phrase and the body (netd_reply()). Does not close fd.
 */
void egress_serve_http(const struct egress_policy *p, int fd,
		       struct netd_head *h);

/*
 * Serve one SOCKS5 connection on fd (RFC 1928), of which netd has read
 * nothing: method 0x00 (no authentication) only, else 0xFF and the end;
 * the CONNECT command only; address types IPv4, domain name and IPv6.
 * The same decisions as egress_serve_http(), answered with reply codes:
 * 0x02 not allowed by the list (or a special address, a bad name, port
 * 0), 0x04 host
 * unreachable (no address, or a connection that timed out), 0x03
 * network unreachable, 0x05 refused, 0x07 command not supported, 0x08
 * address type not supported, 0x01 for other failures. The bound
 * address of a success is 0.0.0.0:0 (nothing of the host's is told).
 * Each step waits at most NETD_HEAD_TIMEOUT_MS for the client. Does not
 * close fd.
 */
void egress_serve_socks5(const struct egress_policy *p, int fd);

/*
 * Answer one DNS query datagram (RFC 1035 4.1) q of qlen bytes, which
 * the sandbox sent to its 127.0.0.1:53. One question of class IN:
 *   - a name not on the list (egress_host_allowed() with port 0):
 *     REFUSED (rcode 5), a "net deny" line with via=dns, nothing
 *     resolved;
 *   - an allowed name, QTYPE A or AAAA: resolved on the host
 *     (getaddrinfo(3)), answered with the addresses egress_addr_allowed()
 *     accepts for port 0 (TTL EGRESS_DNS_TTL), NOERROR with no answer
 *     when none is left (a "net deny" line names the address left out)
 *     or the name has none of that type, SERVFAIL when resolution
 *     failed otherwise;
 *   - an allowed name, another QTYPE: NOERROR with no answer.
 * A query with a bad header or question: FORMERR; an opcode other than
 * QUERY: NOTIMP; a class other than IN: REFUSED; anything shorter than
 * a header or that is a response: no answer. Compression pointers in
 * the question are followed only backwards (no loop).
 *
 * Writes the reply into out (outcap bytes: 512 for UDP) and returns its
 * length; answers that do not fit are left out and TC set. Returns 0
 * when nothing is to be sent.
 */
size_t egress_dns_reply(const struct egress_policy *p, const unsigned char *q,
			size_t qlen, unsigned char *out, size_t outcap);

#endif /* EGRESS_H */
