#include "compat.h"
#include "http.h"
#include "strbuf.h"
#include "usage.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include <dlfcn.h>
#include <microhttpd.h>

#include <setjmp.h>
#include <cmocka.h>

/*
 * Unit tests of lib/http.c against a libmicrohttpd server started in
 * this process, on 127.0.0.1 (port chosen by the kernel) and on a unix
 * socket. The server records what it received so that the tests can
 * check what the client sent.
 */

struct srv {
	struct MHD_Daemon *d;
	char base[64];	/* "http://127.0.0.1:<port>" */
	char sock[108]; /* unix socket path, or "" */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int connections; /* connections opened so far */
	/* the last complete request */
	char method[16];
	struct strbuf raw_uri;
	struct strbuf headers; /* "name: value\n" lines, as received */
	size_t body_len;
	/* the last multipart upload */
	struct strbuf up_field, up_filename, up_data;
	/* streaming handshake: lines the client has seen */
	int client_seen;
	int tls;
	int peer_certs; /* client certificates seen (TLS), -1: n/a */
};

static struct srv tcp_srv, unix_srv, tls_srv;
static char tmpdir[64];

/*
 * Test PKI (EC P-256, valid until 2126): a CA, a server certificate for
 * 127.0.0.1 and localhost, and a client certificate, both signed by the
 * CA. Made with openssl req/x509; test use only.
 */
static const char ca_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBiDCCAS2gAwIBAgIUd+CQUS8ZMzPe2m24b3KF1kFurXAwCgYIKoZIzj0EAwIw\n"
	"GDEWMBQGA1UEAwwNZ29zYnggdGVzdCBDQTAgFw0yNjExMjIwMjEwMjJaGA8yMTI2\n"
	"MTAyOTAyMTAyMlowGDEWMBQGA1UEAwwNZ29zYnggdGVzdCBDQTBZMBMGByqGSM49\n"
	"AgEGCCqGSM49AwEHA0IABPU2ZlmOJZppRjyzaSWaweKk6MiLHH3Uz0NWcFKcfN2i\n"
	"iRnPykoM3KiVICtSY8jZtfRPjVgxmJ78lHDXiT455JijUzBRMB0GA1UdDgQWBBSm\n"
	"XA87/mlYSAWqDbOdayw+eT/jFTAfBgNVHSMEGDAWgBSmXA87/mlYSAWqDbOdayw+\n"
	"eT/jFTAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0kAMEYCIQDfJ/wEVm4q\n"
	"TcAAhK6BKe+i4BjOXJy2u1N3f42OkTyN8AIhALwH2DdueIjAOnKylgt/2KTHNn7i\n"
	"iYY+XJpg0frYIqKO\n"
	"-----END CERTIFICATE-----\n";

static const char srv_cert_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBojCCAUmgAwIBAgIUbYkmSoU0GQDQsqmzhlg1yJ38K8YwCgYIKoZIzj0EAwIw\n"
	"GDEWMBQGA1UEAwwNZ29zYnggdGVzdCBDQTAgFw0yNjExMjIwMjEwMjJaGA8yMTI2\n"
	"MTAyOTAyMTAyMlowFDESMBAGA1UEAwwJbG9jYWxob3N0MFkwEwYHKoZIzj0CAQYI\n"
	"KoZIzj0DAQcDQgAExt/7r0VIRxBVfwY70KOXHrYVnd0+tVyt+nlAim4dJOQmPmuo\n"
	"JrPoSETwIaeAzfTPFoIKm74bCixscTh3U4Wh96NzMHEwGgYDVR0RBBMwEYcEfwAA\n"
	"AYIJbG9jYWxob3N0MBMGA1UdJQQMMAoGCCsGAQUFBwMBMB0GA1UdDgQWBBT9plxl\n"
	"+UaF1/ANT2jSzljfmQZ2NDAfBgNVHSMEGDAWgBSmXA87/mlYSAWqDbOdayw+eT/j\n"
	"FTAKBggqhkjOPQQDAgNHADBEAiAp/rYABcrUWoN0z+IDeUjSCB3+ampuuEYyjcte\n"
	"nREqtwIgehLTJWVpzePTh+rHw7EVcI+oDJRsBeDY6i4w9DxZhUg=\n"
	"-----END CERTIFICATE-----\n";

static const char srv_key_pem[] =
	"-----BEGIN PRIVATE KEY-----\n"
	"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgURnOBmMBuIaiV0u5\n"
	"ah/ZxmCH2WIJhGn5ifJnyAB8NNWhRANCAATG3/uvRUhHEFV/BjvQo5cethWd3T61\n"
	"XK36eUCKbh0k5CY+a6gms+hIRPAhp4DN9M8WggqbvhsKLGxxOHdThaH3\n"
	"-----END PRIVATE KEY-----\n";

static const char cli_cert_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBijCCATCgAwIBAgIUbYkmSoU0GQDQsqmzhlg1yJ38K8cwCgYIKoZIzj0EAwIw\n"
	"GDEWMBQGA1UEAwwNZ29zYnggdGVzdCBDQTAgFw0yNjExMjIwMjEwMjNaGA8yMTI2\n"
	"MTAyOTAyMTAyM1owFzEVMBMGA1UEAwwMZ29zYngtY2xpZW50MFkwEwYHKoZIzj0C\n"
	"AQYIKoZIzj0DAQcDQgAEQKfQzoQEX0Qln8O8ej02F2dYnORTKUbmEGrYHvaHfpd+\n"
	"A9umgSDL3NQr6EST+wI7D62ajN4KxNFCBzSAAjfF3qNXMFUwEwYDVR0lBAwwCgYI\n"
	"KwYBBQUHAwIwHQYDVR0OBBYEFMpcU/7STUbZpmH9iKBcyL17PtKSMB8GA1UdIwQY\n"
	"MBaAFKZcDzv+aVhIBaoNs51rLD55P+MVMAoGCCqGSM49BAMCA0gAMEUCIBvJWuTJ\n"
	"0zdxID9Iqonj92IZ36zelWFXSHSC9xgX1i96AiEAn3M8GQvdYlRwzZAMyzxai+sm\n"
	"b0w6cMhi/a5xEIP72t8=\n"
	"-----END CERTIFICATE-----\n";

static const char cli_key_pem[] =
	"-----BEGIN PRIVATE KEY-----\n"
	"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg0/ZNWWaaWuXibDXy\n"
	"sVHCVCmt2ZK8OcrJFPx8LXg9fhKhRANCAARAp9DOhARfRCWfw7x6PTYXZ1ic5FMp\n"
	"RuYQatge9od+l34D26aBIMvc1CvoRJP7AjsPrZqM3grE0UIHNIACN8Xe\n"
	"-----END PRIVATE KEY-----\n";

/* Per-request state in the server. */
struct rq {
	struct srv *s;
	int started;
	struct strbuf raw_uri;
	struct strbuf body;
	struct MHD_PostProcessor *pp;
	struct strbuf field, filename, data;
};

struct stream_state {
	struct srv *s;
	int n;	  /* chunks; 0: endless */
	int sync; /* wait for the client before each chunk */
	int i;
};

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *con)
{
	struct rq *r = calloc(1, sizeof(*r));

	r->s = cls;
	strbuf_init(&r->raw_uri, 0);
	strbuf_init(&r->body, 0);
	strbuf_init(&r->field, 0);
	strbuf_init(&r->filename, 0);
	strbuf_init(&r->data, 0);
	strbuf_addstr(&r->raw_uri, uri);
	return r;
}

static void completed(void *cls, struct MHD_Connection *con, void **req_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct rq *r = *req_cls;

	if (!r)
		return;
	if (r->pp)
		MHD_destroy_post_processor(r->pp);
	strbuf_release(&r->raw_uri);
	strbuf_release(&r->body);
	strbuf_release(&r->field);
	strbuf_release(&r->filename);
	strbuf_release(&r->data);
	free(r);
	*req_cls = NULL;
}

static void notify_conn(void *cls, struct MHD_Connection *con, void **sctx,
			enum MHD_ConnectionNotificationCode toe)
{
	struct srv *s = cls;

	if (toe != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	pthread_mutex_lock(&s->lock);
	s->connections++;
	pthread_mutex_unlock(&s->lock);
}

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind,
				  const char *key, const char *value)
{
	strbuf_addf(cls, "%s: %s\n", key, value ? value : "");
	return MHD_YES;
}

static enum MHD_Result post_iter(void *cls, enum MHD_ValueKind kind,
				 const char *key, const char *filename,
				 const char *ctype, const char *te,
				 const char *data, uint64_t off, size_t size)
{
	struct rq *r = cls;

	if (off == 0) {
		strbuf_reset(&r->field);
		strbuf_addstr(&r->field, key);
		strbuf_reset(&r->filename);
		if (filename)
			strbuf_addstr(&r->filename, filename);
	}
	strbuf_add(&r->data, data, size);
	return MHD_YES;
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream_state *st = cls;
	struct srv *s = st->s;
	int n;

	if (st->n && st->i >= st->n)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (st->sync && st->i > 0) {
		struct timespec deadline;
		int rc = 0;

		deadline_in_ms(&deadline, CLOCK_REALTIME, 30000);
		pthread_mutex_lock(&s->lock);
		while (s->client_seen < st->i && rc == 0)
			rc = pthread_cond_timedwait(&s->cond, &s->lock,
						    &deadline);
		pthread_mutex_unlock(&s->lock);
		if (rc)
			return MHD_CONTENT_READER_END_OF_STREAM;
	}
	n = snprintf(buf, max, "chunk %d\n", st->i);
	st->i++;
	return n;
}

/*
 * How many certificates the TLS client presented. libmicrohttpd hands
 * out its gnutls session; gnutls itself is reached with dlsym() since
 * the build does not link it directly. -1 when that is not possible.
 */
typedef const void *(*get_peers_fn)(void *session, unsigned *n);

static int peer_cert_count(struct MHD_Connection *con)
{
	const union MHD_ConnectionInfo *ci;
	get_peers_fn f;
	unsigned n = 0;

	*(void **)&f = dlsym(RTLD_DEFAULT, "gnutls_certificate_get_peers");
	ci = MHD_get_connection_info(con, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!f || !ci || !ci->tls_session)
		return -1;
	if (!f(ci->tls_session, &n))
		return 0;
	return (int)n;
}

static enum MHD_Result queue(struct MHD_Connection *con, unsigned code,
			     const char *ctype, const void *body, size_t len)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, (void *)body,
					       MHD_RESPMEM_MUST_COPY);
	if (ctype)
		MHD_add_response_header(resp, "Content-Type", ctype);
	ret = MHD_queue_response(con, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *con,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_size, void **req_cls)
{
	struct srv *s = cls;
	struct rq *r = *req_cls;
	const char *v;

	if (!r->started) {
		r->started = 1;
		if (!strcmp(url, "/upload"))
			r->pp = MHD_create_post_processor(con, 65536, post_iter,
							  r);
		return MHD_YES;
	}
	if (*upload_size) {
		if (r->pp)
			MHD_post_process(r->pp, upload_data, *upload_size);
		else
			strbuf_add(&r->body, upload_data, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}

	pthread_mutex_lock(&s->lock);
	s->peer_certs = s->tls ? peer_cert_count(con) : -1;
	xsnprintf(s->method, sizeof(s->method), "%s", method);
	strbuf_reset(&s->raw_uri);
	strbuf_addbuf(&s->raw_uri, &r->raw_uri);
	strbuf_reset(&s->headers);
	MHD_get_connection_values(con, MHD_HEADER_KIND, add_header,
				  &s->headers);
	s->body_len = r->body.len;
	if (r->pp) {
		strbuf_reset(&s->up_field);
		strbuf_addbuf(&s->up_field, &r->field);
		strbuf_reset(&s->up_filename);
		strbuf_addbuf(&s->up_filename, &r->filename);
		strbuf_reset(&s->up_data);
		strbuf_addbuf(&s->up_data, &r->data);
	}
	pthread_mutex_unlock(&s->lock);

	if (!strcmp(url, "/echo") || starts_with(url, "/echo/"))
		return queue(con, 200, "application/x-echo", r->body.buf,
			     r->body.len);
	if (skip_prefix(url, "/status/", &v)) {
		char msg[64];

		xsnprintf(msg, sizeof(msg), "status %s", v);
		return queue(con, atoi(v), "text/plain", msg, strlen(msg));
	}
	if (!strcmp(url, "/detail")) {
		const char *b = "{\"detail\":\"x went wrong\"}";

		return queue(con, 400, "application/json", b, strlen(b));
	}
	if (!strcmp(url, "/k8s")) {
		const char *b =
			"{\"kind\":\"Status\",\"apiVersion\":\"v1\","
			"\"metadata\":{},\"status\":\"Failure\","
			"\"message\":\"sandboxclaims.extensions.agents.x-k8s.io"
			" \\\"c1\\\" not found\",\"reason\":\"NotFound\","
			"\"details\":{\"name\":\"c1\"},\"code\":404}";

		return queue(con, 404, "application/json", b, strlen(b));
	}
	if (!strcmp(url, "/json")) {
		char b[128];

		xsnprintf(b, sizeof(b), "{\"method\":\"%s\",\"len\":%zu}",
			  method, r->body.len);
		return queue(con, 200, "application/json", b, strlen(b));
	}
	if (!strcmp(url, "/badjson"))
		return queue(con, 200, "application/json", "{nope", 5);
	if (!strcmp(url, "/upload")) {
		char b[256];

		xsnprintf(b, sizeof(b), "{\"filename\":\"%s\",\"size\":%zu}",
			  r->filename.buf, r->data.len);
		return queue(con, 200, "application/json", b, strlen(b));
	}
	if (!strcmp(url, "/stream")) {
		struct stream_state *st = calloc(1, sizeof(*st));
		struct MHD_Response *resp;
		enum MHD_Result ret;

		st->s = s;
		v = MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND,
						"n");
		st->n = v ? atoi(v) : 0;
		v = MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND,
						"sync");
		st->sync = v && !strcmp(v, "1");
		/* status=<code>: an endless error body */
		v = MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND,
						"status");
		resp = MHD_create_response_from_callback(
			MHD_SIZE_UNKNOWN, 256, stream_reader, st, free);
		MHD_add_response_header(resp, "Content-Type",
					"application/x-ndjson");
		ret = MHD_queue_response(con, v ? atoi(v) : 200, resp);
		MHD_destroy_response(resp);
		return ret;
	}
	return queue(con, 404, "text/plain", "no such thing", 13);
}

static int start_srv(struct srv *s, int unix_sock, int tls)
{
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
			 MHD_USE_ERROR_LOG;
	const union MHD_DaemonInfo *info;

	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	strbuf_init(&s->raw_uri, 0);
	strbuf_init(&s->headers, 0);
	strbuf_init(&s->up_field, 0);
	strbuf_init(&s->up_filename, 0);
	strbuf_init(&s->up_data, 0);
	if (unix_sock) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		xsnprintf(s->sock, sizeof(s->sock), "%s/srv.sock", tmpdir);
		xsnprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->sock);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
		    listen(fd, 64))
			return -1;
		xsnprintf(s->base, sizeof(s->base), "http://localhost");
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, handler, s,
					MHD_OPTION_LISTEN_SOCKET, fd,
					MHD_OPTION_URI_LOG_CALLBACK, uri_log, s,
					MHD_OPTION_NOTIFY_COMPLETED, completed,
					s, MHD_OPTION_NOTIFY_CONNECTION,
					notify_conn, s, MHD_OPTION_END);
	} else if (tls) {
		struct sockaddr_in sa = { .sin_family = AF_INET };

		s->tls = 1;
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		/* no error log: refused handshakes are expected here */
		s->d = MHD_start_daemon(
			(flags & ~MHD_USE_ERROR_LOG) | MHD_USE_TLS, 0, NULL,
			NULL, handler, s, MHD_OPTION_SOCK_ADDR, &sa,
			MHD_OPTION_HTTPS_MEM_KEY, srv_key_pem,
			MHD_OPTION_HTTPS_MEM_CERT, srv_cert_pem,
			MHD_OPTION_HTTPS_MEM_TRUST, ca_pem,
			MHD_OPTION_URI_LOG_CALLBACK, uri_log, s,
			MHD_OPTION_NOTIFY_COMPLETED, completed, s,
			MHD_OPTION_NOTIFY_CONNECTION, notify_conn, s,
			MHD_OPTION_END);
	} else {
		struct sockaddr_in sa = { .sin_family = AF_INET };

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, handler, s,
					MHD_OPTION_SOCK_ADDR, &sa,
					MHD_OPTION_URI_LOG_CALLBACK, uri_log, s,
					MHD_OPTION_NOTIFY_COMPLETED, completed,
					s, MHD_OPTION_NOTIFY_CONNECTION,
					notify_conn, s, MHD_OPTION_END);
	}
	if (!s->d)
		return -1;
	if (!unix_sock) {
		info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
		if (!info || !info->port)
			return -1;
		xsnprintf(s->base, sizeof(s->base), "%s://127.0.0.1:%u",
			  tls ? "https" : "http", (unsigned)info->port);
	}
	return 0;
}

static void stop_srv(struct srv *s)
{
	if (s->d)
		MHD_stop_daemon(s->d);
	s->d = NULL;
	strbuf_release(&s->raw_uri);
	strbuf_release(&s->headers);
	strbuf_release(&s->up_field);
	strbuf_release(&s->up_filename);
	strbuf_release(&s->up_data);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
}

static int connections(struct srv *s)
{
	int n;

	pthread_mutex_lock(&s->lock);
	n = s->connections;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/*
 * Values of header `name` in the last request, joined with ',', and how
 * many there were. Returns a malloc'd string ("" if none).
 */
static char *srv_header(struct srv *s, const char *name, int *count)
{
	struct strbuf out = STRBUF_INIT;
	size_t nl = strlen(name);
	const char *p;
	int n = 0;

	pthread_mutex_lock(&s->lock);
	for (p = s->headers.buf; *p;) {
		const char *eol = strchr(p, '\n');

		if (!strncasecmp(p, name, nl) && p[nl] == ':') {
			if (n++)
				strbuf_addch(&out, ',');
			strbuf_add(&out, p + nl + 2, eol - (p + nl + 2));
		}
		p = eol + 1;
	}
	pthread_mutex_unlock(&s->lock);
	if (count)
		*count = n;
	return strbuf_detach(&out, NULL);
}

static void assert_header(struct srv *s, const char *name, const char *want)
{
	int n;
	char *v = srv_header(s, name, &n);

	if (!want) {
		assert_int_equal(n, 0);
	} else {
		assert_int_equal(n, 1);
		assert_string_equal(v, want);
	}
	free(v);
}

/* error() messages are captured here instead of going to stderr */
static struct strbuf errors = STRBUF_INIT;

static void capture(const char *prefix, const char *msg, void *data)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
}

static int setup(void **state)
{
	strbuf_reset(&errors);
	set_error_routine(capture, NULL);
	return 0;
}

static int teardown(void **state)
{
	set_error_routine(NULL, NULL);
	return 0;
}

static struct http_client *tcp_client(void)
{
	struct http_client *c = http_client_new(tcp_srv.base, NULL);

	assert_non_null(c);
	return c;
}

static void test_methods(void **state)
{
	struct http_client *c = tcp_client();
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { .path = "/echo" };
	static const char *const methods[] = { "POST", "PUT", "PATCH", "DELETE",
					       "GET" };

	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_int_equal(resp.status, 200);
	assert_string_equal(tcp_srv.method, "GET");
	assert_int_equal(resp.body.len, 0);
	assert_string_equal(resp.content_type.buf, "application/x-echo");

	for (size_t i = 0; i < ARRAY_SIZE(methods); i++) {
		char body[64];

		xsnprintf(body, sizeof(body), "body of %s", methods[i]);
		req.method = methods[i];
		req.body = body;
		req.body_len = strlen(body);
		req.content_type = "text/plain";
		assert_int_equal(http_request(c, &req, &resp), 0);
		assert_int_equal(resp.status, 200);
		assert_string_equal(tcp_srv.method, methods[i]);
		assert_string_equal(resp.body.buf, body);
		assert_header(&tcp_srv, "Content-Type", "text/plain");
	}

	/* DELETE and GET without a body send none; POST sends an empty one */
	req.body = NULL;
	req.body_len = 0;
	req.content_type = NULL;
	req.method = "DELETE";
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_string_equal(tcp_srv.method, "DELETE");
	assert_header(&tcp_srv, "Content-Length", NULL);
	req.method = "POST";
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_string_equal(tcp_srv.method, "POST");
	assert_header(&tcp_srv, "Content-Length", "0");
	/* no Content-Type given: none sent (not curl's form default) */
	assert_header(&tcp_srv, "Content-Type", NULL);
	assert_header(&tcp_srv, "Expect", NULL);

	req.method = "HEAD";
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_int_equal(resp.status, 200);
	assert_string_equal(tcp_srv.method, "HEAD");
	req.method = "GET";
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_string_equal(tcp_srv.method, "GET");
	assert_int_equal(tcp_srv.body_len, 0);
	assert_int_equal(errors.len, 0);

	http_resp_release(&resp);
	http_client_free(c);
}

static void test_status_codes(void **state)
{
	struct http_client *c = tcp_client();
	struct http_resp resp = HTTP_RESP_INIT;
	static const long codes[] = { 201, 204, 302, 404, 409, 500, 503 };

	for (size_t i = 0; i < ARRAY_SIZE(codes); i++) {
		char path[32];
		char want[32];
		struct http_req req = { .path = path };

		xsnprintf(path, sizeof(path), "/status/%ld", codes[i]);
		xsnprintf(want, sizeof(want), "status %ld", codes[i]);
		assert_int_equal(http_request(c, &req, &resp), 0);
		assert_int_equal(resp.status, codes[i]);
		if (codes[i] != 204)
			assert_string_equal(resp.body.buf, want);
	}
	assert_string_equal(http_client_last_error(c), "");
	http_resp_release(&resp);
	http_client_free(c);
}

static void fill_pattern(char *buf, size_t len)
{
	uint32_t x = 12345;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245 + 12345;
		buf[i] = (char)(x >> 16);
	}
}

struct memsrc {
	const char *data;
	size_t len, pos;
};

static ssize_t mem_read(char *buf, size_t len, void *data)
{
	struct memsrc *m = data;
	size_t n = m->len - m->pos;

	if (n > len)
		n = len;
	if (n > 1000)
		n = 1000 + m->pos % 7; /* odd piece sizes */
	memcpy(buf, m->data + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

static void big_round_trip(struct srv *s, const struct http_client_opts *o)
{
	struct http_client *c = http_client_new(s->base, o);
	struct http_resp resp = HTTP_RESP_INIT;
	size_t len = 10 << 20;
	char *big = malloc(len);
	struct http_req req = { .method = "POST", .path = "/echo" };
	struct memsrc m = { big, len, 0 };
	char tmpl[128];
	int fd;

	assert_non_null(c);
	fill_pattern(big, len);
	req.body = big;
	req.body_len = len;
	req.content_type = "application/octet-stream";
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_int_equal(resp.status, 200);
	assert_int_equal(resp.body.len, len);
	assert_memory_equal(resp.body.buf, big, len);

	/* read callback, chunked (size unknown) */
	req.method = "PUT";
	req.body = NULL;
	req.read_body = mem_read;
	req.read_data = &m;
	req.body_len = HTTP_LEN_UNKNOWN;
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_int_equal(resp.status, 200);
	assert_string_equal(s->method, "PUT");
	assert_header(s, "Transfer-Encoding", "chunked");
	assert_int_equal(resp.body.len, len);
	assert_memory_equal(resp.body.buf, big, len);

	/* from a file descriptor, size known */
	xsnprintf(tmpl, sizeof(tmpl), "%s/bodyXXXXXX", tmpdir);
	fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	assert_int_equal(write_in_full(fd, big, len), (ssize_t)len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	req.read_body = http_read_fd;
	req.read_data = &fd;
	req.body_len = len;
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_int_equal(resp.status, 200);
	assert_header(s, "Transfer-Encoding", NULL);
	assert_int_equal(resp.body.len, len);
	assert_memory_equal(resp.body.buf, big, len);
	close(fd);
	unlink(tmpl);

	free(big);
	http_resp_release(&resp);
	http_client_free(c);
}

static void test_big_body_tcp(void **state)
{
	big_round_trip(&tcp_srv, NULL);
}

static void test_big_body_unix(void **state)
{
	struct http_client_opts o = { .unix_socket = unix_srv.sock };

	big_round_trip(&unix_srv, &o);
}

struct sink {
	struct srv *s;
	struct strbuf got;
	int calls;
	int abort_after;
};

static int on_data(const char *buf, size_t len, void *data)
{
	struct sink *k = data;
	int lines = 0;

	k->calls++;
	strbuf_add(&k->got, buf, len);
	for (size_t i = 0; i < k->got.len; i++)
		lines += k->got.buf[i] == '\n';
	if (k->s) {
		pthread_mutex_lock(&k->s->lock);
		k->s->client_seen = lines;
		pthread_cond_broadcast(&k->s->cond);
		pthread_mutex_unlock(&k->s->lock);
	}
	if (k->abort_after && k->calls >= k->abort_after)
		return -1;
	return 0;
}

static void test_streaming(void **state)
{
	struct http_client *c = tcp_client();
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { .path = "/stream", .query = "n=20&sync=1" };
	struct sink k = { &tcp_srv, STRBUF_INIT, 0, 0 };
	struct strbuf want = STRBUF_INIT;

	tcp_srv.client_seen = 0;
	req.on_data = on_data;
	req.on_data_arg = &k;
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_int_equal(resp.status, 200);
	assert_string_equal(resp.content_type.buf, "application/x-ndjson");
	for (int i = 0; i < 20; i++)
		strbuf_addf(&want, "chunk %d\n", i);
	/*
	 * The server sends chunk i only after the client saw chunk i-1,
	 * so all chunks arriving proves delivery as the data arrives.
	 */
	assert_string_equal(k.got.buf, want.buf);
	assert_true(k.calls >= 20);
	assert_int_equal(resp.body.len, 0);

	/* a non-2xx answer is buffered, not streamed */
	strbuf_reset(&k.got);
	k.calls = 0;
	req.path = "/detail";
	req.query = NULL;
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_int_equal(resp.status, 400);
	assert_int_equal(k.calls, 0);
	assert_string_equal(resp.body.buf, "{\"detail\":\"x went wrong\"}");

	strbuf_release(&want);
	strbuf_release(&k.got);
	http_resp_release(&resp);
	http_client_free(c);
}

static void test_stream_abort(void **state)
{
	struct http_client *c = tcp_client();
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { .path = "/stream", .query = "n=0" };
	struct sink k = { NULL, STRBUF_INIT, 0, 3 };

	req.on_data = on_data;
	req.on_data_arg = &k;
	assert_int_equal(http_request(c, &req, &resp), HTTP_ABORTED);
	assert_int_equal(k.calls, 3);
	assert_int_equal(errors.len, 0);
	assert_non_null(strstr(http_client_last_error(c), "aborted"));
	assert_true(starts_with(k.got.buf, "chunk 0\n"));

	/* the client still works afterwards */
	req.path = "/status/200";
	req.query = NULL;
	req.on_data = NULL;
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_int_equal(resp.status, 200);
	assert_string_equal(resp.body.buf, "status 200");

	strbuf_release(&k.got);
	http_resp_release(&resp);
	http_client_free(c);
}

/* an answer that never ends is not stored past max_body */
static void test_max_body(void **state)
{
	struct http_client *c = tcp_client();
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { .path = "/stream", .query = "n=0" };

	req.max_body = 4096;
	assert_int_equal(http_request(c, &req, &resp), -1);
	assert_int_equal(resp.status, 0);
	assert_true(resp.body.len <= 4096);
	assert_non_null(strstr(errors.buf, "answer over 4096 bytes"));
	assert_non_null(strstr(http_client_last_error(c),
			       "/stream?n=0' failed: answer over 4096 bytes"));

	/* a body within the bound arrives whole */
	strbuf_reset(&errors);
	req.query = "n=20";
	req.max_body = 170; /* "chunk 0\n" ... "chunk 19\n": 170 bytes */
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_int_equal(resp.status, 200);
	assert_int_equal(resp.body.len, 170);
	req.max_body = 169;
	assert_int_equal(http_request(c, &req, &resp), -1);

	/* the default bound: an endless body stops at HTTP_MAX_BODY */
	req.query = "n=0";
	req.max_body = 0;
	assert_int_equal(http_request(c, &req, &resp), -1);
	assert_true(resp.body.len <= HTTP_MAX_BODY);
	assert_true(resp.body.len > HTTP_MAX_BODY - 4096);

	/* an endless error body: its start, and the answer counts */
	strbuf_reset(&errors);
	req.query = "n=0&status=500";
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_int_equal(resp.status, 500);
	assert_int_equal(resp.body_cut, 1);
	assert_int_equal(resp.body.len, HTTP_MAX_ERROR_BODY);
	assert_true(starts_with(resp.body.buf, "chunk 0\nchunk 1\n"));
	assert_int_equal(errors.len, 0);

	/* the client still works afterwards */
	req.path = "/status/404";
	req.query = NULL;
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_int_equal(resp.status, 404);
	assert_int_equal(resp.body_cut, 0);
	assert_string_equal(resp.body.buf, "status 404");

	http_resp_release(&resp);
	http_client_free(c);
}

static void keepalive(struct srv *s, const struct http_client_opts *o)
{
	struct http_client *c = http_client_new(s->base, o);
	struct http_resp resp = HTTP_RESP_INIT;
	int before = connections(s);

	assert_non_null(c);
	for (int i = 0; i < 100; i++) {
		struct http_req req = { .path = "/echo" };

		if (i % 2) {
			req.method = "POST";
			req.body = "x";
			req.body_len = 1;
		}
		assert_int_equal(http_request(c, &req, &resp), 0);
		assert_int_equal(resp.status, 200);
	}
	assert_int_equal(connections(s) - before, 1);
	http_resp_release(&resp);
	http_client_free(c);
}

static void test_keepalive_tcp(void **state)
{
	keepalive(&tcp_srv, NULL);
}

static void test_keepalive_unix(void **state)
{
	struct http_client_opts o = { .unix_socket = unix_srv.sock };

	keepalive(&unix_srv, &o);
}

static int is_request_id(const char *v)
{
	if (strlen(v) != 16)
		return 0;
	for (; *v; v++)
		if (!strchr("0123456789abcdef", *v))
			return 0;
	return 1;
}

static void test_request_id(void **state)
{
	struct http_client *c = tcp_client();
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { .path = "/echo" };
	static const char *const mine[] = { "x-request-id: my-id", NULL };
	static const char *const fixed[] = { "X-Request-ID: fixed", NULL };
	struct http_client_opts o = { .headers = fixed };
	char *a, *b;
	int n;

	assert_int_equal(http_request(c, &req, &resp), 0);
	a = srv_header(&tcp_srv, "X-Request-ID", &n);
	assert_int_equal(n, 1);
	assert_true(is_request_id(a));
	assert_int_equal(http_request(c, &req, &resp), 0);
	b = srv_header(&tcp_srv, "X-Request-ID", &n);
	assert_int_equal(n, 1);
	assert_true(is_request_id(b));
	assert_string_not_equal(a, b);
	free(a);
	free(b);

	req.headers = mine;
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_header(&tcp_srv, "X-Request-ID", "my-id");
	http_client_free(c);

	c = http_client_new(tcp_srv.base, &o);
	req.headers = NULL;
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_header(&tcp_srv, "X-Request-ID", "fixed");
	http_resp_release(&resp);
	http_client_free(c);
}

static void test_headers(void **state)
{
	static const char *const base[] = { "X-Sandbox-ID: sb-1",
					    "X-Common: base", NULL };
	static const char *const extra[] = { "x-common: override", "X-One: 1",
					     NULL };
	struct http_client_opts o = { .headers = base,
				      .bearer_token = "tok.en" };
	struct http_client *c = http_client_new(tcp_srv.base, &o);
	struct http_client *d;
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { .path = "/echo", .headers = extra };
	char *ua;

	assert_non_null(c);
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_header(&tcp_srv, "X-Sandbox-ID", "sb-1");
	assert_header(&tcp_srv, "Authorization", "Bearer tok.en");
	assert_header(&tcp_srv, "X-Common", "override");
	assert_header(&tcp_srv, "X-One", "1");
	ua = srv_header(&tcp_srv, "User-Agent", NULL);
	assert_true(starts_with(ua, "gosbx/"));
	free(ua);

	req.headers = NULL;
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_header(&tcp_srv, "X-Common", "base");
	assert_header(&tcp_srv, "X-One", NULL);

	/* a duplicate keeps every setting */
	d = http_client_dup(c);
	http_client_free(c);
	assert_non_null(d);
	assert_int_equal(http_request(d, &req, &resp), 0);
	assert_header(&tcp_srv, "X-Sandbox-ID", "sb-1");
	assert_header(&tcp_srv, "Authorization", "Bearer tok.en");
	http_resp_release(&resp);
	http_client_free(d);
}

static void test_multipart(void **state)
{
	struct http_client_opts o = { .unix_socket = unix_srv.sock };
	struct http_client *c = http_client_new(unix_srv.base, &o);
	struct http_resp resp = HTTP_RESP_INIT;
	size_t len = 300000;
	char *data = malloc(len);
	json_t *j;
	char *ct;

	assert_non_null(c);
	fill_pattern(data, len);
	assert_int_equal(http_upload_multipart(c, "/upload", "file", "main.go",
					       data, len, &resp),
			 0);
	assert_int_equal(resp.status, 200);
	assert_string_equal(unix_srv.up_field.buf, "file");
	assert_string_equal(unix_srv.up_filename.buf, "main.go");
	assert_int_equal(unix_srv.up_data.len, len);
	assert_memory_equal(unix_srv.up_data.buf, data, len);
	j = json_loadb(resp.body.buf, resp.body.len, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "size")), len);
	json_decref(j);
	ct = srv_header(&unix_srv, "Content-Type", NULL);
	assert_true(starts_with(ct, "multipart/form-data; boundary="));
	free(ct);

	/* an ordinary request after the upload is not multipart */
	{
		struct http_req req = { .method = "POST",
					.path = "/echo",
					.body = "plain",
					.body_len = 5 };
		assert_int_equal(http_request(c, &req, &resp), 0);
		assert_string_equal(resp.body.buf, "plain");
		assert_header(&unix_srv, "Content-Type", NULL);
	}

	/* an empty file */
	assert_int_equal(http_upload_multipart(c, "/upload", "file", "empty",
					       "", 0, &resp),
			 0);
	assert_string_equal(unix_srv.up_filename.buf, "empty");
	assert_int_equal(unix_srv.up_data.len, 0);

	free(data);
	http_resp_release(&resp);
	http_client_free(c);
}

static void test_dead_socket(void **state)
{
	struct http_client_opts o = { 0 };
	struct http_client *c;
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { .path = "/" };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[128], want[256];
	int fd;

	/* a socket file nobody listens on */
	xsnprintf(path, sizeof(path), "%s/dead.sock", tmpdir);
	xsnprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);

	o.unix_socket = path;
	c = http_client_new("http://localhost", &o);
	assert_non_null(c);
	assert_int_equal(http_request(c, &req, &resp), -1);
	assert_int_equal(resp.status, 0);
	xsnprintf(want, sizeof(want),
		  "cannot reach 'unix:%s': Couldn't connect to server", path);
	assert_string_equal(http_client_last_error(c), want);
	assert_string_equal(last_error(), want);
	assert_true(starts_with(errors.buf, "error: cannot reach 'unix:"));
	http_client_free(c);
	unlink(path);

	/* a missing socket */
	c = http_client_new("http://localhost", &o);
	assert_int_equal(http_request(c, &req, &resp), -1);
	assert_string_equal(http_client_last_error(c), want);
	http_client_free(c);

	http_resp_release(&resp);
}

static void test_dead_port(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	char base[64];
	struct http_client *c;
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { .path = "/" };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	/* a port that is bound but not listening refuses connections */
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	xsnprintf(base, sizeof(base), "http://127.0.0.1:%u",
		  (unsigned)ntohs(sa.sin_port));
	c = http_client_new(base, NULL);
	assert_int_equal(http_request(c, &req, &resp), -1);
	assert_true(starts_with(http_client_last_error(c), "cannot reach '"));
	assert_non_null(strstr(http_client_last_error(c), base));
	close(fd);
	http_resp_release(&resp);
	http_client_free(c);
}

/* A TCP listener on 127.0.0.1 that accepts but never answers. */
static int silent_listener(char *base, size_t n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	xsnprintf(base, n, "http://127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
	return fd;
}

static void test_timeout(void **state)
{
	char base[64];
	int lfd = silent_listener(base, sizeof(base));
	struct http_client *c = http_client_new(base, NULL);
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { .path = "/slow", .timeout_ms = 300 };

	/* the kernel completes the handshake; nobody ever answers */
	assert_int_equal(http_request(c, &req, &resp), -1);
	assert_non_null(strstr(http_client_last_error(c), "timed out"));
	assert_true(starts_with(http_client_last_error(c), "GET '"));
	assert_non_null(strstr(http_client_last_error(c), "/slow"));
	close(lfd);
	http_resp_release(&resp);
	http_client_free(c);
}

struct canceller {
	int lfd;
	volatile sig_atomic_t *flag;
	int cfd;
};

static void *cancel_thread(void *data)
{
	struct canceller *k = data;
	char buf[256];

	/* wait until the request arrived, then raise the flag */
	k->cfd = accept(k->lfd, NULL, NULL);
	if (k->cfd >= 0 && read(k->cfd, buf, sizeof(buf)) > 0)
		*k->flag = 1;
	return NULL;
}

static void test_cancel(void **state)
{
	static volatile sig_atomic_t flag;
	char base[64];
	struct canceller k = { silent_listener(base, sizeof(base)), &flag, -1 };
	struct http_client *c = http_client_new(base, NULL);
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { .path = "/forever", .cancel = &flag };
	pthread_t t;

	flag = 0;
	pthread_create(&t, NULL, cancel_thread, &k);
	assert_int_equal(http_request(c, &req, &resp), HTTP_ABORTED);
	pthread_join(t, NULL);
	assert_int_equal(flag, 1);
	assert_int_equal(errors.len, 0);
	assert_string_equal(http_client_last_error(c),
			    "GET '/forever' cancelled");
	close(k.cfd);
	close(k.lfd);
	http_resp_release(&resp);
	http_client_free(c);
}

static void test_json(void **state)
{
	struct http_client *c = tcp_client();
	json_t *body = json_pack("{s:s}", "command", "echo hi");
	json_t *out = NULL;
	long status = -1;

	assert_int_equal(http_json(c, "POST", "/json", body, &status, &out), 0);
	assert_int_equal(status, 200);
	assert_string_equal(json_string_value(json_object_get(out, "method")),
			    "POST");
	assert_int_equal(json_integer_value(json_object_get(out, "len")),
			 strlen("{\"command\":\"echo hi\"}"));
	assert_header(&tcp_srv, "Content-Type", "application/json");
	assert_header(&tcp_srv, "Accept", "application/json");
	json_decref(out);

	assert_int_equal(http_json(c, "GET", "/json", NULL, &status, &out), 0);
	assert_header(&tcp_srv, "Content-Type", NULL);
	json_decref(out);

	/* runtime error body */
	assert_int_equal(http_json(c, "POST", "/detail", body, &status, &out),
			 -1);
	assert_int_equal(status, 400);
	assert_string_equal(last_error(),
			    "POST '/detail': 400 Bad Request: x went wrong");
	assert_string_equal(http_client_last_error(c), last_error());
	assert_non_null(out);
	json_decref(out);

	/* Kubernetes Status */
	assert_int_equal(http_json(c, "GET", "/k8s", NULL, &status, &out), -1);
	assert_int_equal(status, 404);
	assert_string_equal(last_error(),
			    "GET '/k8s': 404 Not Found: "
			    "sandboxclaims.extensions.agents.x-k8s.io \"c1\" "
			    "not found");
	assert_string_equal(json_string_value(json_object_get(out, "reason")),
			    "NotFound");
	json_decref(out);

	/* plain-text error, and a 2xx answer that is not JSON */
	assert_int_equal(http_json(c, "GET", "/nothing", NULL, NULL, NULL), -1);
	assert_string_equal(last_error(),
			    "GET '/nothing': 404 Not Found: no such thing");
	assert_int_equal(http_json(c, "GET", "/badjson", NULL, &status, &out),
			 -1);
	assert_int_equal(status, 200);
	assert_null(out);
	assert_true(starts_with(last_error(),
				"GET '/badjson': invalid JSON in the answer"));

	json_decref(body);
	http_client_free(c);
}

static void test_error_text(void **state)
{
	struct strbuf out = STRBUF_INIT;
	struct strbuf body = STRBUF_INIT;

	http_error_text(&out, 502, &body);
	assert_string_equal(out.buf, "502 Bad Gateway");
	strbuf_reset(&out);
	strbuf_addstr(&body, "first line\nsecond line");
	http_error_text(&out, 599, &body);
	assert_string_equal(out.buf, "599: first line");
	strbuf_reset(&out);
	strbuf_reset(&body);
	strbuf_addstr(&body, "{\"detail\":[{\"loc\":[\"body\"]}]}");
	http_error_text(&out, 422, &body);
	assert_string_equal(
		out.buf, "422 Unprocessable Content: [{\"loc\":[\"body\"]}]");
	strbuf_release(&out);
	strbuf_release(&body);
}

static void test_pct_encode(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct strbuf path = STRBUF_INIT;
	struct strbuf q = STRBUF_INIT;
	struct http_client *c = tcp_client();
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };

	http_pct_encode_path(&sb, "a b/%/\xc3\xbc/..");
	assert_string_equal(sb.buf, "a%20b/%25/%C3%BC/..");
	strbuf_reset(&sb);
	http_pct_encode_path(&sb, "A-Z_a.z~09/?#&+=:@");
	assert_string_equal(sb.buf, "A-Z_a.z~09/%3F%23%26%2B%3D%3A%40");
	strbuf_reset(&sb);
	http_pct_encode_query(&sb, "a/b c&d=\xc3\xa9");
	assert_string_equal(sb.buf, "a%2Fb%20c%26d%3D%C3%A9");
	http_query_add(&q, "dir", "x y");
	http_query_add(&q, "label Selector", "a=b,c");
	assert_string_equal(q.buf, "dir=x%20y&label%20Selector=a%3Db%2Cc");

	/* sent as encoded, dot segments kept */
	strbuf_addstr(&path, "/echo/");
	http_pct_encode_path(&path, "a b/%/\xc3\xbc/..");
	req.path = path.buf;
	req.query = q.buf;
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_int_equal(resp.status, 200);
	assert_string_equal(tcp_srv.raw_uri.buf,
			    "/echo/a%20b/%25/%C3%BC/..?dir=x%20y&"
			    "label%20Selector=a%3Db%2Cc");

	/* a path without leading slash gets one */
	req.path = "echo";
	req.query = NULL;
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_string_equal(tcp_srv.raw_uri.buf, "/echo");

	strbuf_release(&sb);
	strbuf_release(&path);
	strbuf_release(&q);
	http_resp_release(&resp);
	http_client_free(c);
}

static void test_base_url_prefix(void **state)
{
	char base[96];
	struct http_client *c;
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { .path = "/x" };

	xsnprintf(base, sizeof(base), "%s/status/", tcp_srv.base);
	c = http_client_new(base, NULL);
	assert_non_null(c);
	xsnprintf(base, sizeof(base), "%s/status", tcp_srv.base);
	assert_string_equal(http_client_base_url(c), base);
	req.path = "/418";
	assert_int_equal(http_request(c, &req, &resp), 0);
	assert_int_equal(resp.status, 418);
	assert_string_equal(tcp_srv.raw_uri.buf, "/status/418");
	http_resp_release(&resp);
	http_client_free(c);
}

struct worker {
	struct http_client *c;
	int ok;
};

static void *worker(void *data)
{
	struct worker *w = data;
	struct http_resp resp = HTTP_RESP_INIT;

	for (int i = 0; i < 50; i++) {
		struct http_req req = { .method = "POST",
					.path = "/echo",
					.body = "ping",
					.body_len = 4 };

		if (!http_request(w->c, &req, &resp) && resp.status == 200 &&
		    !strcmp(resp.body.buf, "ping"))
			w->ok++;
	}
	http_resp_release(&resp);
	return NULL;
}

static void test_threads(void **state)
{
	struct http_client *c = tcp_client();
	struct worker w[3] = { { c, 0 }, { c, 0 }, { NULL, 0 } };
	pthread_t t[3];

	/* two threads share c (serialised), one has a duplicate */
	w[2].c = http_client_dup(c);
	assert_non_null(w[2].c);
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, &w[i]);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 3; i++)
		assert_int_equal(w[i].ok, 50);
	http_client_free(w[2].c);
	http_client_free(c);
}

/* Write len bytes of data to <tmpdir>/name; the path goes to path. */
static void write_tmp(char *path, size_t n, const char *name, const char *data)
{
	int fd;

	xsnprintf(path, n, "%s/%s", tmpdir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write_in_full(fd, data, strlen(data)),
			 (ssize_t)strlen(data));
	close(fd);
}

/* GET /echo with settings o; returns http_request()'s result. */
static int tls_get(const struct http_client_opts *o, struct strbuf *err)
{
	struct http_client *c = http_client_new(tls_srv.base, o);
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { .path = "/echo" };
	int ret;

	if (!c)
		return -3;
	ret = http_request(c, &req, &resp);
	if (!ret && resp.status != 200)
		ret = -4;
	strbuf_reset(err);
	strbuf_addstr(err, http_client_last_error(c));
	http_resp_release(&resp);
	http_client_free(c);
	return ret;
}

static void test_tls_verify(void **state)
{
	struct http_client_opts o = { 0 };
	struct strbuf err = STRBUF_INIT;
	char path[128];
	struct http_client *c;
	struct http_resp resp = HTTP_RESP_INIT;
	int before;

	if (!tls_srv.d)
		skip();
	/* our CA is unknown to the system store */
	assert_int_equal(tls_get(&o, &err), -1);
	assert_true(starts_with(err.buf, "GET 'https://127.0.0.1:"));
	assert_non_null(strstr(err.buf, "certificate"));

	o.ca_pem = ca_pem;
	o.ca_pem_len = strlen(ca_pem);
	assert_int_equal(tls_get(&o, &err), 0);
	assert_true(tls_srv.peer_certs <= 0);

	o.ca_pem = NULL;
	write_tmp(path, sizeof(path), "ca.pem", ca_pem);
	o.ca_file = path;
	assert_int_equal(tls_get(&o, &err), 0);
	unlink(path);

	o.ca_file = NULL;
	o.insecure_skip_verify = 1;
	assert_int_equal(tls_get(&o, &err), 0);

	/* a CA that did not sign the server certificate */
	o.insecure_skip_verify = 0;
	o.ca_pem = cli_cert_pem;
	o.ca_pem_len = strlen(cli_cert_pem);
	assert_int_equal(tls_get(&o, &err), -1);

	/* keep-alive holds over TLS too */
	o.ca_pem = ca_pem;
	o.ca_pem_len = strlen(ca_pem);
	c = http_client_new(tls_srv.base, &o);
	assert_non_null(c);
	before = connections(&tls_srv);
	for (int i = 0; i < 20; i++) {
		struct http_req req = { .path = "/status/200" };

		assert_int_equal(http_request(c, &req, &resp), 0);
		assert_int_equal(resp.status, 200);
	}
	assert_int_equal(connections(&tls_srv) - before, 1);
	http_resp_release(&resp);
	http_client_free(c);
	strbuf_release(&err);
}

static void test_tls_client_cert(void **state)
{
	struct http_client_opts o = { .ca_pem = ca_pem };
	struct strbuf err = STRBUF_INIT;
	char cert[128], key[128];

	if (!tls_srv.d)
		skip();
	o.ca_pem_len = strlen(ca_pem);

	/* in memory */
	o.cert_pem = cli_cert_pem;
	o.cert_pem_len = strlen(cli_cert_pem);
	o.key_pem = cli_key_pem;
	o.key_pem_len = strlen(cli_key_pem);
	assert_int_equal(tls_get(&o, &err), 0);
	if (tls_srv.peer_certs >= 0) /* OpenSSL may add the CA */
		assert_true(tls_srv.peer_certs >= 1);

	/* a key that does not belong to the certificate */
	o.key_pem = srv_key_pem;
	o.key_pem_len = strlen(srv_key_pem);
	assert_int_equal(tls_get(&o, &err), -1);
	assert_true(err.len > 0);

	/* from files */
	o.cert_pem = o.key_pem = NULL;
	write_tmp(cert, sizeof(cert), "cli.pem", cli_cert_pem);
	write_tmp(key, sizeof(key), "cli.key", cli_key_pem);
	o.cert_file = cert;
	o.key_file = key;
	assert_int_equal(tls_get(&o, &err), 0);
	if (tls_srv.peer_certs >= 0)
		assert_true(tls_srv.peer_certs >= 1);
	unlink(cert);
	unlink(key);
	strbuf_release(&err);
}

static int group_setup(void **state)
{
	xsnprintf(tmpdir, sizeof(tmpdir), "/tmp/u-http.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	if (start_srv(&tcp_srv, 0, 0) || start_srv(&unix_srv, 1, 0))
		return -1;
	/* TLS tests skip themselves when libmicrohttpd has no TLS */
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES &&
	    start_srv(&tls_srv, 0, 1))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	stop_srv(&tcp_srv);
	stop_srv(&unix_srv);
	if (tls_srv.d)
		stop_srv(&tls_srv);
	unlink(unix_srv.sock);
	rmdir(tmpdir);
	strbuf_release(&errors);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_methods),
		T(test_status_codes),
		T(test_big_body_tcp),
		T(test_big_body_unix),
		T(test_streaming),
		T(test_stream_abort),
		T(test_max_body),
		T(test_keepalive_tcp),
		T(test_keepalive_unix),
		T(test_request_id),
		T(test_headers),
		T(test_multipart),
		T(test_dead_socket),
		T(test_dead_port),
		T(test_timeout),
		T(test_cancel),
		T(test_json),
		T(test_error_text),
		T(test_pct_encode),
		T(test_base_url_prefix),
		T(test_threads),
		T(test_tls_verify),
		T(test_tls_client_cert),
#undef T
	};

	/* a watchdog: a request that ignores its limits fails the run */
	alarm(300);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
