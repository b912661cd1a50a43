#include "compat.h"
#include "proto/websocket.h"
#include "strbuf.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <setjmp.h>
#include <cmocka.h>

/*
 * Unit tests of lib/proto/websocket.c: a client and a server end over a
 * socketpair in this thread, or one end against frames written by hand
 * (RFC 6455 section 5.2) to check what a peer breaking the protocol gets.
 */

struct got {
	int n;		 /* messages */
	int opcode;	 /* of the last */
	uint16_t code;	 /* of the last close */
	struct strbuf m; /* the last message */
};

static void on_msg(struct ws_conn *ws, int opcode, const uint8_t *data,
		   size_t len, uint16_t code, void *cb_data)
{
	struct got *g = cb_data;

	g->n++;
	g->opcode = opcode;
	g->code = code;
	strbuf_reset(&g->m);
	strbuf_add(&g->m, data, len);
}

struct pair {
	int fd[2];
	struct ws_conn c, s; /* over fd[0], fd[1] */
	struct got gc, gs;
};

static void nonblock(int fd)
{
	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK),
			 0);
}

/* max_msg of the server; the client coalesces when asked */
static void pair_open(struct pair *p, size_t max_msg, int flags)
{
	struct ws_transport t;

	memset(p, 0, sizeof(*p));
	strbuf_init(&p->gc.m, 0);
	strbuf_init(&p->gs.m, 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, p->fd), 0);
	nonblock(p->fd[0]);
	nonblock(p->fd[1]);
	ws_socket_transport(&t, p->fd[0]);
	assert_int_equal(
		ws_conn_init(&p->c, WS_CLIENT, &t, 0, flags, on_msg, &p->gc),
		0);
	ws_socket_transport(&t, p->fd[1]);
	assert_int_equal(
		ws_conn_init(&p->s, WS_SERVER, &t, max_msg, 0, on_msg, &p->gs),
		0);
}

static void pair_close(struct pair *p)
{
	ws_conn_release(&p->c);
	ws_conn_release(&p->s);
	if (p->fd[0] >= 0)
		close(p->fd[0]);
	if (p->fd[1] >= 0)
		close(p->fd[1]);
	strbuf_release(&p->gc.m);
	strbuf_release(&p->gs.m);
}

/* Step both ends until *n reaches want (or nothing moves for 2 s). */
static void pump(struct pair *p, int *n, int want)
{
	for (int idle = 0; *n < want && idle < 200;) {
		struct pollfd pfd[2] = {
			{ .fd = p->fd[0], .events = ws_conn_events(&p->c) },
			{ .fd = p->fd[1], .events = ws_conn_events(&p->s) },
		};
		int r = poll(pfd, 2, 10);

		assert_true(r >= 0);
		if (!r) {
			idle++;
			continue;
		}
		if (pfd[0].revents & POLLIN)
			ws_conn_read(&p->c);
		if (pfd[0].revents & POLLOUT)
			ws_conn_write(&p->c);
		if (pfd[1].revents & POLLIN)
			ws_conn_read(&p->s);
		if (pfd[1].revents & POLLOUT)
			ws_conn_write(&p->s);
	}
	assert_int_equal(*n, want);
}

static void test_accept_key(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	/* RFC 6455 section 1.3 */
	ws_accept_key("dGhlIHNhbXBsZSBub25jZQ==", &sb);
	assert_string_equal(sb.buf, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
	strbuf_reset(&sb);
	/* section 4.1: 16 random bytes, base64 */
	assert_int_equal(ws_client_key(&sb), 0);
	assert_int_equal(sb.len, 24);
	assert_string_equal(sb.buf + 22, "==");
	strbuf_release(&sb);
}

static void test_text_binary(void **state)
{
	struct pair p;

	pair_open(&p, 0, 0);
	assert_int_equal(ws_conn_send(&p.c, WS_TEXT, "hello", 5), 0);
	pump(&p, &p.gs.n, 1);
	assert_int_equal(p.gs.opcode, WS_TEXT);
	assert_string_equal(p.gs.m.buf, "hello");
	assert_int_equal(ws_conn_send(&p.s, WS_BINARY, "\0\1\2", 3), 0);
	pump(&p, &p.gc.n, 1);
	assert_int_equal(p.gc.opcode, WS_BINARY);
	assert_int_equal(p.gc.m.len, 3);
	assert_memory_equal(p.gc.m.buf, "\0\1\2", 3);
	/* an empty message is one too */
	assert_int_equal(ws_conn_send(&p.c, WS_BINARY, "", 0), 0);
	pump(&p, &p.gs.n, 2);
	assert_int_equal(p.gs.m.len, 0);
	/* a ping is answered with a pong of the same payload */
	assert_int_equal(ws_conn_send(&p.c, WS_PING, "ping", 4), 0);
	pump(&p, &p.gs.n, 3);
	assert_int_equal(p.gs.opcode, WS_PING);
	pump(&p, &p.gc.n, 2);
	assert_int_equal(p.gc.opcode, WS_PONG);
	assert_string_equal(p.gc.m.buf, "ping");
	/* a normal close, answered; nobody broke anything */
	assert_int_equal(ws_conn_close(&p.c, 1000, "bye"), 0);
	pump(&p, &p.gs.n, 4);
	assert_int_equal(p.gs.opcode, WS_CLOSE);
	assert_int_equal(p.gs.code, 1000);
	assert_string_equal(p.gs.m.buf, "bye");
	pump(&p, &p.gc.n, 3);
	assert_int_equal(p.gc.opcode, WS_CLOSE);
	assert_int_equal(p.gc.code, 1000);
	assert_true(ws_conn_done(&p.c));
	assert_true(ws_conn_done(&p.s));
	assert_int_equal(ws_conn_error(&p.c, NULL), 0);
	assert_int_equal(ws_conn_error(&p.s, NULL), 0);
	pair_close(&p);
}

/* ws_conn_wait(): the blocking use, one end at a time */
static void test_wait(void **state)
{
	struct pair p;

	pair_open(&p, 0, 0);
	assert_int_equal(ws_conn_send(&p.c, WS_TEXT, "ping?", 5), 0);
	while (ws_conn_want_write(&p.c))
		assert_int_equal(ws_conn_wait(&p.c, 1000), 0);
	for (int i = 0; i < 10 && !p.gs.n; i++)
		assert_int_equal(ws_conn_wait(&p.s, 1000), 0);
	assert_string_equal(p.gs.m.buf, "ping?");
	/* nothing to read: returns after the timeout, still open */
	assert_int_equal(ws_conn_wait(&p.c, 10), 0);
	assert_int_equal(p.gc.n, 0);
	/* the peer gone: -1 */
	close(p.fd[1]);
	assert_int_equal(ws_conn_wait(&p.c, 1000), -1);
	assert_true(p.c.eof);
	p.fd[1] = -1;
	pair_close(&p);
}

/* 6 MiB each way, through a socket buffer far smaller: partial writes */
static void large(int flags)
{
	size_t len = 6u << 20;
	char *buf = xmalloc(len);
	struct pair p;

	for (size_t i = 0; i < len; i++)
		buf[i] = (char)(i * 7 + i / 4096);
	pair_open(&p, 8u << 20, flags);
	assert_int_equal(ws_conn_send(&p.c, WS_BINARY, buf, len), 0);
	assert_int_equal(ws_conn_send(&p.s, WS_BINARY, buf, len), 0);
	pump(&p, &p.gs.n, 1);
	pump(&p, &p.gc.n, 1);
	assert_int_equal(p.gs.m.len, len);
	assert_memory_equal(p.gs.m.buf, buf, len);
	assert_int_equal(p.gc.m.len, len);
	assert_memory_equal(p.gc.m.buf, buf, len);
	pair_close(&p);
	free(buf);
}

static void test_large(void **state)
{
	large(0);
}

static void test_large_coalesce(void **state)
{
	large(WS_COALESCE);
}

/* ---- a server end against frames written by hand ---- */

/* A client frame: masked with key 0 (section 5.3), so payload as is. */
static void raw_frame(int fd, uint8_t b0, const void *payload, size_t len)
{
	struct strbuf f = STRBUF_INIT;

	assert_true(len < 126);
	strbuf_addch(&f, b0);
	strbuf_addch(&f, 0x80 | (uint8_t)len);
	strbuf_add(&f, "\0\0\0\0", 4);
	strbuf_add(&f, payload, len);
	assert_int_equal(write(fd, f.buf, f.len), (ssize_t)f.len);
	strbuf_release(&f);
}

/* Read what the server sent: first byte of the first frame, 2 bytes on */
static void raw_read(int fd, struct strbuf *out)
{
	char buf[4096];
	ssize_t n;

	strbuf_reset(out);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(out, buf, n);
}

static void server_step(struct pair *p, int times)
{
	while (times--) {
		struct pollfd pfd = { .fd = p->fd[1],
				      .events = ws_conn_events(&p->s) };

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (pfd.revents & POLLIN)
			ws_conn_read(&p->s);
		if (ws_conn_want_write(&p->s))
			ws_conn_write(&p->s);
	}
}

static void test_fragmented(void **state)
{
	struct strbuf got = STRBUF_INIT;
	struct pair p;

	pair_open(&p, 0, 0);
	/* text "hel" (FIN clear), a ping between, continuation "lo" */
	raw_frame(p.fd[0], 0x01, "hel", 3);
	raw_frame(p.fd[0], 0x89, "hi", 2);
	raw_frame(p.fd[0], 0x80, "lo", 2);
	server_step(&p, 3);
	assert_int_equal(p.gs.opcode, WS_TEXT);
	assert_string_equal(p.gs.m.buf, "hello");
	/* the ping was answered: a pong (FIN, opcode 0xA), unmasked */
	raw_read(p.fd[0], &got);
	assert_true(got.len >= 4);
	assert_int_equal((uint8_t)got.buf[0], 0x8a);
	assert_int_equal((uint8_t)got.buf[1], 2);
	assert_memory_equal(got.buf + 2, "hi", 2);
	assert_int_equal(ws_conn_error(&p.s, NULL), 0);
	strbuf_release(&got);
	pair_close(&p);
}

/* Feed the server bytes, then expect its close code and error. */
static void expect_fail(struct pair *p, uint16_t code, const char *msg)
{
	struct strbuf err = STRBUF_INIT, got = STRBUF_INIT;

	server_step(p, 3);
	assert_false(ws_conn_want_read(&p->s));
	assert_int_equal(ws_conn_error(&p->s, &err), code);
	assert_non_null(strstr(err.buf, msg));
	/* the close frame went out with that code */
	raw_read(p->fd[0], &got);
	assert_true(got.len >= 4);
	assert_int_equal((uint8_t)got.buf[0], 0x88);
	assert_int_equal(((uint8_t)got.buf[2] << 8) | (uint8_t)got.buf[3],
			 code);
	strbuf_release(&err);
	strbuf_release(&got);
}

static void test_bad_frame(void **state)
{
	struct pair p;

	pair_open(&p, 0, 0);
	/* RSV1 set, no extension agreed (section 5.2) */
	raw_frame(p.fd[0], 0xc2, "x", 1);
	expect_fail(&p, 1002, "breaking RFC 6455");
	pair_close(&p);

	pair_open(&p, 0, 0);
	/* a client frame without the mask (section 5.1) */
	assert_int_equal(write(p.fd[0], "\x82\x01x", 3), 3);
	expect_fail(&p, 1002, "breaking RFC 6455");
	pair_close(&p);
}

static void test_bad_utf8(void **state)
{
	struct pair p;

	pair_open(&p, 0, 0);
	/* text must be UTF-8 (section 8.1) */
	raw_frame(p.fd[0], 0x81, "a\xff", 2);
	expect_fail(&p, 1007, "not UTF-8");
	assert_int_equal(p.gs.n, 0);
	pair_close(&p);
}

static void test_oversized(void **state)
{
	char buf[2000];
	struct pair p;

	memset(buf, 'a', sizeof(buf));
	pair_open(&p, 1000, 0);
	assert_int_equal(ws_conn_send(&p.c, WS_BINARY, buf, sizeof(buf)), 0);
	pump(&p, &p.gc.n, 1);
	assert_int_equal(p.gs.n, 0);
	assert_int_equal(p.gc.opcode, WS_CLOSE);
	assert_int_equal(p.gc.code, 1009);
	{
		struct strbuf err = STRBUF_INIT;

		assert_int_equal(ws_conn_error(&p.s, &err), 1009);
		assert_string_equal(err.buf, "the peer sent a WebSocket "
					     "message over 1000 bytes");
		strbuf_release(&err);
	}
	pair_close(&p);

	/* in fragments: each small, together over the limit */
	pair_open(&p, 100, 0);
	raw_frame(p.fd[0], 0x02, buf, 60);
	raw_frame(p.fd[0], 0x80, buf, 60);
	expect_fail(&p, 1009, "over 100 bytes");
	pair_close(&p);
}

static void test_bad_close(void **state)
{
	struct pair p;

	pair_open(&p, 0, 0);
	/*
	 * a close with a 1-byte body (section 5.5.1: 0, or 2 and more):
	 * wslay echoes an empty close, the error is still told
	 */
	raw_frame(p.fd[0], 0x88, "\x03", 1);
	server_step(&p, 3);
	{
		struct strbuf err = STRBUF_INIT;

		assert_int_equal(ws_conn_error(&p.s, &err), 1002);
		assert_string_equal(err.buf, "the peer sent a WebSocket close "
					     "frame with a 1-byte body");
		strbuf_release(&err);
	}
	pair_close(&p);

	pair_open(&p, 0, 0);
	/* a code no endpoint may send (section 7.4.2) */
	raw_frame(p.fd[0], 0x88, "\x03\xe7", 2); /* 999 */
	expect_fail(&p, 1002, "breaking RFC 6455");
	pair_close(&p);
}

static void test_eof(void **state)
{
	struct pair p;

	pair_open(&p, 0, 0);
	close(p.fd[0]);
	p.fd[0] = -1;
	assert_int_equal(ws_conn_read(&p.s), -1);
	assert_true(p.s.eof);
	assert_true(ws_conn_done(&p.s));
	assert_int_equal(ws_conn_error(&p.s, NULL), 0);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accept_key),
		cmocka_unit_test(test_text_binary),
		cmocka_unit_test(test_wait),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_large_coalesce),
		cmocka_unit_test(test_fragmented),
		cmocka_unit_test(test_bad_frame),
		cmocka_unit_test(test_bad_utf8),
		cmocka_unit_test(test_oversized),
		cmocka_unit_test(test_bad_close),
		cmocka_unit_test(test_eof),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
