#ifndef MCP_FORMAT_H
#define MCP_FORMAT_H

#include "compat.h"
#include "strbuf.h"

/*
 * The text that the MCP tool run_go_code returns (Documentation/protocol/mcp.md
 * "Tool run_go_code", seed 000 "The tool"): pure functions, no I/O, so that the
 * unit tests in t/unit/u-mcp-format.c pin every byte.
 *
 * The layout, exactly (the seed's pkg/format):
 *
 *   header line: "exit=<N>  (<duration>)", then "  [timed out after
 *   <limit>]" when a time limit cut the command (Documentation/protocol/mcp.md:
 * the text says so; <limit> in the duration format), then, when a stream was
 *   shortened, "  [truncated: stdout]", "  [truncated: stderr]" or
 *   "  [truncated: stdout, stderr]", then "\n";
 *   then for stdout, if it is not empty: "\n── stdout ──\n" and the
 *   text, with "\n" added if it does not end with one;
 *   then the same for stderr with "── stderr ──";
 *   if both are empty: "\n(no output)\n".
 *
 * So each present block is preceded by one blank line, and a missing
 * stream leaves no trace. "──" is U+2500 twice (bytes e2 94 80).
 * Examples, "|" marking the start of each line:
 *
 *   |exit=0  (47ms)            both streams
 *   |
 *   |── stdout ──
 *   |hi
 *   |
 *   |── stderr ──
 *   |warn
 *
 *   |exit=2  (120ms)           stderr only
 *   |
 *   |── stderr ──
 *   |./main.go:2:14: undefined: broken
 *
 *   |exit=0  (0s)              nothing
 *   |
 *   |(no output)
 *
 * i.e. "exit=0  (47ms)\n\n── stdout ──\nhi\n\n── stderr ──\nwarn\n",
 * "exit=2  (120ms)\n\n── stderr ──\n./main.go:...\n" and
 * "exit=0  (0s)\n\n(no output)\n".
 */

/*
 * Append a duration of ms milliseconds in the format of Go's
 * time.Duration.String() (what the seed prints after rounding its
 * duration to the millisecond): "0s", "47ms", "1s", "1.5s", "1m1s",
 * "1m30s", "1m0.25s", "1h0m0s", "2h3m4.005s"; negative values get a
 * leading "-" ("-1.5s").
 */
void mcp_format_duration(struct strbuf *out, int64_t ms);

/*
 * Round a duration in nanoseconds to whole milliseconds as Go's
 * Duration.Round(time.Millisecond) does (halfway away from zero).
 * Returns milliseconds.
 */
int64_t mcp_round_ns_to_ms(int64_t ns);

/*
 * Prepare one stream for the result: keep it whole if it is at most
 * 16,384 bytes, else its first 8,192 and last 8,192 bytes with
 * "\n... [N bytes elided] ...\n" between them (N = bytes removed;
 * session_truncate_head_tail() in session.h), then replace every byte
 * that is not part of valid UTF-8 by U+FFFD (utf8_sanitize_into()).
 * buf/len: the raw bytes (len in bytes). The text is appended to out.
 * Returns 1 if the stream was shortened, else 0.
 */
int mcp_format_stream(struct strbuf *out, const char *buf, size_t len);

/* What mcp_format_result() prints: streams already prepared. */
struct mcp_run_text {
	int exit_code;
	int64_t duration_ms; /* ms; printed as mcp_format_duration() */
	const char *out;     /* stdout text, out_len bytes (may hold NUL) */
	size_t out_len;
	const char *err; /* stderr text, err_len bytes */
	size_t err_len;
	int out_truncated; /* adds the "[truncated: ...]" marker */
	int err_truncated;
	/*
	 * > 0: the command was cut by this time limit (ms): the header
	 * says "  [timed out after <limit>]" right after the duration.
	 */
	int64_t timed_out_ms;
	/*
	 * The memory limit killed the command (reason "oom"): the header
	 * says "  [out of memory: limit <N> MiB]", or "  [out of memory]"
	 * when oom_limit_bytes is 0 (unknown).
	 */
	int oom;
	int64_t oom_limit_bytes;
	/*
	 * A process the command left held its output (session.h): the
	 * header says "  [a background process still holds the output;
	 * its later output goes to <held_output>]" (or "... is dropped]"
	 * when held_output is NULL).
	 */
	int output_held;
	const char *held_output;
};

/*
 * Append the result text described above to out. Empty streams
 * (length 0) are left out.
 */
void mcp_format_result(struct strbuf *out, const struct mcp_run_text *r);

#endif /* MCP_FORMAT_H */
