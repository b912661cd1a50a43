#include "compat.h"
#include "local/egress.h"
#include "local/netd.h"
#include "log.h"
#include "strbuf.h"
#include "usage.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <setjmp.h>
#include <cmocka.h>

/*
 * getaddrinfo(3) of this program: egress.c's calls land here (the
 * definition in the executable wins), so that a test sees every name
 * that was resolved and no name leaves the host. Names under .test
 * have fixed addresses; "localhost" goes to the C library (/etc/hosts);
 * every other name is unknown.
 */
static pthread_mutex_t gai_lock = PTHREAD_MUTEX_INITIALIZER;
static struct strbuf gai_names = STRBUF_INIT; /* "\nname\n" per call */

static const struct {
	const char *name;
	const char *addrs[41];
} fake_hosts[] = {
	{ "loop.test", { "127.0.0.1" } },
	{ "rebind.test", { "10.0.0.1", "127.0.0.1" } },
	{ "mixed.test",
	  { "8.8.8.8", "127.0.0.1", "10.1.2.3", "2001:4860::8888", "fd00::1",
	    "169.254.169.254", "::ffff:192.168.0.1" } },
	{ "many.test",
	  { "1.0.0.1",	"1.0.0.2",  "1.0.0.3",	"1.0.0.4",  "1.0.0.5",
	    "1.0.0.6",	"1.0.0.7",  "1.0.0.8",	"1.0.0.9",  "1.0.0.10",
	    "1.0.0.11", "1.0.0.12", "1.0.0.13", "1.0.0.14", "1.0.0.15",
	    "1.0.0.16", "1.0.0.17", "1.0.0.18", "1.0.0.19", "1.0.0.20",
	    "1.0.0.21", "1.0.0.22", "1.0.0.23", "1.0.0.24", "1.0.0.25",
	    "1.0.0.26", "1.0.0.27", "1.0.0.28", "1.0.0.29", "1.0.0.30",
	    "1.0.0.31", "1.0.0.32", "1.0.0.33", "1.0.0.34", "1.0.0.35",
	    "1.0.0.36", "1.0.0.37", "1.0.0.38", "1.0.0.39", "1.0.0.40" } },
};

/* one block per entry, as the C library's freeaddrinfo() frees it */
static struct addrinfo *fake_ai(const char *text, int family)
{
	struct addrinfo *ai =
		calloc(1, sizeof(*ai) + sizeof(struct sockaddr_in6));
	struct sockaddr_in *in4 = (void *)(ai + 1);
	struct sockaddr_in6 *in6 = (void *)(ai + 1);

	if (!ai)
		abort();
	ai->ai_socktype = SOCK_STREAM;
	ai->ai_protocol = IPPROTO_TCP;
	ai->ai_addr = (void *)(ai + 1);
	if (inet_pton(AF_INET, text, &in4->sin_addr) == 1) {
		in4->sin_family = ai->ai_family = AF_INET;
		ai->ai_addrlen = sizeof(*in4);
	} else if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1) {
		in6->sin6_family = ai->ai_family = AF_INET6;
		ai->ai_addrlen = sizeof(*in6);
	} else {
		abort();
	}
	if (family != AF_UNSPEC && family != ai->ai_family) {
		free(ai);
		return NULL;
	}
	return ai;
}

int getaddrinfo(const char *node, const char *service,
		const struct addrinfo *hints, struct addrinfo **res)
{
	int (*real)(const char *, const char *, const struct addrinfo *,
		    struct addrinfo **);
	struct addrinfo *head = NULL, **tail = &head;
	int family = hints ? hints->ai_family : AF_UNSPEC;
	size_t i, j;

	pthread_mutex_lock(&gai_lock);
	strbuf_addf(&gai_names, "\n%s\n", node ? node : "(null)");
	pthread_mutex_unlock(&gai_lock);
	if (node && !strcmp(node, "localhost")) {
		*(void **)&real = dlsym(RTLD_NEXT, "getaddrinfo");
		return real(node, service, hints, res);
	}
	for (i = 0; node && i < ARRAY_SIZE(fake_hosts); i++) {
		if (strcmp(node, fake_hosts[i].name))
			continue;
		for (j = 0; j < ARRAY_SIZE(fake_hosts[i].addrs) &&
			    fake_hosts[i].addrs[j];
		     j++) {
			*tail = fake_ai(fake_hosts[i].addrs[j], family);
			if (*tail)
				tail = &(*tail)->ai_next;
		}
		if (!head)
			return EAI_NODATA;
		*res = head;
		return 0;
	}
	return EAI_NONAME;
}

static int was_resolved(const char *name)
{
	struct strbuf line = STRBUF_INIT;
	int found;

	strbuf_addf(&line, "\n%s\n", name);
	pthread_mutex_lock(&gai_lock);
	found = strstr(gai_names.buf, line.buf) != NULL;
	pthread_mutex_unlock(&gai_lock);
	strbuf_release(&line);
	return found;
}

/* --- logs and errors ---------------------------------------------------- */

static int logpipe[2];
static struct strbuf errors = STRBUF_INIT;

static void capture(const char *prefix, const char *msg, void *data)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
}

static int setup(void **state)
{
	if (pipe(logpipe))
		return -1;
	fcntl(logpipe[0], F_SETFL, O_NONBLOCK);
	log_fd = logpipe[1];
	log_min_level = LOG_INFO;
	strbuf_reset(&errors);
	set_error_routine(capture, NULL);
	pthread_mutex_lock(&gai_lock);
	strbuf_reset(&gai_names);
	pthread_mutex_unlock(&gai_lock);
	return 0;
}

static int teardown(void **state)
{
	set_error_routine(NULL, NULL);
	log_fd = 2;
	close(logpipe[0]);
	close(logpipe[1]);
	return 0;
}

/* everything logged since the last call */
static void drain_log(struct strbuf *sb)
{
	char buf[65536];
	ssize_t n;

	strbuf_reset(sb);
	while ((n = read(logpipe[0], buf, sizeof(buf))) > 0)
		strbuf_add(sb, buf, n);
}

/* --- the list ----------------------------------------------------------- */

static void test_policy_good(void **state)
{
	struct egress_policy p;
	struct strbuf out = STRBUF_INIT;
	size_t i;

	egress_policy_init(&p);
	assert_true(egress_policy_empty(&p));
	assert_int_equal(egress_policy_add(&p, "Example.ORG., *.Foo.example,"
					       "127.0.0.1:8080,[::1]:8080,::1,"
					       "[2001:DB8:0::1],host_1-x:443"),
			 0);
	assert_false(egress_policy_empty(&p));
	egress_policy_format(&p, &out);
	assert_string_equal(out.buf, "example.org,*.foo.example,"
				     "127.0.0.1:8080,[::1]:8080,[::1],"
				     "[2001:db8::1],host_1-x:443");
	/* again: nothing twice */
	assert_int_equal(egress_policy_add(&p, "example.org,EXAMPLE.org."), 0);
	assert_int_equal(p.nr, 7);
	assert_int_equal(egress_policy_add(&p, "example.org:80"), 0);
	assert_int_equal(p.nr, 8);
	/* a name of 253 bytes, labels of 63 */
	strbuf_reset(&out);
	for (i = 0; i < 253; i++)
		strbuf_addch(&out, i % 64 == 63 ? '.' : 'a' + i % 26);
	assert_int_equal(out.len, 253);
	assert_int_equal(egress_policy_add(&p, out.buf), 0);
	assert_string_equal(errors.buf, "");
	egress_policy_release(&p);
	assert_true(egress_policy_empty(&p));
	strbuf_release(&out);
}

static void test_policy_bad(void **state)
{
	static const struct {
		const char *list, *msg;
	} bad[] = {
		{ "", "'': empty entry" },
		{ " ", "'': empty entry" },
		{ "a.org,,b.org", "'': empty entry" },
		{ "a.org,", "'': empty entry" },
		{ "*",
		  "'*': '*' alone would allow every host; name the hosts" },
		{ "*.", "'*.': a wildcard is allowed only as a leading '*.'" },
		{ "**.example.org",
		  "'**.example.org': a wildcard is allowed only as a leading "
		  "'*.'" },
		{ "a.*.example.org",
		  "'a.*.example.org': a wildcard is allowed only as a leading "
		  "'*.'" },
		{ "example.*", "'example.*': a wildcard is allowed only as a "
			       "leading '*.'" },
		{ "*.127.0.0.1", "'*.127.0.0.1': a wildcard goes with a name, "
				 "not an address" },
		{ "http://example.org",
		  "'http://example.org': a URL; give the host, as in "
		  "'example.org' or 'example.org:8080'" },
		{ "example.org/x", "'example.org/x': a path is not allowed; "
				   "give the host only" },
		{ "user@example.org",
		  "'user@example.org': userinfo ('user@') is not allowed" },
		{ "example.org:0", "'example.org:0': the port is not a number "
				   "in 1..65535" },
		{ "example.org:65536", "'example.org:65536': the port is not "
				       "a number in 1..65535" },
		{ "example.org:8o", "'example.org:8o': the port is not a "
				    "number in 1..65535" },
		{ "example.org:", "'example.org:': the port is not a number "
				  "in 1..65535" },
		{ "example.org:-1", "'example.org:-1': the port is not a "
				    "number in 1..65535" },
		{ "[::1]:99999", "'[::1]:99999': the port is not a number in "
				 "1..65535" },
		{ "[::1", "'[::1': no ']' after an IPv6 address" },
		{ "[::1]x", "'[::1]x': bytes after ']' that are not a port" },
		{ "[fe80::1%eth0]", "'[fe80::1%eth0]': not an IPv6 address "
				    "(zone ids are not allowed)" },
		{ "::g", "'::g': not an IPv6 address" },
		{ "[example.org]", "'[example.org]': not an IPv6 address" },
		{ "127.1",
		  "'127.1': not a valid IPv4 address (a dotted quad)" },
		{ "0x7f.1", "'0x7f.1': not a valid IPv4 address (a dotted "
			    "quad)" },
		{ "a.0x7F", "'a.0x7F': not a valid IPv4 address (a dotted "
			    "quad)" },
		{ "2130706433", "'2130706433': not a valid IPv4 address (a "
				"dotted quad)" },
		{ "256.0.0.1", "'256.0.0.1': not a valid IPv4 address (a "
			       "dotted quad)" },
		{ "010.0.0.1", "'010.0.0.1': not a valid IPv4 address (a "
			       "dotted quad)" },
		{ "exa mple.org", "'exa mple.org': a host name holds only "
				  "letters, digits, '-', '_' and '.'" },
		{ "ex%61mple.org", "'ex%61mple.org': a host name holds only "
				   "letters, digits, '-', '_' and '.'" },
		{ "caf\xc3\xa9.org", "'caf\xc3\xa9.org': a host name holds "
				     "only letters, digits, '-', '_' and "
				     "'.'" },
		{ "a..b", "'a..b': empty label" },
		{ ".a", "'.a': empty label" },
		{ ".", "'.': empty label" },
		{ ":80", "':80': empty host" },
	};
	struct egress_policy p;
	struct strbuf want = STRBUF_INIT, label = STRBUF_INIT;
	size_t i;

	egress_policy_init(&p);
	assert_int_equal(egress_policy_add(&p, "kept.example"), 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		strbuf_reset(&errors);
		strbuf_reset(&want);
		strbuf_addf(&want, "error: bad --allow-net entry %s\n",
			    bad[i].msg);
		assert_int_equal(egress_policy_add(&p, bad[i].list), -1);
		assert_string_equal(errors.buf, want.buf);
	}
	/* a list with one bad entry adds nothing */
	assert_int_equal(egress_policy_add(&p, "good.example,bad..example"),
			 -1);
	assert_int_equal(p.nr, 1);
	assert_false(egress_host_allowed(&p, "good.example", 443));
	/* a label of 64 bytes, a name of 254 */
	for (i = 0; i < 64; i++)
		strbuf_addch(&label, 'x');
	assert_int_equal(egress_policy_add(&p, label.buf), -1);
	assert_non_null(strstr(errors.buf, "a label is longer than 63"));
	strbuf_reset(&label);
	for (i = 0; i < 127; i++)
		strbuf_addstr(&label, "a.");
	strbuf_addstr(&label, "ab");
	assert_int_equal(label.len, 256);
	assert_int_equal(egress_policy_add(&p, label.buf), -1);
	assert_non_null(strstr(errors.buf, "longer than 253 bytes"));
	assert_int_equal(p.nr, 1);
	egress_policy_release(&p);
	strbuf_release(&want);
	strbuf_release(&label);
}

static void test_match(void **state)
{
	struct egress_policy p;

	egress_policy_init(&p);
	assert_false(egress_host_allowed(&p, "example.org", 443));
	assert_int_equal(
		egress_policy_add(&p, "*.example.org,api.test:8443,"
				      "Plain.TEST,127.0.0.1:8080,[::1]:8080,"
				      "[2001:db8::5]"),
		0);
	/* wildcards: subdomains at any depth, not the domain itself */
	assert_true(egress_host_allowed(&p, "a.example.org", 443));
	assert_true(egress_host_allowed(&p, "a.b.example.org", 80));
	assert_true(egress_host_allowed(&p, "A.Example.ORG.", 443));
	assert_false(egress_host_allowed(&p, "example.org", 443));
	assert_false(egress_host_allowed(&p, "badexample.org", 443));
	assert_false(egress_host_allowed(&p, "a.example.org.evil", 443));
	assert_false(egress_host_allowed(&p, "a.example.org", 8080));
	/* ports: none given is 80 and 443; a given one is that one only */
	assert_true(egress_host_allowed(&p, "plain.test", 80));
	assert_true(egress_host_allowed(&p, "PLAIN.test.", 443));
	assert_false(egress_host_allowed(&p, "plain.test", 8080));
	assert_true(egress_host_allowed(&p, "api.test", 8443));
	assert_false(egress_host_allowed(&p, "api.test", 443));
	assert_false(egress_host_allowed(&p, "x.api.test", 8443));
	/* port 0: any port of the list */
	assert_true(egress_host_allowed(&p, "api.test", 0));
	assert_true(egress_host_allowed(&p, "plain.test", 0));
	assert_false(egress_host_allowed(&p, "other.test", 0));
	/* literals match literal entries only */
	assert_true(egress_host_allowed(&p, "127.0.0.1", 8080));
	assert_false(egress_host_allowed(&p, "127.0.0.1", 80));
	assert_false(egress_host_allowed(&p, "127.0.0.2", 8080));
	assert_true(egress_host_allowed(&p, "::ffff:127.0.0.1", 8080));
	assert_true(egress_host_allowed(&p, "::1", 8080));
	assert_true(egress_host_allowed(&p, "[0:0::1]", 8080));
	assert_false(egress_host_allowed(&p, "::1", 8081));
	assert_true(egress_host_allowed(&p, "2001:DB8::5", 443));
	assert_false(egress_host_allowed(&p, "2001:db8::5", 22));
	assert_false(egress_host_allowed(&p, "localhost", 8080));
	/* what is no host is never allowed */
	assert_false(egress_host_allowed(&p, "", 443));
	assert_false(egress_host_allowed(&p, "0x7f.0.0.1", 8080));
	assert_false(egress_host_allowed(&p, "127.1", 8080));
	assert_false(egress_host_allowed(&p, "plain.test ", 80));
	assert_false(egress_host_allowed(&p, "*.example.org", 443));
	assert_false(egress_host_allowed(&p, "plain.test", -1));
	assert_false(egress_host_allowed(&p, "plain.test", 65536 + 80));
	egress_policy_release(&p);
}

static socklen_t to_sa(const char *text, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (void *)ss;
	struct sockaddr_in6 *in6 = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, text, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		return sizeof(*in4);
	}
	if (inet_pton(AF_INET6, text, &in6->sin6_addr) != 1)
		fail_msg("bad address '%s' in the test", text);
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	return sizeof(*in6);
}

static void test_addr_special(void **state)
{
	static const char *const special[] = {
		"0.0.0.0",
		"0.1.2.3",
		"10.0.0.1",
		"10.255.255.255",
		"100.64.0.1",
		"100.127.255.255",
		"100.100.100.200",
		"127.0.0.1",
		"127.255.255.254",
		"169.254.0.1",
		"169.254.169.254",
		"172.16.0.1",
		"172.31.255.255",
		"192.0.0.1",
		"192.88.99.1",
		"192.168.0.1",
		"192.168.255.255",
		"198.18.0.1",
		"198.19.255.255",
		"224.0.0.1",
		"239.255.255.250",
		"240.0.0.1",
		"255.255.255.255",
		"::",
		"::1",
		"::127.0.0.1",
		"::8.8.8.8",
		"::ffff:127.0.0.1",
		"::ffff:10.1.2.3",
		"::ffff:169.254.169.254",
		"::ffff:172.16.0.1",
		"::ffff:192.168.1.1",
		"::ffff:100.100.100.200",
		"::ffff:0:192.168.1.1",
		"::ffff:0:127.0.0.1",
		"64:ff9b::a00:1",
		"64:ff9b::7f00:1",
		"64:ff9b::a9fe:a9fe",
		"64:ff9b:1::8.8.8.8",
		"100::1",
		"2001::1",
		"2001:0:ffff::1",
		"2001:2::1",
		"2002::1",
		"2002:808:808::1",
		"fc00::1",
		"fd00:ec2::254",
		"fdff:ffff::1",
		"fe80::1",
		"febf::1",
		"fec0::1",
		"ff02::1",
		"ff0e::1",
	};
	static const char *const public[] = {
		"192.0.2.1",	    "198.51.100.1",
		"203.0.113.80",	    "2001:db8::1",
		"3fff::1",	    "1.1.1.1",
		"8.8.8.8",	    "9.255.255.255",
		"11.0.0.0",	    "100.63.255.255",
		"100.128.0.0",	    "126.255.255.255",
		"128.0.0.0",	    "169.253.255.255",
		"169.255.0.0",	    "172.15.255.255",
		"172.32.0.0",	    "192.0.1.1",
		"192.0.3.0",	    "192.167.255.255",
		"192.169.0.0",	    "198.17.255.255",
		"198.20.0.0",	    "223.255.255.255",
		"93.184.216.34",    "2001:4860:4860::8888",
		"2606:4700::1111",  "::ffff:8.8.8.8",
		"::ffff:0:8.8.8.8", "64:ff9b::808:808",
		"2001:db9::1",	    "2001:1::1",
		"2003::1",	    "3ffe::1",
		"4000::1",	    "fbff::1",
		"fe7f::1",	    "1::1",
	};
	struct sockaddr_storage ss;
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(special); i++) {
		to_sa(special[i], 443, &ss);
		if (!egress_addr_special((struct sockaddr *)&ss))
			fail_msg("'%s' is not special", special[i]);
	}
	for (i = 0; i < ARRAY_SIZE(public); i++) {
		to_sa(public[i], 443, &ss);
		if (egress_addr_special((struct sockaddr *)&ss))
			fail_msg("'%s' is special", public[i]);
	}
	/* another family fails closed */
	assert_true(egress_addr_special((struct sockaddr *)&un));
}

static int addr_allowed(const struct egress_policy *p, const char *text,
			int port)
{
	struct sockaddr_storage ss;

	to_sa(text, port, &ss);
	return egress_addr_allowed(p, (struct sockaddr *)&ss, port);
}

static void test_addr_allowed(void **state)
{
	struct egress_policy p;
	struct sockaddr_un un = { .sun_family = AF_UNIX };

	egress_policy_init(&p);
	assert_true(addr_allowed(&p, "8.8.8.8", 443));
	assert_true(addr_allowed(&p, "2606:4700::1111", 22));
	assert_false(addr_allowed(&p, "127.0.0.1", 80));
	assert_int_equal(egress_policy_add(&p, "127.0.0.1:8080,[::1]:8080,"
					       "10.0.0.1,example.org,"
					       "[fd00:ec2::254]:80"),
			 0);
	assert_true(addr_allowed(&p, "127.0.0.1", 8080));
	assert_false(addr_allowed(&p, "127.0.0.1", 8081));
	assert_true(addr_allowed(&p, "127.0.0.1", 0));
	assert_false(addr_allowed(&p, "127.0.0.2", 8080));
	assert_true(addr_allowed(&p, "::ffff:127.0.0.1", 8080));
	assert_false(addr_allowed(&p, "::127.0.0.1", 8080));
	assert_false(addr_allowed(&p, "64:ff9b::7f00:1", 8080));
	assert_true(addr_allowed(&p, "::1", 8080));
	assert_false(addr_allowed(&p, "::1", 443));
	assert_true(addr_allowed(&p, "10.0.0.1", 443));
	assert_true(addr_allowed(&p, "10.0.0.1", 80));
	assert_false(addr_allowed(&p, "10.0.0.1", 8080));
	assert_false(addr_allowed(&p, "10.0.0.2", 443));
	assert_true(addr_allowed(&p, "fd00:ec2::254", 80));
	assert_false(addr_allowed(&p, "fd00:ec2::254", 443));
	assert_false(addr_allowed(&p, "169.254.169.254", 80));
	assert_true(addr_allowed(&p, "93.184.216.34", 8080));
	assert_false(egress_addr_allowed(&p, (struct sockaddr *)&un, 80));
	egress_policy_release(&p);
}

/* --- DNS ---------------------------------------------------------------- */

/* a query of one question; returns its length */
static size_t dns_query(unsigned char *q, unsigned id, const char *name,
			unsigned qtype)
{
	size_t n = 12;

	memset(q, 0, 12);
	q[0] = id >> 8;
	q[1] = id & 0xff;
	q[2] = 0x01; /* RD */
	q[5] = 1;
	while (*name) {
		size_t l = strcspn(name, ".");

		q[n++] = l;
		memcpy(q + n, name, l);
		n += l;
		name += l;
		if (*name)
			name++;
	}
	q[n++] = 0;
	q[n++] = qtype >> 8;
	q[n++] = qtype & 0xff;
	q[n++] = 0;
	q[n++] = 1;
	return n;
}

static int rcode(const unsigned char *r)
{
	return r[3] & 0x0f;
}

static unsigned count(const unsigned char *r, int which)
{
	return r[4 + 2 * which] << 8 | r[5 + 2 * which];
}

/* the addresses of the answers of r (len bytes, question of qlen) */
static void dns_addrs(const unsigned char *r, size_t len, size_t qlen,
		      struct strbuf *out)
{
	size_t i = qlen, k;
	char text[INET6_ADDRSTRLEN];

	for (k = 0; k < count(r, 1); k++) {
		unsigned type, rdlen;

		assert_true(i + 12 <= len);
		/* the name points at the question */
		assert_int_equal(r[i], 0xc0);
		assert_int_equal(r[i + 1], 12);
		type = r[i + 2] << 8 | r[i + 3];
		assert_int_equal(r[i + 4] << 8 | r[i + 5], 1);
		assert_int_equal(r[i + 6] << 24 | r[i + 7] << 16 |
					 r[i + 8] << 8 | r[i + 9],
				 60);
		rdlen = r[i + 10] << 8 | r[i + 11];
		assert_int_equal(rdlen, type == 1 ? 4 : 16);
		assert_true(i + 12 + rdlen <= len);
		inet_ntop(type == 1 ? AF_INET : AF_INET6, r + i + 12, text,
			  sizeof(text));
		strbuf_addf(out, "%s%s", out->len ? " " : "", text);
		i += 12 + rdlen;
	}
	assert_int_equal(i, len);
}

static void test_dns_answers(void **state)
{
	struct egress_policy p;
	unsigned char q[512], r[512];
	struct strbuf addrs = STRBUF_INIT, log = STRBUF_INIT;
	size_t ql, rl;

	egress_policy_init(&p);
	assert_int_equal(egress_policy_add(&p, "mixed.test,localhost,"
					       "many.test:8443,api.test"),
			 0);

	/* a name not on the list: REFUSED, never resolved, logged */
	ql = dns_query(q, 0xbeef, "secret-data.evil.test", 1);
	rl = egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rl, ql);
	assert_int_equal(r[0], 0xbe);
	assert_int_equal(r[1], 0xef);
	assert_int_equal(r[2], 0x81); /* QR, RD */
	assert_int_equal(rcode(r), 5);
	assert_int_equal(count(r, 0), 1);
	assert_int_equal(count(r, 1), 0);
	assert_memory_equal(r + 12, q + 12, ql - 12);
	assert_false(was_resolved("secret-data.evil.test"));
	drain_log(&log);
	assert_non_null(strstr(log.buf, "msg=\"net deny\" via=dns "
					"host=secret-data.evil.test "
					"why=\"not on the allow-list\""));

	/* an allowed name: only its addresses that are not special */
	ql = dns_query(q, 1, "Mixed.TEST", 1);
	rl = egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rcode(r), 0);
	assert_int_equal(count(r, 0), 1);
	assert_memory_equal(r + 12, q + 12, ql - 12); /* case kept */
	dns_addrs(r, rl, ql, &addrs);
	assert_string_equal(addrs.buf, "8.8.8.8");
	assert_true(was_resolved("mixed.test"));
	drain_log(&log);
	assert_non_null(strstr(log.buf, "via=dns host=mixed.test "
					"addr=127.0.0.1 why=\"resolves to a "
					"private address\""));
	ql = dns_query(q, 2, "mixed.test", 28);
	rl = egress_dns_reply(&p, q, ql, r, sizeof(r));
	strbuf_reset(&addrs);
	dns_addrs(r, rl, ql, &addrs);
	assert_string_equal(addrs.buf, "2001:4860::8888");

	/* localhost is special: no address record */
	ql = dns_query(q, 3, "localhost", 1);
	rl = egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rcode(r), 0);
	assert_int_equal(count(r, 1), 0);
	assert_int_equal(rl, ql);
	drain_log(&log);
	assert_non_null(strstr(log.buf, "host=localhost addr=127.0.0.1 "
					"why=\"resolves to a private "
					"address\""));
	/* unless its address is on the list itself */
	assert_int_equal(egress_policy_add(&p, "127.0.0.1"), 0);
	rl = egress_dns_reply(&p, q, ql, r, sizeof(r));
	strbuf_reset(&addrs);
	dns_addrs(r, rl, ql, &addrs);
	assert_string_equal(addrs.buf, "127.0.0.1");

	/* another type of an allowed name: no answer, nothing resolved */
	ql = dns_query(q, 4, "api.test", 15);
	rl = egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rcode(r), 0);
	assert_int_equal(count(r, 1), 0);
	assert_int_equal(rl, ql);
	assert_false(was_resolved("api.test"));
	/* an allowed name without addresses: NOERROR, no answer */
	ql = dns_query(q, 5, "api.test", 1);
	rl = egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rcode(r), 0);
	assert_int_equal(count(r, 1), 0);
	assert_true(was_resolved("api.test"));

	/* a name on the list for a port other than 80/443 */
	ql = dns_query(q, 6, "many.test", 1);
	rl = egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rcode(r), 0);
	/* 40 records do not fit 512 bytes: the first ones and TC */
	assert_true(r[2] & 0x02);
	assert_int_equal(count(r, 1), (512 - ql) / 16);
	assert_true(rl <= 512);
	strbuf_reset(&addrs);
	dns_addrs(r, rl, ql, &addrs);
	assert_true(starts_with(addrs.buf, "1.0.0.1 1.0.0.2 1.0.0.3 "));
	/* a small buffer: fewer */
	rl = egress_dns_reply(&p, q, ql, r, ql + 20);
	assert_int_equal(rl, ql + 16);
	assert_int_equal(count(r, 1), 1);
	assert_true(r[2] & 0x02);
	/* too small for the question: nothing */
	assert_int_equal(egress_dns_reply(&p, q, ql, r, ql - 1), 0);

	egress_policy_release(&p);
	strbuf_release(&addrs);
	strbuf_release(&log);
}

static void test_dns_malformed(void **state)
{
	struct egress_policy p;
	unsigned char q[600], r[512];
	size_t ql, rl, i;

	egress_policy_init(&p);
	assert_int_equal(egress_policy_add(&p, "api.test,localhost"), 0);
	ql = dns_query(q, 7, "api.test", 1);

	/* shorter than a header, or a response: no answer */
	for (i = 0; i < 12; i++)
		assert_int_equal(egress_dns_reply(&p, q, i, r, sizeof(r)), 0);
	q[2] |= 0x80;
	assert_int_equal(egress_dns_reply(&p, q, ql, r, sizeof(r)), 0);
	q[2] &= ~0x80;
	assert_int_equal(egress_dns_reply(&p, q, ql, r, 11), 0);

	/* another opcode: NOTIMP */
	q[2] |= 2 << 3;
	assert_int_equal(egress_dns_reply(&p, q, ql, r, sizeof(r)), 12);
	assert_int_equal(rcode(r), 4);
	assert_int_equal((r[2] >> 3) & 0xf, 2);
	q[2] &= ~0x78;

	/* every truncation of the question: FORMERR */
	for (i = 12; i < ql; i++) {
		rl = egress_dns_reply(&p, q, i, r, sizeof(r));
		assert_int_equal(rl, 12);
		assert_int_equal(rcode(r), 1);
		assert_int_equal(count(r, 0), 0);
		assert_int_equal(r[0], 0);
		assert_int_equal(r[1], 7);
	}
	/* no question, two questions */
	q[5] = 0;
	assert_int_equal(egress_dns_reply(&p, q, ql, r, sizeof(r)), 12);
	assert_int_equal(rcode(r), 1);
	q[5] = 2;
	assert_int_equal(egress_dns_reply(&p, q, ql, r, sizeof(r)), 12);
	assert_int_equal(rcode(r), 1);
	q[5] = 1;

	/* a compression pointer to itself, forward, into the header */
	ql = dns_query(q, 8, "", 1);
	memmove(q + 14, q + 12, 5);
	q[12] = 0xc0;
	q[13] = 12;
	rl = egress_dns_reply(&p, q, ql + 1, r, sizeof(r));
	assert_int_equal(rcode(r), 1);
	q[13] = 14;
	egress_dns_reply(&p, q, ql + 1, r, sizeof(r));
	assert_int_equal(rcode(r), 1);
	q[13] = 2;
	egress_dns_reply(&p, q, ql + 1, r, sizeof(r));
	assert_int_equal(rcode(r), 1);
	/* a loop through a label: "a" then a pointer back to it */
	ql = dns_query(q, 9, "a", 1);
	memmove(q + 16, q + 14, 5);
	q[14] = 0xc0;
	q[15] = 12;
	egress_dns_reply(&p, q, ql + 1, r, sizeof(r));
	assert_int_equal(rcode(r), 1);
	/* label types 0x40 and 0x80 */
	ql = dns_query(q, 10, "api.test", 1);
	q[12] = 0x43;
	egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rcode(r), 1);
	q[12] = 0x83;
	egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rcode(r), 1);

	/* a name over 255 bytes */
	memset(q, 0, sizeof(q));
	q[5] = 1;
	for (i = 0; i < 5; i++) {
		q[12 + i * 64] = 63;
		memset(q + 13 + i * 64, 'a', 63);
	}
	ql = 12 + 5 * 64 + 1 + 4;
	q[ql - 3] = 1;
	q[ql - 1] = 1;
	egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rcode(r), 1);

	/* well formed but no host name: REFUSED, never resolved */
	ql = dns_query(q, 11, "api.test", 1);
	q[14] = '.';
	egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rcode(r), 5);
	ql = dns_query(q, 12, "", 1);
	egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rcode(r), 5);
	ql = dns_query(q, 13, "127.1", 1);
	egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rcode(r), 5);
	ql = dns_query(q, 14, "api.test", 1);
	q[ql - 1] = 3; /* class CH */
	egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rcode(r), 5);
	ql = dns_query(q, 15, "api", 1);
	q[13] = 0;
	egress_dns_reply(&p, q, ql, r, sizeof(r));
	assert_int_equal(rcode(r), 5);
	assert_false(was_resolved("api.test"));
	egress_policy_release(&p);
}

/* --- the proxy ---------------------------------------------------------- */

/*
 * An origin on 127.0.0.1: accepts one connection; echo: sends back
 * what it reads until EOF; else reads a request head and body bytes
 * more, answers with response and closes.
 */
struct origin {
	int lfd, port;
	int echo;
	size_t body;
	const char *response;
	struct strbuf got;
	pthread_t thread;
};

static void *origin_run(void *arg)
{
	struct origin *o = arg;
	char buf[65536];
	int fd = accept(o->lfd, NULL, NULL);
	ssize_t n;

	if (fd < 0)
		return NULL;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		const char *end;

		strbuf_add(&o->got, buf, n);
		if (o->echo) {
			if (write_in_full(fd, buf, n) < 0)
				break;
			continue;
		}
		end = strstr(o->got.buf, "\r\n\r\n");
		if (end && o->got.len >= (end + 4 - o->got.buf) + o->body) {
			write_in_full(fd, o->response, strlen(o->response));
			break;
		}
	}
	close(fd);
	return NULL;
}

static void origin_listen(struct origin *o)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);

	memset(o, 0, sizeof(*o));
	strbuf_init(&o->got, 0);
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	o->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(o->lfd >= 0);
	assert_int_equal(bind(o->lfd, (struct sockaddr *)&in, sizeof(in)), 0);
	assert_int_equal(listen(o->lfd, 8), 0);
	assert_int_equal(getsockname(o->lfd, (struct sockaddr *)&in, &len), 0);
	o->port = ntohs(in.sin_port);
}

static void origin_start(struct origin *o)
{
	assert_int_equal(pthread_create(&o->thread, NULL, origin_run, o), 0);
}

/* nobody connected to the origin */
static void origin_untouched(struct origin *o)
{
	struct pollfd pfd = { .fd = o->lfd, .events = POLLIN };

	assert_int_equal(poll(&pfd, 1, 0), 0);
}

static void origin_end(struct origin *o)
{
	close(o->lfd);
	strbuf_release(&o->got);
}

/* a port where nothing listens */
static int dead_port(void)
{
	struct origin o;
	int port;

	origin_listen(&o);
	port = o.port;
	origin_end(&o);
	return port;
}

/* the proxy side of a connection, as netd runs it: a thread */
struct proxy {
	const struct egress_policy *p;
	int fd, socks;
	pthread_t thread;
};

static void *proxy_run(void *arg)
{
	struct proxy *x = arg;

	if (x->socks) {
		egress_serve_socks5(x->p, x->fd);
	} else {
		struct netd_head h;
		struct strbuf why = STRBUF_INIT;

		netd_head_init(&h);
		if (!netd_head_read(x->fd, NULL, 0, &h, &why))
			egress_serve_http(x->p, x->fd, &h);
		netd_head_release(&h);
		strbuf_release(&why);
	}
	close(x->fd);
	return NULL;
}

/* start the proxy on one end of a socketpair; the other end returned */
static int proxy_start(struct proxy *x, const struct egress_policy *p,
		       int socks)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
			 0);
	x->p = p;
	x->fd = sv[1];
	x->socks = socks;
	assert_int_equal(pthread_create(&x->thread, NULL, proxy_run, x), 0);
	return sv[0];
}

static void send_str(int fd, const char *s)
{
	assert_int_equal(write_in_full(fd, s, strlen(s)), (ssize_t)strlen(s));
}

/* read exactly len bytes (a stuck proxy fails the test after 20 s) */
static void recv_exact(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		assert_int_equal(poll(&pfd, 1, 20000), 1);
		n = read(fd, p, len);
		assert_true(n > 0);
		p += n;
		len -= n;
	}
}

/*
 * read until EOF (or ECONNRESET: a peer that closes with bytes unread,
 * as the proxy does with a request it refuses half-way)
 */
static void recv_all(int fd, struct strbuf *out)
{
	char buf[4096];

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		assert_int_equal(poll(&pfd, 1, 20000), 1);
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == ECONNRESET)
			return;
		assert_true(n >= 0);
		if (!n)
			return;
		strbuf_add(out, buf, n);
	}
}

/* one HTTP request through the proxy; the whole answer in out */
static void http_through(const struct egress_policy *p, const char *req,
			 struct strbuf *out)
{
	struct proxy x;
	int c = proxy_start(&x, p, 0);

	strbuf_reset(out);
	send_str(c, req);
	recv_all(c, out);
	pthread_join(x.thread, NULL);
	close(c);
}

/* the status line and body of a netd_reply() with message msg */
static void assert_reply(const struct strbuf *got, int code, const char *msg)
{
	struct strbuf want = STRBUF_INIT;

	strbuf_addf(&want, "HTTP/1.1 %d %s\r\n", code, msg);
	if (!starts_with(got->buf, want.buf))
		fail_msg("got '%s', want '%s'", got->buf, want.buf);
	strbuf_reset(&want);
	strbuf_addf(&want, "\r\n\r\n%s\n", msg);
	assert_true(ends_with(got->buf, want.buf));
	strbuf_release(&want);
}

static void test_http_forward(void **state)
{
	static const char response[] = "HTTP/1.1 200 OK\r\nContent-Length: "
				       "6\r\nConnection: close\r\n\r\nhello\n";
	struct egress_policy p;
	struct origin o;
	struct strbuf list = STRBUF_INIT, req = STRBUF_INIT;
	struct strbuf out = STRBUF_INIT, want = STRBUF_INIT;

	origin_listen(&o);
	o.body = 4;
	o.response = response;
	egress_policy_init(&p);
	strbuf_addf(&list, "127.0.0.1:%d", o.port);
	assert_int_equal(egress_policy_add(&p, list.buf), 0);
	origin_start(&o);
	strbuf_addf(&req,
		    "POST http://127.0.0.1:%d/index.html?q=1#frag HTTP/1.1\r\n"
		    "Host: elsewhere.test\r\n"
		    "Proxy-Authorization: Basic eDp5\r\n"
		    "Proxy-Connection: keep-alive\r\n"
		    "Connection: keep-alive, X-Secret\r\n"
		    "X-Secret: 1\r\n"
		    "TE: trailers\r\n"
		    "Keep-Alive: timeout=5\r\n"
		    "User-Agent: u-egress\r\n"
		    "Content-Length: 4\r\n"
		    "\r\nbody",
		    o.port);
	http_through(&p, req.buf, &out);
	pthread_join(o.thread, NULL);
	assert_string_equal(out.buf, response);
	strbuf_addf(&want,
		    "POST /index.html?q=1 HTTP/1.1\r\n"
		    "Host: 127.0.0.1:%d\r\n"
		    "User-Agent: u-egress\r\n"
		    "Content-Length: 4\r\n"
		    "Connection: close\r\n\r\nbody",
		    o.port);
	assert_string_equal(o.got.buf, want.buf);
	drain_log(&out);
	strbuf_reset(&want);
	strbuf_addf(&want,
		    "msg=\"net allow\" via=http host=127.0.0.1 port=%d "
		    "addr=127.0.0.1\n",
		    o.port);
	assert_non_null(strstr(out.buf, want.buf));
	strbuf_reset(&want);
	strbuf_addf(&want,
		    "msg=\"net close\" via=http host=127.0.0.1 port=%d "
		    "bytes_up=4 bytes_down=%zu\n",
		    o.port, strlen(response));
	assert_non_null(strstr(out.buf, want.buf));
	assert_null(strstr(out.buf, "body"));
	origin_end(&o);

	/* the default port and an empty path */
	origin_listen(&o);
	strbuf_reset(&req);
	strbuf_addf(&req, "GET http://LOOP.test.:%d HTTP/1.0\r\n\r\n", o.port);
	strbuf_reset(&list);
	strbuf_addf(&list, "loop.test:%d,127.0.0.1:%d", o.port, o.port);
	assert_int_equal(egress_policy_add(&p, list.buf), 0);
	o.response = response;
	origin_start(&o);
	http_through(&p, req.buf, &out);
	pthread_join(o.thread, NULL);
	assert_string_equal(out.buf, response);
	strbuf_reset(&want);
	strbuf_addf(&want,
		    "GET / HTTP/1.0\r\nHost: loop.test:%d\r\n"
		    "Connection: close\r\n\r\n",
		    o.port);
	assert_string_equal(o.got.buf, want.buf);
	origin_end(&o);

	/* an IPv4-mapped literal is that IPv4 address, on the list too */
	origin_listen(&o);
	strbuf_reset(&req);
	strbuf_addf(&req, "GET http://[::FFFF:127.0.0.1]:%d/x HTTP/1.1\r\n\r\n",
		    o.port);
	strbuf_reset(&list);
	strbuf_addf(&list, "127.0.0.1:%d", o.port);
	assert_int_equal(egress_policy_add(&p, list.buf), 0);
	o.response = response;
	origin_start(&o);
	http_through(&p, req.buf, &out);
	pthread_join(o.thread, NULL);
	assert_string_equal(out.buf, response);
	strbuf_reset(&want);
	strbuf_addf(&want,
		    "GET /x HTTP/1.1\r\nHost: [::ffff:127.0.0.1]:%d\r\n"
		    "Connection: close\r\n\r\n",
		    o.port);
	assert_string_equal(o.got.buf, want.buf);
	origin_end(&o);

	egress_policy_release(&p);
	strbuf_release(&list);
	strbuf_release(&req);
	strbuf_release(&out);
	strbuf_release(&want);
}

static void test_http_denied(void **state)
{
	struct egress_policy p;
	struct origin o;
	struct strbuf req = STRBUF_INIT, out = STRBUF_INIT;
	struct strbuf msg = STRBUF_INIT, list = STRBUF_INIT;
	int dead = dead_port();

	origin_listen(&o);
	egress_policy_init(&p);
	/* not on the list: the exact reason phrase, nobody connected */
	strbuf_addf(&req, "GET http://127.0.0.1:%d/ HTTP/1.1\r\n\r\n", o.port);
	http_through(&p, req.buf, &out);
	strbuf_addf(&msg,
		    "gosbx: 127.0.0.1:%d is not on the sandbox's allow-list; "
		    "pass --allow-net=127.0.0.1:%d",
		    o.port, o.port);
	assert_reply(&out, 403, msg.buf);
	origin_untouched(&o);
	drain_log(&out);
	strbuf_reset(&msg);
	strbuf_addf(&msg,
		    "msg=\"net deny\" via=http host=127.0.0.1 port=%d "
		    "why=\"not on the allow-list\"\n",
		    o.port);
	assert_non_null(strstr(out.buf, msg.buf));

	/* ports 80 and 443 suggest the host alone */
	http_through(&p, "GET http://[::1]/x HTTP/1.1\r\n\r\n", &out);
	assert_reply(&out, 403,
		     "gosbx: [::1]:80 is not on the sandbox's allow-list; "
		     "pass --allow-net=[::1]");
	http_through(&p, "CONNECT Example.ORG:443 HTTP/1.1\r\n\r\n", &out);
	assert_reply(&out, 403,
		     "gosbx: example.org:443 is not on the sandbox's "
		     "allow-list; pass --allow-net=example.org");
	assert_false(was_resolved("example.org"));

	/* a name on the list for another port is never resolved */
	strbuf_addf(&list, "loop.test:%d", o.port);
	assert_int_equal(egress_policy_add(&p, list.buf), 0);
	http_through(&p, "CONNECT loop.test:443 HTTP/1.1\r\n\r\n", &out);
	assert_reply(&out, 403,
		     "gosbx: loop.test:443 is not on the sandbox's "
		     "allow-list; pass --allow-net=loop.test");
	assert_false(was_resolved("loop.test"));

	/* on the list, but it resolves to loopback */
	strbuf_reset(&req);
	strbuf_addf(&req, "CONNECT loop.test:%d HTTP/1.1\r\n\r\n", o.port);
	http_through(&p, req.buf, &out);
	strbuf_reset(&msg);
	strbuf_addf(&msg,
		    "gosbx: loop.test resolves to 127.0.0.1, a private "
		    "address; pass --allow-net=127.0.0.1:%d to allow it",
		    o.port);
	assert_reply(&out, 403, msg.buf);
	assert_true(was_resolved("loop.test"));
	origin_untouched(&o);
	drain_log(&out);
	strbuf_reset(&msg);
	strbuf_addf(&msg,
		    "msg=\"net deny\" via=connect host=loop.test port=%d "
		    "addr=127.0.0.1 why=\"resolves to a private address\"\n",
		    o.port);
	assert_non_null(strstr(out.buf, msg.buf));

	/* an allowed name that does not resolve; a port that refuses */
	assert_int_equal(egress_policy_add(&p, "nxdomain.test"), 0);
	http_through(&p, "GET http://nxdomain.test/ HTTP/1.1\r\n\r\n", &out);
	assert_reply(&out, 502,
		     "gosbx: cannot resolve nxdomain.test: Name or service "
		     "not known");
	strbuf_reset(&list);
	strbuf_addf(&list, "127.0.0.1:%d", dead);
	assert_int_equal(egress_policy_add(&p, list.buf), 0);
	strbuf_reset(&req);
	strbuf_addf(&req, "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", dead);
	http_through(&p, req.buf, &out);
	strbuf_reset(&msg);
	strbuf_addf(&msg,
		    "gosbx: cannot connect to 127.0.0.1:%d: Connection "
		    "refused",
		    dead);
	assert_reply(&out, 502, msg.buf);

	origin_untouched(&o);
	origin_end(&o);
	egress_policy_release(&p);
	strbuf_release(&req);
	strbuf_release(&out);
	strbuf_release(&msg);
	strbuf_release(&list);
}

static void test_http_bad(void **state)
{
	static const struct {
		const char *req, *msg;
	} bad[] = {
		{ "GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n",
		  "gosbx: not a proxy request: the target must be "
		  "http://host[:port]/path, or CONNECT host:port" },
		{ "GET ftp://127.0.0.1/ HTTP/1.1\r\n\r\n",
		  "gosbx: not a proxy request: the target must be "
		  "http://host[:port]/path, or CONNECT host:port" },
		{ "GET https://127.0.0.1/ HTTP/1.1\r\n\r\n",
		  "gosbx: an https:// URL goes through CONNECT, not as a "
		  "plain proxy request" },
		{ "GET http://u:p@127.0.0.1/ HTTP/1.1\r\n\r\n",
		  "gosbx: userinfo in a proxy URL is not allowed" },
		{ "GET http://0x7f.1/ HTTP/1.1\r\n\r\n",
		  "gosbx: bad host in the URL: not a valid IPv4 address (a "
		  "dotted quad)" },
		{ "GET http://127.0.0.1:0/ HTTP/1.1\r\n\r\n",
		  "gosbx: bad host in the URL: the port is not a number in "
		  "1..65535" },
		{ "GET http:///x HTTP/1.1\r\n\r\n",
		  "gosbx: bad host in the URL: empty host" },
		{ "CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n",
		  "gosbx: bad CONNECT target: no port" },
		{ "CONNECT ::1:443 HTTP/1.1\r\n\r\n",
		  "gosbx: bad CONNECT target: an IPv6 address with a port goes "
		  "in brackets" },
		{ "CONNECT [::1]443 HTTP/1.1\r\n\r\n",
		  "gosbx: bad CONNECT target: bytes after ']' that are not a "
		  "port" },
		{ "CONNECT exa%6dple.org:443 HTTP/1.1\r\n\r\n",
		  "gosbx: bad CONNECT target: a host name holds only letters, "
		  "digits, '-', '_' and '.'" },
	};
	struct egress_policy p;
	struct strbuf out = STRBUF_INIT;
	size_t i;

	egress_policy_init(&p);
	assert_int_equal(egress_policy_add(&p, "127.0.0.1,[::1]"), 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		http_through(&p, bad[i].req, &out);
		assert_reply(&out, 400, bad[i].msg);
	}
	assert_false(was_resolved("0x7f.1"));
	egress_policy_release(&p);
	strbuf_release(&out);
}

static void test_connect_tunnel(void **state)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	struct egress_policy p;
	struct origin o;
	struct proxy x;
	struct strbuf req = STRBUF_INIT, list = STRBUF_INIT;
	struct strbuf out = STRBUF_INIT;
	char buf[64];
	int c;

	origin_listen(&o);
	o.echo = 1;
	egress_policy_init(&p);
	/* the name resolves to 10.0.0.1 (not listed) then 127.0.0.1 */
	strbuf_addf(&list, "rebind.test:%d,127.0.0.1:%d", o.port, o.port);
	assert_int_equal(egress_policy_add(&p, list.buf), 0);
	origin_start(&o);
	c = proxy_start(&x, &p, 0);
	/* bytes after the head go to the origin first */
	strbuf_addf(&req, "CONNECT rebind.test:%d HTTP/1.1\r\n\r\nearly",
		    o.port);
	send_str(c, req.buf);
	recv_exact(c, buf, strlen(ok));
	assert_memory_equal(buf, ok, strlen(ok));
	recv_exact(c, buf, 5);
	assert_memory_equal(buf, "early", 5);
	send_str(c, "hello");
	recv_exact(c, buf, 5);
	assert_memory_equal(buf, "hello", 5);
	/* half-close: the origin sees EOF, then ends, and so do we */
	assert_int_equal(shutdown(c, SHUT_WR), 0);
	recv_all(c, &out);
	assert_int_equal(out.len, 0);
	pthread_join(x.thread, NULL);
	pthread_join(o.thread, NULL);
	close(c);
	assert_string_equal(o.got.buf, "earlyhello");
	drain_log(&out);
	strbuf_reset(&req);
	strbuf_addf(&req,
		    "msg=\"net allow\" via=connect host=rebind.test port=%d "
		    "addr=127.0.0.1\n",
		    o.port);
	assert_non_null(strstr(out.buf, req.buf));
	assert_non_null(strstr(out.buf, "bytes_up=10 bytes_down=10\n"));
	origin_end(&o);
	egress_policy_release(&p);
	strbuf_release(&req);
	strbuf_release(&list);
	strbuf_release(&out);
}

/* a SOCKS5 exchange: greeting, then request; the reply code or -1 */
static int socks_connect(int c, const unsigned char *req, size_t len)
{
	unsigned char r[10];

	assert_int_equal(write_in_full(c, "\5\1\0", 3), 3);
	recv_exact(c, r, 2);
	assert_int_equal(r[0], 5);
	assert_int_equal(r[1], 0);
	assert_int_equal(write_in_full(c, req, len), (ssize_t)len);
	recv_exact(c, r, 10);
	assert_int_equal(r[0], 5);
	/* BND.ADDR tells nothing */
	assert_memory_equal(r + 2, "\0\1\0\0\0\0\0\0", 8);
	return r[1];
}

static size_t socks_req_v4(unsigned char *b, const char *ip, int port)
{
	memcpy(b, "\5\1\0\1", 4);
	inet_pton(AF_INET, ip, b + 4);
	b[8] = port >> 8;
	b[9] = port & 0xff;
	return 10;
}

static size_t socks_req_name(unsigned char *b, const char *name, int port)
{
	size_t n = strlen(name);

	memcpy(b, "\5\1\0\3", 4);
	b[4] = n;
	memcpy(b + 5, name, n);
	b[5 + n] = port >> 8;
	b[6 + n] = port & 0xff;
	return 7 + n;
}

/* one SOCKS5 request through the proxy that is answered and closed */
static int socks_once(const struct egress_policy *p, const unsigned char *b,
		      size_t len)
{
	struct proxy x;
	struct strbuf rest = STRBUF_INIT;
	int c = proxy_start(&x, p, 1), code;

	code = socks_connect(c, b, len);
	recv_all(c, &rest);
	assert_int_equal(rest.len, 0);
	pthread_join(x.thread, NULL);
	close(c);
	strbuf_release(&rest);
	return code;
}

static void test_socks5(void **state)
{
	struct egress_policy p;
	struct origin o;
	struct proxy x;
	struct strbuf list = STRBUF_INIT, out = STRBUF_INIT;
	unsigned char b[300], pipelined[320];
	char buf[8];
	size_t n;
	int c, dead = dead_port();

	origin_listen(&o);
	o.echo = 1;
	egress_policy_init(&p);
	strbuf_addf(&list, "127.0.0.1:%d", o.port);
	assert_int_equal(egress_policy_add(&p, list.buf), 0);

	/* allowed; the client sends everything at once (no round trips) */
	origin_start(&o);
	c = proxy_start(&x, &p, 1);
	memcpy(pipelined, "\5\2\2\0", 4);
	n = 4 + socks_req_v4(pipelined + 4, "127.0.0.1", o.port);
	memcpy(pipelined + n, "ping", 4);
	assert_int_equal(write_in_full(c, pipelined, n + 4), (ssize_t)n + 4);
	recv_exact(c, b, 12);
	assert_memory_equal(b, "\5\0\5\0\0\1\0\0\0\0\0\0", 12);
	recv_exact(c, buf, 4);
	assert_memory_equal(buf, "ping", 4);
	assert_int_equal(shutdown(c, SHUT_WR), 0);
	recv_all(c, &out);
	assert_int_equal(out.len, 0);
	pthread_join(x.thread, NULL);
	pthread_join(o.thread, NULL);
	close(c);
	assert_string_equal(o.got.buf, "ping");
	drain_log(&out);
	strbuf_reset(&list);
	strbuf_addf(&list,
		    "msg=\"net allow\" via=socks5 host=127.0.0.1 port=%d "
		    "addr=127.0.0.1\n",
		    o.port);
	assert_non_null(strstr(out.buf, list.buf));

	/* denied: not listed, a name not listed (never resolved) */
	assert_int_equal(socks_once(&p, b, socks_req_v4(b, "127.0.0.1", 22)),
			 2);
	assert_int_equal(
		socks_once(&p, b, socks_req_name(b, "exfil.evil.test", 443)),
		2);
	assert_false(was_resolved("exfil.evil.test"));
	/* a name that resolves to a special address only */
	strbuf_reset(&list);
	strbuf_addf(&list, "loop.test:8443,nxdomain.test,127.0.0.1:%d", dead);
	assert_int_equal(egress_policy_add(&p, list.buf), 0);
	assert_int_equal(
		socks_once(&p, b, socks_req_name(b, "loop.test", 8443)), 2);
	assert_true(was_resolved("loop.test"));
	assert_int_equal(
		socks_once(&p, b, socks_req_name(b, "nxdomain.test", 443)), 4);
	assert_int_equal(socks_once(&p, b, socks_req_v4(b, "127.0.0.1", dead)),
			 5);
	/* bad names and port 0 */
	assert_int_equal(socks_once(&p, b, socks_req_name(b, "0x7f.1", 80)), 2);
	assert_int_equal(socks_once(&p, b, socks_req_name(b, "", 80)), 2);
	assert_int_equal(socks_once(&p, b, socks_req_v4(b, "127.0.0.1", 0)), 2);
	n = socks_req_name(b, "loop.test", 8443);
	b[6] = '\0';
	assert_int_equal(socks_once(&p, b, n), 2);
	/* IPv6 */
	memcpy(b, "\5\1\0\4", 4);
	inet_pton(AF_INET6, "::1", b + 4);
	b[20] = 0;
	b[21] = 80;
	assert_int_equal(socks_once(&p, b, 22), 2);
	/* BIND and UDP ASSOCIATE; an unknown address type */
	memcpy(b, "\5\2\0\1", 4);
	assert_int_equal(socks_once(&p, b, 4), 7);
	memcpy(b, "\5\3\0\1", 4);
	assert_int_equal(socks_once(&p, b, 4), 7);
	memcpy(b, "\5\1\0\5", 4);
	assert_int_equal(socks_once(&p, b, 4), 8);
	origin_untouched(&o);

	/* no method 0x00 offered: 0xFF, and the end */
	c = proxy_start(&x, &p, 1);
	assert_int_equal(write_in_full(c, "\5\1\2", 3), 3);
	strbuf_reset(&out);
	recv_all(c, &out);
	assert_int_equal(out.len, 2);
	assert_memory_equal(out.buf, "\5\377", 2);
	pthread_join(x.thread, NULL);
	close(c);
	/* another version, or a client that goes away: nothing */
	c = proxy_start(&x, &p, 1);
	assert_int_equal(write_in_full(c, "\4\1\0\120", 4), 4);
	strbuf_reset(&out);
	recv_all(c, &out);
	assert_int_equal(out.len, 0);
	pthread_join(x.thread, NULL);
	close(c);
	c = proxy_start(&x, &p, 1);
	assert_int_equal(write_in_full(c, "\5\1\0\5\1\0", 6), 6);
	shutdown(c, SHUT_WR);
	strbuf_reset(&out);
	recv_all(c, &out);
	assert_int_equal(out.len, 2);
	pthread_join(x.thread, NULL);
	close(c);

	origin_end(&o);
	egress_policy_release(&p);
	strbuf_release(&list);
	strbuf_release(&out);
}

/*
 * A big transfer through a tunnel whose client reads slowly at first:
 * everything arrives, in order, whatever the buffers.
 */
struct sink {
	int fd;
	size_t want;
	uint64_t sum;
	size_t got;
};

static void *sink_run(void *arg)
{
	struct sink *s = arg;
	unsigned char buf[65536];
	ssize_t n;

	while (s->got < s->want && (n = read(s->fd, buf, sizeof(buf))) > 0) {
		ssize_t i;

		for (i = 0; i < n; i++)
			s->sum = s->sum * 31 + buf[i];
		s->got += n;
	}
	return NULL;
}

static void test_relay_bulk(void **state)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	enum { TOTAL = 8 << 20 };
	struct egress_policy p;
	struct origin o;
	struct proxy x;
	struct sink s = { 0 };
	struct strbuf list = STRBUF_INIT, req = STRBUF_INIT;
	unsigned char *data = xmalloc(TOTAL);
	uint64_t sum = 0;
	pthread_t reader;
	char buf[64];
	size_t i;
	int c;

	for (i = 0; i < TOTAL; i++) {
		data[i] = (i * 7 + i / 4096) & 0xff;
		sum = sum * 31 + data[i];
	}
	origin_listen(&o);
	o.echo = 1;
	egress_policy_init(&p);
	strbuf_addf(&list, "127.0.0.1:%d", o.port);
	assert_int_equal(egress_policy_add(&p, list.buf), 0);
	origin_start(&o);
	c = proxy_start(&x, &p, 0);
	strbuf_addf(&req, "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", o.port);
	send_str(c, req.buf);
	recv_exact(c, buf, strlen(ok));
	s.fd = c;
	s.want = TOTAL;
	assert_int_equal(pthread_create(&reader, NULL, sink_run, &s), 0);
	assert_int_equal(write_in_full(c, data, TOTAL), TOTAL);
	pthread_join(reader, NULL);
	assert_int_equal(s.got, TOTAL);
	assert_true(s.sum == sum);
	shutdown(c, SHUT_WR);
	pthread_join(x.thread, NULL);
	pthread_join(o.thread, NULL);
	close(c);
	assert_int_equal(o.got.len, TOTAL);
	origin_end(&o);
	egress_policy_release(&p);
	strbuf_release(&list);
	strbuf_release(&req);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_policy_good),	T(test_policy_bad),
		T(test_match),		T(test_addr_special),
		T(test_addr_allowed),	T(test_dns_answers),
		T(test_dns_malformed),	T(test_http_forward),
		T(test_http_denied),	T(test_http_bad),
		T(test_connect_tunnel), T(test_socks5),
		T(test_relay_bulk),
#undef T
	};

	/* a watchdog: a handler that hangs fails the run */
	alarm(300);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
