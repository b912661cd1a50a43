#ifndef MCP_RESULT_H
#define MCP_RESULT_H

#include "compat.h"
#include "strbuf.h"

#include <jansson.h>

/*
 * The pieces of tool results the MCP toolsets share (lib/mcp/mcp-format.c,
 * lib/mcp/mcp-tools-sandbox.c, lib/mcp/mcp-tools-jobs.c), so that every
 * toolset writes them the same way, byte for byte
 * (Documentation/protocol/mcp.md).
 */

/*
 * Append v as compact JSON text, keys in their order, reals with 12
 * significant digits (9.16, not 9.1600000000000001). Nothing is
 * appended if v cannot be encoded.
 */
void mcp_result_add_json(struct strbuf *out, const json_t *v);

/*
 * A new JSON string of the len bytes at s, every byte that is not part
 * of valid UTF-8 replaced by U+FFFD (utf8_sanitize_into()). The caller
 * owns the reference.
 */
json_t *mcp_result_json_string(const char *s, size_t len);

/*
 * Append one output block of a result: "\n── <title> ──\n", the len
 * bytes of text as they are, and "\n" when they do not end with one.
 * Nothing for len 0. "──" is U+2500 twice (the seed's pkg/format).
 */
void mcp_result_add_block(struct strbuf *out, const char *title,
			  const char *text, size_t len);

/* The same block with text made valid UTF-8 first (U+FFFD). */
void mcp_result_add_stream(struct strbuf *out, const char *title,
			   const char *text, size_t len);

#endif /* MCP_RESULT_H */
