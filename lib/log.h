#ifndef LOG_H
#define LOG_H

#include "compat.h"
#include "strbuf.h"

/*
 * Structured logs on stderr in the `key=value` form of Go's slog text
 * handler, as the upstream runtime writes them
 *(Documentation/protocol/runtime-api.md "Process"):
 *`time=2026-11-22T02:10:00.123Z level=INFO msg="..." k=v`. A value is quoted
 *(Go strconv.Quote style) when it is empty or holds a space, '"', '=', a
 *control character or invalid UTF-8.
 *
 *	struct log_line l;
 *	if (log_begin(&l, LOG_INFO, "exec done")) {
 *		log_int(&l, "exit", 0);
 *		log_end(&l);
 *	}
 * Each line is written with one write(2), so lines from several
 * threads never interleave.
 */
enum log_level { LOG_DEBUG = -4, LOG_INFO = 0, LOG_WARN = 4, LOG_ERROR = 8 };

/* Lines below this level are dropped. Default LOG_INFO. */
extern enum log_level log_min_level;
/* Where lines go; default 2 (stderr). */
extern int log_fd;

/* "debug", "info", "warn"/"warning", "error" (any case). 0 or -1. */
int log_parse_level(const char *s, enum log_level *out);

struct log_line {
	struct strbuf sb;
};

/* Start a line; returns 0 (and nothing to do) if the level is off. */
int log_begin(struct log_line *l, enum log_level level, const char *msg);
void log_str(struct log_line *l, const char *key, const char *value);
void log_int(struct log_line *l, const char *key, int64_t value);
void log_end(struct log_line *l);

/*
 * Keep the last lines written by log_end() in memory too, at most
 * cap_bytes bytes (whole lines; the oldest go first), for the runtime's
 * GET /v1/logs (Documentation/gosbx-runtime.txt). Off until called;
 * call once, before threads log.
 */
void log_ring_enable(size_t cap_bytes);

/*
 * Append to out the kept lines from byte offset since (counted from the
 * first line ever logged) on, or from the oldest kept line when those
 * before it were dropped. *from gets the offset of the first byte
 * given, *next the offset after the last (the since of the next call).
 * Thread-safe; without log_ring_enable() nothing is kept (0, 0).
 */
void log_ring_read(uint64_t since, struct strbuf *out, uint64_t *from,
		   uint64_t *next);

/*
 * Write at most lines_per_s lines a second on average, bursts of up to
 * burst (a token bucket); the others are dropped and counted, and the
 * next line written is preceded by `msg="log lines dropped" dropped=N`.
 * For a log that untrusted peers can make grow (netd: every connection
 * a sandbox makes is a line). Off until called (0: off again).
 */
void log_rate_limit(unsigned lines_per_s, unsigned burst);

/* One-shot: a line with just a message and one string pair (or NULL). */
void log_msg(enum log_level level, const char *msg, const char *key,
	     const char *value);

/*
 * The command preview of the `exec begin` / `exec done` lines: each
 * newline replaced by U+23CE, cut to its first 120 bytes (never inside
 * a character) with U+2026 appended when cut. Appended to out.
 */
void log_command_preview(struct strbuf *out, const char *command);

#endif /* LOG_H */
