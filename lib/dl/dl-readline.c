#include "compat.h"
#include "dl/dl.h"
#include "usage.h"

#include <pthread.h>
#include <readline/history.h>
#include <readline/readline.h>

/*
 * GNU readline for the REPL of `gosbx exec` (builtin/repl.c), loaded by
 * dl_readline_init() (lib/dl/dl.h). Each function has the prototype of
 * <readline/readline.h> or <readline/history.h> and calls the library's
 * own through a pointer of the same type (__typeof__). Readline's
 * variables cannot be shimmed: dl_readline_init() sets the ones the REPL
 * needs.
 */

#define SONAME "libreadline.so.8"
#define PACKAGE "libreadline8"

#define READLINE_SYMBOLS(X)                                                    \
	X(add_history)                                                         \
	X(append_history)                                                      \
	X(clear_history)                                                       \
	X(history_get_history_state)                                           \
	X(history_truncate_file)                                               \
	X(read_history)                                                        \
	X(rl_callback_handler_install)                                         \
	X(rl_callback_handler_remove)                                          \
	X(rl_callback_read_char)                                               \
	X(rl_callback_sigcleanup)                                              \
	X(rl_attempted_completion_function)                                    \
	X(rl_attempted_completion_over)                                        \
	X(rl_catch_signals)                                                    \
	X(rl_catch_sigwinch)                                                   \
	X(rl_completion_append_character)                                      \
	X(rl_completion_matches)                                               \
	X(rl_crlf)                                                             \
	X(rl_echo_signal_char)                                                 \
	X(rl_free_line_state)                                                  \
	X(rl_library_version)                                                  \
	X(rl_line_buffer)                                                      \
	X(rl_on_new_line)                                                      \
	X(rl_readline_name)                                                    \
	X(rl_redisplay)                                                        \
	X(rl_replace_line)                                                     \
	X(rl_resize_terminal)                                                  \
	X(stifle_history)                                                      \
	X(using_history)                                                       \
	X(write_history)

DL_LOADER(READLINE_SYMBOLS)

const char *dl_readline_version(const char **why)
{
	if (loaded())
		return *fn.rl_library_version;
	*why = load_error;
	return NULL;
}

int dl_readline_init(const char *name)
{
	if (!loaded())
		return error("%s", load_error);
	*fn.rl_catch_signals = 0;
	*fn.rl_catch_sigwinch = 0;
	*fn.rl_readline_name = name;
	return 0;
}

void dl_readline_set_completion(void *complete)
{
	if (loaded())
		*fn.rl_attempted_completion_function =
			(rl_completion_func_t *)complete;
}

void dl_readline_completion_done(int append)
{
	if (!loaded())
		return;
	/* never readline's own completion of local file names */
	*fn.rl_attempted_completion_over = 1;
	*fn.rl_completion_append_character = append;
}

const char *dl_readline_line(void)
{
	return loaded() && *fn.rl_line_buffer ? *fn.rl_line_buffer : "";
}

/* the shims below are macro calls: keep them as written */
/* clang-format off */
/* history: errno-style int results, as the library returns them */
SHIM_VOID(add_history, (const char *line), (line))
SHIM(int, append_history, (int n, const char *file), (n, file), ENOENT)
SHIM_VOID(clear_history, (void), ())
SHIM(HISTORY_STATE *, history_get_history_state, (void), (), NULL)
SHIM(int, history_truncate_file, (const char *file, int n), (file, n),
     ENOENT)
SHIM(int, read_history, (const char *file), (file), ENOENT)
SHIM_VOID(stifle_history, (int max), (max))
SHIM_VOID(using_history, (void), ())
SHIM(int, write_history, (const char *file), (file), ENOENT)

/* line editing */
SHIM_VOID(rl_callback_handler_install,
	  (const char *prompt, rl_vcpfunc_t *handler), (prompt, handler))
SHIM_VOID(rl_callback_handler_remove, (void), ())
SHIM_VOID(rl_callback_read_char, (void), ())
SHIM_VOID(rl_callback_sigcleanup, (void), ())
SHIM(int, rl_crlf, (void), (), -1)
SHIM_VOID(rl_echo_signal_char, (int sig), (sig))
SHIM_VOID(rl_free_line_state, (void), ())
SHIM(char **, rl_completion_matches,
     (const char *text, rl_compentry_func_t *entry), (text, entry), NULL)
SHIM(int, rl_on_new_line, (void), (), -1)
SHIM_VOID(rl_redisplay, (void), ())
SHIM_VOID(rl_replace_line, (const char *text, int clear_undo),
	  (text, clear_undo))
SHIM_VOID(rl_resize_terminal, (void), ())
/* clang-format on */
