#include "compat.h"
#include "kube/portforward.h"
#include "http.h"
#include "proto/websocket.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <curl/curl.h>
#include <jansson.h>

#define WS_PROTO "v4.channel.k8s.io"
#define MAX_HDR (64 * 1024)
#define MAX_MSG (16 * 1024 * 1024)

struct fwd_conn {
	struct kube_forward *f;
	pthread_t thread;
	int fd;	  /* local connection */
	int done; /* thread finished (under f->lock) */
	struct fwd_conn *next;

	CURL *curl;
	int sock;	   /* curl's socket */
	struct strbuf pre; /* bytes read after the 101 header */
	struct strbuf out; /* channel 0 data waiting for the local fd */
	size_t out_off;
	struct ws_conn ws; /* over curl, in pump() */
	int seen_port[2];  /* port prefix seen on channel 0 / 1 */
	int ws_failed;
	int local_eof;
	int refused;	       /* HTTP status of a refused upgrade, or 0 */
	struct strbuf refusal; /* ... and its Status message */
};

struct kube_forward {
	struct kube_forward_opts o;
	char *ns, *pod, *token;
	struct strvec headers; /* o.headers, copied */
	int lfd;
	int stop_pipe[2];
	char *dir; /* private dir of the unix socket, or NULL */
	char *addr;
	pthread_t accept_thread;
	pthread_mutex_t lock;
	pthread_mutex_t token_lock; /* one get_token() call at a time */
	struct fwd_conn *conns;
	unsigned long tunnels;
	unsigned long errors; /* tunnel errors so far */
	char *last_error;
	int denied; /* 403, or 401 with a fresh credential: see below */
	int quiet;  /* kube_forward_set_quiet(); atomic */
	/* pod names replaced by resolve_pod(): threads may still read them */
	char **old_pods;
	size_t nr_old_pods, alloc_old_pods;
};

/* Keep msg (taken) as the last error; print it with error() if print. */
static void keep_error(struct kube_forward *f, struct strbuf *msg, int print)
{
	if (print && !__atomic_load_n(&f->quiet, __ATOMIC_RELAXED))
		error("%s", msg->buf);
	pthread_mutex_lock(&f->lock);
	free(f->last_error);
	f->last_error = strbuf_detach(msg, NULL);
	f->errors++;
	pthread_mutex_unlock(&f->lock);
}

static void set_error(struct kube_forward *f, const char *fmt, ...)
	PRINTF_LIKE(2, 3);
static void set_error(struct kube_forward *f, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	keep_error(f, &sb, 1);
}

static int stopping(struct kube_forward *f)
{
	struct pollfd p = { .fd = f->stop_pipe[0], .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/* Wait for fd to be ready for events; -1 when f is stopping. */
static int wait_fd(struct kube_forward *f, int fd, short events)
{
	struct pollfd p[2] = {
		{ .fd = fd, .events = events },
		{ .fd = f->stop_pipe[0], .events = POLLIN },
	};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[1].revents)
			return -1;
		if (p[0].revents)
			return 0;
	}
}

static char *header_value(const char *hdr, const char *name)
{
	size_t nl = strlen(name);
	const char *p = strstr(hdr, "\r\n");

	while (p && p[2]) {
		const char *line = p + 2, *end = strstr(line, "\r\n");

		if (!end)
			break;
		if (!strncasecmp(line, name, nl) && line[nl] == ':') {
			const char *v = line + nl + 1;
			const char *e = end;

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

static int send_all(struct fwd_conn *c, const char *buf, size_t len)
{
	while (len) {
		size_t n = 0;
		CURLcode rc = curl_easy_send(c->curl, buf, len, &n);

		if (rc == CURLE_AGAIN) {
			if (wait_fd(c->f, c->sock, POLLOUT) < 0)
				return -1;
			continue;
		}
		if (rc != CURLE_OK) {
			set_error(c->f, "port-forward: cannot send upgrade: %s",
				  curl_easy_strerror(rc));
			return -1;
		}
		buf += n;
		len -= n;
	}
	return 0;
}

/* The Status message of a Kubernetes error body, or the body itself. */
static void status_message(const char *body, size_t len, struct strbuf *out)
{
	json_t *j = json_loadb(body, len, 0, NULL);
	const char *msg =
		j ? json_string_value(json_object_get(j, "message")) : NULL;

	if (msg)
		strbuf_addstr(out, msg);
	else
		strbuf_add(out, body, len > 512 ? 512 : len);
	json_decref(j);
}

/*
 * Read the answer to the upgrade. 101 with the right accept key and
 * subprotocol: 0. Another status: -1 with c->refused and c->refusal
 * set (not reported yet). Else -1 with the error set.
 */
static int read_upgrade(struct fwd_conn *c, const char *key)
{
	struct kube_forward *f = c->f;
	struct strbuf hdr = STRBUF_INIT, want = STRBUF_INIT;
	char *accept = NULL, *proto = NULL, *end, *p;
	char buf[4096];
	size_t hlen;
	int status, ret = -1;

	/* frames may follow the header in the same read: use memmem */
	while (!(end = memmem(hdr.buf, hdr.len, "\r\n\r\n", 4))) {
		size_t n = 0;
		CURLcode rc;

		if (hdr.len > MAX_HDR) {
			set_error(f, "port-forward: upgrade answer header too "
				     "large");
			goto out;
		}
		rc = curl_easy_recv(c->curl, buf, sizeof(buf), &n);
		if (rc == CURLE_AGAIN) {
			if (wait_fd(f, c->sock, POLLIN) < 0)
				goto out;
			continue;
		}
		if (rc != CURLE_OK || !n) {
			set_error(f,
				  "port-forward: connection closed before "
				  "the upgrade answer%s%s",
				  rc ? ": " : "",
				  rc ? curl_easy_strerror(rc) : "");
			goto out;
		}
		strbuf_add(&hdr, buf, n);
	}
	hlen = end + 4 - hdr.buf;
	if (strncmp(hdr.buf, "HTTP/1.", 7) || hdr.len < 12) {
		set_error(f, "port-forward: bad answer to the upgrade");
		goto out;
	}
	status = strtol(hdr.buf + 9, &p, 10);
	if (status != 101) {
		struct strbuf msg = STRBUF_INIT;
		char *cl = NULL;
		size_t want_len;

		/* read the body (Content-Length, else what comes) briefly */
		end[2] = '\0';
		cl = header_value(hdr.buf, "Content-Length");
		want_len = cl ? strtoul(cl, NULL, 10) : 0;
		free(cl);
		end[2] = '\r';
		if (want_len > MAX_HDR)
			want_len = MAX_HDR;
		while (hdr.len - hlen < want_len) {
			size_t n = 0;
			CURLcode rc =
				curl_easy_recv(c->curl, buf, sizeof(buf), &n);

			if (rc == CURLE_AGAIN) {
				if (wait_fd(f, c->sock, POLLIN) < 0)
					break;
				continue;
			}
			if (rc != CURLE_OK || !n)
				break;
			strbuf_add(&hdr, buf, n);
		}
		/* the caller reports it: a 401 may be retried */
		status_message(hdr.buf + hlen, hdr.len - hlen, &msg);
		c->refused = status > 0 ? status : -1;
		strbuf_reset(&c->refusal);
		strbuf_addbuf(&c->refusal, &msg);
		strbuf_release(&msg);
		goto out;
	}
	end[2] = '\0';
	accept = header_value(hdr.buf, "Sec-WebSocket-Accept");
	proto = header_value(hdr.buf, "Sec-WebSocket-Protocol");
	end[2] = '\r';
	ws_accept_key(key, &want);
	if (!accept || strcmp(accept, want.buf)) {
		set_error(f, "port-forward: bad Sec-WebSocket-Accept '%s'",
			  accept ? accept : "(none)");
		goto out;
	}
	if (!proto || strcmp(proto, WS_PROTO)) {
		set_error(f,
			  "port-forward: server chose subprotocol '%s', "
			  "not '" WS_PROTO "'",
			  proto ? proto : "(none)");
		goto out;
	}
	strbuf_add(&c->pre, hdr.buf + hlen, hdr.len - hlen);
	ret = 0;
out:
	free(accept);
	free(proto);
	strbuf_release(&hdr);
	strbuf_release(&want);
	return ret;
}

/* Scheme-less authority and path prefix of the base URL. */
static int split_base(const char *base, struct strbuf *host,
		      struct strbuf *prefix)
{
	const char *p = strstr(base, "://"), *slash;

	if (!p)
		return -1;
	p += 3;
	slash = strchr(p, '/');
	if (!slash)
		slash = p + strlen(p);
	strbuf_add(host, p, slash - p);
	strbuf_addstr(prefix, slash);
	return 0;
}

/* Abort a connect in progress when the forward stops. */
static int connect_progress(void *data, curl_off_t dt, curl_off_t dn,
			    curl_off_t ut, curl_off_t un)
{
	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return stopping(data);
}

/*
 * Connect, TLS, upgrade with token (NULL: no Authorization). 0, or -1
 * with the error set, or with c->refused set (see read_upgrade()).
 */
static int ws_connect(struct fwd_conn *c, const char *token)
{
	struct kube_forward *f = c->f;
	const char *base = http_client_base_url(f->o.client);
	struct strbuf url = STRBUF_INIT, path = STRBUF_INIT;
	struct strbuf host = STRBUF_INIT, req = STRBUF_INIT;
	struct strbuf key = STRBUF_INIT;
	char errbuf[CURL_ERROR_SIZE] = "";
	curl_socket_t s;
	CURLcode rc;
	int ret = -1;

	if (split_base(base, &host, &path) < 0) {
		set_error(f, "port-forward: bad API server URL '%s'", base);
		goto out;
	}
	strbuf_addf(&url,
		    "/api/v1/namespaces/%s/pods/%s/portforward"
		    "?ports=%u",
		    f->ns, f->pod, f->o.port);
	strbuf_addbuf(&path, &url);
	strbuf_reset(&url);
	strbuf_addstr(&url, base);
	strbuf_addstr(&url, path.buf + (path.len -
					strlen(strstr(path.buf,
						      "/api/v1/namespaces/"))));
	c->curl = curl_easy_init();
	if (!c->curl) {
		set_error(f, "port-forward: cannot create a curl handle");
		goto out;
	}
	if (http_client_apply_transport(f->o.client, c->curl) < 0)
		goto out;
	curl_easy_setopt(c->curl, CURLOPT_URL, url.buf);
	curl_easy_setopt(c->curl, CURLOPT_CONNECT_ONLY, 1L);
	/* through a proxy, a tunnel for http:// too (as client-go dials) */
	curl_easy_setopt(c->curl, CURLOPT_HTTPPROXYTUNNEL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_HTTP_VERSION,
			 (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c->curl, CURLOPT_XFERINFOFUNCTION, connect_progress);
	curl_easy_setopt(c->curl, CURLOPT_XFERINFODATA, f);
	if (getenv("GOSBX_HTTP_TRACE"))
		curl_easy_setopt(c->curl, CURLOPT_VERBOSE, 1L);
	rc = curl_easy_perform(c->curl);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, NULL);
	if (rc == CURLE_ABORTED_BY_CALLBACK)
		goto out; /* stopping */
	if (rc != CURLE_OK) {
		set_error(f, "port-forward: cannot reach '%s': %s", base,
			  *errbuf ? errbuf : curl_easy_strerror(rc));
		goto out;
	}
	if (curl_easy_getinfo(c->curl, CURLINFO_ACTIVESOCKET, &s) != CURLE_OK ||
	    s == CURL_SOCKET_BAD) {
		set_error(f, "port-forward: no socket from libcurl");
		goto out;
	}
	c->sock = s;

	if (ws_client_key(&key) < 0) {
		set_error(f, "port-forward: getrandom: %s", strerror(errno));
		goto out;
	}
	strbuf_addf(&req,
		    "GET %s HTTP/1.1\r\n"
		    "Host: %s\r\n"
		    "Connection: Upgrade\r\n"
		    "Upgrade: websocket\r\n"
		    "Sec-WebSocket-Version: 13\r\n"
		    "Sec-WebSocket-Key: %s\r\n"
		    "Sec-WebSocket-Protocol: " WS_PROTO "\r\n"
		    "User-Agent: gosbx\r\n",
		    path.buf, host.buf, key.buf);
	if (token)
		strbuf_addf(&req, "Authorization: Bearer %s\r\n", token);
	for (size_t i = 0; i < f->headers.nr; i++)
		strbuf_addf(&req, "%s\r\n", f->headers.v[i]);
	strbuf_addstr(&req, "\r\n");
	if (send_all(c, req.buf, req.len) < 0)
		goto out;
	ret = read_upgrade(c, key.buf);
out:
	strbuf_release(&url);
	strbuf_release(&path);
	strbuf_release(&host);
	strbuf_release(&req);
	strbuf_release(&key);
	return ret;
}

/*
 * The bearer token of the next upgrade into token: the caller's
 * get_token() (serialised), else the fixed one. 0, or -1 with the
 * error set.
 */
static int get_token(struct kube_forward *f, int forget, struct strbuf *token)
{
	struct strbuf msg = STRBUF_INIT;
	int r;

	strbuf_reset(token);
	if (!f->o.get_token) {
		if (f->token)
			strbuf_addstr(token, f->token);
		return 0;
	}
	pthread_mutex_lock(&f->token_lock);
	r = f->o.get_token(f->o.token_data, forget, token);
	pthread_mutex_unlock(&f->token_lock);
	if (r < 0) {
		/* get_token() printed its error: keep it, with the pod */
		strbuf_addf(&msg,
			    "port-forward to pod '%s/%s' port %u: no "
			    "credential: %s",
			    f->ns, f->pod, f->o.port,
			    *last_error() ? last_error() : "(no message)");
		keep_error(f, &msg, 0);
		strbuf_reset(token);
		return -1;
	}
	if (strchr(token->buf, '\n') || strchr(token->buf, '\r')) {
		set_error(f,
			  "port-forward to pod '%s/%s' port %u: the bearer "
			  "token holds a line break",
			  f->ns, f->pod, f->o.port);
		strbuf_reset(token);
		return -1;
	}
	return 0;
}

/* Drop the connection of a refused upgrade, for another try. */
static void conn_reset(struct fwd_conn *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	c->curl = NULL;
	c->sock = -1;
	strbuf_reset(&c->pre);
	c->refused = 0;
	strbuf_reset(&c->refusal);
}

/*
 * The pod answered 404: ask resolve_pod() (serialised with get_token())
 * for the pod to use now. 1 when it named another pod, which f->pod is
 * from now on; 0 otherwise (no other pod, or resolve_pod() failed).
 */
static int switch_pod(struct kube_forward *f)
{
	struct strbuf pod = STRBUF_INIT;
	int r, changed = 0;

	pthread_mutex_lock(&f->token_lock);
	r = f->o.resolve_pod(f->o.token_data, &pod);
	pthread_mutex_lock(&f->lock);
	if (!r && pod.len && strcmp(pod.buf, f->pod)) {
		ALLOC_GROW(f->old_pods, f->nr_old_pods + 1, f->alloc_old_pods);
		f->old_pods[f->nr_old_pods++] = f->pod;
		f->pod = strbuf_detach(&pod, NULL);
		changed = 1;
	}
	pthread_mutex_unlock(&f->lock);
	pthread_mutex_unlock(&f->token_lock);
	strbuf_release(&pod);
	return changed;
}

/*
 * Open the tunnel: token, connect, upgrade; after a 401, when the
 * token comes from get_token(), once more with a fresh credential on
 * a new connection. 0, or -1 with the error set.
 */
static int tunnel_open(struct fwd_conn *c)
{
	struct kube_forward *f = c->f;
	struct strbuf token = STRBUF_INIT;
	int attempt, ret = -1;

	for (attempt = 0; attempt < 2; attempt++) {
		if (attempt)
			conn_reset(c);
		if (get_token(f, attempt, &token) < 0)
			goto out;
		if (!ws_connect(c, token.len ? token.buf : NULL)) {
			ret = 0;
			goto out;
		}
		if (c->refused != 401 || !f->o.get_token || stopping(f))
			break;
	}
	if (c->refused == 404 && f->o.resolve_pod && !stopping(f) &&
	    switch_pod(f)) {
		/* the pod is gone (a rollout): once more to its successor */
		conn_reset(c);
		strbuf_reset(&token);
		if (get_token(f, 0, &token) < 0)
			goto out;
		if (!ws_connect(c, token.len ? token.buf : NULL)) {
			ret = 0;
			goto out;
		}
	}
	if (c->refused == 403 ||
	    (c->refused == 401 && (attempt || !f->o.get_token))) {
		pthread_mutex_lock(&f->lock);
		f->denied = c->refused;
		pthread_mutex_unlock(&f->lock);
	}
	if (c->refused)
		set_error(f,
			  "port-forward to pod '%s/%s' port %u refused: "
			  "HTTP %d: %s%s",
			  f->ns, f->pod, f->o.port, c->refused,
			  c->refusal.len ? c->refusal.buf : "(no message)",
			  c->refused == 401 && attempt
				  ? " (again with a fresh credential)"
				  : "");
out:
	strbuf_release(&token);
	return ret;
}

/*
 * The transport of c->ws: curl's connection. A local side that is not
 * draining stops the reading of the tunnel (WS_AGAIN), even in the
 * middle of wslay's loop over what curl has.
 */
static ssize_t tunnel_read(void *ctx, void *buf, size_t len)
{
	struct fwd_conn *c = ctx;
	size_t n = 0;
	CURLcode rc;

	if (c->out.len - c->out_off >= KUBE_FORWARD_BUF)
		return WS_AGAIN;
	rc = curl_easy_recv(c->curl, buf, len, &n);
	if (rc == CURLE_AGAIN)
		return WS_AGAIN;
	/* error, or EOF without a close frame: a broken tunnel */
	return rc == CURLE_OK ? (ssize_t)n : -1;
}

static ssize_t tunnel_write(void *ctx, const void *buf, size_t len, int more)
{
	struct fwd_conn *c = ctx;
	size_t n = 0;
	CURLcode rc = curl_easy_send(c->curl, buf, len, &n);

	if (rc == CURLE_AGAIN || (rc == CURLE_OK && !n))
		return WS_AGAIN;
	return rc == CURLE_OK ? (ssize_t)n : -1;
}

static void ws_on_msg(struct ws_conn *ws, int opcode, const uint8_t *p,
		      size_t len, uint16_t code, void *data)
{
	struct fwd_conn *c = data;
	struct kube_forward *f = c->f;
	int ch;

	if (opcode != WS_BINARY || !len)
		return;
	ch = p[0];
	p++;
	len--;
	if (ch > 1)
		return; /* unknown channel: ignore */
	if (!c->seen_port[ch]) {
		unsigned port;

		if (len < 2) {
			set_error(f,
				  "port-forward: short port prefix on "
				  "channel %d",
				  ch);
			goto fail;
		}
		port = p[0] | p[1] << 8;
		if (port != f->o.port) {
			set_error(f,
				  "port-forward: channel %d is for port %u, "
				  "not %u",
				  ch, port, f->o.port);
			goto fail;
		}
		c->seen_port[ch] = 1;
		p += 2;
		len -= 2;
	}
	if (!len)
		return;
	if (ch == 0) {
		strbuf_add(&c->out, p, len);
		return;
	}
	set_error(f, "port-forward to pod '%s/%s' port %u: %.*s", f->ns, f->pod,
		  f->o.port, (int)(len > 4096 ? 4096 : len), p);
fail:
	c->ws_failed = 1;
	ws_conn_stop_reading(ws); /* pump() sends nothing more either */
}

/* Write pending channel 0 data to the local fd; -1 on a write error. */
static int flush_local(struct fwd_conn *c)
{
	while (c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.buf + c->out_off,
				 c->out.len - c->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		c->out_off += n;
	}
	strbuf_reset(&c->out);
	c->out_off = 0;
	return 0;
}

/* Read from the local fd and queue it as one channel 0 message. */
static int read_local(struct fwd_conn *c)
{
	uint8_t buf[1 + 32 * 1024];
	ssize_t n;

	n = recv(c->fd, buf + 1, sizeof(buf) - 1, MSG_DONTWAIT);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK
			       ? 0
			       : -1;
	if (!n) {
		/* the close frame is queued once the data is sent */
		c->local_eof = 1;
		return 0;
	}
	buf[0] = 0;
	return ws_conn_send(&c->ws, WS_BINARY, buf, n + 1);
}

static void pump(struct fwd_conn *c)
{
	struct kube_forward *f = c->f;
	struct ws_transport t = { tunnel_read, tunnel_write, c->sock, c };
	struct ws_conn *ws = &c->ws;
	struct strbuf err = STRBUF_INIT;
	int close_queued = 0;

	/* one TLS record per frame, as kubectl's (Go's) writer sends */
	if (ws_conn_init(ws, WS_CLIENT, &t, MAX_MSG, WS_COALESCE, ws_on_msg,
			 c) < 0) {
		set_error(f, "port-forward: cannot create a WebSocket");
		return;
	}
	ws_conn_preload(ws, c->pre.buf, c->pre.len);
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = c->fd },
			{ .fd = c->sock },
			{ .fd = f->stop_pipe[0], .events = POLLIN },
		};
		int want_local = !c->local_eof && !close_queued &&
				 ws_conn_want_write_more(ws) &&
				 ws_conn_queued_bytes(ws) < KUBE_FORWARD_BUF;
		int rd_ok = c->out.len - c->out_off < KUBE_FORWARD_BUF;

		if (flush_local(c) < 0)
			break; /* local peer gone */
		if (ws_conn_done(ws))
			break;
		/* TLS may hold decrypted bytes: always try a read */
		if (rd_ok && ws_conn_want_read(ws) && ws_conn_read(ws) < 0)
			break;
		if (c->ws_failed)
			break;
		if (flush_local(c) < 0)
			break;
		if (ws_conn_write(ws) < 0)
			break;
		/*
		 * wslay sends control frames before queued data: close
		 * only when all data went out.
		 */
		if (c->local_eof && !close_queued &&
		    !ws_conn_queued_count(ws)) {
			close_queued = 1;
			ws_conn_close(ws, 1000, NULL);
			continue;
		}
		if (want_local)
			p[0].events |= POLLIN;
		if (c->out_off < c->out.len)
			p[0].events |= POLLOUT;
		if (ws_conn_want_read(ws) &&
		    c->out.len - c->out_off < KUBE_FORWARD_BUF)
			p[1].events |= POLLIN;
		if (ws_conn_want_write(ws))
			p[1].events |= POLLOUT;
		if (ws_conn_done(ws))
			break;
		/* POLLHUP comes without asking: skip an idle local fd */
		if (!p[0].events)
			p[0].fd = -1;
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[2].revents)
			break;
		if (p[0].revents & (POLLERR | POLLNVAL))
			break;
		if ((p[0].revents & (POLLIN | POLLHUP)) && want_local &&
		    read_local(c) < 0)
			break;
	}
	/* give the peer what was received before the tunnel ended */
	while (c->out_off < c->out.len && !stopping(f)) {
		if (flush_local(c) < 0 ||
		    (c->out_off < c->out.len && wait_fd(f, c->fd, POLLOUT) < 0))
			break;
	}
	if (ws_conn_error(ws, &err)) {
		/* the API server (or what is in between) broke RFC 6455 */
		set_error(f, "port-forward to pod '%s/%s' port %u: %s", f->ns,
			  f->pod, f->o.port, err.buf);
		c->ws_failed = 1;
	}
	if (ws->eof)
		c->ws_failed = 1;
	if (c->ws_failed && !c->local_eof) {
		pthread_mutex_lock(&f->lock);
		if (!f->last_error)
			f->last_error = xstrdup("port-forward: tunnel broke");
		pthread_mutex_unlock(&f->lock);
	}
	strbuf_release(&err);
	ws_conn_release(ws);
}

static void *conn_thread(void *data)
{
	struct fwd_conn *c = data;

	if (!tunnel_open(c))
		pump(c);
	shutdown(c->fd, SHUT_RDWR);
	close(c->fd);
	c->fd = -1;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	c->curl = NULL;
	strbuf_release(&c->pre);
	strbuf_release(&c->out);
	strbuf_release(&c->refusal);
	pthread_mutex_lock(&c->f->lock);
	c->done = 1;
	pthread_mutex_unlock(&c->f->lock);
	return NULL;
}

/* Join and free finished connections; all of them with all != 0. */
static void reap(struct kube_forward *f, int all)
{
	struct fwd_conn **pp = &f->conns;

	for (;;) {
		struct fwd_conn *c;
		int done;

		pthread_mutex_lock(&f->lock);
		c = *pp;
		done = c ? c->done : 0;
		pthread_mutex_unlock(&f->lock);
		if (!c)
			break;
		if (done || all) {
			pthread_join(c->thread, NULL);
			*pp = c->next;
			free(c);
		} else {
			pp = &c->next;
		}
	}
}

static void *accept_thread(void *data)
{
	struct kube_forward *f = data;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = f->lfd, .events = POLLIN },
			{ .fd = f->stop_pipe[0], .events = POLLIN },
		};
		struct fwd_conn *c;
		int fd;

		reap(f, 0);
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (!p[0].revents)
			continue;
		fd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		c = xcalloc(1, sizeof(*c));
		c->f = f;
		c->fd = fd;
		c->sock = -1;
		strbuf_init(&c->pre, 0);
		strbuf_init(&c->out, 0);
		strbuf_init(&c->refusal, 0);
		pthread_mutex_lock(&f->lock);
		f->tunnels++;
		pthread_mutex_unlock(&f->lock);
		if (pthread_create(&c->thread, NULL, conn_thread, c)) {
			error("port-forward: cannot start a thread");
			close(fd);
			free(c);
			continue;
		}
		c->next = f->conns;
		f->conns = c;
	}
	return NULL;
}

static int listen_local(struct kube_forward *f)
{
	struct strbuf sb = STRBUF_INIT;
	const char *tmp = getenv("TMPDIR");

	if (f->o.tcp) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t alen = sizeof(a);

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (f->lfd < 0 || bind(f->lfd, (void *)&a, sizeof(a)) < 0 ||
		    listen(f->lfd, 64) < 0 ||
		    getsockname(f->lfd, (void *)&a, &alen) < 0)
			return error("port-forward: cannot listen on "
				     "127.0.0.1: %s",
				     strerror(errno));
		strbuf_addf(&sb, "http://127.0.0.1:%u", ntohs(a.sin_port));
	} else {
		struct sockaddr_un a = { .sun_family = AF_UNIX };

		strbuf_addf(&sb, "%s/gosbx-pf-XXXXXX",
			    tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(sb.buf)) {
			error("port-forward: cannot create '%s': %s", sb.buf,
			      strerror(errno));
			strbuf_release(&sb);
			return -1;
		}
		f->dir = xstrdup(sb.buf);
		strbuf_addstr(&sb, "/sock");
		if (sb.len >= sizeof(a.sun_path)) {
			strbuf_release(&sb);
			return error("port-forward: socket path too long");
		}
		memcpy(a.sun_path, sb.buf, sb.len + 1);
		f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (f->lfd < 0 || bind(f->lfd, (void *)&a, sizeof(a)) < 0 ||
		    listen(f->lfd, 64) < 0) {
			error("port-forward: cannot listen on '%s': %s", sb.buf,
			      strerror(errno));
			strbuf_release(&sb);
			return -1;
		}
	}
	f->addr = strbuf_detach(&sb, NULL);
	return 0;
}

static void forward_free(struct kube_forward *f)
{
	if (f->lfd >= 0)
		close(f->lfd);
	if (f->dir) {
		if (f->addr)
			unlink(f->addr);
		rmdir(f->dir);
	}
	for (int i = 0; i < 2; i++)
		if (f->stop_pipe[i] >= 0)
			close(f->stop_pipe[i]);
	pthread_mutex_destroy(&f->lock);
	pthread_mutex_destroy(&f->token_lock);
	free(f->ns);
	free(f->pod);
	while (f->nr_old_pods)
		free(f->old_pods[--f->nr_old_pods]);
	free(f->old_pods);
	free(f->token);
	strvec_clear(&f->headers);
	free(f->dir);
	free(f->addr);
	free(f->last_error);
	free(f);
}

struct kube_forward *kube_forward_start(const struct kube_forward_opts *o)
{
	struct kube_forward *f;

	if (!o || !o->client || !o->namespace || !*o->namespace || !o->pod ||
	    !*o->pod || !o->port || o->port > 65535) {
		error("port-forward: need a client, namespace, pod and port");
		return NULL;
	}
	f = xcalloc(1, sizeof(*f));
	f->o = *o;
	f->lfd = -1;
	f->stop_pipe[0] = f->stop_pipe[1] = -1;
	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_init(&f->token_lock, NULL);
	f->ns = xstrdup(o->namespace);
	f->pod = xstrdup(o->pod);
	f->token = o->bearer_token ? xstrdup(o->bearer_token) : NULL;
	strvec_init(&f->headers);
	for (size_t i = 0; o->headers && o->headers[i]; i++) {
		if (strpbrk(o->headers[i], "\r\n")) {
			error("port-forward: a header line holds CR or LF");
			goto fail;
		}
		strvec_push(&f->headers, o->headers[i]);
	}
	f->o.headers = NULL;
	if (pipe2(f->stop_pipe, O_CLOEXEC) < 0) {
		error("port-forward: pipe: %s", strerror(errno));
		goto fail;
	}
	if (listen_local(f) < 0)
		goto fail;
	if (pthread_create(&f->accept_thread, NULL, accept_thread, f)) {
		error("port-forward: cannot start the accept thread");
		goto fail;
	}
	return f;
fail:
	forward_free(f);
	return NULL;
}

const char *kube_forward_address(const struct kube_forward *f)
{
	return f->addr;
}

unsigned long kube_forward_tunnels(struct kube_forward *f)
{
	unsigned long n;

	pthread_mutex_lock(&f->lock);
	n = f->tunnels;
	pthread_mutex_unlock(&f->lock);
	return n;
}

char *kube_forward_last_error(struct kube_forward *f)
{
	char *s;

	pthread_mutex_lock(&f->lock);
	s = f->last_error ? xstrdup(f->last_error) : NULL;
	pthread_mutex_unlock(&f->lock);
	return s;
}

int kube_forward_denied(struct kube_forward *f)
{
	int d;

	pthread_mutex_lock(&f->lock);
	d = f->denied;
	pthread_mutex_unlock(&f->lock);
	return d;
}

void kube_forward_set_quiet(struct kube_forward *f, int quiet)
{
	__atomic_store_n(&f->quiet, quiet, __ATOMIC_RELAXED);
}

unsigned long kube_forward_errors(struct kube_forward *f)
{
	unsigned long n;

	pthread_mutex_lock(&f->lock);
	n = f->errors;
	pthread_mutex_unlock(&f->lock);
	return n;
}

char *kube_forward_error_since(struct kube_forward *f, unsigned long mark)
{
	char *s = NULL;

	pthread_mutex_lock(&f->lock);
	if (f->errors != mark && f->last_error)
		s = xstrdup(f->last_error);
	pthread_mutex_unlock(&f->lock);
	return s;
}

void kube_forward_stop(struct kube_forward *f)
{
	if (!f)
		return;
	while (write(f->stop_pipe[1], "x", 1) < 0 && errno == EINTR)
		;
	pthread_join(f->accept_thread, NULL);
	reap(f, 1);
	forward_free(f);
}
