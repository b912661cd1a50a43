#ifndef UTF8_H
#define UTF8_H

#include "compat.h"
#include "strbuf.h"

/*
 * UTF-8 helpers for text that goes into JSON (jansson and the MCP/
 * runtime answers require valid UTF-8; Documentation/protocol/runtime-api.md
 * "Text in JSON answers"). Validity follows RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF.
 */

/*
 * Length in bytes of the valid UTF-8 sequence starting at s (1..4),
 * or 0 if the bytes at s do not start one (invalid, or cut short by
 * len).
 */
size_t utf8_seq_len(const unsigned char *s, size_t len);

/* True if all len bytes are valid UTF-8. */
int utf8_is_valid(const char *s, size_t len);

/*
 * Number of bytes at the end of s[0..len) that form the beginning of
 * a multibyte sequence cut short (0..3): what a streaming reader should
 * hold back until more bytes arrive.
 */
size_t utf8_incomplete_tail(const char *s, size_t len);

/*
 * Append s to out with every byte that is not part of a valid
 * sequence replaced by U+FFFD (one replacement per bad byte, as Go's
 * encoding/json does).
 */
void utf8_sanitize_into(struct strbuf *out, const char *s, size_t len);

/*
 * The largest n <= max such that s[0..n) does not end inside a valid
 * multibyte sequence (for truncating by bytes without splitting a
 * character).
 */
size_t utf8_cut(const char *s, size_t len, size_t max);

/*
 * Text that came from a sandbox (a runtime's log or answers, a
 * command's output quoted in a message) on its way to a terminal, a
 * log line or an error message: append s to out with every control
 * character and every invalid byte shown escaped, so that the text can
 * move no cursor, set no title, clear no screen and forge no line.
 * C escapes for \n \r \t \a \b \f \v, "\xNN" for the other C0
 * controls, DEL and bytes that are not valid UTF-8, "\u0080".."\u009f"
 * for the C1 controls (as Go's strconv.Quote writes them); valid UTF-8
 * is kept. Flags:
 *   UTF8_ESCAPE_QUOTE      also '"' as \" and '\' as \\ (a quoted value)
 *   UTF8_ESCAPE_KEEP_LINES keep \n and \t as they are (text shown as
 *                          lines; each line is still safe)
 * Text escaped once has no control characters left, so escaping it
 * again (without UTF8_ESCAPE_QUOTE) changes nothing.
 */
#define UTF8_ESCAPE_QUOTE 1u
#define UTF8_ESCAPE_KEEP_LINES 2u
void utf8_escape_into(struct strbuf *out, const char *s, size_t len,
		      unsigned flags);

/*
 * True if utf8_escape_into() would change s (without
 * UTF8_ESCAPE_QUOTE): it holds a control character or invalid UTF-8.
 */
int utf8_needs_escape(const char *s, size_t len, unsigned flags);

#endif /* UTF8_H */
