/*
 * The REPL of `gosbx exec --claim=<name>` on a terminal
 * (Documentation/technical/design.md "One binary, many commands"; issues 3 and
 * 13): GNU readline with a history file, lines run in one live shell in the
 * sandbox with live output, Tab completion of names in the sandbox, and a few
 * meta commands (:put, :get, :ls, :reset, :help, :quit).
 *
 * The live shell is `sh -i` on a pseudo-terminal in raw mode, reached
 * through the runtime's interactive channel (lib/session/interactive.h), so cd,
 * variables, functions and sourced files last from line to line. Each
 * line goes to it as `command eval '<line>' </dev/null; __gosbx_m <seq>
 * $?` (`command` keeps an error in the line, a syntax error too, from
 * aborting the list; stdin stays out of the way); __gosbx_m prints a
 * marker, \036gosbx-<nonce>:<seq>:<status>:<pwd>\036, cut out of the
 * output: the line ended, with that status, in that directory. Ctrl-C
 * sends SIGINT to the terminal's foreground group (the line's job, or
 * the shell busy in a builtin, which then drops the line), SIGKILL a
 * second later if the line still runs, and a new shell replaces one
 * that does not come back. A runtime without the channel (an upstream
 * server) gets the old way: each line in a fresh `sh -c`.
 *
 * Readline runs in its callback mode with its own signal handling off
 * (rl_catch_signals = 0): our handler only sets a flag, select() on
 * standard input returns EINTR, and the loop decides. At the prompt,
 * Ctrl-C clears the line; while a command runs, it cancels the command
 * (the runtime kills its process group) and the REPL goes on.
 */
#include "compat.h"
#include "builtin.h"
#include "dir.h"
#include "dl/dl.h"
#include "session/interactive.h"
#include "quote.h"
#include "session/session.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"
#include "utf8.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/stat.h>

#include <readline/history.h>
#include <readline/readline.h>

/* entries kept in memory and in the history file */
#define HISTORY_MAX 1000

struct repl {
	struct session *s;
	volatile sig_atomic_t *sig;
	struct strbuf history; /* history file path, "" when none */
	int last_byte;	       /* last byte written by a command, or -1 */

	/* the live shell, when the runtime has an interactive channel */
	int live;
	struct interactive *ia; /* NULL until started (again) */
	char nonce[17];
	unsigned seq;		/* the marker awaited */
	int got_marker;		/* ... arrived, with: */
	int status;		/* its status */
	struct strbuf cwd;	/* the shell's directory */
	struct strbuf root;	/* where it started: shown as /app */
	struct strbuf scan;	/* a marker being matched */
	struct strbuf out;	/* output to write out */
	struct strbuf *capture; /* Tab completion: output goes here */
};

/* the longest marker: its fixed part and a path */
#define MARKER_MAX (PATH_MAX + 64)
#define MARKER_CHAR '\036'
/* after Ctrl-C: SIGKILL to the line after this, a new shell after 2x */
#define INTERRUPT_GRACE_MS 1000

static volatile sig_atomic_t got_winch;

static void on_winch(int sig)
{
	got_winch = 1;
}

/* ---- the history file ---- */

/* $XDG_STATE_HOME/gosbx/history, default ~/.local/state/gosbx/history */
static void history_open(struct repl *r)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");

	using_history();
	stifle_history(HISTORY_MAX);
	if (state && *state == '/')
		strbuf_addf(&r->history, "%s/gosbx/history", state);
	else if (home && *home)
		strbuf_addf(&r->history, "%s/.local/state/gosbx/history", home);
	else
		return;
	if (mkdir_leading(r->history.buf, 0700) < 0) {
		error_errno("cannot create the directory of '%s'",
			    r->history.buf);
		warning("history will not be saved");
		strbuf_reset(&r->history);
		return;
	}
	read_history(r->history.buf); /* ENOENT on the first run */
}

static void history_save(struct repl *r, const char *line)
{
	/* readline's variables are not reachable through lib/dl/dl.h */
	HISTORY_STATE *hs = history_get_history_state();
	HIST_ENTRY *prev =
		hs && hs->length ? hs->entries[hs->length - 1] : NULL;
	int same = prev && !strcmp(prev->line, line);

	free(hs);
	if (same)
		return; /* no runs of the same line */
	add_history(line);
	if (!r->history.len)
		return;
	/* append_history() does not create the file */
	if (access(r->history.buf, F_OK) ? write_history(r->history.buf)
					 : append_history(1, r->history.buf)) {
		warning_errno("cannot write the history file '%s'",
			      r->history.buf);
		strbuf_reset(&r->history);
		return;
	}
	history_truncate_file(r->history.buf, HISTORY_MAX);
}

/* ---- reading a line ---- */

static char *pending_line;
static int line_done;

static void line_handler(char *line)
{
	pending_line = line;
	line_done = 1;
	rl_callback_handler_remove();
}

/*
 * Read one line at prompt. Returns 0 with *out (malloc'd, NULL at
 * end of input), or the signal number that ends the REPL.
 */
static int read_line(struct repl *r, const char *prompt, char **out)
{
	pending_line = NULL;
	line_done = 0;
	*r->sig = 0;
	rl_callback_handler_install(prompt, line_handler);
	while (!line_done) {
		fd_set fds;
		int n;

		FD_ZERO(&fds);
		FD_SET(0, &fds);
		n = select(1, &fds, NULL, NULL, NULL);
		if (n < 0 && errno != EINTR) {
			rl_callback_handler_remove();
			error_errno("cannot read the terminal");
			*out = NULL;
			return 0;
		}
		if (got_winch) {
			got_winch = 0;
			rl_resize_terminal();
		}
		if (*r->sig == SIGINT) {
			/* Ctrl-C at the prompt: drop the line */
			*r->sig = 0;
			rl_callback_sigcleanup();
			rl_echo_signal_char(SIGINT);
			rl_free_line_state();
			rl_replace_line("", 0);
			rl_crlf();
			rl_on_new_line();
			rl_redisplay();
		} else if (*r->sig) {
			int sig = *r->sig;
			rl_callback_handler_remove();
			rl_crlf();
			return sig;
		}
		if (n > 0)
			rl_callback_read_char();
	}
	*out = pending_line;
	return 0;
}

/* ---- running commands ---- */

static int repl_output(int stream, const char *buf, size_t len, void *data)
{
	struct repl *r = data;

	if (!len)
		return 0;
	if (write_in_full(stream == 2 ? 2 : 1, buf, len) < 0)
		return -1;
	r->last_byte = (unsigned char)buf[len - 1];
	return 0;
}

/* Put the cursor at the start of a line after a command's output. */
static void end_output_line(struct repl *r)
{
	if (r->last_byte >= 0 && r->last_byte != '\n')
		write_in_full(1, "\n", 1);
	r->last_byte = -1;
}

static void show_status(struct repl *r, int rc,
			const struct session_result *res)
{
	end_output_line(r);
	if (rc < 0)
		return; /* error() said why */
	if (rc == 1)
		fprintf(stderr, "\n[cancelled]\n");
	else if (!strcmp(res->reason, "exited")) {
		if (res->exit_code)
			fprintf(stderr, "[exit %d]\n", res->exit_code);
	} else if (!strcmp(res->reason, "signaled"))
		fprintf(stderr, "[killed by signal %d]\n", res->signal);
	else if (!strcmp(res->reason, "oom"))
		fprintf(stderr, "[out of memory]\n");
	else
		fprintf(stderr, "[%s]\n", res->reason);
}

/*
 * Run a command with live output, optionally writing files first.
 * Returns what session_execute() returned; *code gets the exit code.
 */
static int run(struct repl *r, const char *command,
	       const struct session_file *files, size_t nr, int quiet,
	       int *code)
{
	struct session_exec e = { 0 };
	struct session_result res;
	int rc;

	e.files = files;
	e.nr_files = nr;
	e.command = command;
	e.on_output = repl_output;
	e.data = r;
	e.cancel = r->sig;
	*r->sig = 0;
	r->last_byte = -1;
	fflush(stdout);
	session_result_init(&res);
	rc = session_execute(r->s, &e, &res);
	if (!quiet || rc)
		show_status(r, rc, &res);
	if (code)
		*code = rc ? -1 : res.exit_code;
	session_result_release(&res);
	return rc;
}

/* ---- the live shell ---- */

static int terminal_size(unsigned *cols, unsigned *rows)
{
	struct winsize ws;

	if (ioctl(1, TIOCGWINSZ, &ws) < 0 || !ws.ws_col || !ws.ws_row)
		return -1;
	*cols = ws.ws_col;
	*rows = ws.ws_row;
	return 0;
}

static void flush_out(struct repl *r)
{
	if (!r->out.len)
		return;
	if (r->capture) {
		strbuf_addbuf(r->capture, &r->out);
	} else {
		write_in_full(1, r->out.buf, r->out.len);
		r->last_byte = (unsigned char)r->out.buf[r->out.len - 1];
	}
	strbuf_reset(&r->out);
}

/* A whole marker in r->scan: take it. */
static void take_marker(struct repl *r, size_t plen)
{
	const char *p = r->scan.buf + plen;
	char *end;
	unsigned long seq;
	long status;

	seq = strtoul(p, &end, 10);
	if (*end != ':')
		return;
	status = strtol(end + 1, &end, 10);
	if (*end != ':')
		return;
	strbuf_reset(&r->cwd);
	strbuf_add(&r->cwd, end + 1, r->scan.buf + r->scan.len - 1 - (end + 1));
	/* a marker asked again after Ctrl-C may come twice: one counts */
	if (seq == r->seq && !r->got_marker) {
		r->got_marker = 1;
		r->status = (int)status;
	}
}

/*
 * The shell's output: cut our markers out, pass the rest on (to stdout,
 * or to r->capture). Markers may be split across chunks.
 */
static int live_output(int stream, const char *buf, size_t len, void *data)
{
	struct repl *r = data;
	char prefix[32];
	size_t plen;

	plen = xsnprintf(prefix, sizeof(prefix), "%cgosbx-%s:", MARKER_CHAR,
			 r->nonce);
	for (size_t i = 0; i < len; i++) {
		char c = buf[i];

		if (!r->scan.len) {
			if (c == MARKER_CHAR)
				strbuf_addch(&r->scan, c);
			else
				strbuf_addch(&r->out, c);
			continue;
		}
		strbuf_addch(&r->scan, c);
		if (r->scan.len <= plen) {
			if (c == prefix[r->scan.len - 1])
				continue;
		} else if (c == MARKER_CHAR) {
			take_marker(r, plen);
			strbuf_reset(&r->scan);
			continue;
		} else if (r->scan.len < MARKER_MAX) {
			continue;
		}
		/* not ours: it was output (a new start may end it) */
		if (c == MARKER_CHAR) {
			strbuf_add(&r->out, r->scan.buf, r->scan.len - 1);
			strbuf_reset(&r->scan);
			strbuf_addch(&r->scan, c);
		} else {
			strbuf_addbuf(&r->out, &r->scan);
			strbuf_reset(&r->scan);
		}
	}
	flush_out(r);
	return 0;
}

/* Give text to the shell's stdin, all of it. 0, or -1 (shell gone). */
static int shell_send(struct repl *r, const char *text)
{
	size_t len = strlen(text), off = 0;

	while (off < len) {
		ssize_t n = interactive_write(r->ia, text + off, len - off);

		if (n < 0)
			return -1;
		off += (size_t)n;
		if (off < len && interactive_step(r->ia, 100, NULL, 0) < 0)
			return -1;
	}
	return 0;
}

static void shell_stop(struct repl *r, struct session_result *res)
{
	struct session_result tmp;

	if (!r->ia)
		return;
	session_result_init(&tmp);
	interactive_finish(r->ia, res ? res : &tmp);
	session_result_release(&tmp);
	r->ia = NULL;
	strbuf_reset(&r->scan);
	strbuf_reset(&r->out);
}

/*
 * The shell's helpers: __gosbx_m prints a marker (and leaves the status
 * of the line in $?), __gosbx_c the completions of a word: names that
 * start with it from the shell's directory (directories with a '/'),
 * and, for the first word of a command, the programs in $PATH.
 */
static const char shell_setup[] =
	"__gosbx_m() { printf '\\036gosbx-%s:%s:%s:%s\\036' "
	"\"$__gosbx_n\" \"$1\" \"$2\" \"$PWD\"; return \"$2\"; }\n"
	"__gosbx_c() {\n"
	" for __gosbx_f in \"$3\"*; do\n"
	"  if [ -d \"$__gosbx_f\" ]; then printf '%s/\\n' \"$__gosbx_f\"\n"
	"  elif [ -e \"$__gosbx_f\" ] || [ -L \"$__gosbx_f\" ]; then\n"
	"   printf '%s\\n' \"$__gosbx_f\"; fi\n"
	" done\n"
	" case $2$3 in 1*/*|0*) ;; *)\n"
	"  __gosbx_i=$IFS; IFS=:\n"
	"  for __gosbx_d in $PATH; do\n"
	"   for __gosbx_f in \"$__gosbx_d/$3\"*; do\n"
	"    [ -f \"$__gosbx_f\" ] && [ -x \"$__gosbx_f\" ] &&\n"
	"     printf '%s\\n' \"${__gosbx_f##*/}\"\n"
	"   done\n"
	"  done\n"
	"  IFS=$__gosbx_i;;\n"
	" esac\n"
	" __gosbx_m \"$1\" 0\n"
	"}\n";

/*
 * Wait for the marker r->seq, stepping the channel. Returns 0 when it
 * came (r->status), 1 when the shell ended (*exit_code, -1 when we
 * ended it), -1 when the channel broke (reported), -2 after timeout_ms
 * (-1: none) or on a signal other than an interrupting SIGINT. With
 * interruptible, Ctrl-C interrupts the line (*interrupted is set).
 */
static int wait_marker(struct repl *r, int64_t timeout_ms, int interruptible,
		       int *interrupted, int *exit_code)
{
	uint64_t start = monotonic_ms(), int_at = 0;
	int kills = 0;

	for (;;) {
		int rc;

		if (r->got_marker)
			return 0;
		rc = interactive_step(r->ia, 100, NULL, 0);
		if (r->got_marker)
			return 0;
		if (rc <= 0) {
			struct session_result res;

			session_result_init(&res);
			shell_stop(r, &res);
			*exit_code = res.exit_code;
			session_result_release(&res);
			return rc ? -1 : 1;
		}
		if (got_winch) {
			unsigned cols, rows;

			got_winch = 0;
			if (!terminal_size(&cols, &rows))
				interactive_resize(r->ia, cols, rows);
		}
		if (*r->sig && (*r->sig != SIGINT || !interruptible))
			return -2;
		if (timeout_ms >= 0 &&
		    monotonic_ms() - start > (uint64_t)timeout_ms)
			return -2;
		if (!interruptible)
			continue;
		if (*r->sig == SIGINT ||
		    (int_at && monotonic_ms() - int_at > INTERRUPT_GRACE_MS)) {
			struct strbuf again = STRBUF_INIT;

			*r->sig = 0;
			*interrupted = 1;
			if (kills >= 2) {
				/* the shell does not come back: a new one */
				shell_stop(r, NULL);
				*exit_code = -1;
				return 1;
			}
			interactive_signal(r->ia, kills ? "KILL" : "INT");
			kills++;
			int_at = monotonic_ms();
			/* the shell drops what it had read: ask again */
			strbuf_addf(&again, "__gosbx_m %u $?\n", r->seq);
			shell_send(r, again.buf);
			strbuf_release(&again);
		}
	}
}

/*
 * Start the live shell, unless it runs. Returns 0, or -1 with error()
 * (the REPL goes on; the next line tries again).
 */
static int shell_start(struct repl *r)
{
	struct interactive_opts o = { 0 };
	struct strvec env = STRVEC_INIT;
	struct strbuf setup = STRBUF_INIT, said = STRBUF_INIT;
	unsigned char raw[8];
	int interrupted = 0, code, rc;

	if (r->ia)
		return 0;
	if (getrandom(raw, sizeof(raw), 0) != sizeof(raw))
		return error_errno("getrandom");
	for (int i = 0; i < 8; i++)
		xsnprintf(r->nonce + 2 * i, 3, "%02x", raw[i]);
	strvec_pushv(&env, (const char *[]){ "PS1=", "PS2=", "ENV=", NULL });
	strvec_pushf(&env, "TERM=%s",
		     getenv("TERM") && *getenv("TERM") ? getenv("TERM")
						       : "dumb");
	o.command = "exec /bin/sh -i";
	o.env = env.v;
	o.tty = 1;
	o.tty_raw = 1;
	terminal_size(&o.cols, &o.rows);
	o.on_output = live_output;
	o.data = r;
	rc = interactive_open(r->s, &o, &r->ia);
	strvec_clear(&env);
	if (rc < 0)
		return -1;
	strbuf_addf(&setup, "__gosbx_n=%s\n%s__gosbx_m 0 0\n", r->nonce,
		    shell_setup);
	r->seq = 0;
	r->got_marker = 0;
	/* what the shell says before it is ready is not for the user */
	r->capture = &said;
	rc = shell_send(r, setup.buf);
	if (!rc)
		rc = wait_marker(r, 60000, 0, &interrupted, &code);
	r->capture = NULL;
	strbuf_release(&setup);
	strbuf_release(&said);
	if (rc) {
		shell_stop(r, NULL);
		return error("the sandbox's shell did not start");
	}
	strbuf_reset(&r->root);
	strbuf_addbuf(&r->root, &r->cwd);
	return 0;
}

/*
 * Run one line in the live shell with live output. Returns 0 when it
 * ended (*code its status), 1 when it was interrupted, -1 on failure.
 */
static int live_run(struct repl *r, const char *line, int *code)
{
	struct strbuf cmd = STRBUF_INIT;
	int interrupted = 0, rc, status = -1;

	if (shell_start(r) < 0)
		return -1;
	r->seq++;
	r->got_marker = 0;
	r->last_byte = -1;
	/* command: errors in the line (syntax too) do not abort the list */
	strbuf_addstr(&cmd, "command eval ");
	sq_quote_buf(&cmd, line);
	strbuf_addf(&cmd, " </dev/null; __gosbx_m %u $?\n", r->seq);
	*r->sig = 0;
	fflush(stdout);
	rc = shell_send(r, cmd.buf);
	strbuf_release(&cmd);
	if (!rc)
		rc = wait_marker(r, -1, 1, &interrupted, &status);
	end_output_line(r);
	if (rc == 0) {
		status = r->status;
	} else if (rc == 1) {
		/* exit, exec, or a shell that had to go */
		if (status >= 0 && !interrupted)
			fprintf(stderr, "[exit %d]\n", status);
		fprintf(stderr, "[the shell ended; the next line starts a "
				"new one in /app]\n");
		strbuf_reset(&r->cwd);
		strbuf_addbuf(&r->cwd, &r->root);
	} else if (rc == -2) {
		shell_stop(r, NULL);
	}
	if (code)
		*code = status;
	if (interrupted) {
		fprintf(stderr, "[cancelled]\n");
		return 1;
	}
	if (rc == 0 && status)
		fprintf(stderr, "[exit %d]\n", status);
	return rc < 0 ? -1 : 0;
}

/* The prompt: claim, the shell's directory (its start shown as /app). */
static void make_prompt(struct repl *r, struct strbuf *prompt)
{
	const char *dir = r->cwd.buf, *rest;

	strbuf_reset(prompt);
	strbuf_addf(prompt, "%s:", r->s->claim);
	if (!r->live || !r->cwd.len) {
		strbuf_addstr(prompt, "/app");
		dir = "";
	} else if (r->root.len && skip_prefix(dir, r->root.buf, &rest) &&
		   (!*rest || *rest == '/')) {
		strbuf_addstr(prompt, "/app");
		dir = rest;
	}
	/* the sandbox names the directory: no C0 or C1 control in it */
	utf8_escape_into(prompt, dir, strlen(dir), 0);
	strbuf_addstr(prompt, "$ ");
}

/* ---- Tab completion of names in the sandbox ---- */

static struct repl *completing;
static struct strvec matches = STRVEC_INIT;
static size_t match_next;

static char *match_gen(const char *text, int state)
{
	if (!state)
		match_next = 0;
	while (match_next < matches.nr) {
		const char *m = matches.v[match_next++];

		if (starts_with(m, text))
			return xstrdup(m);
	}
	return NULL;
}

/* Is the word at start the first of a command (a program name)? */
static int command_position(const char *line, int start)
{
	while (start > 0 && (line[start - 1] == ' ' || line[start - 1] == '\t'))
		start--;
	return !start || strchr(";|&(", line[start - 1]);
}

static char **repl_complete(const char *text, int start, int end)
{
	struct repl *r = completing;
	struct strbuf cmd = STRBUF_INIT, got = STRBUF_INIT;
	int interrupted = 0, code, rc, dirs_only = 1;
	char **ret = NULL;
	char *p, *nl;

	dl_readline_completion_done(' ');
	strvec_clear(&matches);
	if (!r || !r->live || shell_start(r) < 0)
		return NULL;
	r->seq++;
	r->got_marker = 0;
	strbuf_addf(&cmd, "__gosbx_c %u %d ", r->seq,
		    command_position(dl_readline_line(), start));
	sq_quote_buf(&cmd, text);
	strbuf_addch(&cmd, '\n');
	r->capture = &got;
	rc = shell_send(r, cmd.buf);
	if (!rc)
		rc = wait_marker(r, 5000, 0, &interrupted, &code);
	r->capture = NULL;
	if (rc == -2)
		shell_stop(r, NULL); /* out of step: start afresh */
	for (p = got.buf; !rc && *p; p = *nl ? nl + 1 : nl) {
		int dup = 0;

		nl = strchrnul(p, '\n');
		if (nl == p)
			continue;
		*nl = '\0';
		for (size_t i = 0; i < matches.nr && !dup; i++)
			dup = !strcmp(matches.v[i], p);
		if (!dup) {
			strvec_push(&matches, p);
			if (nl[-1] != '/')
				dirs_only = 0;
		}
		*nl = '\n';
	}
	if (matches.nr) {
		/* a directory goes on with its contents, not a space */
		dl_readline_completion_done(dirs_only ? 0 : ' ');
		ret = rl_completion_matches(text, match_gen);
	}
	strbuf_release(&cmd);
	strbuf_release(&got);
	return ret;
}

/* ---- meta commands ---- */

/*
 * Split a meta command's arguments: words separated by blanks, '...'
 * and "..." quote, a backslash escapes the next character. Returns 0,
 * or -1 with error() for an unterminated quote.
 */
static int split_words(const char *s, struct strvec *out)
{
	struct strbuf w = STRBUF_INIT;

	while (*s) {
		int in_word = 0;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		strbuf_reset(&w);
		while (*s && (in_word || (*s != ' ' && *s != '\t'))) {
			if (*s == '\'' || *s == '"') {
				char q = *s++;
				while (*s && *s != q) {
					if (q == '"' && *s == '\\' && s[1])
						s++;
					strbuf_addch(&w, *s++);
				}
				if (!*s) {
					strbuf_release(&w);
					return error("unterminated quote");
				}
				s++;
			} else if (*s == '\\' && s[1]) {
				strbuf_addch(&w, s[1]);
				s += 2;
			} else {
				strbuf_addch(&w, *s++);
			}
		}
		strvec_push(out, w.buf);
	}
	strbuf_release(&w);
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static void meta_put(struct repl *r, const struct strvec *args)
{
	const char *local = args->v[1];
	const char *dest = args->nr > 2 ? args->v[2] : NULL;
	struct stat st;

	if (stat(local, &st) < 0) {
		error_errno("cannot read '%s'", local);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		/* a tree goes under dest (default /app) by its base name */
		if (session_push(r->s, &local, 1, dest) == 0)
			printf("put '%s' into /app%s%s\n", local,
			       dest ? "/" : "", dest ? dest : "");
	} else {
		struct strbuf data = STRBUF_INIT;
		struct session_file f;
		char *name = NULL;

		if (!dest) {
			name = xstrdup(local);
			while (strlen(name) > 1 &&
			       name[strlen(name) - 1] == '/')
				name[strlen(name) - 1] = '\0';
			dest = base_name(name);
		}
		if (strbuf_read_file(&data, local, st.st_size) < 0) {
			error_errno("cannot read '%s'", local);
		} else {
			int code;

			f.path = dest;
			f.data = data.buf;
			f.len = data.len;
			if (!run(r, "true", &f, 1, 1, &code) && !code)
				printf("put '%s' as /app/%s (%zu bytes)\n",
				       local, dest, data.len);
		}
		strbuf_release(&data);
		free(name);
	}
}

static void meta_get(struct repl *r, const struct strvec *args)
{
	const char *remote = args->v[1];
	struct strbuf data = STRBUF_INIT, local = STRBUF_INIT;
	struct stat st;
	int fd;

	if (session_get(r->s, remote, &data) < 0)
		goto out;
	strbuf_addstr(&local, args->nr > 2 ? args->v[2] : base_name(remote));
	if (!stat(local.buf, &st) && S_ISDIR(st.st_mode))
		strbuf_addf(&local, "/%s", base_name(remote));
	fd = open(local.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		error_errno("cannot write '%s'", local.buf);
		goto out;
	}
	if (write_in_full(fd, data.buf, data.len) < 0 || close(fd) < 0) {
		error_errno("cannot write '%s'", local.buf);
		goto out;
	}
	printf("got /app/%s as '%s' (%zu bytes)\n", remote, local.buf,
	       data.len);
out:
	strbuf_release(&data);
	strbuf_release(&local);
}

static void meta_help(struct repl *r)
{
	if (r->live)
		printf("Lines run in one shell in the sandbox, started in "
		       "/app: cd, variables and\nfunctions last. Tab "
		       "completes names in the sandbox.\n");
	else
		printf("Each line runs with sh -c in /app of the sandbox (a "
		       "fresh shell each time:\nits runtime has no "
		       "interactive channel).\n");
	printf("  :put <local> [<dest>]  copy a local file to /app/<dest>, "
	       "or a tree into /app/<dest>/\n"
	       "  :get <remote> [<local>] copy /app/<remote> to a local "
	       "file\n"
	       "  :ls [<dir>]...         list the current directory (or "
	       "those given)\n"
	       "  :reset                 empty /app (caches are kept), a "
	       "new shell\n"
	       "  :help                  this text\n"
	       "  :quit                  leave (also Ctrl-D); the sandbox "
	       "is kept\n"
	       "Ctrl-C cancels the running line and kills what it "
	       "started.\n");
}

/* Run a ':' line. Returns 1 to leave the REPL, else 0. */
static int meta_command(struct repl *r, const char *line)
{
	struct strvec args = STRVEC_INIT;
	const char *cmd;
	int quit = 0;

	if (split_words(line + 1, &args) < 0)
		goto out;
	cmd = args.nr ? args.v[0] : "";
	if (!strcmp(cmd, "quit") || !strcmp(cmd, "q") || !strcmp(cmd, "exit")) {
		quit = 1;
	} else if (!strcmp(cmd, "help") || !strcmp(cmd, "h")) {
		meta_help(r);
	} else if (!strcmp(cmd, "put")) {
		if (args.nr < 2 || args.nr > 3)
			error("usage: :put <local> [<dest>]");
		else
			meta_put(r, &args);
	} else if (!strcmp(cmd, "get")) {
		if (args.nr < 2 || args.nr > 3)
			error("usage: :get <remote> [<local>]");
		else
			meta_get(r, &args);
	} else if (!strcmp(cmd, "ls")) {
		struct strbuf c = STRBUF_INIT;

		strbuf_addstr(&c, "ls -la");
		if (args.nr > 1) {
			strbuf_addstr(&c, " --");
			for (size_t i = 1; i < args.nr; i++) {
				strbuf_addch(&c, ' ');
				sq_quote_buf(&c, args.v[i]);
			}
		}
		if (r->live)
			live_run(r, c.buf, NULL);
		else
			run(r, c.buf, NULL, 0, 0, NULL);
		strbuf_release(&c);
	} else if (!strcmp(cmd, "reset")) {
		struct strbuf left = STRBUF_INIT;
		int rc;

		/* a fresh shell too: nothing of the old one is left */
		shell_stop(r, NULL);
		strbuf_reset(&r->cwd);
		rc = session_reset(r->s, &left);
		if (rc == 0)
			printf("reset: /app is empty (caches are kept)%s\n",
			       r->live ? "; a new shell starts" : "");
		else if (rc > 0)
			warning("reset: left in /app:\n%s", left.buf);
		strbuf_release(&left);
	} else {
		error("unknown command ':%s'; try :help", cmd);
	}
out:
	fflush(stdout);
	strvec_clear(&args);
	return quit;
}

int exec_repl(struct session *s, volatile sig_atomic_t *sig)
{
	struct repl r = { s, sig, STRBUF_INIT, -1 };
	struct strbuf prompt = STRBUF_INIT;
	struct sigaction sa, old_winch;
	int status = 0;

	/* loaded now, not at start (lib/dl/dl.h) */
	if (dl_readline_init("gosbx") < 0)
		return 125;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_winch;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, &old_winch);
	history_open(&r);
	strbuf_init(&r.cwd, 0);
	strbuf_init(&r.root, 0);
	strbuf_init(&r.scan, 0);
	strbuf_init(&r.out, 0);
	r.live = !!(s->features &
		    (SESSION_FEAT_EXEC_INTERACTIVE | SESSION_FEAT_EXEC_INPUT));
	completing = &r;
	dl_readline_set_completion((void *)repl_complete);
	if (r.live)
		printf("sandbox '%s': lines run in one shell, in /app at "
		       "first; :help for more, :quit or Ctrl-D to leave\n",
		       s->claim);
	else
		printf("sandbox '%s': each line runs in /app, in a fresh shell "
		       "(this runtime has no interactive channel: cd and "
		       "variables do not last); :help for more, :quit or "
		       "Ctrl-D to leave\n",
		       s->claim);
	fflush(stdout);
	/* start the shell now: the first line should not wait for it */
	if (r.live)
		shell_start(&r);

	for (;;) {
		char *line = NULL;
		const char *p;
		int sigend;

		make_prompt(&r, &prompt);
		sigend = read_line(&r, prompt.buf, &line);

		if (sigend) {
			status = 128 + sigend;
			break;
		}
		if (!line) {
			printf("\n");
			break;
		}
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		if (*p)
			history_save(&r, line);
		if (*p == ':') {
			if (meta_command(&r, p)) {
				free(line);
				break;
			}
		} else if (*p && r.live) {
			live_run(&r, p, NULL);
		} else if (*p) {
			run(&r, p, NULL, 0, 0, NULL);
		}
		free(line);
		if (*sig && *sig != SIGINT) {
			status = 128 + *sig;
			break;
		}
	}
	fflush(stdout);
	shell_stop(&r, NULL);
	completing = NULL;
	strvec_clear(&matches);
	clear_history();
	sigaction(SIGWINCH, &old_winch, NULL);
	strbuf_release(&prompt);
	strbuf_release(&r.history);
	strbuf_release(&r.cwd);
	strbuf_release(&r.root);
	strbuf_release(&r.scan);
	strbuf_release(&r.out);
	return status;
}
