#include "compat.h"
#include "http.h"
#include "usage.h"

#include <pthread.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include <curl/curl.h>

#ifndef GOSBX_VERSION
#define GOSBX_VERSION "unknown"
#endif

struct http_client {
	pthread_mutex_t lock;
	CURL *curl;
	char *base_url;		       /* without trailing '/' */
	struct curl_slist *connect_to; /* of opts.connect_to, or NULL */
	/* deep copy of the settings, for http_client_dup() */
	struct http_client_opts opts;
	/* client headers as sent: Authorization first, then opts.headers */
	char **headers;
	size_t nr_headers;
	int headers_have_reqid; /* a client header names X-Request-ID */

	/* scratch reused by every request: no allocation once warm */
	struct strbuf url;
	struct strbuf ctype_hdr;
	char reqid_hdr[40];
	struct curl_slist *nodes;
	size_t nodes_alloc;
	uint64_t rng;

	char errbuf[CURL_ERROR_SIZE];
	struct strbuf last_err;
};

/* State of one transfer, seen by the libcurl callbacks. */
struct xfer {
	const struct http_req *req;
	struct http_resp *resp;
	int aborted;	 /* on_data or cancel stopped it */
	int read_failed; /* read_body returned -1 */
	int too_big;	 /* the stored body passed max_body */
	int error_cut;	 /* a non-2xx body was cut: the answer is in */
	int idle_out;	 /* nothing came for req->idle_timeout_ms */
	curl_off_t last_dl;
	int64_t last_dl_ms; /* when last_dl last grew (monotonic) */
	size_t body_off;    /* of req->body sent so far (chunked_bodies) */
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_ALL);
}

void http_resp_init(struct http_resp *resp)
{
	resp->status = 0;
	strbuf_init(&resp->body, 0);
	strbuf_init(&resp->content_type, 0);
	resp->body_cut = 0;
	resp->retry_after_s = -1;
	resp->date = 0;
	resp->not_sent = 0;
	strbuf_init(&resp->warnings, 0);
}

void http_resp_release(struct http_resp *resp)
{
	strbuf_release(&resp->body);
	strbuf_release(&resp->content_type);
	strbuf_release(&resp->warnings);
	resp->status = 0;
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static char *dup_blob(const char *p, size_t len)
{
	char *r;

	if (!p)
		return NULL;
	r = xmalloc(len + 1);
	memcpy(r, p, len);
	r[len] = '\0';
	return r;
}

static void copy_opts(struct http_client_opts *dst,
		      const struct http_client_opts *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src)
		return;
	dst->unix_socket = dup_or_null(src->unix_socket);
	dst->connect_timeout_ms = src->connect_timeout_ms;
	dst->ca_file = dup_or_null(src->ca_file);
	dst->ca_pem = dup_blob(src->ca_pem, src->ca_pem_len);
	dst->ca_pem_len = src->ca_pem_len;
	dst->cert_file = dup_or_null(src->cert_file);
	dst->key_file = dup_or_null(src->key_file);
	dst->cert_pem = dup_blob(src->cert_pem, src->cert_pem_len);
	dst->cert_pem_len = src->cert_pem_len;
	dst->key_pem = dup_blob(src->key_pem, src->key_pem_len);
	dst->key_pem_len = src->key_pem_len;
	dst->insecure_skip_verify = src->insecure_skip_verify;
	dst->proxy = dup_or_null(src->proxy);
	dst->no_proxy = dup_or_null(src->no_proxy);
	dst->connect_to = dup_or_null(src->connect_to);
	dst->bearer_token = dup_or_null(src->bearer_token);
	dst->user_agent = dup_or_null(src->user_agent);
	dst->chunked_bodies = src->chunked_bodies;
	dst->max_idle_reuse_s = src->max_idle_reuse_s;
	dst->fresh_streams = src->fresh_streams;
	if (src->headers) {
		size_t n = 0;
		char **h;

		while (src->headers[n])
			n++;
		h = xcalloc(n + 1, sizeof(*h));
		for (size_t i = 0; i < n; i++)
			h[i] = xstrdup(src->headers[i]);
		dst->headers = (const char *const *)h;
	}
}

static void free_opts(struct http_client_opts *o)
{
	free((char *)o->unix_socket);
	free((char *)o->ca_file);
	free((char *)o->ca_pem);
	free((char *)o->cert_file);
	free((char *)o->key_file);
	free((char *)o->cert_pem);
	free((char *)o->key_pem);
	free((char *)o->bearer_token);
	free((char *)o->proxy);
	free((char *)o->no_proxy);
	free((char *)o->connect_to);
	free((char *)o->user_agent);
	if (o->headers) {
		for (size_t i = 0; o->headers[i]; i++)
			free((char *)o->headers[i]);
		free((char **)o->headers);
	}
	memset(o, 0, sizeof(*o));
}

/* Length of the name of header line h ("Name: value", "Name;"). */
static size_t header_name_len(const char *h)
{
	return strcspn(h, ":;");
}

static int header_is(const char *h, const char *name)
{
	size_t n = header_name_len(h);

	return n == strlen(name) && !strncasecmp(h, name, n);
}

static int same_header_name(const char *a, const char *b)
{
	size_t n = header_name_len(a);

	return n == header_name_len(b) && !strncasecmp(a, b, n);
}

#define SETOPT(h, opt, val)                                                    \
	do {                                                                   \
		CURLcode rc_ = curl_easy_setopt((h), (opt), (val));            \
		if (rc_ != CURLE_OK)                                           \
			return error("cannot set libcurl option %s: %s", #opt, \
				     curl_easy_strerror(rc_));                 \
	} while (0)

static int set_blob(CURL *h, CURLoption opt, const char *name, const char *p,
		    size_t len)
{
	struct curl_blob blob;
	CURLcode rc;

	blob.data = (void *)p;
	blob.len = len;
	blob.flags = CURL_BLOB_COPY;
	rc = curl_easy_setopt(h, opt, &blob);
	if (rc != CURLE_OK)
		return error("cannot use in-memory %s: %s", name,
			     curl_easy_strerror(rc));
	return 0;
}

int http_client_apply_transport(const struct http_client *c, void *easy)
{
	const struct http_client_opts *o = &c->opts;
	CURL *h = easy;

	SETOPT(h, CURLOPT_NOSIGNAL, 1L);
	SETOPT(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	SETOPT(h, CURLOPT_PROTOCOLS_STR, "http,https");
	SETOPT(h, CURLOPT_PATH_AS_IS, 1L);
	SETOPT(h, CURLOPT_TCP_KEEPALIVE, 1L);
	if (o->unix_socket)
		SETOPT(h, CURLOPT_UNIX_SOCKET_PATH, o->unix_socket);
	if (o->connect_timeout_ms > 0)
		SETOPT(h, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
	if (o->ca_file)
		SETOPT(h, CURLOPT_CAINFO, o->ca_file);
	if (o->ca_pem && set_blob(h, CURLOPT_CAINFO_BLOB, "CA certificates",
				  o->ca_pem, o->ca_pem_len) < 0)
		return -1;
	if (o->cert_file) {
		SETOPT(h, CURLOPT_SSLCERT, o->cert_file);
		SETOPT(h, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (o->key_file) {
		SETOPT(h, CURLOPT_SSLKEY, o->key_file);
		SETOPT(h, CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (o->cert_pem) {
		if (set_blob(h, CURLOPT_SSLCERT_BLOB, "client certificate",
			     o->cert_pem, o->cert_pem_len) < 0)
			return -1;
		SETOPT(h, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (o->key_pem) {
		if (set_blob(h, CURLOPT_SSLKEY_BLOB, "client key", o->key_pem,
			     o->key_pem_len) < 0)
			return -1;
		SETOPT(h, CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (o->insecure_skip_verify) {
		SETOPT(h, CURLOPT_SSL_VERIFYPEER, 0L);
		SETOPT(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (o->proxy)
		SETOPT(h, CURLOPT_PROXY, o->proxy);
	if (o->no_proxy)
		SETOPT(h, CURLOPT_NOPROXY, o->no_proxy);
	if (c->connect_to)
		SETOPT(h, CURLOPT_CONNECT_TO, c->connect_to);
	return 0;
}

void http_client_header_lines(const struct http_client *c, struct strbuf *out)
{
	for (size_t i = 0; i < c->nr_headers; i++)
		strbuf_addf(out, "%s\r\n", c->headers[i]);
	strbuf_addf(out, "User-Agent: %s\r\n",
		    c->opts.user_agent ? c->opts.user_agent
				       : "gosbx/" GOSBX_VERSION);
}

static size_t header_cb(char *buf, size_t size, size_t n, void *data)
{
	struct xfer *x = data;
	size_t len = size * n;
	const char *p;

	if (len > 5 && !memcmp(buf, "HTTP/", 5)) {
		/* a status line: a new (maybe final, after 1xx) answer */
		p = memchr(buf, ' ', len);
		x->resp->status = p ? strtol(p + 1, NULL, 10) : 0;
		strbuf_reset(&x->resp->content_type);
		x->resp->retry_after_s = -1;
		x->resp->date = 0;
		strbuf_reset(&x->resp->warnings);
		return len;
	}
	if (len > 8 && !strncasecmp(buf, "warning:", 8)) {
		struct strbuf v = STRBUF_INIT;
		const char *w = x->resp->warnings.buf;
		size_t nr = 0;

		while ((w = strchr(w, '\n')) && w++)
			nr++;
		strbuf_add(&v, buf + 8, len - 8);
		strbuf_trim(&v);
		if (nr < HTTP_MAX_WARNINGS && v.len) {
			if (v.len > HTTP_MAX_WARNING)
				strbuf_setlen(&v, HTTP_MAX_WARNING);
			/* one a line: a value has no newline of its own */
			for (size_t i = 0; i < v.len; i++)
				if (v.buf[i] == '\n' || v.buf[i] == '\r')
					v.buf[i] = ' ';
			strbuf_addbuf(&x->resp->warnings, &v);
			strbuf_addch(&x->resp->warnings, '\n');
		}
		strbuf_release(&v);
		return len;
	}
	if (len > 5 && (!strncasecmp(buf, "date:", 5) ||
			(len > 12 && !strncasecmp(buf, "retry-after:", 12)))) {
		/* an HTTP-date, or delay-seconds (Retry-After only) */
		int is_date = !strncasecmp(buf, "date:", 5);
		struct strbuf v = STRBUF_INIT;
		time_t t;

		strbuf_add(&v, buf + (is_date ? 5 : 12),
			   len - (is_date ? 5 : 12));
		strbuf_trim(&v);
		if (!is_date && v.len && strspn(v.buf, "0123456789") == v.len)
			x->resp->retry_after_s = strtol(v.buf, NULL, 10);
		else if ((t = curl_getdate(v.buf, NULL)) > 0 && is_date)
			x->resp->date = t;
		else if (t > 0)
			x->resp->retry_after_s =
				t > time(NULL) ? (long)(t - time(NULL)) : 0;
		strbuf_release(&v);
		return len;
	}
	if (len > 13 && !strncasecmp(buf, "content-type:", 13)) {
		strbuf_reset(&x->resp->content_type);
		strbuf_add(&x->resp->content_type, buf + 13, len - 13);
		strbuf_trim(&x->resp->content_type);
	}
	return len;
}

static size_t write_cb(char *buf, size_t size, size_t n, void *data)
{
	struct xfer *x = data;
	struct strbuf *body = &x->resp->body;
	size_t len = size * n;
	long st = x->resp->status;
	int ok = st >= 200 && st <= 299;
	size_t max = x->req->max_body ? x->req->max_body : HTTP_MAX_BODY;

	if (x->req->on_data && ok) {
		if (x->req->on_data(buf, len, x->req->on_data_arg) < 0) {
			x->aborted = 1;
			return 0; /* CURLE_WRITE_ERROR */
		}
		return len;
	}
	if (!ok && max > HTTP_MAX_ERROR_BODY)
		max = HTTP_MAX_ERROR_BODY;
	if (len > max - body->len) {
		/* never hold more than max: the rest is not read */
		if (ok) {
			x->too_big = 1;
		} else {
			strbuf_add(body, buf, max - body->len);
			x->error_cut = 1;
			x->resp->body_cut = 1;
		}
		return 0; /* CURLE_WRITE_ERROR */
	}
	strbuf_add(body, buf, len);
	return len;
}

static size_t read_cb(char *buf, size_t size, size_t n, void *data)
{
	struct xfer *x = data;
	ssize_t r;

	if (!x->req->read_body) {
		/* req->body sent in chunks (chunked_bodies) */
		size_t left = x->req->body_len - x->body_off;

		if (left > size * n)
			left = size * n;
		if (left)
			memcpy(buf, (const char *)x->req->body + x->body_off,
			       left);
		x->body_off += left;
		return left;
	}
	r = x->req->read_body(buf, size * n, x->req->read_data);

	if (r < 0) {
		x->read_failed = 1;
		return CURL_READFUNC_ABORT;
	}
	return (size_t)r;
}

/*
 * libcurl rewinds a body it must send again (a reused connection that
 * turned out closed): req->body can be, a read_body stream cannot.
 */
static int seek_cb(void *data, curl_off_t offset, int origin)
{
	struct xfer *x = data;

	if (x->req->read_body || origin != SEEK_SET || offset < 0 ||
	    (size_t)offset > x->req->body_len)
		return CURL_SEEKFUNC_CANTSEEK;
	x->body_off = (size_t)offset;
	return CURL_SEEKFUNC_OK;
}

static int xferinfo_cb(void *data, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct xfer *x = data;

	if (x->req->cancel && *x->req->cancel) {
		x->aborted = 1;
		return 1;
	}
	if (x->req->idle_timeout_ms > 0) {
		int64_t now = (int64_t)monotonic_ms();

		if (dlnow != x->last_dl || !x->last_dl_ms) {
			x->last_dl = dlnow;
			x->last_dl_ms = now;
		} else if (now - x->last_dl_ms > x->req->idle_timeout_ms) {
			x->idle_out = 1;
			return 1;
		}
	}
	return 0;
}

static int init_handle(struct http_client *c)
{
	CURL *h = c->curl;
	const char *ua = c->opts.user_agent ? c->opts.user_agent
					    : "gosbx/" GOSBX_VERSION;

	if (http_client_apply_transport(c, h) < 0)
		return -1;
	SETOPT(h, CURLOPT_ERRORBUFFER, c->errbuf);
	SETOPT(h, CURLOPT_USERAGENT, ua);
	SETOPT(h, CURLOPT_HEADERFUNCTION, header_cb);
	SETOPT(h, CURLOPT_WRITEFUNCTION, write_cb);
	SETOPT(h, CURLOPT_READFUNCTION, read_cb);
	SETOPT(h, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
	if (c->opts.max_idle_reuse_s > 0)
		SETOPT(h, CURLOPT_MAXAGE_CONN, c->opts.max_idle_reuse_s);
	if (getenv("GOSBX_HTTP_TRACE"))
		SETOPT(h, CURLOPT_VERBOSE, 1L);
	return 0;
}

static uint64_t seed_rng(void)
{
	uint64_t seed = 0;
	struct timespec ts;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed)) {
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
		       (uint64_t)getpid() << 16;
	}
	return seed;
}

/* splitmix64: fast, well mixed; request ids need no secrecy */
static uint64_t next_rand(struct http_client *c)
{
	uint64_t z = (c->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct http_client *http_client_new(const char *base_url,
				    const struct http_client_opts *opts)
{
	struct http_client *c;
	size_t len, n = 0;

	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK) {
		error("cannot initialise libcurl: %s",
		      curl_easy_strerror(global_rc));
		return NULL;
	}

	c = xcalloc(1, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	len = strlen(base_url);
	while (len && base_url[len - 1] == '/')
		len--;
	c->base_url = xstrndup(base_url, len);
	copy_opts(&c->opts, opts);
	strbuf_init(&c->url, 0);
	strbuf_init(&c->ctype_hdr, 0);
	strbuf_init(&c->last_err, 0);
	c->rng = seed_rng();

	if (c->opts.headers)
		while (c->opts.headers[n])
			n++;
	c->headers = xcalloc(n + 2, sizeof(*c->headers));
	if (c->opts.bearer_token) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addf(&sb, "Authorization: Bearer %s",
			    c->opts.bearer_token);
		c->headers[c->nr_headers++] = strbuf_detach(&sb, NULL);
	}
	for (size_t i = 0; i < n; i++) {
		const char *h = c->opts.headers[i];

		if (header_is(h, "X-Request-ID"))
			c->headers_have_reqid = 1;
		c->headers[c->nr_headers++] = xstrdup(h);
	}

	if (c->opts.connect_to) {
		c->connect_to = curl_slist_append(NULL, c->opts.connect_to);
		if (!c->connect_to) {
			error("cannot allocate a libcurl list");
			goto fail;
		}
	}
	c->curl = curl_easy_init();
	if (!c->curl) {
		error("cannot create a libcurl handle for '%s'", c->base_url);
		goto fail;
	}
	if (init_handle(c) < 0)
		goto fail;
	return c;
fail:
	http_client_free(c);
	return NULL;
}

struct http_client *http_client_dup(struct http_client *c)
{
	return http_client_new(c->base_url, &c->opts);
}

void http_client_free(struct http_client *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	for (size_t i = 0; i < c->nr_headers; i++)
		free(c->headers[i]);
	free(c->headers);
	free_opts(&c->opts);
	free(c->base_url);
	curl_slist_free_all(c->connect_to);
	free(c->nodes);
	strbuf_release(&c->url);
	strbuf_release(&c->ctype_hdr);
	strbuf_release(&c->last_err);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

const char *http_client_last_error(struct http_client *c)
{
	return c->last_err.buf;
}

const char *http_client_base_url(const struct http_client *c)
{
	return c->base_url;
}

static void push_node(struct http_client *c, size_t *nr, const char *line)
{
	ALLOC_GROW(c->nodes, *nr + 1, c->nodes_alloc);
	c->nodes[*nr].data = (char *)line;
	c->nodes[*nr].next = NULL;
	if (*nr)
		c->nodes[*nr - 1].next = &c->nodes[*nr];
	(*nr)++;
}

static int req_has_header(const struct http_req *req, const char *line)
{
	if (!req->headers)
		return 0;
	for (size_t i = 0; req->headers[i]; i++)
		if (same_header_name(req->headers[i], line))
			return 1;
	return 0;
}

/*
 * Chain the headers of this request in c->nodes, a curl_slist made of
 * the client's own nodes (curl only reads them), so that no list is
 * allocated per request. The chain is rebuilt each time because
 * ALLOC_GROW may move the nodes.
 */
static struct curl_slist *build_headers(struct http_client *c,
					const struct http_req *req,
					int has_body, int is_mime)
{
	size_t nr = 0;
	int have_reqid = c->headers_have_reqid;

	if (req->headers)
		for (size_t i = 0; req->headers[i]; i++)
			if (header_is(req->headers[i], "X-Request-ID"))
				have_reqid = 1;
	if (!have_reqid) {
		static const char hex[] = "0123456789abcdef";
		uint64_t r = next_rand(c);
		char *p;

		memcpy(c->reqid_hdr, "X-Request-ID: ", 14);
		p = c->reqid_hdr + 14;
		for (int i = 15; i >= 0; i--, r >>= 4)
			p[i] = hex[r & 15];
		p[16] = '\0';
		if (req->id_out)
			memcpy(req->id_out, p, 17);
		push_node(c, &nr, c->reqid_hdr);
	}
	if (!is_mime && has_body) {
		strbuf_reset(&c->ctype_hdr);
		/* "Content-Type:" alone stops curl's form-urlencoded default */
		strbuf_addstr(&c->ctype_hdr, "Content-Type:");
		if (req->content_type) {
			strbuf_addch(&c->ctype_hdr, ' ');
			strbuf_addstr(&c->ctype_hdr, req->content_type);
		}
		push_node(c, &nr, c->ctype_hdr.buf);
	}
	push_node(c, &nr, "Expect:");
	if (req->headers)
		for (size_t i = 0; req->headers[i]; i++)
			push_node(c, &nr, req->headers[i]);
	for (size_t i = 0; i < c->nr_headers; i++)
		if (!req_has_header(req, c->headers[i]))
			push_node(c, &nr, c->headers[i]);
	return c->nodes;
}

static int method_has_body(const char *m)
{
	return !strcmp(m, "POST") || !strcmp(m, "PUT") || !strcmp(m, "PATCH");
}

static int is_connect_error(CURLcode rc)
{
	return rc == CURLE_COULDNT_CONNECT ||
	       rc == CURLE_COULDNT_RESOLVE_HOST ||
	       rc == CURLE_COULDNT_RESOLVE_PROXY;
}

static void report_failure(struct http_client *c, const char *method,
			   CURLcode rc, const struct xfer *x)
{
	const char *msg = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);
	struct strbuf *e = &c->last_err;
	char big[64];

	strbuf_reset(e);
	if (x->read_failed)
		msg = "reading the request body failed";
	if (x->too_big) {
		snprintf(big, sizeof(big), "answer over %zu bytes",
			 x->req->max_body ? x->req->max_body : HTTP_MAX_BODY);
		msg = big;
	}
	if (is_connect_error(rc)) {
		if (c->opts.unix_socket)
			strbuf_addf(e, "cannot reach 'unix:%s': %s",
				    c->opts.unix_socket,
				    curl_easy_strerror(rc));
		else
			strbuf_addf(e, "cannot reach '%s': %s", c->base_url,
				    msg);
	} else if (c->opts.unix_socket) {
		strbuf_addf(e, "%s '%s' on 'unix:%s' failed: %s", method,
			    c->url.buf + strlen(c->base_url),
			    c->opts.unix_socket, msg);
	} else {
		strbuf_addf(e, "%s '%s' failed: %s", method, c->url.buf, msg);
	}
	error("%s", e->buf);
}

static const char empty_body[] = "";

/* One transfer; c->lock is held by the caller. */
static int perform_locked(struct http_client *c, const struct http_req *req,
			  curl_mime *mime, struct http_resp *resp)
{
	CURL *h = c->curl;
	const char *method = req->method ? req->method : "GET";
	const char *path = req->path ? req->path : "";
	struct xfer x = { req, resp, 0, 0, 0, 0 };
	int has_body, ret = -1;
	CURLcode rc;

	resp->status = 0;
	strbuf_reset(&resp->body);
	strbuf_reset(&resp->content_type);
	resp->body_cut = 0;
	resp->retry_after_s = -1;
	resp->date = 0;
	resp->not_sent = 0;
	strbuf_reset(&resp->warnings);
	strbuf_reset(&c->last_err);
	c->errbuf[0] = '\0';

	strbuf_reset(&c->url);
	strbuf_addstr(&c->url, c->base_url);
	if (*path != '/')
		strbuf_addch(&c->url, '/');
	strbuf_addstr(&c->url, path);
	if (req->query && *req->query) {
		strbuf_addch(&c->url, '?');
		strbuf_addstr(&c->url, req->query);
	}

	has_body =
		mime || req->body || req->read_body || method_has_body(method);
	SETOPT(h, CURLOPT_URL, c->url.buf);
	SETOPT(h, CURLOPT_NOBODY, 0L);
	SETOPT(h, CURLOPT_CUSTOMREQUEST, (char *)NULL);
	if (mime) {
		SETOPT(h, CURLOPT_MIMEPOST, mime);
	} else if (req->read_body || (has_body && c->opts.chunked_bodies)) {
		curl_off_t size = req->body_len == HTTP_LEN_UNKNOWN ||
						  c->opts.chunked_bodies ||
						  !req->read_body
					  ? -1
					  : (curl_off_t)req->body_len;

		SETOPT(h, CURLOPT_POSTFIELDS, (char *)NULL);
		SETOPT(h, CURLOPT_POST, 1L);
		SETOPT(h, CURLOPT_POSTFIELDSIZE_LARGE, size);
		SETOPT(h, CURLOPT_READDATA, &x);
		SETOPT(h, CURLOPT_SEEKFUNCTION, seek_cb);
		SETOPT(h, CURLOPT_SEEKDATA, &x);
	} else if (has_body) {
		SETOPT(h, CURLOPT_POSTFIELDS,
		       req->body ? (const char *)req->body : empty_body);
		SETOPT(h, CURLOPT_POSTFIELDSIZE_LARGE,
		       (curl_off_t)(req->body ? req->body_len : 0));
		SETOPT(h, CURLOPT_POST, 1L);
	} else if (!strcmp(method, "HEAD")) {
		SETOPT(h, CURLOPT_NOBODY, 1L);
	} else {
		SETOPT(h, CURLOPT_HTTPGET, 1L);
	}
	if (strcmp(method, has_body ? "POST" : "GET") && strcmp(method, "HEAD"))
		SETOPT(h, CURLOPT_CUSTOMREQUEST, method);

	SETOPT(h, CURLOPT_HTTPHEADER, build_headers(c, req, has_body, !!mime));
	SETOPT(h, CURLOPT_TIMEOUT_MS,
	       req->timeout_ms > 0 ? req->timeout_ms : 0L);
	SETOPT(h, CURLOPT_FRESH_CONNECT,
	       c->opts.fresh_streams && req->on_data ? 1L : 0L);
	SETOPT(h, CURLOPT_HEADERDATA, &x);
	SETOPT(h, CURLOPT_WRITEDATA, &x);
	SETOPT(h, CURLOPT_XFERINFODATA, &x);
	SETOPT(h, CURLOPT_NOPROGRESS,
	       req->cancel || req->idle_timeout_ms > 0 ? 0L : 1L);

	rc = curl_easy_perform(h);
	if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && x.error_cut))
		ret = 0;
	else if (x.aborted)
		ret = HTTP_ABORTED;
	else if (x.idle_out) {
		strbuf_reset(&c->last_err);
		strbuf_addf(&c->last_err,
			    "%s '%s': nothing came for %ld s; the connection "
			    "is taken for lost",
			    method, path, (req->idle_timeout_ms + 999) / 1000);
		error("%s", c->last_err.buf);
	} else
		report_failure(c, method, rc, &x);
	if (rc != CURLE_OK && is_connect_error(rc))
		resp->not_sent = 1;

	if (ret == HTTP_ABORTED) {
		strbuf_reset(&c->last_err);
		strbuf_addf(&c->last_err, "%s '%s' %s", method, path,
			    rc == CURLE_ABORTED_BY_CALLBACK ? "cancelled"
							    : "aborted");
	}
	if (ret < 0)
		resp->status = 0;
	/* drop references to this request's memory */
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
	if (mime)
		curl_easy_setopt(h, CURLOPT_MIMEPOST, (curl_mime *)NULL);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, (char *)NULL);
	/* READDATA and SEEKDATA point into this call's frame */
	curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, (curl_seek_callback)NULL);
	curl_easy_setopt(h, CURLOPT_READDATA, (void *)NULL);
	return ret;
}

static int perform(struct http_client *c, const struct http_req *req,
		   curl_mime *mime, struct http_resp *resp)
{
	int ret;

	pthread_mutex_lock(&c->lock);
	ret = perform_locked(c, req, mime, resp);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int http_request(struct http_client *c, const struct http_req *req,
		 struct http_resp *resp)
{
	return perform(c, req, NULL, resp);
}

struct mime_src {
	const char *data;
	size_t len;
	size_t pos;
};

static size_t mime_read(char *buf, size_t size, size_t n, void *arg)
{
	struct mime_src *s = arg;
	size_t want = size * n, left = s->len - s->pos;

	if (want > left)
		want = left;
	memcpy(buf, s->data + s->pos, want);
	s->pos += want;
	return want;
}

static int mime_seek(void *arg, curl_off_t offset, int origin)
{
	struct mime_src *s = arg;

	if (origin != SEEK_SET || offset < 0 || (size_t)offset > s->len)
		return CURL_SEEKFUNC_FAIL;
	s->pos = (size_t)offset;
	return CURL_SEEKFUNC_OK;
}

int http_upload_multipart(struct http_client *c, const char *path,
			  const char *field, const char *filename,
			  const void *data, size_t len, struct http_resp *resp)
{
	struct http_req req = { .method = "POST", .path = path };
	struct mime_src src = { data ? data : empty_body, data ? len : 0, 0 };
	curl_mime *mime;
	curl_mimepart *part;
	int ret = -1;

	pthread_mutex_lock(&c->lock);
	mime = curl_mime_init(c->curl);
	part = mime ? curl_mime_addpart(mime) : NULL;
	if (!part || curl_mime_name(part, field) != CURLE_OK ||
	    curl_mime_filename(part, filename) != CURLE_OK ||
	    curl_mime_type(part, "application/octet-stream") != CURLE_OK ||
	    curl_mime_data_cb(part, (curl_off_t)src.len, mime_read, mime_seek,
			      NULL, &src) != CURLE_OK) {
		error("cannot build the multipart body for '%s'", filename);
		goto done;
	}
	ret = perform_locked(c, &req, mime, resp);
done:
	curl_mime_free(mime);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

static const char *reason_phrase(long status)
{
	/* RFC 9110 section 15 */
	static const struct {
		long code;
		const char *text;
	} tab[] = {
		{ 200, "OK" },
		{ 201, "Created" },
		{ 202, "Accepted" },
		{ 204, "No Content" },
		{ 400, "Bad Request" },
		{ 401, "Unauthorized" },
		{ 403, "Forbidden" },
		{ 404, "Not Found" },
		{ 405, "Method Not Allowed" },
		{ 408, "Request Timeout" },
		{ 409, "Conflict" },
		{ 410, "Gone" },
		{ 413, "Content Too Large" },
		{ 415, "Unsupported Media Type" },
		{ 422, "Unprocessable Content" },
		{ 429, "Too Many Requests" },
		{ 500, "Internal Server Error" },
		{ 501, "Not Implemented" },
		{ 502, "Bad Gateway" },
		{ 503, "Service Unavailable" },
		{ 504, "Gateway Timeout" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(tab); i++)
		if (tab[i].code == status)
			return tab[i].text;
	return NULL;
}

void http_error_text(struct strbuf *out, long status, const struct strbuf *body)
{
	const char *phrase = reason_phrase(status);
	json_t *j = NULL, *v = NULL;
	size_t start = out->len;

	strbuf_addf(out, "%ld", status);
	if (phrase)
		strbuf_addf(out, " %s", phrase);
	if (!body || !body->len)
		return;
	j = json_loadb(body->buf, body->len, 0, NULL);
	if (json_is_object(j)) {
		v = json_object_get(j, "detail");
		if (!v)
			v = json_object_get(j, "message");
	}
	if (json_is_string(v)) {
		strbuf_addf(out, ": %s", json_string_value(v));
	} else if (v && !json_is_null(v)) {
		/* e.g. FastAPI's list of validation errors */
		char *s = json_dumps(v, JSON_COMPACT);

		if (s)
			strbuf_addf(out, ": %s", s);
		free(s);
	} else {
		size_t n = strcspn(body->buf, "\r\n");

		if (n > 200)
			n = 200;
		if (n) {
			strbuf_addstr(out, ": ");
			strbuf_add(out, body->buf, n);
		}
	}
	json_decref(j);
	/* keep the message on one line */
	for (size_t i = start; i < out->len; i++)
		if (out->buf[i] == '\n' || out->buf[i] == '\r')
			out->buf[i] = ' ';
}

int http_json(struct http_client *c, const char *method, const char *path,
	      json_t *body, long *status, json_t **out)
{
	static const char *const accept[] = { "Accept: application/json",
					      NULL };
	struct http_req req = { .method = method, .path = path };
	struct http_resp resp = HTTP_RESP_INIT;
	json_t *answer = NULL;
	json_error_t jerr;
	char *text = NULL;
	int ret = -1;

	if (status)
		*status = 0;
	if (out)
		*out = NULL;
	req.headers = accept;
	if (body) {
		text = json_dumps(body, JSON_COMPACT);
		if (!text) {
			error("cannot serialise the JSON body for %s '%s'",
			      method, path);
			goto done;
		}
		req.body = text;
		req.body_len = strlen(text);
		req.content_type = "application/json";
	}
	if (http_request(c, &req, &resp) < 0)
		goto done;
	if (status)
		*status = resp.status;
	if (resp.body.len) {
		answer = json_loadb(resp.body.buf, resp.body.len, 0, &jerr);
		if (!answer && resp.status >= 200 && resp.status <= 299) {
			error("%s '%s': invalid JSON in the answer: %s "
			      "(line %d)",
			      method, path, jerr.text, jerr.line);
			goto done;
		}
	}
	if (resp.status < 200 || resp.status > 299) {
		struct strbuf msg = STRBUF_INIT;

		strbuf_addf(&msg, "%s '%s': ", method, path);
		http_error_text(&msg, resp.status, &resp.body);
		pthread_mutex_lock(&c->lock);
		strbuf_reset(&c->last_err);
		strbuf_addbuf(&c->last_err, &msg);
		pthread_mutex_unlock(&c->lock);
		error("%s", msg.buf);
		strbuf_release(&msg);
		goto done;
	}
	ret = 0;
done:
	if (out)
		*out = answer;
	else
		json_decref(answer);
	free(text);
	http_resp_release(&resp);
	return ret;
}

static int unreserved(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
	       ch == '_' || ch == '~';
}

static void pct_encode(struct strbuf *out, const char *s, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (unreserved(ch) || (keep_slash && ch == '/')) {
			strbuf_addch(out, ch);
		} else {
			strbuf_addch(out, '%');
			strbuf_addch(out, hex[ch >> 4]);
			strbuf_addch(out, hex[ch & 15]);
		}
	}
}

void http_pct_encode_path(struct strbuf *out, const char *path)
{
	pct_encode(out, path, 1);
}

void http_pct_encode_query(struct strbuf *out, const char *s)
{
	pct_encode(out, s, 0);
}

void http_query_add(struct strbuf *q, const char *key, const char *value)
{
	if (q->len)
		strbuf_addch(q, '&');
	pct_encode(q, key, 0);
	strbuf_addch(q, '=');
	pct_encode(q, value, 0);
}

ssize_t http_read_fd(char *buf, size_t len, void *data)
{
	int fd = *(int *)data;
	ssize_t r;

	do {
		r = read(fd, buf, len);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return error_errno("cannot read the request body from fd %d",
				   fd);
	return r;
}
