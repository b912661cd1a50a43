/*
 * The sandboxd gRPC ProcessService (KEP-539.2) of agent-sandbox v1.0.3,
 * by its contract packages/sandboxd/spec/process/v1/process.proto, on
 * the listener of --sandboxd-grpc (Documentation/gosbx-runtime.txt
 * "SANDBOXD").
 *
 * HTTP/2 is nghttp2's, the messages protobuf-c's (runtime/pb/, checked
 * in); what is ours is gRPC's thin layer between them (gRPC's
 * PROTOCOL-HTTP2.md): a message is a compressed flag byte (0: we
 * accept no compression) and a 4-byte big-endian length, the answer
 * ends with the trailers grpc-status and grpc-message (percent-encoded).
 *
 * One thread a connection, as libmicrohttpd's, reading and writing its
 * socket through one nghttp2 session; a call is answered when its
 * request stream ends. The same checks as the runtime's own listeners:
 * the Host (:authority) on TCP and the bearer token (lib/http-checks.h).
 *
 * Execute runs its argv (quoted into "exec ...") through the runtime's
 * command module (runtime-command.c: env merged with ours, cwd under
 * the workdir, the 8 MiB cap of each stream), blocking the connection's
 * thread. Start, WriteStdin, SendSignal and ResizeTTY answer
 * UNIMPLEMENTED for now.
 */
#include "compat.h"
#include "http-checks.h"
#include "json.h"
#include "listen.h"
#include "log.h"
#include "quote.h"
#include "runtime.h"
#include "strbuf.h"

#include <nghttp2/nghttp2.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/socket.h>

#include "process/v1/process.pb-c.h"

#define GRPC_PATH_PREFIX "/process.v1.ProcessService/"
/* the largest request message taken (as POST /execute's JSON body) */
#define GRPC_MESSAGE_LIMIT UPSTREAM_JSON_LIMIT

/* gRPC status codes (grpc/status.h) */
enum grpc_code {
	GRPC_OK = 0,
	GRPC_INVALID_ARGUMENT = 3,
	GRPC_NOT_FOUND = 5,
	GRPC_PERMISSION_DENIED = 7,
	GRPC_RESOURCE_EXHAUSTED = 8,
	GRPC_UNIMPLEMENTED = 12,
	GRPC_INTERNAL = 13,
	GRPC_UNAUTHENTICATED = 16,
};

static struct grpc_server {
	int fd;
	int tcp;
	const char *token;		  /* NULL or "": none */
	const char *const *allowed_hosts; /* --allow-host, or NULL */
} srv = { -1, 0, NULL, NULL };

/* One call: a request stream of a connection. */
struct call {
	int32_t stream_id;
	int fd; /* the connection's socket */
	struct strbuf path, authority, auth, content_type;
	struct strbuf body; /* the request's DATA */
	int too_large;
	struct strbuf reply; /* the framed answer message(s) */
	size_t sent;
	enum grpc_code code;
	struct strbuf message; /* grpc-message, raw */
};

static void call_free(struct call *c)
{
	strbuf_release(&c->path);
	strbuf_release(&c->authority);
	strbuf_release(&c->auth);
	strbuf_release(&c->content_type);
	strbuf_release(&c->body);
	strbuf_release(&c->reply);
	strbuf_release(&c->message);
	free(c);
}

static void call_fail(struct call *c, enum grpc_code code, const char *msg)
{
	c->code = code;
	strbuf_reset(&c->message);
	strbuf_addstr(&c->message, msg);
}

/* append one framed message: flag 0, big-endian length, the bytes */
static void frame_message(struct strbuf *out, const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	unsigned char hdr[5] = { 0, (unsigned char)(len >> 24),
				 (unsigned char)(len >> 16),
				 (unsigned char)(len >> 8),
				 (unsigned char)len };

	strbuf_add(out, hdr, sizeof(hdr));
	strbuf_grow(out, len);
	protobuf_c_message_pack(m, (uint8_t *)out->buf + out->len);
	strbuf_setlen(out, out->len + len);
}

/*
 * The one message of a unary request: its bytes in *data, *len; 0, or
 * -1 after call_fail().
 */
static int unframe_message(struct call *c, const uint8_t **data, size_t *len)
{
	const unsigned char *b = (const unsigned char *)c->body.buf;
	size_t n;

	if (c->too_large) {
		call_fail(c, GRPC_RESOURCE_EXHAUSTED,
			  "request message too large");
		return -1;
	}
	if (c->body.len < 5) {
		call_fail(c, GRPC_INVALID_ARGUMENT, "no request message");
		return -1;
	}
	if (b[0]) {
		call_fail(c, GRPC_UNIMPLEMENTED,
			  "compressed messages are not supported");
		return -1;
	}
	n = (size_t)b[1] << 24 | (size_t)b[2] << 16 | (size_t)b[3] << 8 | b[4];
	if (n != c->body.len - 5) {
		call_fail(c, GRPC_INVALID_ARGUMENT,
			  "a unary call takes exactly one message");
		return -1;
	}
	*data = b + 5;
	*len = n;
	return 0;
}

/*
 * The ProcessConfig as the JSON body of POST /execute, so that
 * parse_exec_body() applies the runtime's rules to it (env, cwd)
 */
static int config_to_json(struct call *c, const Process__V1__ProcessConfig *pc,
			  struct strbuf *out)
{
	struct strbuf cmd = STRBUF_INIT;

	if (!pc || !pc->n_command || !*pc->command[0]) {
		call_fail(c, GRPC_INVALID_ARGUMENT, "command is required");
		return -1;
	}
	strbuf_addstr(&cmd, "exec ");
	sq_quote_argv(&cmd, (const char *const *)pc->command, pc->n_command);
	strbuf_addstr(out, "{\"command\":");
	json_add_str(out, cmd.buf);
	strbuf_release(&cmd);
	if (pc->cwd && *pc->cwd) {
		strbuf_addstr(out, ",\"cwd\":");
		json_add_str(out, pc->cwd);
	}
	if (pc->n_env_vars) {
		strbuf_addstr(out, ",\"env\":{");
		for (size_t i = 0; i < pc->n_env_vars; i++) {
			if (i)
				strbuf_addch(out, ',');
			json_add_str(out, pc->env_vars[i]->key);
			strbuf_addch(out, ':');
			json_add_str(out, pc->env_vars[i]->value);
		}
		strbuf_addch(out, '}');
	}
	strbuf_addch(out, '}');
	return 0;
}

/*
 * Whether argv0 names an executable file, as execvp() looks for it
 * (the PATH of p's environment, else ours), relative names from p's
 * cwd: upstream answers NOT_FOUND for a command that does not exist,
 * where "exec <argv0>" would exit 127
 */
static int command_found(const char *argv0, const struct exec_params *p)
{
	const char *path = NULL, *s;
	struct strbuf f = STRBUF_INIT;
	int found = 0;

	if (strchr(argv0, '/')) {
		if (*argv0 != '/')
			strbuf_addf(&f, "%s/", p->req.cwd);
		strbuf_addstr(&f, argv0);
		found = !access(f.buf, X_OK);
		strbuf_release(&f);
		return found;
	}
	for (const char *const *e = p->req.env; e && *e; e++)
		if (starts_with(*e, "PATH="))
			path = *e + 5;
	if (!p->req.env)
		path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (s = path; !found; s++) {
		const char *end = strchrnul(s, ':');
		struct stat st;

		strbuf_reset(&f);
		strbuf_add(&f, s, end - s);
		if (!f.len)
			strbuf_addch(&f, '.');
		strbuf_addf(&f, "/%s", argv0);
		found = !access(f.buf, X_OK) && !stat(f.buf, &st) &&
			S_ISREG(st.st_mode);
		if (!*end)
			break;
		s = end;
	}
	strbuf_release(&f);
	return found;
}

static enum grpc_code code_of_status(unsigned status)
{
	switch (status) {
	case 400:
		return GRPC_INVALID_ARGUMENT;
	case 403:
		return GRPC_PERMISSION_DENIED;
	case 404:
		return GRPC_NOT_FOUND;
	case 413:
		return GRPC_RESOURCE_EXHAUSTED;
	}
	return GRPC_INTERNAL;
}

static void do_execute(struct call *c)
{
	Process__V1__ExecuteRequest *req;
	Process__V1__ExecuteResponse resp;
	struct request r = { 0 };
	struct exec_params p;
	struct exec_result res;
	struct strbuf err = STRBUF_INIT;
	const uint8_t *data;
	size_t len;
	unsigned status;
	char *argv0;

	if (unframe_message(c, &data, &len) < 0)
		return;
	req = process__v1__execute_request__unpack(NULL, len, data);
	if (!req) {
		call_fail(c, GRPC_INVALID_ARGUMENT,
			  "cannot decode ExecuteRequest");
		return;
	}
	strbuf_init(&r.body, 0);
	if (config_to_json(c, req->config, &r.body) < 0) {
		strbuf_release(&r.body);
		process__v1__execute_request__free_unpacked(req, NULL);
		return;
	}
	argv0 = xstrdup(req->config->command[0]);
	process__v1__execute_request__free_unpacked(req, NULL);
	status = parse_exec_body(&r, &p, &err);
	strbuf_release(&r.body);
	/* upstream: an escaping cwd is PERMISSION_DENIED */
	if (status == 400 && starts_with(err.buf, "cwd must be within"))
		status = 403;
	if (!status && !command_found(argv0, &p)) {
		status = 404;
		strbuf_addf(&err,
			    "failed to execute command: command or path not "
			    "found: %s",
			    argv0);
	}
	if (status) {
		call_fail(c, code_of_status(status), err.buf);
		strbuf_release(&err);
		exec_params_release(&p);
		free(argv0);
		return;
	}
	strbuf_release(&err);
	free(argv0);
	/* the connection's end cancels the command (not yet one call's) */
	p.req.cancel_fd = c->fd;
	exec_result_init(&res);
	command_run(&p, &res);
	exec_params_release(&p);
	if (!strcmp(res.reason, "start_failed")) {
		call_fail(c, GRPC_INTERNAL, res.err.buf);
		exec_result_release(&res);
		return;
	}
	process__v1__execute_response__init(&resp);
	/* -1 for a signal, as upstream's (Go's ExitCode()) */
	resp.exit_code = res.exit_code;
	resp.stdout.len = res.out.len;
	resp.stdout.data = (uint8_t *)res.out.buf;
	resp.stderr.len = res.err.len;
	resp.stderr.data = (uint8_t *)res.err.buf;
	frame_message(&c->reply, &resp.base);
	exec_result_release(&res);
}

/* the call's checks (as check_web()), then its method */
static void dispatch(struct call *c)
{
	const char *method;

	if (!http_content_type_is(c->content_type.buf, "application/grpc") &&
	    !starts_with(c->content_type.buf, "application/grpc+proto")) {
		call_fail(c, GRPC_INVALID_ARGUMENT,
			  "content-type must be application/grpc");
		return;
	}
	if (srv.tcp &&
	    !http_host_allowed(c->authority.buf, srv.allowed_hosts)) {
		call_fail(c, GRPC_PERMISSION_DENIED,
			  "host is not allowed: use an address, or start "
			  "gosbx-runtime with --allow-host=<name>");
		return;
	}
	if (srv.token && *srv.token &&
	    !http_bearer_ok(c->auth.len ? c->auth.buf : NULL, srv.token)) {
		call_fail(c, GRPC_UNAUTHENTICATED,
			  "unauthorized: authorization: Bearer <token> is "
			  "required");
		return;
	}
	if (!skip_prefix(c->path.buf, GRPC_PATH_PREFIX, &method)) {
		call_fail(c, GRPC_UNIMPLEMENTED, "unknown service");
		return;
	}
	if (!strcmp(method, "Execute"))
		do_execute(c);
	else if (!strcmp(method, "Start") || !strcmp(method, "WriteStdin") ||
		 !strcmp(method, "SendSignal") || !strcmp(method, "ResizeTTY"))
		call_fail(c, GRPC_UNIMPLEMENTED, "not implemented yet");
	else
		call_fail(c, GRPC_UNIMPLEMENTED, "unknown method");
}

/* grpc-message: percent-encoded outside printable ASCII, and '%' */
static void percent_encode(struct strbuf *out, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch < 0x20 || ch > 0x7e || ch == '%')
			strbuf_addf(out, "%%%02X", ch);
		else
			strbuf_addch(out, ch);
	}
}

#define NV(n, v)                                                               \
	{                                                                      \
		(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v),      \
			NGHTTP2_NV_FLAG_NONE                                   \
	}

static int submit_trailers(nghttp2_session *s, struct call *c)
{
	char code[16];
	struct strbuf msg = STRBUF_INIT;
	int rc;

	snprintf(code, sizeof(code), "%d", (int)c->code);
	percent_encode(&msg, c->message.buf);
	{
		nghttp2_nv t[] = { NV("grpc-status", code),
				   NV("grpc-message", msg.buf) };
		rc = nghttp2_submit_trailer(s, c->stream_id, t,
					    msg.len ? 2 : 1);
	}
	strbuf_release(&msg);
	return rc;
}

static ssize_t read_reply(nghttp2_session *s, int32_t stream_id, uint8_t *buf,
			  size_t length, uint32_t *flags,
			  nghttp2_data_source *source, void *user_data)
{
	struct call *c = source->ptr;
	size_t n = c->reply.len - c->sent;

	if (n > length)
		n = length;
	memcpy(buf, c->reply.buf + c->sent, n);
	c->sent += n;
	if (c->sent == c->reply.len) {
		*flags |=
			NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		if (submit_trailers(s, c))
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	return n;
}

static int answer(nghttp2_session *s, struct call *c)
{
	nghttp2_data_provider prd;
	char code[16];
	struct strbuf msg = STRBUF_INIT;
	int rc;

	dispatch(c);
	if (c->code == GRPC_OK) {
		nghttp2_nv h[] = { NV(":status", "200"),
				   NV("content-type", "application/grpc") };

		prd.source.ptr = c;
		prd.read_callback = read_reply;
		return nghttp2_submit_response(s, c->stream_id, h, 2, &prd);
	}
	/* Trailers-Only: the status in the one HEADERS frame */
	snprintf(code, sizeof(code), "%d", (int)c->code);
	percent_encode(&msg, c->message.buf);
	{
		nghttp2_nv h[] = { NV(":status", "200"),
				   NV("content-type", "application/grpc"),
				   NV("grpc-status", code),
				   NV("grpc-message", msg.buf) };
		rc = nghttp2_submit_response(s, c->stream_id, h, 4, NULL);
	}
	strbuf_release(&msg);
	return rc;
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *frame,
			    void *user_data)
{
	struct call *c;

	if (frame->hd.type != NGHTTP2_HEADERS ||
	    frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	c = xcalloc(1, sizeof(*c));
	c->stream_id = frame->hd.stream_id;
	c->fd = *(int *)user_data;
	strbuf_init(&c->path, 0);
	strbuf_init(&c->authority, 0);
	strbuf_init(&c->auth, 0);
	strbuf_init(&c->content_type, 0);
	strbuf_init(&c->body, 0);
	strbuf_init(&c->reply, 0);
	strbuf_init(&c->message, 0);
	nghttp2_session_set_stream_user_data(s, c->stream_id, c);
	return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *frame,
		     const uint8_t *name, size_t namelen, const uint8_t *value,
		     size_t valuelen, uint8_t flags, void *user_data)
{
	struct call *c =
		nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);
	struct strbuf *to = NULL;

	if (!c || frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (namelen == 5 && !memcmp(name, ":path", 5))
		to = &c->path;
	else if (namelen == 10 && !memcmp(name, ":authority", 10))
		to = &c->authority;
	else if (namelen == 13 && !memcmp(name, "authorization", 13))
		to = &c->auth;
	else if (namelen == 12 && !memcmp(name, "content-type", 12))
		to = &c->content_type;
	if (to) {
		strbuf_reset(to);
		strbuf_add(to, value, valuelen);
	}
	return 0;
}

static int on_data_chunk(nghttp2_session *s, uint8_t flags, int32_t stream_id,
			 const uint8_t *data, size_t len, void *user_data)
{
	struct call *c = nghttp2_session_get_stream_user_data(s, stream_id);

	if (!c)
		return 0;
	if (c->body.len + len > GRPC_MESSAGE_LIMIT + 5)
		c->too_large = 1;
	else
		strbuf_add(&c->body, data, len);
	return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *frame,
			 void *user_data)
{
	struct call *c;

	if ((frame->hd.type != NGHTTP2_HEADERS &&
	     frame->hd.type != NGHTTP2_DATA) ||
	    !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	c = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);
	if (!c)
		return 0;
	if (answer(s, c))
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t stream_id,
			   uint32_t error_code, void *user_data)
{
	struct call *c = nghttp2_session_get_stream_user_data(s, stream_id);

	if (c) {
		nghttp2_session_set_stream_user_data(s, stream_id, NULL);
		call_free(c);
	}
	return 0;
}

static ssize_t on_send(nghttp2_session *s, const uint8_t *data, size_t length,
		       int flags, void *user_data)
{
	int fd = *(int *)user_data;
	ssize_t n;

	do
		n = send(fd, data, length, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return n;
}

static void *serve_connection(void *arg)
{
	int fd = (int)(intptr_t)arg;
	nghttp2_session_callbacks *cb;
	nghttp2_session *s;
	nghttp2_settings_entry iv[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100 },
	};
	uint8_t buf[16384];

	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_send_callback(cb, on_send);
	nghttp2_session_callbacks_set_on_begin_headers_callback(
		cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
		cb, on_data_chunk);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb,
							       on_stream_close);
	if (nghttp2_session_server_new(&s, cb, &fd)) {
		nghttp2_session_callbacks_del(cb);
		close(fd);
		return NULL;
	}
	nghttp2_session_callbacks_del(cb);
	nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, iv, 1);
	while (nghttp2_session_want_read(s) || nghttp2_session_want_write(s)) {
		ssize_t n;

		if (nghttp2_session_send(s))
			break;
		if (!nghttp2_session_want_read(s))
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (nghttp2_session_mem_recv(s, buf, n) < 0)
			break;
	}
	nghttp2_session_del(s);
	close(fd);
	return NULL;
}

static void *accept_loop(void *arg)
{
	for (;;) {
		int fd = accept4(srv.fd, NULL, NULL, SOCK_CLOEXEC);
		pthread_attr_t attr;
		pthread_t t;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EMFILE || errno == ENFILE)
				continue;
			return NULL;
		}
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 512 * 1024);
		if (pthread_create(&t, &attr, serve_connection,
				   (void *)(intptr_t)fd))
			close(fd);
		pthread_attr_destroy(&attr);
	}
	return NULL;
}

int grpc_start(const char *addr, const char *token,
	       const char *const *allowed_hosts, struct listen_info *li)
{
	pthread_t t;

	srv.fd = listen_address(addr, NULL, 256, li);
	if (srv.fd < 0) {
		log_msg(LOG_ERROR, "cannot listen", "addr", addr);
		return -1;
	}
	srv.tcp = li->ss.ss_family == AF_INET || li->ss.ss_family == AF_INET6;
	srv.token = token;
	srv.allowed_hosts = allowed_hosts;
	if (pthread_create(&t, NULL, accept_loop, NULL)) {
		close(srv.fd);
		log_msg(LOG_ERROR, "cannot start the gRPC server", "addr",
			addr);
		return -1;
	}
	pthread_detach(t);
	{
		struct log_line ll;
		if (log_begin(&ll, LOG_INFO, "sandboxd grpc listening")) {
			log_str(&ll, "addr", addr);
			log_end(&ll);
		}
	}
	return 0;
}
