#include "compat.h"
#include "session/websocket.h"
#include "http.h"
#include "json.h"
#include "usage.h"

#include <poll.h>
#include <strings.h>

#include <curl/curl.h>

/* the answer's head, and the body of a refused upgrade that is kept */
#define WS_MAX_HEAD (64 * 1024)
#define WS_DEFAULT_TIMEOUT_MS 30000

/* The value of header name in the head (lines after the status), or NULL. */
static char *head_value(const char *head, const char *name)
{
	size_t nl = strlen(name);
	const char *p = strstr(head, "\r\n");

	while (p && p[2]) {
		const char *line = p + 2, *end = strstr(line, "\r\n");

		if (!end)
			break;
		if (!strncasecmp(line, name, nl) && line[nl] == ':') {
			const char *v = line + nl + 1, *e = end;

			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			return xstrndup(v, e - v);
		}
		p = end;
	}
	return NULL;
}

/* Wait for events on ws->sock until the deadline; 0 ready, -1 not. */
static int wait_sock(struct ws_client *ws, short events, uint64_t deadline,
		     volatile sig_atomic_t *cancel)
{
	for (;;) {
		struct pollfd p = { .fd = ws->sock, .events = events };
		uint64_t now = monotonic_ms();
		int r;

		if (cancel && *cancel)
			return error("cancelled");
		if (now >= deadline)
			return -2; /* the caller says what was late */
		r = poll(&p, 1, deadline - now > 250 ? 250 : deadline - now);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return error_errno("poll");
	}
}

static int send_all(struct ws_client *ws, const char *buf, size_t len,
		    uint64_t deadline, volatile sig_atomic_t *cancel)
{
	while (len) {
		size_t n = 0;
		CURLcode rc = curl_easy_send(ws->curl, buf, len, &n);

		if (rc == CURLE_AGAIN) {
			int r = wait_sock(ws, POLLOUT, deadline, cancel);

			if (r == -2)
				return error("the WebSocket upgrade could not "
					     "be sent in time");
			if (r < 0)
				return -1;
			continue;
		}
		if (rc != CURLE_OK)
			return error("cannot send the WebSocket upgrade: %s",
				     curl_easy_strerror(rc));
		buf += n;
		len -= n;
	}
	return 0;
}

/* One read into sb: 0, 1 at EOF, -1 with error(). */
static int recv_more(struct ws_client *ws, struct strbuf *sb, uint64_t deadline,
		     volatile sig_atomic_t *cancel)
{
	char buf[4096];

	for (;;) {
		size_t n = 0;
		CURLcode rc = curl_easy_recv(ws->curl, buf, sizeof(buf), &n);

		if (rc == CURLE_AGAIN) {
			int r = wait_sock(ws, POLLIN, deadline, cancel);

			if (r < 0)
				return r; /* -2: the deadline passed */
			continue;
		}
		if (rc != CURLE_OK)
			return error("connection lost during the WebSocket "
				     "upgrade: %s",
				     curl_easy_strerror(rc));
		if (!n)
			return 1; /* EOF */
		strbuf_add(sb, buf, n);
		return 0;
	}
}

/* Does a chunked body (RFC 9112 section 7.1) hold its last chunk? */
static int last_chunk(const char *p, size_t len)
{
	return (len >= 5 && !memcmp(p, "0\r\n\r\n", 5)) ||
	       memmem(p, len, "\r\n0\r\n\r\n", 7);
}

/* The data of a chunked body, as far as it goes (bounded by len). */
static void dechunk(const char *p, size_t len, struct strbuf *out)
{
	const char *end = p + len;

	while (p < end) {
		char *q;
		unsigned long n = strtoul(p, &q, 16);
		const char *data = memmem(q, end - q, "\r\n", 2);

		if (!data || q == p || !n)
			break;
		data += 2;
		if (n > (size_t)(end - data))
			n = end - data;
		strbuf_add(out, data, n);
		p = data + n;
		if (end - p >= 2 && p[0] == '\r' && p[1] == '\n')
			p += 2;
	}
}

/* 0 with the bytes after the 101 answer in pre, 1 refused, -1 failed */
static int read_answer(struct ws_client *ws, const char *key, const char *proto,
		       uint64_t deadline, volatile sig_atomic_t *cancel,
		       struct strbuf *pre, double timeout_s)
{
	struct strbuf in = STRBUF_INIT, want = STRBUF_INIT;
	char *end, *accept = NULL, *got_proto = NULL, *upgrade = NULL;
	size_t hlen;
	int status, r, ret = -1;

	while (!(end = memmem(in.buf, in.len, "\r\n\r\n", 4))) {
		if (in.len > WS_MAX_HEAD) {
			error("the answer to the WebSocket upgrade has a "
			      "header over 64 KiB");
			goto out;
		}
		r = recv_more(ws, &in, deadline, cancel);
		if ((r == -2 || r > 0) && !in.len) {
			/*
			 * Not a byte back: a proxy on the way that holds or
			 * drops upgrades (the v0.4 sandbox-router with h11
			 * 0.16 cannot send a 101). Nothing was asked of the
			 * runtime yet: the caller may take another way.
			 */
			ws->no_answer = 1;
			strbuf_reset(&ws->body);
			strbuf_addf(&ws->body,
				    r > 0 ? "the connection was closed "
					    "without an answer to the "
					    "WebSocket upgrade"
					  : "no answer to the WebSocket "
					    "upgrade in %.0f s",
				    timeout_s);
			ret = 1;
			goto out;
		}
		if (r == -2)
			error("no answer to the WebSocket upgrade in time");
		if (r < 0)
			goto out;
		if (r > 0) {
			error("connection closed before the answer to the "
			      "WebSocket upgrade");
			goto out;
		}
	}
	hlen = end + 4 - in.buf;
	if (in.len < 12 || strncmp(in.buf, "HTTP/1.", 7) ||
	    sscanf(in.buf + 9, "%3d", &status) != 1) {
		error("malformed answer to the WebSocket upgrade");
		goto out;
	}
	end[2] = '\0';
	if (status != 101) {
		char *cl = head_value(in.buf, "Content-Length");
		char *te = head_value(in.buf, "Transfer-Encoding");
		size_t body_len = cl ? strtoul(cl, NULL, 10) : WS_MAX_HEAD;
		int chunked = te && !strcasecmp(te, "chunked");

		free(cl);
		free(te);
		if (body_len > WS_MAX_HEAD)
			body_len = WS_MAX_HEAD;
		/* the body (bounded): what a refusing server had to say */
		while (in.len - hlen < body_len &&
		       !(chunked && last_chunk(in.buf + hlen, in.len - hlen)) &&
		       !recv_more(ws, &in, deadline, cancel))
			;
		ws->status = status;
		strbuf_reset(&ws->body);
		if (chunked)
			dechunk(in.buf + hlen, in.len - hlen, &ws->body);
		else
			strbuf_add(&ws->body, in.buf + hlen,
				   in.len - hlen < body_len ? in.len - hlen
							    : body_len);
		ret = 1;
		goto out;
	}
	accept = head_value(in.buf, "Sec-WebSocket-Accept");
	got_proto = head_value(in.buf, "Sec-WebSocket-Protocol");
	upgrade = head_value(in.buf, "Upgrade");
	ws_accept_key(key, &want);
	if (!upgrade || strcasecmp(upgrade, "websocket")) {
		error("the server switched to protocol '%s', not websocket",
		      upgrade ? upgrade : "");
	} else if (!accept || strcmp(accept, want.buf)) {
		error("bad Sec-WebSocket-Accept in the answer to the "
		      "WebSocket upgrade");
	} else if (!got_proto || strcmp(got_proto, proto)) {
		error("the server chose WebSocket subprotocol '%s', not '%s'",
		      got_proto ? got_proto : "", proto);
	} else {
		strbuf_add(pre, in.buf + hlen, in.len - hlen);
		ret = 0;
	}
out:
	free(accept);
	free(got_proto);
	free(upgrade);
	strbuf_release(&in);
	strbuf_release(&want);
	return ret;
}

/* The transport of ws->conn (struct ws_transport) */
static ssize_t curl_read(void *ctx, void *buf, size_t len)
{
	struct ws_client *ws = ctx;
	size_t n = 0;
	CURLcode rc = curl_easy_recv(ws->curl, buf, len, &n);

	if (rc == CURLE_AGAIN)
		return WS_AGAIN;
	return rc == CURLE_OK ? (ssize_t)n : -1;
}

static ssize_t curl_write(void *ctx, const void *buf, size_t len, int more)
{
	struct ws_client *ws = ctx;
	size_t n = 0;
	CURLcode rc = curl_easy_send(ws->curl, buf, len, &n);

	if (rc == CURLE_AGAIN || (rc == CURLE_OK && !n))
		return WS_AGAIN;
	return rc == CURLE_OK ? (ssize_t)n : -1;
}

int ws_client_open(struct ws_client *ws, struct http_client *c,
		   const char *path, const char *proto,
		   const char *const *headers, long timeout_ms,
		   volatile sig_atomic_t *cancel, char *id_out, size_t max_msg,
		   ws_msg_fn on_msg, void *cb_data)
{
	static const char hex[] = "0123456789abcdef";
	const char *base = http_client_base_url(c), *p;
	struct strbuf url = STRBUF_INIT, req = STRBUF_INIT;
	struct strbuf key = STRBUF_INIT, host = STRBUF_INIT;
	struct strbuf prefix = STRBUF_INIT, pre = STRBUF_INIT;
	struct ws_transport t = { curl_read, curl_write, -1, ws };
	unsigned char rid[8];
	char errbuf[CURL_ERROR_SIZE] = "", id[17];
	uint64_t deadline;
	curl_socket_t s;
	CURLcode rc;
	CURL *h;
	int ret = -1;

	strbuf_init(&ws->body, 0);
	ws->sock = -1;
	ws->curl = NULL;
	ws->have_conn = 0;
	ws->status = 0;
	ws->no_answer = 0;
	deadline = monotonic_ms() +
		   (timeout_ms > 0 ? timeout_ms : WS_DEFAULT_TIMEOUT_MS);

	p = strstr(base, "://");
	if (!p) {
		error("bad base URL '%s'", base);
		goto out;
	}
	p += 3;
	strbuf_add(&host, p, strcspn(p, "/"));
	strbuf_addstr(&prefix, p + host.len);
	if (*path != '/')
		strbuf_addch(&prefix, '/');
	strbuf_addstr(&prefix, path);
	strbuf_addf(&url, "%s%s%s", base, *path == '/' ? "" : "/", path);

	ws->curl = h = curl_easy_init();
	if (!h) {
		error("cannot create a curl handle");
		goto out;
	}
	if (http_client_apply_transport(c, h) < 0)
		goto out;
	curl_easy_setopt(h, CURLOPT_URL, url.buf);
	curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	if (getenv("GOSBX_HTTP_TRACE"))
		curl_easy_setopt(h, CURLOPT_VERBOSE, 1L);
	rc = curl_easy_perform(h);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	if (rc != CURLE_OK) {
		error("cannot reach '%s': %s", base,
		      *errbuf ? errbuf : curl_easy_strerror(rc));
		goto out;
	}
	if (curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, &s) != CURLE_OK ||
	    s == CURL_SOCKET_BAD) {
		error("no socket from libcurl for '%s'", base);
		goto out;
	}
	ws->sock = s;

	if (ws_client_key(&key) < 0 || ws_random(rid, sizeof(rid)) < 0) {
		error_errno("getrandom");
		goto out;
	}
	for (int i = 0; i < 8; i++) {
		id[2 * i] = hex[rid[i] >> 4];
		id[2 * i + 1] = hex[rid[i] & 15];
	}
	id[16] = '\0';
	if (id_out)
		memcpy(id_out, id, sizeof(id));
	strbuf_addf(&req,
		    "GET %s HTTP/1.1\r\n"
		    "Host: %s\r\n"
		    "Connection: Upgrade\r\n"
		    "Upgrade: websocket\r\n"
		    "Sec-WebSocket-Version: 13\r\n"
		    "Sec-WebSocket-Key: %s\r\n"
		    "Sec-WebSocket-Protocol: %s\r\n"
		    "X-Request-ID: %s\r\n",
		    prefix.buf, host.buf, key.buf, proto, id);
	http_client_header_lines(c, &req);
	for (size_t i = 0; headers && headers[i]; i++)
		strbuf_addf(&req, "%s\r\n", headers[i]);
	strbuf_addstr(&req, "\r\n");
	if (send_all(ws, req.buf, req.len, deadline, cancel) < 0)
		goto out;
	ret = read_answer(
		ws, key.buf, proto, deadline, cancel, &pre,
		(timeout_ms > 0 ? timeout_ms : WS_DEFAULT_TIMEOUT_MS) / 1000.0);
	if (!ret) {
		t.fd = ws->sock;
		if (ws_conn_init(&ws->conn, WS_CLIENT, &t, max_msg, WS_COALESCE,
				 on_msg, cb_data) < 0) {
			ret = -1;
			goto out;
		}
		ws->have_conn = 1;
		ws_conn_preload(&ws->conn, pre.buf, pre.len);
	}
out:
	strbuf_release(&pre);
	strbuf_release(&url);
	strbuf_release(&req);
	strbuf_release(&key);
	strbuf_release(&host);
	strbuf_release(&prefix);
	return ret;
}

void ws_client_close(struct ws_client *ws)
{
	if (ws->have_conn)
		ws_conn_release(&ws->conn);
	ws->have_conn = 0;
	if (ws->curl)
		curl_easy_cleanup(ws->curl);
	ws->curl = NULL;
	ws->sock = -1;
	strbuf_release(&ws->body);
}
