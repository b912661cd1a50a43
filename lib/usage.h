#ifndef USAGE_H
#define USAGE_H

#include "compat.h"

/*
 * Reporting, in git's style (Documentation/technical/style.md "Errors and exit
 * codes"): error(...)   prints "error: ..." to stderr and returns -1;
 *   warning(...) prints "warning: ...";
 *   die(...)     prints "fatal: ..." and exits die_status (never from
 *                lib/): 128, which gosbx sets to 125, its status for a
 *                failure of its own (gosbx(1) "EXIT STATUS");
 *   *_errno      variants append ": <strerror(errno)>".
 * Messages are lower case without a final full stop.
 */
int error(const char *fmt, ...) PRINTF_LIKE(1, 2);
int error_errno(const char *fmt, ...) PRINTF_LIKE(1, 2);
void warning(const char *fmt, ...) PRINTF_LIKE(1, 2);
void warning_errno(const char *fmt, ...) PRINTF_LIKE(1, 2);
NORETURN void die(const char *fmt, ...) PRINTF_LIKE(1, 2);
NORETURN void die_errno(const char *fmt, ...) PRINTF_LIKE(1, 2);

/*
 * Redirect error()/warning() output: when set, messages go to the
 * routine instead of stderr (used by the MCP server to turn library
 * errors into tool results). Pass NULL to restore stderr. The routine
 * is per thread.
 */
typedef void (*report_fn)(const char *prefix, const char *msg, void *data);
void set_error_routine(report_fn fn, void *data);
/* The routine and data set in this thread (NULL: stderr), to restore. */
void get_error_routine(report_fn *fn, void **data);
/*
 * A report_fn that drops every message, for work whose failures are
 * news only later (a retry, a background thread); last_error() still
 * has the last error().
 */
void report_nothing(const char *prefix, const char *msg, void *data);

/*
 * The last message given to error() in this thread, without the
 * "error: " prefix; "" when none. Valid until the next error() call.
 */
const char *last_error(void);

/* The program name used in messages, e.g. "gosbx". */
extern const char *progname;

/* The exit status of die() and die_errno(); 128 unless set. */
extern int die_status;

#endif /* USAGE_H */
