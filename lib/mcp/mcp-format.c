#include "compat.h"
#include "mcp/mcp-format.h"
#include "mcp/mcp-result.h"
#include "session/session.h"
#include "utf8.h"

/* "ss", "ss.f", "ss.ff", "ss.fff": seconds with trailing zeros cut */
static void add_seconds(struct strbuf *out, uint64_t ms)
{
	unsigned frac = (unsigned)(ms % 1000);

	strbuf_addf(out, "%" PRIu64, ms / 1000);
	if (frac) {
		char digits[4];
		int n = 3;

		digits[0] = '0' + frac / 100;
		digits[1] = '0' + frac / 10 % 10;
		digits[2] = '0' + frac % 10;
		while (n > 0 && digits[n - 1] == '0')
			n--;
		strbuf_addch(out, '.');
		strbuf_add(out, digits, n);
	}
	strbuf_addch(out, 's');
}

void mcp_format_duration(struct strbuf *out, int64_t ms)
{
	uint64_t u;

	if (!ms) {
		strbuf_addstr(out, "0s");
		return;
	}
	if (ms < 0) {
		strbuf_addch(out, '-');
		u = (uint64_t)0 - (uint64_t)ms;
	} else {
		u = (uint64_t)ms;
	}
	/* Go: under one second the largest unit that fits, here ms */
	if (u < 1000) {
		strbuf_addf(out, "%" PRIu64 "ms", u);
		return;
	}
	/* else [<h>h][<m>m]<s>s, minutes shown whenever hours are */
	if (u >= 3600000) {
		strbuf_addf(out, "%" PRIu64 "h%" PRIu64 "m", u / 3600000,
			    u / 60000 % 60);
	} else if (u >= 60000) {
		strbuf_addf(out, "%" PRIu64 "m", u / 60000);
	}
	add_seconds(out, u % 60000);
}

int64_t mcp_round_ns_to_ms(int64_t ns)
{
	int64_t q = ns / 1000000, r = ns % 1000000;

	if (r >= 500000)
		q++;
	else if (r <= -500000)
		q--;
	return q;
}

int mcp_format_stream(struct strbuf *out, const char *buf, size_t len)
{
	struct strbuf raw = STRBUF_INIT;
	int shortened;

	strbuf_add(&raw, buf, len);
	shortened = session_truncate_head_tail(&raw);
	utf8_sanitize_into(out, raw.buf, raw.len);
	strbuf_release(&raw);
	return shortened;
}

void mcp_format_result(struct strbuf *out, const struct mcp_run_text *r)
{
	strbuf_addf(out, "exit=%d  (", r->exit_code);
	mcp_format_duration(out, r->duration_ms);
	strbuf_addch(out, ')');
	if (r->timed_out_ms > 0) {
		strbuf_addstr(out, "  [timed out after ");
		mcp_format_duration(out, r->timed_out_ms);
		strbuf_addch(out, ']');
	}
	if (r->oom && r->oom_limit_bytes > 0)
		strbuf_addf(out, "  [out of memory: limit %" PRId64 " MiB]",
			    r->oom_limit_bytes >> 20);
	else if (r->oom)
		strbuf_addstr(out, "  [out of memory]");
	if (r->output_held && r->held_output)
		strbuf_addf(out,
			    "  [a background process still holds the output; "
			    "its later output goes to %s]",
			    r->held_output);
	else if (r->output_held)
		strbuf_addstr(out, "  [a background process still holds the "
				   "output; its later output is dropped]");
	if (r->out_truncated && r->err_truncated)
		strbuf_addstr(out, "  [truncated: stdout, stderr]");
	else if (r->out_truncated)
		strbuf_addstr(out, "  [truncated: stdout]");
	else if (r->err_truncated)
		strbuf_addstr(out, "  [truncated: stderr]");
	strbuf_addch(out, '\n');
	if (r->out_len)
		mcp_result_add_block(out, "stdout", r->out, r->out_len);
	if (r->err_len)
		mcp_result_add_block(out, "stderr", r->err, r->err_len);
	if (!r->out_len && !r->err_len)
		strbuf_addstr(out, "\n(no output)\n");
}
