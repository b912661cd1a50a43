#include "compat.h"
#include "strbuf.h"
#include "usage.h"

#include <time.h>

static void NORETURN oom(size_t size)
{
	fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", size);
	abort();
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		oom(size);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		oom(nmemb * size);
	return p;
}

void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);

	if (!p)
		oom(size);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		oom(strlen(s) + 1);
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		oom(n + 1);
	return p;
}

int xsnprintf(char *dst, size_t max, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, max, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= max) {
		fprintf(stderr, "fatal: xsnprintf: output of '%s' truncated\n",
			fmt);
		abort();
	}
	return n;
}

ssize_t xread(int fd, void *buf, size_t len)
{
	ssize_t n;

	do {
		n = read(fd, buf, len);
	} while (n < 0 && errno == EINTR);
	return n;
}

ssize_t xwrite(int fd, const void *buf, size_t len)
{
	ssize_t n;

	do {
		n = write(fd, buf, len);
	} while (n < 0 && errno == EINTR);
	return n;
}

ssize_t read_in_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t total = 0;

	while (total < len) {
		ssize_t n = xread(fd, p + total, len - total);
		if (n < 0)
			return -1;
		if (!n)
			break;
		total += n;
	}
	return total;
}

ssize_t write_in_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	size_t total = 0;

	while (total < len) {
		ssize_t n = xwrite(fd, p + total, len - total);
		if (n < 0)
			return -1;
		if (!n) {
			errno = ENOSPC;
			return -1;
		}
		total += n;
	}
	return total;
}

uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

uint64_t monotonic_us(void)
{
	return monotonic_ns() / 1000;
}

uint64_t monotonic_ms(void)
{
	return monotonic_ns() / 1000000;
}

void deadline_in_ms(struct timespec *ts, clockid_t clock, uint64_t ms)
{
	uint64_t ns;

	clock_gettime(clock, ts);
	ns = (uint64_t)ts->tv_nsec + ms % 1000 * 1000000;
	ts->tv_sec += (time_t)(ms / 1000 + ns / 1000000000);
	ts->tv_nsec = (long)(ns % 1000000000);
}

uint64_t proc_start_time(pid_t pid)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	uint64_t start = 0;
	const char *p;
	int field;

	if (pid <= 0)
		return 0;
	xsnprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (strbuf_read_file(&sb, path, 512) < 0)
		goto out;
	p = strrchr(sb.buf, ')');
	if (!p || !p[1] || !p[2])
		goto out;
	/* after ") " comes field 3 (state); a zombie counts as gone */
	if (p[2] == 'Z' || p[2] == 'X')
		goto out;
	for (field = 2; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	start = strtoull(p, NULL, 10);
out:
	strbuf_release(&sb);
	return start;
}
