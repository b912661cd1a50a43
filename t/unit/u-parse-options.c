#include "compat.h"
#include "parse-options.h"
#include "strbuf.h"
#include "strvec.h"

#include <fcntl.h>
#include <setjmp.h>
#include <cmocka.h>

/*
 * Capture what is written to stdout and stderr while parsing: both
 * are pointed at pipes (usage text is far below the pipe capacity).
 */
struct capture {
	int saved[2];
	int pipes[2][2];
	struct strbuf out, err;
};

static void capture_start(struct capture *c)
{
	fflush(stdout);
	fflush(stderr);
	strbuf_init(&c->out, 0);
	strbuf_init(&c->err, 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pipe(c->pipes[i]), 0);
		c->saved[i] = dup(1 + i);
		assert_true(c->saved[i] >= 0);
		assert_true(dup2(c->pipes[i][1], 1 + i) >= 0);
		close(c->pipes[i][1]);
	}
}

static void capture_end(struct capture *c)
{
	fflush(stdout);
	fflush(stderr);
	for (int i = 0; i < 2; i++) {
		assert_true(dup2(c->saved[i], 1 + i) >= 0);
		close(c->saved[i]);
		assert_true(strbuf_read_fd(i ? &c->err : &c->out,
					   c->pipes[i][0], 0) >= 0);
		close(c->pipes[i][0]);
	}
}

static void capture_release(struct capture *c)
{
	strbuf_release(&c->out);
	strbuf_release(&c->err);
}

static const char *const usage[] = {
	"u-parse-options [<options>] [--] <args>...",
	NULL,
};

struct vals {
	int verbose, quiet, n;
	const char *file;
	int64_t timeout, mem;
	struct strvec list;
};

/* an initializer list: clang-format would indent it as a call */
/* clang-format off */
#define OPTS(v)                                                            \
	{                                                                  \
		OPT_BOOL('v', "verbose", &(v)->verbose, "be verbose"),     \
		OPT_BOOL('q', "quiet", &(v)->quiet, "be quiet"),           \
		OPT_INT('n', "count", &(v)->n, "how many"),                \
		OPT_STRING_ENV('f', "file", &(v)->file, "<path>",          \
			       "the file", "U_PO_FILE"),                   \
		OPT_DURATION_ENV(0, "timeout", &(v)->timeout, "how long",  \
				 "U_PO_TIMEOUT"),                          \
		OPT_SIZE(0, "mem", &(v)->mem, "memory limit"),             \
		OPT_STRING_LIST('e', "env", &(v)->list, "<k=v>",           \
				"an environment variable"),                \
		OPT_END(),                                                 \
	}
/* clang-format on */

static void vals_init(struct vals *v)
{
	memset(v, 0, sizeof(*v));
	v->n = -7;
	v->timeout = -7;
	v->mem = -7;
	strvec_init(&v->list);
	unsetenv("U_PO_FILE");
	unsetenv("U_PO_TIMEOUT");
}

/*
 * Parse a NULL-terminated argument list (argv[0] is added); returns
 * parse_options()'s result, the rest in out_argv (static storage).
 */
static const char *argbuf[64];
static int parse(struct vals *v, unsigned flags, struct capture *cap,
		 const char *first, ...)
{
	struct option opts[] = OPTS(v);
	va_list ap;
	int argc = 0, r;

	argbuf[argc++] = "u-parse-options";
	va_start(ap, first);
	for (const char *a = first; a; a = va_arg(ap, const char *))
		argbuf[argc++] = a;
	va_end(ap);
	argbuf[argc] = NULL;
	capture_start(cap);
	r = parse_options(argc, argbuf, opts, usage, flags);
	capture_end(cap);
	return r;
}

static void test_long_short_cluster(void **state)
{
	struct vals v;
	struct capture c;
	int r;

	vals_init(&v);
	r = parse(&v, 0, &c, "-vq", "-n5", "-f", "x.txt", "--timeout=300ms",
		  "--mem", "512m", "a", "b", NULL);
	assert_int_equal(r, 2);
	assert_string_equal(argbuf[0], "a");
	assert_string_equal(argbuf[1], "b");
	assert_null(argbuf[2]);
	assert_int_equal(v.verbose, 1);
	assert_int_equal(v.quiet, 1);
	assert_int_equal(v.n, 5);
	assert_string_equal(v.file, "x.txt");
	assert_int_equal(v.timeout, 300);
	assert_int_equal(v.mem, 512 * 1024 * 1024);
	assert_string_equal(c.out.buf, "");
	assert_string_equal(c.err.buf, "");
	capture_release(&c);

	vals_init(&v);
	r = parse(&v, 0, &c, "-vfFILE", "--count", "-3", "--file=a=b", NULL);
	assert_int_equal(r, 0);
	assert_int_equal(v.verbose, 1);
	assert_int_equal(v.n, -3);
	/* last one wins; '=' after the first belongs to the value */
	assert_string_equal(v.file, "a=b");
	capture_release(&c);

	vals_init(&v);
	r = parse(&v, 0, &c, "-qf", "--verbose", NULL);
	/* a value is taken even if it looks like an option */
	assert_int_equal(r, 0);
	assert_string_equal(v.file, "--verbose");
	assert_int_equal(v.verbose, 0);
	assert_int_equal(v.quiet, 1);
	capture_release(&c);

	vals_init(&v);
	r = parse(&v, 0, &c, "--file=", "-", NULL);
	assert_int_equal(r, 1);
	assert_string_equal(v.file, "");
	assert_string_equal(argbuf[0], "-"); /* "-" is an argument */
	capture_release(&c);
}

static void test_negation(void **state)
{
	struct vals v;
	struct capture c;

	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "-v", "--no-verbose", "--quiet", "-f",
			       "x", "--no-file", NULL),
			 0);
	assert_int_equal(v.verbose, 0);
	assert_int_equal(v.quiet, 1);
	assert_null(v.file);
	capture_release(&c);

	/* numbers cannot be negated */
	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "--no-count", NULL), PARSE_OPT_ERROR);
	assert_non_null(strstr(c.err.buf, "error: unknown option "
					  "'--no-count'"));
	capture_release(&c);

	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "--no-verbose=1", NULL),
			 PARSE_OPT_ERROR);
	assert_non_null(strstr(c.err.buf, "takes no value"));
	capture_release(&c);

	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "--verbose=yes", NULL),
			 PARSE_OPT_ERROR);
	assert_non_null(strstr(c.err.buf, "error: option '--verbose' takes "
					  "no value"));
	capture_release(&c);
}

static void test_double_dash(void **state)
{
	struct vals v;
	struct capture c;

	vals_init(&v);
	assert_int_equal(
		parse(&v, 0, &c, "a", "-v", "--", "-q", "--", "b", NULL), 4);
	assert_int_equal(v.verbose, 1);
	assert_int_equal(v.quiet, 0);
	assert_string_equal(argbuf[0], "a");
	assert_string_equal(argbuf[1], "-q");
	assert_string_equal(argbuf[2], "--");
	assert_string_equal(argbuf[3], "b");
	assert_null(argbuf[4]);
	capture_release(&c);
}

static void test_stop_at_non_option(void **state)
{
	struct vals v;
	struct capture c;

	/* permuting (default): options after arguments still count */
	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "cmd", "-q", "arg", "-v", NULL), 2);
	assert_int_equal(v.quiet, 1);
	assert_int_equal(v.verbose, 1);
	assert_string_equal(argbuf[0], "cmd");
	assert_string_equal(argbuf[1], "arg");
	capture_release(&c);

	vals_init(&v);
	assert_int_equal(parse(&v, PARSE_OPT_STOP_AT_NON_OPTION, &c, "-v",
			       "cmd", "-q", "--", "x", NULL),
			 4);
	assert_int_equal(v.verbose, 1);
	assert_int_equal(v.quiet, 0);
	assert_string_equal(argbuf[0], "cmd");
	assert_string_equal(argbuf[1], "-q");
	assert_string_equal(argbuf[2], "--");
	assert_string_equal(argbuf[3], "x");
	capture_release(&c);

	/* with KEEP_ARGV0 the count includes argv[0] */
	vals_init(&v);
	assert_int_equal(
		parse(&v, PARSE_OPT_KEEP_ARGV0 | PARSE_OPT_STOP_AT_NON_OPTION,
		      &c, "-q", "sh", "-c", "x", NULL),
		4);
	assert_string_equal(argbuf[0], "u-parse-options");
	assert_string_equal(argbuf[1], "sh");
	assert_string_equal(argbuf[2], "-c");
	assert_string_equal(argbuf[3], "x");
	assert_int_equal(v.quiet, 1);
	capture_release(&c);

	vals_init(&v);
	assert_int_equal(parse(&v, PARSE_OPT_KEEP_ARGV0, &c, NULL), 1);
	assert_null(argbuf[1]);
	capture_release(&c);
}

static void test_errors(void **state)
{
	struct vals v;
	struct capture c;

	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "--bogus=1", NULL), PARSE_OPT_ERROR);
	assert_true(starts_with(c.err.buf, "error: unknown option "
					   "'--bogus'\n"));
	assert_non_null(strstr(c.err.buf, "usage: u-parse-options"));
	assert_string_equal(c.out.buf, "");
	capture_release(&c);

	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "-vz", NULL), PARSE_OPT_ERROR);
	assert_true(starts_with(c.err.buf, "error: unknown switch 'z'\n"));
	capture_release(&c);

	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "a", "--file", NULL),
			 PARSE_OPT_ERROR);
	assert_true(starts_with(c.err.buf, "error: option '--file' requires "
					   "a value\n"));
	assert_null(v.file);
	capture_release(&c);

	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "-n", NULL), PARSE_OPT_ERROR);
	assert_true(starts_with(c.err.buf, "error: switch 'n' requires a "
					   "value\n"));
	capture_release(&c);

	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "--count=12x", NULL),
			 PARSE_OPT_ERROR);
	assert_non_null(strstr(c.err.buf, "'--count' expects a number"));
	assert_int_equal(v.n, -7);
	capture_release(&c);

	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "-n", "99999999999", NULL),
			 PARSE_OPT_ERROR);
	assert_non_null(strstr(c.err.buf, "'-n' expects a number"));
	capture_release(&c);

	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "--count=", NULL), PARSE_OPT_ERROR);
	capture_release(&c);

	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "--timeout", "1x", NULL),
			 PARSE_OPT_ERROR);
	assert_non_null(strstr(c.err.buf, "'--timeout' expects a duration"));
	assert_int_equal(v.timeout, -7);
	capture_release(&c);

	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "--mem=lots", NULL), PARSE_OPT_ERROR);
	assert_non_null(strstr(c.err.buf, "'--mem' expects a size"));
	capture_release(&c);

	assert_int_equal(parse_options_status(PARSE_OPT_ERROR), 129);
	assert_int_equal(parse_options_status(PARSE_OPT_HELP), 0);
}

static void test_help(void **state)
{
	static const char *const help_args[] = { "-h", "--help" };

	for (size_t i = 0; i < ARRAY_SIZE(help_args); i++) {
		struct vals v;
		struct capture c;

		vals_init(&v);
		assert_int_equal(
			parse(&v, 0, &c, "-v", help_args[i], "-q", NULL),
			PARSE_OPT_HELP);
		assert_string_equal(c.err.buf, "");
		assert_true(starts_with(c.out.buf,
					"usage: u-parse-options [<options>] "
					"[--] <args>...\n"));
		assert_non_null(strstr(c.out.buf, "    -v, --verbose"));
		assert_non_null(strstr(c.out.buf, "be verbose\n"));
		assert_non_null(strstr(c.out.buf, "-f, --file=<path>"));
		assert_non_null(strstr(c.out.buf, "the file (env U_PO_FILE)"));
		assert_non_null(strstr(c.out.buf, "    --timeout=<duration>"));
		assert_non_null(strstr(c.out.buf, "    --mem=<size>"));
		assert_non_null(strstr(c.out.buf, "-e, --env=<k=v>"));
		/* parsing stopped at -h */
		assert_int_equal(v.quiet, 0);
		capture_release(&c);
	}
}

static void test_usage_lines(void **state)
{
	static const char *const multi[] = {
		"prog a", "prog b", "", "A description line.", NULL,
	};
	struct option opts[] = {
		OPT_GROUP("Group:"),
		OPT_BOOL(0, "a-rather-long-option-name", NULL, "help text"),
		OPT_END(),
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	usage_with_options_to(fp, multi, opts);
	fclose(fp);
	assert_string_equal(buf, "usage: prog a\n"
				 "   or: prog b\n"
				 "\n"
				 "    A description line.\n"
				 "\n"
				 "Group:\n"
				 "    --a-rather-long-option-name\n"
				 "                              help text\n"
				 "\n");
	free(buf);
}

static void test_env_defaults(void **state)
{
	struct vals v;
	struct capture c;

	vals_init(&v);
	setenv("U_PO_FILE", "from-env", 1);
	setenv("U_PO_TIMEOUT", "1m30s", 1);
	assert_int_equal(parse(&v, 0, &c, NULL), 0);
	assert_string_equal(v.file, "from-env");
	assert_int_equal(v.timeout, 90000);
	capture_release(&c);

	/* the command line wins over the environment */
	vals_init(&v);
	setenv("U_PO_FILE", "from-env", 1);
	setenv("U_PO_TIMEOUT", "1m30s", 1);
	assert_int_equal(parse(&v, 0, &c, "--timeout", "2s", "-fcli", NULL), 0);
	assert_string_equal(v.file, "cli");
	assert_int_equal(v.timeout, 2000);
	capture_release(&c);

	/* empty means unset; a bad value is ignored with a warning */
	vals_init(&v);
	setenv("U_PO_FILE", "", 1);
	setenv("U_PO_TIMEOUT", "soon", 1);
	assert_int_equal(parse(&v, 0, &c, NULL), 0);
	assert_null(v.file);
	assert_int_equal(v.timeout, -7);
	assert_non_null(strstr(c.err.buf, "warning: ignoring environment "
					  "variable 'U_PO_TIMEOUT'"));
	capture_release(&c);
	unsetenv("U_PO_FILE");
	unsetenv("U_PO_TIMEOUT");
}

static void test_string_list(void **state)
{
	struct vals v;
	struct capture c;

	vals_init(&v);
	assert_int_equal(parse(&v, 0, &c, "-e", "A=1", "--env=B=2", "-eC=3",
			       "--env", "D=4", NULL),
			 0);
	assert_int_equal(v.list.nr, 4);
	assert_string_equal(v.list.v[0], "A=1");
	assert_string_equal(v.list.v[1], "B=2");
	assert_string_equal(v.list.v[2], "C=3");
	assert_string_equal(v.list.v[3], "D=4");
	assert_null(v.list.v[4]);
	capture_release(&c);

	/* --no-env forgets what came before */
	assert_int_equal(parse(&v, 0, &c, "--no-env", "-e", "E=5", NULL), 0);
	assert_int_equal(v.list.nr, 1);
	assert_string_equal(v.list.v[0], "E=5");
	capture_release(&c);
	strvec_clear(&v.list);
}

struct dcase {
	const char *s;
	int64_t ms;
};

static void test_duration(void **state)
{
	static const struct dcase good[] = {
		{ "300ms", 300 },
		{ "1.5s", 1500 },
		{ "1m30s", 90000 },
		{ "2h", 7200000 },
		{ "5", 5000 },
		{ "0", 0 },
		{ "0s", 0 },
		{ "1.5", 1500 },
		{ "0.5m", 30000 },
		{ ".5s", 500 },
		{ "1h2m3s4ms", 3723004 },
		{ "90m", 5400000 },
		{ "2000us", 2 },
		{ "10s500ms", 10500 },
	};
	static const char *const bad[] = {
		"",
		"1x",
		"-1s",
		"m",
		"s",
		"ms",
		"1m30",
		"1.5.5s",
		" 5",
		"5 ",
		"5s ",
		"1 m",
		"+5",
		"-5",
		"1e3",
		"1e3s",
		"0x10",
		"0x10s",
		"inf",
		"nan",
		"infs",
		".",
		".s",
		"1ss",
		"1h-1m",
		"99999999999999999999",
		"99999999999999999999h",
	};

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		int64_t ms = -1;

		if (parse_duration_ms(good[i].s, &ms) || ms != good[i].ms)
			fail_msg("'%s': %" PRId64 ", want %" PRId64, good[i].s,
				 ms, good[i].ms);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int64_t ms = -7;

		if (parse_duration_ms(bad[i], &ms) != -1 || ms != -7)
			fail_msg("'%s' accepted as %" PRId64, bad[i], ms);
	}
}

static void test_size(void **state)
{
	static const struct dcase good[] = {
		{ "2g", 2LL << 30 },
		{ "512m", 512LL << 20 },
		{ "64k", 64LL << 10 },
		{ "100", 100 },
		{ "0", 0 },
		{ "1GiB", 1LL << 30 },
		{ "1gib", 1LL << 30 },
		{ "1GB", 1LL << 30 },
		{ "1Gi", 1LL << 30 },
		{ "1.5G", 3LL << 29 },
		{ "2T", 2LL << 40 },
		{ "100b", 100 },
		{ "100B", 100 },
		{ "64K", 64LL << 10 },
		{ "1.5k", 1536 },
	};
	static const char *const bad[] = {
		"",    "g",    "-1",  "1x",   "1gg",   "1 g",	       " 1",
		"1g ", "+1",   "1e3", "0x10", "inf",   "nan",	       ".",
		"1i",  "1ibb", "1bi", "1kbb", "1.5.5", "99999999999t", "k1",
	};

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		int64_t b = -1;

		if (parse_size_bytes(good[i].s, &b) || b != good[i].ms)
			fail_msg("'%s': %" PRId64 ", want %" PRId64, good[i].s,
				 b, good[i].ms);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int64_t b = -7;

		if (parse_size_bytes(bad[i], &b) != -1 || b != -7)
			fail_msg("'%s' accepted as %" PRId64, bad[i], b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_short_cluster),
		cmocka_unit_test(test_negation),
		cmocka_unit_test(test_double_dash),
		cmocka_unit_test(test_stop_at_non_option),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_usage_lines),
		cmocka_unit_test(test_env_defaults),
		cmocka_unit_test(test_string_list),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
