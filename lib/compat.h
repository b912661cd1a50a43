#ifndef COMPAT_H
#define COMPAT_H

/*
 * Included first by every gosbx source file: feature macros, the
 * standard headers everything uses, and the banned-function list.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))

#ifdef __GNUC__
#define NORETURN __attribute__((__noreturn__))
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#define UNUSED __attribute__((unused))
#else
#define NORETURN
#define PRINTF_LIKE(f, a)
#define UNUSED
#endif

/* Allocators that abort the process on out-of-memory (see usage.h). */
void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* snprintf that dies if the output does not fit. */
int xsnprintf(char *dst, size_t max, const char *fmt, ...) PRINTF_LIKE(3, 4);

/* Grow (x, alloc) so that it holds at least nr elements. */
#define ALLOC_GROW(x, nr, alloc)                                               \
	do {                                                                   \
		if ((nr) > (alloc)) {                                          \
			(alloc) = ((alloc) + 16) * 3 / 2;                      \
			if ((alloc) < (nr))                                    \
				(alloc) = (nr);                                \
			(x) = xrealloc((x), (alloc) * sizeof(*(x)));           \
		}                                                              \
	} while (0)

/* Read/write the whole buffer, retrying on EINTR and short counts. */
ssize_t xread(int fd, void *buf, size_t len);
ssize_t xwrite(int fd, const void *buf, size_t len);
ssize_t read_in_full(int fd, void *buf, size_t len);
ssize_t write_in_full(int fd, const void *buf, size_t len);

/*
 * The monotonic clock (CLOCK_MONOTONIC, clock_gettime(2)) in
 * milliseconds, microseconds and nanoseconds: the one way gosbx reads
 * it, for durations and deadlines.
 */
uint64_t monotonic_ms(void);
uint64_t monotonic_us(void);
uint64_t monotonic_ns(void);

/*
 * Set *ts to the time ms milliseconds from now on clock: the absolute
 * deadline that pthread_cond_timedwait(3) takes (on CLOCK_REALTIME for
 * a condition variable made with default attributes, on the clock set
 * with pthread_condattr_setclock() otherwise) and that
 * pthread_mutex_timedlock(3) takes (always CLOCK_REALTIME).
 */
void deadline_in_ms(struct timespec *ts, clockid_t clock, uint64_t ms);

/*
 * Start time of process pid (field 22 of /proc/<pid>/stat, clock ticks
 * since boot), which with the pid names one process for good; 0 when
 * it is gone or a zombie (not every pid 1 reaps the orphans it
 * inherits).
 */
uint64_t proc_start_time(pid_t pid);

#include "banned.h"

#endif /* COMPAT_H */
