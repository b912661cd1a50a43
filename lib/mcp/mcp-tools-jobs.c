#include "compat.h"
#include "dir.h"
#include "json.h"
#include "mcp/mcp-environment.h"
#include "mcp/mcp.h"
#include "mcp/mcp-result.h"
#include "quote.h"
#include "session/jobs.h"
#include "session/session.h"
#include "strbuf.h"
#include "usage.h"
#include "utf8.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

/*
 * Toolset "jobs" (Documentation/protocol/mcp.md "Toolset jobs", seed 003:
 * sandrun's MCP tools): execute_python, execute_javascript, execute_bash run
 * one job each in a fresh sandbox (no network, 512 MiB memory, 5 minute limit)
 * that is deleted after the job; check_job_status and get_job_logs look at jobs
 * of this MCP session.
 *
 * Status: "queued" (accepted, waiting for its turn; sandbox not asked
 * for yet), "running", "completed" (the program ran and exited,
 * whatever its exit code: exit_code says how), "failed" (it could not
 * run: the sandbox did not open, the transport failed, it was cancelled
 * while queued; or it was killed: timeout, oom, cancelled, signal;
 * reason says which).
 *
 * Limits per MCP session: at most jobs_max_concurrent jobs running;
 * more wait "queued", up to JOB_QUEUE_MAX of them, and start in the
 * order they came when a running one ends (as sandrun queues, issue
 * 17); a queued job that is cancelled, or whose session ends, never
 * starts. A CPU budget of jobs_cpu_budget_ms CPU-ms over the finished
 * jobs of the last 60 s, checked when a job is submitted. Over the
 * queue or the budget: "rate limit exceeded, retry after N s".
 * GOSBX_JOBS_CPU_BUDGET_MS and GOSBX_JOBS_MAX_CONCURRENT override the
 * options (tests).
 *
 * Every job has its thread from the start; a queued one waits on
 * st->cond for its turn (may_start_locked), so a queued job costs a
 * thread but no sandbox. A job runs as a job of the runtime's `jobs`
 * extension in its sandbox (lib/session/jobs.h): the thread writes the
 * program, starts it detached, feeds and closes its stdin, then follows
 * its output until it ended.
 *
 * With --persistent (issue 21) each job also has a record,
 * $XDG_STATE_HOME/gosbx/mcp-jobs/<job_id>.json (directory 0700, files
 * 0600, written to a temporary file and renamed): job_id, claim,
 * runtime_job, language, submitted, status, and once it ended its
 * result. The sandbox is kept while the job runs (a client that goes
 * only disconnects from it) and deleted when it ended, its result being
 * in the record. A restarted server reads the records into "restored"
 * (a state of no MCP session, looked in when a session does not know
 * the id): a running job is followed again in its sandbox, a job that
 * never started is failed ("server restarted"), a finished one answers
 * from its record, removed RECORD_KEEP_S after the job ended.
 */

#define JOB_MEMORY_BYTES ((int64_t)512 << 20)
#define JOB_TIMEOUT_MS (5 * 60 * 1000)
/* removing a job's program file from a shared workdir */
#define JOB_CLEANUP_TIMEOUT_MS 10000
#define WINDOW_MS 60000
#define KEEP_FINISHED 100
#define END_WAIT_MS 30000
/* jobs that may wait "queued" per MCP session, besides those running */
#define JOB_QUEUE_MAX 16
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
#define JOB_QUEUE_MAX_TEXT STRINGIFY(JOB_QUEUE_MAX) /* for RUN_DESC */
/*
 * Output of a running job kept for get_job_logs: its first LIVE_HEAD
 * bytes and the newest up to LIVE_MAX in all, so that a job that
 * writes without end (`yes`) cannot make the server hold it all.
 */
#define LIVE_MAX ((size_t)64 << 10)
#define LIVE_HEAD ((size_t)8192)
/* the most stdin one job takes (the stdin argument), bytes */
#define STDIN_MAX ((size_t)1 << 20)
/* how long a finished job's record is kept, seconds */
#define RECORD_KEEP_S 3600

enum job_status { JOB_QUEUED, JOB_RUNNING, JOB_COMPLETED, JOB_FAILED };
static const char *const status_names[] = { "queued", "running", "completed",
					    "failed" };

enum job_lang { LANG_PYTHON, LANG_JS, LANG_BASH };
static const char *const lang_names[] = { "python", "javascript", "bash" };
/* the program's file in /app ("main.<ext>") and what runs it, per language */
static const char *const exts[] = { "py", "js", "sh" };
static const char *const interps[] = { "python3", "node", "bash" };

struct job {
	char id[17]; /* 16 hex digits */
	enum job_lang lang;
	char *code;
	size_t code_len;
	char *stdin_data; /* or NULL */
	size_t stdin_len;
	char *claim;	   /* its sandbox, once opened (owned) */
	char *rid;	   /* the runtime's job id, once started (owned) */
	int64_t submitted; /* seconds since 1970 */
	int64_t ended;	   /* seconds since 1970; 0 while not done */
	int restored;	   /* read from a record: attach, do not start */
	struct session_result *res; /* the job thread's, while it runs */
	enum job_status status;
	int exit_code;		   /* valid when completed */
	const char *reason;	   /* static */
	int signal;		   /* the signal that ended it, else 0 */
	char *error;		   /* why it failed to run, or NULL */
	struct strbuf out, err;	   /* so far while running (live_add) */
	size_t out_seen, err_seen; /* bytes written so far while running */
	int out_truncated, err_truncated;
	int64_t cpu_ms, peak_rss_kb, duration_ms;
	uint64_t finished_ms;	      /* monotonic; 0 while not done */
	volatile sig_atomic_t cancel; /* kill it */
	volatile sig_atomic_t detach; /* leave it running (--persistent) */
	volatile sig_atomic_t stop;   /* cancel or detach */
	pthread_t thread;
	int joined;
	int held; /* a wait=true caller still reads it */
	/* longest run (ms): the timeout argument, else JOB_TIMEOUT_MS */
	int64_t timeout_ms;
	struct jobs_state *st;
};

struct cpu_use {
	uint64_t at_ms;
	int64_t cpu_ms;
};

struct jobs_state {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a job finished, or a caller left */
	struct job **jobs;
	size_t nr, alloc;
	struct cpu_use *uses; /* finished jobs of the window */
	size_t nr_uses, alloc_uses;
	int active;  /* queued or running */
	int running; /* of those, running (at most max_concurrent) */
	int waiters; /* callers waiting for a job */
	int ending;
	/* what the options say, read once */
	int64_t budget_ms;
	int max_concurrent;
	int persistent; /* --persistent: records, sandboxes kept */
	struct session_opts sandbox;
};

/* the jobs of records read at start (--persistent), and its lock */
static struct jobs_state *restored;
static pthread_mutex_t restored_lock = PTHREAD_MUTEX_INITIALIZER;
static void restore_records(const struct mcp_options *o);

static const struct mcp_toolset *self(void)
{
	return &mcp_toolset_jobs;
}

static int64_t env_int(const char *name, int64_t dflt)
{
	const char *v = getenv(name);
	char *end;
	long long n;

	if (!v || !*v)
		return dflt;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || *end || n < 0)
		return dflt;
	return n;
}

/* The session's state, created on first use. */
static struct jobs_state *get_state(struct mcp_session *s)
{
	void **slot;
	struct jobs_state *st;

	mcp_session_lock(s);
	slot = mcp_session_state(s, self());
	st = *slot;
	if (!st) {
		const struct mcp_options *o = mcp_session_options(s);
		st = xcalloc(1, sizeof(*st));
		pthread_mutex_init(&st->lock, NULL);
		pthread_cond_init(&st->cond, NULL);
		st->budget_ms = o->jobs_cpu_budget_ms > 0
					? o->jobs_cpu_budget_ms
					: 10000;
		st->max_concurrent =
			o->jobs_max_concurrent > 0 ? o->jobs_max_concurrent : 2;
		st->budget_ms =
			env_int("GOSBX_JOBS_CPU_BUDGET_MS", st->budget_ms);
		st->max_concurrent = (int)env_int("GOSBX_JOBS_MAX_CONCURRENT",
						  st->max_concurrent);
		st->sandbox = o->sandbox;
		st->persistent = o->persistent;
		*slot = st;
	}
	mcp_session_unlock(s);
	if (st->persistent)
		restore_records(mcp_session_options(s));
	return st;
}

static void job_free(struct job *j)
{
	free(j->code);
	free(j->stdin_data);
	free(j->claim);
	free(j->rid);
	free(j->error);
	strbuf_release(&j->out);
	strbuf_release(&j->err);
	free(j);
}

static struct job *find_job_locked(struct jobs_state *st, const char *id)
{
	for (size_t i = 0; i < st->nr; i++)
		if (!strcmp(st->jobs[i]->id, id))
			return st->jobs[i];
	return NULL;
}

/* Join the threads of finished jobs (they no longer take the lock). */
static void reap_locked(struct jobs_state *st)
{
	for (size_t i = 0; i < st->nr; i++) {
		struct job *j = st->jobs[i];
		if (j->finished_ms && !j->joined) {
			pthread_join(j->thread, NULL);
			j->joined = 1;
		}
	}
}

/* Keep at most KEEP_FINISHED finished jobs (the oldest go). */
static void prune_locked(struct jobs_state *st)
{
	size_t finished = 0;

	for (size_t i = 0; i < st->nr; i++)
		if (st->jobs[i]->finished_ms && st->jobs[i]->joined)
			finished++;
	for (size_t i = 0; i < st->nr && finished > KEEP_FINISHED;) {
		struct job *j = st->jobs[i];
		if (!j->finished_ms || !j->joined || j->held) {
			i++;
			continue;
		}
		job_free(j);
		memmove(st->jobs + i, st->jobs + i + 1,
			(st->nr - i - 1) * sizeof(*st->jobs));
		st->nr--;
		finished--;
	}
}

/*
 * 0 when a new job may start, else the seconds to wait (>= 1) with why
 * in msg. Drops uses older than the window.
 */
static int64_t rate_check_locked(struct jobs_state *st, uint64_t now,
				 struct strbuf *msg)
{
	int64_t sum = 0;
	size_t keep = 0;

	for (size_t i = 0; i < st->nr_uses; i++)
		if (st->uses[i].at_ms + WINDOW_MS > now)
			st->uses[keep++] = st->uses[i];
	st->nr_uses = keep;
	for (size_t i = 0; i < st->nr_uses; i++)
		sum += st->uses[i].cpu_ms;
	if (st->active >= st->max_concurrent + JOB_QUEUE_MAX) {
		strbuf_addf(msg,
			    "%d job%s running and %d queued (limit %d "
			    "running and %d queued per client)",
			    st->running, st->running == 1 ? " is" : "s are",
			    st->active - st->running, st->max_concurrent,
			    JOB_QUEUE_MAX);
		return 1;
	}
	if (sum >= st->budget_ms) {
		/* uses are in finishing order: wait until enough expire */
		int64_t left = sum;
		uint64_t until = now;
		for (size_t i = 0; i < st->nr_uses && left >= st->budget_ms;
		     i++) {
			left -= st->uses[i].cpu_ms;
			until = st->uses[i].at_ms + WINDOW_MS;
		}
		strbuf_addf(msg,
			    "%.1f CPU-seconds used in the last 60 s (budget "
			    "%.1f per minute)",
			    sum / 1000.0, st->budget_ms / 1000.0);
		return until > now ? (int64_t)((until - now + 999) / 1000) : 1;
	}
	return 0;
}

/* ---- running a job ---- */

/*
 * Add output to the live view sb: the first LIVE_HEAD bytes stay, then
 * the newest bytes up to LIVE_MAX in all; *seen counts every byte.
 */
static void live_add(struct strbuf *sb, size_t *seen, const char *buf,
		     size_t len)
{
	size_t room = LIVE_MAX - LIVE_HEAD;

	*seen += len;
	if (sb->len < LIVE_HEAD) {
		size_t n =
			LIVE_HEAD - sb->len < len ? LIVE_HEAD - sb->len : len;

		strbuf_add(sb, buf, n);
		buf += n;
		len -= n;
	}
	if (!len)
		return;
	if (len >= room) {
		/* only the newest bytes of this chunk can stay */
		strbuf_setlen(sb, LIVE_HEAD);
		strbuf_add(sb, buf + len - room, room);
		return;
	}
	if (sb->len + len > LIVE_MAX)
		strbuf_remove(sb, LIVE_HEAD, sb->len + len - LIVE_MAX);
	strbuf_add(sb, buf, len);
}

static int on_output(int stream, const char *buf, size_t len, void *data)
{
	struct job *j = data;

	if (!stream) {
		/* the runtime dropped len bytes we had not read: count them
		 * as stdout's (the elided middle of the head and tail) */
		if (j->res) {
			j->res->out_total += len;
			j->res->out_truncated = 1;
		}
		pthread_mutex_lock(&j->st->lock);
		j->out_seen += len;
		pthread_mutex_unlock(&j->st->lock);
		return j->stop ? -1 : 0;
	}
	if (j->res)
		session_result_add_output(j->res, stream, buf, len);
	pthread_mutex_lock(&j->st->lock);
	if (stream == 1)
		live_add(&j->out, &j->out_seen, buf, len);
	else
		live_add(&j->err, &j->err_seen, buf, len);
	pthread_mutex_unlock(&j->st->lock);
	return j->stop ? -1 : 0;
}

/* Stop waiting for j: kill it, or (detach) leave it running. */
static void job_stop_locked(struct jobs_state *st, struct job *j, int detach)
{
	if (detach)
		j->detach = 1;
	else
		j->cancel = 1;
	j->stop = 1;
	pthread_cond_broadcast(&st->cond);
}

/* ---- records (--persistent) ---- */

/* $XDG_STATE_HOME/gosbx/mcp-jobs, else ~/.local/state/gosbx/mcp-jobs */
static int records_dir(struct strbuf *out)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");

	if (state && *state)
		strbuf_addf(out, "%s/gosbx/mcp-jobs", state);
	else if (home && *home)
		strbuf_addf(out, "%s/.local/state/gosbx/mcp-jobs", home);
	else
		return error("no directory for job records: neither "
			     "XDG_STATE_HOME nor HOME is set");
	return 0;
}

/* The record of j; st->lock held. A new reference. */
static json_t *record_json_locked(const struct job *j)
{
	json_t *o = json_object();

	json_object_set_new(o, "job_id", json_string(j->id));
	if (j->claim)
		json_object_set_new(o, "claim", json_string(j->claim));
	if (j->rid)
		json_object_set_new(o, "runtime_job", json_string(j->rid));
	json_object_set_new(o, "language", json_string(lang_names[j->lang]));
	json_object_set_new(o, "submitted", json_integer(j->submitted));
	json_object_set_new(o, "status", json_string(status_names[j->status]));
	if (j->status != JOB_COMPLETED && j->status != JOB_FAILED)
		return o;
	json_object_set_new(o, "ended", json_integer(j->ended));
	json_object_set_new(o, "exit_code", json_integer(j->exit_code));
	if (j->reason)
		json_object_set_new(o, "reason", json_string(j->reason));
	json_object_set_new(o, "signal", json_integer(j->signal));
	if (j->error)
		json_object_set_new(o, "error", json_string(j->error));
	json_object_set_new(o, "cpu_ms", json_integer(j->cpu_ms));
	json_object_set_new(o, "peak_rss_kb", json_integer(j->peak_rss_kb));
	json_object_set_new(o, "duration_ms", json_integer(j->duration_ms));
	json_object_set_new(o, "stdout",
			    mcp_result_json_string(j->out.buf, j->out.len));
	json_object_set_new(o, "stderr",
			    mcp_result_json_string(j->err.buf, j->err.len));
	json_object_set_new(o, "stdout_truncated",
			    json_boolean(j->out_truncated));
	json_object_set_new(o, "stderr_truncated",
			    json_boolean(j->err_truncated));
	return o;
}

/* Write rec as the record of id (0600, atomically). 0 or -1 with error(). */
static int record_save(const char *id, json_t *rec)
{
	struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT;
	struct strbuf tmp = STRBUF_INIT;
	char *text = json_dumps(rec, JSON_COMPACT);
	int fd, ret = -1;

	if (!text) {
		error("cannot encode the record of job %s", id);
		goto out;
	}
	if (records_dir(&dir) < 0)
		goto out;
	if (mkdir_p(dir.buf, 0700) < 0) {
		error_errno("cannot create '%s'", dir.buf);
		goto out;
	}
	strbuf_addf(&path, "%s/%s.json", dir.buf, id);
	strbuf_addf(&tmp, "%s.tmp", path.buf);
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		error_errno("cannot create '%s'", tmp.buf);
		goto out;
	}
	if (write_in_full(fd, text, strlen(text)) < 0 || fsync(fd) < 0) {
		error_errno("cannot write '%s'", tmp.buf);
		close(fd);
		unlink(tmp.buf);
		goto out;
	}
	close(fd);
	if (rename(tmp.buf, path.buf) < 0) {
		error_errno("cannot rename '%s'", tmp.buf);
		unlink(tmp.buf);
		goto out;
	}
	ret = 0;
out:
	free(text);
	strbuf_release(&dir);
	strbuf_release(&path);
	strbuf_release(&tmp);
	return ret;
}

/* Save j's record when the server keeps them; errors are logged. */
static void record_update(struct job *j)
{
	json_t *rec;

	if (!j->st->persistent)
		return;
	pthread_mutex_lock(&j->st->lock);
	rec = record_json_locked(j);
	pthread_mutex_unlock(&j->st->lock);
	if (record_save(j->id, rec) < 0)
		mcp_log_stderr("jobs: the record of job %s: %s", j->id,
			       last_error());
	json_decref(rec);
}

/*
 * Whether queued job j may start now: a running slot is free and no job
 * submitted before it still waits (st->jobs is in submission order).
 */
static int may_start_locked(const struct jobs_state *st, const struct job *j)
{
	if (st->running >= st->max_concurrent)
		return 0;
	for (size_t i = 0; i < st->nr && st->jobs[i] != j; i++)
		if (st->jobs[i]->status == JOB_QUEUED && !st->jobs[i]->cancel)
			return 0;
	return 1;
}

/*
 * The file that j's code goes to (relative to the workdir) and the
 * command that runs it, into path and cmd. A fresh sandbox has main.<ext>;
 * where every open reaches the one sandbox (url: the runtime at the URL,
 * BACKEND_IMPLICIT_SANDBOX) jobs share its workdir, and each has
 * main-<job id>.<ext>, so that jobs side by side never run each other's
 * code.
 */
static void job_program(const struct job *j, const struct session *sess,
			struct strbuf *path, struct strbuf *cmd)
{
	if (sess->ops && (sess->ops->caps & BACKEND_IMPLICIT_SANDBOX))
		strbuf_addf(path, "main-%s.%s", j->id, exts[j->lang]);
	else
		strbuf_addf(path, "main.%s", exts[j->lang]);
	strbuf_addf(cmd, "%s %s", interps[j->lang], path->buf);
}

/*
 * Where jobs share the one sandbox's workdir (job_program()), remove
 * j's program file once j has ended: the workdir is the user's, and
 * main-<job id>.<ext> would pile up there, one per job. A failure is
 * logged; the job's result stands.
 */
static void job_program_remove(const struct job *j, struct session *sess)
{
	struct session_exec e = { 0 };
	struct session_result r;
	struct strbuf path = STRBUF_INIT, cmd = STRBUF_INIT;

	if (!sess->ops || !(sess->ops->caps & BACKEND_IMPLICIT_SANDBOX))
		return;
	job_program(j, sess, &path, &cmd);
	strbuf_reset(&cmd);
	strbuf_addstr(&cmd, "rm -f -- ");
	sq_quote_buf(&cmd, path.buf);
	e.command = cmd.buf;
	e.timeout_ms = JOB_CLEANUP_TIMEOUT_MS;
	session_result_init(&r);
	if (session_execute(sess, &e, &r))
		mcp_log_stderr("jobs: removing %s of job %s: %s", path.buf,
			       j->id, last_error());
	else if (r.exit_code)
		mcp_log_stderr("jobs: removing %s of job %s: exit status %d: "
			       "%.200s",
			       path.buf, j->id, r.exit_code, r.err.buf);
	session_result_release(&r);
	strbuf_release(&path);
	strbuf_release(&cmd);
}

/*
 * Open j's sandbox and start j in it as a runtime job, its stdin fed
 * and closed; or, for a restored job, reattach to its sandbox. 0, 2
 * when the runtime has no `jobs` extension (an upstream server: the
 * caller runs the job in the foreground), or -1 with why said (the
 * sandbox, if opened, is left in sess).
 */
static int job_begin(struct job *j, struct session *sess, int *opened,
		     struct strbuf *why)
{
	struct jobs_state *st = j->st;
	struct session_opts opts = st->sandbox;
	struct session_exec e = { 0 };
	struct session_file file;
	struct session_result r;
	struct strbuf name = STRBUF_INIT;
	struct strbuf path = STRBUF_INIT, cmd = STRBUF_INIT;
	json_t *rj = NULL;
	int ret = -1;

	/* "job-" and half the id: short for the local socket path */
	strbuf_addf(&name, "job-%.8s", j->id);
	opts.claim = j->restored ? j->claim : NULL;
	opts.name = name.buf;
	opts.keep = st->persistent;
	opts.network = 0;
	opts.memory_bytes = JOB_MEMORY_BYTES;
	opts.memory_set = 1;
	opts.purpose = "mcp-jobs";
	session_result_init(&r);
	if (session_open(sess, &opts) < 0) {
		strbuf_addf(why, "could not open sandbox: %s", last_error());
		goto out;
	}
	*opened = 1;
	/* oom is counted by the host for the local backend */
	session_exec_hook(sess, 0, &r);
	if (j->restored) {
		ret = 0;
		goto out;
	}
	pthread_mutex_lock(&st->lock);
	j->claim = xstrdup(sess->claim);
	pthread_mutex_unlock(&st->lock);
	record_update(j);
	if (!(sess->features & SESSION_FEAT_JOBS)) {
		ret = 2;
		goto out;
	}

	job_program(j, sess, &path, &cmd);
	file.path = path.buf;
	file.data = j->code;
	file.len = j->code_len;
	e.files = &file;
	e.nr_files = 1;
	e.command = ":";
	e.cancel = &j->stop;
	if (session_execute(sess, &e, &r)) {
		strbuf_addf(why, "could not write %s: %s", file.path,
			    last_error());
		goto out;
	}
	session_exec_hook(sess, 0, &r);
	memset(&e, 0, sizeof(e));
	e.command = cmd.buf;
	e.timeout_ms = j->timeout_ms;
	if (session_job_start(sess, &e, &rj) < 0) {
		strbuf_addf(why, "could not start: %s", last_error());
		goto out;
	}
	pthread_mutex_lock(&st->lock);
	j->rid = xstrdup(json_object_str(rj, "id"));
	pthread_mutex_unlock(&st->lock);
	record_update(j);
	if (session_job_stdin(sess, j->rid, j->stdin_data ? j->stdin_data : "",
			      j->stdin_len, 1) < 0) {
		strbuf_addf(why, "could not write its stdin: %s", last_error());
		session_job_delete(sess, j->rid);
		goto out;
	}
	ret = 0;
out:
	json_decref(rj);
	session_result_release(&r);
	strbuf_release(&name);
	strbuf_release(&path);
	strbuf_release(&cmd);
	return ret;
}

/* Record how j ended (ret as session_job_follow's); st->lock held. */
static void job_end_locked(struct job *j, int ret, struct session_result *r,
			   struct strbuf *why)
{
	if (ret < 0) {
		j->status = JOB_FAILED;
		j->reason = "start_failed";
		j->error = strbuf_detach(why, NULL);
	} else {
		/* the complete output replaces what streamed in: the
		 * seed's head and tail of everything the job wrote */
		session_result_head_tail(r);
		strbuf_reset(&j->out);
		strbuf_addbuf(&j->out, &r->out);
		strbuf_reset(&j->err);
		strbuf_addbuf(&j->err, &r->err);
		j->out_truncated = r->out_truncated;
		j->err_truncated = r->err_truncated;
		j->reason = ret == 1 ? "cancelled" : r->reason;
		j->exit_code = ret == 1 ? -1 : r->exit_code;
		j->signal = r->signal > 0 ? r->signal : 0;
		j->status = strcmp(j->reason, "exited") ? JOB_FAILED
							: JOB_COMPLETED;
		j->duration_ms = r->duration_ms;
	}
	j->cpu_ms = r->cpu_ms;
	j->peak_rss_kb = r->peak_rss_kb;
	j->ended = (int64_t)time(NULL);
}

/*
 * Run j in the foreground through session_execute(), as the toolset did
 * before runtime jobs, where the runtime has none. As session_execute().
 */
static int run_inline(struct job *j, struct session *sess,
		      struct session_result *r)
{
	struct session_exec e = { 0 };
	struct session_file file;
	struct strbuf path = STRBUF_INIT, cmd = STRBUF_INIT;
	int ret;

	/* session_execute() keeps the output in r itself */
	pthread_mutex_lock(&j->st->lock);
	j->res = NULL;
	pthread_mutex_unlock(&j->st->lock);
	job_program(j, sess, &path, &cmd);
	file.path = path.buf;
	file.data = j->code;
	file.len = j->code_len;
	e.files = &file;
	e.nr_files = 1;
	e.command = cmd.buf;
	e.timeout_ms = j->timeout_ms;
	e.stdin_data = j->stdin_data;
	e.stdin_len = j->stdin_len;
	e.on_output = on_output;
	e.data = j;
	e.cancel = &j->stop;
	e.keep_bytes = r->keep; /* head and tail (run_job()) */
	ret = session_execute(sess, &e, r);
	strbuf_release(&path);
	strbuf_release(&cmd);
	return ret;
}

static void run_job(struct job *j)
{
	struct jobs_state *st = j->st;
	struct session_result r;
	struct session sess;
	struct strbuf why = STRBUF_INIT;
	int ret = -1, ran, ended = 0, opened = 0, detached = 0;

	session_result_init(&r);
	/* job_end_locked() keeps head and tail only, of either way of
	 * running: session_execute(), or on_output() adding what
	 * session_job_follow() reads */
	r.keep = SESSION_KEEP_HEAD_TAIL;
	pthread_mutex_lock(&st->lock);
	/* a cancel (session end, the caller's) broadcasts on st->cond */
	while (!j->stop && !may_start_locked(st, j))
		pthread_cond_wait(&st->cond, &st->lock);
	ran = !j->stop;
	if (ran) {
		st->running++;
		j->status = JOB_RUNNING;
	}
	j->res = &r;
	pthread_mutex_unlock(&st->lock);

	if (!ran) {
		strbuf_addstr(&why, "cancelled before it started");
	} else if (j->restored && !j->rid) {
		/* the server stopped between opening and starting: the
		 * sandbox, if any, goes */
		if (j->claim)
			job_begin(j, &sess, &opened, &why);
		strbuf_reset(&why);
		strbuf_addstr(&why, "server restarted before the job started");
	} else {
		int begun;

		record_update(j);
		begun = job_begin(j, &sess, &opened, &why);
		if (begun == 2) {
			ret = run_inline(j, &sess, &r);
			if (ret < 0)
				strbuf_addf(&why, "execute failed: %s",
					    last_error());
		} else if (!begun) {
			ret = session_job_follow(&sess, j->rid, 0, on_output, j,
						 &j->stop, &r, &ended);
			if (ret == 0 && ended)
				session_exec_hook(&sess, 1, &r);
			if (ret < 0)
				strbuf_addf(&why,
					    "following the job failed: "
					    "%s",
					    last_error());
			else if (ret == 0 && !ended)
				ret = -1, strbuf_addstr(&why, "its output "
							      "ended before "
							      "it did");
		}
	}
	if (ret == 1 && j->detach && !j->cancel && j->rid) {
		/* --persistent, the client went: leave it to a restart */
		session_disconnect(&sess);
		detached = 1;
	} else if (opened) {
		if ((ret == 1 || ret < 0) && j->rid)
			session_job_delete(&sess, j->rid);
		job_program_remove(j, &sess);
		sess.keep = 0;
		if (session_close(&sess) < 0)
			mcp_log_stderr("jobs: closing the sandbox of job %s: "
				       "%s",
				       j->id, last_error());
	}

	pthread_mutex_lock(&st->lock);
	if (!detached)
		job_end_locked(j, ret, &r, &why);
	j->res = NULL;
	pthread_mutex_unlock(&st->lock);
	/* before finished_ms: a finished job's thread takes no lock */
	if (!detached)
		record_update(j);
	pthread_mutex_lock(&st->lock);
	j->finished_ms = monotonic_ms();
	if (j->finished_ms == 0)
		j->finished_ms = 1;
	if (j->cpu_ms > 0) {
		ALLOC_GROW(st->uses, st->nr_uses + 1, st->alloc_uses);
		st->uses[st->nr_uses].at_ms = j->finished_ms;
		st->uses[st->nr_uses].cpu_ms = j->cpu_ms;
		st->nr_uses++;
	}
	if (ran)
		st->running--;
	st->active--;
	/* wakes the callers, and the next queued job */
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
	session_result_release(&r);
	strbuf_release(&why);
}

static void *job_thread(void *arg)
{
	run_job(arg);
	return NULL;
}

/* ---- restart (--persistent) ---- */

static int is_job_id(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n == 16 && !s[n];
}

/* A job from record rec, or NULL for a record that is gone or bad. */
static struct job *job_from_record(json_t *rec, const char *id, int64_t now)
{
	const char *status = json_object_str(rec, "status");
	const char *lang = json_object_str(rec, "language");
	const char *v;
	struct job *j;
	int64_t n;

	if (!status || !lang ||
	    strcmp(json_object_str(rec, "job_id")
			   ? json_object_str(rec, "job_id")
			   : "",
		   id))
		return NULL;
	j = xcalloc(1, sizeof(*j));
	memcpy(j->id, id, 17);
	j->lang = !strcmp(lang, "javascript") ? LANG_JS
		  : !strcmp(lang, "bash")     ? LANG_BASH
					      : LANG_PYTHON;
	strbuf_init(&j->out, 0);
	strbuf_init(&j->err, 0);
	j->cpu_ms = j->peak_rss_kb = -1;
	j->restored = 1;
	if ((v = json_object_str(rec, "claim")))
		j->claim = xstrdup(v);
	if ((v = json_object_str(rec, "runtime_job")))
		j->rid = xstrdup(v);
	if (json_object_int(rec, "submitted", &n) > 0)
		j->submitted = n;
	j->timeout_ms = JOB_TIMEOUT_MS;
	if (!strcmp(status, "queued") || !strcmp(status, "running")) {
		j->status = j->rid ? JOB_RUNNING : JOB_QUEUED;
		return j;
	}
	/* finished: its result, while it is kept */
	if (json_object_int(rec, "ended", &n) <= 0 || n + RECORD_KEEP_S < now) {
		job_free(j);
		return NULL;
	}
	j->ended = n;
	j->status = strcmp(status, "completed") ? JOB_FAILED : JOB_COMPLETED;
	j->finished_ms = 1;
	j->joined = 1;
	if (json_object_int(rec, "exit_code", &n) > 0)
		j->exit_code = (int)n;
	if (json_object_int(rec, "signal", &n) > 0)
		j->signal = (int)n;
	if (json_object_int(rec, "cpu_ms", &n) > 0)
		j->cpu_ms = n;
	if (json_object_int(rec, "peak_rss_kb", &n) > 0)
		j->peak_rss_kb = n;
	if (json_object_int(rec, "duration_ms", &n) > 0)
		j->duration_ms = n;
	/* reason points to static text: keep the known ones */
	v = json_object_str(rec, "reason");
	j->reason = !v				 ? NULL
		    : !strcmp(v, "exited")	 ? "exited"
		    : !strcmp(v, "timeout")	 ? "timeout"
		    : !strcmp(v, "oom")		 ? "oom"
		    : !strcmp(v, "cancelled")	 ? "cancelled"
		    : !strcmp(v, "start_failed") ? "start_failed"
						 : "signaled";
	if ((v = json_object_str(rec, "error")))
		j->error = xstrdup(v);
	if ((v = json_object_str(rec, "stdout")))
		strbuf_addstr(&j->out, v);
	if ((v = json_object_str(rec, "stderr")))
		strbuf_addstr(&j->err, v);
	j->out_truncated =
		json_is_true(json_object_get(rec, "stdout_truncated"));
	j->err_truncated =
		json_is_true(json_object_get(rec, "stderr_truncated"));
	return j;
}

/*
 * Read the records of a server that ran before into "restored", once:
 * jobs that still run are followed again, those that never started
 * fail, finished ones answer from their record (old ones are removed).
 */
static void restore_records(const struct mcp_options *o)
{
	static int done;
	struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT;
	struct jobs_state *st;
	struct dirent *de;
	int64_t now = (int64_t)time(NULL);
	DIR *d;

	pthread_mutex_lock(&restored_lock);
	if (done)
		goto out;
	done = 1;
	st = xcalloc(1, sizeof(*st));
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->cond, NULL);
	st->max_concurrent = INT_MAX / 2; /* they run already */
	st->budget_ms = INT64_MAX;
	st->persistent = 1;
	st->sandbox = o->sandbox;
	if (records_dir(&dir) < 0 || !(d = opendir(dir.buf))) {
		restored = st;
		goto out;
	}
	pthread_mutex_lock(&st->lock);
	while ((de = readdir(d))) {
		char id[17];
		struct strbuf text = STRBUF_INIT;
		json_t *rec;
		struct job *j;
		size_t len = strlen(de->d_name);

		if (len != 21 || strcmp(de->d_name + 16, ".json"))
			continue;
		memcpy(id, de->d_name, 16);
		id[16] = '\0';
		if (!is_job_id(id))
			continue;
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s", dir.buf, de->d_name);
		if (strbuf_read_file(&text, path.buf, 0) < 0) {
			strbuf_release(&text);
			continue;
		}
		rec = json_parse(text.buf, text.len, NULL);
		strbuf_release(&text);
		j = rec ? job_from_record(rec, id, now) : NULL;
		json_decref(rec);
		if (!j) {
			unlink(path.buf);
			continue;
		}
		j->st = st;
		if (!j->finished_ms) {
			if (pthread_create(&j->thread, NULL, job_thread, j)) {
				job_free(j);
				continue;
			}
			st->active++;
		}
		ALLOC_GROW(st->jobs, st->nr + 1, st->alloc);
		st->jobs[st->nr++] = j;
	}
	pthread_mutex_unlock(&st->lock);
	closedir(d);
	restored = st;
out:
	pthread_mutex_unlock(&restored_lock);
	strbuf_release(&dir);
	strbuf_release(&path);
}

/* ---- formatting ---- */

/*
 * seen 0: src is already the head and tail of a finished job; else src
 * is the live view (live_add) of seen bytes, shown as the seed's head
 * and tail of all of them.
 */
static void add_stream(struct strbuf *text, const char *title,
		       const struct strbuf *src, size_t seen)
{
	struct strbuf sb = STRBUF_INIT;

	if (!src->len)
		return;
	if (seen > 2 * LIVE_HEAD && src->len >= 2 * LIVE_HEAD) {
		strbuf_add(&sb, src->buf, LIVE_HEAD);
		strbuf_addf(&sb, "\n... [%zu bytes elided] ...\n",
			    seen - 2 * LIVE_HEAD);
		strbuf_add(&sb, src->buf + src->len - LIVE_HEAD, LIVE_HEAD);
	} else {
		strbuf_addbuf(&sb, src);
	}
	mcp_result_add_stream(text, title, sb.buf, sb.len);
	strbuf_release(&sb);
}

/* status object of a job; st->lock held */
static json_t *job_json_locked(const struct job *j, int with_logs)
{
	json_t *o = json_object();
	int done = j->status == JOB_COMPLETED || j->status == JOB_FAILED;

	json_object_set_new(o, "job_id", json_string(j->id));
	json_object_set_new(o, "status", json_string(status_names[j->status]));
	if (done && j->reason && !j->error)
		json_object_set_new(o, "exit_code", json_integer(j->exit_code));
	if (done && j->reason)
		json_object_set_new(o, "reason", json_string(j->reason));
	if (done && j->signal)
		json_object_set_new(o, "signal", json_integer(j->signal));
	if (j->error)
		json_object_set_new(
			o, "error",
			mcp_result_json_string(j->error, strlen(j->error)));
	if (done && j->cpu_ms >= 0)
		json_object_set_new(o, "cpu_seconds",
				    json_real(j->cpu_ms / 1000.0));
	if (done && j->peak_rss_kb >= 0)
		json_object_set_new(o, "peak_memory_mb",
				    json_real(j->peak_rss_kb / 1024.0));
	if (done && !j->error)
		json_object_set_new(o, "duration_ms",
				    json_integer(j->duration_ms));
	if (with_logs) {
		json_object_set_new(
			o, "stdout",
			mcp_result_json_string(j->out.buf, j->out.len));
		json_object_set_new(
			o, "stderr",
			mcp_result_json_string(j->err.buf, j->err.len));
	}
	return o;
}

/*
 * Text of a finished job:
 *   job <id> completed: exit=<N>  (<ms>ms)  cpu=<s>s  peak_memory=<MB>MB
 *   <blank line>
 *   ── stdout ── ...  ── stderr ── ...  (or "(no output)")
 */
static void job_text_locked(struct strbuf *text, const struct job *j)
{
	strbuf_addf(text, "job %s %s", j->id, status_names[j->status]);
	if (j->error) {
		strbuf_addf(text, ": could not run: %s\n", j->error);
		return;
	}
	if (j->status != JOB_COMPLETED && j->status != JOB_FAILED) {
		strbuf_addch(text, '\n');
		return;
	}
	strbuf_addf(text, ": exit=%d  (%" PRId64 "ms)", j->exit_code,
		    j->duration_ms);
	if (strcmp(j->reason, "exited"))
		strbuf_addf(text, "  reason=%s", j->reason);
	if (j->signal)
		strbuf_addf(text, "  signal=%d", j->signal);
	if (j->cpu_ms >= 0)
		strbuf_addf(text, "  cpu=%.3fs", j->cpu_ms / 1000.0);
	if (j->peak_rss_kb >= 0)
		strbuf_addf(text, "  peak_memory=%.1fMB",
			    j->peak_rss_kb / 1024.0);
	if (j->out_truncated || j->err_truncated)
		strbuf_addstr(text, "  [truncated]");
	strbuf_addch(text, '\n');
	if (!j->out.len && !j->err.len)
		strbuf_addstr(text, "\n(no output)\n");
	add_stream(text, "stdout", &j->out, 0);
	add_stream(text, "stderr", &j->err, 0);
}

/* ---- tools ---- */

static int check_args(struct mcp_result *res, const json_t *args,
		      const char *code_key)
{
	const char *key;
	json_t *v;

	json_object_foreach ((json_t *)args, key, v) {
		if (strcmp(key, code_key) && strcmp(key, "wait") &&
		    strcmp(key, "timeout") && strcmp(key, "stdin")) {
			mcp_result_error(res, "unknown argument '%s'", key);
			return -1;
		}
	}
	v = json_object_get(args, code_key);
	if (!v || json_is_null(v)) {
		mcp_result_error(res, "missing argument '%s'", code_key);
		return -1;
	}
	if (!json_is_string(v)) {
		mcp_result_error(res, "argument '%s' must be a string",
				 code_key);
		return -1;
	}
	v = json_object_get(args, "wait");
	if (v && !json_is_null(v) && !json_is_boolean(v)) {
		mcp_result_error(res, "argument 'wait' must be a boolean");
		return -1;
	}
	v = json_object_get(args, "stdin");
	if (v && !json_is_null(v) && !json_is_string(v)) {
		mcp_result_error(res, "argument 'stdin' must be a string");
		return -1;
	}
	if (json_is_string(v) && json_string_length(v) > STDIN_MAX) {
		mcp_result_error(res,
				 "argument 'stdin' is %zu bytes: the limit "
				 "is %zu",
				 json_string_length(v), STDIN_MAX);
		return -1;
	}
	return 0;
}

static void random_id(char *out /* 17 bytes */)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[8];

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		uint64_t t = monotonic_us() ^ ((uint64_t)getpid() << 40);
		memcpy(rnd, &t, sizeof(rnd));
	}
	for (int i = 0; i < 8; i++) {
		out[2 * i] = hex[rnd[i] >> 4];
		out[2 * i + 1] = hex[rnd[i] & 15];
	}
	out[16] = '\0';
}

static int execute(struct mcp_call *call, struct mcp_result *res,
		   enum job_lang lang, const char *code_key)
{
	struct jobs_state *st;
	struct strbuf why = STRBUF_INIT;
	json_t *v;
	struct job *j;
	int wait = 1, ahead;
	int64_t retry, timeout_ms;

	/* the seed's 5 minutes, within the operator's --call-timeout */
	if (check_args(res, call->args, code_key) < 0 ||
	    mcp_call_timeout_arg(call, res, JOB_TIMEOUT_MS, &timeout_ms) < 0)
		return 0;
	v = json_object_get(call->args, "wait");
	if (json_is_boolean(v))
		wait = json_is_true(v);
	st = get_state(call->session);

	j = xcalloc(1, sizeof(*j));
	v = json_object_get(call->args, code_key);
	j->code_len = json_string_length(v);
	j->code = xmalloc(j->code_len + 1);
	memcpy(j->code, json_string_value(v), j->code_len + 1);
	v = json_object_get(call->args, "stdin");
	if (json_is_string(v) && json_string_length(v)) {
		j->stdin_len = json_string_length(v);
		j->stdin_data = xmalloc(j->stdin_len);
		memcpy(j->stdin_data, json_string_value(v), j->stdin_len);
	}
	j->lang = lang;
	j->submitted = (int64_t)time(NULL);
	j->timeout_ms = timeout_ms;
	j->status = JOB_QUEUED;
	j->cpu_ms = j->peak_rss_kb = -1;
	strbuf_init(&j->out, 0);
	strbuf_init(&j->err, 0);
	j->st = st;

	pthread_mutex_lock(&st->lock);
	if (st->ending) {
		pthread_mutex_unlock(&st->lock);
		job_free(j);
		mcp_result_error(res, "the session is ending");
		return 0;
	}
	reap_locked(st);
	prune_locked(st);
	retry = rate_check_locked(st, monotonic_ms(), &why);
	if (retry) {
		pthread_mutex_unlock(&st->lock);
		job_free(j);
		mcp_result_error(res,
				 "rate limit exceeded, retry after %" PRId64
				 " s: %s",
				 retry, why.buf);
		strbuf_release(&why);
		return 0;
	}
	do
		random_id(j->id);
	while (find_job_locked(st, j->id));
	if (st->persistent) {
		/* queued in the record until its thread says more */
		json_t *rec = record_json_locked(j);
		if (record_save(j->id, rec) < 0)
			mcp_log_stderr("jobs: the record of job %s: %s", j->id,
				       last_error());
		json_decref(rec);
	}
	if (pthread_create(&j->thread, NULL, job_thread, j)) {
		pthread_mutex_unlock(&st->lock);
		job_free(j);
		mcp_result_error(res, "cannot start a job thread");
		return 0;
	}
	/* jobs before it that still run or wait: it waits when they fill
	 * the running slots */
	ahead = st->active;
	st->active++;
	ALLOC_GROW(st->jobs, st->nr + 1, st->alloc);
	st->jobs[st->nr++] = j;
	mcp_call_log(call, "info", "job %s %s (%s)", j->id,
		     ahead >= st->max_concurrent ? "queued" : "started",
		     lang == LANG_PYTHON ? "python"
		     : lang == LANG_JS	 ? "javascript"
					 : "bash");

	if (!wait) {
		res->structured = job_json_locked(j, 0);
		strbuf_reset(&res->text);
		strbuf_addf(&res->text, "job %s submitted", j->id);
		if (ahead >= st->max_concurrent)
			strbuf_addf(&res->text,
				    " and queued behind %d job%s (at most %d "
				    "run at once)",
				    ahead, ahead == 1 ? "" : "s",
				    st->max_concurrent);
		strbuf_addstr(&res->text,
			      "; poll it with check_job_status and read its "
			      "output with get_job_logs");
		pthread_mutex_unlock(&st->lock);
		return 0;
	}

	/* wait for it (through the queue), passing on a cancellation of
	 * this call; the broadcast wakes it if it is still queued */
	st->waiters++;
	j->held = 1;
	while (!j->finished_ms) {
		struct timespec ts;
		if (call->cancelled && !j->cancel)
			job_stop_locked(st, j, 0);
		deadline_in_ms(&ts, CLOCK_REALTIME, 200);
		pthread_cond_timedwait(&st->cond, &st->lock, &ts);
	}
	strbuf_reset(&res->text);
	job_text_locked(&res->text, j);
	res->structured = job_json_locked(j, 1);
	res->is_error = j->status != JOB_COMPLETED || j->exit_code != 0;
	j->held = 0;
	st->waiters--;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
	return 0;
}

static int tool_python(struct mcp_call *call, struct mcp_result *res)
{
	return execute(call, res, LANG_PYTHON, "code");
}

static int tool_javascript(struct mcp_call *call, struct mcp_result *res)
{
	return execute(call, res, LANG_JS, "code");
}

static int tool_bash(struct mcp_call *call, struct mcp_result *res)
{
	return execute(call, res, LANG_BASH, "script");
}

/* Look up the job of call's job_id; st->lock held on success. */
static struct job *lookup(struct mcp_call *call, struct mcp_result *res,
			  struct jobs_state **stp)
{
	const char *key, *id;
	struct jobs_state *st;
	struct job *j;
	json_t *v;

	json_object_foreach (call->args, key, v) {
		if (strcmp(key, "job_id")) {
			mcp_result_error(res, "unknown argument '%s'", key);
			return NULL;
		}
	}
	id = json_object_str(call->args, "job_id");
	if (!id) {
		mcp_result_error(res, "missing argument 'job_id' (a string)");
		return NULL;
	}
	st = get_state(call->session);
	pthread_mutex_lock(&st->lock);
	reap_locked(st);
	prune_locked(st);
	j = find_job_locked(st, id);
	if (!j && st->persistent && restored) {
		/* a job from before a restart */
		pthread_mutex_unlock(&st->lock);
		st = restored;
		pthread_mutex_lock(&st->lock);
		reap_locked(st);
		j = find_job_locked(st, id);
	}
	if (!j) {
		pthread_mutex_unlock(&st->lock);
		mcp_result_error(res, "unknown job_id '%s'", id);
		return NULL;
	}
	*stp = st;
	return j;
}

static int tool_status(struct mcp_call *call, struct mcp_result *res)
{
	struct jobs_state *st;
	struct job *j = lookup(call, res, &st);

	if (!j)
		return 0;
	res->structured = job_json_locked(j, 0);
	strbuf_reset(&res->text);
	mcp_result_add_json(&res->text, res->structured);
	pthread_mutex_unlock(&st->lock);
	return 0;
}

static int tool_logs(struct mcp_call *call, struct mcp_result *res)
{
	struct jobs_state *st;
	struct job *j = lookup(call, res, &st);

	if (!j)
		return 0;
	res->structured = job_json_locked(j, 1);
	strbuf_reset(&res->text);
	job_text_locked(&res->text, j);
	if (j->status == JOB_QUEUED || j->status == JOB_RUNNING) {
		strbuf_addstr(&res->text, "(output so far)\n");
		if (!j->out.len && !j->err.len)
			strbuf_addstr(&res->text, "\n(no output)\n");
		add_stream(&res->text, "stdout", &j->out, j->out_seen);
		add_stream(&res->text, "stderr", &j->err, j->err_seen);
	}
	pthread_mutex_unlock(&st->lock);
	return 0;
}

static void jobs_session_end(struct mcp_session *s, void *state)
{
	struct jobs_state *st = state;
	uint64_t deadline = monotonic_ms() + END_WAIT_MS;

	(void)s;
	if (!st)
		return;
	pthread_mutex_lock(&st->lock);
	st->ending = 1;
	/* with --persistent, running jobs go on for a restarted server */
	for (size_t i = 0; i < st->nr; i++)
		if (!st->jobs[i]->finished_ms)
			job_stop_locked(st, st->jobs[i],
					st->persistent && st->jobs[i]->status ==
								  JOB_RUNNING);
	/* queued jobs wake, and end without starting */
	pthread_cond_broadcast(&st->cond);
	/* jobs and callers that wait for them end soon after a cancel */
	while ((st->active || st->waiters) && monotonic_ms() < deadline) {
		struct timespec ts;
		deadline_in_ms(&ts, CLOCK_REALTIME, 1000);
		pthread_cond_timedwait(&st->cond, &st->lock, &ts);
	}
	if (st->active || st->waiters) {
		/* cannot free what a stuck thread still uses */
		mcp_log_stderr("jobs: %d job(s) did not stop; leaking them",
			       st->active);
		pthread_mutex_unlock(&st->lock);
		return;
	}
	pthread_mutex_unlock(&st->lock);
	for (size_t i = 0; i < st->nr; i++) {
		if (!st->jobs[i]->joined)
			pthread_join(st->jobs[i]->thread, NULL);
		job_free(st->jobs[i]);
	}
	free(st->jobs);
	free(st->uses);
	pthread_cond_destroy(&st->cond);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

#define RUN_DESC(what, lang)                                                           \
	"Execute " what                                                                \
	" in a fresh, isolated sandbox (the network below, 512 MB "                    \
	"memory, 5 minute limit or the timeout argument, deleted "                     \
	"afterwards) with " lang ". With "                                             \
	"wait true (the default) the answer comes when the job is done: "              \
	"text `job <id> completed: exit=<code>  (<ms>ms)  cpu=<s>s  "                  \
	"peak_memory=<MB>MB`, then `── stdout ──` and `── stderr ──` " \
	"sections, and structuredContent {job_id, status, exit_code, "                 \
	"reason, signal (when one ended it), cpu_seconds (every process "              \
	"the job started, killed ones too), peak_memory_mb, duration_ms, "             \
	"stdout, stderr}; isError when the exit code is not 0 or the job "             \
	"failed. "                                                                     \
	"With wait false the answer is a job_id at once: poll "                        \
	"check_job_status and read get_job_logs. status is completed when "            \
	"the program exited (any exit code), failed when it could not run "            \
	"or was killed (timeout, oom). Each client may run a limited "                 \
	"number of jobs at a time; more wait with status queued (a wait "              \
	"true call waits through the queue) and start in order as "                    \
	"running ones end. Past " JOB_QUEUE_MAX_TEXT " queued jobs, or "               \
	"over the client's CPU budget per minute, the answer is \"rate "               \
	"limit exceeded, retry after N s\"."

#define RUN_SCHEMA(key, what)                                                  \
	"{\"type\":\"object\",\"properties\":{\"" key "\":{\"type\":"          \
	"\"string\",\"description\":\"" what "\"},\"wait\":{\"type\":"         \
	"\"boolean\",\"default\":true,\"description\":\"Wait for the job "     \
	"to finish (true) or return a job_id at once "                         \
	"(false)\"},\"stdin\":{\"type\":\"string\",\"description\":"           \
	"\"Standard input of the program, then end of file (at most "          \
	"1 MiB); without it the program reads an empty "                       \
	"stdin\"}," MCP_TIMEOUT_PROP "},"                                      \
	"\"required\":[\"" key "\"],\"additionalProperties\":false}"

#define JOB_ID_SCHEMA                                                          \
	"{\"type\":\"object\",\"properties\":{\"job_id\":{\"type\":"           \
	"\"string\",\"description\":\"The job_id an execute_* tool "           \
	"returned\"}},\"required\":[\"job_id\"],"                              \
	"\"additionalProperties\":false}"

static const struct mcp_tool jobs_tools[] = {
	{
		"execute_python",
		"Execute Python",
		RUN_DESC("Python code", "python3"),
		RUN_SCHEMA("code", "Python code to execute"),
		NULL,
		MCP_HINT_NOT_DESTRUCTIVE,
		tool_python,
		mcp_describe_environment_nolimits,
	},
	{
		"execute_javascript",
		"Execute JavaScript",
		RUN_DESC("JavaScript code", "Node.js"),
		RUN_SCHEMA("code", "JavaScript (Node.js) code to execute"),
		NULL,
		MCP_HINT_NOT_DESTRUCTIVE,
		tool_javascript,
		mcp_describe_environment_nolimits,
	},
	{
		"execute_bash",
		"Execute Bash",
		RUN_DESC("a Bash script", "bash and the usual Unix tools"),
		RUN_SCHEMA("script", "Bash script to execute"),
		NULL,
		MCP_HINT_NOT_DESTRUCTIVE,
		tool_bash,
		mcp_describe_environment_nolimits,
	},
	{
		"check_job_status",
		"Check job status",
		"Status of a job of this client: JSON {job_id, status "
		"(queued: waiting for a running job of this client to end; "
		"running|completed|failed), and when done exit_code, "
		"reason, signal (when one ended it), cpu_seconds, "
		"peak_memory_mb, duration_ms; error when "
		"it could not run}. completed means the program exited, "
		"whatever its exit code; failed means it could not run or was "
		"killed (timeout, oom).",
		JOB_ID_SCHEMA,
		NULL,
		MCP_HINT_READ_ONLY | MCP_HINT_IDEMPOTENT,
		tool_status,
	},
	{
		"get_job_logs",
		"Get job logs",
		"stdout and stderr of a job of this client (the output so far "
		"while it runs), as text sections and structuredContent "
		"{job_id, status, stdout, stderr, ...}. The last 100 finished "
		"jobs are kept.",
		JOB_ID_SCHEMA,
		NULL,
		MCP_HINT_READ_ONLY,
		tool_logs,
	},
};

const struct mcp_toolset mcp_toolset_jobs = {
	"jobs",
	jobs_tools,
	ARRAY_SIZE(jobs_tools),
	jobs_session_end,
};
