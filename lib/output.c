/*
 * -o <format> and --json of the commands that print state (output.h).
 */
#include "compat.h"
#include "output.h"
#include "strbuf.h"

/* "text, table or json" of formats, appended to sb */
static void add_choices(struct strbuf *sb, const char *const *formats)
{
	size_t n = 0;

	while (formats[n])
		n++;
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addstr(sb, i + 1 == n ? " or " : ", ");
		strbuf_addstr(sb, formats[i]);
	}
}

int output_opt_resolve(struct output_opt *oo, const char *const *formats,
		       const char *const *usage, const struct option *opts)
{
	struct strbuf choices = STRBUF_INIT;
	int ret;

	if (oo->json && oo->format && strcmp(oo->format, "json"))
		return usage_error(usage, opts,
				   "--json and -o %s do not go together",
				   oo->format);
	if (oo->json)
		oo->format = "json";
	if (!oo->format)
		oo->format = formats[0];
	for (const char *const *f = formats; *f; f++) {
		if (!strcmp(oo->format, *f)) {
			oo->format = *f;
			oo->json = !strcmp(*f, "json");
			return 0;
		}
	}
	add_choices(&choices, formats);
	ret = usage_error(usage, opts,
			  "unknown output format '%s' (expected %s)",
			  oo->format, choices.buf);
	strbuf_release(&choices);
	return ret;
}
