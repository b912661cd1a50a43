/*
 * Detached commands (extension `jobs`, Documentation/gosbx-runtime.txt):
 * POST /v1/jobs starts a command that the runtime owns, not the request
 * that asked for it, so it outlives its client, and later requests read
 * its output from the start, write its stdin, signal it, wait for it.
 *
 * Each job has a thread of its own (the "pump") that runs exec_step()
 * until the command finished, as a /v1/exec request's thread does, and
 * appends the output to segment files under
 * $TMPDIR/gosbx-jobs-<uid>/<id>/ (records: an 8-byte header, stream and
 * length, then the bytes). Offsets are counts of output bytes (stdout
 * and stderr together, in the order read). Past the job's bound the
 * oldest segment is removed; a reader that asks for what is gone gets
 * a "trimmed" event first. The files are opened by us (O_EXCL,
 * O_NOFOLLOW) and read through our descriptors, so what the sandbox
 * does to the directory cannot make us read elsewhere; a record that
 * does not parse ends its segment.
 *
 * Everything a client sends is bounded: JOBS_MAX jobs are kept (ended
 * ones beyond are forgotten oldest first; a new job when all are
 * running is 429), bodies of JOB_BODY_MAX, stdin written by one
 * request at a time. One lock (jobs_lock) guards every job; readers
 * wait on jobs_cond, broadcast on every change.
 */
#include "compat.h"
#include "dir.h"
#include "exec.h"
#include "json.h"
#include "log.h"
#include "proto/exec-events.h"
#include "runtime.h"
#include "utf8.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>

#define JOBS_MAX 64
/* jobs allocated, kept or dying (a forgotten one still being killed) */
#define JOBS_ALLOC_MAX (2 * JOBS_MAX)
#define JOB_KEEP_DEFAULT ((uint64_t)64 << 20)
#define JOB_KEEP_MIN 4096
#define JOB_REC_MAX 65536
#define JOB_HDR 8
#define JOB_BODY_MAX (64 * 1024)
/* GET .../wait: the longest wait asked (ms) */
#define JOB_WAIT_MAX_MS (3600 * 1000)
/* a reader's buffered events before it gives them out, bytes */
#define JOB_READ_CHUNK (256 * 1024)

struct job_seg {
	uint64_t base; /* output offset of its first byte */
	uint64_t data; /* output bytes in it */
	off_t size;    /* file bytes */
	int fd;
	unsigned seq;
};

struct job {
	char id[24];
	struct exec_params p;
	struct exec_proc *proc; /* while running */
	int refs;
	int running;
	int finishing; /* the pump called exec_finish(): no exec_cancel() */
	int forgotten; /* out of the list; freed with the last ref */
	int tty;
	int stdin_fd; /* our write end (a dup), -1 once closed */
	int stdin_busy;
	pid_t pgid;
	int64_t started_ms, ended_ms; /* epoch ms */
	struct exec_result res;	      /* once ended */
	uint64_t out_total;	      /* output bytes so far */
	uint64_t keep;		      /* bound of the kept output */
	uint64_t lost;		      /* bytes not stored (disk full) */
	struct strbuf dir;
	struct job_seg *segs;
	size_t nr_segs, alloc_segs;
	unsigned seq;
	struct strbuf carry[2]; /* incomplete UTF-8 tails */
	struct job *next;
};

enum job_op {
	JOP_NONE,
	JOP_LIST,
	JOP_CREATE,
	JOP_GET,
	JOP_DELETE,
	JOP_OUTPUT,
	JOP_STDIN,
	JOP_SIGNAL,
	JOP_RESIZE,
	JOP_WAIT,
};

/* What a request under /v1/jobs is, from its head on. */
struct job_req {
	enum job_op op;
	struct job *j; /* referenced */
	unsigned status;
	struct strbuf err;
	int stdin_busy; /* we hold j->stdin_busy */
	int eof;
	int conn_fd;
};

static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t jobs_cond;
static pthread_once_t jobs_once = PTHREAD_ONCE_INIT;
static struct job *jobs_head; /* oldest first */
static int jobs_alloc;

static void jobs_init(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&jobs_cond, &a);
	pthread_condattr_destroy(&a);
}

static uint64_t epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Under jobs_lock: wait on jobs_cond at most ms. */
static void jobs_wait(int64_t ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&jobs_cond, &jobs_lock, &ts);
}

/* ---- the job's output on disk ---- */

static void seg_drop(struct job *j)
{
	struct strbuf path = STRBUF_INIT;

	strbuf_addf(&path, "%s/%u.out", j->dir.buf, j->segs[0].seq);
	unlink(path.buf);
	strbuf_release(&path);
	close(j->segs[0].fd);
	memmove(j->segs, j->segs + 1, --j->nr_segs * sizeof(*j->segs));
}

static struct job_seg *seg_new(struct job *j)
{
	struct strbuf path = STRBUF_INIT;
	struct job_seg *s;
	int fd;

	strbuf_addf(&path, "%s/%u.out", j->dir.buf, j->seq);
	fd = open(path.buf, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	strbuf_release(&path);
	if (fd < 0)
		return NULL;
	ALLOC_GROW(j->segs, j->nr_segs + 1, j->alloc_segs);
	s = &j->segs[j->nr_segs++];
	s->base = j->out_total;
	s->data = 0;
	s->size = 0;
	s->fd = fd;
	s->seq = j->seq++;
	return s;
}

/* Under jobs_lock: store one record (len <= JOB_REC_MAX). */
static void job_store(struct job *j, int stream, const char *buf, size_t len)
{
	struct job_seg *s = j->nr_segs ? &j->segs[j->nr_segs - 1] : NULL;
	unsigned char hdr[JOB_HDR] = { 'J', (unsigned char)stream };
	uint32_t n = (uint32_t)len;
	struct iovec iov[2] = { { hdr, JOB_HDR }, { (void *)buf, len } };

	memcpy(hdr + 4, &n, 4);
	if (!s || (s->data && (uint64_t)s->size + JOB_HDR + len > j->keep / 4))
		s = seg_new(j);
	if (!s || pwritev(s->fd, iov, 2, s->size) != (ssize_t)(JOB_HDR + len)) {
		j->lost += len;
		return;
	}
	s->size += JOB_HDR + len;
	s->data += len;
	j->out_total += len;
	while (j->nr_segs > 1 && j->out_total - j->segs[0].base > j->keep)
		seg_drop(j);
}

static void job_append(struct job *j, int stream, const char *buf, size_t len)
{
	/* records fit in a segment, so the bound is kept to the byte */
	size_t max = j->keep / 4 < JOB_REC_MAX ? j->keep / 4 : JOB_REC_MAX;

	while (len) {
		size_t n = len > max ? max : len;

		job_store(j, stream, buf, n);
		buf += n;
		len -= n;
	}
}

/* on_output of the job's command: whole characters only, in order */
static int job_output(enum exec_stream stream, const char *buf, size_t len,
		      void *data)
{
	struct job *j = data;
	struct strbuf *carry = &j->carry[stream - 1];
	struct strbuf joined = STRBUF_INIT;
	size_t tail;

	pthread_mutex_lock(&jobs_lock);
	if (carry->len) {
		strbuf_addbuf(&joined, carry);
		strbuf_add(&joined, buf, len);
		strbuf_reset(carry);
		buf = joined.buf;
		len = joined.len;
	}
	tail = utf8_incomplete_tail(buf, len);
	job_append(j, stream, buf, len - tail);
	strbuf_add(carry, buf + len - tail, tail);
	pthread_cond_broadcast(&jobs_cond);
	pthread_mutex_unlock(&jobs_lock);
	strbuf_release(&joined);
	return 0;
}

/* ---- life of a job ---- */

static void job_free(struct job *j)
{
	while (j->nr_segs)
		seg_drop(j);
	free(j->segs);
	if (j->dir.len)
		rmdir(j->dir.buf);
	if (j->stdin_fd >= 0)
		close(j->stdin_fd);
	exec_params_release(&j->p);
	exec_result_release(&j->res);
	strbuf_release(&j->dir);
	strbuf_release(&j->carry[0]);
	strbuf_release(&j->carry[1]);
	free(j);
}

/* Under jobs_lock. */
static void job_unref(struct job *j)
{
	if (--j->refs > 0)
		return;
	jobs_alloc--;
	job_free(j);
}

/* Under jobs_lock: out of the list, killed if running. */
static void job_forget(struct job *j)
{
	struct job **pp;

	for (pp = &jobs_head; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	j->forgotten = 1;
	if (j->running && !j->finishing)
		exec_cancel(j->proc, "cancelled");
	pthread_cond_broadcast(&jobs_cond);
	job_unref(j);
}

static void *job_pump(void *arg)
{
	struct job *j = arg;
	struct exec_result res;

	while (exec_step(j->proc, 1000) > 0)
		;
	pthread_mutex_lock(&jobs_lock);
	j->finishing = 1;
	pthread_mutex_unlock(&jobs_lock);
	exec_result_init(&res);
	command_finish(&j->p, j->proc, &res);
	pthread_mutex_lock(&jobs_lock);
	for (int i = 0; i < 2; i++) {
		job_append(j, i + 1, j->carry[i].buf, j->carry[i].len);
		strbuf_reset(&j->carry[i]);
	}
	exec_result_release(&j->res);
	j->res = res;
	j->proc = NULL;
	j->running = 0;
	j->ended_ms = (int64_t)epoch_ms();
	pthread_cond_broadcast(&jobs_cond);
	job_unref(j);
	pthread_mutex_unlock(&jobs_lock);
	return NULL;
}

/* Under jobs_lock. */
static struct job *job_find(const char *id)
{
	for (struct job *j = jobs_head; j; j = j->next)
		if (!strcmp(j->id, id))
			return j;
	return NULL;
}

/*
 * Under jobs_lock: room for one more job, forgetting the oldest ended
 * one when JOBS_MAX are kept. 0, or -1 when all are running.
 */
static int jobs_make_room(void)
{
	int n = 0;

	for (struct job *j = jobs_head; j; j = j->next)
		n++;
	if (n < JOBS_MAX && jobs_alloc < JOBS_ALLOC_MAX)
		return 0;
	for (struct job *j = jobs_head; j; j = j->next)
		if (!j->running) {
			job_forget(j);
			return jobs_alloc < JOBS_ALLOC_MAX ? 0 : -1;
		}
	return -1;
}

/* The directory of a new job's output; 0, or -1 with errno. */
static int job_make_dir(struct job *j)
{
	const char *tmp = getenv("TMPDIR");
	struct strbuf base = STRBUF_INIT;
	struct stat st;
	unsigned char rnd[6];
	int ret = -1;

	if (!tmp || *tmp != '/')
		tmp = "/tmp";
	/*
	 * one directory per uid: a runtime on a shared host (the url
	 * backend) must not meet another user's, which it refuses
	 */
	strbuf_addf(&base, "%s/gosbx-jobs-%u", tmp, (unsigned)geteuid());
	if (mkdir(base.buf, 0700) < 0 && errno != EEXIST)
		goto out;
	if (lstat(base.buf, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid()) {
		errno = ENOTDIR;
		goto out;
	}
	for (int tries = 0; tries < 8; tries++) {
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			goto out;
		snprintf(j->id, sizeof(j->id), "j%02x%02x%02x%02x%02x%02x",
			 rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
		strbuf_reset(&j->dir);
		strbuf_addf(&j->dir, "%s/%s", base.buf, j->id);
		if (!mkdir(j->dir.buf, 0700)) {
			ret = 0;
			goto out;
		}
		if (errno != EEXIST)
			break;
	}
	strbuf_reset(&j->dir);
out:
	strbuf_release(&base);
	return ret;
}

/* ---- JSON ---- */

/* Under jobs_lock: the job object. */
static void job_json(struct strbuf *out, const struct job *j)
{
	strbuf_addf(out, "{\"id\":\"%s\",\"command\":", j->id);
	json_add_string(out, j->p.req.command, strlen(j->p.req.command));
	strbuf_addf(out,
		    ",\"state\":\"%s\",\"tty\":%s,\"started_ms\":%" PRId64
		    ",\"output_bytes\":%" PRIu64 ",\"output_first\":%" PRIu64,
		    j->running ? "running" : "exited",
		    j->tty ? "true" : "false", j->started_ms, j->out_total,
		    j->nr_segs ? j->segs[0].base : j->out_total);
	if (j->lost)
		strbuf_addf(out, ",\"output_lost\":%" PRIu64, j->lost);
	if (j->running) {
		strbuf_addf(out, ",\"pid\":%d}", (int)j->pgid);
		return;
	}
	strbuf_addf(out, ",\"ended_ms\":%" PRId64 ",\"exit_code\":%d",
		    j->ended_ms, j->res.exit_code);
	exec_result_add_fields(out, &j->res, 0);
	strbuf_addch(out, '}');
}

static enum MHD_Result reply_job(struct MHD_Connection *c, struct request *r,
				 unsigned status, struct job *j)
{
	struct strbuf body = STRBUF_INIT;

	pthread_mutex_lock(&jobs_lock);
	job_json(&body, j);
	pthread_mutex_unlock(&jobs_lock);
	return reply_json(c, r, status, &body);
}

/* ---- requests: heads, bodies, answers ---- */

static void jr_fail(struct job_req *jr, unsigned status, const char *msg)
{
	if (jr->status)
		return;
	jr->status = status;
	strbuf_addstr(&jr->err, msg);
}

static int valid_id(const char *id, size_t len)
{
	if (!len || len >= 24)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') ||
		      (id[i] >= '0' && id[i] <= '9')))
			return 0;
	return 1;
}

int jobs_route(const char *method, const char *url, struct request *r)
{
	static const struct {
		const char *sub, *method;
		enum job_op op;
	} subs[] = {
		{ "", "GET", JOP_GET },
		{ "", "DELETE", JOP_DELETE },
		{ "/output", "GET", JOP_OUTPUT },
		{ "/stdin", "POST", JOP_STDIN },
		{ "/signal", "POST", JOP_SIGNAL },
		{ "/resize", "POST", JOP_RESIZE },
		{ "/wait", "GET", JOP_WAIT },
	};
	const char *rest, *slash;
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");

	if (!skip_prefix(url, "/v1/jobs", &rest) || (*rest && *rest != '/'))
		return 0;
	r->job_op = JOP_NONE;
	if (!*rest || !strcmp(rest, "/")) {
		if (get)
			r->job_op = JOP_LIST;
		else if (!strcmp(method, "POST"))
			r->job_op = JOP_CREATE;
		r->status = r->job_op ? 0 : 405;
		return 1;
	}
	rest++;
	slash = strchrnul(rest, '/');
	r->status = 404;
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++) {
		if (strcmp(slash, subs[i].sub))
			continue;
		if (!strcmp(method, subs[i].method) ||
		    (get && !strcmp(subs[i].method, "GET"))) {
			r->job_op = subs[i].op;
			r->status = 0;
			return 1;
		}
		r->status = 405;
	}
	return 1;
}

int jobs_op_takes_json(const struct request *r)
{
	return r->job_op == JOP_CREATE || r->job_op == JOP_SIGNAL ||
	       r->job_op == JOP_RESIZE;
}

int jobs_op_takes_stdin(const struct request *r)
{
	return r->job_op == JOP_STDIN;
}

void jobs_begin(struct MHD_Connection *c, struct request *r)
{
	struct job_req *jr = xcalloc(1, sizeof(*jr));
	const char *id, *end;

	pthread_once(&jobs_once, jobs_init);
	strbuf_init(&jr->err, 0);
	jr->op = r->job_op;
	jr->conn_fd = connection_fd(c);
	r->job = jr;
	if (jr->op == JOP_LIST || jr->op == JOP_CREATE)
		return;
	id = r->url + strlen("/v1/jobs/");
	end = strchrnul(id, '/');
	pthread_mutex_lock(&jobs_lock);
	if (valid_id(id, end - id)) {
		struct strbuf name = STRBUF_INIT;

		strbuf_add(&name, id, end - id);
		jr->j = job_find(name.buf);
		strbuf_release(&name);
	}
	if (jr->j)
		jr->j->refs++;
	if (jr->j && jr->op == JOP_STDIN) {
		const char *eof = MHD_lookup_connection_value(
			c, MHD_GET_ARGUMENT_KIND, "eof");

		jr->eof = eof && (!strcmp(eof, "1") || !strcmp(eof, "true"));
		if (jr->j->stdin_busy)
			jr_fail(jr, 409,
				"another stdin request of this job is in "
				"progress");
		else if (!jr->j->running)
			jr_fail(jr, 409, "the job has ended");
		else if (jr->j->stdin_fd < 0)
			jr_fail(jr, 409, "the job's stdin is closed");
		else
			jr->stdin_busy = jr->j->stdin_busy = 1;
	}
	pthread_mutex_unlock(&jobs_lock);
	if (!jr->j) {
		struct strbuf msg = STRBUF_INIT;

		strbuf_addf(&msg, "no job '%.*s'",
			    (int)(end - id < 64 ? end - id : 64), id);
		jr_fail(jr, 404, msg.buf);
		strbuf_release(&msg);
	}
}

/* Write all of buf to the job's stdin, waiting while the pipe is full. */
static void stdin_write(struct job_req *jr, const char *buf, size_t len)
{
	struct job *j = jr->j;

	while (len && !jr->status) {
		struct pollfd p[2] = { { .fd = j->stdin_fd, .events = POLLOUT },
				       { .fd = jr->conn_fd,
					 .events = POLLRDHUP } };
		ssize_t n;

		if (!__atomic_load_n(&j->running, __ATOMIC_ACQUIRE)) {
			jr_fail(jr, 409, "the job has ended");
			return;
		}
		n = write(j->stdin_fd, buf, len);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (poll(p, jr->conn_fd >= 0 ? 2 : 1, 500) > 0 &&
			    (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR))) {
				jr_fail(jr, 400, "client went away");
				return;
			}
			continue;
		}
		jr_fail(jr, 409, "the job closed its stdin");
	}
}

void jobs_take(struct request *r, const char *data, size_t len)
{
	struct job_req *jr = r->job;

	if (!jr || jr->status)
		return;
	if (jr->op == JOP_STDIN) {
		stdin_write(jr, data, len);
		return;
	}
	if (r->body.len + len > JOB_BODY_MAX && jr->op != JOP_CREATE)
		r->too_large = 1;
	else if (r->body.len + len > UPSTREAM_JSON_LIMIT)
		r->too_large = 1;
	else
		strbuf_add(&r->body, data, len);
}

void jobs_shutdown(void)
{
	pthread_mutex_lock(&jobs_lock);
	for (struct job *j = jobs_head; j; j = j->next) {
		while (j->nr_segs)
			seg_drop(j);
		if (j->dir.len)
			rmdir(j->dir.buf);
	}
	pthread_mutex_unlock(&jobs_lock);
}

void jobs_release(struct request *r)
{
	struct job_req *jr = r->job;

	if (!jr)
		return;
	if (jr->j) {
		pthread_mutex_lock(&jobs_lock);
		if (jr->stdin_busy)
			jr->j->stdin_busy = 0;
		job_unref(jr->j);
		pthread_mutex_unlock(&jobs_lock);
	}
	strbuf_release(&jr->err);
	free(jr);
	r->job = NULL;
}

static enum MHD_Result no_content(struct MHD_Connection *c, struct request *r)
{
	return reply(
		c, r, 204,
		MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT));
}

/* POST /v1/jobs */
static enum MHD_Result job_create(struct MHD_Connection *c, struct request *r)
{
	struct job *j = xcalloc(1, sizeof(*j));
	struct strbuf err = STRBUF_INIT;
	unsigned status = parse_exec_body(r, &j->p, &err);
	enum MHD_Result ret;
	pthread_attr_t attr;
	pthread_t t;
	int64_t v;
	int rc, fd;

	j->stdin_fd = -1;
	strbuf_init(&j->dir, 0);
	strbuf_init(&j->carry[0], 0);
	strbuf_init(&j->carry[1], 0);
	exec_result_init(&j->res);
	j->keep = JOB_KEEP_DEFAULT;
	if (!status && j->p.req.stdin_data) {
		status = 400;
		strbuf_addstr(&err, "a job takes stdin through "
				    "POST /v1/jobs/<id>/stdin, not \"stdin\"");
	}
	if (!status) {
		rc = json_object_int(j->p.json, "output_keep_bytes", &v);
		if (rc < 0 || (rc > 0 && (v < JOB_KEEP_MIN ||
					  (uint64_t)v > JOB_KEEP_DEFAULT))) {
			status = 400;
			strbuf_addf(&err,
				    "output_keep_bytes must be an integer "
				    "from %d to %" PRIu64,
				    JOB_KEEP_MIN, JOB_KEEP_DEFAULT);
		} else if (rc > 0) {
			j->keep = (uint64_t)v;
		}
	}
	if (!status && json_object_int(j->p.json, "wait_delay_ms", &v) == 0)
		/* a job is running while its output is held open */
		j->p.req.wait_delay_ms = 0;
	if (status) {
		ret = reply_error(c, r, status, "%s", err.buf);
		goto fail;
	}
	pthread_mutex_lock(&jobs_lock);
	rc = jobs_make_room();
	if (!rc)
		jobs_alloc++;
	pthread_mutex_unlock(&jobs_lock);
	if (rc) {
		ret = reply_error(c, r, 429,
				  "too many jobs: %d are running (end or "
				  "DELETE one)",
				  JOBS_MAX);
		goto fail;
	}
	if (job_make_dir(j) < 0) {
		pthread_mutex_lock(&jobs_lock);
		jobs_alloc--;
		pthread_mutex_unlock(&jobs_lock);
		ret = reply_error(c, r, 500,
				  "cannot make the job's output directory: %s",
				  strerror(errno));
		goto fail;
	}
	j->p.req.stdin_stream = 1;
	j->p.req.stream_cap = 1; /* everything goes to the files */
	j->p.req.on_output = job_output;
	j->p.req.data = j;
	j->tty = j->p.req.tty;
	j->started_ms = (int64_t)epoch_ms();
	command_start(&j->p, &j->proc);
	j->pgid = exec_pgid(j->proc);
	fd = exec_stdin_fd(j->proc);
	if (fd >= 0)
		j->stdin_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	/* a pipe: ours is now the only write end, closing it is EOF */
	if (!j->tty)
		exec_stdin_close(j->proc);
	j->running = 1;
	j->refs = 2; /* the list and the pump */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_mutex_lock(&jobs_lock);
	if (pthread_create(&t, &attr, job_pump, j)) {
		pthread_mutex_unlock(&jobs_lock);
		exec_cancel(j->proc, "cancelled");
		job_pump(j); /* reaps it here, drops the pump's ref */
		pthread_mutex_lock(&jobs_lock);
	}
	{
		struct job **pp = &jobs_head;

		while (*pp)
			pp = &(*pp)->next;
		*pp = j;
	}
	pthread_mutex_unlock(&jobs_lock);
	pthread_attr_destroy(&attr);
	strbuf_release(&err);
	return reply_job(c, r, 201, j);
fail:
	strbuf_release(&err);
	j->stdin_fd = -1;
	job_free(j);
	return ret;
}

static enum MHD_Result job_list(struct MHD_Connection *c, struct request *r)
{
	struct strbuf body = STRBUF_INIT;

	strbuf_addch(&body, '[');
	pthread_mutex_lock(&jobs_lock);
	for (struct job *j = jobs_head; j; j = j->next) {
		if (body.len > 1)
			strbuf_addch(&body, ',');
		job_json(&body, j);
	}
	pthread_mutex_unlock(&jobs_lock);
	strbuf_addch(&body, ']');
	return reply_json(c, r, 200, &body);
}

static const struct {
	const char *name;
	int sig;
} job_signals[] = {
	{ "HUP", SIGHUP },   { "INT", SIGINT },	    { "QUIT", SIGQUIT },
	{ "KILL", SIGKILL }, { "USR1", SIGUSR1 },   { "USR2", SIGUSR2 },
	{ "TERM", SIGTERM }, { "CONT", SIGCONT },   { "STOP", SIGSTOP },
	{ "TSTP", SIGTSTP }, { "WINCH", SIGWINCH }, { "ALRM", SIGALRM },
	{ "PIPE", SIGPIPE }, { "ABRT", SIGABRT },
};

/* A signal from "TERM", "SIGTERM", "15" or 15; 0 if none. */
static int parse_signal(json_t *v)
{
	const char *s;

	if (json_is_integer(v)) {
		json_int_t n = json_integer_value(v);
		return n >= 1 && n <= SIGRTMAX ? (int)n : 0;
	}
	if (!json_is_string(v))
		return 0;
	s = json_string_value(v);
	if (*s >= '1' && *s <= '9') {
		char *end;
		long n = strtol(s, &end, 10);
		return !*end && n >= 1 && n <= SIGRTMAX ? (int)n : 0;
	}
	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < ARRAY_SIZE(job_signals); i++)
		if (!strcmp(s, job_signals[i].name))
			return job_signals[i].sig;
	return 0;
}

static enum MHD_Result job_signal(struct MHD_Connection *c, struct request *r,
				  struct job *j)
{
	struct strbuf perr = STRBUF_INIT;
	json_t *body;
	int sig = 0, sent = -1;

	if (r->too_large)
		return reply_error(c, r, 413, "request body too large");
	body = json_parse(r->body.buf, r->body.len, &perr);
	if (json_is_object(body))
		sig = parse_signal(json_object_get(body, "signal"));
	json_decref(body);
	strbuf_release(&perr);
	if (!sig)
		return reply_error(c, r, 400,
				   "want {\"signal\": a name such as \"TERM\" "
				   "or a number}");
	pthread_mutex_lock(&jobs_lock);
	if (j->running && !j->finishing && j->pgid > 0)
		sent = kill(-j->pgid, sig);
	pthread_mutex_unlock(&jobs_lock);
	if (sent < 0)
		return reply_error(c, r, 409, "job '%s' has ended", j->id);
	return no_content(c, r);
}

/*
 * POST /v1/jobs/<id>/resize {"cols":N,"rows":M}: the size of a job's
 * terminal (TIOCSWINSZ; the job gets SIGWINCH), as the resize control
 * message of GET /v1/exec does for an interactive command.
 */
static enum MHD_Result job_resize(struct MHD_Connection *c, struct request *r,
				  struct job *j)
{
	struct strbuf perr = STRBUF_INIT;
	json_int_t cols = 0, rows = 0;
	json_t *body;
	int done = -1, tty;

	if (r->too_large)
		return reply_error(c, r, 413, "request body too large");
	body = json_parse(r->body.buf, r->body.len, &perr);
	strbuf_release(&perr);
	if (json_is_object(body) &&
	    json_is_integer(json_object_get(body, "cols")) &&
	    json_is_integer(json_object_get(body, "rows"))) {
		cols = json_integer_value(json_object_get(body, "cols"));
		rows = json_integer_value(json_object_get(body, "rows"));
	}
	json_decref(body);
	if (cols < 1 || cols > 65535 || rows < 1 || rows > 65535)
		return reply_error(c, r, 400,
				   "want {\"cols\": 1 to 65535, \"rows\": 1 "
				   "to 65535}");
	pthread_mutex_lock(&jobs_lock);
	tty = j->tty;
	if (tty && j->running && !j->finishing)
		done = exec_resize(j->proc, (unsigned)cols, (unsigned)rows);
	pthread_mutex_unlock(&jobs_lock);
	if (!tty)
		return reply_error(c, r, 409, "job '%s' has no terminal",
				   j->id);
	if (done < 0)
		return reply_error(c, r, 409, "job '%s' has ended", j->id);
	return no_content(c, r);
}

static enum MHD_Result job_stdin_done(struct MHD_Connection *c,
				      struct request *r, struct job_req *jr)
{
	struct job *j = jr->j;

	if (!jr->status && jr->eof) {
		pthread_mutex_lock(&jobs_lock);
		if (j->stdin_fd >= 0 && j->tty) {
			/* the terminal's end-of-file character (VEOF) */
			(void)!write(j->stdin_fd, "\004", 1);
		} else if (j->stdin_fd >= 0) {
			close(j->stdin_fd);
			j->stdin_fd = -1;
		}
		pthread_mutex_unlock(&jobs_lock);
	}
	/* the claim ends before the answer goes out (as exec-input's) */
	pthread_mutex_lock(&jobs_lock);
	if (jr->stdin_busy) {
		j->stdin_busy = 0;
		jr->stdin_busy = 0;
	}
	pthread_mutex_unlock(&jobs_lock);
	if (jr->status)
		return reply_error(c, r, jr->status, "%s", jr->err.buf);
	return no_content(c, r);
}

/* A non-negative integer query argument; 0 (absent: *v untouched) or -1. */
static int query_uint(struct MHD_Connection *c, const char *name, uint64_t *v)
{
	const char *arg =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
	char *end;

	if (!arg)
		return 0;
	errno = 0;
	*v = strtoull(arg, &end, 10);
	if (!*arg || *end || errno || *arg == '-')
		return -1;
	return 0;
}

static int hung_up(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };

	return fd >= 0 && poll(&p, 1, 0) > 0 &&
	       (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static enum MHD_Result job_wait(struct MHD_Connection *c, struct request *r,
				struct job_req *jr)
{
	uint64_t ms = JOB_WAIT_MAX_MS, deadline;
	struct job *j = jr->j;
	int running;

	if (query_uint(c, "timeout_ms", &ms) < 0 || ms > JOB_WAIT_MAX_MS)
		return reply_error(c, r, 400, "timeout_ms: want 0 to %d (ms)",
				   JOB_WAIT_MAX_MS);
	deadline = monotonic_ms() + ms;
	pthread_mutex_lock(&jobs_lock);
	while (j->running && !j->forgotten && monotonic_ms() < deadline &&
	       !hung_up(jr->conn_fd)) {
		uint64_t left = deadline - monotonic_ms();
		jobs_wait(left > 500 ? 500 : (int64_t)left);
	}
	running = j->running;
	pthread_mutex_unlock(&jobs_lock);
	return reply_job(c, r, running ? 408 : 200, j);
}

/* ---- GET /v1/jobs/<id>/output ---- */

struct job_reader {
	struct job *j; /* referenced */
	uint64_t off;
	int follow;
	int done;
	struct strbuf pending;
	size_t pos;
	uint64_t last_sent_ms;
	/* where the record holding off starts, to read on without a scan */
	unsigned cseq;
	off_t cpos;
	uint64_t cbase;
	int cvalid;
};

/*
 * Under jobs_lock: the events from rd->off on, up to JOB_READ_CHUNK
 * bytes of them, into rd->pending.
 */
static void reader_fill(struct job_reader *rd)
{
	struct job *j = rd->j;
	char *buf = NULL;

	while (rd->pending.len < JOB_READ_CHUNK && rd->off < j->out_total) {
		uint64_t first = j->nr_segs ? j->segs[0].base : j->out_total;
		struct job_seg *s = NULL;
		unsigned char hdr[JOB_HDR];
		uint32_t len;
		off_t pos;
		uint64_t base;

		if (rd->off < first) {
			exec_event_add_trimmed(&rd->pending, first - rd->off,
					       first);
			rd->off = first;
			continue;
		}
		for (size_t i = 0; i < j->nr_segs; i++)
			if (rd->off < j->segs[i].base + j->segs[i].data) {
				s = &j->segs[i];
				break;
			}
		if (!s)
			break;
		if (rd->cvalid && rd->cseq == s->seq && rd->cbase <= rd->off) {
			pos = rd->cpos;
			base = rd->cbase;
		} else {
			pos = 0;
			base = s->base;
		}
		for (;;) {
			if (pos + JOB_HDR > s->size ||
			    pread(s->fd, hdr, JOB_HDR, pos) != JOB_HDR ||
			    hdr[0] != 'J' || (hdr[1] != 1 && hdr[1] != 2))
				goto corrupt;
			memcpy(&len, hdr + 4, 4);
			if (len > JOB_REC_MAX || pos + JOB_HDR + len > s->size)
				goto corrupt;
			if (rd->off < base + len)
				break;
			base += len;
			pos += JOB_HDR + len;
		}
		{
			size_t skip = rd->off - base, n = len - skip;

			if (!buf)
				buf = xmalloc(JOB_REC_MAX);
			if (pread(s->fd, buf, n, pos + JOB_HDR + skip) !=
			    (ssize_t)n)
				goto corrupt;
			exec_event_add_output(&rd->pending, hdr[1], buf, n,
					      (int64_t)rd->off);
			rd->off += n;
			rd->cvalid = 1;
			rd->cseq = s->seq;
			rd->cpos = pos + JOB_HDR + len;
			rd->cbase = base + len;
		}
		continue;
	corrupt:
		/* what the sandbox did to the file: skip the rest of it */
		rd->cvalid = 0;
		exec_event_add_trimmed(&rd->pending,
				       s->base + s->data - rd->off,
				       s->base + s->data);
		rd->off = s->base + s->data;
	}
	free(buf);
}

static ssize_t reader_cb(void *cls, uint64_t unused, char *out, size_t max)
{
	struct job_reader *rd = cls;
	size_t n;

	while (rd->pos == rd->pending.len) {
		struct job *j = rd->j;

		strbuf_reset(&rd->pending);
		rd->pos = 0;
		if (rd->done)
			return MHD_CONTENT_READER_END_OF_STREAM;
		pthread_mutex_lock(&jobs_lock);
		reader_fill(rd);
		if (!rd->pending.len && rd->off >= j->out_total) {
			if (!j->running && !j->forgotten) {
				exec_event_begin_exit(&rd->pending, &j->res);
				strbuf_addf(&rd->pending,
					    ",\"output_bytes\":%" PRIu64,
					    j->out_total);
				exec_event_end_exit(&rd->pending, 1);
				rd->done = 1;
			} else if (!rd->follow || j->forgotten) {
				rd->done = 1;
			} else {
				jobs_wait((int64_t)rt.heartbeat_ms);
				reader_fill(rd);
				if (!rd->pending.len && j->running &&
				    monotonic_ms() - rd->last_sent_ms >=
					    rt.heartbeat_ms)
					exec_event_add_simple(
						&rd->pending,
						EXEC_EVENT_HEARTBEAT);
			}
		}
		pthread_mutex_unlock(&jobs_lock);
	}
	n = rd->pending.len - rd->pos;
	if (n > max)
		n = max;
	memcpy(out, rd->pending.buf + rd->pos, n);
	rd->pos += n;
	rd->last_sent_ms = monotonic_ms();
	return n;
}

static void reader_free(void *cls)
{
	struct job_reader *rd = cls;

	pthread_mutex_lock(&jobs_lock);
	job_unref(rd->j);
	pthread_mutex_unlock(&jobs_lock);
	strbuf_release(&rd->pending);
	free(rd);
}

static enum MHD_Result job_output_get(struct MHD_Connection *c,
				      struct request *r, struct job *j)
{
	const char *follow =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "follow");
	struct job_reader *rd;
	struct MHD_Response *resp;
	uint64_t since = 0, total;

	if (query_uint(c, "since", &since) < 0)
		return reply_error(c, r, 400, "since: not a byte offset");
	if (follow && strcmp(follow, "0") && strcmp(follow, "1") &&
	    strcmp(follow, "true") && strcmp(follow, "false"))
		return reply_error(c, r, 400, "follow: want 0 or 1");
	pthread_mutex_lock(&jobs_lock);
	total = j->out_total;
	if (since <= total)
		j->refs++;
	pthread_mutex_unlock(&jobs_lock);
	if (since > total)
		return reply_error(c, r, 400,
				   "since: past the end of the output "
				   "(%" PRIu64 " bytes so far)",
				   total);
	rd = xcalloc(1, sizeof(*rd));
	rd->j = j;
	rd->off = since;
	rd->follow =
		follow && (!strcmp(follow, "1") || !strcmp(follow, "true"));
	rd->last_sent_ms = monotonic_ms();
	strbuf_init(&rd->pending, 0);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024,
						 reader_cb, rd, reader_free);
	if (!resp) {
		reader_free(rd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "application/x-ndjson");
	MHD_add_response_header(resp, "Cache-Control", "no-cache");
	return reply(c, r, 200, resp);
}

enum MHD_Result handle_jobs(struct MHD_Connection *c, struct request *r)
{
	struct job_req *jr = r->job;

	if (!jr)
		return MHD_NO;
	if (jr->status && jr->op != JOP_STDIN)
		return reply_error(c, r, jr->status, "%s", jr->err.buf);
	switch (jr->op) {
	case JOP_LIST:
		return job_list(c, r);
	case JOP_CREATE:
		return job_create(c, r);
	case JOP_GET:
		return reply_job(c, r, 200, jr->j);
	case JOP_DELETE:
		pthread_mutex_lock(&jobs_lock);
		if (!jr->j->forgotten)
			job_forget(jr->j);
		pthread_mutex_unlock(&jobs_lock);
		return no_content(c, r);
	case JOP_OUTPUT:
		return job_output_get(c, r, jr->j);
	case JOP_STDIN:
		return job_stdin_done(c, r, jr);
	case JOP_SIGNAL:
		return job_signal(c, r, jr->j);
	case JOP_RESIZE:
		return job_resize(c, r, jr->j);
	case JOP_WAIT:
		return job_wait(c, r, jr);
	case JOP_NONE:
		break;
	}
	return reply_error(c, r, 404, "not found");
}
