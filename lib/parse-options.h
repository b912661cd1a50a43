#ifndef PARSE_OPTIONS_H
#define PARSE_OPTIONS_H

#include "compat.h"

/*
 * Options are declared once, as a table; the same table drives parsing
 * and the `-h` text (Documentation/technical/style.md "Options and usage").
 * Never exits: the caller turns the return value into an exit status with
 * parse_options_status().
 */
enum parse_opt_type {
	OPTION_END,
	OPTION_GROUP,
	OPTION_BOOL,	 /* int *: 1 for --x, 0 for --no-x */
	OPTION_STRING,	 /* const char **: last one wins */
	OPTION_INT,	 /* int * */
	OPTION_DURATION, /* int64_t *, milliseconds; "1m30s", "500ms", "2" = 2s
			  */
	OPTION_SIZE,	 /* int64_t *, bytes; "2g", "512m", "64k", "100" */
	OPTION_STRING_LIST, /* struct strvec *: each use appends */
};

struct option {
	enum parse_opt_type type;
	int short_name;	       /* 0 for none */
	const char *long_name; /* NULL for none */
	void *value;
	const char *argh; /* "<name>" shown in help */
	const char *help;
	const char *env; /* environment variable giving the default */
};

#define OPT_END()                                                              \
	{                                                                      \
		OPTION_END, 0, NULL, NULL, NULL, NULL, NULL                    \
	}
#define OPT_GROUP(h)                                                           \
	{                                                                      \
		OPTION_GROUP, 0, NULL, NULL, NULL, (h), NULL                   \
	}
#define OPT_BOOL(s, l, v, h)                                                   \
	{                                                                      \
		OPTION_BOOL, (s), (l), (v), NULL, (h), NULL                    \
	}
#define OPT_STRING(s, l, v, a, h)                                              \
	{                                                                      \
		OPTION_STRING, (s), (l), (v), (a), (h), NULL                   \
	}
#define OPT_STRING_ENV(s, l, v, a, h, e)                                       \
	{                                                                      \
		OPTION_STRING, (s), (l), (v), (a), (h), (e)                    \
	}
#define OPT_INT(s, l, v, h)                                                    \
	{                                                                      \
		OPTION_INT, (s), (l), (v), "<n>", (h), NULL                    \
	}
#define OPT_DURATION(s, l, v, h)                                               \
	{                                                                      \
		OPTION_DURATION, (s), (l), (v), "<duration>", (h), NULL        \
	}
#define OPT_DURATION_ENV(s, l, v, h, e)                                        \
	{                                                                      \
		OPTION_DURATION, (s), (l), (v), "<duration>", (h), (e)         \
	}
#define OPT_SIZE(s, l, v, h)                                                   \
	{                                                                      \
		OPTION_SIZE, (s), (l), (v), "<size>", (h), NULL                \
	}
#define OPT_STRING_LIST(s, l, v, a, h)                                         \
	{                                                                      \
		OPTION_STRING_LIST, (s), (l), (v), (a), (h), NULL              \
	}

/* flags for parse_options() */
#define PARSE_OPT_STOP_AT_NON_OPTION                                           \
	(1 << 0) /* first non-option ends options */
#define PARSE_OPT_KEEP_ARGV0 (1 << 1)

/* negative return values of parse_options() */
#define PARSE_OPT_HELP (-1)  /* -h/--help was given; help is on stdout */
#define PARSE_OPT_ERROR (-2) /* bad usage; message and usage on stderr */

/*
 * Parse argv[1..argc-1] against opts. Environment defaults (opt->env)
 * are applied first, then the command line. Remaining arguments are
 * moved to the front of argv (argv[0] first if PARSE_OPT_KEEP_ARGV0)
 * and their count is returned. On -h, prints the usage to stdout and
 * returns PARSE_OPT_HELP; on an error, prints "error: ..." and the
 * usage to stderr and returns PARSE_OPT_ERROR. Strings stored into
 * OPTION_STRING values point into argv or the environment (not owned).
 * `usage` is a NULL-terminated list of synopsis lines.
 *
 * Hidden, for shell completion (contrib/completion/): `--list-opts` as
 * the only argument prints the long options of opts to stdout, one a
 * line, "--name=" when it takes a value, and returns PARSE_OPT_HELP.
 */
int parse_options(int argc, const char **argv, const struct option *opts,
		  const char *const *usage, unsigned flags);

/*
 * The exit status of a usage error, for every command (gosbx(1) "EXIT
 * STATUS", as git's): an unknown command or option, a missing or extra
 * argument, a bad option value (a malformed duration, size or number,
 * a bad claim name, a value outside the choices, options that do not
 * go together): whatever can be judged from the command line alone,
 * before anything is opened or read.
 */
#define PARSE_OPT_USAGE_STATUS 129

/* Exit status for a negative parse_options() result: 0 or 129. */
static inline int parse_options_status(int r)
{
	return r == PARSE_OPT_HELP ? 0 : PARSE_OPT_USAGE_STATUS;
}

/* Print the usage and option help to fp. */
void usage_with_options_to(FILE *fp, const char *const *usage,
			   const struct option *opts);

/*
 * A usage error found after parse_options(): print "error: <message>"
 * and then, as parse_options() does for an unknown option, the usage
 * and option help to stderr. Returns PARSE_OPT_USAGE_STATUS (129), the
 * exit status of every usage error.
 */
int usage_error(const char *const *usage, const struct option *opts,
		const char *fmt, ...) PRINTF_LIKE(3, 4);

/*
 * The same when the message was printed already (e.g. by
 * session_check_claim_name()): print the usage and option help to
 * stderr and return PARSE_OPT_USAGE_STATUS.
 */
int usage_reported(const char *const *usage, const struct option *opts);

/*
 * Parse a Go-style duration ("300ms", "1.5s", "1m30s", "2h"; a bare
 * number is seconds) into milliseconds, rounded to the nearest. Each
 * number is plain decimal (digits, optional fraction: no sign,
 * exponent or hex) followed by a unit: h, m, s, ms, us. Returns 0, or
 * -1 on bad input or above INT64_MAX / 2 ms (nothing printed).
 */
int parse_duration_ms(const char *s, int64_t *out_ms);
/*
 * Parse a size with optional binary suffix (k, m, g, t; "b"/"i"/"ib"
 * ignored, case-insensitive) into bytes. The number is plain decimal
 * as for parse_duration_ms() ("1.5g"). Returns 0, or -1 on bad input
 * or above INT64_MAX / 2 bytes.
 */
int parse_size_bytes(const char *s, int64_t *out_bytes);

#endif /* PARSE_OPTIONS_H */
