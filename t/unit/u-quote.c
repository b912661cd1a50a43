#include "compat.h"
#include "quote.h"
#include "strbuf.h"
#include "utf8.h"

#include <setjmp.h>
#include <cmocka.h>

#include <sys/wait.h>

/* Hostile words: quotes, newlines, empty, shell syntax, invalid UTF-8. */
static const char *const hostile[] = {
	"",
	"'",
	"''",
	"it's",
	"'lead",
	"trail'",
	"\"",
	"\\",
	"\\'",
	"a b",
	" ",
	"\t",
	"\n",
	"a\nb\n\n",
	"\n\n",
	"$HOME",
	"${x:-y}",
	"$(id)",
	"`id`",
	"*",
	"?",
	"[a]",
	"~",
	"#x",
	"!x",
	"a|b",
	"A|B",
	"a;b",
	"a&&b",
	">out",
	"-n",
	"-e",
	"--",
	"x=1",
	"%s",
	"\\0",
	"\xc3\xa9.txt",			 /* é.txt */
	"\xe6\x95\xb0\xe6\x8d\xae/x.go", /* 数据/x.go */
	"\xf0\x9f\x98\x80",		 /* U+1F600 */
	"\xff",
	"a\xff"
	"b",
	"\xff\xfe",
	"\xc3", /* a sequence cut short */
	"\xc3'",
	"\xe6\x95",
	"\xed\xa0\x80", /* a surrogate */
	"\xc0\xaf",	/* overlong '/' */
	"\xc3\xa9\xff'\n",
	"\x01\x02\x1b[31m",
	"\x7f",
};

/*
 * Run `sh -c "<printf '%s\0'> <quoted words>"` and return what the real
 * shell printed: each word followed by a NUL byte.
 */
static void run_sh(const char *shell, const char *text, struct strbuf *out)
{
	int fds[2], status;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(shell, shell, "-c", text, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	assert_true(strbuf_read_fd(out, fds[0], 0) >= 0);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void expect_words(const char *shell, const char *const *words, size_t nr)
{
	struct strbuf text = STRBUF_INIT, out = STRBUF_INIT, want = STRBUF_INIT;

	if (access(shell, X_OK)) {
		print_message("skipping %s: not installed\n", shell);
		return;
	}
	strbuf_addstr(&text, "printf '%s\\0' ");
	sq_quote_argv(&text, words, nr);
	/* it goes into JSON: always valid UTF-8 */
	assert_true(utf8_is_valid(text.buf, text.len));
	for (size_t i = 0; i < nr; i++)
		strbuf_add(&want, words[i], strlen(words[i]) + 1);
	run_sh(shell, text.buf, &out);
	if (out.len != want.len || memcmp(out.buf, want.buf, out.len))
		fail_msg("%s changed the words of: %s", shell, text.buf);
	strbuf_release(&text);
	strbuf_release(&out);
	strbuf_release(&want);
}

/* Each hostile word alone arrives unchanged through the real shells. */
static void test_each_word(void **state)
{
	static const char *const shells[] = { "/bin/sh", "/bin/dash",
					      "/bin/bash" };

	for (size_t s = 0; s < ARRAY_SIZE(shells); s++)
		for (size_t i = 0; i < ARRAY_SIZE(hostile); i++)
			expect_words(shells[s], &hostile[i], 1);
}

/* All of them at once, as one argv. */
static void test_argv(void **state)
{
	expect_words("/bin/sh", hostile, ARRAY_SIZE(hostile));
}

/* Random bytes (no NUL) in random numbers of words. */
static void test_random(void **state)
{
	unsigned seed = 20240611;

	for (int iter = 0; iter < 300; iter++) {
		char buf[8][24];
		const char *words[8];
		size_t nr = 1 + rand_r(&seed) % 8;

		for (size_t w = 0; w < nr; w++) {
			size_t len = rand_r(&seed) % 23;

			for (size_t i = 0; i < len; i++) {
				int c = 1 + rand_r(&seed) % 255;

				/* mostly ASCII, quotes and UTF-8 lead bytes */
				if (rand_r(&seed) % 3)
					c = "'\"\\$`\n a\xc3\xa9\xff"
						[rand_r(&seed) % 12];
				buf[w][i] = (char)c;
			}
			buf[w][len] = '\0';
			words[w] = buf[w];
		}
		expect_words("/bin/sh", words, nr);
	}
}

/* The exact text for a few words: the form is part of the contract. */
static void test_form(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "", "''" },
		{ "abc", "'abc'" },
		{ "it's", "'it'\\''s'" },
		{ "'", "''\\'''" },
		{ "a\nb", "'a\nb'" },
		{ "\xff", "\"$(printf '\\377')\"" },
		{ "a\xff\xfe"
		  "b",
		  "'a'\"$(printf '\\377\\376')\"'b'" },
		{ "\xc3\xa9", "'\xc3\xa9'" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb = STRBUF_INIT;

		sq_quote_buf(&sb, cases[i].in);
		assert_string_equal(sb.buf, cases[i].out);
		strbuf_release(&sb);
	}
}

static void test_argv_empty_and_spaces(void **state)
{
	const char *const words[] = { "go", "test", "-run", "A|B", "./..." };
	struct strbuf sb = STRBUF_INIT;

	sq_quote_argv(&sb, words, 0);
	assert_int_equal(sb.len, 0);
	sq_quote_argv(&sb, words, ARRAY_SIZE(words));
	assert_string_equal(sb.buf, "'go' 'test' '-run' 'A|B' './...'");
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_form),
		cmocka_unit_test(test_argv_empty_and_spaces),
		cmocka_unit_test(test_each_word),
		cmocka_unit_test(test_argv),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
