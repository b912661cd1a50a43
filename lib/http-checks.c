/*
 * Request checks against web pages (http-checks.h).
 */
#include "compat.h"
#include "http-checks.h"
#include "strvec.h"
#include "usage.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <strings.h>

int http_origin_local(const char *o)
{
	static const char *const hosts[] = { "localhost", "127.0.0.1",
					     "[::1]" };
	const char *rest;

	if (!o)
		return 0;
	if (!skip_prefix(o, "http://", &rest) &&
	    !skip_prefix(o, "https://", &rest))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(hosts); i++) {
		const char *p;

		if (!skip_prefix(rest, hosts[i], &p))
			continue;
		if (!*p || (*p == '/' && !p[1]))
			return 1;
		if (*p != ':' || !p[1])
			return 0;
		for (p++; *p; p++)
			if (*p < '0' || *p > '9')
				return *p == '/' && !p[1];
		return 1;
	}
	return 0;
}

/* the host of a Host value (no port, no trailing dot) into out; 0 or -1 */
static int host_name(const char *host, char *out, size_t size)
{
	const char *end, *port;
	size_t n;

	if (*host == '[') {
		end = strchr(host, ']');
		if (!end || (end[1] && end[1] != ':'))
			return -1;
		n = (size_t)(end - host) + 1;
	} else {
		end = strchr(host, ':');
		n = end ? (size_t)(end - host) : strlen(host);
	}
	if (!n || n >= size)
		return -1;
	/* RFC 9110 section 7.2: Host = uri-host [ ":" port ], port digits */
	port = host + n;
	if (*port == ':')
		for (port++; *port; port++)
			if (*port < '0' || *port > '9')
				return -1;
	memcpy(out, host, n);
	out[n] = '\0';
	if (n > 1 && out[n - 1] == '.')
		out[n - 1] = '\0';
	return 0;
}

static int is_address_literal(const char *name)
{
	unsigned char buf[16];
	char v6[64];
	size_t n = strlen(name);

	if (inet_pton(AF_INET, name, buf) == 1)
		return 1;
	if (n < 3 || name[0] != '[' || name[n - 1] != ']' ||
	    n - 2 >= sizeof(v6))
		return 0;
	memcpy(v6, name + 1, n - 2);
	v6[n - 2] = '\0';
	return inet_pton(AF_INET6, v6, buf) == 1;
}

/* name matches pattern: exact, or "*.suffix" for names below suffix */
static int host_matches(const char *name, const char *pattern)
{
	size_t n = strlen(name), pn;

	if (!strncmp(pattern, "*.", 2)) {
		pattern += 1; /* ".suffix" */
		pn = strlen(pattern);
		return n > pn && !strcasecmp(name + n - pn, pattern);
	}
	return !strcasecmp(name, pattern);
}

int http_host_allowed(const char *host, const char *const *allowed)
{
	char name[256];

	if (!host || !*host)
		return 1;
	if (host_name(host, name, sizeof(name)) < 0)
		return 0;
	if (is_address_literal(name) || !strcasecmp(name, "localhost"))
		return 1;
	for (size_t i = 0; allowed && allowed[i]; i++)
		if (host_matches(name, allowed[i]))
			return 1;
	return 0;
}

static int valid_host_pattern(const char *s)
{
	const char *p = s;

	if (!strncmp(p, "*.", 2))
		p += 2;
	if (!*p || *p == '.' || *p == '-')
		return 0;
	for (; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.')
			return 0;
	return strlen(s) < 254;
}

int http_host_list_parse(const char *list, struct strvec *out)
{
	struct strbuf item = STRBUF_INIT;
	const char *p = list;
	int ret = 0;

	while (p && *p && !ret) {
		const char *comma = strchrnul(p, ',');

		strbuf_reset(&item);
		strbuf_add(&item, p, (size_t)(comma - p));
		strbuf_trim(&item);
		for (size_t i = 0; i < item.len; i++)
			item.buf[i] = (char)tolower((unsigned char)item.buf[i]);
		if (item.len && item.buf[item.len - 1] == '.')
			strbuf_setlen(&item, item.len - 1);
		if (!valid_host_pattern(item.buf))
			ret = error("invalid host name '%s' in the allow-list "
				    "(expected a name or *.name)",
				    item.buf);
		else
			strvec_push(out, item.buf);
		p = *comma ? comma + 1 : comma;
	}
	strbuf_release(&item);
	return ret;
}

int http_content_type_is(const char *ct, const char *type)
{
	size_t n = strlen(type);

	if (!ct)
		return 0;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	if (strncasecmp(ct, type, n))
		return 0;
	ct += n;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	return !*ct || *ct == ';';
}

int http_bearer_ok(const char *auth, const char *token)
{
	size_t n, tn = strlen(token);
	unsigned diff;

	if (!auth || strncasecmp(auth, "Bearer ", 7))
		return 0;
	auth += 7;
	while (*auth == ' ')
		auth++;
	n = strlen(auth);
	while (n && auth[n - 1] == ' ')
		n--;
	/* constant time over the token's length */
	diff = n != tn;
	for (size_t i = 0; i < tn; i++)
		diff |= (unsigned)(token[i] ^ (i < n ? auth[i] : 0));
	return !diff;
}

int http_token_read(const char *path, struct strbuf *out)
{
	strbuf_reset(out);
	if (strbuf_read_file(out, path, 128) < 0)
		return error_errno("cannot read token file '%s'", path);
	strbuf_trim(out);
	if (!out->len)
		return error("token file '%s' is empty", path);
	if (strchr(out->buf, '\n'))
		return error("token file '%s' holds more than one line", path);
	return 0;
}
