#include "compat.h"
#include "log.h"

#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <setjmp.h>
#include <time.h>
#include <cmocka.h>

static int pipefd[2];

static int setup(void **state)
{
	if (pipe(pipefd))
		return -1;
	/* non-blocking reads: "nothing was logged" is a plain EAGAIN */
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	log_fd = pipefd[1];
	log_min_level = LOG_INFO;
	return 0;
}

static int teardown(void **state)
{
	log_fd = 2;
	log_min_level = LOG_INFO;
	close(pipefd[0]);
	close(pipefd[1]);
	return 0;
}

/* Everything logged since the last call. */
static void drain(struct strbuf *sb)
{
	char buf[65536];
	ssize_t n;

	strbuf_reset(sb);
	while ((n = read(pipefd[0], buf, sizeof(buf))) > 0)
		strbuf_add(sb, buf, n);
	assert_true(n < 0 && errno == EAGAIN);
}

static void test_format(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	regex_t re;
	regmatch_t m[2];
	struct tm tm = { 0 };
	time_t when, now;
	const char *end;

	/* the time must be UTC whatever the local zone is */
	setenv("TZ", "EST5", 1);
	tzset();
	log_msg(LOG_INFO, "server listening", "addr", ":8888");
	drain(&sb);
	assert_int_equal(
		regcomp(&re,
			"^time=([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:"
			"[0-9]{2})\\.[0-9]{3}Z level=INFO "
			"msg=\"server listening\" addr=:8888\n$",
			REG_EXTENDED),
		0);
	if (regexec(&re, sb.buf, 2, m, 0))
		fail_msg("bad line: %s", sb.buf);
	regfree(&re);
	end = strptime(sb.buf + m[1].rm_so, "%Y-%m-%dT%H:%M:%S", &tm);
	assert_ptr_equal(end, sb.buf + m[1].rm_eo);
	when = timegm(&tm);
	now = time(NULL);
	/* generous: only a wrong zone (hours off) can fail this */
	if (when < now - 1800 || when > now + 1800)
		fail_msg("time %s is not now in UTC", sb.buf);
	unsetenv("TZ");
	tzset();
	strbuf_release(&sb);
}

/* The part of the line after the time and level. */
static const char *after_level(struct strbuf *sb)
{
	const char *p = strstr(sb->buf, " level=");

	assert_non_null(p);
	p = strchr(p + 1, ' ');
	assert_non_null(p);
	return p + 1;
}

static void test_builder(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct log_line l;

	assert_int_equal(log_begin(&l, LOG_WARN, "exec done"), 1);
	log_int(&l, "exit", -1);
	log_int(&l, "bytes", INT64_MAX);
	log_str(&l, "none", NULL);
	log_str(&l, "cmd", "ls -l");
	log_end(&l);
	drain(&sb);
	assert_non_null(strstr(sb.buf, " level=WARN "));
	assert_string_equal(after_level(&sb),
			    "msg=\"exec done\" exit=-1 "
			    "bytes=9223372036854775807 none=\"\" "
			    "cmd=\"ls -l\"\n");
	log_msg(LOG_ERROR, "boom", NULL, "ignored");
	drain(&sb);
	assert_non_null(strstr(sb.buf, " level=ERROR "));
	assert_string_equal(after_level(&sb), "msg=boom\n");
	strbuf_release(&sb);
}

struct qcase {
	const char *in, *out;
};

static void test_quoting(void **state)
{
	static const struct qcase c[] = {
		{ "", "\"\"" },
		{ "plain", "plain" },
		{ "/app/x.txt", "/app/x.txt" },
		{ "back\\slash", "back\\slash" },
		{ "h\xc3\xa9llo\xe2\x82\xac\xf0\x9f\x98\x80",
		  "h\xc3\xa9llo\xe2\x82\xac\xf0\x9f\x98\x80" },
		{ "a b", "\"a b\"" },
		{ " ", "\" \"" },
		{ "say \"hi\"", "\"say \\\"hi\\\"\"" },
		{ "\"", "\"\\\"\"" },
		{ "a=b", "\"a=b\"" },
		{ "line\nbreak", "\"line\\nbreak\"" },
		{ "tab\there", "\"tab\\there\"" },
		{ "cr\r", "\"cr\\r\"" },
		{ "\x01", "\"\\x01\"" },
		{ "\x1b[0m", "\"\\x1b[0m\"" },
		{ "\x7f", "\"\\x7f\"" },
		{ "\xc2\x9b"
		  "2J",
		  "\"\\u009b2J\"" }, /* C1 CSI */
		{ "\a\b\f\v", "\"\\a\\b\\f\\v\"" },
		{ "bad\xff", "\"bad\\xff\"" },
		{ "\xc3\xa9\xc3", "\"\xc3\xa9\\xc3\"" },
		{ "\xed\xa0\x80", "\"\\xed\\xa0\\x80\"" },
		{ "q\\ \"", "\"q\\\\ \\\"\"" },
	};
	struct strbuf sb = STRBUF_INIT, want = STRBUF_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		log_msg(LOG_INFO, "m", "k", c[i].in);
		drain(&sb);
		strbuf_reset(&want);
		strbuf_addf(&want, "msg=m k=%s\n", c[i].out);
		if (strcmp(after_level(&sb), want.buf))
			fail_msg("case %zu: got %s want %s", i,
				 after_level(&sb), want.buf);
		/* the message follows the same rules */
		log_msg(LOG_INFO, c[i].in, NULL, NULL);
		drain(&sb);
		strbuf_reset(&want);
		strbuf_addf(&want, "msg=%s\n", c[i].out);
		assert_string_equal(after_level(&sb), want.buf);
	}
	strbuf_release(&sb);
	strbuf_release(&want);
}

static void test_levels(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct log_line l;

	log_min_level = LOG_WARN;
	assert_int_equal(log_begin(&l, LOG_INFO, "dropped"), 0);
	log_msg(LOG_INFO, "dropped", "k", "v");
	log_msg(LOG_DEBUG, "dropped", NULL, NULL);
	drain(&sb);
	assert_string_equal(sb.buf, "");
	log_msg(LOG_WARN, "kept", NULL, NULL);
	log_msg(LOG_ERROR, "kept2", NULL, NULL);
	drain(&sb);
	assert_non_null(strstr(sb.buf, "level=WARN msg=kept\n"));
	assert_non_null(strstr(sb.buf, "level=ERROR msg=kept2\n"));
	assert_null(strstr(sb.buf, "dropped"));

	log_min_level = LOG_DEBUG;
	log_msg(LOG_DEBUG, "dbg", NULL, NULL);
	drain(&sb);
	assert_non_null(strstr(sb.buf, " level=DEBUG msg=dbg\n"));
	log_min_level = LOG_ERROR;
	log_msg(LOG_WARN, "w", NULL, NULL);
	drain(&sb);
	assert_string_equal(sb.buf, "");
	log_min_level = LOG_INFO;
	log_msg(LOG_DEBUG, "d", NULL, NULL);
	drain(&sb);
	assert_string_equal(sb.buf, "");
	strbuf_release(&sb);
}

static void test_parse_level(void **state)
{
	static const struct {
		const char *s;
		enum log_level l;
	} good[] = {
		{ "debug", LOG_DEBUG },	 { "DEBUG", LOG_DEBUG },
		{ "info", LOG_INFO },	 { "Info", LOG_INFO },
		{ "warn", LOG_WARN },	 { "WARNING", LOG_WARN },
		{ "warning", LOG_WARN }, { "error", LOG_ERROR },
		{ "ERROR", LOG_ERROR },
	};
	static const char *const bad[] = {
		"", "fatal", "info ", " info", "err", "warnings", "0", "trace",
	};

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		enum log_level l = LOG_ERROR + 1;

		assert_int_equal(log_parse_level(good[i].s, &l), 0);
		assert_int_equal(l, good[i].l);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		enum log_level l = LOG_ERROR + 1;

		assert_int_equal(log_parse_level(bad[i], &l), -1);
		assert_int_equal(l, LOG_ERROR + 1);
	}
}

static void preview(const char *cmd, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "<");
	log_command_preview(&sb, cmd);
	assert_true(starts_with(sb.buf, "<"));
	if (strcmp(sb.buf + 1, want))
		fail_msg("preview of '%s' is '%s', want '%s'", cmd, sb.buf + 1,
			 want);
	strbuf_release(&sb);
}

#define ELL "\xe2\x80\xa6"
#define NL "\xe2\x8f\x8e"

static void test_command_preview(void **state)
{
	char a[200], cmd[256], want[256];

	memset(a, 'a', sizeof(a));
	preview("", "");
	preview("echo hi", "echo hi");
	preview("a\nb\n", "a" NL "b" NL);

	/* exactly 120 bytes: unchanged; 121: cut with an ellipsis */
	xsnprintf(cmd, sizeof(cmd), "%.120s", a);
	preview(cmd, cmd);
	xsnprintf(cmd, sizeof(cmd), "%.121s", a);
	xsnprintf(want, sizeof(want), "%.120s" ELL, a);
	preview(cmd, want);

	/* multibyte characters straddling byte 120 */
	xsnprintf(cmd, sizeof(cmd), "%.119s\xc3\xa9", a); /* bytes 119-120 */
	xsnprintf(want, sizeof(want), "%.119s" ELL, a);
	preview(cmd, want);
	xsnprintf(cmd, sizeof(cmd), "%.118s\xc3\xa9", a); /* ends at 120 */
	preview(cmd, cmd);
	xsnprintf(cmd, sizeof(cmd), "%.118s\xc3\xa9z", a);
	xsnprintf(want, sizeof(want), "%.118s\xc3\xa9" ELL, a);
	preview(cmd, want);
	xsnprintf(cmd, sizeof(cmd), "%.118s\xe2\x82\xac", a); /* 118-120 */
	xsnprintf(want, sizeof(want), "%.118s" ELL, a);
	preview(cmd, want);
	xsnprintf(cmd, sizeof(cmd), "%.119s\xe2\x82\xac", a); /* 119-121 */
	xsnprintf(want, sizeof(want), "%.119s" ELL, a);
	preview(cmd, want);
	for (int k = 116; k <= 119; k++) {
		xsnprintf(cmd, sizeof(cmd), "%.*s\xf0\x9f\x98\x80tail", k, a);
		if (k == 116)
			xsnprintf(want, sizeof(want),
				  "%.116s\xf0\x9f\x98\x80" ELL, a);
		else
			xsnprintf(want, sizeof(want), "%.*s" ELL, k, a);
		preview(cmd, want);
	}
	/* a newline becomes 3 bytes, which counts against the 120 */
	xsnprintf(cmd, sizeof(cmd), "%.117s\n", a);
	xsnprintf(want, sizeof(want), "%.117s" NL, a);
	preview(cmd, want);
	xsnprintf(cmd, sizeof(cmd), "%.118s\n", a);
	xsnprintf(want, sizeof(want), "%.118s" ELL, a);
	preview(cmd, want);
	/* 60 newlines: 180 bytes, cut at the last whole U+23CE (40) */
	{
		struct strbuf w = STRBUF_INIT;

		memset(cmd, '\n', 60);
		cmd[60] = '\0';
		for (int i = 0; i < 40; i++)
			strbuf_addstr(&w, NL);
		strbuf_addstr(&w, ELL);
		preview(cmd, w.buf);
		strbuf_release(&w);
	}
}

#define THREADS 4
#define LINES 300

static void *writer(void *arg)
{
	char val[400];
	int id = (int)(intptr_t)arg;

	memset(val, 'a' + id, sizeof(val) - 1);
	val[sizeof(val) - 1] = '\0';
	for (int i = 0; i < LINES; i++) {
		struct log_line l;

		if (log_begin(&l, LOG_INFO, "t")) {
			log_int(&l, "id", id);
			log_int(&l, "i", i);
			log_str(&l, "v", val);
			log_end(&l);
		}
	}
	return NULL;
}

/* netd's log: a sandbox's connections cannot make it grow at will */
static void test_rate_limit(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	size_t lines = 0;
	const char *p;
	int i;

	(void)state;
	log_rate_limit(1, 5);
	for (i = 0; i < 100; i++)
		log_msg(LOG_INFO, "net deny", "host", "example.org");
	drain(&sb);
	for (p = sb.buf; (p = strchr(p, '\n')); p++)
		lines++;
	/* the burst, and at most one more refilled meanwhile */
	assert_true(lines >= 5 && lines <= 6);
	assert_null(strstr(sb.buf, "dropped"));
	/* the next line written says how many were not */
	log_rate_limit(1000000, 5);
	log_msg(LOG_INFO, "net allow", "host", "example.org");
	drain(&sb);
	assert_non_null(strstr(sb.buf, "msg=\"log lines dropped\" dropped=9"));
	assert_non_null(strstr(sb.buf, "msg=\"net allow\""));
	log_rate_limit(0, 0);
	log_msg(LOG_INFO, "after", NULL, NULL);
	drain(&sb);
	assert_non_null(strstr(sb.buf, "msg=after"));
	strbuf_release(&sb);
}

static void test_threads_whole_lines(void **state)
{
	char path[] = "/tmp/u-log-XXXXXX";
	int fd = mkstemp(path), saved = log_fd;
	pthread_t t[THREADS];
	struct strbuf sb = STRBUF_INIT;
	int count[THREADS] = { 0 };
	const char *p;

	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_SETFL, O_APPEND), 0);
	log_fd = fd;
	for (intptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, writer, (void *)i),
				 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	log_fd = saved;
	assert_true(strbuf_read_file(&sb, path, 0) > 0);
	unlink(path);
	close(fd);
	for (p = sb.buf; *p;) {
		const char *nl = strchr(p, '\n');
		int id, i;

		assert_non_null(nl);
		assert_int_equal(
			sscanf(strstr(p, " id="), " id=%d i=%d", &id, &i), 2);
		assert_true(id >= 0 && id < THREADS);
		assert_int_equal(i, count[id]);
		count[id]++;
		/* the value is intact: 399 copies of one letter */
		assert_int_equal(nl - strstr(p, " v=") - 3, 399);
		for (const char *q = strstr(p, " v=") + 3; q < nl; q++)
			assert_int_equal(*q, 'a' + id);
		p = nl + 1;
	}
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(count[i], LINES);
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_builder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quoting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_levels, setup, teardown),
		cmocka_unit_test(test_parse_level),
		cmocka_unit_test(test_command_preview),
		cmocka_unit_test(test_threads_whole_lines),
		cmocka_unit_test_setup_teardown(test_rate_limit, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
