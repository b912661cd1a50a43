/*
 * The sandboxd gRPC ProcessService (KEP-539.2) of agent-sandbox v1.0.3,
 * by its contract packages/sandboxd/spec/process/v1/process.proto, on
 * the listener of --sandboxd-grpc (Documentation/gosbx-runtime.txt
 * "SANDBOXD").
 *
 * HTTP/2 is nghttp2's, the messages protobuf-c's (lib/proto/pb/, checked
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
 * the workdir, the 8 MiB cap of each stream). Execute and Start each run
 * in a runner thread of their own (Start: exec_step() with a wake pipe
 * for WriteStdin's EOF), which queues the framed answer or events on
 * the call and wakes the connection's thread; that one resumes the
 * deferred stream (nghttp2 is used from that thread only). The queue is
 * not bounded: a client that does not read lets it grow (up to what the
 * command writes). The running Start processes
 * are in a table by id (the shell's pid) for WriteStdin, SendSignal and
 * ResizeTTY; a process leaves it before exec_finish(), under
 * procs_mu, so a call holding procs_mu may use its exec_proc.
 */
#include "compat.h"
#include "http-checks.h"
#include "json.h"
#include "listen.h"
#include "log.h"
#include "quote.h"
#include "runtime.h"
#include "strbuf.h"
#include "usage.h"

#include <nghttp2/nghttp2.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
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
	GRPC_FAILED_PRECONDITION = 9,
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

struct call;

/* One connection, served by one thread */
struct conn {
	int fd;
	int wake[2];	    /* a Start's runner writes a byte: output queued */
	pthread_mutex_t mu; /* the Start calls' reply queues and flags */
	struct call *started; /* the Start calls, joined at the end */
};

/* A process of Start, findable by its id (the shell's pid) */
struct proc_entry {
	int32_t id;
	struct exec_proc *proc;
	struct call *c;
	int tty;
	int eof;     /* WriteStdin asked for EOF: the runner closes stdin */
	int wake[2]; /* polled by the runner beside the command */
	struct proc_entry *next;
};
static pthread_mutex_t procs_mu = PTHREAD_MUTEX_INITIALIZER;
static struct proc_entry *procs;

/* One call: a request stream of a connection. */
struct call {
	int32_t stream_id;
	int fd; /* the connection's socket */
	struct conn *conn;
	/* Start: a runner thread feeds reply under conn->mu */
	int streaming, done, closed, resume;
	pthread_t runner;
	struct call *next;
	struct strbuf path, authority, auth, content_type;
	struct strbuf body; /* the request's DATA */
	int too_large;
	struct strbuf reply; /* the framed answer message(s) */
	size_t sent;
	enum grpc_code code;
	struct strbuf message; /* grpc-message, raw */
};

/* end the Start process of c, if it runs (the client went away) */
static void cancel_call(struct call *c)
{
	c->closed = 1;
	pthread_mutex_lock(&procs_mu);
	for (struct proc_entry *e = procs; e; e = e->next)
		if (e->c == c)
			exec_cancel(e->proc, "cancelled");
	pthread_mutex_unlock(&procs_mu);
}

static void call_free_now(struct call *c);

static void call_free(struct call *c)
{
	if (c->streaming) {
		cancel_call(c); /* freed when the connection ends */
		return;
	}
	call_free_now(c);
}

static void call_free_now(struct call *c)
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

/*
 * The ProcessConfig pc as exec_params (released by the caller, also
 * on failure); 0, or -1 after call_fail()
 */
static int prepare(struct call *c, const Process__V1__ProcessConfig *pc,
		   struct exec_params *p)
{
	struct request r = { 0 };
	struct strbuf err = STRBUF_INIT;
	unsigned status;

	strbuf_init(&r.body, 0);
	if (config_to_json(c, pc, &r.body) < 0) {
		strbuf_release(&r.body);
		memset(p, 0, sizeof(*p));
		strvec_init(&p->env);
		strbuf_init(&p->cwd, 0);
		strbuf_init(&p->held, 0);
		return -1;
	}
	status = parse_exec_body(&r, p, &err);
	strbuf_release(&r.body);
	if (status == 400 && starts_with(err.buf, "cwd must be within"))
		status = 403;
	if (!status && !command_found(pc->command[0], p)) {
		status = 404;
		strbuf_addf(&err,
			    "failed to execute command: command or path not "
			    "found: %s",
			    pc->command[0]);
	}
	if (status)
		call_fail(c, code_of_status(status), err.buf);
	strbuf_release(&err);
	return status ? -1 : 0;
}

static void wake(int fd)
{
	char b = 1;

	if (write(fd, &b, 1) < 0 && errno != EAGAIN)
		return;
}

/* queue one StartResponse on c (under conn->mu), wake the connection */
static void start_push(struct call *c, Process__V1__StartResponse *ev)
{
	pthread_mutex_lock(&c->conn->mu);
	frame_message(&c->reply, &ev->base);
	c->resume = 1;
	pthread_mutex_unlock(&c->conn->mu);
	wake(c->conn->wake[1]);
}

static int start_output(enum exec_stream stream, const char *buf, size_t len,
			void *data)
{
	struct call *c = data;
	Process__V1__StartResponse ev;

	if (c->closed)
		return -1; /* the client went away: cancel */
	process__v1__start_response__init(&ev);
	if (stream == EXEC_STDERR) {
		ev.event_case = PROCESS__V1__START_RESPONSE__EVENT_STDERR;
		ev.stderr.len = len;
		ev.stderr.data = (uint8_t *)buf;
	} else {
		ev.event_case = PROCESS__V1__START_RESPONSE__EVENT_STDOUT;
		ev.stdout.len = len;
		ev.stdout.data = (uint8_t *)buf;
	}
	start_push(c, &ev);
	return 0;
}

struct start_job {
	struct call *c;
	struct exec_params p;
	struct exec_proc *proc;
	struct proc_entry *e;
	struct pollfd pfd;
};

static void *start_runner(void *arg)
{
	struct start_job *j = arg;
	struct exec_result res;
	Process__V1__StartResponse ev;
	Process__V1__ExitEvent ex;
	struct proc_entry **pp;

	while (exec_step(j->proc, -1) > 0) {
		char b[64];

		if (!j->pfd.revents)
			continue;
		while (read(j->e->wake[0], b, sizeof(b)) > 0)
			;
		pthread_mutex_lock(&procs_mu);
		if (j->e->eof && exec_stdin_fd(j->proc) >= 0)
			exec_stdin_close(j->proc);
		pthread_mutex_unlock(&procs_mu);
	}
	pthread_mutex_lock(&procs_mu);
	for (pp = &procs; *pp; pp = &(*pp)->next)
		if (*pp == j->e) {
			*pp = j->e->next;
			break;
		}
	pthread_mutex_unlock(&procs_mu);
	exec_result_init(&res);
	command_finish(&j->p, j->proc, &res);
	process__v1__start_response__init(&ev);
	process__v1__exit_event__init(&ex);
	ex.exit_code = res.exit_code;
	ev.event_case = PROCESS__V1__START_RESPONSE__EVENT_EXIT;
	ev.exit = &ex;
	exec_result_release(&res);
	pthread_mutex_lock(&j->c->conn->mu);
	frame_message(&j->c->reply, &ev.base);
	j->c->done = 1;
	j->c->resume = 1;
	pthread_mutex_unlock(&j->c->conn->mu);
	wake(j->c->conn->wake[1]);
	close(j->e->wake[0]);
	close(j->e->wake[1]);
	free(j->e);
	exec_params_release(&j->p);
	free(j);
	return NULL;
}

static void do_start(struct call *c)
{
	Process__V1__StartRequest *req;
	Process__V1__StartResponse ev;
	Process__V1__InitEvent init;
	struct start_job *j;
	const uint8_t *data;
	size_t len;

	if (unframe_message(c, &data, &len) < 0)
		return;
	req = process__v1__start_request__unpack(NULL, len, data);
	if (!req) {
		call_fail(c, GRPC_INVALID_ARGUMENT,
			  "cannot decode StartRequest");
		return;
	}
	j = xcalloc(1, sizeof(*j));
	if (prepare(c, req->config, &j->p) < 0) {
		process__v1__start_request__free_unpacked(req, NULL);
		exec_params_release(&j->p);
		free(j);
		return;
	}
	j->c = c;
	j->e = xcalloc(1, sizeof(*j->e));
	if (pipe2(j->e->wake, O_CLOEXEC | O_NONBLOCK) < 0)
		die_errno("pipe");
	j->p.req.stdin_stream = 1;
	j->p.req.on_output = start_output;
	j->p.req.data = c;
	j->p.req.stream_cap = 1; /* all goes out through start_output */
	if (req->pty) {
		j->p.req.tty = 1;
		j->p.req.cols = req->pty->cols;
		j->p.req.rows = req->pty->rows;
		j->e->tty = 1;
	}
	process__v1__start_request__free_unpacked(req, NULL);
	j->pfd.fd = j->e->wake[0];
	j->pfd.events = POLLIN;
	j->p.req.poll_extra = &j->pfd;
	j->p.req.nr_poll_extra = 1;
	command_start(&j->p, &j->proc);
	j->e->proc = j->proc;
	j->e->c = c;
	j->e->id = exec_pgid(j->proc);
	process__v1__start_response__init(&ev);
	process__v1__init_event__init(&init);
	init.process_id = j->e->id;
	ev.event_case = PROCESS__V1__START_RESPONSE__EVENT_INIT;
	ev.init = &init;
	frame_message(&c->reply, &ev.base);
	pthread_mutex_lock(&procs_mu);
	j->e->next = procs;
	procs = j->e;
	pthread_mutex_unlock(&procs_mu);
	c->streaming = 1;
	c->next = c->conn->started;
	c->conn->started = c;
	if (pthread_create(&c->runner, NULL, start_runner, j))
		die("cannot start a thread");
}

/* the process of id, with procs_mu held (the caller unlocks), or NULL */
static struct proc_entry *find_proc(int32_t id)
{
	pthread_mutex_lock(&procs_mu);
	for (struct proc_entry *e = procs; e; e = e->next)
		if (e->id == id)
			return e;
	return NULL;
}

static void not_found(struct call *c, int32_t id)
{
	struct strbuf m = STRBUF_INIT;

	strbuf_addf(&m, "process %d not found", (int)id);
	call_fail(c, GRPC_NOT_FOUND, m.buf);
	strbuf_release(&m);
}

/* the empty answer of the by-id methods */
static void reply_empty(struct call *c)
{
	static const char empty[5];

	strbuf_add(&c->reply, empty, sizeof(empty));
}

static void do_write_stdin(struct call *c)
{
	Process__V1__WriteStdinRequest *req;
	struct proc_entry *e;
	const uint8_t *data;
	size_t len;

	if (unframe_message(c, &data, &len) < 0)
		return;
	req = process__v1__write_stdin_request__unpack(NULL, len, data);
	if (!req) {
		call_fail(c, GRPC_INVALID_ARGUMENT,
			  "cannot decode WriteStdinRequest");
		return;
	}
	e = find_proc(req->process_id);
	if (!e) {
		not_found(c, req->process_id);
	} else if (req->payload_case ==
		   PROCESS__V1__WRITE_STDIN_REQUEST__PAYLOAD_EOF) {
		e->eof = 1;
		wake(e->wake[1]);
		reply_empty(c);
	} else {
		int fd = exec_stdin_fd(e->proc);
		size_t off = 0;

		while (fd >= 0 && off < req->input.len) {
			ssize_t n = write(fd, req->input.data + off,
					  req->input.len - off);
			struct pollfd pfd = { fd, POLLOUT, 0 };

			if (n > 0)
				off += n;
			else if (n < 0 && errno == EAGAIN)
				poll(&pfd, 1, 1000);
			else
				break;
		}
		if (off < req->input.len)
			call_fail(c, GRPC_FAILED_PRECONDITION,
				  "process has no stdin");
		else
			reply_empty(c);
	}
	pthread_mutex_unlock(&procs_mu);
	process__v1__write_stdin_request__free_unpacked(req, NULL);
}

static void do_send_signal(struct call *c)
{
	Process__V1__SendSignalRequest *req;
	struct proc_entry *e;
	const uint8_t *data;
	size_t len;
	int sig;

	if (unframe_message(c, &data, &len) < 0)
		return;
	req = process__v1__send_signal_request__unpack(NULL, len, data);
	if (!req) {
		call_fail(c, GRPC_INVALID_ARGUMENT,
			  "cannot decode SendSignalRequest");
		return;
	}
	sig = req->signal;
	e = find_proc(req->process_id);
	if (!e)
		not_found(c, req->process_id);
	else if (sig != SIGINT && sig != SIGKILL && sig != SIGTERM)
		call_fail(c, GRPC_INVALID_ARGUMENT,
			  "unsupported or unspecified signal");
	else if (kill(-e->id, sig) < 0)
		call_fail(c, GRPC_INTERNAL, strerror(errno));
	else
		reply_empty(c);
	pthread_mutex_unlock(&procs_mu);
	process__v1__send_signal_request__free_unpacked(req, NULL);
}

static void do_resize(struct call *c)
{
	Process__V1__ResizeTTYRequest *req;
	struct proc_entry *e;
	const uint8_t *data;
	size_t len;

	if (unframe_message(c, &data, &len) < 0)
		return;
	req = process__v1__resize_ttyrequest__unpack(NULL, len, data);
	if (!req) {
		call_fail(c, GRPC_INVALID_ARGUMENT,
			  "cannot decode ResizeTTYRequest");
		return;
	}
	e = find_proc(req->process_id);
	if (!e)
		not_found(c, req->process_id);
	else if (!e->tty || exec_resize(e->proc, req->cols, req->rows) < 0)
		call_fail(c, GRPC_FAILED_PRECONDITION, "failed to resize TTY");
	else
		reply_empty(c);
	pthread_mutex_unlock(&procs_mu);
	process__v1__resize_ttyrequest__free_unpacked(req, NULL);
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
	pthread_mutex_lock(&c->conn->mu);
	frame_message(&c->reply, &resp.base);
	pthread_mutex_unlock(&c->conn->mu);
	exec_result_release(&res);
}

/*
 * Execute in a thread of its own, so that the connection's other calls
 * (a client multiplexes them all on one) go on while it runs; its
 * answer, or its error status in the trailers, follows once it is done
 */
static void *execute_runner(void *arg)
{
	struct call *c = arg;

	do_execute(c);
	pthread_mutex_lock(&c->conn->mu);
	c->done = 1;
	c->resume = 1;
	pthread_mutex_unlock(&c->conn->mu);
	wake(c->conn->wake[1]);
	return NULL;
}

static void start_execute(struct call *c)
{
	c->streaming = 1;
	c->next = c->conn->started;
	c->conn->started = c;
	if (pthread_create(&c->runner, NULL, execute_runner, c))
		die("cannot start a thread");
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
		start_execute(c);
	else if (!strcmp(method, "Start"))
		do_start(c);
	else if (!strcmp(method, "WriteStdin"))
		do_write_stdin(c);
	else if (!strcmp(method, "SendSignal"))
		do_send_signal(c);
	else if (!strcmp(method, "ResizeTTY"))
		do_resize(c);
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
	size_t n;
	int last;

	pthread_mutex_lock(&c->conn->mu);
	n = c->reply.len - c->sent;
	if (n > length)
		n = length;
	memcpy(buf, c->reply.buf + c->sent, n);
	c->sent += n;
	last = c->sent == c->reply.len && (!c->streaming || c->done);
	if (c->sent == c->reply.len) {
		c->sent = 0;
		strbuf_reset(&c->reply);
	}
	pthread_mutex_unlock(&c->conn->mu);
	if (!n && !last)
		return NGHTTP2_ERR_DEFERRED;
	if (last) {
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
	c->conn = user_data;
	c->fd = c->conn->fd;
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
	int fd = ((struct conn *)user_data)->fd;
	ssize_t n;

	do
		n = send(fd, data, length, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return n;
}

/* resume the Start streams that have output queued */
static void resume_streams(nghttp2_session *s, struct conn *cn)
{
	char b[256];

	while (read(cn->wake[0], b, sizeof(b)) > 0)
		;
	pthread_mutex_lock(&cn->mu);
	for (struct call *c = cn->started; c; c = c->next)
		if (c->resume && !c->closed) {
			c->resume = 0;
			nghttp2_session_resume_data(s, c->stream_id);
		}
	pthread_mutex_unlock(&cn->mu);
}

static void *serve_connection(void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct conn cn = { fd, { -1, -1 }, PTHREAD_MUTEX_INITIALIZER, NULL };
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
	if (pipe2(cn.wake, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    nghttp2_session_server_new(&s, cb, &cn)) {
		nghttp2_session_callbacks_del(cb);
		close(fd);
		return NULL;
	}
	nghttp2_session_callbacks_del(cb);
	nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, iv, 1);
	while (nghttp2_session_want_read(s) || nghttp2_session_want_write(s)) {
		ssize_t n;

		struct pollfd pfd[2] = { { fd, POLLIN, 0 },
					 { cn.wake[0], POLLIN, 0 } };

		if (nghttp2_session_send(s))
			break;
		if (!nghttp2_session_want_read(s) &&
		    !nghttp2_session_want_write(s))
			break;
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents) {
			resume_streams(s, &cn);
			continue;
		}
		if (!pfd[0].revents)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (nghttp2_session_mem_recv(s, buf, n) < 0)
			break;
	}
	for (struct call *c = cn.started; c; c = c->next)
		cancel_call(c);
	while (cn.started) {
		struct call *c = cn.started;

		pthread_join(c->runner, NULL);
		cn.started = c->next;
		nghttp2_session_set_stream_user_data(s, c->stream_id, NULL);
		call_free_now(c);
	}
	nghttp2_session_del(s);
	close(cn.wake[0]);
	close(cn.wake[1]);
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
