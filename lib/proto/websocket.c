#include "compat.h"
#include "proto/websocket.h"
#include "json.h"
#include "usage.h"

#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <openssl/sha.h>

/* RFC 6455 section 1.3 */
#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

int ws_random(void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ws_client_key(struct strbuf *out)
{
	unsigned char raw[16];

	if (ws_random(raw, sizeof(raw)) < 0)
		return -1;
	base64_encode_into(out, raw, sizeof(raw));
	return 0;
}

void ws_accept_key(const char *key, struct strbuf *out)
{
	struct strbuf in = STRBUF_INIT;
	unsigned char sha[SHA_DIGEST_LENGTH];

	strbuf_addstr(&in, key);
	strbuf_addstr(&in, WS_GUID);
	SHA1((const unsigned char *)in.buf, in.len, sha);
	base64_encode_into(out, sha, sizeof(sha));
	strbuf_release(&in);
}

static ssize_t sock_read(void *ctx, void *buf, size_t len)
{
	int fd = (int)(intptr_t)ctx;
	ssize_t n;

	do {
		n = recv(fd, buf, len, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return WS_AGAIN;
	return n < 0 ? -1 : n;
}

static ssize_t sock_write(void *ctx, const void *buf, size_t len, int more)
{
	int fd = (int)(intptr_t)ctx;
	ssize_t n;

	do {
		n = send(fd, buf, len,
			 MSG_NOSIGNAL | MSG_DONTWAIT | (more ? MSG_MORE : 0));
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return WS_AGAIN;
	return n <= 0 ? -1 : n;
}

void ws_socket_transport(struct ws_transport *t, int fd)
{
	t->read = sock_read;
	t->write = sock_write;
	t->fd = fd;
	t->ctx = (void *)(intptr_t)fd;
}

/* ---- wslay's callbacks ---- */

static ssize_t recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
		       int flags, void *data)
{
	struct ws_conn *ws = data;
	ssize_t n;

	if (ws->pre_off < ws->pre.len) {
		size_t k = ws->pre.len - ws->pre_off;

		if (k > len)
			k = len;
		memcpy(buf, ws->pre.buf + ws->pre_off, k);
		ws->pre_off += k;
		return (ssize_t)k;
	}
	n = ws->t.read(ws->t.ctx, buf, len);
	if (n == WS_AGAIN) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (n <= 0) {
		ws->eof = 1;
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return n;
}

/* Write p; n taken, or -1 with wslay's error set. */
static ssize_t put(struct ws_conn *ws, const void *p, size_t len, int more)
{
	ssize_t n = ws->t.write(ws->t.ctx, p, len, more);

	if (n == WS_AGAIN) {
		wslay_event_set_error(ws->ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (n <= 0) {
		ws->eof = 1;
		wslay_event_set_error(ws->ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return n;
}

static ssize_t send_cb(wslay_event_context_ptr ctx, const uint8_t *buf,
		       size_t len, int flags, void *data)
{
	struct ws_conn *ws = data;
	int more = !!(flags & WSLAY_MSG_MORE);
	size_t h;
	ssize_t n;

	if (!ws->coalesce)
		return put(ws, buf, len, more);
	if (more && !ws->hold_len && len <= sizeof(ws->hold)) {
		memcpy(ws->hold, buf, len);
		ws->hold_len = len;
		return (ssize_t)len;
	}
	if (!ws->hold_len)
		return put(ws, buf, len, more);
	strbuf_reset(&ws->wbuf);
	strbuf_add(&ws->wbuf, ws->hold, ws->hold_len);
	strbuf_add(&ws->wbuf, buf, len);
	n = put(ws, ws->wbuf.buf, ws->wbuf.len, more);
	if (n < 0)
		return n;
	h = (size_t)n < ws->hold_len ? (size_t)n : ws->hold_len;
	memmove(ws->hold, ws->hold + h, ws->hold_len - h);
	ws->hold_len -= h;
	n -= (ssize_t)h;
	if (!n) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	return n;
}

/* A header held back when wslay has nothing more: 0, or -1 (broken). */
static int flush_hold(struct ws_conn *ws)
{
	while (ws->hold_len) {
		ssize_t n = ws->t.write(ws->t.ctx, ws->hold, ws->hold_len, 0);

		if (n == WS_AGAIN)
			return 0;
		if (n <= 0) {
			ws->eof = 1;
			return -1;
		}
		memmove(ws->hold, ws->hold + n, ws->hold_len - (size_t)n);
		ws->hold_len -= (size_t)n;
	}
	return 0;
}

static int genmask_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
		      void *data)
{
	return ws_random(buf, len) < 0 ? -1 : 0;
}

static void on_msg_cb(wslay_event_context_ptr ctx,
		      const struct wslay_event_on_msg_recv_arg *arg, void *data)
{
	struct ws_conn *ws = data;
	const uint8_t *msg = arg->msg;
	size_t len = arg->msg_length;
	uint16_t code = 0;

	if (arg->opcode == WSLAY_CONNECTION_CLOSE) {
		/* wslay passes the whole payload: the code, then the reason */
		code = arg->status_code ? arg->status_code : 1005;
		/*
		 * wslay takes a 1-byte body as no code (section 5.5.1 says
		 * 0 or 2 and more): the close it echoes stays, the error
		 * is ours
		 */
		if (len == 1 && !ws->close_queued)
			ws->bad_close = 1;
		if (len >= 2) {
			msg += 2;
			len -= 2;
		} else {
			len = 0;
		}
	}
	if (ws->on_msg)
		ws->on_msg(ws, arg->opcode, msg, len, code, ws->cb_data);
}

int ws_conn_init(struct ws_conn *ws, enum ws_role role,
		 const struct ws_transport *t, size_t max_msg, int flags,
		 ws_msg_fn on_msg, void *cb_data)
{
	struct wslay_event_callbacks cb = {
		.recv_callback = recv_cb,
		.send_callback = send_cb,
		.genmask_callback = genmask_cb,
		.on_msg_recv_callback = on_msg_cb,
	};
	int r;

	memset(ws, 0, sizeof(*ws));
	ws->t = *t;
	ws->on_msg = on_msg;
	ws->cb_data = cb_data;
	ws->max_msg = max_msg;
	ws->coalesce = !!(flags & WS_COALESCE);
	strbuf_init(&ws->pre, 0);
	strbuf_init(&ws->wbuf, 0);
	if (role == WS_CLIENT)
		r = wslay_event_context_client_init(&ws->ctx, &cb, ws);
	else
		r = wslay_event_context_server_init(&ws->ctx, &cb, ws);
	if (r) {
		ws->ctx = NULL;
		return error("cannot set up a WebSocket: out of memory");
	}
	if (max_msg)
		wslay_event_config_set_max_recv_msg_length(ws->ctx, max_msg);
	return 0;
}

void ws_conn_release(struct ws_conn *ws)
{
	if (ws->ctx)
		wslay_event_context_free(ws->ctx);
	ws->ctx = NULL;
	strbuf_release(&ws->pre);
	strbuf_release(&ws->wbuf);
	ws->pre_off = ws->hold_len = 0;
}

void ws_conn_preload(struct ws_conn *ws, const void *buf, size_t len)
{
	strbuf_add(&ws->pre, buf, len);
}

size_t ws_conn_buffered(const struct ws_conn *ws)
{
	return ws->pre.len - ws->pre_off;
}

int ws_conn_send(struct ws_conn *ws, int opcode, const void *buf, size_t len)
{
	struct wslay_event_msg m = {
		.opcode = (uint8_t)opcode,
		.msg = buf,
		.msg_length = len,
	};

	return wslay_event_queue_msg(ws->ctx, &m) ? -1 : 0; /* copies */
}

int ws_conn_close(struct ws_conn *ws, uint16_t code, const char *reason)
{
	size_t len = reason ? strlen(reason) : 0;

	if (len > 123)
		len = 123;
	ws->close_queued = 1;
	return wslay_event_queue_close(ws->ctx, code, (const uint8_t *)reason,
				       code ? len : 0)
		       ? -1
		       : 0;
}

void ws_conn_stop_reading(struct ws_conn *ws)
{
	ws->stopped = 1;
	wslay_event_shutdown_read(ws->ctx);
}

int ws_conn_want_read(const struct ws_conn *ws)
{
	return !ws->eof && wslay_event_want_read(ws->ctx);
}

int ws_conn_want_write(const struct ws_conn *ws)
{
	return !ws->eof && (wslay_event_want_write(ws->ctx) || ws->hold_len);
}

short ws_conn_events(const struct ws_conn *ws)
{
	return (ws_conn_want_read(ws) ? POLLIN : 0) |
	       (ws_conn_want_write(ws) ? POLLOUT : 0);
}

size_t ws_conn_queued_count(const struct ws_conn *ws)
{
	return wslay_event_get_queued_msg_count(ws->ctx);
}

size_t ws_conn_queued_bytes(const struct ws_conn *ws)
{
	return wslay_event_get_queued_msg_length(ws->ctx);
}

int ws_conn_want_write_more(const struct ws_conn *ws)
{
	return !ws->eof && !ws->close_queued &&
	       wslay_event_get_write_enabled(ws->ctx);
}

int ws_conn_close_received(const struct ws_conn *ws)
{
	return wslay_event_get_close_received(ws->ctx);
}

int ws_conn_done(const struct ws_conn *ws)
{
	return ws->eof || (!ws_conn_want_read(ws) && !ws_conn_want_write(ws));
}

int ws_conn_read(struct ws_conn *ws)
{
	int r;

	if (ws->eof)
		return -1;
	r = wslay_event_recv(ws->ctx);
	if (!ws->failed && !ws->close_queued && !ws->stopped && !ws->eof &&
	    !wslay_event_want_read(ws->ctx) &&
	    !wslay_event_get_close_received(ws->ctx)) {
		/*
		 * wslay stopped reading without a close from the peer:
		 * it queued its own close for a frame breaking the
		 * protocol; the code is known once that is sent
		 */
		ws->failed = 1;
		if (!r)
			ws_conn_write(ws);
	}
	return r || ws->eof ? -1 : 0;
}

int ws_conn_write(struct ws_conn *ws)
{
	if (ws->eof)
		return -1;
	if (wslay_event_want_write(ws->ctx) && wslay_event_send(ws->ctx))
		return -1;
	if (!wslay_event_want_write(ws->ctx) && flush_hold(ws) < 0)
		return -1;
	return ws->eof ? -1 : 0;
}

uint16_t ws_conn_error(const struct ws_conn *ws, struct strbuf *err)
{
	uint16_t code;

	if (ws->bad_close) {
		if (err)
			strbuf_addstr(err, "the peer sent a WebSocket close "
					   "frame with a 1-byte body");
		return WSLAY_CODE_PROTOCOL_ERROR;
	}
	if (!ws->failed)
		return 0;
	code = wslay_event_get_close_sent(ws->ctx)
		       ? wslay_event_get_status_code_sent(ws->ctx)
		       : WSLAY_CODE_PROTOCOL_ERROR;
	if (!err)
		return code;
	code = wslay_event_get_close_sent(ws->ctx)
		       ? wslay_event_get_status_code_sent(ws->ctx)
		       : WSLAY_CODE_PROTOCOL_ERROR;
	switch (code) {
	case WSLAY_CODE_MESSAGE_TOO_BIG:
		strbuf_addf(err,
			    "the peer sent a WebSocket message over %zu bytes",
			    ws->max_msg);
		break;
	case WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA:
		strbuf_addstr(err, "the peer sent a WebSocket text message "
				   "or close reason that is not UTF-8");
		break;
	default:
		strbuf_addf(err,
			    "the peer sent a WebSocket frame breaking RFC "
			    "6455 (closed with %u)",
			    code);
	}
	return code;
}

int ws_conn_wait(struct ws_conn *ws, int timeout_ms)
{
	struct pollfd p = { .fd = ws->t.fd, .events = ws_conn_events(ws) };
	int n;

	if (ws->eof)
		return -1;
	if (ws->pre_off < ws->pre.len) {
		n = 1;
		p.revents = POLLIN;
	} else {
		n = poll(&p, 1, timeout_ms);
	}
	if (n < 0 && errno != EINTR)
		return error_errno("poll");
	if (n <= 0)
		return 0;
	if ((p.revents & (POLLIN | POLLHUP | POLLERR)) &&
	    ws_conn_want_read(ws) && ws_conn_read(ws) < 0)
		return -1;
	if (ws_conn_want_write(ws) && ws_conn_write(ws) < 0)
		return -1;
	return 0;
}
