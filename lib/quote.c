#include "compat.h"
#include "quote.h"
#include "utf8.h"

void sq_quote_buf(struct strbuf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);
	int open = 0; /* inside '...' */

	if (!left) {
		strbuf_addstr(out, "''");
		return;
	}
	while (left) {
		size_t n = utf8_seq_len(p, left);

		if (!n) {
			/* a run of bytes that are not valid UTF-8 */
			if (open)
				strbuf_addch(out, '\'');
			open = 0;
			strbuf_addstr(out, "\"$(printf '");
			while (left && !utf8_seq_len(p, left)) {
				strbuf_addf(out, "\\%03o", *p);
				p++;
				left--;
			}
			strbuf_addstr(out, "')\"");
			continue;
		}
		if (!open)
			strbuf_addch(out, '\'');
		open = 1;
		if (*p == '\'')
			strbuf_addstr(out, "'\\''");
		else
			strbuf_add(out, p, n);
		p += n;
		left -= n;
	}
	if (open)
		strbuf_addch(out, '\'');
}

void sq_quote_argv(struct strbuf *out, const char *const *argv, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		if (i)
			strbuf_addch(out, ' ');
		sq_quote_buf(out, argv[i]);
	}
}
