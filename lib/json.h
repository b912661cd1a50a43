#ifndef JSON_H
#define JSON_H

#include "compat.h"
#include "strbuf.h"

#include <jansson.h>

/*
 * JSON helpers over jansson, plus a fast string escaper for large
 * answers (stdout/stderr of commands) that skips building a tree.
 */

/*
 * Parse len bytes as one JSON value. Returns a new reference (caller
 * json_decref()s it) or NULL with a message in err such as
 * "'[' or '{' expected near 'x' (line 1, column 1)".
 */
json_t *json_parse(const char *buf, size_t len, struct strbuf *err);

/*
 * Append the compact encoding of v to out (keys in insertion order).
 * Returns 0 or -1 (v holds invalid data).
 */
int json_dump_into(struct strbuf *out, const json_t *v);

/*
 * Append s (len bytes) to out as a JSON string literal with quotes.
 * Invalid UTF-8 bytes become U+FFFD; control characters, '"' and '\\'
 * are escaped (RFC 8259 section 7).
 */
void json_add_string(struct strbuf *out, const char *s, size_t len);
/*
 * As json_add_string(), but invalid UTF-8 is an error: returns -1 and
 * leaves out as it was; 0 when the string was added.
 */
int json_add_string_strict(struct strbuf *out, const char *s, size_t len);
static inline void json_add_str(struct strbuf *out, const char *s)
{
	json_add_string(out, s, strlen(s));
}

/*
 * Object member accessors. A member whose value is null counts as
 * absent; obj not being an object counts as every member absent.
 * json_object_str: the string (owned by obj), or NULL when absent or
 * of another type.
 */
const char *json_object_str(const json_t *obj, const char *key);
/* 1 present and integer (stored in *out), 0 absent, -1 wrong type */
int json_object_int(const json_t *obj, const char *key, int64_t *out);
/* 1 present and boolean (0/1 stored in *out), 0 absent, -1 wrong type */
int json_object_bool(const json_t *obj, const char *key, int *out);

/*
 * Standard base64 (RFC 4648 section 4) of len bytes appended to out.
 */
void base64_encode_into(struct strbuf *out, const void *data, size_t len);
/*
 * Decode standard base64 (RFC 4648 section 4; padding optional, but
 * when present it must complete the last group of four; whitespace
 * refused) into out. Returns 0, or -1 on bad input with out unchanged.
 */
int base64_decode_into(struct strbuf *out, const char *s, size_t len);

#endif /* JSON_H */
