/*
 * Interactive commands (Documentation/gosbx-runtime.txt, "Interactive
 * commands"): stdin streamed to the command while it runs, optionally
 * on a pseudo-terminal, in two ways:
 *
 * - feature exec-interactive: GET /v1/exec upgraded to a WebSocket
 *   carrying the channel of lib/proto/channel.h (which holds its
 *   spec: channels, framing, control messages);
 * - feature exec-input, for proxies that carry plain HTTP only (the
 *   v0.4.6 sandbox-router): POST /v1/exec with "stdin_stream": true
 *   streams the output as exec-stream does, and
 *   POST /v1/exec/<request id>/stdin and /control bring the input.
 *
 * Everything that arrives here is hostile: messages are bounded
 * (WS_MAX_MSG), input is read from the socket only while little of it
 * waits for the command (STDIN_MAX), and output only while little of
 * it waits for the client (WS_QUEUE_MAX), so no client makes the
 * runtime buffer without bound. A protocol error closes the channel
 * with a close code and reason and kills the command; the runtime
 * keeps serving.
 *
 * Commands start and end through runtime-command.c, as every other
 * command does: same body checks, process group, kill, reaping and
 * logging rules.
 */
#include "compat.h"
#include "exec.h"
#include "json.h"
#include "log.h"
#include "proto/channel.h"
#include "proto/exec-events.h"
#include "runtime.h"
#include "utf8.h"
#include "proto/websocket.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <strings.h>
#include <sys/socket.h>

/* largest message a client may send: a start body and its channel byte */
#define WS_MAX_MSG (UPSTREAM_JSON_LIMIT + 1)
/* queued output before the command's output is paused, bytes */
#define WS_QUEUE_MAX (256 * 1024)
/* stdin not yet taken by the command before the socket is not read */
#define STDIN_MAX (256 * 1024)
#define START_TIMEOUT_MS 30000
/* after the exit status: time to deliver it and close */
#define CLOSE_FLUSH_MS 10000
/* the longest wait in a loop, so that shutdown is noticed */
#define TICK_MS 500
/* a control body over POST (exec-input) */
#define CONTROL_MAX (64 * 1024)

/* ---- control messages, the same on both transports ---- */

/*
 * Apply a control message other than start: resize and signal act on
 * proc's terminal, eof sets *eof. Returns 0, or -1 with err.
 */
static int apply_control(struct exec_proc *proc, int tty, json_t *j, int *eof,
			 struct strbuf *err)
{
	struct exec_control c;

	if (exec_control_parse(j, &c, err) < 0)
		return -1;
	switch (c.type) {
	case EXEC_CONTROL_START:
		strbuf_addstr(err, "unknown control message type 'start'");
		return -1;
	case EXEC_CONTROL_EOF:
		*eof = 1;
		return 0;
	case EXEC_CONTROL_RESIZE:
		if (!tty) {
			strbuf_addstr(err, "resize needs a terminal (tty)");
			return -1;
		}
		exec_resize(proc, c.cols, c.rows);
		return 0;
	case EXEC_CONTROL_SIGNAL:
		if (!tty) {
			strbuf_addstr(err, "signal needs a terminal (tty): it "
					   "goes to the terminal's foreground "
					   "process group");
			return -1;
		}
		exec_signal_foreground(proc, c.signo);
		return 0;
	}
	return 0;
}

/* ---- exec-input: stdin and control through other requests ---- */

/* A POST /v1/exec with stdin_stream, as the input requests see it. */
struct icmd {
	char *tag;		/* its X-Request-ID */
	struct exec_proc *proc; /* NULL until attached */
	int tty;
	int fd;		  /* our stdin descriptor, -1 once closed */
	int refs;	  /* input requests holding it */
	int busy;	  /* a stdin request is writing */
	int dead;	  /* atomic: finishing, no more input */
	int attached;	  /* exec_input_attach() ran */
	int input_closed; /* eof was given */
	struct icmd *next;
};

static pthread_mutex_t in_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t in_cond = PTHREAD_COND_INITIALIZER;
static struct icmd *in_head;

/* Under in_lock: the live command with that tag, or NULL. */
static struct icmd *in_find(const char *tag)
{
	for (struct icmd *e = in_head; e; e = e->next)
		if (!__atomic_load_n(&e->dead, __ATOMIC_ACQUIRE) &&
		    !strcmp(e->tag, tag))
			return e;
	return NULL;
}

unsigned exec_input_reserve(struct exec_params *p, struct strbuf *err)
{
	struct icmd *e;

	if (!p->tag) {
		strbuf_addstr(err, "stdin_stream needs an X-Request-ID header "
				   "(it names the command to "
				   "POST /v1/exec/<id>/stdin)");
		return 400;
	}
	pthread_mutex_lock(&in_lock);
	if (in_find(p->tag)) {
		pthread_mutex_unlock(&in_lock);
		strbuf_addf(err, "a command with request id '%s' is running",
			    p->tag);
		return 409;
	}
	e = xcalloc(1, sizeof(*e));
	e->tag = xstrdup(p->tag);
	e->fd = -1;
	e->next = in_head;
	in_head = e;
	pthread_mutex_unlock(&in_lock);
	p->input = e;
	return 0;
}

void exec_input_attach(struct exec_params *p, struct exec_proc *proc)
{
	struct icmd *e = p->input;
	int fd;

	if (!e)
		return;
	fd = exec_stdin_fd(proc);
	pthread_mutex_lock(&in_lock);
	e->proc = proc;
	e->tty = p->req.tty;
	if (fd >= 0)
		e->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	e->attached = 1;
	pthread_cond_broadcast(&in_cond);
	pthread_mutex_unlock(&in_lock);
	/* a pipe: ours is now the only write end, closing it is EOF */
	if (!p->req.tty)
		exec_stdin_close(proc);
}

void exec_input_detach(struct exec_params *p)
{
	struct icmd *e = p->input, **pp;

	if (!e)
		return;
	pthread_mutex_lock(&in_lock);
	__atomic_store_n(&e->dead, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&in_cond);
	while (e->refs)
		pthread_cond_wait(&in_cond, &in_lock);
	for (pp = &in_head; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	pthread_mutex_unlock(&in_lock);
	if (e->fd >= 0)
		close(e->fd);
	free(e->tag);
	free(e);
	p->input = NULL;
}

/* State of one POST /v1/exec/<id>/stdin or /control. */
struct input_req {
	struct icmd *e;
	int control; /* /control, else /stdin */
	int eof;     /* /stdin?eof=1 */
	int busy;    /* we hold e->busy */
	int conn_fd;
	unsigned status; /* the first failure, 0 while none */
	struct strbuf err;
	struct strbuf body; /* /control */
};

static void input_fail(struct input_req *ir, unsigned status, const char *msg)
{
	if (ir->status)
		return;
	ir->status = status;
	strbuf_addstr(&ir->err, msg);
}

void exec_input_begin(struct MHD_Connection *c, struct request *r)
{
	struct input_req *ir = xcalloc(1, sizeof(*ir));
	const char *rest = r->url + strlen("/v1/exec/"), *slash;
	const char *eof =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "eof");
	struct strbuf tag = STRBUF_INIT;
	uint64_t deadline = monotonic_ms() + 5000;

	strbuf_init(&ir->err, 0);
	strbuf_init(&ir->body, 0);
	ir->conn_fd = connection_fd(c);
	r->input = ir;
	slash = strchr(rest, '/');
	if (!slash || slash == rest ||
	    (strcmp(slash, "/stdin") && strcmp(slash, "/control"))) {
		input_fail(ir, 404,
			   "not found: POST /v1/exec/<request "
			   "id>/stdin or /control");
		return;
	}
	ir->control = !strcmp(slash, "/control");
	ir->eof = eof && !strcmp(eof, "1");
	strbuf_add(&tag, rest, slash - rest);
	pthread_mutex_lock(&in_lock);
	ir->e = in_find(tag.buf);
	if (ir->e) {
		ir->e->refs++;
		/* the command starts right after its reservation */
		while (!ir->e->attached && monotonic_ms() < deadline) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 50 * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&in_cond, &in_lock, &ts);
		}
		if (!ir->control) {
			if (ir->e->busy)
				input_fail(ir, 409,
					   "another stdin request of this "
					   "command is in progress");
			else if (ir->e->input_closed || ir->e->fd < 0)
				input_fail(ir, 409,
					   "the command's input is closed");
			else
				ir->busy = ir->e->busy = 1;
		}
	}
	pthread_mutex_unlock(&in_lock);
	if (!ir->e) {
		struct strbuf msg = STRBUF_INIT;

		strbuf_addf(&msg,
			    "no running command has request id '%s' and "
			    "stdin_stream",
			    tag.buf);
		input_fail(ir, 404, msg.buf);
		strbuf_release(&msg);
	}
	strbuf_release(&tag);
}

/* Write all of buf to the command's stdin, waiting while it is full. */
static void input_write(struct input_req *ir, const char *buf, size_t len)
{
	struct icmd *e = ir->e;

	while (len && !ir->status) {
		struct pollfd p[2] = { { .fd = e->fd, .events = POLLOUT },
				       { .fd = ir->conn_fd,
					 .events = POLLRDHUP } };
		ssize_t n;

		if (__atomic_load_n(&e->dead, __ATOMIC_ACQUIRE)) {
			input_fail(ir, 409, "the command has finished");
			return;
		}
		n = write(e->fd, buf, len);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			/* the command is not reading: wait, a bit at a time */
			if (poll(p, ir->conn_fd >= 0 ? 2 : 1, 100) > 0 &&
			    (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR))) {
				input_fail(ir, 400, "client went away");
				return;
			}
			continue;
		}
		input_fail(ir, 409, "the command closed its input");
	}
}

void exec_input_take(struct request *r, const char *data, size_t len)
{
	struct input_req *ir = r->input;

	if (!ir || ir->status)
		return;
	if (ir->control) {
		if (ir->body.len + len > CONTROL_MAX)
			input_fail(ir, 413, "control message too large");
		else
			strbuf_add(&ir->body, data, len);
		return;
	}
	input_write(ir, data, len);
}

/* Close the command's input (eof): EOF on a pipe, VEOF on a terminal. */
static void input_close(struct input_req *ir)
{
	struct icmd *e = ir->e;

	pthread_mutex_lock(&in_lock);
	if (e->busy && !ir->busy) {
		pthread_mutex_unlock(&in_lock);
		input_fail(ir, 409,
			   "another stdin request of this command is in "
			   "progress");
		return;
	}
	if (!e->input_closed && !__atomic_load_n(&e->dead, __ATOMIC_ACQUIRE)) {
		e->input_closed = 1;
		if (e->tty) {
			exec_stdin_close(e->proc);
		} else if (e->fd >= 0) {
			close(e->fd);
			e->fd = -1;
		}
	}
	pthread_mutex_unlock(&in_lock);
}

/* Give up ir's claim on its command's stdin (e->busy), if it has it. */
static void input_unclaim(struct input_req *ir)
{
	if (!ir->e)
		return;
	pthread_mutex_lock(&in_lock);
	if (ir->busy) {
		ir->e->busy = 0;
		ir->busy = 0;
		pthread_cond_broadcast(&in_cond);
	}
	pthread_mutex_unlock(&in_lock);
}

enum MHD_Result handle_exec_input(struct MHD_Connection *c, struct request *r)
{
	struct input_req *ir = r->input;
	struct MHD_Response *resp;
	int eof = 0;

	if (!ir)
		return MHD_NO;
	if (!ir->status && ir->control) {
		struct strbuf perr = STRBUF_INIT;
		json_t *j = json_parse(ir->body.buf, ir->body.len, &perr);

		if (!json_is_object(j)) {
			strbuf_addf(&ir->err, "invalid JSON body: %s",
				    perr.len ? perr.buf : "expected an object");
			ir->status = 400;
		} else if (apply_control(ir->e->proc, ir->e->tty, j, &eof,
					 &ir->err) < 0) {
			ir->status = 400;
		}
		json_decref(j);
		strbuf_release(&perr);
	}
	if (!ir->status && (eof || ir->eof))
		input_close(ir);
	/*
	 * The writer's claim ends before the answer goes out: a client
	 * that sends its next chunk as soon as it has the answer, on
	 * another connection (through a router, each request has its
	 * own), must not find this one still in progress (409).
	 */
	input_unclaim(ir);
	if (ir->status)
		return reply_error(c, r, ir->status, "%s", ir->err.buf);
	resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
	return reply(c, r, 204, resp);
}

void exec_input_release(struct request *r)
{
	struct input_req *ir = r->input;

	if (!ir)
		return;
	if (ir->e) {
		pthread_mutex_lock(&in_lock);
		if (ir->busy)
			ir->e->busy = 0;
		ir->e->refs--;
		pthread_cond_broadcast(&in_cond);
		pthread_mutex_unlock(&in_lock);
	}
	strbuf_release(&ir->err);
	strbuf_release(&ir->body);
	free(ir);
	r->input = NULL;
}

/* ---- exec-interactive: the WebSocket channel ---- */

struct ws_sess {
	struct MHD_UpgradeResponseHandle *urh;
	int sock;
	struct strbuf extra; /* bytes MHD read past the request */
	char *tag;
	struct ws_conn ws; /* a WS_SERVER over sock */
	struct exec_params p;
	int have_params;
	struct exec_proc *proc;
	struct pollfd pfd[2]; /* the socket, the command's stdin */
	struct strbuf in;     /* stdin not yet written */
	size_t in_off;
	int in_eof;	  /* the client's eof: close stdin once in is written */
	int in_closed;	  /* stdin closed (eof, or the command refused it) */
	int finished;	  /* the command ended and was reaped */
	int close_queued; /* our close frame is queued */
	int failed;	  /* a protocol error closed the channel */
	uint64_t last_sent_ms;
	struct strbuf scratch;
};

static atomic_int ws_live;
static atomic_int ws_stop;

static void ws_queue(struct ws_sess *s, enum exec_channel channel,
		     const void *data, size_t len)
{
	strbuf_reset(&s->scratch);
	exec_channel_frame(&s->scratch, channel, data, len);
	ws_conn_send(&s->ws, WS_BINARY, s->scratch.buf, s->scratch.len);
	s->last_sent_ms = monotonic_ms();
}

/*
 * A protocol error: close the channel with code and a reason (cut to
 * the 123 bytes a close frame holds), log it, kill the command.
 */
static void ws_fail(struct ws_sess *s, uint16_t code, const char *fmt, ...)
	PRINTF_LIKE(3, 4);
static void ws_fail(struct ws_sess *s, uint16_t code, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	struct log_line l;
	va_list ap;

	if (s->failed)
		return;
	s->failed = 1;
	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	if (log_begin(&l, LOG_WARN, "interactive channel closed")) {
		log_int(&l, "code", code);
		log_str(&l, "reason", msg.buf);
		log_end(&l);
	}
	if (msg.len > 123)
		strbuf_setlen(&msg, 123 - utf8_incomplete_tail(msg.buf, 123));
	if (!s->close_queued) {
		s->close_queued = 1;
		ws_conn_close(&s->ws, code, msg.buf);
	}
	if (s->proc)
		exec_cancel(s->proc, "cancelled");
	strbuf_release(&msg);
}

static int ws_output(enum exec_stream stream, const char *buf, size_t len,
		     void *data)
{
	struct ws_sess *s = data;

	if (s->failed || s->ws.eof)
		return -1;
	ws_queue(s, stream == EXEC_STDOUT ? EXEC_CH_STDOUT : EXEC_CH_STDERR,
		 buf, len);
	return 0;
}

static void ws_start(struct ws_sess *s, const char *buf, size_t len)
{
	struct request r;
	struct strbuf err = STRBUF_INIT;
	unsigned status;

	memset(&r, 0, sizeof(r));
	strbuf_init(&r.body, len);
	strbuf_add(&r.body, buf, len);
	status = parse_exec_body(&r, &s->p, &err);
	s->have_params = 1;
	strbuf_release(&r.body);
	if (!status && s->p.req.stdin_data) {
		status = 400;
		strbuf_addstr(&err, "stdin is sent on channel 0, not in the "
				    "start message");
	}
	if (status) {
		ws_fail(s, 1008, "%s", err.buf);
		strbuf_release(&err);
		return;
	}
	strbuf_release(&err);
	if (s->tag) {
		s->p.tag = xstrdup(s->tag);
		s->p.req.tag = s->p.tag;
	}
	s->p.req.stdin_stream = 1;
	/* a session ends when its output does, as a terminal's */
	s->p.req.wait_delay_ms = 0;
	s->p.req.stream_cap = 1; /* everything goes out, keep nothing */
	s->p.req.on_output = ws_output;
	s->p.req.data = s;
	s->p.req.poll_extra = s->pfd;
	s->p.req.nr_poll_extra = 2;
	command_start(&s->p, &s->proc);
}

static void ws_control(struct ws_sess *s, const uint8_t *buf, size_t len)
{
	struct strbuf err = STRBUF_INIT;
	json_t *j = json_parse((const char *)buf, len, &err);
	const char *type = json_object_str(j, "type");
	int eof = 0;

	if (!json_is_object(j) || !type) {
		ws_fail(s, 1008,
			"a control message is a JSON object with a "
			"\"type\"");
	} else if (!strcmp(type, "start")) {
		if (s->have_params)
			ws_fail(s, 1008, "a second start message");
		else
			ws_start(s, (const char *)buf, len);
	} else if (!s->have_params) {
		ws_fail(s, 1008,
			"the first message must be a start message "
			"on channel 4");
	} else if (!s->proc || s->finished) {
		/* late: the command ended meanwhile */
		if (!strcmp(type, "eof"))
			s->in_eof = 1;
	} else {
		strbuf_reset(&err);
		if (apply_control(s->proc, s->p.req.tty, j, &eof, &err) < 0)
			ws_fail(s, 1008, "%s", err.buf);
		else if (eof)
			s->in_eof = 1;
	}
	json_decref(j);
	strbuf_release(&err);
}

static void ws_on_msg(struct ws_conn *ws, int opcode, const uint8_t *msg,
		      size_t len, uint16_t code, void *data)
{
	struct ws_sess *s = data;
	const void *payload;
	size_t plen;
	unsigned ch;

	switch (opcode) {
	case WS_CLOSE:
		/* the client is done: so is its command */
		if (s->proc && !s->finished)
			exec_cancel(s->proc, "cancelled");
		return;
	case WS_PING:
	case WS_PONG:
		return;
	case WS_BINARY:
		break;
	default:
		ws_fail(s, 1003,
			"only binary messages, each led by a channel "
			"byte");
		return;
	}
	if (s->failed)
		return;
	if (exec_channel_split(msg, len, &ch, &payload, &plen) < 0) {
		ws_fail(s, 1002,
			"an empty message: the first byte names the "
			"channel");
		return;
	}
	switch (ch) {
	case EXEC_CH_CONTROL:
		ws_control(s, payload, plen);
		break;
	case EXEC_CH_STDIN:
		if (!s->have_params)
			ws_fail(s, 1008, "stdin before the start message");
		else if (s->in_eof)
			ws_fail(s, 1008, "stdin after eof");
		else if (!s->in_closed && !s->finished)
			strbuf_add(&s->in, payload, plen);
		/* else: the command took no more, or it ended: dropped */
		break;
	default:
		ws_fail(s, 1008, "unknown channel %u", ch);
	}
}

/* Give the command what it can take of the pending stdin. */
static void ws_write_stdin(struct ws_sess *s)
{
	int fd = s->proc ? exec_stdin_fd(s->proc) : -1;

	while (fd >= 0 && !s->in_closed && s->in_off < s->in.len) {
		ssize_t n =
			write(fd, s->in.buf + s->in_off, s->in.len - s->in_off);

		if (n > 0) {
			s->in_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			/* keep the buffer bounded: drop what was written */
			if (s->in_off >= 64 * 1024) {
				strbuf_remove(&s->in, 0, s->in_off);
				s->in_off = 0;
			}
			return;
		}
		/* EPIPE, EIO: the command does not want more */
		s->in_closed = 1;
	}
	strbuf_reset(&s->in);
	s->in_off = 0;
	if (s->in_eof && !s->in_closed && s->proc) {
		exec_stdin_close(s->proc);
		s->in_closed = 1;
	}
}

/* The command ended: reap it, send its exit status (unless failed). */
static void ws_finish(struct ws_sess *s)
{
	struct exec_result res;

	exec_result_init(&res);
	command_finish(&s->p, s->proc, &res);
	s->proc = NULL;
	if (!s->failed && !s->ws.eof) {
		struct strbuf ev = STRBUF_INIT;

		exec_event_begin_exit(&ev, &res);
		exec_event_end_exit(&ev, 0);
		ws_queue(s, EXEC_CH_STATUS, ev.buf, ev.len);
		strbuf_release(&ev);
	}
	exec_result_release(&res);
	s->finished = 1;
}

static int min_wait(int a, uint64_t until, uint64_t now)
{
	uint64_t d = until > now ? until - now : 0;

	return d < (uint64_t)a ? (int)d : a;
}

static void ws_loop(struct ws_sess *s)
{
	uint64_t start_deadline = monotonic_ms() + START_TIMEOUT_MS;
	uint64_t close_deadline = 0;

	s->last_sent_ms = monotonic_ms();
	for (;;) {
		int want_rd = ws_conn_want_read(&s->ws) &&
			      s->in.len - s->in_off < STDIN_MAX;
		int want_wr = ws_conn_want_write(&s->ws);
		uint64_t now = monotonic_ms();
		int wait = TICK_MS;

		if (!ws_conn_want_read(&s->ws) && !want_wr &&
		    (!s->proc || s->finished))
			break;
		if (s->ws.eof)
			break;
		if (s->ws.failed && !s->failed) {
			/*
			 * wslay closed the channel itself (a message over
			 * WS_MAX_MSG: 1009; a frame breaking RFC 6455: 1002)
			 * and reads no more: the command goes, as with our
			 * own protocol errors, and the close is not queued
			 * twice.
			 */
			struct strbuf err = STRBUF_INIT;
			uint16_t code = ws_conn_error(&s->ws, &err);

			s->close_queued = 1;
			ws_fail(s, code, "%s", err.buf);
			strbuf_release(&err);
		}
		if (atomic_load(&ws_stop))
			ws_fail(s, 1001, "the runtime is shutting down");
		if ((s->finished || s->failed) && !close_deadline)
			close_deadline = now + CLOSE_FLUSH_MS;
		if (close_deadline && now >= close_deadline)
			break;
		/* wslay sends control frames first: close after the data */
		if (s->finished && !s->close_queued &&
		    !ws_conn_queued_count(&s->ws)) {
			s->close_queued = 1;
			ws_conn_close(&s->ws, 1000, NULL);
			continue;
		}
		if (!s->have_params && !s->failed) {
			if (now >= start_deadline) {
				ws_fail(s, 1008,
					"no start message within "
					"30 s");
				continue;
			}
			wait = min_wait(wait, start_deadline, now);
		}
		if (s->proc && !s->finished && !s->failed &&
		    now - s->last_sent_ms >= rt.heartbeat_ms &&
		    !ws_conn_queued_count(&s->ws)) {
			/* a quiet command must not look like a dead
			 * connection to proxies with idle timeouts */
			ws_queue(s, EXEC_CH_STDOUT, "", 0);
			continue;
		}
		if (s->proc && !s->finished)
			wait = min_wait(wait, s->last_sent_ms + rt.heartbeat_ms,
					now);
		s->pfd[0].fd = s->sock;
		s->pfd[0].events =
			(want_rd ? POLLIN : 0) | (want_wr ? POLLOUT : 0);
		s->pfd[0].revents = 0;
		s->pfd[1].fd = -1;
		s->pfd[1].events = 0;
		s->pfd[1].revents = 0;
		if (s->proc && !s->in_closed && s->in_off < s->in.len &&
		    exec_stdin_fd(s->proc) >= 0) {
			s->pfd[1].fd = exec_stdin_fd(s->proc);
			s->pfd[1].events = POLLOUT;
		}
		if (ws_conn_buffered(&s->ws)) {
			s->pfd[0].revents = POLLIN;
		} else if (s->proc && !s->finished) {
			exec_pause_output(s->proc,
					  ws_conn_queued_bytes(&s->ws) >=
						  WS_QUEUE_MAX);
			if (!exec_step(s->proc, wait))
				ws_finish(s);
		} else {
			/* a copy: gcc with ASan takes s->pfd for an int */
			struct pollfd pfd[ARRAY_SIZE(s->pfd)];
			int n;

			memcpy(pfd, s->pfd, sizeof(pfd));
			n = poll(pfd, ARRAY_SIZE(pfd), wait);
			memcpy(s->pfd, pfd, sizeof(pfd));
			if (n < 0 && errno != EINTR)
				break;
		}
		if ((s->pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    want_rd && ws_conn_read(&s->ws) < 0)
			break;
		if (s->proc && !s->finished)
			ws_write_stdin(s);
		if (ws_conn_want_write(&s->ws) &&
		    (s->pfd[0].revents & POLLOUT || !want_wr) &&
		    ws_conn_write(&s->ws) < 0)
			break;
	}
	if (s->proc) {
		/* the client went away (or we gave up on it) */
		exec_cancel(s->proc, "cancelled");
		ws_finish(s);
	}
}

static void *ws_thread(void *arg)
{
	struct ws_sess *s = arg;
	struct ws_transport t;
	int fl = fcntl(s->sock, F_GETFL), one = 1;

	if (fl >= 0)
		fcntl(s->sock, F_SETFL, fl | O_NONBLOCK);
	setsockopt(s->sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ws_socket_transport(&t, s->sock);
	if (!ws_conn_init(&s->ws, WS_SERVER, &t, WS_MAX_MSG, 0, ws_on_msg, s)) {
		ws_conn_preload(&s->ws, s->extra.buf, s->extra.len);
		ws_loop(s);
		ws_conn_release(&s->ws);
	}
	MHD_upgrade_action(s->urh, MHD_UPGRADE_ACTION_CLOSE);
	if (s->have_params)
		exec_params_release(&s->p);
	strbuf_release(&s->extra);
	strbuf_release(&s->in);
	strbuf_release(&s->scratch);
	free(s->tag);
	free(s);
	atomic_fetch_sub(&ws_live, 1);
	return NULL;
}

static void ws_upgraded(void *cls, struct MHD_Connection *c, void *con_cls,
			const char *extra_in, size_t extra_in_size,
			MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	struct ws_sess *s = cls;
	pthread_attr_t attr;
	pthread_t th;

	s->sock = sock;
	s->urh = urh;
	strbuf_add(&s->extra, extra_in, extra_in_size);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 512 * 1024);
	if (pthread_create(&th, &attr, ws_thread, s)) {
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		strbuf_release(&s->extra);
		free(s->tag);
		free(s);
		atomic_fetch_sub(&ws_live, 1);
	}
	pthread_attr_destroy(&attr);
}

/* Has the comma-separated header value list the token tok? */
static int has_token(const char *list, const char *tok)
{
	size_t n = strlen(tok);

	while (list && *list) {
		list += strspn(list, " \t,");
		if (!strncasecmp(list, tok, n) &&
		    (!list[n] || list[n] == ',' || list[n] == ' ' ||
		     list[n] == '\t'))
			return 1;
		list = strchr(list, ',');
	}
	return 0;
}

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

enum MHD_Result handle_exec_ws(struct MHD_Connection *c, struct request *r)
{
	const char *up = header(c, "Upgrade"), *conn = header(c, "Connection");
	const char *ver = header(c, "Sec-WebSocket-Version");
	const char *key = header(c, "Sec-WebSocket-Key");
	const char *proto = header(c, "Sec-WebSocket-Protocol");
	const char *id = header(c, "X-Request-ID");
	struct strbuf raw = STRBUF_INIT, acc = STRBUF_INIT;
	struct MHD_Response *resp;
	struct ws_sess *s;
	int key_ok;

	if (!up || strcasecmp(up, "websocket") || !has_token(conn, "upgrade"))
		return reply_error(
			c, r, 400,
			"GET /v1/exec is the interactive channel and needs a "
			"WebSocket upgrade (Connection: Upgrade, Upgrade: "
			"websocket); a proxy that drops it cannot carry the "
			"channel: POST /v1/exec with stdin_stream instead "
			"(feature exec-input)");
	if (!ver || strcmp(ver, "13")) {
		struct strbuf body = STRBUF_INIT;

		strbuf_addstr(&body, "{\"detail\":\"unsupported WebSocket "
				     "version: this server speaks 13\"}");
		resp = MHD_create_response_from_buffer(
			body.len, strbuf_detach(&body, NULL),
			MHD_RESPMEM_MUST_FREE);
		if (!resp)
			return MHD_NO;
		MHD_add_response_header(resp, "Sec-WebSocket-Version", "13");
		MHD_add_response_header(resp, "Content-Type",
					"application/json");
		return reply(c, r, 426, resp);
	}
	key_ok = key && strlen(key) == 24 &&
		 !base64_decode_into(&raw, key, 24) && raw.len == 16;
	strbuf_release(&raw);
	if (!key_ok)
		return reply_error(c, r, 400,
				   "Sec-WebSocket-Key must be 16 bytes in "
				   "base64");
	if (!has_token(proto, EXEC_CHANNEL_PROTOCOL))
		return reply_error(
			c, r, 400,
			"the interactive channel speaks the "
			"WebSocket subprotocol " EXEC_CHANNEL_PROTOCOL
			" (Sec-WebSocket-Protocol)");
	if (atomic_load(&ws_stop))
		return reply_error(c, r, 503, "the runtime is shutting down");
	s = xcalloc(1, sizeof(*s));
	strbuf_init(&s->extra, 0);
	strbuf_init(&s->in, 0);
	strbuf_init(&s->scratch, 0);
	s->sock = -1;
	s->tag = id && *id ? xstrdup(id) : NULL;
	ws_accept_key(key, &acc);
	resp = MHD_create_response_for_upgrade(ws_upgraded, s);
	if (!resp) {
		free(s->tag);
		free(s);
		strbuf_release(&acc);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Upgrade", "websocket");
	MHD_add_response_header(resp, "Sec-WebSocket-Accept", acc.buf);
	MHD_add_response_header(resp, "Sec-WebSocket-Protocol",
				EXEC_CHANNEL_PROTOCOL);
	strbuf_release(&acc);
	atomic_fetch_add(&ws_live, 1);
	return reply(c, r, 101, resp);
}

void interactive_shutdown(int64_t grace_ms)
{
	uint64_t deadline = monotonic_ms() + (grace_ms > 0 ? grace_ms : 0);

	atomic_store(&ws_stop, 1);
	while (atomic_load(&ws_live) > 0 && monotonic_ms() < deadline)
		usleep(10000);
}
