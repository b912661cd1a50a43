#ifndef EXEC_H
#define EXEC_H

#include "compat.h"
#include "strbuf.h"

#include <poll.h>

/*
 * Running one shell command the way gosbx-runtime does
 * (Documentation/protocol/runtime-api.md "/execute" and the `exec-options`
 *extension): `sh -c <command>` in its own process group, stdin from the given
 * bytes or /dev/null, stdout and stderr through pipes.
 *
 * Every command runs below a "shim" of its own: a forked copy of this
 * process that is a child subreaper (PR_SET_CHILD_SUBREAPER), so that
 * every process the command starts stays its descendant, even one that
 * calls setsid() and forks twice. On timeout, on cancellation, when the
 * output limit is passed and when exec_kill_all() is called, the shim
 * SIGKILLs all of them (not only the process group), and the CPU time
 * and peak RSS of the result include everything that was reaped or
 * killed. When the command ends normally (the shell exited and the
 * pipes reached EOF) while processes it started still run (a daemon
 * that closed its output), they keep running below their shim
 * ("lingering", see exec_lingering_count()) until they end or
 * exec_kill_all() ends them. Many commands may run at once from
 * different threads; killing one never touches another's processes.
 * Nothing here is global except the registry of commands and shims.
 *
 * The shim is a fork without exec: a process that made itself
 * non-dumpable (PR_SET_DUMPABLE 0, as gosbx-runtime does) passes that
 * on, so code of the same uid cannot read the shim's memory or
 * descriptors. Code of the same uid can still kill a shim; what the
 * shim ran is then re-parented to the nearest subreaper: a process
 * that is one (or pid 1 of a namespace) should call exec_kill_strays()
 * now and then.
 *
 * Incremental use (for streaming, e.g. POST /v1/exec):
 *	exec_start() ; while (exec_step(p, ms) > 0) ... ; exec_finish()
 * Blocking use: exec_run().
 */

enum exec_stream { EXEC_STDOUT = 1, EXEC_STDERR = 2 };

struct exec_request {
	const char *command; /* sh -c text; must not be NULL */
	/*
	 * NULL, or the program to run instead of sh -c command, without a
	 * shell: exec_path (what the child execve()s: absolute, or
	 * relative to cwd) with the arguments argv (NULL-terminated,
	 * argv[0] as the program sees it), as sandboxd's ProcessService
	 * runs a command (KEP-539.2; upstream's os/exec). command is then
	 * only what logs show. A failed execve() is reason "start_failed"
	 * with start_errno (ENOENT, EACCES...), as for the shell.
	 */
	const char *exec_path;
	const char *const *argv;
	const char *cwd; /* absolute directory to run in; NULL = "." */
	/* full environment (NULL-terminated "K=V"); NULL inherits ours */
	const char *const *env;
	const char *stdin_data; /* NULL: stdin is /dev/null */
	size_t stdin_len;	/* bytes of stdin_data */
	int64_t timeout_ms;	/* 0: no limit; then reason "timeout" */
	/*
	 * Bytes of each stream kept in exec_result.out/err; bytes past it
	 * are read and dropped (the command is not disturbed) and
	 * *_truncated is set. 0 means the upstream 8 MiB (8,388,608).
	 * The cut is at a byte count: callers that need UTF-8 fix it up.
	 */
	size_t stream_cap;
	/*
	 * If non-zero, stdout+stderr bytes beyond this total kill the
	 * process group; reason "output_limit".
	 */
	int64_t max_output_bytes;
	/*
	 * -1, or a descriptor (e.g. the client's socket) watched with
	 * poll(POLLRDHUP): a hang-up or error on it cancels the command
	 * (group killed, reason "cancelled"). Readable data is ignored.
	 */
	int cancel_fd;
	/*
	 * If set, called with every chunk as it is read, before it is
	 * added to the result buffers (the caller may then set
	 * stream_cap small). A negative return cancels the command.
	 * Chunks of one stream arrive in order; never NULL data.
	 */
	int (*on_output)(enum exec_stream stream, const char *buf, size_t len,
			 void *data);
	void *data;
	/*
	 * NULL, or a name for exec_cancel_tag() (the runtime uses the
	 * request's X-Request-ID); must live as long as the command.
	 */
	const char *tag;

	/*
	 * Interactive use (gosbx-runtime's exec channel,
	 * Documentation/gosbx-runtime.txt "Interactive commands").
	 *
	 * tty: run the command on a new pseudo-terminal (posix_openpt):
	 * the shell leads a new session (setsid, so its process group is
	 * still its pid) with the terminal as controlling tty and as
	 * stdin, stdout and stderr (the shim's child opens it: lib/exec.c),
	 * still below the shim, so the kill of every process and the CPU
	 * and RSS accounting are those of any command; everything it
	 * writes arrives as EXEC_STDOUT. cols x rows is the first window
	 * size (0: 80 x 24);
	 * tty_raw turns off echo, line editing, signal characters and
	 * output processing (cfmakeraw) for callers that drive the
	 * terminal with a program rather than a person.
	 */
	int tty;
	int tty_raw;
	unsigned short cols, rows;
	/*
	 * stdin_stream: stdin is a pipe (or, with tty, the terminal) that
	 * the caller writes to through exec_stdin_fd() while the command
	 * runs, instead of stdin_data or /dev/null.
	 */
	int stdin_stream;
	/*
	 * The caller's own descriptors, polled by exec_step() along with
	 * the command's: exec_step() fills in their revents and returns
	 * (1) as soon as any of them is ready, without touching them. The
	 * caller may change the array's events between calls. NULL: none.
	 */
	struct pollfd *poll_extra;
	unsigned nr_poll_extra;
	/*
	 * Once the shell has exited, how long (ms) to wait for its output
	 * pipes to close; 0: until they close (a process the command left
	 * running that holds them, e.g. `server &`, then holds the
	 * command, up to its timeout). After it the command is finished
	 * with res.output_held set; the processes left keep running below
	 * their shim (lingering), and what they write later goes to
	 * held_output_path (created, appended to, at most
	 * EXEC_HELD_OUTPUT_MAX bytes) or, if that is NULL or cannot be
	 * opened, nowhere (the pipes are closed: a write fails with EPIPE).
	 * As Go's exec.Cmd.WaitDelay.
	 */
	int64_t wait_delay_ms;
	const char *held_output_path;
};

/* What a held output file may grow to (bytes); the rest is dropped. */
#define EXEC_HELD_OUTPUT_MAX ((off_t)64 << 20)

/*
 * Start the spawner that forks the shims of later commands (see
 * lib/exec.c): a copy of this process made now, so call it early,
 * while the process is small and has one thread (gosbx-runtime: right
 * after PR_SET_DUMPABLE, which the copy keeps). Without it every
 * exec_start() forks the caller itself, which costs page-table copies
 * and copy-on-write faults in a large multi-threaded process. If the
 * spawner dies (code of the same uid can kill it) the next command
 * starts another one, forked from the caller as it is then. Returns 0,
 * or -1 with error().
 */
int exec_spawner_start(void);
/* Stop using the spawner (it exits once no process holds its socket). */
void exec_spawner_stop(void);

/* fill defaults: cancel_fd -1, everything else 0 */
void exec_request_init(struct exec_request *req);

struct exec_result {
	/* the process status; -1 if signaled or if it could not start */
	int exit_code;
	/*
	 * "exited", "signaled", "timeout", "oom" (set by the caller, not
	 * here), "cancelled", "output_limit", "start_failed"; a static
	 * string.
	 */
	const char *reason;
	int signal;	     /* the terminating signal, else 0 */
	int64_t duration_ms; /* wall time from start to reaped */
	/*
	 * user+system time of every process of the command that ended,
	 * reaped or killed (ms); after a normal end, processes still
	 * running (lingering) are not counted
	 */
	int64_t cpu_ms;
	int64_t peak_rss_kb; /* the largest ru_maxrss among them (KiB) */
	struct strbuf out;   /* kept stdout bytes (<= stream_cap) */
	struct strbuf err; /* kept stderr bytes; on start failure the reason */
	size_t out_total;  /* stdout bytes produced, kept or not */
	size_t err_total;
	int out_truncated; /* bytes were dropped from out */
	int err_truncated;
	/*
	 * reason "start_failed": the errno of what failed (ENOENT for a
	 * missing cwd, EACCES for one that may not be entered, ...),
	 * else 0
	 */
	int start_errno;
	/*
	 * The shell exited but a process it left still held stdout or
	 * stderr after wait_delay_ms: its later output goes to
	 * held_output (a copy of the request's held_output_path; NULL:
	 * dropped).
	 */
	int output_held;
	char *held_output;
};

/* empty buffers, exit_code -1, reason NULL, all counters 0 */
void exec_result_init(struct exec_result *res);
/* free the buffers and re-initialise */
void exec_result_release(struct exec_result *res);

struct exec_proc;

/*
 * Start the command. On success *out is the running process (freed by
 * exec_finish) and 0 is returned. If the command cannot be started
 * (fork/pipe/chdir failure), returns 0 too with a process that is
 * already finished: reason "start_failed", exit_code -1, the cause in
 * err. Returns -1 only on invalid arguments (NULL command).
 * The request (and the strings it points to) must outlive the process.
 */
int exec_start(const struct exec_request *req, struct exec_proc **out);

/*
 * Wait up to wait_ms (-1: until something happens) for output, exit,
 * timeout or cancellation, delivering output through on_output.
 * Returns 1 while the command is still running (or its pipes are still
 * open), 0 once it has finished.
 *
 * Finishing rule: after the shell exits, output is read until both
 * pipes reach EOF (as upstream: background jobs holding the pipes keep
 * the call open) or the timeout fires, which kills every process of
 * the command. Once it was killed (for any reason), the call ends when
 * the shim reports that nothing is left and what is already in the
 * pipes is read (at most EXEC_DRAIN_MAX_MS, 2 s, later: a shim that
 * was stopped or killed by the command itself). exit_code is then the
 * shell's status (-1 when it was killed) and reason the cause of the
 * kill.
 */
int exec_step(struct exec_proc *p, int wait_ms);

/*
 * Kill every process of the command now (SIGKILL: the shell's group at
 * once, the rest through its shim); reason becomes `reason` (a
 * static string) unless an earlier kill already set one. Does nothing
 * once the command has finished. May be called from another thread
 * while exec_step() runs (that thread notices within 100 ms at most),
 * but not during or after exec_finish().
 */
void exec_cancel(struct exec_proc *p, const char *reason);

/* The process group id (== pid of the shell), or -1 if never started. */
pid_t exec_pgid(const struct exec_proc *p);

/*
 * Wait for the end (killing the group with reason "cancelled" if it is
 * still running), move the outcome into *res (which must be
 * initialised; its old buffers are released; NULL discards it), free p.
 */
void exec_finish(struct exec_proc *p, struct exec_result *res);

/* exec_start + exec_step until done + exec_finish. Returns 0 or -1. */
int exec_run(const struct exec_request *req, struct exec_result *res);

/*
 * Kill every command still running in this process (used at shutdown),
 * as exec_cancel(p, "cancelled") would, and every process that
 * commands which already ended left running (lingering). Returns how
 * many running commands were signalled. Any thread.
 */
int exec_kill_all(void);
/*
 * Around code that briefly changes the process umask (libarchive's
 * archive_write_disk reads it with umask(0) + umask(old) for each
 * entry): while held, exec_start() waits, so no command starts with
 * umask 0. Exclusive; do not start commands while holding it.
 */
void exec_umask_hold(void);
void exec_umask_release(void);

/*
 * Kill (SIGKILL, reason `reason`, a static string) the process group of
 * every running command whose request tag equals tag, as exec_cancel()
 * does. Any thread. Returns how many commands matched (0: none is
 * running with that tag, e.g. it finished already).
 */
int exec_cancel_tag(const char *tag, const char *reason);

/*
 * The descriptor the caller writes the command's stdin to (request
 * stdin_stream): a non-blocking pipe, or with tty a non-blocking
 * descriptor of the terminal's master. Owned by p (never close it);
 * -1 without stdin_stream, after exec_stdin_close() or once the
 * command finished. A write may fail with EPIPE (and raise SIGPIPE)
 * when the command closed its stdin. The pipe is valid until
 * exec_stdin_close() or exec_finish() in the thread of exec_step();
 * the terminal's descriptor until exec_finish().
 */
int exec_stdin_fd(struct exec_proc *p);

/*
 * End the command's input (stdin_stream): close the pipe, so that it
 * reads EOF once the bytes written are consumed. With tty, write the
 * terminal's end-of-file character (VEOF) instead, which a reader in
 * canonical mode takes as EOF. Same thread as exec_step().
 */
void exec_stdin_close(struct exec_proc *p);

/*
 * Set the window size of the command's terminal (request tty):
 * cols x rows characters, each 1 to 65535; the kernel sends SIGWINCH
 * to the terminal's foreground process group when it changes.
 * Returns 0, or -1 (no terminal, bad size, the command finished). Any
 * thread, while the command has not been finished with exec_finish().
 */
int exec_resize(struct exec_proc *p, unsigned cols, unsigned rows);

/*
 * Send sig to the foreground process group of the command's terminal
 * (request tty), as the terminal's own interrupt character would: the
 * job a job-control shell runs, or the shell itself while it leads the
 * terminal. Returns 1 when sent, 0 when there is no foreground group
 * (or the command finished), -1 without a terminal. Any thread, while
 * the command has not been finished with exec_finish().
 */
int exec_signal_foreground(struct exec_proc *p, int sig);

/*
 * Stop (paused 1) or resume (0) reading the command's output: while
 * paused, exec_step() leaves the pipes alone, so a command that writes
 * more blocks in write(2) once the pipe is full (flow control for a
 * caller whose reader is slow). Same thread as exec_step().
 */
void exec_pause_output(struct exec_proc *p, int paused);

/* Commands between exec_start() and exec_finish() in this process. */
int exec_running_count(void);

/*
 * Shims of commands that ended while processes they started still run
 * (they exit, and are reaped by exec_reap_orphans(), once those end).
 */
int exec_lingering_count(void);

/*
 * Reap exited child processes that no running command owns (orphans
 * re-parented to us when we are PID 1 of a container or a subreaper,
 * and the shims of lingering processes once those ended), without
 * stealing the status of a tracked command. Returns how many were
 * reaped. Safe to call from any thread, e.g. on a timer; returns 0 at
 * once while a spawn is in progress or a hold (below) is in place, so
 * call it again later. Children this process started by other means
 * would be reaped too: see exec_reaper_hold().
 */
int exec_reap_orphans(void);

/*
 * SIGKILL every child process of ours that is not the shim of a
 * command (running or lingering): processes of commands whose shim
 * was killed by the command itself (re-parented to us as pid 1 of a
 * pid namespace or as a subreaper), or started with CLONE_PARENT by a
 * shell. Only for a process that starts children through exec_start()
 * alone (gosbx-runtime): anything else must be started and waited for
 * under exec_reaper_hold(). Returns how many were signalled (zombies
 * are left to exec_reap_orphans()). Any thread; returns 0 at once
 * while a spawn or a hold is in progress.
 */
int exec_kill_strays(void);

/*
 * For code in this process that starts and waits for its own children
 * without exec_start() (e.g. a helper run with posix_spawn + waitpid):
 * hold the reaper from just before the spawn until the child has been
 * waited for, so that exec_reap_orphans() cannot take its status and
 * exec_kill_strays() does not kill it. While held, both do nothing and
 * return 0. Holds
 * may nest across threads; every hold needs one release.
 */
void exec_reaper_hold(void);
void exec_reaper_release(void);

#endif /* EXEC_H */
