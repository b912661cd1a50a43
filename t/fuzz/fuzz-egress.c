/*
 * libFuzzer harness: the allow-list of the egress proxy (lib/local/
 * egress.c). The first byte chooses the target, the rest is its input:
 *
 *   even: egress_policy_add() of the bytes as a list. Properties: a
 *         list that is accepted formats to a list that is accepted
 *         again and formats the same (normalisation is stable), and
 *         every entry without a wildcard allows its own host.
 *   odd:  egress_dns_reply() of the bytes as a query, for a fixed
 *         list. Properties: the reply fits the buffer, answers the
 *         query's id, its answers are within it and hold only
 *         addresses egress_addr_allowed() accepts, and no name off the
 *         list is ever resolved.
 *
 * getaddrinfo() is this file's: it aborts for a name not on the list
 * and answers every other with a fixed mix of public and special
 * addresses, so that nothing leaves the host.
 */
#include "compat.h"
#include "local/egress.h"
#include "log.h"
#include "strbuf.h"
#include "usage.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>

static struct egress_policy dns_policy;

static struct addrinfo *fake_ai(const char *text)
{
	struct addrinfo *ai =
		calloc(1, sizeof(*ai) + sizeof(struct sockaddr_in6));
	struct sockaddr_in *in4 = (void *)(ai + 1);
	struct sockaddr_in6 *in6 = (void *)(ai + 1);

	if (!ai)
		abort();
	ai->ai_socktype = SOCK_STREAM;
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
	return ai;
}

int getaddrinfo(const char *node, const char *service,
		const struct addrinfo *hints, struct addrinfo **res)
{
	static const char *const addrs[] = { "8.8.8.8",	 "127.0.0.1",
					     "10.0.0.1", "2001:4860::8888",
					     "::1",	 "::ffff:192.168.0.1" };
	struct addrinfo *head = NULL, **tail = &head;
	int family = hints ? hints->ai_family : AF_UNSPEC;
	size_t i;

	if (!node || !egress_host_allowed(&dns_policy, node, 0))
		abort(); /* a name off the list was resolved */
	for (i = 0; i < ARRAY_SIZE(addrs); i++) {
		struct addrinfo *ai = fake_ai(addrs[i]);

		if (family != AF_UNSPEC && family != ai->ai_family) {
			free(ai);
			continue;
		}
		*tail = ai;
		tail = &ai->ai_next;
	}
	*res = head;
	return head ? 0 : EAI_NODATA;
}

static void quiet(const char *prefix, const char *msg, void *data)
{
}

static void setup(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		abort();
	log_fd = fd;
	set_error_routine(quiet, NULL);
	egress_policy_init(&dns_policy);
	if (egress_policy_add(&dns_policy,
			      "*.example.org,localhost,"
			      "api.test:8443,127.0.0.1,[::1]:53") < 0)
		abort();
}

static void fuzz_policy(const char *list)
{
	struct egress_policy p, again;
	struct strbuf f1 = STRBUF_INIT, f2 = STRBUF_INIT;
	size_t i;

	egress_policy_init(&p);
	egress_policy_init(&again);
	if (egress_policy_add(&p, list) < 0) {
		if (!egress_policy_empty(&p))
			abort(); /* a bad list added something */
		goto out;
	}
	egress_policy_format(&p, &f1);
	if (egress_policy_add(&again, f1.buf) < 0)
		abort();
	egress_policy_format(&again, &f2);
	if (strcmp(f1.buf, f2.buf))
		abort();
	for (i = 0; i < p.nr; i++)
		if (!p.rules[i].wildcard &&
		    !egress_host_allowed(&p, p.rules[i].host,
					 p.rules[i].port ? p.rules[i].port
							 : 443))
			abort();
out:
	egress_policy_release(&p);
	egress_policy_release(&again);
	strbuf_release(&f1);
	strbuf_release(&f2);
}

/* the answers of r (len bytes) after its question: allowed addresses */
static void check_answers(const unsigned char *r, size_t len)
{
	size_t i = 12, k;

	/* the question: labels to the root, type and class */
	while (i < len && r[i])
		i += r[i] + 1;
	i += 5;
	if (r[4] << 8 | r[5]) {
		if (i > len)
			abort();
	} else {
		i = 12;
	}
	for (k = 0; k < (size_t)(r[6] << 8 | r[7]); k++) {
		struct sockaddr_storage ss = { 0 };
		struct sockaddr_in *in4 = (void *)&ss;
		struct sockaddr_in6 *in6 = (void *)&ss;
		size_t rdlen;

		if (i + 12 > len)
			abort();
		rdlen = r[i + 10] << 8 | r[i + 11];
		if (i + 12 + rdlen > len || (rdlen != 4 && rdlen != 16))
			abort();
		if (rdlen == 4) {
			in4->sin_family = AF_INET;
			memcpy(&in4->sin_addr, r + i + 12, 4);
		} else {
			in6->sin6_family = AF_INET6;
			memcpy(&in6->sin6_addr, r + i + 12, 16);
		}
		if (!egress_addr_allowed(&dns_policy, (struct sockaddr *)&ss,
					 0))
			abort();
		i += 12 + rdlen;
	}
	if (i != len)
		abort();
}

static void fuzz_dns(const unsigned char *q, size_t qlen)
{
	unsigned char out[512];
	size_t len = egress_dns_reply(&dns_policy, q, qlen, out, sizeof(out));

	if (!len)
		return;
	if (len > sizeof(out) || len < 12 || qlen < 12)
		abort();
	if (out[0] != q[0] || out[1] != q[1] || !(out[2] & 0x80))
		abort();
	check_answers(out, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct strbuf s = STRBUF_INIT;

	if (!ready) {
		setup();
		ready = 1;
	}
	if (!size || size > 4096)
		return 0;
	if (data[0] & 1) {
		fuzz_dns(data + 1, size - 1);
		return 0;
	}
	strbuf_add(&s, data + 1, size - 1);
	fuzz_policy(s.buf);
	strbuf_release(&s);
	return 0;
}
