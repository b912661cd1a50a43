/*
 * netd: the host side of a local sandbox's network (netd.h). The
 * request-head reader and the answers shared by the egress proxy
 * (egress.h) and the module proxy (modproxy.h), then the server loop.
 */
#include "compat.h"
#include "local/netd.h"
#include "log.h"
#include "strbuf.h"
#include "usage.h"

#include <ctype.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

void netd_head_init(struct netd_head *h)
{
	memset(h, 0, sizeof(*h));
	strvec_init(&h->names);
	strvec_init(&h->values);
	strbuf_init(&h->rest, 0);
}

void netd_head_release(struct netd_head *h)
{
	free(h->method);
	free(h->target);
	strvec_clear(&h->names);
	strvec_clear(&h->values);
	strbuf_release(&h->rest);
	netd_head_init(h);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* RFC 9110 5.6.2: tchar */
static int is_tchar(int c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int is_token(const char *s, size_t len)
{
	size_t i;

	if (!len)
		return 0;
	for (i = 0; i < len; i++)
		if (!is_tchar((unsigned char)s[i]))
			return 0;
	return 1;
}

/* a visible character or an obs-text byte (RFC 9112 3.2) */
static int is_target_char(int c)
{
	return c > 0x20 && c != 0x7f;
}

static int parse_request_line(const char *line, size_t len, struct netd_head *h)
{
	const char *sp1 = memchr(line, ' ', len), *sp2, *end = line + len;
	const char *p;

	if (!sp1 || !is_token(line, sp1 - line))
		return -1;
	sp2 = memchr(sp1 + 1, ' ', end - sp1 - 1);
	if (!sp2 || sp2 == sp1 + 1)
		return -1;
	for (p = sp1 + 1; p < sp2; p++)
		if (!is_target_char((unsigned char)*p))
			return -1;
	if (end - sp2 - 1 != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return -1;
	h->method = xstrndup(line, sp1 - line);
	h->target = xstrndup(sp1 + 1, sp2 - sp1 - 1);
	h->minor = sp2[8] - '0';
	return 0;
}

static int parse_field(const char *line, size_t len, struct netd_head *h)
{
	const char *colon = memchr(line, ':', len), *v, *e = line + len;
	const char *p;

	if (!colon || !is_token(line, colon - line))
		return -1;
	for (v = colon + 1; v < e && (*v == ' ' || *v == '\t'); v++)
		;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	for (p = v; p < e; p++)
		if (*p == '\0' || *p == '\r' || *p == '\n')
			return -1;
	strvec_pushf(&h->names, "%.*s", (int)(colon - line), line);
	strvec_pushf(&h->values, "%.*s", (int)(e - v), v);
	return 0;
}

/* split the head (without its final empty line) into h */
static int parse_head(const char *buf, size_t len, struct netd_head *h,
		      struct strbuf *why)
{
	const char *p = buf, *end = buf + len;
	int first = 1;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t l;

		if (!nl)
			nl = end;
		l = nl - p;
		if (l && p[l - 1] == '\r')
			l--;
		if (first) {
			if (parse_request_line(p, l, h) < 0) {
				strbuf_addstr(why, "malformed request line");
				return -1;
			}
			first = 0;
		} else if (l && (*p == ' ' || *p == '\t')) {
			/* obs-fold: RFC 9112 5.2 lets a proxy reject it */
			strbuf_addstr(why, "folded header field");
			return -1;
		} else if (parse_field(p, l, h) < 0) {
			strbuf_addstr(why, "malformed header field");
			return -1;
		}
		p = nl + 1;
	}
	if (first) {
		strbuf_addstr(why, "malformed request line");
		return -1;
	}
	return 0;
}

/* where the head ends in buf: the offset after "\n\r\n" or "\n\n" */
static size_t head_end(const char *buf, size_t len, size_t from)
{
	size_t i = from > 2 ? from - 2 : 0;

	for (; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

int netd_head_read(int fd, const char *start, size_t start_len,
		   struct netd_head *h, struct strbuf *why)
{
	struct strbuf buf = STRBUF_INIT;
	int64_t deadline = now_ms() + NETD_HEAD_TIMEOUT_MS;
	size_t end = 0, skip;
	int ret = -1;

	strbuf_add(&buf, start, start_len);
	while (!(end = head_end(buf.buf, buf.len, 0))) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t n;

		if (buf.len > NETD_HEAD_MAX) {
			strbuf_addf(why, "request head over %d bytes",
				    NETD_HEAD_MAX);
			goto out;
		}
		if (left <= 0 || poll(&pfd, 1, (int)left) == 0) {
			strbuf_addstr(why, "timed out");
			goto out;
		}
		strbuf_grow(&buf, 4096);
		n = recv(fd, buf.buf + buf.len, 4096, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			strbuf_addstr(why, "connection closed");
			goto out;
		}
		strbuf_setlen(&buf, buf.len + n);
	}
	if (end > NETD_HEAD_MAX + 4) {
		strbuf_addf(why, "request head over %d bytes", NETD_HEAD_MAX);
		goto out;
	}
	/* RFC 9112 2.2: empty lines before the request line are ignored */
	for (skip = 0;
	     skip < end && (buf.buf[skip] == '\r' || buf.buf[skip] == '\n');
	     skip++)
		;
	if (skip == end) {
		strbuf_addstr(why, "malformed request line");
		goto out;
	}
	{
		/* without the final empty line */
		size_t hl = end - skip;

		hl -= buf.buf[end - 2] == '\r' ? 3 : 2;
		if (parse_head(buf.buf + skip, hl, h, why) < 0)
			goto out;
	}
	strbuf_add(&h->rest, buf.buf + end, buf.len - end);
	ret = 0;
out:
	strbuf_release(&buf);
	return ret;
}

const char *netd_head_get(const struct netd_head *h, const char *name)
{
	size_t i;

	for (i = 0; i < h->names.nr; i++)
		if (!strcasecmp(h->names.v[i], name))
			return h->values.v[i];
	return NULL;
}

int netd_write_all(int fd, const void *buf, size_t len, int timeout_ms)
{
	const char *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		ssize_t n;
		int r = poll(&pfd, 1, timeout_ms);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (!r) {
			errno = ETIMEDOUT;
			return -1;
		}
		n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* a reason phrase holds no CR, LF or other control byte (RFC 9112 4) */
static void add_reason(struct strbuf *out, const char *reason)
{
	for (; *reason; reason++) {
		unsigned char c = *reason;

		strbuf_addch(out, c < 0x20 || c == 0x7f ? ' ' : c);
	}
}

int netd_reply(int fd, int code, const char *reason, const char *body)
{
	struct strbuf sb = STRBUF_INIT;
	size_t blen = body ? strlen(body) + 1 : 0;
	int ret;

	strbuf_addf(&sb, "HTTP/1.1 %03d ", code);
	add_reason(&sb, reason);
	strbuf_addf(&sb,
		    "\r\nContent-Type: text/plain; charset=utf-8\r\n"
		    "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		    blen);
	if (body) {
		strbuf_addstr(&sb, body);
		strbuf_addch(&sb, '\n');
	}
	ret = netd_write_all(fd, sb.buf, sb.len, NETD_HEAD_TIMEOUT_MS);
	strbuf_release(&sb);
	return ret;
}
