#ifndef HTTP_H
#define HTTP_H

#include "compat.h"
#include "strbuf.h"

#include <signal.h>

#include <jansson.h>

/*
 * The HTTP client of gosbx, over libcurl (Documentation/technical/design.md
 * "Dependencies": HTTP/1.1 keep-alive, unix sockets, TLS). It talks to runtime
 * servers (Documentation/protocol/runtime-api.md), the sandbox-router and the
 * Kubernetes API.
 *
 * One client owns one libcurl easy handle, reused for every request so
 * that the connection is kept alive between requests (HTTP/1.1
 * persistent connections, RFC 9112 section 9.3). A steady stream of
 * requests allocates no handle and no header list of its own.
 *
 * Threads: a client may be shared between threads; a mutex inside it
 * serialises the requests (one at a time, in lock order). For
 * parallel requests give each thread its own client with
 * http_client_dup(). Callbacks (on_data, read_body) run with that
 * mutex held and must not use the same client.
 *
 * Errors: functions that fail print one message with error()
 * (usage.h), which also sets last_error() for this thread, and keep
 * the text in the client (http_client_last_error()).
 */

struct http_client;

/* Settings of a client. Every pointer is copied by http_client_new(). */
struct http_client_opts {
	/*
	 * Path of a unix domain socket: every request goes over it, and
	 * the host of base_url only fills the Host header (use e.g.
	 * "http://localhost"). NULL: TCP to the host of base_url.
	 */
	const char *unix_socket;
	/* Connect timeout in ms; 0: libcurl's default (300 s). */
	long connect_timeout_ms;

	/* TLS (https base URLs). Each item is optional. */
	const char *ca_file;   /* PEM bundle path (CURLOPT_CAINFO) */
	const char *ca_pem;    /* PEM bundle in memory (CURLOPT_CAINFO_BLOB) */
	size_t ca_pem_len;     /* bytes of ca_pem */
	const char *cert_file; /* client certificate, PEM path */
	const char *key_file;  /* client key, PEM path */
	const char *cert_pem;  /* client certificate, PEM in memory */
	size_t cert_pem_len;   /* bytes of cert_pem */
	const char *key_pem;   /* client key, PEM in memory */
	size_t key_pem_len;    /* bytes of key_pem */
	int insecure_skip_verify; /* no peer or host name verification */

	/*
	 * Proxy (CURLOPT_PROXY), e.g. "http://proxy:3128" or
	 * "socks5h://proxy:1080". NULL: libcurl's choice from the
	 * environment (http_proxy, HTTPS_PROXY, ALL_PROXY, NO_PROXY);
	 * "": no proxy, whatever the environment says.
	 */
	const char *proxy;
	/*
	 * Hosts reached without the proxy (CURLOPT_NOPROXY: names,
	 * domains, CIDRs, comma-separated). NULL: NO_PROXY of the
	 * environment; "": every host through the proxy.
	 */
	const char *no_proxy;
	/*
	 * One CURLOPT_CONNECT_TO entry "HOST:PORT:TO-HOST:TO-PORT": a
	 * connection to HOST:PORT of the URL goes to TO-HOST:TO-PORT
	 * (through the proxy, if any) while TLS (SNI, certificate name)
	 * and the Host header keep HOST. Used for kubeconfig's
	 * tls-server-name. NULL: none.
	 */
	const char *connect_to;

	/* Sent as "Authorization: Bearer <token>"; NULL: none. */
	const char *bearer_token;
	/*
	 * Headers sent with every request, "Name: value" strings ending
	 * with a NULL entry (e.g. the sandbox-router's "X-Sandbox-ID: x",
	 * Documentation/protocol/kubernetes.md). A request header of the same
	 * name replaces one of these for that request. NULL: none.
	 */
	const char *const *headers;
	/* User-Agent; NULL: "gosbx/<version>". */
	const char *user_agent;
	/*
	 * Send every request body with the chunked transfer coding (RFC
	 * 9112 section 7.1), never with Content-Length. A Go
	 * httputil.ReverseProxy (agent-sandbox's sandbox-router, v0.5 and
	 * later) reads a request body of known length once more after
	 * its end; when the upstream's answer comes first, the proxy has
	 * closed the body and cuts the answer right after its headers
	 * (golang/go#40747). With chunks the upstream sees the end of the
	 * body only after that read. Both routers and gosbx-runtime take
	 * chunked bodies.
	 */
	int chunked_bodies;
	/*
	 * Seconds a connection may have been idle and still be reused
	 * (CURLOPT_MAXAGE_CONN); 0: libcurl's 118. Shorter than a
	 * server's keep-alive timeout (uvicorn's 5 s: the Python
	 * sandbox-router of agent-sandbox v0.4), no connection the server
	 * may have closed or be closing is reused. Through a Kubernetes
	 * port-forward a request sent after such a pause was lost (t4020,
	 * on v0.4.6 with uvicorn 0.17); whether the port-forward passes
	 * the close on is not established.
	 */
	long max_idle_reuse_s;
	/*
	 * Streamed requests (http_req.on_data set: an exec stream, a
	 * download, a log that is followed) on a connection of their own,
	 * never one a previous answer used (CURLOPT_FRESH_CONNECT). The
	 * Python sandbox-router of agent-sandbox v0.4 under uvicorn 0.17
	 * (Debian 12's) arms its keep-alive timer when an answer ends and
	 * does not stop it when the next request comes on that connection:
	 * 5 s later it cuts the next answer, a stream, without closing
	 * the connection, and the client waits for ever.
	 */
	int fresh_streams;
};

/*
 * Create a client for base_url, e.g. "http://127.0.0.1:8888",
 * "https://10.0.0.1:6443" or, with opts->unix_socket,
 * "http://localhost". A trailing '/' of base_url is dropped; request
 * paths are appended to it, so base_url may hold a path prefix. opts
 * may be NULL (all defaults). Nothing is connected yet.
 *
 * Returns the client, to free with http_client_free(), or NULL with
 * error() when libcurl cannot be initialised or refuses a setting
 * (e.g. an in-memory certificate with a TLS backend that has no blob
 * support).
 *
 * The environment variable GOSBX_HTTP_TRACE (any value) turns on
 * libcurl's verbose trace to stderr.
 */
struct http_client *http_client_new(const char *base_url,
				    const struct http_client_opts *opts);

/*
 * A new client with the same base URL and settings as c, with its own
 * handle and connection (for another thread). Returns NULL with
 * error() as http_client_new() does.
 */
struct http_client *http_client_dup(struct http_client *c);

/* Close the connection and free the client. NULL is allowed. */
void http_client_free(struct http_client *c);

/*
 * The message of the last failed request of c, as printed by error()
 * without "error: " (e.g. "cannot reach 'unix:/x/sock': Couldn't
 * connect to server"); "" when the last request got an answer. Valid
 * until the next request on c; owned by c.
 */
const char *http_client_last_error(struct http_client *c);

/* The base URL of c without trailing '/'; owned by c. */
const char *http_client_base_url(const struct http_client *c);

/*
 * Apply the transport settings of c (unix socket, connect timeout,
 * TLS, HTTP/1.1, no signals) to another easy handle, e.g. a
 * CURLOPT_CONNECT_ONLY handle for a WebSocket upgrade. Headers and the
 * bearer token are not applied. easy is a CURL *. Returns 0, or -1
 * with error() when libcurl refuses a setting.
 */
int http_client_apply_transport(const struct http_client *c, void *easy);

/*
 * Append to out the header lines every request of c carries, each as
 * "Name: value\r\n": Authorization (bearer token), the client's
 * headers (http_client_opts.headers) and User-Agent. For a request
 * written by hand on a handle set up with http_client_apply_transport()
 * (a WebSocket upgrade, lib/session/websocket.h).
 */
void http_client_header_lines(const struct http_client *c, struct strbuf *out);

/* Read callback for streamed uploads: see struct http_req. */
typedef ssize_t (*http_read_fn)(char *buf, size_t len, void *data);
/* Body callback for streamed answers: see struct http_req. */
typedef int (*http_data_fn)(const char *buf, size_t len, void *data);

/* body_len of a read_body upload whose size is not known (chunked). */
#define HTTP_LEN_UNKNOWN ((size_t)-1)

struct http_req {
	/* "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"...; NULL: GET */
	const char *method;
	/*
	 * Appended to the base URL; the caller percent-encodes it (see
	 * http_pct_encode_path()). A missing leading '/' is added. It is
	 * sent as given: "." and ".." segments are not removed. NULL: "/".
	 */
	const char *path;
	/* Query without '?', already encoded (http_query_add()); or NULL. */
	const char *query;

	/*
	 * Request body: body_len bytes at body, sent with Content-Length.
	 * POST, PUT and PATCH always send a body (maybe empty); other
	 * methods send one only when body is not NULL.
	 */
	const void *body;
	size_t body_len;
	/*
	 * Instead of body: a callback that fills buf with at most len
	 * bytes and returns how many, 0 at the end, or -1 to abort the
	 * request (http_request() then returns -1). body_len then holds
	 * the total size in bytes, or HTTP_LEN_UNKNOWN for chunked
	 * transfer coding. See http_read_fd() for a file descriptor.
	 */
	http_read_fn read_body;
	void *read_data;
	/* Content-Type of the body; NULL: no Content-Type header. */
	const char *content_type;
	/* Extra "Name: value" headers, NULL-terminated; or NULL. */
	const char *const *headers;

	/* Limit for the whole request in ms; 0: none. */
	long timeout_ms;
	/*
	 * Most ms without a byte of the answer; 0: none. For a stream
	 * whose server sends something at least this often (gosbx-runtime's
	 * exec heartbeat, Documentation/gosbx-runtime.txt): past it the
	 * connection is taken for lost (a proxy or port-forward that went
	 * silent without closing it), and http_request() fails with an
	 * error that says so instead of waiting for ever.
	 */
	long idle_timeout_ms;

	/*
	 * Streaming: when set, the body of a 2xx answer is given to
	 * on_data as it arrives, in pieces of any size, instead of being
	 * stored in resp->body. Returning < 0 aborts the transfer
	 * (http_request() returns HTTP_ABORTED). The body of a non-2xx
	 * answer is still stored in resp->body so that its error can be
	 * reported.
	 */
	http_data_fn on_data;
	void *on_data_arg;
	/*
	 * Polled during the request (at least about once a second,
	 * whenever data moves, and at once when a signal interrupts the
	 * wait of the thread doing the request, e.g. the SIGINT whose
	 * handler sets it); when it becomes non-zero the transfer
	 * stops and http_request() returns HTTP_ABORTED. Meant for a
	 * SIGINT handler. NULL: never.
	 */
	volatile sig_atomic_t *cancel;
	/*
	 * Most bytes of the answer's body stored in resp->body: a body
	 * that grows past it (a broken or hostile server sending without
	 * end) stops the transfer, and http_request() returns -1 with
	 * error() "... failed: answer over <max_body> bytes". 0:
	 * HTTP_MAX_BODY. Bodies given to on_data are not stored and not
	 * counted; the body of a non-2xx answer is kept up to
	 * HTTP_MAX_ERROR_BODY bytes whatever max_body says (see
	 * struct http_resp).
	 */
	size_t max_body;
	/*
	 * If set (17 bytes at least), receives the X-Request-ID this
	 * request carried (16 hex digits and a NUL), e.g. to name the
	 * request to the server later; left alone when the caller's
	 * headers name their own X-Request-ID.
	 */
	char *id_out;
};

/*
 * The default http_req.max_body: 64 MiB, far above any JSON answer of a
 * runtime server or a Kubernetes API list gosbx reads, and a bound on
 * what one request can make the client hold.
 */
#define HTTP_MAX_BODY ((size_t)64 << 20)
/*
 * The most bytes of a non-2xx answer's body kept (64 KiB): enough for
 * any error message; the rest is not read (the connection is closed).
 */
#define HTTP_MAX_ERROR_BODY ((size_t)64 << 10)

struct http_resp {
	long status; /* HTTP status code; 0 before an answer */
	/*
	 * The answer's body (when not streamed); of a non-2xx answer at
	 * most its first HTTP_MAX_ERROR_BODY bytes (body_cut set when
	 * more was sent).
	 */
	struct strbuf body;
	struct strbuf content_type; /* Content-Type value, "" if none */
	int body_cut;		    /* the error body was cut */
	/* Retry-After (RFC 9110 10.2.3), seconds from now; -1: none */
	long retry_after_s;
	time_t date; /* the Date header (the server's clock); 0: none */
	/*
	 * after a transport failure: 1 when nothing was sent (the
	 * connection or name resolution failed), so any method may be
	 * tried again; 0 otherwise
	 */
	int not_sent;
	/*
	 * The values of the answer's Warning headers (RFC 9111 5.5; the
	 * Kubernetes API server's "299 - \"...\"" for deprecations and
	 * dropped fields), one a line, as sent: at most HTTP_MAX_WARNINGS,
	 * each cut at HTTP_MAX_WARNING bytes; "" when none.
	 */
	struct strbuf warnings;
};

#define HTTP_MAX_WARNINGS 16
#define HTTP_MAX_WARNING 1024

#define HTTP_RESP_INIT                                                         \
	{                                                                      \
		0, STRBUF_INIT, STRBUF_INIT, 0, -1, 0, 0, STRBUF_INIT          \
	}
void http_resp_init(struct http_resp *resp);
void http_resp_release(struct http_resp *resp);

/* http_request() result when on_data or the cancel flag stopped it. */
#define HTTP_ABORTED (-2)

/*
 * Perform one request on c. Every request carries
 * "X-Request-ID: <16 lowercase hex digits>", random per request, unless
 * the request or client headers already name X-Request-ID
 * (Documentation/protocol/runtime-api.md "Client side"). "Expect: 100-continue"
 * is never sent.
 *
 * resp is reset first (its buffers are reused, so one http_resp may
 * serve many requests) and must be initialised.
 *
 * Returns 0 when an HTTP answer arrived, whatever its status (see
 * resp->status; a non-2xx answer whose body is longer than
 * HTTP_MAX_ERROR_BODY counts as arrived, with the start of its body);
 * -1 on transport failure (connect, TLS, timeout, read callback abort,
 * connection lost, a stored body over req->max_body), with error()
 * naming the target,
 * e.g. "cannot reach 'unix:/x/sock': Couldn't connect to server" or
 * "GET 'http://h/x' failed: Operation timed out after 100 milliseconds
 * with 0 bytes received"; HTTP_ABORTED when on_data returned < 0 or
 * *cancel became non-zero, without a message (the caller knows why).
 */
int http_request(struct http_client *c, const struct http_req *req,
		 struct http_resp *resp);

/*
 * POST a multipart/form-data body (RFC 7578) with one file part named
 * field (e.g. "file") and the given filename, holding len bytes at
 * data, to path: the upstream runtime's POST /upload
 * (Documentation/protocol/runtime-api.md). The data is not copied. Returns as
 * http_request().
 */
int http_upload_multipart(struct http_client *c, const char *path,
			  const char *field, const char *filename,
			  const void *data, size_t len, struct http_resp *resp);

/*
 * JSON convenience: send method to path with body serialised as
 * "application/json" (body may be NULL: no body), with
 * "Accept: application/json".
 *
 * *status (if status is not NULL) gets the HTTP status, 0 when no
 * answer arrived. *out (if out is not NULL) gets the parsed answer, or
 * NULL when the body was empty or not JSON; the caller json_decref()s
 * it, whatever the return value (a non-2xx answer is parsed too, e.g.
 * for a Kubernetes Status "reason").
 *
 * Returns 0 on a 2xx answer whose body is empty or valid JSON; -1 on
 * transport failure, on a 2xx answer that is not JSON, and on a non-2xx
 * answer, with error() like "POST '/execute': 400 Bad Request: command
 * must not be empty", where the text is the runtime's {"detail":...}
 * (Documentation/protocol/runtime-api.md) or a Kubernetes Status "message".
 * Callers that expect some non-2xx answers (404...) use http_request() and
 * http_error_text() instead, to print nothing.
 */
int http_json(struct http_client *c, const char *method, const char *path,
	      json_t *body, long *status, json_t **out);

/*
 * Append to out a one-line description of a failed answer:
 * "<status> <reason phrase>: <text>", where the text is the body's
 * "detail" string (runtime servers), its "message" string (Kubernetes
 * Status, apimachinery metav1.Status), or else the start of the body
 * (at most 200 bytes, first line). Nothing after the reason phrase when
 * the body is empty.
 */
void http_error_text(struct strbuf *out, long status,
		     const struct strbuf *body);

/*
 * Percent-encoding (RFC 3986 section 2.1, upper-case hex digits).
 * http_pct_encode_path() appends path to out, encoding every byte but
 * the unreserved characters (ALPHA DIGIT - . _ ~) and '/';
 * http_pct_encode_query() appends s encoding every byte but the
 * unreserved ones (for one query key or value).
 */
void http_pct_encode_path(struct strbuf *out, const char *path);
void http_pct_encode_query(struct strbuf *out, const char *s);
/* Append "key=value" (both encoded) to q, after a '&' if q is not empty. */
void http_query_add(struct strbuf *q, const char *key, const char *value);

/*
 * A read_body callback that reads from the file descriptor *(int *)data
 * (retrying EINTR). Returns bytes read, 0 at end of file, -1 with
 * error_errno() on a read error.
 */
ssize_t http_read_fd(char *buf, size_t len, void *data);

#endif /* HTTP_H */
