/*
 * The allow-list egress proxy (egress.h): the list, the address
 * checks, the dialer every handler shares, the relay, and the three
 * front ends (HTTP proxy requests, SOCKS5, DNS).
 *
 * Design note. One path decides for every front end: a request is
 * parsed into a struct target (a host that passed parse_host(): a name
 * of safe characters or an inet_pton(3) literal, and a port), then
 * dial() checks the list before anything is resolved, resolves a name
 * with getaddrinfo(3) on the host, checks each address
 * (egress_addr_allowed()) and connects to that same sockaddr, and logs
 * the decision. No text that did not pass parse_host() reaches
 * getaddrinfo(), and names that resolvers would read as numbers
 * ("127.1", "0x7f.1") do not pass it.
 */
#include "compat.h"
#include "local/egress.h"
#include "local/netd.h"
#include "log.h"
#include "strbuf.h"
#include "usage.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#define HOST_MAX 253
#define LABEL_MAX 63

/* A host of an entry or of a request, checked and normalised. */
struct host {
	/* lower case, no trailing dot; a literal as inet_ntop(3) has it */
	char name[HOST_MAX + 1];
	int family;		/* 0 (a name), AF_INET or AF_INET6 */
	unsigned char addr[16]; /* a literal, IPv4 in IPv4-mapped form */
};

/* What a request asks to reach. */
struct target {
	struct host h;
	int port;
};

/* the prefix of IPv4-mapped IPv6 addresses, ::ffff:0:0/96 */
static const unsigned char v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

/* 127.0.0.1 and ::ffff:127.0.0.1 are one key */
static void v4_key(const void *in4, unsigned char key[16])
{
	memcpy(key, v4_mapped, 12);
	memcpy(key + 12, in4, 4);
}

/* the address bytes of sa (AF_INET or AF_INET6), *len of them */
static const void *sa_addr(const struct sockaddr *sa, size_t *len)
{
	if (sa->sa_family == AF_INET) {
		*len = 4;
		return &((const struct sockaddr_in *)sa)->sin_addr;
	}
	*len = 16;
	return &((const struct sockaddr_in6 *)sa)->sin6_addr;
}

static int is_host_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

/* a last label that a resolver would take for a number (WHATWG URL) */
static int looks_numeric(const char *label, size_t len)
{
	size_t i = 0;

	if (len >= 2 && label[0] == '0' && (label[1] | 0x20) == 'x') {
		for (i = 2; i < len; i++)
			if (!isxdigit((unsigned char)label[i]))
				return 0;
		return 1;
	}
	for (; i < len; i++)
		if (!isdigit((unsigned char)label[i]))
			return 0;
	return 1;
}

static int parse_v6(const char *s, size_t len, struct host *h, const char **why)
{
	char buf[INET6_ADDRSTRLEN];
	struct in6_addr a;

	if (len >= sizeof(buf) || memchr(s, '%', len)) {
		*why = "not an IPv6 address (zone ids are not allowed)";
		return -1;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, &a) != 1) {
		*why = "not an IPv6 address";
		return -1;
	}
	h->family = AF_INET6;
	memcpy(h->addr, &a, 16);
	inet_ntop(AF_INET6, &a, h->name, sizeof(h->name));
	return 0;
}

/* check the labels of a name of len bytes (no trailing dot) */
static int check_labels(const char *s, size_t len, const char **why)
{
	size_t i, label = 0;

	for (i = 0; i < len; i++) {
		if (!is_host_char((unsigned char)s[i])) {
			*why = "a host name holds only letters, digits, "
			       "'-', '_' and '.'";
			return -1;
		}
		if (s[i] != '.') {
			if (++label > LABEL_MAX) {
				*why = "a label is longer than 63 bytes";
				return -1;
			}
			continue;
		}
		if (!label) {
			*why = "empty label";
			return -1;
		}
		label = 0;
	}
	if (!label) {
		*why = "empty label";
		return -1;
	}
	if (looks_numeric(s + len - label, label)) {
		*why = "not a valid IPv4 address (a dotted quad)";
		return -1;
	}
	return 0;
}

/*
 * Parse the host s (len bytes, not NUL-terminated): "[v6]", a bare
 * IPv6 literal, an IPv4 dotted quad, or a name. 0, or -1 with *why.
 */
static int parse_host(const char *s, size_t len, struct host *h,
		      const char **why)
{
	struct in_addr a4;
	size_t i;

	memset(h, 0, sizeof(*h));
	if (memchr(s, '\0', len)) {
		*why = "a NUL byte in a host";
		return -1;
	}
	if (len && s[0] == '[') {
		if (len < 2 || s[len - 1] != ']') {
			*why = "no ']' after an IPv6 address";
			return -1;
		}
		return parse_v6(s + 1, len - 2, h, why);
	}
	if (memchr(s, ':', len))
		return parse_v6(s, len, h, why);
	if (len > 1 && s[len - 1] == '.')
		len--;
	if (!len) {
		*why = "empty host";
		return -1;
	}
	if (len > HOST_MAX) {
		*why = "a host name is longer than 253 bytes";
		return -1;
	}
	for (i = 0; i < len; i++)
		h->name[i] = tolower((unsigned char)s[i]);
	h->name[len] = '\0';
	if (inet_pton(AF_INET, h->name, &a4) == 1) {
		h->family = AF_INET;
		v4_key(&a4, h->addr);
		return 0;
	}
	if (check_labels(h->name, len, why) < 0)
		return -1;
	/* what getaddrinfo() would take for an address: never a name */
	if (inet_aton(h->name, &a4)) {
		*why = "not a valid IPv4 address (a dotted quad)";
		return -1;
	}
	return 0;
}

/* a decimal port, 1..65535 */
static int parse_port(const char *s, size_t len, int *port)
{
	size_t i;
	int v = 0;

	if (!len || len > 5)
		return -1;
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*port = v;
	return 0;
}

/*
 * "host:port" or "[v6]:port" (s of len bytes); without a port,
 * default_port (0: a port is required). 0, or -1 with *why.
 */
static int parse_hostport(const char *s, size_t len, int default_port,
			  struct target *t, const char **why)
{
	const char *colon = NULL, *end = s + len;

	if (len && s[0] == '[') {
		const char *rb = memchr(s, ']', len);

		if (!rb) {
			*why = "no ']' after an IPv6 address";
			return -1;
		}
		if (rb + 1 < end && rb[1] != ':') {
			*why = "bytes after ']' that are not a port";
			return -1;
		}
		if (rb + 1 < end)
			colon = rb + 1;
	} else {
		colon = memrchr(s, ':', len);
		if (colon && memchr(s, ':', colon - s)) {
			*why = "an IPv6 address with a port goes in brackets";
			return -1;
		}
	}
	t->port = default_port;
	if (colon && parse_port(colon + 1, end - colon - 1, &t->port) < 0) {
		*why = "the port is not a number in 1..65535";
		return -1;
	}
	if (!t->port) {
		*why = "no port";
		return -1;
	}
	return parse_host(s, colon ? (size_t)(colon - s) : len, &t->h, why);
}

void egress_policy_init(struct egress_policy *p)
{
	memset(p, 0, sizeof(*p));
}

void egress_policy_release(struct egress_policy *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		free(p->rules[i].host);
	free(p->rules);
	egress_policy_init(p);
}

int egress_policy_empty(const struct egress_policy *p)
{
	return !p->nr;
}

/* parse one entry (s, len: trimmed, not empty) into r; 0 or -1, *why */
static int parse_entry(const char *s, size_t len, struct egress_rule *r,
		       const char **why)
{
	struct target t;
	size_t i;
	int wildcard = 0;

	for (i = 0; i + 2 < len; i++)
		if (!memcmp(s + i, "://", 3)) {
			*why = "a URL; give the host, as in 'example.org' or "
			       "'example.org:8080'";
			return -1;
		}
	if (memchr(s, '/', len) || memchr(s, '?', len) || memchr(s, '#', len)) {
		*why = "a path is not allowed; give the host only";
		return -1;
	}
	if (memchr(s, '@', len)) {
		*why = "userinfo ('user@') is not allowed";
		return -1;
	}
	if (len == 1 && *s == '*') {
		*why = "'*' alone would allow every host; name the hosts";
		return -1;
	}
	if (len > 2 && !memcmp(s, "*.", 2)) {
		wildcard = 1;
		s += 2;
		len -= 2;
	}
	if (memchr(s, '*', len)) {
		*why = "a wildcard is allowed only as a leading '*.'";
		return -1;
	}
	if (*s != '[' && memchr(s, ':', len) &&
	    memchr(s, ':', len) != memrchr(s, ':', len)) {
		/* two colons or more: a bare IPv6 literal, no port */
		t.port = -1;
		if (parse_host(s, len, &t.h, why) < 0)
			return -1;
	} else if (parse_hostport(s, len, -1, &t, why) < 0) {
		return -1;
	}
	if (wildcard && t.h.family) {
		*why = "a wildcard goes with a name, not an address";
		return -1;
	}
	r->host = xstrdup(t.h.name);
	r->wildcard = wildcard;
	r->family = t.h.family;
	memcpy(r->addr, t.h.addr, 16);
	r->port = t.port < 0 ? 0 : t.port;
	return 0;
}

static int same_rule(const struct egress_rule *a, const struct egress_rule *b)
{
	return a->wildcard == b->wildcard && a->port == b->port &&
	       a->family == b->family && !strcmp(a->host, b->host);
}

static void add_rule(struct egress_policy *p, struct egress_rule *r)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		if (same_rule(&p->rules[i], r)) {
			free(r->host);
			return;
		}
	ALLOC_GROW(p->rules, p->nr + 1, p->alloc);
	p->rules[p->nr++] = *r;
}

int egress_policy_add(struct egress_policy *p, const char *list)
{
	struct egress_policy more;
	const char *s = list;
	size_t i;

	egress_policy_init(&more);
	for (;;) {
		size_t len = strcspn(s, ",");
		const char *e = s + len, *b = s, *why = NULL;
		struct egress_rule r = { 0 };

		while (b < e && (*b == ' ' || *b == '\t'))
			b++;
		while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (b == e)
			why = "empty entry";
		if (why || parse_entry(b, e - b, &r, &why) < 0) {
			egress_policy_release(&more);
			return error("bad --allow-net entry '%.*s': %s",
				     (int)(e - b), b, why);
		}
		add_rule(&more, &r);
		if (!s[len])
			break;
		s += len + 1;
	}
	for (i = 0; i < more.nr; i++)
		add_rule(p, &more.rules[i]);
	free(more.rules);
	return 0;
}

/* host as an entry or a suggestion writes it: IPv6 in brackets */
static void add_hostport(struct strbuf *out, int family, const char *host,
			 int port)
{
	if (family == AF_INET6)
		strbuf_addf(out, "[%s]", host);
	else
		strbuf_addstr(out, host);
	if (port)
		strbuf_addf(out, ":%d", port);
}

void egress_policy_format(const struct egress_policy *p, struct strbuf *out)
{
	size_t i;

	for (i = 0; i < p->nr; i++) {
		const struct egress_rule *r = &p->rules[i];

		if (i)
			strbuf_addch(out, ',');
		if (r->wildcard)
			strbuf_addstr(out, "*.");
		add_hostport(out, r->family, r->host, r->port);
	}
}

/* port 0 asks "any port"; a rule's port 0 is 80 and 443 */
static int port_matches(int rule_port, int port)
{
	if (!port)
		return 1;
	if (!rule_port)
		return port == 80 || port == 443;
	return rule_port == port;
}

static int host_matches(const struct egress_rule *r, const struct host *h)
{
	size_t n, rn;

	if (h->family || r->family)
		return h->family && r->family && !memcmp(r->addr, h->addr, 16);
	if (!r->wildcard)
		return !strcmp(r->host, h->name);
	n = strlen(h->name);
	rn = strlen(r->host);
	return n > rn + 1 && h->name[n - rn - 1] == '.' &&
	       !strcmp(h->name + n - rn, r->host);
}

static int target_allowed(const struct egress_policy *p, const struct host *h,
			  int port)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		if (host_matches(&p->rules[i], h) &&
		    port_matches(p->rules[i].port, port))
			return 1;
	return 0;
}

int egress_host_allowed(const struct egress_policy *p, const char *host,
			int port)
{
	struct host h;
	const char *why;

	if (port < 0 || port > 65535 ||
	    parse_host(host, strlen(host), &h, &why) < 0)
		return 0;
	return target_allowed(p, &h, port);
}

/* the key of sa (v4_key() for IPv4); -1 for another family */
static int sa_key(const struct sockaddr *sa, unsigned char key[16])
{
	size_t len;

	if (sa->sa_family == AF_INET)
		v4_key(sa_addr(sa, &len), key);
	else if (sa->sa_family == AF_INET6)
		memcpy(key, sa_addr(sa, &len), 16);
	else
		return -1;
	return 0;
}

static int prefix_match(const unsigned char *a, const unsigned char *net,
			int bits)
{
	int whole = bits / 8, rest = bits % 8;

	if (memcmp(a, net, whole))
		return 0;
	return !rest || !((a[whole] ^ net[whole]) & (0xff00 >> rest));
}

/* RFC 6890 and the ranges of egress_addr_special() */
static int v4_special(const unsigned char *a)
{
	static const struct {
		unsigned char net[4];
		int bits;
	} nets[] = {
		{ { 0 }, 8 },	       { { 10 }, 8 },
		{ { 100, 64 }, 10 },   { { 127 }, 8 },
		{ { 169, 254 }, 16 },  { { 172, 16 }, 12 },
		{ { 192, 0, 0 }, 24 }, { { 192, 88, 99 }, 24 },
		{ { 192, 168 }, 16 },  { { 198, 18 }, 15 },
		{ { 224 }, 4 },	       { { 240 }, 4 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(nets); i++)
		if (prefix_match(a, nets[i].net, nets[i].bits))
			return 1;
	return 0;
}

static int v6_special(const unsigned char *a)
{
	static const struct {
		unsigned char net[16];
		int bits;
	} nets[] = {
		{ { 0 }, 96 },
		{ { 0, 0x64, 0xff, 0x9b, 0, 1 }, 48 },
		{ { 1, 0 }, 64 },
		{ { 0x20, 0x01, 0, 0 }, 32 },
		{ { 0x20, 0x01, 0, 0x02, 0, 0 }, 48 },
		{ { 0x20, 0x02 }, 16 },
		{ { 0xfc }, 7 },
		{ { 0xfe, 0x80 }, 10 },
		{ { 0xfe, 0xc0 }, 10 },
		{ { 0xff }, 8 },
	};
	/* forms that carry an IPv4 address in their last 32 bits */
	static const unsigned char translated[12] = { [8] = 0xff, [9] = 0xff };
	static const unsigned char nat64[12] = { 0, 0x64, 0xff, 0x9b };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(nets); i++)
		if (prefix_match(a, nets[i].net, nets[i].bits))
			return 1;
	if (!memcmp(a, v4_mapped, 12) || !memcmp(a, translated, 12) ||
	    !memcmp(a, nat64, 12))
		return v4_special(a + 12);
	return 0;
}

int egress_addr_special(const struct sockaddr *sa)
{
	size_t len;

	if (sa->sa_family == AF_INET)
		return v4_special(sa_addr(sa, &len));
	if (sa->sa_family == AF_INET6)
		return v6_special(sa_addr(sa, &len));
	return 1;
}

int egress_addr_allowed(const struct egress_policy *p,
			const struct sockaddr *sa, int port)
{
	unsigned char key[16];
	size_t i;

	if (sa_key(sa, key) < 0)
		return 0;
	if (!egress_addr_special(sa))
		return 1;
	for (i = 0; i < p->nr; i++)
		if (p->rules[i].family && !memcmp(p->rules[i].addr, key, 16) &&
		    port_matches(p->rules[i].port, port))
			return 1;
	return 0;
}

/* --- dialing ----------------------------------------------------------- */

enum dial_result {
	DIAL_OK,
	DIAL_NOT_LISTED, /* the host is not on the list */
	DIAL_PRIVATE,	 /* every address is special and not listed */
	DIAL_NO_NAME,	 /* getaddrinfo() failed */
	DIAL_FAILED,	 /* no connect() succeeded */
};

struct dial {
	enum dial_result result;
	int fd;	 /* DIAL_OK: connected, non-blocking; the caller closes */
	int err; /* DIAL_FAILED: errno of the last connect() */
	/* the address connected to (or the special one refused) */
	char addr[INET6_ADDRSTRLEN];
	int addr_family;
	struct strbuf msg; /* not DIAL_OK: the message for the client */
};

static const char *errtext(int err, char *buf, size_t len)
{
	return strerror_r(err, buf, len);
}

static void log_decision(const char *msg, const char *via,
			 const struct target *t, const char *addr,
			 const char *why)
{
	struct log_line l;

	if (!log_begin(&l, LOG_INFO, msg))
		return;
	log_str(&l, "via", via);
	if (t)
		log_str(&l, "host", t->h.name);
	if (t && t->port)
		log_int(&l, "port", t->port);
	if (addr && *addr)
		log_str(&l, "addr", addr);
	if (why)
		log_str(&l, "why", why);
	log_end(&l);
}

/* the --allow-net value that allows host:port */
static void add_suggestion(struct strbuf *out, int family, const char *host,
			   int port)
{
	add_hostport(out, family, host, port == 80 || port == 443 ? 0 : port);
}

/* connect to sa within timeout_ms; the descriptor, or -1 with *err */
static int connect_timeout(const struct sockaddr *sa, socklen_t salen,
			   int timeout_ms, int *err)
{
	uint64_t deadline = monotonic_ms() + timeout_ms;
	socklen_t elen = sizeof(*err);
	int fd = socket(sa->sa_family,
			SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (!connect(fd, sa, salen))
		return fd;
	if (errno != EINPROGRESS)
		goto fail;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		uint64_t now = monotonic_ms();
		int r;

		if (now >= deadline) {
			errno = ETIMEDOUT;
			goto fail;
		}
		r = poll(&pfd, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (r > 0)
			break;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, err, &elen) < 0)
		goto fail;
	if (!*err)
		return fd;
	close(fd);
	return -1;
fail:
	*err = errno;
	close(fd);
	return -1;
}

static void sa_text(const struct sockaddr *sa, char *buf, size_t len)
{
	size_t alen;

	if (!inet_ntop(sa->sa_family, sa_addr(sa, &alen), buf, len))
		xsnprintf(buf, len, "?");
}

/* the sockaddr of a literal target (IPv4-mapped ones as IPv4) */
static socklen_t literal_sa(const struct target *t, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (!memcmp(t->h.addr, v4_mapped, 12)) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, t->h.addr + 12, 4);
		in->sin_port = htons(t->port);
		return sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, t->h.addr, 16);
		in6->sin6_port = htons(t->port);
		return sizeof(*in6);
	}
}

static void set_port(struct sockaddr *sa, int port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

/* try the addresses of ai in order; DIAL_OK, DIAL_PRIVATE, DIAL_FAILED */
static enum dial_result dial_addrs(const struct egress_policy *p,
				   const struct target *t, struct addrinfo *ai,
				   struct dial *d)
{
	int tried = 0;

	*d->addr = '\0';
	for (; ai && tried < EGRESS_CONNECT_TRIES; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		set_port(ai->ai_addr, t->port);
		if (!egress_addr_allowed(p, ai->ai_addr, t->port)) {
			if (!tried && !*d->addr) {
				sa_text(ai->ai_addr, d->addr, sizeof(d->addr));
				d->addr_family = ai->ai_family;
			}
			continue;
		}
		tried++;
		sa_text(ai->ai_addr, d->addr, sizeof(d->addr));
		d->addr_family = ai->ai_family;
		d->fd = connect_timeout(ai->ai_addr, ai->ai_addrlen,
					EGRESS_CONNECT_TIMEOUT_MS, &d->err);
		if (d->fd >= 0)
			return DIAL_OK;
	}
	return tried ? DIAL_FAILED : DIAL_PRIVATE;
}

/* resolve t (a name, on the list) and connect; d->result */
static void dial_name(const struct egress_policy *p, const struct target *t,
		      struct dial *d)
{
	struct addrinfo hints = { 0 }, *res = NULL;
	int r;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	r = getaddrinfo(t->h.name, NULL, &hints, &res);
	if (r) {
		char buf[128];

		d->result = DIAL_NO_NAME;
		strbuf_addf(&d->msg, "gosbx: cannot resolve %s: %s", t->h.name,
			    r == EAI_SYSTEM ? errtext(errno, buf, sizeof(buf))
					    : gai_strerror(r));
		return;
	}
	d->result = dial_addrs(p, t, res, d);
	freeaddrinfo(res);
}

static void dial_literal(const struct egress_policy *p, const struct target *t,
			 struct dial *d)
{
	struct sockaddr_storage ss;
	struct addrinfo ai = { 0 };

	ai.ai_addrlen = literal_sa(t, &ss);
	ai.ai_family = ss.ss_family;
	ai.ai_addr = (struct sockaddr *)&ss;
	d->result = dial_addrs(p, t, &ai, d);
}

/*
 * Decide on t for a client of via, and connect: d->result, d->fd when
 * DIAL_OK, else d->msg. Logs the decision. d->msg is the caller's to
 * release.
 */
static void dial(const struct egress_policy *p, const struct target *t,
		 const char *via, struct dial *d)
{
	struct strbuf why = STRBUF_INIT;
	char buf[128];

	d->fd = -1;
	d->err = 0;
	d->addr_family = 0;
	*d->addr = '\0';
	strbuf_init(&d->msg, 0);
	if (!target_allowed(p, &t->h, t->port)) {
		d->result = DIAL_NOT_LISTED;
		strbuf_addstr(&d->msg, "gosbx: ");
		add_hostport(&d->msg, t->h.family, t->h.name, t->port);
		strbuf_addstr(&d->msg, " is not on the sandbox's allow-list; "
				       "pass --allow-net=");
		add_suggestion(&d->msg, t->h.family, t->h.name, t->port);
		log_decision("net deny", via, t, NULL, "not on the allow-list");
		return;
	}
	if (t->h.family)
		dial_literal(p, t, d);
	else
		dial_name(p, t, d);
	switch (d->result) {
	case DIAL_OK:
		log_decision("net allow", via, t, d->addr, NULL);
		break;
	case DIAL_PRIVATE:
		strbuf_addf(&d->msg,
			    "gosbx: %s resolves to %s, a private "
			    "address; pass --allow-net=",
			    t->h.name, d->addr);
		add_suggestion(&d->msg, d->addr_family, d->addr, t->port);
		strbuf_addstr(&d->msg, " to allow it");
		log_decision("net deny", via, t, d->addr,
			     "resolves to a private address");
		break;
	case DIAL_NO_NAME:
		log_decision("net deny", via, t, NULL, d->msg.buf + 7);
		break;
	default:
		strbuf_addstr(&d->msg, "gosbx: cannot connect to ");
		add_hostport(&d->msg, t->h.family, t->h.name, t->port);
		strbuf_addf(&d->msg, ": %s", errtext(d->err, buf, sizeof(buf)));
		strbuf_addf(&why, "connect: %s",
			    errtext(d->err, buf, sizeof(buf)));
		log_decision("net deny", via, t, d->addr, why.buf);
		break;
	}
	strbuf_release(&why);
}

/* --- relay ------------------------------------------------------------- */

/* one direction of a relay: bytes read from one side, not yet written */
struct flow {
	char *buf;
	size_t start, end;
	int eof;  /* nothing more to read: EOF, an error, or a dead writer */
	int done; /* eof, all written, and the writer's side shut down */
	uint64_t bytes; /* written */
};

/* what to poll for on from (reading) and to (writing) for f */
static void flow_events(const struct flow *f, short *from_ev, short *to_ev)
{
	if (!f->eof && f->end < EGRESS_RELAY_BUF)
		*from_ev |= POLLIN;
	if (f->end > f->start)
		*to_ev |= POLLOUT;
}

static void flow_step(struct flow *f, int from, int to, short from_rev,
		      short to_rev)
{
	ssize_t n;

	if (from_rev & (POLLIN | POLLHUP | POLLERR) && !f->eof &&
	    f->end < EGRESS_RELAY_BUF) {
		n = recv(from, f->buf + f->end, EGRESS_RELAY_BUF - f->end,
			 MSG_DONTWAIT);
		if (n > 0)
			f->end += n;
		else if (!n || (errno != EAGAIN && errno != EINTR))
			f->eof = 1;
		if (n > 0)
			to_rev |= POLLOUT; /* try at once */
	}
	if (to_rev & (POLLOUT | POLLHUP | POLLERR) && f->end > f->start) {
		n = send(to, f->buf + f->start, f->end - f->start,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			f->start += n;
			f->bytes += n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			/* the writer is gone: drop what it will never get */
			f->start = f->end;
			f->eof = 1;
		}
		if (f->start == f->end)
			f->start = f->end = 0;
	}
	if (f->eof && f->start == f->end && !f->done) {
		shutdown(to, SHUT_WR);
		f->done = 1;
	}
}

/*
 * Copy between client and origin both ways until both directions ended
 * (or, with until_origin, the origin's), an error on both, or nothing
 * moved for EGRESS_IDLE_TIMEOUT_MS. pre: bytes for the origin first.
 * *up, *down: bytes written to the origin and to the client.
 */
static void relay(int client, int origin, const char *pre, size_t pre_len,
		  int until_origin, uint64_t *up, uint64_t *down)
{
	struct flow u = { 0 }, dn = { 0 };

	u.buf = xmalloc(EGRESS_RELAY_BUF);
	dn.buf = xmalloc(EGRESS_RELAY_BUF);
	if (pre_len > EGRESS_RELAY_BUF) {
		if (netd_write_all(origin, pre, pre_len,
				   EGRESS_IDLE_TIMEOUT_MS))
			u.eof = dn.eof = 1;
		u.bytes = pre_len;
	} else if (pre_len) {
		memcpy(u.buf, pre, pre_len);
		u.end = pre_len;
	}
	while (!dn.done || (!until_origin && !u.done)) {
		struct pollfd pfd[2] = { { .fd = client }, { .fd = origin } };
		int r;

		flow_events(&u, &pfd[0].events, &pfd[1].events);
		flow_events(&dn, &pfd[1].events, &pfd[0].events);
		if (!pfd[0].events && !pfd[1].events)
			break;
		/* an fd with nothing to wait for must not wake us with HUP */
		if (!pfd[0].events)
			pfd[0].fd = -1;
		if (!pfd[1].events)
			pfd[1].fd = -1;
		r = poll(pfd, 2, EGRESS_IDLE_TIMEOUT_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		flow_step(&u, client, origin, pfd[0].revents, pfd[1].revents);
		flow_step(&dn, origin, client, pfd[1].revents, pfd[0].revents);
	}
	*up = u.bytes;
	*down = dn.bytes;
	free(u.buf);
	free(dn.buf);
}

static void relay_and_log(int client, int origin, const struct strbuf *pre,
			  int until_origin, const char *via,
			  const struct target *t)
{
	uint64_t up, down;
	struct log_line l;

	relay(client, origin, pre ? pre->buf : NULL, pre ? pre->len : 0,
	      until_origin, &up, &down);
	if (!log_begin(&l, LOG_INFO, "net close"))
		return;
	log_str(&l, "via", via);
	log_str(&l, "host", t->h.name);
	log_int(&l, "port", t->port);
	log_int(&l, "bytes_up", (int64_t)up);
	log_int(&l, "bytes_down", (int64_t)down);
	log_end(&l);
}

/* --- HTTP -------------------------------------------------------------- */

static int dial_status(enum dial_result r)
{
	return r == DIAL_NOT_LISTED || r == DIAL_PRIVATE ? 403 : 502;
}

/* a request refused before any decision on a host: 400, logged */
static void bad_request(int fd, const char *via, const char *why)
{
	struct strbuf msg = STRBUF_INIT;

	strbuf_addf(&msg, "gosbx: %s", why);
	log_decision("net deny", via, NULL, NULL, why);
	netd_reply(fd, 400, msg.buf, msg.buf);
	strbuf_release(&msg);
}

static void serve_connect(const struct egress_policy *p, int fd,
			  struct netd_head *h)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	struct strbuf why = STRBUF_INIT;
	const char *w;
	struct target t;
	struct dial d;

	if (parse_hostport(h->target, strlen(h->target), 0, &t, &w) < 0) {
		strbuf_addf(&why, "bad CONNECT target: %s", w);
		bad_request(fd, "connect", why.buf);
		strbuf_release(&why);
		return;
	}
	dial(p, &t, "connect", &d);
	if (d.result != DIAL_OK)
		netd_reply(fd, dial_status(d.result), d.msg.buf, d.msg.buf);
	else if (!netd_write_all(fd, ok, strlen(ok), NETD_HEAD_TIMEOUT_MS))
		relay_and_log(fd, d.fd, &h->rest, 0, "connect", &t);
	if (d.fd >= 0)
		close(d.fd);
	strbuf_release(&d.msg);
}

/* 1 if name is a token of the Connection fields of h */
static int connection_names(const struct netd_head *h, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < h->names.nr; i++) {
		const char *v = h->values.v[i];

		if (strcasecmp(h->names.v[i], "connection"))
			continue;
		while (*v) {
			size_t len;

			v += strspn(v, " \t,");
			len = strcspn(v, " \t,");
			if (len == n && !strncasecmp(v, name, n))
				return 1;
			v += len;
		}
	}
	return 0;
}

/* fields a proxy does not forward (RFC 9110 7.6.1); Host is replaced */
static int drop_field(const struct netd_head *h, const char *name)
{
	static const char *const hop[] = { "connection", "keep-alive", "te",
					   "upgrade", "host" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(hop); i++)
		if (!strcasecmp(name, hop[i]))
			return 1;
	if (!strncasecmp(name, "proxy-", 6))
		return 1;
	/* the framing of the body is relayed as it is: keep it */
	if (!strcasecmp(name, "content-length") ||
	    !strcasecmp(name, "transfer-encoding"))
		return 0;
	return connection_names(h, name);
}

/* the request head for the origin: origin-form, path (len bytes) */
static void forward_head(const struct netd_head *h, const struct target *t,
			 const char *path, size_t len, struct strbuf *out)
{
	size_t i;

	strbuf_addf(out, "%s %s%.*s HTTP/1.%d\r\nHost: ", h->method,
		    len && *path == '/' ? "" : "/", (int)len, path, h->minor);
	add_hostport(out, t->h.family, t->h.name, t->port == 80 ? 0 : t->port);
	strbuf_addstr(out, "\r\n");
	for (i = 0; i < h->names.nr; i++)
		if (!drop_field(h, h->names.v[i]))
			strbuf_addf(out, "%s: %s\r\n", h->names.v[i],
				    h->values.v[i]);
	strbuf_addstr(out, "Connection: close\r\n\r\n");
}

static void serve_forward(const struct egress_policy *p, int fd,
			  struct netd_head *h)
{
	const char *auth = h->target + 7, *path, *w;
	size_t alen = strcspn(auth, "/?#");
	struct strbuf head = STRBUF_INIT, why = STRBUF_INIT;
	struct target t;
	struct dial d;

	if (memchr(auth, '@', alen)) {
		bad_request(fd, "http",
			    "userinfo in a proxy URL is not allowed");
		return;
	}
	if (parse_hostport(auth, alen, 80, &t, &w) < 0) {
		strbuf_addf(&why, "bad host in the URL: %s", w);
		bad_request(fd, "http", why.buf);
		strbuf_release(&why);
		return;
	}
	path = auth + alen;
	dial(p, &t, "http", &d);
	if (d.result != DIAL_OK) {
		netd_reply(fd, dial_status(d.result), d.msg.buf, d.msg.buf);
		goto out;
	}
	forward_head(h, &t, path, strcspn(path, "#"), &head);
	if (netd_write_all(d.fd, head.buf, head.len, NETD_HEAD_TIMEOUT_MS)) {
		char buf[128];

		strbuf_addf(&why, "gosbx: cannot send the request to %s: %s",
			    t.h.name, errtext(errno, buf, sizeof(buf)));
		netd_reply(fd, 502, why.buf, why.buf);
		goto out;
	}
	relay_and_log(fd, d.fd, &h->rest, 1, "http", &t);
out:
	if (d.fd >= 0)
		close(d.fd);
	strbuf_release(&d.msg);
	strbuf_release(&head);
	strbuf_release(&why);
}

void egress_serve_http(const struct egress_policy *p, int fd,
		       struct netd_head *h)
{
	if (!strcmp(h->method, "CONNECT"))
		serve_connect(p, fd, h);
	else if (!strncasecmp(h->target, "http://", 7))
		serve_forward(p, fd, h);
	else if (!strncasecmp(h->target, "https://", 8))
		bad_request(fd, "http",
			    "an https:// URL goes through CONNECT, "
			    "not as a plain proxy request");
	else
		bad_request(fd, "http",
			    "not a proxy request: the target must be "
			    "http://host[:port]/path, or CONNECT host:port");
}

/* --- SOCKS5 ------------------------------------------------------------ */

/* read exactly len bytes before the deadline (monotonic_ms()); 0 or -1 */
static int read_exact(int fd, unsigned char *buf, size_t len, uint64_t deadline)
{
	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = monotonic_ms();
		ssize_t n;
		int r;

		if (now >= deadline)
			return -1;
		r = poll(&pfd, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		n = recv(fd, buf, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

/* RFC 1928 6: a reply with BND.ADDR 0.0.0.0:0 */
static void socks_reply(int fd, int rep)
{
	unsigned char r[10] = { 5, rep, 0, 1 };

	netd_write_all(fd, r, sizeof(r), NETD_HEAD_TIMEOUT_MS);
}

static int socks_code(const struct dial *d)
{
	switch (d->result) {
	case DIAL_OK:
		return 0x00;
	case DIAL_NOT_LISTED:
	case DIAL_PRIVATE:
		return 0x02;
	case DIAL_NO_NAME:
		return 0x04;
	default:
		break;
	}
	switch (d->err) {
	case ECONNREFUSED:
		return 0x05;
	case ENETUNREACH:
		return 0x03;
	case EHOSTUNREACH:
	case ETIMEDOUT:
		return 0x04;
	default:
		return 0x01;
	}
}

/* the greeting: method 0x00 chosen, or -1 (answered or gone) */
static int socks_greeting(int fd, uint64_t deadline)
{
	unsigned char b[2 + 255];
	size_t i;

	if (read_exact(fd, b, 2, deadline) || b[0] != 5 ||
	    read_exact(fd, b + 2, b[1], deadline))
		return -1;
	for (i = 0; i < b[1]; i++)
		if (!b[2 + i]) {
			b[0] = 5;
			b[1] = 0;
			return netd_write_all(fd, b, 2, NETD_HEAD_TIMEOUT_MS);
		}
	b[0] = 5;
	b[1] = 0xff;
	netd_write_all(fd, b, 2, NETD_HEAD_TIMEOUT_MS);
	log_decision("net deny", "socks5", NULL, NULL,
		     "no acceptable authentication method");
	return -1;
}

/*
 * The request: 0 and t filled, or a reply code to answer with (the
 * denial logged), or -1 (nothing to answer).
 */
static int socks_request(int fd, uint64_t deadline, struct target *t)
{
	/* VER CMD RSV ATYP, a name's length, the name, the port */
	unsigned char b[4 + 1 + 255 + 2], *a = b + 4;
	const char *why = NULL;
	char text[INET6_ADDRSTRLEN];
	size_t alen;

	if (read_exact(fd, b, 4, deadline) || b[0] != 5)
		return -1;
	if (b[1] != 1)
		why = "command not supported";
	else if (b[3] != 1 && b[3] != 3 && b[3] != 4)
		why = "address type not supported";
	if (why) {
		log_decision("net deny", "socks5", NULL, NULL, why);
		return b[1] != 1 ? 0x07 : 0x08;
	}
	if (b[3] == 3) {
		if (read_exact(fd, a, 1, deadline))
			return -1;
		alen = *a++;
	} else {
		alen = b[3] == 1 ? 4 : 16;
	}
	if (read_exact(fd, a, alen + 2, deadline))
		return -1;
	t->port = a[alen] << 8 | a[alen + 1];
	if (b[3] != 3) {
		inet_ntop(b[3] == 1 ? AF_INET : AF_INET6, a, text,
			  sizeof(text));
		a = (unsigned char *)text;
		alen = strlen(text);
	}
	if (parse_host((const char *)a, alen, &t->h, &why) < 0 || !t->port) {
		log_decision("net deny", "socks5", NULL, NULL,
			     why ? why : "port 0");
		return 0x02;
	}
	return 0;
}

void egress_serve_socks5(const struct egress_policy *p, int fd)
{
	uint64_t deadline = monotonic_ms() + NETD_HEAD_TIMEOUT_MS;
	struct target t;
	struct dial d;
	int r;

	if (socks_greeting(fd, deadline))
		return;
	r = socks_request(fd, deadline, &t);
	if (r) {
		if (r > 0)
			socks_reply(fd, r);
		return;
	}
	dial(p, &t, "socks5", &d);
	socks_reply(fd, socks_code(&d));
	if (d.result == DIAL_OK)
		relay_and_log(fd, d.fd, NULL, 0, "socks5", &t);
	if (d.fd >= 0)
		close(d.fd);
	strbuf_release(&d.msg);
}

/* --- DNS --------------------------------------------------------------- */

#define DNS_HEADER 12
#define DNS_NAME_MAX 255 /* wire bytes, RFC 1035 2.3.4 */
#define DNS_TYPE_A 1
#define DNS_TYPE_AAAA 28
#define DNS_CLASS_IN 1
#define DNS_ANSWERS_MAX 64 /* address records in a reply, at most */
enum dns_rcode {
	DNS_NOERROR = 0,
	DNS_FORMERR = 1,
	DNS_SERVFAIL = 2,
	DNS_NOTIMP = 4,
	DNS_REFUSED = 5,
};

/*
 * Read the name at off of m (len bytes) into text (DNS_NAME_MAX bytes):
 * labels joined with '.'. *next: the offset after the name where it
 * began. *valid: 0 when a label holds a byte no host name has.
 * Compression pointers must point before the start of the name part
 * that holds them, so that the walk ends. 0, or -1 (malformed).
 */
static int dns_read_name(const unsigned char *m, size_t len, size_t off,
			 char *text, size_t *next, int *valid)
{
	size_t n = 0, wire = 0, lim = off, i;
	int jumped = 0;

	*valid = 1;
	for (;;) {
		unsigned c;

		if (off >= len)
			return -1;
		c = m[off];
		if (!c)
			break;
		if ((c & 0xc0) == 0xc0) {
			size_t ptr;

			if (off + 1 >= len)
				return -1;
			ptr = (c & 0x3f) << 8 | m[off + 1];
			if (!jumped)
				*next = off + 2;
			if (ptr < DNS_HEADER || ptr >= lim)
				return -1;
			lim = off = ptr;
			jumped = 1;
			continue;
		}
		if (c & 0xc0 || off + 1 + c > len)
			return -1;
		wire += 1 + c;
		if (wire + 1 > DNS_NAME_MAX)
			return -1;
		if (n)
			text[n++] = '.';
		for (i = 0; i < c; i++) {
			int ch = m[off + 1 + i];

			if (!is_host_char(ch) || ch == '.')
				*valid = 0;
			text[n++] = ch;
		}
		off += 1 + c;
	}
	if (!jumped)
		*next = off + 1;
	text[n] = '\0';
	return 0;
}

static void put16(unsigned char *p, unsigned v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* a reply of just the header of q: counts 0, rcode */
static size_t dns_header_only(const unsigned char *q, unsigned char *out,
			      int rcode)
{
	memset(out, 0, DNS_HEADER);
	out[0] = q[0];
	out[1] = q[1];
	out[2] = 0x80 | (q[2] & 0x79); /* QR, opcode and RD of q */
	out[3] = 0x80 | rcode;	       /* RA */
	return DNS_HEADER;
}

/* an answer record after the question; 0, or -1 when it does not fit */
static int dns_add_answer(unsigned char *out, size_t *len, size_t cap, int type,
			  const void *rdata, size_t rdlen)
{
	unsigned char *p = out + *len;

	if (*len + 12 + rdlen > cap)
		return -1;
	put16(p, 0xc000 | DNS_HEADER); /* the question's name */
	put16(p + 2, type);
	put16(p + 4, DNS_CLASS_IN);
	put16(p + 6, 0);
	put16(p + 8, EGRESS_DNS_TTL);
	put16(p + 10, rdlen);
	memcpy(p + 12, rdata, rdlen);
	*len += 12 + rdlen;
	put16(out + 6, (out[6] << 8 | out[7]) + 1);
	return 0;
}

static void dns_log(const struct host *h, const char *addr, const char *why)
{
	struct target t;

	t.h = *h;
	t.port = 0;
	log_decision("net deny", "dns", &t, addr, why);
}

/* the rcode for a failed getaddrinfo() */
static int gai_rcode(int r)
{
	/* no address of the type asked, or none: an empty answer */
	if (r == EAI_NONAME || r == EAI_NODATA || r == EAI_ADDRFAMILY)
		return DNS_NOERROR;
	return DNS_SERVFAIL;
}

/* the addresses of h of family (the question's type) into the reply */
static int dns_answers(const struct egress_policy *p, const struct host *h,
		       int family, unsigned char *out, size_t *len, size_t cap)
{
	struct addrinfo hints = { 0 }, *res = NULL, *ai, lit = { 0 };
	struct sockaddr_storage ss;
	struct target t = { .h = *h };
	char refused[INET6_ADDRSTRLEN] = "";
	int r, n = 0;

	if (h->family) {
		lit.ai_addrlen = literal_sa(&t, &ss);
		lit.ai_family = ss.ss_family;
		lit.ai_addr = (struct sockaddr *)&ss;
		res = &lit;
	} else {
		hints.ai_family = family;
		hints.ai_socktype = SOCK_STREAM;
		r = getaddrinfo(h->name, NULL, &hints, &res);
		if (r)
			return gai_rcode(r);
	}
	for (ai = res; ai; ai = ai->ai_next) {
		const void *a;
		size_t alen;

		if (ai->ai_family != family)
			continue;
		if (!egress_addr_allowed(p, ai->ai_addr, 0)) {
			if (!*refused)
				sa_text(ai->ai_addr, refused, sizeof(refused));
			continue;
		}
		a = sa_addr(ai->ai_addr, &alen);
		if (n++ >= DNS_ANSWERS_MAX ||
		    dns_add_answer(out, len, cap,
				   family == AF_INET ? DNS_TYPE_A
						     : DNS_TYPE_AAAA,
				   a, alen)) {
			out[2] |= 0x02; /* TC */
			break;
		}
	}
	if (*refused)
		dns_log(h, refused, "resolves to a private address");
	if (res != &lit)
		freeaddrinfo(res);
	return DNS_NOERROR;
}

size_t egress_dns_reply(const struct egress_policy *p, const unsigned char *q,
			size_t qlen, unsigned char *out, size_t outcap)
{
	char name[DNS_NAME_MAX + 1];
	size_t end, len;
	struct host h;
	const char *why;
	int valid, qtype, qclass, rcode = DNS_NOERROR;

	if (qlen < DNS_HEADER || outcap < DNS_HEADER || q[2] & 0x80)
		return 0;
	if (q[2] & 0x78)
		return dns_header_only(q, out, DNS_NOTIMP);
	if ((q[4] << 8 | q[5]) != 1 ||
	    dns_read_name(q, qlen, DNS_HEADER, name, &end, &valid) ||
	    end + 4 > qlen)
		return dns_header_only(q, out, DNS_FORMERR);
	qtype = q[end] << 8 | q[end + 1];
	qclass = q[end + 2] << 8 | q[end + 3];
	end += 4;
	if (end > outcap)
		return 0;
	dns_header_only(q, out, DNS_NOERROR);
	memcpy(out + DNS_HEADER, q + DNS_HEADER, end - DNS_HEADER);
	put16(out + 4, 1);
	len = end;
	if (qclass != DNS_CLASS_IN) {
		rcode = DNS_REFUSED;
	} else if (!valid || parse_host(name, strlen(name), &h, &why) < 0) {
		rcode = DNS_REFUSED;
		log_decision("net deny", "dns", NULL, NULL,
			     "not a valid host name");
	} else if (!target_allowed(p, &h, 0)) {
		rcode = DNS_REFUSED;
		dns_log(&h, NULL, "not on the allow-list");
	} else if (qtype == DNS_TYPE_A || qtype == DNS_TYPE_AAAA) {
		rcode = dns_answers(p, &h,
				    qtype == DNS_TYPE_A ? AF_INET : AF_INET6,
				    out, &len, outcap);
	}
	out[3] |= rcode;
	return len;
}
