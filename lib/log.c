#include "compat.h"
#include "log.h"
#include "utf8.h"

#include <pthread.h>
#include <strings.h>
#include <time.h>

enum log_level log_min_level = LOG_INFO;
int log_fd = 2;

int log_parse_level(const char *s, enum log_level *out)
{
	if (!strcasecmp(s, "debug"))
		*out = LOG_DEBUG;
	else if (!strcasecmp(s, "info"))
		*out = LOG_INFO;
	else if (!strcasecmp(s, "warn") || !strcasecmp(s, "warning"))
		*out = LOG_WARN;
	else if (!strcasecmp(s, "error"))
		*out = LOG_ERROR;
	else
		return -1;
	return 0;
}

static const char *level_name(enum log_level l)
{
	switch (l) {
	case LOG_DEBUG:
		return "DEBUG";
	case LOG_INFO:
		return "INFO";
	case LOG_WARN:
		return "WARN";
	default:
		return "ERROR";
	}
}

static int needs_quoting(const char *s)
{
	size_t len = strlen(s);

	if (!len || strpbrk(s, " \"="))
		return 1;
	return utf8_needs_escape(s, len, 0);
}

static void add_value(struct strbuf *sb, const char *s)
{
	if (!needs_quoting(s)) {
		strbuf_addstr(sb, s);
		return;
	}
	strbuf_addch(sb, '"');
	utf8_escape_into(sb, s, strlen(s), UTF8_ESCAPE_QUOTE);
	strbuf_addch(sb, '"');
}

int log_begin(struct log_line *l, enum log_level level, const char *msg)
{
	struct timespec ts;
	struct tm tm;
	char tbuf[64];

	if (level < log_min_level)
		return 0;
	strbuf_init(&l->sb, 256);
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%S", &tm);
	strbuf_addf(&l->sb, "time=%s.%03ldZ level=%s msg=", tbuf,
		    ts.tv_nsec / 1000000, level_name(level));
	add_value(&l->sb, msg);
	return 1;
}

void log_str(struct log_line *l, const char *key, const char *value)
{
	strbuf_addf(&l->sb, " %s=", key);
	add_value(&l->sb, value ? value : "");
}

void log_int(struct log_line *l, const char *key, int64_t value)
{
	strbuf_addf(&l->sb, " %s=%" PRId64, key, value);
}

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static struct strbuf ring = STRBUF_INIT;
static uint64_t ring_base; /* offset of ring.buf[0] */
static size_t ring_cap;

void log_ring_enable(size_t cap_bytes)
{
	ring_cap = cap_bytes;
}

static void ring_add(const char *line, size_t len)
{
	pthread_mutex_lock(&ring_lock);
	strbuf_add(&ring, line, len);
	if (ring.len > ring_cap) {
		/* drop to 3/4 at once, at a line's end: few moves */
		size_t drop = ring.len - ring_cap * 3 / 4;
		const char *nl = memchr(ring.buf + drop - 1, '\n',
					ring.len - (drop - 1));

		drop = nl ? (size_t)(nl - ring.buf) + 1 : ring.len;
		strbuf_remove(&ring, 0, drop);
		ring_base += drop;
	}
	pthread_mutex_unlock(&ring_lock);
}

void log_ring_read(uint64_t since, struct strbuf *out, uint64_t *from,
		   uint64_t *next)
{
	uint64_t end;

	pthread_mutex_lock(&ring_lock);
	end = ring_base + ring.len;
	if (since < ring_base)
		since = ring_base;
	if (since > end)
		since = end;
	strbuf_add(out, ring.buf + (since - ring_base), end - since);
	*from = since;
	*next = end;
	pthread_mutex_unlock(&ring_lock);
}

/* log_rate_limit(): a token bucket of whole lines */
static pthread_mutex_t rate_lock = PTHREAD_MUTEX_INITIALIZER;
static double rate_per_ms, rate_burst, rate_tokens;
static uint64_t rate_last_ms;
static uint64_t rate_dropped;

void log_rate_limit(unsigned lines_per_s, unsigned burst)
{
	pthread_mutex_lock(&rate_lock);
	rate_per_ms = lines_per_s / 1000.0;
	rate_burst = rate_tokens = burst;
	rate_last_ms = monotonic_ms();
	pthread_mutex_unlock(&rate_lock);
}

/*
 * 1 if the line may be written; 0 if it is dropped. *dropped: the
 * lines dropped before this one, to say so first.
 */
static int rate_take(uint64_t *dropped)
{
	uint64_t now;
	int ok;

	*dropped = 0;
	if (rate_per_ms <= 0)
		return 1;
	pthread_mutex_lock(&rate_lock);
	now = monotonic_ms();
	rate_tokens += (now - rate_last_ms) * rate_per_ms;
	if (rate_tokens > rate_burst)
		rate_tokens = rate_burst;
	rate_last_ms = now;
	ok = rate_tokens >= 1;
	if (ok) {
		rate_tokens -= 1;
		*dropped = rate_dropped;
		rate_dropped = 0;
	} else {
		rate_dropped++;
	}
	pthread_mutex_unlock(&rate_lock);
	return ok;
}

void log_end(struct log_line *l)
{
	uint64_t dropped;

	if (!rate_take(&dropped)) {
		strbuf_release(&l->sb);
		return;
	}
	if (dropped) {
		struct log_line d;

		if (log_begin(&d, LOG_WARN, "log lines dropped")) {
			log_int(&d, "dropped", (int64_t)dropped);
			strbuf_addch(&d.sb, '\n');
			(void)!write_in_full(log_fd, d.sb.buf, d.sb.len);
			strbuf_release(&d.sb);
		}
	}
	strbuf_addch(&l->sb, '\n');
	if (ring_cap)
		ring_add(l->sb.buf, l->sb.len);
	/* a failed write has nowhere left to be reported */
	(void)!write_in_full(log_fd, l->sb.buf, l->sb.len);
	strbuf_release(&l->sb);
}

void log_msg(enum log_level level, const char *msg, const char *key,
	     const char *value)
{
	struct log_line l;

	if (!log_begin(&l, level, msg))
		return;
	if (key)
		log_str(&l, key, value);
	log_end(&l);
}

void log_command_preview(struct strbuf *out, const char *command)
{
	struct strbuf tmp = STRBUF_INIT;
	size_t cut;

	for (const char *p = command; *p; p++) {
		if (*p == '\n')
			strbuf_addstr(&tmp, "\xe2\x8f\x8e"); /* U+23CE */
		else
			strbuf_addch(&tmp, *p);
	}
	if (tmp.len <= 120) {
		strbuf_addbuf(out, &tmp);
	} else {
		cut = utf8_cut(tmp.buf, tmp.len, 120);
		strbuf_add(out, tmp.buf, cut);
		strbuf_addstr(out, "\xe2\x80\xa6"); /* U+2026 */
	}
	strbuf_release(&tmp);
}
