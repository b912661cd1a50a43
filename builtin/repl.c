/*
 * The REPL of `gosbx exec --claim=<name>` on a terminal (DESIGN.md
 * "One binary, many commands"; issue 3): GNU readline with a history
 * file, each line run as a shell command in the sandbox with live
 * output, and a few meta commands (:put, :get, :ls, :reset, :help,
 * :quit).
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
#include "dl.h"
#include "quote.h"
#include "session.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"

#include <fcntl.h>
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
};

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
	/* readline's variables are not reachable through lib/dl.h */
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

static void meta_help(void)
{
	printf("Each line runs with sh -c in /app of the sandbox "
	       "(a fresh shell each time).\n"
	       "  :put <local> [<dest>]  copy a local file to /app/<dest>, "
	       "or a tree into /app/<dest>/\n"
	       "  :get <remote> [<local>] copy /app/<remote> to a local "
	       "file\n"
	       "  :ls [<dir>]            list /app or a directory in it\n"
	       "  :reset                 empty /app (caches are kept)\n"
	       "  :help                  this text\n"
	       "  :quit                  leave (also Ctrl-D); the sandbox "
	       "is kept\n"
	       "Ctrl-C cancels the running command.\n");
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
		meta_help();
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
		run(r, c.buf, NULL, 0, 0, NULL);
		strbuf_release(&c);
	} else if (!strcmp(cmd, "reset")) {
		struct strbuf left = STRBUF_INIT;
		int rc = session_reset(r->s, &left);

		if (rc == 0)
			printf("reset: /app is empty (caches are kept)\n");
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

	/* loaded now, not at start (lib/dl.h) */
	if (dl_readline_init("gosbx") < 0)
		return 125;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_winch;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, &old_winch);
	history_open(&r);
	strbuf_addf(&prompt, "%s:/app$ ", s->claim);
	printf("sandbox '%s': each line runs in /app; :help for more, "
	       ":quit or Ctrl-D to leave\n",
	       s->claim);
	fflush(stdout);

	for (;;) {
		char *line = NULL;
		const char *p;
		int sigend = read_line(&r, prompt.buf, &line);

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
	clear_history();
	sigaction(SIGWINCH, &old_winch, NULL);
	strbuf_release(&prompt);
	strbuf_release(&r.history);
	return status;
}
