#ifndef DL_H
#define DL_H

#include "compat.h"
#include "strbuf.h"

/*
 * Libraries loaded on first use with dlopen() instead of being linked,
 * so that a command that never needs them does not pay for loading
 * them (and their dependencies) at start: `gosbx -h` is the
 * floor under every command (t/perf/README.md, section `local`).
 *
 * Shims, one per library: each defines the library functions gosbx uses,
 * with the library's own prototypes (its header is included, so the
 * compiler checks them), and the callers do not change. The first call
 * of any of them loads the library and resolves every symbol the shim
 * needs, once per process (pthread_once). When that fails, each shim
 * function returns the library's own error value (NULL, ARCHIVE_FATAL,
 * MHD_NO...) and the constructors report the reason with error(); the
 * process keeps running.
 *
 *   lib/dl/dl-archive.c  libarchive.so.13 (Debian package libarchive13);
 *                     in libgosbx-base.a: no program links libarchive.
 *   lib/dl/dl-readline.c libreadline.so.8 (libreadline8); in the base,
 *                     used by the REPL of `gosbx exec` only.
 *   lib/dl/dl-mhd.c      libmicrohttpd.so.12 (libmicrohttpd12); linked
 *                     into `gosbx` only (`gosbx mcp --http`):
 *                     gosbx-runtime needs the server at start and links
 *                     the real library, and so do the test programs.
 *
 * Test knob: GOSBX_TEST_DL_DIR=<dir> makes every shim load
 * <dir>/<soname> instead of <soname> from the loader's search path. A
 * directory without the library stands for a machine where it is not
 * installed (t/t0020-dlopen.sh). For tests only; not for production.
 */

/*
 * dlopen(soname, RTLD_NOW | RTLD_LOCAL) (or <GOSBX_TEST_DL_DIR>/soname).
 *
 * soname:  the library's SONAME, e.g. "libarchive.so.13".
 * package: the Debian package that installs it, for the message.
 * why:     on failure, reset and set to "<soname> could not be loaded:
 *          <dlerror()>; install <package>".
 *
 * Returns the handle (the caller keeps it for the life of the process;
 * it is never closed), or NULL on failure. Thread-safe.
 */
void *dl_open(const char *soname, const char *package, struct strbuf *why);

/*
 * dlsym(handle, name) for a handle from dl_open(). Returns the address,
 * or NULL with why reset and set to "<soname> could not be loaded: no
 * symbol '<name>'...; install <package>" (a library older than the one
 * gosbx was built against).
 */
void *dl_sym(void *handle, const char *soname, const char *package,
	     const char *name, struct strbuf *why);

/*
 * The loader of a shim, from an X-macro SYMBOLS(X) that lists every
 * function it uses (X(name) each) and the shim's SONAME and PACKAGE
 * macros: defines `fn` (a struct of pointers of each function's own
 * type, no casts), load_error (why loading failed) and loaded(), which
 * loads the library and resolves every symbol once (pthread_once) and
 * returns 1 when all of them are there, else 0.
 */
#define DL_LOADER(SYMBOLS)                                                     \
	static struct {                                                        \
		SYMBOLS(DL_MEMBER_)                                            \
	} fn;                                                                  \
	static pthread_once_t load_once = PTHREAD_ONCE_INIT;                   \
	static int load_ok;                                                    \
	static char load_error[1024];                                          \
	static void load(void)                                                 \
	{                                                                      \
		struct strbuf why = STRBUF_INIT;                               \
		void *h = dl_open(SONAME, PACKAGE, &why);                      \
		SYMBOLS(DL_RESOLVE_)                                           \
		if (h)                                                         \
			load_ok = 1;                                           \
		else                                                           \
			snprintf(load_error, sizeof(load_error), "%s",         \
				 why.buf);                                     \
		strbuf_release(&why);                                          \
	}                                                                      \
	static int loaded(void)                                                \
	{                                                                      \
		pthread_once(&load_once, load);                                \
		return load_ok;                                                \
	}
#define DL_MEMBER_(name) __typeof__(name) *name;
#define DL_RESOLVE_(name)                                                      \
	if (h && !(fn.name = dl_sym(h, SONAME, PACKAGE, #name, &why)))         \
		h = NULL;

/*
 * Shims for a file that uses DL_LOADER(), one per function: SHIM
 * defines `ret name params` that calls the library's name with args
 * (the parameter names in parentheses) when loaded() and returns fail
 * otherwise; SHIM_VOID is the same for a function returning void,
 * which does nothing when the library is not loaded.
 */
#define SHIM(ret, name, params, args, fail)                                    \
	ret name params                                                        \
	{                                                                      \
		return loaded() ? fn.name args : (fail);                       \
	}

#define SHIM_VOID(name, params, args)                                          \
	void name params                                                       \
	{                                                                      \
		if (loaded())                                                  \
			fn.name args;                                          \
	}

/*
 * Load libarchive now if not done yet (lib/dl/dl-archive.c). Returns NULL
 * when it is usable, else why it is not (as dl_open() says it; static
 * storage, valid for the life of the process). Thread-safe. Callers
 * that report errors into a buffer (lib/tarball.c) check it first, so
 * that the reason reaches their caller (e.g. an HTTP answer) instead of
 * stderr.
 */
const char *dl_archive_error(void);

/*
 * Load readline (lib/dl/dl-readline.c) and set its variables for the REPL
 * of `gosbx exec` (builtin/repl.c): rl_catch_signals = 0 and
 * rl_catch_sigwinch = 0 (the REPL handles signals itself),
 * rl_readline_name = name (for ~/.inputrc; name must outlive the REPL).
 * Readline's variables are not shimmed: callers read the history state
 * through history_get_history_state(). Returns 0, or -1 after error()
 * with the reason. Not thread-safe (readline is not).
 */
int dl_readline_init(const char *name);

/*
 * The REPL's Tab completion (builtin/repl.c), after dl_readline_init():
 * set rl_attempted_completion_function (a rl_completion_func_t *, from
 * <readline/readline.h>; passed as void * here); from inside it, say
 * that readline must not fall back to completing local file names and
 * which character follows a single match (0: none); read the line being
 * edited (rl_line_buffer; "" when none). Not thread-safe.
 */
void dl_readline_set_completion(void *complete);
void dl_readline_completion_done(int append);
const char *dl_readline_line(void);

/*
 * The run-time version of each library, for `gosbx version`
 * (builtin/version.c): loads it if not done yet (cheap, and harmless:
 * none of them initialises anything when loaded) and returns the
 * library's own version string: archive_version_details() ("libarchive
 * 3.6.2 zlib/1.2.13 ..."), MHD_get_version() ("0.9.75"),
 * rl_library_version ("8.2"); static storage. NULL when the library
 * cannot be loaded, with *why set to the reason (as dl_open() says it;
 * static storage). Thread-safe except for readline's.
 */
const char *dl_archive_version(const char **why);
const char *dl_mhd_version(const char **why);
const char *dl_readline_version(const char **why);

#endif /* DL_H */
