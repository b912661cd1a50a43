/*
 * The result pieces the MCP toolsets share (lib/mcp/mcp-result.h), moved
 * here from the copies in lib/mcp/mcp-format.c, lib/mcp/mcp-tools-sandbox.c
 * and lib/mcp/mcp-tools-jobs.c.
 */
#include "compat.h"
#include "mcp/mcp-result.h"
#include "utf8.h"

/* "──": U+2500 BOX DRAWINGS LIGHT HORIZONTAL twice, in UTF-8 */
#define RULE "\xe2\x94\x80\xe2\x94\x80"

void mcp_result_add_json(struct strbuf *out, const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER |
					JSON_REAL_PRECISION(12));

	if (s)
		strbuf_addstr(out, s);
	free(s);
}

json_t *mcp_result_json_string(const char *s, size_t len)
{
	struct strbuf tmp = STRBUF_INIT;
	json_t *v;

	utf8_sanitize_into(&tmp, s, len);
	v = json_stringn(tmp.buf, tmp.len);
	strbuf_release(&tmp);
	return v;
}

void mcp_result_add_block(struct strbuf *out, const char *title,
			  const char *text, size_t len)
{
	if (!len)
		return;
	strbuf_addf(out, "\n" RULE " %s " RULE "\n", title);
	strbuf_add(out, text, len);
	if (text[len - 1] != '\n')
		strbuf_addch(out, '\n');
}

void mcp_result_add_stream(struct strbuf *out, const char *title,
			   const char *text, size_t len)
{
	struct strbuf tmp = STRBUF_INIT;

	utf8_sanitize_into(&tmp, text, len);
	mcp_result_add_block(out, title, tmp.buf, tmp.len);
	strbuf_release(&tmp);
}
