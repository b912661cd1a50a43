#ifndef INTERACTIVE_H
#define INTERACTIVE_H

#include "compat.h"
#include "session/session.h"

#include <poll.h>
#include <signal.h>

/*
 * Interactive commands in a sandbox: stdin streamed to the command while
 * it runs, optionally on a pseudo-terminal inside the sandbox
 * (`gosbx exec -i`, `-t`, and the REPL's live shell). The runtime side
 * is Documentation/gosbx-runtime.txt, "Interactive commands":
 *
 * - with the feature exec-interactive, one WebSocket (GET /v1/exec,
 *   subprotocol gosbx.exec.v1) carries everything, through whatever
 *   reaches the runtime (a unix socket, the kube port-forward and the
 *   sandbox-router, a URL), with lib/session/websocket.h;
 * - when that is missing, or the upgrade is refused on the way (the
 *   v0.4.6 sandbox-router proxies plain HTTP only), with the feature
 *   exec-input the output streams on POST /v1/exec (stdin_stream) while
 *   the input goes in order through POST /v1/exec/<id>/stdin and
 *   /control on a second connection, from a thread of its own;
 * - with neither, interactive_open() fails and says what the runtime
 *   cannot do.
 *
 * Everything the runtime sends is hostile: messages are bounded, the
 * output goes to on_output as it arrives (nothing is kept), and the
 * socket is read only as fast as on_output takes it.
 *
 * Threads: one interactive command is driven by one thread (the
 * exec-input transport runs two helper threads of its own).
 */

struct interactive;

struct interactive_opts {
	const char *command;	/* sh -c text in /app; required */
	const char *const *env; /* "K=V" NULL-terminated, or NULL */
	const char *cwd;	/* relative to /app, or NULL */
	int64_t timeout_ms;	/* 0: none */
	int tty;		/* run on a pseudo-terminal in the sandbox */
	int tty_raw;		/* ... in raw mode (no echo, no signals) */
	unsigned cols, rows;	/* its size; 0: 80 x 24 */
	/*
	 * Each chunk of output as it arrives (stream 1 stdout, 2 stderr;
	 * with tty everything is 1). Return < 0 to stop: the command is
	 * cancelled. Required.
	 */
	int (*on_output)(int stream, const char *buf, size_t len, void *data);
	void *data;
	/* set non-zero (e.g. a SIGINT handler) to cancel; may be NULL */
	volatile sig_atomic_t *cancel;
	/* say on stderr which transport is used and why (-v) */
	int verbose;
};

/*
 * Start opts->command in the sandbox of s with its stdin held open.
 * Returns 0 with *out (free it with interactive_finish()), or -1 with
 * error(): the runtime has neither feature ("the runtime of claim 'x'
 * has no interactive channel: ..."), the start failed, or the
 * transport failed.
 */
int interactive_open(struct session *s, const struct interactive_opts *opts,
		     struct interactive **out);

/*
 * Queue len bytes of stdin. Returns the bytes taken: fewer than len (0
 * included) when the queue is full (INTERACTIVE_QUEUE bytes wait for
 * the runtime): wait for interactive_can_write(), then give the rest.
 * -1 after interactive_eof() or once the command ended.
 */
#define INTERACTIVE_QUEUE (256 * 1024)
ssize_t interactive_write(struct interactive *ia, const void *buf, size_t len);
/* Is there room for more stdin? */
int interactive_can_write(struct interactive *ia);
/* End the stdin (with tty: the terminal's end-of-file character). */
void interactive_eof(struct interactive *ia);
/* The terminal's size changed (tty): cols x rows, each 1..65535. */
void interactive_resize(struct interactive *ia, unsigned cols, unsigned rows);
/*
 * Signal the foreground process group of the command's terminal (tty):
 * name is "INT", "KILL", "TERM", "HUP", "QUIT", "TSTP", "CONT"...
 */
void interactive_signal(struct interactive *ia, const char *name);

/*
 * Move data for up to wait_ms (-1: until something happens): send
 * queued input and control messages, deliver output to on_output.
 * extra (nr_extra of them, may be 0) are the caller's descriptors,
 * polled too: their revents are filled in, and the call returns early
 * when one is ready. Returns 1 while the command runs, 0 once it ended
 * and its exit status arrived after all its output, -1 with error()
 * when the channel broke (connection lost, protocol error, cancelled).
 */
int interactive_step(struct interactive *ia, int wait_ms, struct pollfd *extra,
		     unsigned nr_extra);

/*
 * The outcome into res (initialised by the caller): exit_code, reason
 * and the other status fields, out_total/err_total; no output is kept.
 * Cancels a command still running (reason "cancelled"), closes the
 * channel and frees ia. Returns 0 when an exit status arrived, else -1
 * (the reason is already reported).
 */
int interactive_finish(struct interactive *ia, struct session_result *res);

/*
 * The whole of `gosbx exec -i/-t`: run opts->command, copy in_fd (-1:
 * no input, the command reads end-of-file unless it has a terminal) to
 * its stdin until end-of-file, and on each *winch (set by a SIGWINCH
 * handler; may be NULL) send the size get_size() gives (may be NULL).
 * Returns as session_execute() does: 0 when the command ran (res holds
 * its status), 1 when cancelled through opts->cancel, -1 with error().
 */
int interactive_run(struct session *s, const struct interactive_opts *opts,
		    int in_fd, volatile sig_atomic_t *winch,
		    int (*get_size)(unsigned *cols, unsigned *rows),
		    struct session_result *res);

#endif /* INTERACTIVE_H */
