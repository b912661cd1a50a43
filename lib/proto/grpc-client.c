/*
 * gRPC over nghttp2's client session (lib/proto/grpc-client.h). A call
 * is a struct grpc_call hung on its stream (stream user data) and on the
 * connection's list; it keeps the answer's bytes until a whole message
 * (5-byte prefix + length) is there. A call closes once: its stream
 * closed (on_stream_close), or the connection broke (fail_all()).
 */
#include "compat.h"
#include "proto/grpc-client.h"
#include "usage.h"

#include <nghttp2/nghttp2.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

struct grpc_call {
	struct grpc_call *next;
	int stream_id;
	struct grpc_call_cb cb;
	struct strbuf req; /* the framed request message */
	size_t req_off;
	struct strbuf in; /* answer bytes not yet a whole message */
	int http_status;
	int has_status; /* grpc-status was in headers or trailers */
	int bad_content_type;
	int failed; /* our own status is set in st */
	struct grpc_status st;
};

struct grpc_conn {
	int fd;
	nghttp2_session *h2;
	char *authority;
	struct grpc_call *calls;
	int broken;
};

void grpc_status_init(struct grpc_status *st)
{
	st->code = GRPC_STATUS_UNKNOWN;
	strbuf_init(&st->message, 0);
}

void grpc_status_release(struct grpc_status *st)
{
	strbuf_release(&st->message);
}

static void call_fail(struct grpc_call *call, int code, const char *msg)
{
	if (call->failed)
		return;
	call->failed = 1;
	call->st.code = code;
	strbuf_reset(&call->st.message);
	strbuf_addstr(&call->st.message, msg);
}

static void call_unlink_free(struct grpc_conn *c, struct grpc_call *call)
{
	struct grpc_call **p;

	for (p = &c->calls; *p; p = &(*p)->next)
		if (*p == call) {
			*p = call->next;
			break;
		}
	strbuf_release(&call->req);
	strbuf_release(&call->in);
	grpc_status_release(&call->st);
	free(call);
}

static void call_close(struct grpc_conn *c, struct grpc_call *call)
{
	if (!call->failed && call->http_status != 200) {
		struct strbuf m = STRBUF_INIT;

		strbuf_addf(&m, "HTTP status %d from a gRPC server",
			    call->http_status);
		call_fail(call, GRPC_STATUS_UNAVAILABLE, m.buf);
		strbuf_release(&m);
	} else if (!call->failed && call->bad_content_type) {
		call_fail(call, GRPC_STATUS_UNKNOWN,
			  "answer is not application/grpc");
	} else if (!call->failed && !call->has_status) {
		call_fail(call, GRPC_STATUS_UNKNOWN,
			  "stream closed without grpc-status");
	} else if (!call->failed && call->in.len) {
		call_fail(call, GRPC_STATUS_INTERNAL,
			  "answer ended inside a message");
	}
	if (call->cb.on_close)
		call->cb.on_close(&call->st, call->cb.data);
	call_unlink_free(c, call);
}

static void fail_all(struct grpc_conn *c, const char *why)
{
	c->broken = 1;
	while (c->calls) {
		call_fail(c->calls, GRPC_STATUS_UNAVAILABLE, why);
		if (c->calls->stream_id > 0)
			nghttp2_session_set_stream_user_data(
				c->h2, c->calls->stream_id, NULL);
		call_close(c, c->calls);
	}
}

/* grpc-message is percent-encoded (PROTOCOL-HTTP2.md) */
static void percent_decode(struct strbuf *out, const uint8_t *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned v;
		char hex[3];

		if (s[i] == '%' && i + 2 < len) {
			hex[0] = s[i + 1];
			hex[1] = s[i + 2];
			hex[2] = 0;
			if (sscanf(hex, "%2x", &v) == 1) {
				strbuf_addch(out, (char)v);
				i += 2;
				continue;
			}
		}
		strbuf_addch(out, (char)s[i]);
	}
}

static int on_header(nghttp2_session *h2, const nghttp2_frame *frame,
		     const uint8_t *name, size_t namelen, const uint8_t *value,
		     size_t valuelen, uint8_t flags, void *user)
{
	struct grpc_call *call;

	if (frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	call = nghttp2_session_get_stream_user_data(h2, frame->hd.stream_id);
	if (!call)
		return 0;
	if (namelen == 7 && !memcmp(name, ":status", 7)) {
		call->http_status = (int)strtol((const char *)value, NULL, 10);
	} else if (namelen == 12 && !memcmp(name, "content-type", 12)) {
		if (valuelen < 16 || memcmp(value, "application/grpc", 16) ||
		    (valuelen > 16 && value[16] != '+' && value[16] != ';'))
			call->bad_content_type = 1;
	} else if (namelen == 11 && !memcmp(name, "grpc-status", 11)) {
		char *end;
		long v = strtol((const char *)value, &end, 10);

		call->has_status = 1;
		call->st.code =
			(end == (const char *)value || *end || v < 0 || v > 16)
				? GRPC_STATUS_UNKNOWN
				: (int)v;
	} else if (namelen == 12 && !memcmp(name, "grpc-message", 12)) {
		strbuf_reset(&call->st.message);
		percent_decode(&call->st.message, value, valuelen);
	}
	return 0;
}

/* hand whole messages of call->in to on_message; <0 to cancel */
static int deliver(struct grpc_call *call)
{
	size_t off = 0;
	int ret = 0;

	while (call->in.len - off >= 5) {
		const uint8_t *p = (const uint8_t *)call->in.buf + off;
		uint32_t n = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 |
			     (uint32_t)p[3] << 8 | p[4];

		if (p[0] != 0) {
			call_fail(call, GRPC_STATUS_INTERNAL,
				  "compressed message, none was negotiated");
			ret = -1;
			break;
		}
		if (n > GRPC_CLIENT_MESSAGE_LIMIT) {
			struct strbuf m = STRBUF_INIT;

			strbuf_addf(&m,
				    "message of %" PRIu32
				    " bytes over the limit of %u",
				    n, GRPC_CLIENT_MESSAGE_LIMIT);
			call_fail(call, GRPC_STATUS_INTERNAL, m.buf);
			strbuf_release(&m);
			ret = -1;
			break;
		}
		if (call->in.len - off - 5 < n)
			break;
		if (call->cb.on_message &&
		    call->cb.on_message(p + 5, n, call->cb.data) < 0) {
			call_fail(call, GRPC_STATUS_CANCELLED,
				  "cancelled by the client");
			ret = -1;
			break;
		}
		off += 5 + (size_t)n;
	}
	strbuf_remove(&call->in, 0, ret < 0 ? call->in.len : off);
	return ret;
}

static int on_data(nghttp2_session *h2, uint8_t flags, int32_t stream_id,
		   const uint8_t *data, size_t len, void *user)
{
	struct grpc_call *call =
		nghttp2_session_get_stream_user_data(h2, stream_id);

	if (!call || call->failed)
		return 0;
	strbuf_add(&call->in, data, len);
	if (deliver(call) < 0)
		nghttp2_submit_rst_stream(h2, NGHTTP2_FLAG_NONE, stream_id,
					  NGHTTP2_CANCEL);
	return 0;
}

static int on_stream_close(nghttp2_session *h2, int32_t stream_id,
			   uint32_t error_code, void *user)
{
	struct grpc_conn *c = user;
	struct grpc_call *call =
		nghttp2_session_get_stream_user_data(h2, stream_id);

	if (!call)
		return 0;
	if (error_code != NGHTTP2_NO_ERROR && !call->has_status) {
		struct strbuf m = STRBUF_INIT;

		strbuf_addf(&m, "stream reset by the server: %s",
			    nghttp2_http2_strerror(error_code));
		call_fail(call, GRPC_STATUS_UNAVAILABLE, m.buf);
		strbuf_release(&m);
	}
	nghttp2_session_set_stream_user_data(h2, stream_id, NULL);
	call_close(c, call);
	return 0;
}

static ssize_t read_req(nghttp2_session *h2, int32_t stream_id, uint8_t *buf,
			size_t length, uint32_t *flags,
			nghttp2_data_source *source, void *user)
{
	struct grpc_call *call = source->ptr;
	size_t n = call->req.len - call->req_off;

	if (n > length)
		n = length;
	memcpy(buf, call->req.buf + call->req_off, n);
	call->req_off += n;
	if (call->req_off == call->req.len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int flush(struct grpc_conn *c)
{
	for (;;) {
		const uint8_t *data;
		ssize_t n = nghttp2_session_mem_send(c->h2, &data);

		if (n < 0)
			return error("HTTP/2: %s", nghttp2_strerror((int)n));
		if (!n)
			return 0;
		if (write_in_full(c->fd, data, (size_t)n) < 0) {
			/* what it answered before it closed (not HTTP/2)
			 * is unread: the close is the news */
			if (errno == EPIPE || errno == ECONNRESET)
				return error_errno("the gRPC server closed "
						   "the connection");
			return error_errno("cannot write to the gRPC server");
		}
	}
}

/* "unix:<path>" (gRPC's name resolution syntax, naming.md) */
static int connect_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (!*path || strlen(path) >= sizeof(sa.sun_path)) {
		error("gRPC address 'unix:%s': not a socket path", path);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		error_errno("cannot connect to gRPC server 'unix:%s'", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int connect_tcp(const char *addr, int64_t timeout_ms)
{
	struct addrinfo hints = { 0 }, *ai = NULL, *p;
	struct strbuf host = STRBUF_INIT;
	const char *colon = strrchr(addr, ':'), *port;
	int fd = -1, err;

	if (!colon || !colon[1]) {
		error("gRPC address '%s' has no port", addr);
		return -1;
	}
	port = colon + 1;
	if (*addr == '[' && colon > addr && colon[-1] == ']')
		strbuf_add(&host, addr + 1, (size_t)(colon - addr - 2));
	else
		strbuf_add(&host, addr, (size_t)(colon - addr));
	hints.ai_socktype = SOCK_STREAM;
	err = getaddrinfo(host.buf, port, &hints, &ai);
	if (err) {
		error("cannot resolve '%s': %s", addr, gai_strerror(err));
		goto out;
	}
	for (p = ai; p; p = p->ai_next) {
		fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC,
			    p->ai_protocol);
		if (fd < 0)
			continue;
		if (timeout_ms > 0) {
			struct timeval tv = { .tv_sec = timeout_ms / 1000,
					      .tv_usec = timeout_ms % 1000 *
							 1000 };

			setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
				   sizeof(tv));
		}
		if (!connect(fd, p->ai_addr, p->ai_addrlen))
			break;
		err = errno;
		close(fd);
		fd = -1;
		errno = err;
	}
	if (fd < 0)
		error_errno("cannot connect to gRPC server '%s'", addr);
	else
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 },
			   sizeof(int));
out:
	if (ai)
		freeaddrinfo(ai);
	strbuf_release(&host);
	return fd;
}

struct grpc_conn *grpc_connect(const char *addr, const char *authority,
			       int64_t timeout_ms)
{
	nghttp2_session_callbacks *cbs;
	struct grpc_conn *c;
	const char *path;
	int fd = skip_prefix(addr, "unix:", &path)
			 ? connect_unix(path)
			 : connect_tcp(addr, timeout_ms);

	if (fd < 0)
		return NULL;
	c = xcalloc(1, sizeof(*c));
	c->fd = fd;
	c->authority = xstrdup(authority		    ? authority
			       : starts_with(addr, "unix:") ? "localhost"
							    : addr);
	if (nghttp2_session_callbacks_new(&cbs))
		die("out of memory");
	nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs,
							       on_stream_close);
	if (nghttp2_session_client_new(&c->h2, cbs, c))
		die("out of memory");
	nghttp2_session_callbacks_del(cbs);
	nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, NULL, 0);
	if (flush(c) < 0) {
		grpc_conn_free(c);
		return NULL;
	}
	return c;
}

void grpc_conn_free(struct grpc_conn *c)
{
	if (!c)
		return;
	fail_all(c, "connection closed by the client");
	nghttp2_session_del(c->h2);
	close(c->fd);
	free(c->authority);
	free(c);
}

int grpc_call_start(struct grpc_conn *c, const char *path, const void *req,
		    size_t len, const struct grpc_call_cb *cb)
{
	struct grpc_call *call;
	nghttp2_data_provider dp;
	uint8_t prefix[5];
	int32_t id;
	const nghttp2_nv hdrs[] = {
#define NV(n, v, vl)                                                           \
	{ (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl),                 \
	  NGHTTP2_NV_FLAG_NO_COPY_NAME }
		NV(":method", "POST", 4),
		NV(":scheme", "http", 4),
		NV(":path", path, strlen(path)),
		NV(":authority", c->authority, strlen(c->authority)),
		NV("content-type", "application/grpc", 16),
		NV("te", "trailers", 8),
#undef NV
	};

	if (c->broken)
		return error("the gRPC connection is broken");
	if (len > GRPC_CLIENT_MESSAGE_LIMIT)
		return error("gRPC request of %zu bytes is too large", len);
	call = xcalloc(1, sizeof(*call));
	strbuf_init(&call->req, len + 5);
	strbuf_init(&call->in, 0);
	grpc_status_init(&call->st);
	call->cb = *cb;
	prefix[0] = 0;
	prefix[1] = (uint8_t)(len >> 24);
	prefix[2] = (uint8_t)(len >> 16);
	prefix[3] = (uint8_t)(len >> 8);
	prefix[4] = (uint8_t)len;
	strbuf_add(&call->req, prefix, 5);
	strbuf_add(&call->req, req, len);
	dp.source.ptr = call;
	dp.read_callback = read_req;
	id = nghttp2_submit_request(c->h2, NULL, hdrs, ARRAY_SIZE(hdrs), &dp,
				    call);
	if (id < 0) {
		error("cannot start gRPC call '%s': %s", path,
		      nghttp2_strerror(id));
		strbuf_release(&call->req);
		strbuf_release(&call->in);
		grpc_status_release(&call->st);
		free(call);
		return -1;
	}
	call->stream_id = id;
	call->next = c->calls;
	c->calls = call;
	return id;
}

void grpc_call_cancel(struct grpc_conn *c, int stream_id)
{
	struct grpc_call *call =
		nghttp2_session_get_stream_user_data(c->h2, stream_id);

	if (!call)
		return;
	call_fail(call, GRPC_STATUS_CANCELLED, "cancelled by the client");
	nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, stream_id,
				  NGHTTP2_CANCEL);
}

int grpc_conn_fd(struct grpc_conn *c)
{
	return c->fd;
}

int grpc_conn_want_write(struct grpc_conn *c)
{
	return nghttp2_session_want_write(c->h2);
}

int grpc_conn_open_calls(struct grpc_conn *c)
{
	int n = 0;

	for (struct grpc_call *p = c->calls; p; p = p->next)
		n++;
	return n;
}

int grpc_conn_usable(struct grpc_conn *c)
{
	return !c->broken && nghttp2_session_check_request_allowed(c->h2);
}

int grpc_conn_step(struct grpc_conn *c, int timeout_ms)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	uint8_t buf[16384];
	ssize_t n, used;

	if (c->broken)
		return error("the gRPC connection is broken");
	if (flush(c) < 0)
		goto broken;
	if (poll(&pfd, 1, timeout_ms) < 0) {
		if (errno == EINTR)
			return 0;
		error_errno("poll");
		goto broken;
	}
	if (!(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
		return 0;
	n = read(c->fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n < 0 && errno == ECONNRESET) {
		error_errno("the gRPC server closed the connection");
		goto broken;
	}
	if (n < 0) {
		error_errno("cannot read from the gRPC server");
		goto broken;
	}
	if (!n) {
		error("the gRPC server closed the connection");
		goto broken;
	}
	used = nghttp2_session_mem_recv(c->h2, buf, (size_t)n);
	if (used < 0) {
		error("bad HTTP/2 from the gRPC server: %s",
		      nghttp2_strerror((int)used));
		goto broken;
	}
	if (flush(c) < 0)
		goto broken;
	if (!nghttp2_session_want_read(c->h2) &&
	    !nghttp2_session_want_write(c->h2)) {
		error("the gRPC server ended the connection (a GOAWAY, "
		      "or what it sent was not HTTP/2)");
		goto broken;
	}
	return 0;
broken:
	fail_all(c, "the gRPC connection broke");
	return -1;
}

struct unary_state {
	struct strbuf *resp;
	struct grpc_status *st;
	int nr_messages;
	int done;
};

static int unary_message(const uint8_t *msg, size_t len, void *data)
{
	struct unary_state *u = data;

	if (u->nr_messages++)
		return -1; /* a unary answer has one message */
	if (u->resp)
		strbuf_add(u->resp, msg, len);
	return 0;
}

static void unary_close(const struct grpc_status *st, void *data)
{
	struct unary_state *u = data;

	u->st->code = st->code;
	strbuf_reset(&u->st->message);
	strbuf_addbuf(&u->st->message, &st->message);
	if (st->code == GRPC_STATUS_OK && u->nr_messages != 1) {
		u->st->code = GRPC_STATUS_INTERNAL;
		strbuf_addstr(&u->st->message,
			      "unary answer without its one message");
	}
	u->done = 1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int grpc_unary(struct grpc_conn *c, const char *path, const void *req,
	       size_t len, struct strbuf *resp, struct grpc_status *st,
	       int64_t timeout_ms)
{
	struct unary_state u = { .resp = resp, .st = st };
	struct grpc_call_cb cb = { unary_message, unary_close, &u };
	int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
	int id = grpc_call_start(c, path, req, len, &cb);

	if (id < 0)
		return -1;
	while (!u.done) {
		int wait = -1;

		if (deadline) {
			int64_t left = deadline - now_ms();

			if (left <= 0) {
				grpc_call_cancel(c, id);
				if (flush(c) < 0)
					fail_all(c,
						 "the gRPC connection broke");
				while (!u.done && grpc_conn_step(c, 100) >= 0)
					;
				st->code = GRPC_STATUS_DEADLINE_EXCEEDED;
				strbuf_reset(&st->message);
				strbuf_addf(&st->message,
					    "no answer from the server in "
					    "%" PRId64 " ms",
					    timeout_ms);
				return 1;
			}
			wait = left > 1000 ? 1000 : (int)left;
		}
		if (grpc_conn_step(c, wait) < 0)
			return -1;
	}
	return st->code == GRPC_STATUS_OK ? 0 : 1;
}
