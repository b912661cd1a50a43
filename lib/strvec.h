#ifndef STRVEC_H
#define STRVEC_H

#include "compat.h"

/*
 * A NULL-terminated array of owned strings, e.g. an argv list.
 * `v` is never NULL after STRVEC_INIT (points at an empty array).
 */
struct strvec {
	const char **v;
	size_t nr;
	size_t alloc;
};

extern const char *empty_strvec[];
#define STRVEC_INIT                                                            \
	{                                                                      \
		empty_strvec, 0, 0                                             \
	}

void strvec_init(struct strvec *sv);
/* Append a copy of s; returns the copy (owned by sv). */
const char *strvec_push(struct strvec *sv, const char *s);
const char *strvec_pushf(struct strvec *sv, const char *fmt, ...)
	PRINTF_LIKE(2, 3);
/* Append copies of each string of a NULL-terminated array. */
void strvec_pushv(struct strvec *sv, const char **items);
void strvec_pop(struct strvec *sv);
/* Free every string and the array; sv is empty again. */
void strvec_clear(struct strvec *sv);
/* Hand the array to the caller, who frees each string and the array. */
const char **strvec_detach(struct strvec *sv);

#endif /* STRVEC_H */
