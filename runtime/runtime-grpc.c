/*
 * The sandboxd gRPC ProcessService (KEP-539.2) of agent-sandbox v1.0.3,
 * by its contract packages/sandboxd/spec/process/v1/process.proto, on
 * the listener of --sandboxd-grpc (Documentation/gosbx-runtime.txt
 * "SANDBOXD").
 *
 * HTTP/2 is nghttp2's, the messages protobuf-c's (lib/proto/pb/, checked
 * in); what is ours is gRPC's thin layer between them (gRPC's
 * PROTOCOL-HTTP2.md): a message is a compressed flag byte (0: we
 * accept no compression, as a grpc-go server without decompressors)
 * and a 4-byte big-endian length, the answer ends with the trailers
 * grpc-status and grpc-message (percent-encoded). A call's
 * grpc-timeout is its command's timeout: past it the command is
 * killed and the call ends DEADLINE_EXCEEDED.
 *
 * One thread a connection, as libmicrohttpd's, reading and writing its
 * socket through one nghttp2 session; a call is answered when its
 * request stream ends. At most GRPC_MAX_CONNS connections are served
 * at once: the accept loop takes no more until one ends, so the next
 * ones wait in the listen backlog (a gRPC client sees a connection
 * that is slow to start and goes on once it is taken; one closed at
 * once would fail its calls UNAVAILABLE). So that connections that do
 * nothing cannot keep the slots, one that has not completed the HTTP/2
 * handshake after GRPC_HANDSHAKE_MS is closed, and one without a
 * stream for GRPC_IDLE_MS is sent GOAWAY and closed (the connection's
 * thread polls with that timeout). Out of descriptors
 * (EMFILE, ENFILE) the loop waits until a connection ends, at most
 * ACCEPT_BACKOFF_MS, instead of trying again at once. The same checks
 * as the runtime's own listeners: the Host (:authority) on TCP and the
 * bearer token (lib/http-checks.h).
 *
 * Execute runs its argv (exec_request.argv: no shell, as upstream's
 * exec.Command; quoted into "exec ..." only for the logs) through the
 * runtime's command module (runtime-command.c: env merged with ours, cwd under
 * the workdir, the 8 MiB cap of each stream). Execute and Start each run
 * in a runner thread of their own (Start: exec_step() with a kick pipe
 * for WriteStdin's EOF and for the queue below), which queues the
 * framed answer or events on the call and wakes the connection's
 * thread; that one resumes the deferred stream (nghttp2 is used from
 * that thread only). A Start's queue is bounded: once
 * START_QUEUE_LIMIT bytes wait in it (the client does not read, so
 * HTTP/2 flow control holds them), its runner stops reading the
 * command's output (exec_pause_output()) and the command blocks on its
 * own pipe; the connection's thread kicks the runner once the queue
 * is below half the limit. Each call has a cancel pipe that its
 * command watches (cancel_fd): the call's stream closing (the client
 * cancels, RST_STREAM) or the connection ending closes its write end,
 * which kills that command's processes and no other's. A call is
 * freed, its runner joined, by the connection's thread once its
 * stream is closed and its runner done. The running Start processes
 * are in a table by id (the shell's pid) for WriteStdin, SendSignal and
 * ResizeTTY; a process leaves it before exec_finish(), under
 * procs_mu, so a call holding procs_mu may use its exec_proc.
 */
#include "compat.h"
#include "http-checks.h"
#include "json.h"
#include "listen.h"
#include "log.h"
#include "parse-options.h"
#include "quote.h"
#include "runtime.h"
#include "strbuf.h"
#include "usage.h"

#include <nghttp2/nghttp2.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <time.h>

#include "process/v1/process.pb-c.h"

#define GRPC_PATH_PREFIX "/process.v1.ProcessService/"
/* the largest request message taken (as POST /execute's JSON body) */
#define GRPC_MESSAGE_LIMIT UPSTREAM_JSON_LIMIT
/* connections served at once; more wait in the listen backlog */
#define GRPC_MAX_CONNS 64
/*
 * bytes of a Start's answer queued before its runner stops reading the
 * command's output (a read may pass it by two chunks of exec.c's)
 */
#define START_QUEUE_LIMIT (1 << 20)
/* the accept loop's longest wait when out of descriptors (ms) */
#define ACCEPT_BACKOFF_MS 100
/*
 * A connection's time to complete the HTTP/2 handshake (the client's
 * preface and first SETTINGS; ms): gRPC's connection-backoff.md gives
 * a client MIN_CONNECT_TIMEOUT, 20 s, to connect; grpc-go's server
 * gives the same step its ConnectionTimeout (120 s), which without a
 * cap on connections costs it less than one of our 64 slots.
 * SANDBOX_GRPC_HANDSHAKE_TIMEOUT overrides it.
 */
#define GRPC_HANDSHAKE_MS 20000
/*
 * How long a connection may stay without a stream before it is ended
 * (GOAWAY NO_ERROR, then closed; ms): grpc-go's keepalive
 * MaxConnectionIdle, which has no default there; ours is bounded so
 * that idle connections cannot keep the 64 slots. A gRPC client opens
 * a new connection for its next call. SANDBOX_GRPC_IDLE_TIMEOUT
 * overrides it.
 */
#define GRPC_IDLE_MS 300000

/* gRPC status codes (grpc/status.h) */
enum grpc_code {
	GRPC_OK = 0,
	GRPC_INVALID_ARGUMENT = 3,
	GRPC_DEADLINE_EXCEEDED = 4,
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
	int64_t handshake_ms, idle_ms;	  /* GRPC_HANDSHAKE_MS, GRPC_IDLE_MS */
} srv = { -1, 0, NULL, NULL, GRPC_HANDSHAKE_MS, GRPC_IDLE_MS };

struct call;

/* One connection, served by one thread */
struct conn {
	int fd;
	int wake[2];	    /* a runner writes a byte: answer queued, done */
	pthread_mutex_t mu; /* the calls' reply queues and flags */
	/* the calls with a runner, joined and freed by the connection */
	struct call *started;
	/* the connection's thread's own: */
	int handshaken;	   /* the client's preface and SETTINGS came */
	int streams;	   /* its open streams (with a struct call) */
	uint64_t since_ms; /* accepted, or its last stream closed */
};

/* A process of Start, findable by its id (the shell's pid) */
struct proc_entry {
	int32_t id;
	struct exec_proc *proc;
	int tty;
	int eof;  /* WriteStdin asked for EOF: the runner closes stdin */
	int kick; /* its call's kick[1]: wakes the runner */
	struct proc_entry *next;
};
static pthread_mutex_t procs_mu = PTHREAD_MUTEX_INITIALIZER;
static struct proc_entry *procs;

/*
 * One call: a request stream of a connection. Execute and Start have a
 * runner thread (streaming) that feeds reply; reply, sent, done,
 * finished, closed, resume and want_kick are under conn->mu.
 */
struct call {
	int32_t stream_id;
	struct conn *conn;
	int streaming; /* it has a runner, in conn->started */
	int done;      /* the answer is all in reply */
	int finished;  /* the runner is past its last use of the call */
	int closed;    /* the stream is closed: nobody reads reply */
	int resume;    /* reply has bytes for a deferred stream */
	int want_kick; /* the runner paused: kick it below the limit */
	int cancel[2]; /* closing [1] cancels the command ([0] cancel_fd) */
	int kick[2];   /* Start: polled by the runner beside the command */
	pthread_t runner;
	struct call *next;
	struct strbuf path, authority, auth, content_type;
	struct strbuf encoding; /* grpc-encoding */
	/*
	 * grpc-timeout: the deadline on monotonic_us()'s clock, 0: none;
	 * a malformed one fails the call (bad_timeout, the reason in
	 * message)
	 */
	uint64_t deadline_us;
	int bad_timeout;
	const char *http_status; /* of an error answer: "200" or "400" */
	int accept_encoding;	 /* the answer says grpc-accept-encoding */
	struct strbuf body;	 /* the request's DATA */
	int too_large;
	struct strbuf reply; /* the framed answer message(s) */
	size_t sent;
	enum grpc_code code;
	struct strbuf message; /* grpc-message, raw */
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * The stream of c is closed (the client cancelled it, or the
 * connection ends): nobody takes its answer any more, and its command,
 * if it runs, is killed (its cancel_fd hangs up). Connection's thread.
 */
static void cancel_call(struct call *c)
{
	pthread_mutex_lock(&c->conn->mu);
	c->closed = 1;
	pthread_mutex_unlock(&c->conn->mu);
	close_fd(&c->cancel[1]);
}

static void call_free_now(struct call *c)
{
	close_fd(&c->cancel[0]);
	close_fd(&c->cancel[1]);
	close_fd(&c->kick[0]);
	close_fd(&c->kick[1]);
	strbuf_release(&c->path);
	strbuf_release(&c->authority);
	strbuf_release(&c->auth);
	strbuf_release(&c->content_type);
	strbuf_release(&c->encoding);
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

/*
 * The pipes of a call with a runner: cancel, and kick for Start; 0, or
 * -1 after call_fail() (out of descriptors: the call fails, the
 * connection goes on)
 */
static int call_pipes(struct call *c, int kick)
{
	if (pipe2(c->cancel, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    (kick && pipe2(c->kick, O_CLOEXEC | O_NONBLOCK) < 0)) {
		struct strbuf m = STRBUF_INIT;

		strbuf_addf(&m, "cannot start the call: %s", strerror(errno));
		call_fail(c, GRPC_RESOURCE_EXHAUSTED, m.buf);
		strbuf_release(&m);
		return -1;
	}
	return 0;
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
	/* grpc-go's checkRecvPayload(): another grpc-encoding than
	 * identity was refused by dispatch() */
	if (b[0] == 1) {
		call_fail(c, GRPC_INTERNAL,
			  "grpc: compressed flag set with identity or empty "
			  "encoding");
		return -1;
	}
	if (b[0]) {
		struct strbuf m = STRBUF_INIT;

		strbuf_addf(&m, "grpc: received unexpected payload format %d",
			    b[0]);
		call_fail(c, GRPC_INTERNAL, m.buf);
		strbuf_release(&m);
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
 * Whether argv0 names an executable file, as Go's os/exec finds it
 * (exec.LookPath in the PATH of p's environment, else ours, for a bare
 * name, skipping directories that are not absolute as Go's ErrDot
 * refuses them; a name with a '/' from p's cwd): 0 with the file's
 * path in path, or the errno upstream's exec would fail with (ENOENT,
 * EACCES), the text of Go's error in why. Upstream answers a command
 * that does not start with an error status, where "exec <argv0>"
 * would exit 126 or 127.
 */
static int command_found(const char *argv0, const struct exec_params *p,
			 struct strbuf *path_out, struct strbuf *why)
{
	const char *path = NULL, *s;
	struct strbuf f = STRBUF_INIT;
	struct stat st;
	int err = ENOENT;

	if (strchr(argv0, '/')) {
		if (*argv0 != '/')
			strbuf_addf(&f, "%s/", p->req.cwd);
		strbuf_addstr(&f, argv0);
		if (stat(f.buf, &st) < 0)
			err = errno == ENOTDIR ? ENOENT : errno;
		else if (S_ISDIR(st.st_mode) || access(f.buf, X_OK) < 0)
			err = EACCES;
		else
			err = 0;
		if (!err)
			strbuf_addbuf(path_out, &f);
		strbuf_release(&f);
		if (err)
			strbuf_addf(why, "fork/exec %s: %s", argv0,
				    strerror(err));
		return err;
	}
	for (const char *const *e = p->req.env; e && *e; e++)
		if (starts_with(*e, "PATH="))
			path = *e + 5;
	if (!p->req.env)
		path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (s = path; err; s++) {
		const char *end = strchrnul(s, ':');

		strbuf_reset(&f);
		strbuf_add(&f, s, end - s);
		strbuf_addf(&f, "/%s", argv0);
		if (*s == '/' && !access(f.buf, X_OK) && !stat(f.buf, &st) &&
		    S_ISREG(st.st_mode))
			err = 0;
		if (!*end)
			break;
		s = end;
	}
	if (!err)
		strbuf_addbuf(path_out, &f);
	strbuf_release(&f);
	if (err)
		strbuf_addf(why,
			    "exec: \"%s\": executable file not found in "
			    "$PATH",
			    argv0);
	return err;
}

/*
 * A command that did not start, as upstream's mapCommandError(): err
 * ENOENT (or ENOTDIR) is NOT_FOUND, EACCES or EPERM PERMISSION_DENIED,
 * anything else INTERNAL; the message "<what>: command or path not
 * found: <why>" and so on. what: "failed to execute command" (Execute)
 * or "failed to start command" (Start).
 */
static void fail_start(struct call *c, const char *what, int err,
		       const char *why)
{
	struct strbuf m = STRBUF_INIT;
	enum grpc_code code = GRPC_INTERNAL;

	if (err == ENOENT || err == ENOTDIR) {
		code = GRPC_NOT_FOUND;
		strbuf_addf(&m, "%s: command or path not found: %s", what, why);
	} else if (err == EACCES || err == EPERM) {
		code = GRPC_PERMISSION_DENIED;
		strbuf_addf(&m, "%s: permission denied: %s", what, why);
	} else {
		strbuf_addf(&m, "%s: %s", what, why);
	}
	call_fail(c, code, m.buf);
	strbuf_release(&m);
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
 * on failure); what names the call in the message of a command that
 * cannot start (fail_start()). 0, or -1 after call_fail().
 */
static int prepare(struct call *c, const Process__V1__ProcessConfig *pc,
		   struct exec_params *p, const char *what)
{
	struct request r = { 0 };
	struct strbuf err = STRBUF_INIT;
	unsigned status;
	int ret = -1;

	strbuf_init(&r.body, 0);
	if (config_to_json(c, pc, &r.body) < 0) {
		strbuf_release(&r.body);
		memset(p, 0, sizeof(*p));
		strvec_init(&p->env);
		strvec_init(&p->argv);
		strbuf_init(&p->cwd, 0);
		strbuf_init(&p->held, 0);
		strbuf_init(&p->exec_path, 0);
		return -1;
	}
	status = parse_exec_body(&r, p, &err);
	strbuf_release(&r.body);
	if (!status) {
		int e;

		strbuf_reset(&err);
		e = command_found(pc->command[0], p, &p->exec_path, &err);
		if (e) {
			fail_start(c, what, e, err.buf);
		} else {
			/* argv itself, no shell: as upstream's exec.Command */
			for (size_t i = 0; i < pc->n_command; i++)
				strvec_push(&p->argv, pc->command[i]);
			p->req.argv = (const char *const *)p->argv.v;
			p->req.exec_path = p->exec_path.buf;
			ret = 0;
		}
	} else if (status == 400 && starts_with(err.buf, "cwd not found")) {
		/* upstream: os.StartProcess's "chdir <dir>: ..." */
		strbuf_reset(&err);
		strbuf_addf(&err, "chdir %s: %s", p->cwd.buf, strerror(ENOENT));
		fail_start(c, what, ENOENT, err.buf);
	} else {
		/* upstream: an escaping cwd is PERMISSION_DENIED */
		if (status == 400 && starts_with(err.buf, "cwd must be within"))
			status = 403;
		call_fail(c, code_of_status(status), err.buf);
	}
	strbuf_release(&err);
	return ret;
}

/* the status of a call past its deadline, as grpc-go's (a context's) */
static void fail_deadline(struct call *c)
{
	call_fail(c, GRPC_DEADLINE_EXCEEDED, "context deadline exceeded");
}

/*
 * The time left to c by its grpc-timeout, as exec's timeout_ms (0: it
 * has none), rounded up; -1 after fail_deadline() once it has passed,
 * as upstream's Execute and Start check ctx.Err() before they start
 */
static int64_t time_left_ms(struct call *c)
{
	uint64_t now = monotonic_us();

	if (!c->deadline_us)
		return 0;
	if (now >= c->deadline_us) {
		fail_deadline(c);
		return -1;
	}
	return (int64_t)((c->deadline_us - now + 999) / 1000);
}

static void wake(int fd)
{
	char b = 1;

	if (write(fd, &b, 1) < 0 && errno != EAGAIN)
		return;
}

/*
 * Queue one StartResponse on c and wake the connection; -1 (nothing
 * queued) once the stream is closed
 */
static int start_push(struct call *c, Process__V1__StartResponse *ev)
{
	int closed;

	pthread_mutex_lock(&c->conn->mu);
	closed = c->closed;
	if (!closed) {
		frame_message(&c->reply, &ev->base);
		c->resume = 1;
	}
	pthread_mutex_unlock(&c->conn->mu);
	if (closed)
		return -1;
	wake(c->conn->wake[1]);
	return 0;
}

static int start_output(enum exec_stream stream, const char *buf, size_t len,
			void *data)
{
	struct call *c = data;
	Process__V1__StartResponse ev;

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
	return start_push(c, &ev); /* -1: the client went away, cancel */
}

/*
 * Whether the runner of c must stop reading its command's output: at
 * least START_QUEUE_LIMIT bytes of the answer wait to be sent. If so,
 * the connection's thread kicks it once they are below half of that
 * (read_reply()); a closed call is never full (its output is dropped).
 */
static int start_queue_full(struct call *c)
{
	int full;

	pthread_mutex_lock(&c->conn->mu);
	full = !c->closed && c->reply.len - c->sent >= START_QUEUE_LIMIT;
	c->want_kick = full;
	pthread_mutex_unlock(&c->conn->mu);
	return full;
}

/* the runner's call has done with it: answer complete, runner ending */
static void call_finished(struct call *c)
{
	pthread_mutex_lock(&c->conn->mu);
	c->done = 1;
	c->finished = 1;
	c->resume = 1;
	pthread_mutex_unlock(&c->conn->mu);
	wake(c->conn->wake[1]);
}

struct start_job {
	struct call *c;
	struct exec_params p;
	struct exec_proc *proc;
	struct proc_entry *e;
	struct pollfd pfd;
};

static void procs_remove(struct proc_entry *e)
{
	pthread_mutex_lock(&procs_mu);
	for (struct proc_entry **pp = &procs; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	pthread_mutex_unlock(&procs_mu);
}

static void *start_runner(void *arg)
{
	struct start_job *j = arg;
	struct call *c = j->c;
	struct exec_result res;
	Process__V1__StartResponse ev;
	Process__V1__ExitEvent ex;
	int paused = 0;

	while (exec_step(j->proc, -1) > 0) {
		char b[64];
		int full;

		if (j->pfd.revents) {
			while (read(c->kick[0], b, sizeof(b)) > 0)
				;
			pthread_mutex_lock(&procs_mu);
			if (j->e->eof && exec_stdin_fd(j->proc) >= 0)
				exec_stdin_close(j->proc);
			pthread_mutex_unlock(&procs_mu);
		}
		full = start_queue_full(c);
		if (full != paused) {
			paused = full;
			exec_pause_output(j->proc, paused);
		}
	}
	procs_remove(j->e);
	exec_result_init(&res);
	command_finish(&j->p, j->proc, &res);
	process__v1__start_response__init(&ev);
	process__v1__exit_event__init(&ex);
	ex.exit_code = res.exit_code;
	ev.event_case = PROCESS__V1__START_RESPONSE__EVENT_EXIT;
	ev.exit = &ex;
	/* past its grpc-timeout (killed): the stream ends with the
	 * status, no exit event (read by the connection's thread once
	 * call_finished() says done) */
	if (!strcmp(res.reason, "timeout"))
		fail_deadline(c);
	else
		start_push(c, &ev);
	exec_result_release(&res);
	free(j->e);
	exec_params_release(&j->p);
	free(j);
	call_finished(c);
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
	if (prepare(c, req->config, &j->p, "failed to start command") < 0 ||
	    (j->p.req.timeout_ms = time_left_ms(c)) < 0 ||
	    call_pipes(c, 1) < 0) {
		process__v1__start_request__free_unpacked(req, NULL);
		exec_params_release(&j->p);
		free(j);
		return;
	}
	j->c = c;
	j->e = xcalloc(1, sizeof(*j->e));
	j->e->kick = c->kick[1];
	j->p.req.stdin_stream = 1;
	j->p.req.on_output = start_output;
	j->p.req.data = c;
	j->p.req.stream_cap = 1; /* all goes out through start_output */
	j->p.req.cancel_fd = c->cancel[0];
	if (req->pty) {
		j->p.req.tty = 1;
		j->p.req.cols = req->pty->cols;
		j->p.req.rows = req->pty->rows;
		j->e->tty = 1;
	}
	process__v1__start_request__free_unpacked(req, NULL);
	j->pfd.fd = c->kick[0];
	j->pfd.events = POLLIN;
	j->p.req.poll_extra = &j->pfd;
	j->p.req.nr_poll_extra = 1;
	command_start(&j->p, &j->proc);
	if (exec_pgid(j->proc) < 0) {
		/* it did not start: an error status, no init (upstream) */
		struct exec_result res;

		exec_result_init(&res);
		command_finish(&j->p, j->proc, &res);
		fail_start(c, "failed to start command", res.start_errno,
			   res.err.buf);
		exec_result_release(&res);
		free(j->e);
		exec_params_release(&j->p);
		free(j);
		return;
	}
	j->e->proc = j->proc;
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
	if (pthread_create(&c->runner, NULL, start_runner, j)) {
		struct exec_result res;

		procs_remove(j->e);
		exec_result_init(&res);
		command_finish(&j->p, j->proc, &res);
		exec_result_release(&res);
		free(j->e);
		exec_params_release(&j->p);
		free(j);
		strbuf_reset(&c->reply);
		call_fail(c, GRPC_RESOURCE_EXHAUSTED,
			  "cannot start the call: no thread");
		return;
	}
	c->streaming = 1;
	c->next = c->conn->started;
	c->conn->started = c;
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
		wake(e->kick);
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
	struct exec_params p;
	struct exec_result res;
	const uint8_t *data;
	size_t len;
	int rc;

	if (unframe_message(c, &data, &len) < 0)
		return;
	req = process__v1__execute_request__unpack(NULL, len, data);
	if (!req) {
		call_fail(c, GRPC_INVALID_ARGUMENT,
			  "cannot decode ExecuteRequest");
		return;
	}
	rc = prepare(c, req->config, &p, "failed to execute command");
	process__v1__execute_request__free_unpacked(req, NULL);
	if (rc >= 0)
		p.req.timeout_ms = time_left_ms(c);
	if (rc < 0 || p.req.timeout_ms < 0) {
		exec_params_release(&p);
		return;
	}
	/* the call's stream closing, or the connection's end, cancels it */
	p.req.cancel_fd = c->cancel[0];
	exec_result_init(&res);
	command_run(&p, &res);
	exec_params_release(&p);
	if (!strcmp(res.reason, "start_failed")) {
		fail_start(c, "failed to execute command", res.start_errno,
			   res.err.buf);
		exec_result_release(&res);
		return;
	}
	if (!strcmp(res.reason, "timeout")) {
		/* its grpc-timeout passed: the command was killed */
		fail_deadline(c);
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
	call_finished(c);
	return NULL;
}

static void start_execute(struct call *c)
{
	if (call_pipes(c, 0) < 0)
		return;
	if (pthread_create(&c->runner, NULL, execute_runner, c)) {
		call_fail(c, GRPC_RESOURCE_EXHAUSTED,
			  "cannot start the call: no thread");
		return;
	}
	c->streaming = 1;
	c->next = c->conn->started;
	c->conn->started = c;
}

/* the call's checks (as check_web()), then its method */
static void dispatch(struct call *c)
{
	const char *method;
	void (*fn)(struct call *) = NULL;

	if (c->bad_timeout) {
		c->http_status = "400"; /* message: take_timeout() */
		return;
	}
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
		fn = start_execute;
	else if (!strcmp(method, "Start"))
		fn = do_start;
	else if (!strcmp(method, "WriteStdin"))
		fn = do_write_stdin;
	else if (!strcmp(method, "SendSignal"))
		fn = do_send_signal;
	else if (!strcmp(method, "ResizeTTY"))
		fn = do_resize;
	if (!fn) {
		call_fail(c, GRPC_UNIMPLEMENTED, "unknown method");
		return;
	}
	/*
	 * We decompress nothing: as grpc-go's server without a
	 * Decompressor for the encoding (processUnaryRPC(), upstream
	 * registers none), and with the grpc-accept-encoding that
	 * PROTOCOL-HTTP2.md asks of it ("Compression")
	 */
	if (c->encoding.len && strcmp(c->encoding.buf, "identity")) {
		struct strbuf m = STRBUF_INIT;

		strbuf_addf(&m,
			    "grpc: Decompressor is not installed for "
			    "grpc-encoding \"%s\"",
			    c->encoding.buf);
		call_fail(c, GRPC_UNIMPLEMENTED, m.buf);
		strbuf_release(&m);
		c->accept_encoding = 1;
		return;
	}
	fn(c);
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
	int last, kick = 0;

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
	} else if (c->sent >= c->reply.len - c->sent) {
		/* the runner may keep it from ever being empty */
		strbuf_remove(&c->reply, 0, c->sent);
		c->sent = 0;
	}
	if (c->want_kick && c->reply.len - c->sent < START_QUEUE_LIMIT / 2) {
		c->want_kick = 0;
		kick = 1;
	}
	pthread_mutex_unlock(&c->conn->mu);
	if (kick)
		wake(c->kick[1]);
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
		nghttp2_nv h[] = { NV(":status", c->http_status),
				   NV("content-type", "application/grpc"),
				   NV("grpc-status", code),
				   NV("grpc-message", msg.buf),
				   NV("grpc-accept-encoding", "identity") };
		rc = nghttp2_submit_response(s, c->stream_id, h,
					     c->accept_encoding ? 5 : 4, NULL);
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
	c->conn->streams++;
	c->cancel[0] = c->cancel[1] = c->kick[0] = c->kick[1] = -1;
	strbuf_init(&c->path, 0);
	strbuf_init(&c->authority, 0);
	strbuf_init(&c->auth, 0);
	strbuf_init(&c->content_type, 0);
	strbuf_init(&c->encoding, 0);
	c->http_status = "200";
	strbuf_init(&c->body, 0);
	strbuf_init(&c->reply, 0);
	strbuf_init(&c->message, 0);
	nghttp2_session_set_stream_user_data(s, c->stream_id, c);
	return 0;
}

/*
 * grpc-timeout (PROTOCOL-HTTP2.md: TimeoutValue, at most 8 digits, and
 * TimeoutUnit: H, M, S, m, u, n), as grpc-go's decodeTimeout(): the
 * deadline runs from the request's headers. A malformed value fails
 * the call INTERNAL with HTTP status 400 (grpc-go's writeEarlyAbort()),
 * its message grpc-go's.
 */
static void take_timeout(struct call *c, const char *v, size_t len)
{
	static const struct {
		char unit;
		uint64_t us;
	} units[] = { { 'H', 3600000000ull }, { 'M', 60000000ull },
		      { 'S', 1000000ull },    { 'm', 1000ull },
		      { 'u', 1ull },	      { 'n', 0 } };
	struct strbuf m = STRBUF_INIT;
	uint64_t n = 0, us;
	size_t i, u;

	strbuf_addstr(&m, "malformed grpc-timeout: ");
	if (len < 2 || len > 9) {
		strbuf_addf(&m, "transport: timeout string is too %s: \"%.*s\"",
			    len < 2 ? "short" : "long", (int)len, v);
		goto bad;
	}
	for (u = 0; u < ARRAY_SIZE(units) && units[u].unit != v[len - 1]; u++)
		;
	if (u == ARRAY_SIZE(units)) {
		strbuf_addf(&m,
			    "transport: timeout unit is not recognized: "
			    "\"%.*s\"",
			    (int)len, v);
		goto bad;
	}
	for (i = 0; i < len - 1; i++) {
		if (v[i] < '0' || v[i] > '9') {
			strbuf_addf(&m,
				    "strconv.ParseUint: parsing \"%.*s\": "
				    "invalid syntax",
				    (int)len - 1, v);
			goto bad;
		}
		n = n * 10 + (v[i] - '0');
	}
	/* nanoseconds: rounded up to a microsecond */
	us = units[u].us ? n * units[u].us : (n + 999) / 1000;
	c->deadline_us = monotonic_us() + us;
	c->bad_timeout = 0;
	strbuf_release(&m);
	return;
bad:
	c->bad_timeout = 1;
	call_fail(c, GRPC_INTERNAL, m.buf);
	strbuf_release(&m);
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
	else if (namelen == 13 && !memcmp(name, "grpc-encoding", 13))
		to = &c->encoding;
	else if (namelen == 12 && !memcmp(name, "grpc-timeout", 12))
		take_timeout(c, (const char *)value, valuelen);
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

	if (frame->hd.type == NGHTTP2_SETTINGS)
		((struct conn *)user_data)->handshaken = 1;
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
		struct conn *cn = user_data;

		if (!--cn->streams)
			cn->since_ms = monotonic_ms();
		nghttp2_session_set_stream_user_data(s, stream_id, NULL);
		if (c->streaming)
			cancel_call(c); /* freed by reap_calls() */
		else
			call_free_now(c);
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

/* resume the streams that have answer queued */
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

/*
 * Join and free the calls whose stream is closed and whose runner is
 * done, so that a long connection holds only its live calls (and
 * their threads' stacks); all of them (after cancel_call()) when the
 * connection ends.
 */
static void reap_calls(struct conn *cn, int all)
{
	struct call **pp = &cn->started;

	while (*pp) {
		struct call *c = *pp;
		int gone;

		pthread_mutex_lock(&cn->mu);
		gone = all || (c->closed && c->finished);
		pthread_mutex_unlock(&cn->mu);
		if (!gone) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		pthread_join(c->runner, NULL);
		call_free_now(c);
	}
}

/*
 * The poll timeout (ms, -1: none) of connection cn by its deadlines:
 * the handshake's, then that of being without a stream. 0 when one
 * has passed: *handshake says which.
 */
static int conn_timeout(struct conn *cn, int *handshake)
{
	int64_t limit, left;

	*handshake = !cn->handshaken;
	if (*handshake)
		limit = srv.handshake_ms;
	else if (!cn->streams)
		limit = srv.idle_ms;
	else
		return -1;
	left = (int64_t)(cn->since_ms + limit) - (int64_t)monotonic_ms();
	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

/*
 * The connection's deadline passed: one that never completed its
 * handshake is closed (as grpc-go's), an idle one is told GOAWAY
 * NO_ERROR first, so that its client knows to reconnect. Logged.
 */
static void conn_expire(nghttp2_session *s, int handshake)
{
	log_msg(LOG_INFO,
		handshake ? "sandboxd grpc handshake timeout"
			  : "sandboxd grpc idle connection closed",
		NULL, NULL);
	if (!handshake)
		nghttp2_session_terminate_session(s, NGHTTP2_NO_ERROR);
}

/* the HTTP/2 session of connection cn until it ends */
static void serve_session(nghttp2_session *s, struct conn *cn)
{
	uint8_t buf[16384];

	while (nghttp2_session_want_read(s) || nghttp2_session_want_write(s)) {
		ssize_t n;
		int timeout, handshake, ready;

		struct pollfd pfd[2] = { { cn->fd, POLLIN, 0 },
					 { cn->wake[0], POLLIN, 0 } };

		if (nghttp2_session_send(s))
			break;
		reap_calls(cn, 0);
		if (!nghttp2_session_want_read(s) &&
		    !nghttp2_session_want_write(s))
			break;
		timeout = conn_timeout(cn, &handshake);
		ready = timeout ? poll(pfd, 2, timeout) : 0;
		if (ready < 0 && errno != EINTR)
			break;
		if (!ready) {
			conn_expire(s, handshake);
			if (handshake)
				break;
			continue;
		}
		if (pfd[1].revents) {
			resume_streams(s, cn);
			continue;
		}
		if (!pfd[0].revents)
			continue;
		n = recv(cn->fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (nghttp2_session_mem_recv(s, buf, n) < 0)
			break;
	}
}

/*
 * The connections being served, at most GRPC_MAX_CONNS; ended is
 * initialised by grpc_start() (on the monotonic clock)
 */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t ended; /* a connection ended: a slot, descriptors */
	int n;
} conns = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void conn_slot_release(void)
{
	pthread_mutex_lock(&conns.mu);
	conns.n--;
	pthread_cond_signal(&conns.ended);
	pthread_mutex_unlock(&conns.mu);
}

static void *serve_connection(void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct conn cn = { .fd = fd,
			   .wake = { -1, -1 },
			   .mu = PTHREAD_MUTEX_INITIALIZER,
			   .since_ms = monotonic_ms() };
	nghttp2_session_callbacks *cb;
	nghttp2_session *s = NULL;
	nghttp2_settings_entry iv[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100 },
	};

	if (nghttp2_session_callbacks_new(&cb))
		goto out;
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
		s = NULL;
		goto out;
	}
	nghttp2_session_callbacks_del(cb);
	nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, iv, 1);
	serve_session(s, &cn);
	for (struct call *c = cn.started; c; c = c->next) {
		nghttp2_session_set_stream_user_data(s, c->stream_id, NULL);
		cancel_call(c);
	}
	reap_calls(&cn, 1);
out:
	if (s)
		nghttp2_session_del(s);
	close_fd(&cn.wake[0]);
	close_fd(&cn.wake[1]);
	close(fd);
	conn_slot_release();
	return NULL;
}

/*
 * Take a connection slot, waiting while GRPC_MAX_CONNS are served
 * (the next connections wait in the listen backlog meanwhile)
 */
static void conn_slot_take(void)
{
	int logged = 0;

	pthread_mutex_lock(&conns.mu);
	while (conns.n >= GRPC_MAX_CONNS) {
		struct log_line ll;

		if (!logged && log_begin(&ll, LOG_WARN,
					 "sandboxd grpc connection limit "
					 "reached")) {
			log_int(&ll, "limit", GRPC_MAX_CONNS);
			log_end(&ll);
		}
		logged = 1;
		pthread_cond_wait(&conns.ended, &conns.mu);
	}
	conns.n++;
	pthread_mutex_unlock(&conns.mu);
}

/* out of descriptors: wait until a connection ends, at most ms */
static void accept_backoff(int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += (long)ms * 1000000;
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	pthread_mutex_lock(&conns.mu);
	pthread_cond_timedwait(&conns.ended, &conns.mu, &ts);
	pthread_mutex_unlock(&conns.mu);
}

static void log_accept_error(enum log_level level, int err)
{
	struct log_line ll;

	if (log_begin(&ll, level, "sandboxd grpc cannot accept")) {
		log_str(&ll, "error", strerror(err));
		log_end(&ll);
	}
}

/*
 * accept(2)'s errors that concern one connection only (Linux passes
 * pending network errors on, accept(2) "Error handling")
 */
static int accept_error_transient(int err)
{
	switch (err) {
	case EINTR:
	case EAGAIN:
	case ECONNABORTED:
	case EPROTO:
	case ENETDOWN:
	case ENOPROTOOPT:
	case EHOSTDOWN:
	case ENONET:
	case EHOSTUNREACH:
	case EOPNOTSUPP:
	case ENETUNREACH:
		return 1;
	}
	return 0;
}

static void *accept_loop(void *arg)
{
	int starved = 0; /* out of descriptors or memory, logged */

	for (;;) {
		int fd, err;
		pthread_attr_t attr;
		pthread_t t;

		conn_slot_take();
		fd = accept4(srv.fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			err = errno;
			conn_slot_release();
			if (accept_error_transient(err))
				continue;
			if (err != EMFILE && err != ENFILE && err != ENOBUFS &&
			    err != ENOMEM) {
				log_accept_error(LOG_ERROR, err);
				return NULL;
			}
			if (!starved)
				log_accept_error(LOG_WARN, err);
			starved = 1;
			accept_backoff(ACCEPT_BACKOFF_MS);
			continue;
		}
		starved = 0;
		/* an answer goes out in small frames (HEADERS, DATA,
		 * trailers): Nagle's algorithm would hold the last ones
		 * for the client's delayed ACK, 40 ms a call (a unix
		 * socket refuses the option, which is harmless) */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 },
			   sizeof(int));
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 512 * 1024);
		if (pthread_create(&t, &attr, serve_connection,
				   (void *)(intptr_t)fd)) {
			close(fd);
			conn_slot_release();
			log_accept_error(LOG_WARN, EAGAIN);
			accept_backoff(ACCEPT_BACKOFF_MS);
		}
		pthread_attr_destroy(&attr);
	}
	return NULL;
}

/*
 * A duration of the environment (Go's form, parse_duration_ms()) into
 * *ms, unless it is unset or empty; 0, or -1 logged
 */
static int env_duration(const char *name, int64_t *ms)
{
	const char *v = getenv(name);
	int64_t d;

	if (!v || !*v)
		return 0;
	if (parse_duration_ms(v, &d) < 0 || d <= 0) {
		struct log_line ll;

		if (log_begin(&ll, LOG_ERROR, "bad duration")) {
			log_str(&ll, "variable", name);
			log_str(&ll, "value", v);
			log_end(&ll);
		}
		return -1;
	}
	*ms = d;
	return 0;
}

int grpc_start(const char *addr, const char *token,
	       const char *const *allowed_hosts, struct listen_info *li)
{
	pthread_t t;
	pthread_condattr_t ca;

	if (env_duration("SANDBOX_GRPC_HANDSHAKE_TIMEOUT", &srv.handshake_ms) <
		    0 ||
	    env_duration("SANDBOX_GRPC_IDLE_TIMEOUT", &srv.idle_ms) < 0)
		return -1;

	srv.fd = listen_address(addr, NULL, 256, li);
	if (srv.fd < 0) {
		log_msg(LOG_ERROR, "cannot listen", "addr", addr);
		return -1;
	}
	srv.tcp = li->ss.ss_family == AF_INET || li->ss.ss_family == AF_INET6;
	srv.token = token;
	srv.allowed_hosts = allowed_hosts;
	/* accept_backoff() waits by the monotonic clock */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&conns.ended, &ca);
	pthread_condattr_destroy(&ca);
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
