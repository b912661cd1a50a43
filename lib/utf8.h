#ifndef UTF8_H
#define UTF8_H

#include "compat.h"
#include "strbuf.h"

/*
 * UTF-8 helpers for text that goes into JSON (jansson and the MCP/
 * runtime answers require valid UTF-8; spec/runtime-api.md "Text in
 * JSON answers"). Validity follows RFC 3629: no overlongs, no
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

#endif /* UTF8_H */
