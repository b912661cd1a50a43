#ifndef OUTPUT_H
#define OUTPUT_H

#include "compat.h"
#include "parse-options.h"

/*
 * The output format of every command that prints state (open, exec,
 * claims, doctor, version): `-o <format>` chooses among the command's
 * formats, `--json` is the same as `-o json` (issue 19, "Consistent
 * output for scripts"; gosbx(1) "OUTPUT FORMATS"). One spelling, one
 * check and one error for all of them:
 *
 *	static const char *const formats[] = { "text", "json", NULL };
 *	struct output_opt out = OUTPUT_OPT_INIT;
 *	struct option opts[] = {
 *		OPT_OUTPUT(&out, "text (default) or json"), ..., OPT_END()
 *	};
 *	... parse_options ...
 *	if (output_opt_resolve(&out, formats, usage, opts))
 *		return PARSE_OPT_USAGE_STATUS;
 *	if (out.json) ...
 */
struct output_opt {
	const char *format; /* -o; NULL: not given; then the chosen one */
	int json;	    /* --json given; then: the format is "json" */
};

#define OUTPUT_OPT_INIT                                                        \
	{                                                                      \
		NULL, 0                                                        \
	}

/*
 * The two options, for an option table: `-o, --output=<format>` with
 * the help text `help` (name the formats and the default), and
 * `--json`.
 */
#define OPT_OUTPUT(oo, help)                                                   \
	OPT_STRING('o', "output", &(oo)->format, "<format>", (help)),          \
		OPT_BOOL(0, "json", &(oo)->json, "the same as -o json")

/*
 * After parse_options(): check the format against formats (a
 * NULL-terminated list; the first is the default, "json" should be
 * one of them). Sets oo->format to the chosen format (a string of
 * formats, static) and oo->json to whether it is "json". Returns 0, or
 * on a format not in the list, or --json with another -o, prints
 * "error: unknown output format 'yaml' (expected text or json)" (or
 * "error: --json and -o text do not go together") and the usage with
 * usage_error() and returns PARSE_OPT_USAGE_STATUS (129).
 */
int output_opt_resolve(struct output_opt *oo, const char *const *formats,
		       const char *const *usage, const struct option *opts);

#endif /* OUTPUT_H */
