#ifndef QUOTE_H
#define QUOTE_H

#include "compat.h"
#include "strbuf.h"

/*
 * Quoting words for a POSIX shell, the one place gosbx does it. The
 * runtime API takes one `sh -c` text (Documentation/protocol/runtime-api.md,
 * POST /execute and /v1/exec), so a command given as several words (gosbx exec,
 * the sandbox_run_command tool) travels as that text with each word quoted
 * here; `sh -c` then hands the program exactly those words as its argv, as
 * `docker exec`, `kubectl exec` and `env` do.
 *
 * The text this makes is valid UTF-8 whatever the words hold, because
 * it goes into JSON (RFC 8259 section 8.1; jansson refuses anything
 * else): a word is put in single quotes ('it'\''s'), and each run of
 * bytes that is not valid UTF-8 (utf8.h) is written as a command
 * substitution of printf(1) with octal escapes, "$(printf '\377')",
 * which every POSIX sh turns back into those bytes (no newline is
 * ever written that way, so nothing is lost to the substitution).
 * Newlines, quotes, backslashes, '$', '*' and every other valid
 * character stay literal inside the single quotes. An empty word
 * becomes ''. Words are C strings, so they hold no NUL byte.
 */

/* Append word s to out, quoted for sh as described above. */
void sq_quote_buf(struct strbuf *out, const char *s);

/*
 * Append the nr words of argv, each quoted with sq_quote_buf() and
 * separated by single spaces: the sh text that runs argv[0] with
 * exactly those arguments. Nothing is appended for nr == 0.
 */
void sq_quote_argv(struct strbuf *out, const char *const *argv, size_t nr);

#endif /* QUOTE_H */
