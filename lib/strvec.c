#include "compat.h"
#include "strbuf.h"
#include "strvec.h"

const char *empty_strvec[] = { NULL };

void strvec_init(struct strvec *sv)
{
	sv->v = empty_strvec;
	sv->nr = sv->alloc = 0;
}

static const char *push_nodup(struct strvec *sv, char *s)
{
	if (sv->v == empty_strvec)
		sv->v = NULL;
	ALLOC_GROW(sv->v, sv->nr + 2, sv->alloc);
	sv->v[sv->nr++] = s;
	sv->v[sv->nr] = NULL;
	return s;
}

const char *strvec_push(struct strvec *sv, const char *s)
{
	return push_nodup(sv, xstrdup(s));
}

const char *strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return push_nodup(sv, strbuf_detach(&sb, NULL));
}

void strvec_pushv(struct strvec *sv, const char **items)
{
	for (; *items; items++)
		strvec_push(sv, *items);
}

void strvec_pop(struct strvec *sv)
{
	if (!sv->nr)
		return;
	free((char *)sv->v[--sv->nr]);
	sv->v[sv->nr] = NULL;
}

void strvec_clear(struct strvec *sv)
{
	if (sv->v != empty_strvec) {
		for (size_t i = 0; i < sv->nr; i++)
			free((char *)sv->v[i]);
		free(sv->v);
	}
	strvec_init(sv);
}

const char **strvec_detach(struct strvec *sv)
{
	const char **ret;

	if (sv->v == empty_strvec)
		ret = xcalloc(1, sizeof(*ret));
	else
		ret = sv->v;
	strvec_init(sv);
	return ret;
}
