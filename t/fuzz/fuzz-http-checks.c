/*
 * libFuzzer harness: the request checks of gosbx's HTTP servers
 * against web pages (lib/http-checks.c), fed header values a client
 * chose. The input is one letter, a newline, and a header value:
 * O Origin, H Host, L an --allow-host list, C Content-Type, A
 * Authorization. Properties: nothing crashes or reads out of bounds;
 * an allowed Origin is of this machine; an allowed Host is an address or
 * localhost when no name is listed; a parsed list holds only names of the
 * allowed characters; the bearer check agrees with a plain comparison.
 */
#include "compat.h"
#include "http-checks.h"
#include "strbuf.h"
#include "strvec.h"

#include <ctype.h>
#include <stdint.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const allowed[] = { "sbx.example", "*.svc.cluster.local",
				       NULL };

static void check_origin(const char *v)
{
	if (http_origin_local(v) && !starts_with(v, "http://") &&
	    !starts_with(v, "https://"))
		abort();
}

static void check_host(const char *v)
{
	/* without a list: only an address literal or localhost */
	if (*v && http_host_allowed(v, NULL) && *v != '[' &&
	    !isdigit((unsigned char)*v) && strncasecmp(v, "localhost", 9))
		abort();
	/* a listed suffix never admits a name that merely ends like it */
	if (http_host_allowed(v, allowed) &&
	    ends_with(v, "svc.cluster.local") &&
	    !ends_with(v, ".svc.cluster.local"))
		abort();
}

static void check_list(const char *v)
{
	struct strvec sv = STRVEC_INIT;

	if (!http_host_list_parse(v, &sv))
		for (size_t i = 0; i < sv.nr; i++)
			for (const char *p = sv.v[i]; *p; p++)
				if (!islower((unsigned char)*p) &&
				    !isdigit((unsigned char)*p) && *p != '-' &&
				    *p != '.' && *p != '*')
					abort();
	strvec_clear(&sv);
}

static void check_bearer(const char *v)
{
	const char *tok = "t0ken";
	int ok = http_bearer_ok(v, tok);
	struct strbuf want = STRBUF_INIT;
	const char *p = v;

	if (!strncasecmp(p, "Bearer ", 7)) {
		p += 7;
		while (*p == ' ')
			p++;
		strbuf_addstr(&want, p);
		strbuf_rtrim(&want);
		/* rtrim removes tabs too; the check trims spaces only */
		if (ok && strcmp(want.buf, tok))
			abort();
	} else if (ok) {
		abort();
	}
	strbuf_release(&want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf in = STRBUF_INIT;
	const char *v;

	if (size < 2 || size > 4096 || data[1] != '\n')
		return 0;
	strbuf_add(&in, data + 2, size - 2);
	if (strlen(in.buf) != in.len)
		goto out; /* libmicrohttpd hands us C strings */
	v = in.buf;
	switch (data[0]) {
	case 'O':
		check_origin(v);
		break;
	case 'H':
		check_host(v);
		break;
	case 'L':
		check_list(v);
		break;
	case 'C':
		http_content_type_is(v, "application/json");
		break;
	case 'A':
		check_bearer(v);
		break;
	}
out:
	strbuf_release(&in);
	return 0;
}
