#include "compat.h"
#include "http.h"
#include "kube/portforward.h"
#include "proto/websocket.h"
#include "strbuf.h"
#include "usage.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <microhttpd.h>
#include <openssl/sha.h>

#include <setjmp.h>
#include <cmocka.h>

/*
 * Unit tests of lib/kube/portforward.c against a fake API server in this
 * process: libmicrohttpd on 127.0.0.1 answers the portforward upgrade
 * (MHD_create_response_for_upgrade) and speaks v4.channel.k8s.io with
 * a lib/proto/websocket server end: port prefixes on channels 0 and 1, then
 * an echo of channel 0 (or a failure, chosen by the test's mode).
 */

enum mode {
	M_ECHO,	   /* prefixes, then echo channel 0 */
	M_403,	   /* 403 with a Kubernetes Status body */
	M_BADKEY,  /* 101 with a wrong Sec-WebSocket-Accept */
	M_KILL,	   /* echo the first message, then drop the TCP link */
	M_CH1,	   /* prefixes, then an error text on channel 1 */
	M_BADPORT, /* a port prefix for another port */
	M_HTTP,	   /* an HTTP/1.1 server behind the tunnel */
	M_HTTP1,   /* the same, but one answer per tunnel, then a drop */
	M_AUTH,	   /* 401 unless "Bearer <S.want>", else like M_ECHO */
};

#define PORT 8080

static struct {
	struct MHD_Daemon *d;
	char base[64];
	pthread_mutex_t lock;
	enum mode mode;
	int upgrades;
	int live; /* upgraded connections still running */
	int stop;
	char path[256];
	char auth[128];
	char proto[64];
	char want[64];	  /* M_AUTH: the token accepted */
	int unauthorized; /* M_AUTH: 401 answers */
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct sconn {
	int fd;
	struct MHD_UpgradeResponseHandle *urh;
	enum mode mode;
	int echoed;
	int kill;
	int id;		   /* upgrade number */
	struct strbuf req; /* M_HTTP: request bytes not answered yet */
};

static void queue(struct ws_conn *ws, int ch, const void *p, size_t len)
{
	uint8_t *buf = malloc(len + 1);

	buf[0] = ch;
	memcpy(buf + 1, p, len);
	ws_conn_send(ws, WS_BINARY, buf, len + 1);
	free(buf);
}

static void s_on_msg(struct ws_conn *ctx, int opcode, const uint8_t *msg,
		     size_t len, uint16_t code, void *data)
{
	struct sconn *c = data;

	if (opcode != WS_BINARY || len < 1 || msg[0] != 0)
		return;
	if (c->mode == M_HTTP || c->mode == M_HTTP1) {
		struct strbuf a = STRBUF_INIT;
		char *end;

		strbuf_add(&c->req, msg + 1, len - 1);
		while ((end = strstr(c->req.buf, "\r\n\r\n"))) {
			char body[32];

			xsnprintf(body, sizeof(body), "tunnel %d", c->id);
			strbuf_addf(&a,
				    "HTTP/1.1 200 OK\r\nContent-Type: "
				    "text/plain\r\nContent-Length: %zu\r\n"
				    "\r\n%s",
				    strlen(body), body);
			strbuf_remove(&c->req, 0, end + 4 - c->req.buf);
			if (c->mode == M_HTTP1)
				c->kill = 1;
		}
		if (a.len)
			queue(ctx, 0, a.buf, a.len);
		strbuf_release(&a);
		return;
	}
	queue(ctx, 0, msg + 1, len - 1);
	if (c->mode == M_KILL)
		c->kill = 1;
}

static void *s_thread(void *data)
{
	struct sconn *c = data;
	struct ws_conn ws, *ctx = &ws;
	struct ws_transport t;
	uint8_t port[2] = { PORT & 0xff, PORT >> 8 };
	int closing = 0;

	ws_socket_transport(&t, c->fd);
	assert_int_equal(ws_conn_init(ctx, WS_SERVER, &t, 0, 0, s_on_msg, c),
			 0);
	if (c->mode == M_BADPORT)
		port[0]++;
	queue(ctx, 0, port, 2);
	queue(ctx, 1, port, 2);
	if (c->mode == M_CH1) {
		const char *e = "error forwarding port 8080 to pod p1: "
				"connection refused";

		queue(ctx, 1, e, strlen(e));
	}
	for (;;) {
		struct pollfd p = { .fd = c->fd };
		int stop;

		pthread_mutex_lock(&S.lock);
		stop = S.stop;
		pthread_mutex_unlock(&S.lock);
		if (stop)
			break;
		if (ws_conn_want_write(ctx) && ws_conn_write(ctx))
			break;
		/* control frames go first in wslay: close after the data */
		if (c->mode == M_CH1 && !closing &&
		    !ws_conn_queued_count(ctx)) {
			closing = 1;
			ws_conn_close(ctx, 1000, NULL);
			continue;
		}
		if (c->kill && !ws_conn_want_write(ctx))
			break; /* drop the link, no close frame */
		if (ws_conn_done(ctx))
			break;
		p.events = ws_conn_events(ctx);
		if (poll(&p, 1, 100) < 0)
			break;
		if ((p.revents & (POLLIN | POLLHUP | POLLERR)) &&
		    ws_conn_read(ctx))
			break;
	}
	ws_conn_release(ctx);
	shutdown(c->fd, SHUT_RDWR);
	MHD_upgrade_action(c->urh, MHD_UPGRADE_ACTION_CLOSE);
	pthread_mutex_lock(&S.lock);
	S.live--;
	pthread_mutex_unlock(&S.lock);
	strbuf_release(&c->req);
	free(c);
	return NULL;
}

static void on_upgrade(void *cls, struct MHD_Connection *conn, void *req_cls,
		       const char *extra, size_t extra_len, MHD_socket sock,
		       struct MHD_UpgradeResponseHandle *urh)
{
	struct sconn *c = calloc(1, sizeof(*c));
	pthread_t th;

	(void)cls;
	(void)conn;
	(void)req_cls;
	(void)extra;
	assert_int_equal(extra_len, 0);
	c->fd = sock;
	c->urh = urh;
	pthread_mutex_lock(&S.lock);
	c->mode = S.mode;
	c->id = S.upgrades;
	strbuf_init(&c->req, 0);
	S.live++;
	pthread_mutex_unlock(&S.lock);
	/* c may be freed by the thread at once: use a local handle */
	if (!pthread_create(&th, NULL, s_thread, c))
		pthread_detach(th);
}

/*
 * The accept key written out here rather than ws_accept_key(): the
 * client's check is tested against a second implementation.
 */
static void accept_key(const char *key, char *out, size_t outlen)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned char sha[SHA_DIGEST_LENGTH];
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "abcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;

	strbuf_addstr(&sb, key);
	strbuf_addstr(&sb, "258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
	SHA1((unsigned char *)sb.buf, sb.len, sha);
	strbuf_release(&sb);
	for (size_t i = 0; i < 20; i += 3) {
		unsigned v = sha[i] << 16 | (i + 1 < 20 ? sha[i + 1] << 8 : 0) |
			     (i + 2 < 20 ? sha[i + 2] : 0);

		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < 20 ? tab[v >> 6 & 63] : '=';
		out[o++] = i + 2 < 20 ? tab[v & 63] : '=';
	}
	assert_true(o < outlen);
	out[o] = '\0';
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn,
			       const char *url, const char *method,
			       const char *version, const char *upload,
			       size_t *upload_len, void **req_cls)
{
	struct MHD_Response *r;
	const char *key, *v;
	char acc[64];
	enum mode mode;
	enum MHD_Result ret;

	(void)cls;
	(void)version;
	(void)upload;
	(void)upload_len;
	if (!*req_cls) {
		*req_cls = conn;
		return MHD_YES;
	}
	pthread_mutex_lock(&S.lock);
	mode = S.mode;
	S.upgrades++;
	v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "ports");
	snprintf(S.path, sizeof(S.path), "%s %s?ports=%s", method, url,
		 v ? v : "");
	v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	snprintf(S.auth, sizeof(S.auth), "%s", v ? v : "");
	v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					"Sec-WebSocket-Protocol");
	snprintf(S.proto, sizeof(S.proto), "%s", v ? v : "");
	if (mode == M_AUTH &&
	    (strncmp(S.auth, "Bearer ", 7) || strcmp(S.auth + 7, S.want))) {
		static const char body[] =
			"{\"kind\":\"Status\",\"apiVersion\":\"v1\","
			"\"metadata\":{},\"status\":\"Failure\",\"message\":"
			"\"Unauthorized\",\"reason\":\"Unauthorized\","
			"\"code\":401}";

		S.unauthorized++;
		pthread_mutex_unlock(&S.lock);
		r = MHD_create_response_from_buffer(strlen(body), (void *)body,
						    MHD_RESPMEM_PERSISTENT);
		MHD_add_response_header(r, "Content-Type", "application/json");
		ret = MHD_queue_response(conn, 401, r);
		MHD_destroy_response(r);
		return ret;
	}
	pthread_mutex_unlock(&S.lock);

	if (mode == M_403) {
		static const char body[] =
			"{\"kind\":\"Status\",\"apiVersion\":\"v1\","
			"\"status\":\"Failure\",\"message\":\"pods \\\"p1\\\" "
			"is forbidden: no portforward\",\"reason\":"
			"\"Forbidden\",\"code\":403}";

		r = MHD_create_response_from_buffer(strlen(body), (void *)body,
						    MHD_RESPMEM_PERSISTENT);
		MHD_add_response_header(r, "Content-Type", "application/json");
		ret = MHD_queue_response(conn, 403, r);
		MHD_destroy_response(r);
		return ret;
	}
	key = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					  "Sec-WebSocket-Key");
	assert_non_null(key);
	accept_key(key, acc, sizeof(acc));
	if (mode == M_BADKEY)
		acc[0] = acc[0] == 'A' ? 'B' : 'A';
	r = MHD_create_response_for_upgrade(on_upgrade, NULL);
	MHD_add_response_header(r, MHD_HTTP_HEADER_UPGRADE, "websocket");
	MHD_add_response_header(r, "Sec-WebSocket-Accept", acc);
	MHD_add_response_header(r, "Sec-WebSocket-Protocol",
				"v4.channel.k8s.io");
	ret = MHD_queue_response(conn, MHD_HTTP_SWITCHING_PROTOCOLS, r);
	MHD_destroy_response(r);
	return ret;
}

static int setup(void **state)
{
	const union MHD_DaemonInfo *info;
	struct sockaddr_in sa = { .sin_family = AF_INET };

	(void)state;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	S.mode = M_ECHO;
	S.upgrades = 0;
	S.unauthorized = 0;
	S.stop = 0;
	S.d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
				       MHD_USE_THREAD_PER_CONNECTION |
				       MHD_ALLOW_UPGRADE | MHD_USE_ERROR_LOG,
			       0, NULL, NULL, handler, NULL,
			       MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_END);
	if (!S.d)
		return -1;
	info = MHD_get_daemon_info(S.d, MHD_DAEMON_INFO_BIND_PORT);
	snprintf(S.base, sizeof(S.base), "http://127.0.0.1:%u", info->port);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pthread_mutex_lock(&S.lock);
	S.stop = 1;
	pthread_mutex_unlock(&S.lock);
	for (;;) {
		int live;

		pthread_mutex_lock(&S.lock);
		live = S.live;
		pthread_mutex_unlock(&S.lock);
		if (!live)
			break;
		poll(NULL, 0, 10);
	}
	MHD_stop_daemon(S.d);
	return 0;
}

struct fx {
	struct http_client *api;
	struct kube_forward *f;
};

static void set_mode(enum mode m)
{
	pthread_mutex_lock(&S.lock);
	S.mode = m;
	pthread_mutex_unlock(&S.lock);
}

static int upgrades(void)
{
	int n;

	pthread_mutex_lock(&S.lock);
	n = S.upgrades;
	pthread_mutex_unlock(&S.lock);
	return n;
}

static void fx_start(struct fx *x, int tcp)
{
	struct kube_forward_opts o = {
		.bearer_token = "tok123",
		.namespace = "ns1",
		.pod = "p1",
		.port = PORT,
		.tcp = tcp,
	};

	x->api = http_client_new(S.base, NULL);
	assert_non_null(x->api);
	o.client = x->api;
	x->f = kube_forward_start(&o);
	assert_non_null(x->f);
}

static void fx_stop(struct fx *x)
{
	kube_forward_stop(x->f);
	http_client_free(x->api);
}

static int local_connect(struct fx *x)
{
	const char *a = kube_forward_address(x->f);
	int fd;

	if (!strncmp(a, "http://127.0.0.1:", 17)) {
		struct sockaddr_in sa = { .sin_family = AF_INET };

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sa.sin_port = htons(atoi(a + 17));
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		assert_int_equal(connect(fd, (void *)&sa, sizeof(sa)), 0);
	} else {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		assert_true(strlen(a) < sizeof(sa.sun_path));
		memcpy(sa.sun_path, a, strlen(a) + 1);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		assert_int_equal(connect(fd, (void *)&sa, sizeof(sa)), 0);
	}
	return fd;
}

static void write_all(int fd, const void *p, size_t len)
{
	const char *b = p;

	while (len) {
		ssize_t n = send(fd, b, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		assert_true(n > 0);
		b += n;
		len -= n;
	}
}

/* Read exactly len bytes; returns bytes read before EOF. */
static size_t read_full(int fd, void *p, size_t len)
{
	char *b = p;
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, b + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

/* Wait (generously) until the local connection is closed. */
static int wait_eof(int fd)
{
	char c;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 60000) <= 0)
			return -1;
		n = recv(fd, &c, 1, 0);
		if (n <= 0)
			return 0;
	}
}

static char *wait_error(struct fx *x, const char *needle)
{
	for (int i = 0; i < 6000; i++) {
		char *e = kube_forward_last_error(x->f);

		if (e && strstr(e, needle))
			return e;
		free(e);
		poll(NULL, 0, 10);
	}
	return NULL;
}

static void test_echo_handshake(void **state)
{
	struct fx x;
	char buf[16];
	int fd;

	(void)state;
	fx_start(&x, 0);
	fd = local_connect(&x);
	write_all(fd, "hello", 5);
	assert_int_equal(read_full(fd, buf, 5), 5);
	/* the port prefixes were stripped: exactly the echo */
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(upgrades(), 1);
	pthread_mutex_lock(&S.lock);
	assert_string_equal(S.path, "GET /api/v1/namespaces/ns1/pods/p1/"
				    "portforward?ports=8080");
	assert_string_equal(S.auth, "Bearer tok123");
	assert_string_equal(S.proto, "v4.channel.k8s.io");
	pthread_mutex_unlock(&S.lock);
	close(fd);
	assert_null(kube_forward_last_error(x.f));
	fx_stop(&x);
}

static void test_403(void **state)
{
	struct fx x;
	char *e;
	int fd;

	(void)state;
	set_mode(M_403);
	fx_start(&x, 1);
	fd = local_connect(&x);
	assert_int_equal(wait_eof(fd), 0);
	e = wait_error(&x, "403");
	assert_non_null(e);
	assert_non_null(strstr(e, "pods \"p1\" is forbidden: no portforward"));
	free(e);
	close(fd);
	fx_stop(&x);
}

static void test_bad_accept(void **state)
{
	struct fx x;
	char *e;
	int fd;

	(void)state;
	set_mode(M_BADKEY);
	fx_start(&x, 0);
	fd = local_connect(&x);
	assert_int_equal(wait_eof(fd), 0);
	e = wait_error(&x, "Sec-WebSocket-Accept");
	assert_non_null(e);
	free(e);
	close(fd);
	fx_stop(&x);
}

static void test_bad_port(void **state)
{
	struct fx x;
	char *e;
	int fd;

	(void)state;
	set_mode(M_BADPORT);
	fx_start(&x, 0);
	fd = local_connect(&x);
	write_all(fd, "x", 1);
	assert_int_equal(wait_eof(fd), 0);
	e = wait_error(&x, "port 8081, not 8080");
	assert_non_null(e);
	free(e);
	close(fd);
	fx_stop(&x);
}

static void test_channel1_error(void **state)
{
	struct fx x;
	char *e;
	int fd;

	(void)state;
	set_mode(M_CH1);
	fx_start(&x, 0);
	fd = local_connect(&x);
	assert_int_equal(wait_eof(fd), 0);
	e = wait_error(&x, "connection refused");
	assert_non_null(e);
	assert_non_null(strstr(e, "error forwarding port 8080 to pod p1"));
	free(e);
	close(fd);
	fx_stop(&x);
}

struct writer {
	int fd;
	const unsigned char *p;
	size_t len;
};

static void *writer_main(void *data)
{
	struct writer *w = data;

	write_all(w->fd, w->p, w->len);
	return NULL;
}

static void test_1mib(void **state)
{
	size_t len = 1024 * 1024;
	unsigned char *out = malloc(len), *in = malloc(len);
	struct writer w;
	pthread_t th;
	struct fx x;
	unsigned v = 12345;

	(void)state;
	for (size_t i = 0; i < len; i++) {
		v = v * 1103515245 + 12345;
		out[i] = v >> 16;
	}
	fx_start(&x, 1);
	w.fd = local_connect(&x);
	w.p = out;
	w.len = len;
	pthread_create(&th, NULL, writer_main, &w);
	assert_int_equal(read_full(w.fd, in, len), len);
	pthread_join(th, NULL);
	assert_memory_equal(in, out, len);
	/* local EOF closes the WebSocket, then the local connection */
	shutdown(w.fd, SHUT_WR);
	assert_int_equal(wait_eof(w.fd), 0);
	close(w.fd);
	assert_int_equal(upgrades(), 1);
	fx_stop(&x);
	free(in);
	free(out);
}

static void test_concurrent(void **state)
{
	struct fx x;
	int fd[4];
	char buf[32], want[32];

	(void)state;
	fx_start(&x, 0);
	for (int i = 0; i < 4; i++)
		fd[i] = local_connect(&x);
	for (int i = 0; i < 4; i++) {
		xsnprintf(want, sizeof(want), "conn %d", i);
		write_all(fd[i], want, strlen(want));
	}
	for (int i = 3; i >= 0; i--) {
		xsnprintf(want, sizeof(want), "conn %d", i);
		assert_int_equal(read_full(fd[i], buf, strlen(want)),
				 strlen(want));
		assert_memory_equal(buf, want, strlen(want));
	}
	assert_int_equal(upgrades(), 4);
	assert_int_equal(kube_forward_tunnels(x.f), 4);
	for (int i = 0; i < 4; i++)
		close(fd[i]);
	fx_stop(&x);
}

static void test_killed_tunnel(void **state)
{
	struct fx x;
	char buf[8];
	int fd;

	(void)state;
	set_mode(M_KILL);
	fx_start(&x, 0);
	fd = local_connect(&x);
	write_all(fd, "abc", 3);
	assert_int_equal(read_full(fd, buf, 3), 3);
	assert_memory_equal(buf, "abc", 3);
	/* the server dropped the link: the local connection ends */
	assert_int_equal(wait_eof(fd), 0);
	close(fd);
	/* a new connection gets a new, working WebSocket */
	set_mode(M_ECHO);
	fd = local_connect(&x);
	write_all(fd, "again", 5);
	assert_int_equal(read_full(fd, buf, 5), 5);
	assert_memory_equal(buf, "again", 5);
	assert_int_equal(upgrades(), 2);
	close(fd);
	fx_stop(&x);
}

static void test_stop_open(void **state)
{
	struct fx x;
	char buf[4];
	int fd[3];

	(void)state;
	fx_start(&x, 0);
	for (int i = 0; i < 3; i++) {
		fd[i] = local_connect(&x);
		write_all(fd[i], "hi", 2);
		assert_int_equal(read_full(fd[i], buf, 2), 2);
	}
	fx_stop(&x);
	/* every local connection was closed by stop() */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(wait_eof(fd[i]), 0);
		close(fd[i]);
	}
}

static void get(struct http_client *h, const char *want)
{
	struct http_resp r = HTTP_RESP_INIT;
	struct http_req q = { .path = "/x" };

	assert_int_equal(http_request(h, &q, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body.buf, want);
	http_resp_release(&r);
}

static void test_http_client(void **state)
{
	struct http_client_opts ho = { 0 };
	struct http_client *h;
	struct fx x;

	(void)state;
	set_mode(M_HTTP);
	fx_start(&x, 0);
	ho.unix_socket = kube_forward_address(x.f);
	h = http_client_new("http://localhost", &ho);
	assert_non_null(h);
	/* keep-alive: both requests over one tunnel */
	get(h, "tunnel 1");
	get(h, "tunnel 1");
	assert_int_equal(upgrades(), 1);
	http_client_free(h);
	fx_stop(&x);
}

static void test_http_client_reconnect(void **state)
{
	struct http_client *h;
	struct fx x;

	(void)state;
	set_mode(M_HTTP1);
	fx_start(&x, 1);
	h = http_client_new(kube_forward_address(x.f), NULL);
	assert_non_null(h);
	/*
	 * Each tunnel dies after one answer: libcurl notices the closed
	 * keep-alive connection and the next request gets a new tunnel.
	 */
	get(h, "tunnel 1");
	get(h, "tunnel 2");
	get(h, "tunnel 3");
	assert_int_equal(upgrades(), 3);
	http_client_free(h);
	fx_stop(&x);
}

/*
 * A credential source like lib/kube/kube-credentials.h's: a cached token, and
 * what a fresh fetch (forget) would give.
 */
static struct {
	pthread_mutex_t lock;
	char cached[64];
	char fresh[64];
	int calls, forgets, fail;
} T = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int token_cb(void *data, int forget, struct strbuf *token)
{
	int ret = 0;

	assert_ptr_equal(data, &T);
	assert_int_equal(token->len, 0);
	pthread_mutex_lock(&T.lock);
	T.calls++;
	if (forget) {
		T.forgets++;
		memcpy(T.cached, T.fresh, sizeof(T.cached));
	}
	if (T.fail)
		ret = error("cannot run the credential plugin");
	else
		strbuf_addstr(token, T.cached);
	pthread_mutex_unlock(&T.lock);
	return ret;
}

static void token_setup(const char *cached, const char *fresh, const char *want)
{
	pthread_mutex_lock(&T.lock);
	xsnprintf(T.cached, sizeof(T.cached), "%s", cached);
	xsnprintf(T.fresh, sizeof(T.fresh), "%s", fresh);
	T.calls = T.forgets = T.fail = 0;
	pthread_mutex_unlock(&T.lock);
	pthread_mutex_lock(&S.lock);
	S.mode = M_AUTH;
	xsnprintf(S.want, sizeof(S.want), "%s", want);
	pthread_mutex_unlock(&S.lock);
}

static void fx_start_cb(struct fx *x)
{
	struct kube_forward_opts o = {
		.bearer_token = "ignored",
		.get_token = token_cb,
		.token_data = &T,
		.namespace = "ns1",
		.pod = "p1",
		.port = PORT,
	};

	x->api = http_client_new(S.base, NULL);
	assert_non_null(x->api);
	o.client = x->api;
	x->f = kube_forward_start(&o);
	assert_non_null(x->f);
}

/* One round trip through a new local connection. */
static void echo_once(struct fx *x, const char *what)
{
	char buf[32];
	size_t n = strlen(what);
	int fd = local_connect(x);

	write_all(fd, what, n);
	assert_int_equal(read_full(fd, buf, n), n);
	assert_memory_equal(buf, what, n);
	close(fd);
}

static void test_token_rotates(void **state)
{
	struct fx x;

	(void)state;
	token_setup("old", "old", "old");
	fx_start_cb(&x);
	echo_once(&x, "one");
	pthread_mutex_lock(&T.lock);
	assert_int_equal(T.calls, 1);
	assert_int_equal(T.forgets, 0);
	pthread_mutex_unlock(&T.lock);
	assert_int_equal(upgrades(), 1);

	/* the server now takes only "new", which a fresh fetch gives */
	pthread_mutex_lock(&T.lock);
	xsnprintf(T.fresh, sizeof(T.fresh), "new");
	pthread_mutex_unlock(&T.lock);
	pthread_mutex_lock(&S.lock);
	xsnprintf(S.want, sizeof(S.want), "new");
	pthread_mutex_unlock(&S.lock);
	echo_once(&x, "two");
	pthread_mutex_lock(&T.lock);
	assert_int_equal(T.calls, 3);
	assert_int_equal(T.forgets, 1);
	pthread_mutex_unlock(&T.lock);
	pthread_mutex_lock(&S.lock);
	assert_int_equal(S.upgrades, 3);
	assert_int_equal(S.unauthorized, 1);
	assert_string_equal(S.auth, "Bearer new");
	pthread_mutex_unlock(&S.lock);

	/* the refreshed token is used at once by the next tunnel */
	echo_once(&x, "three");
	pthread_mutex_lock(&T.lock);
	assert_int_equal(T.calls, 4);
	assert_int_equal(T.forgets, 1);
	pthread_mutex_unlock(&T.lock);
	assert_int_equal(upgrades(), 4);
	assert_int_equal(kube_forward_tunnels(x.f), 3);
	assert_null(kube_forward_last_error(x.f));
	fx_stop(&x);
}

static void test_token_401_persists(void **state)
{
	struct fx x;
	char *e;
	int fd;

	(void)state;
	token_setup("old", "still-wrong", "new");
	fx_start_cb(&x);
	fd = local_connect(&x);
	/* no hang: the local connection is closed */
	assert_int_equal(wait_eof(fd), 0);
	close(fd);
	e = wait_error(&x, "HTTP 401");
	assert_non_null(e);
	assert_string_equal(e, "port-forward to pod 'ns1/p1' port 8080 "
			       "refused: HTTP 401: Unauthorized (again "
			       "with a fresh credential)");
	free(e);
	/* exactly one retry */
	assert_int_equal(upgrades(), 2);
	pthread_mutex_lock(&T.lock);
	assert_int_equal(T.calls, 2);
	assert_int_equal(T.forgets, 1);
	pthread_mutex_unlock(&T.lock);
	fx_stop(&x);
}

static void test_token_static_401(void **state)
{
	struct fx x;
	char *e;
	int fd;

	(void)state;
	token_setup("", "", "other");
	fx_start(&x, 0); /* bearer_token "tok123", no callback */
	fd = local_connect(&x);
	assert_int_equal(wait_eof(fd), 0);
	close(fd);
	e = wait_error(&x, "HTTP 401");
	assert_non_null(e);
	assert_string_equal(e, "port-forward to pod 'ns1/p1' port 8080 "
			       "refused: HTTP 401: Unauthorized");
	free(e);
	assert_int_equal(upgrades(), 1);
	pthread_mutex_lock(&S.lock);
	assert_string_equal(S.auth, "Bearer tok123");
	pthread_mutex_unlock(&S.lock);
	fx_stop(&x);
}

static void test_token_fails(void **state)
{
	struct fx x;
	char *e;
	int fd;

	(void)state;
	token_setup("old", "old", "old");
	pthread_mutex_lock(&T.lock);
	T.fail = 1;
	pthread_mutex_unlock(&T.lock);
	fx_start_cb(&x);
	fd = local_connect(&x);
	assert_int_equal(wait_eof(fd), 0);
	close(fd);
	e = wait_error(&x, "no credential");
	assert_non_null(e);
	assert_string_equal(e, "port-forward to pod 'ns1/p1' port 8080: no "
			       "credential: cannot run the credential "
			       "plugin");
	free(e);
	/* the API server was not asked */
	assert_int_equal(upgrades(), 0);
	fx_stop(&x);
}

static void test_token_line_break(void **state)
{
	struct fx x;
	char *e;
	int fd;

	(void)state;
	token_setup("a\r\nX-Evil: 1", "a", "a");
	fx_start_cb(&x);
	fd = local_connect(&x);
	assert_int_equal(wait_eof(fd), 0);
	close(fd);
	e = wait_error(&x, "line break");
	assert_non_null(e);
	free(e);
	assert_int_equal(upgrades(), 0);
	fx_stop(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_echo_handshake, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_403, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_accept, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_port, setup, teardown),
		cmocka_unit_test_setup_teardown(test_channel1_error, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_1mib, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_killed_tunnel, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stop_open, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_http_client, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_http_client_reconnect,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_rotates, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_token_401_persists, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_token_static_401, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_token_fails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_token_line_break, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
