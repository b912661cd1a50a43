#include "compat.h"
#include "strbuf.h"

#include <fcntl.h>
#include <setjmp.h>
#include <sys/wait.h>
#include <cmocka.h>

/* Run fn(arg) in a child; return its exit status (or 256 + signal). */
static int in_child(void (*fn)(void))
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 2);
		fn();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 256 + WTERMSIG(status);
}

static void test_init_empty(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(sb.len, 0);
	assert_string_equal(sb.buf, "");
	assert_int_equal(strbuf_avail(&sb), 0);
	strbuf_release(&sb);
	assert_string_equal(sb.buf, "");
	strbuf_init(&sb, 100);
	assert_true(strbuf_avail(&sb) >= 100);
	assert_string_equal(sb.buf, "");
	strbuf_release(&sb);
	assert_int_equal(sb.alloc, 0);
}

static void test_add_growth(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	/* 100000 single bytes force many reallocs */
	for (i = 0; i < 100000; i++)
		strbuf_addch(&sb, 'a' + i % 26);
	assert_int_equal(sb.len, 100000);
	assert_int_equal(sb.buf[sb.len], '\0');
	for (i = 0; i < 100000; i++)
		assert_int_equal(sb.buf[i], 'a' + i % 26);
	assert_true(sb.alloc > sb.len);
	strbuf_release(&sb);

	for (i = 0; i < 5000; i++)
		strbuf_addf(&sb, "%zu,", i);
	{
		const char *p = sb.buf;
		for (i = 0; i < 5000; i++) {
			char *end;
			assert_int_equal(strtoul(p, &end, 10), i);
			assert_int_equal(*end, ',');
			p = end + 1;
		}
		assert_int_equal(*p, '\0');
		assert_int_equal(p - sb.buf, sb.len);
	}
	strbuf_release(&sb);
}

static void test_addf_large(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *big = malloc(70001);

	memset(big, 'x', 70000);
	big[70000] = '\0';
	strbuf_addstr(&sb, "head:");
	/* one addf larger than any current allocation */
	strbuf_addf(&sb, "<%s>%d", big, 42);
	assert_int_equal(sb.len, 5 + 1 + 70000 + 1 + 2);
	assert_memory_equal(sb.buf, "head:<", 6);
	assert_memory_equal(sb.buf + 6, big, 70000);
	assert_string_equal(sb.buf + 70006, ">42");
	/* exactly filling the available space */
	strbuf_reset(&sb);
	while (strbuf_avail(&sb) != 10)
		strbuf_addch(&sb, '.');
	strbuf_addf(&sb, "%s", "0123456789");
	assert_int_equal(strbuf_avail(&sb), 0);
	strbuf_addf(&sb, "%s", "abc");
	assert_true(ends_with(sb.buf, "0123456789abc"));
	strbuf_addf(&sb, "%s", "");
	assert_true(ends_with(sb.buf, "0123456789abc"));
	free(big);
	strbuf_release(&sb);
}

static void test_embedded_nul(void **state)
{
	struct strbuf sb = STRBUF_INIT, other = STRBUF_INIT;

	strbuf_add(&sb, "a\0b\0c", 5);
	assert_int_equal(sb.len, 5);
	assert_memory_equal(sb.buf, "a\0b\0c", 6);
	strbuf_addch(&sb, '\0');
	assert_int_equal(sb.len, 6);
	strbuf_addbuf(&other, &sb);
	strbuf_addbuf(&other, &sb);
	assert_int_equal(other.len, 12);
	assert_memory_equal(other.buf, "a\0b\0c\0a\0b\0c\0", 13);
	strbuf_remove(&other, 1, 1);
	assert_memory_equal(other.buf, "ab\0c\0a\0b\0c\0", 12);
	strbuf_release(&sb);
	strbuf_release(&other);
}

static void test_detach(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len = 99;
	char *s;

	/* detaching an empty, never-allocated buffer gives a free()able "" */
	s = strbuf_detach(&sb, &len);
	assert_int_equal(len, 0);
	assert_string_equal(s, "");
	free(s);

	strbuf_addstr(&sb, "hello");
	s = strbuf_detach(&sb, &len);
	assert_int_equal(len, 5);
	assert_string_equal(s, "hello");
	assert_int_equal(sb.len, 0);
	assert_int_equal(sb.alloc, 0);
	assert_string_equal(sb.buf, "");
	/* sb is reusable and independent */
	strbuf_addstr(&sb, "again");
	assert_string_equal(s, "hello");
	free(s);
	s = strbuf_detach(&sb, NULL);
	assert_string_equal(s, "again");
	free(s);
}

static void test_remove_insert(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "0123456789");
	strbuf_remove(&sb, 0, 0);
	assert_string_equal(sb.buf, "0123456789");
	strbuf_remove(&sb, 10, 0);
	assert_string_equal(sb.buf, "0123456789");
	strbuf_remove(&sb, 8, 2);
	assert_string_equal(sb.buf, "01234567");
	strbuf_remove(&sb, 0, 3);
	assert_string_equal(sb.buf, "34567");
	strbuf_remove(&sb, 1, 3);
	assert_string_equal(sb.buf, "37");
	strbuf_insert(&sb, 1, "xyz", 3);
	assert_string_equal(sb.buf, "3xyz7");
	strbuf_insert(&sb, 0, "<", 1);
	strbuf_insert(&sb, sb.len, ">", 1);
	assert_string_equal(sb.buf, "<3xyz7>");
	strbuf_insert(&sb, 3, "", 0);
	assert_string_equal(sb.buf, "<3xyz7>");
	strbuf_remove(&sb, 0, sb.len);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	strbuf_release(&sb);

	/* insert into a never-allocated buffer */
	strbuf_insert(&sb, 0, "abc", 3);
	assert_string_equal(sb.buf, "abc");
	strbuf_release(&sb);
	strbuf_insert(&sb, 0, NULL, 0);
	assert_string_equal(sb.buf, "");
	strbuf_release(&sb);
}

static void remove_past_end(void)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "abc");
	strbuf_remove(&sb, 2, 2);
}

static void remove_pos_past_end(void)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "abc");
	strbuf_remove(&sb, 4, 0);
}

static void remove_overflow(void)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "abc");
	/* pos + len wraps around to 1 */
	strbuf_remove(&sb, 2, SIZE_MAX);
}

static void insert_past_end(void)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "abc");
	strbuf_insert(&sb, 4, "x", 1);
}

static void setlen_past_alloc(void)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "abc");
	strbuf_setlen(&sb, sb.alloc);
}

static void test_bounds_die(void **state)
{
	/* die() exits 128; an out-of-range edit must never go through */
	assert_int_equal(in_child(remove_past_end), 128);
	assert_int_equal(in_child(remove_pos_past_end), 128);
	assert_int_equal(in_child(remove_overflow), 128);
	assert_int_equal(in_child(insert_past_end), 128);
	assert_int_equal(in_child(setlen_past_alloc), 128);
}

static void test_trim(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_trim(&sb);
	assert_string_equal(sb.buf, "");
	strbuf_addstr(&sb, " \t\n\r\v\f");
	strbuf_trim(&sb);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	strbuf_addstr(&sb, "  a b \n");
	strbuf_rtrim(&sb);
	assert_string_equal(sb.buf, "  a b");
	strbuf_ltrim(&sb);
	assert_string_equal(sb.buf, "a b");
	assert_int_equal(sb.len, 3);
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "\n x\xc3\xa9 \n");
	strbuf_trim(&sb);
	assert_string_equal(sb.buf, "x\xc3\xa9");
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "nothing");
	strbuf_trim(&sb);
	assert_string_equal(sb.buf, "nothing");
	strbuf_release(&sb);
}

static void test_complete_line_starts_with(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_complete_line(&sb);
	assert_string_equal(sb.buf, "");
	strbuf_addstr(&sb, "x");
	strbuf_complete_line(&sb);
	assert_string_equal(sb.buf, "x\n");
	strbuf_complete_line(&sb);
	assert_string_equal(sb.buf, "x\n");
	assert_true(strbuf_starts_with(&sb, "x"));
	assert_true(strbuf_starts_with(&sb, ""));
	assert_true(strbuf_starts_with(&sb, "x\n"));
	assert_false(strbuf_starts_with(&sb, "x\ny"));
	assert_false(strbuf_starts_with(&sb, "y"));
	strbuf_release(&sb);
}

static void test_read_fd_pipe(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	size_t total = 3 * 1024 * 1024 + 17;
	int fds[2];
	pid_t pid;
	int status;
	ssize_t n;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char buf[4099];
		size_t done = 0;

		close(fds[0]);
		while (done < total) {
			size_t k = total - done < sizeof(buf) ? total - done
							      : sizeof(buf);
			for (size_t j = 0; j < k; j++)
				buf[j] = (char)((done + j) * 7 % 251);
			if (write_in_full(fds[1], buf, k) < 0)
				_exit(1);
			done += k;
		}
		_exit(0);
	}
	close(fds[1]);
	strbuf_addstr(&sb, "pre");
	n = strbuf_read_fd(&sb, fds[0], 0);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && !WEXITSTATUS(status));
	assert_int_equal(n, total);
	assert_int_equal(sb.len, total + 3);
	assert_memory_equal(sb.buf, "pre", 3);
	for (size_t j = 0; j < total; j++)
		if (sb.buf[3 + j] != (char)(j * 7 % 251))
			fail_msg("byte %zu differs", j);
	assert_int_equal(sb.buf[sb.len], '\0');
	strbuf_release(&sb);
}

static void test_read_fd_error(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	int fd = open("/dev/null", O_WRONLY);

	strbuf_addstr(&sb, "keep");
	errno = 0;
	assert_int_equal(strbuf_read_fd(&sb, fd, 0), -1);
	assert_int_equal(errno, EBADF);
	assert_string_equal(sb.buf, "keep");
	close(fd);
	strbuf_release(&sb);
}

static void test_read_file(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char path[] = "/tmp/u-strbuf-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write_in_full(fd, "line1\nline2\0x", 13), 13);
	close(fd);
	strbuf_addstr(&sb, ">");
	assert_int_equal(strbuf_read_file(&sb, path, 0), 13);
	assert_int_equal(sb.len, 14);
	assert_memory_equal(sb.buf, ">line1\nline2\0x", 15);
	unlink(path);

	errno = 0;
	assert_int_equal(strbuf_read_file(&sb, path, 0), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(sb.len, 14);
	errno = 0;
	assert_int_equal(strbuf_read_file(&sb, "/nonexistent/dir/file", 10),
			 -1);
	assert_int_equal(errno, ENOENT);
	/* a directory: open works, read fails with EISDIR */
	errno = 0;
	assert_int_equal(strbuf_read_file(&sb, "/", 0), -1);
	assert_int_equal(errno, EISDIR);
	strbuf_release(&sb);
}

static void test_getline(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	static const char text[] = "one\n\nthr\0ee\nlast";
	FILE *fp = fmemopen((void *)text, sizeof(text) - 1, "r");

	assert_non_null(fp);
	strbuf_addstr(&sb, "old contents");
	assert_int_equal(strbuf_getline(&sb, fp), 0);
	assert_string_equal(sb.buf, "one");
	assert_int_equal(strbuf_getline(&sb, fp), 0);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	assert_int_equal(strbuf_getline(&sb, fp), 0);
	assert_int_equal(sb.len, 6);
	assert_memory_equal(sb.buf, "thr\0ee", 7);
	assert_int_equal(strbuf_getline(&sb, fp), 0);
	assert_string_equal(sb.buf, "last");
	assert_int_equal(strbuf_getline(&sb, fp), EOF);
	assert_int_equal(sb.len, 0);
	assert_int_equal(strbuf_getline(&sb, fp), EOF);
	fclose(fp);

	fp = fmemopen((void *)"x\n", 2, "r");
	assert_int_equal(strbuf_getline(&sb, fp), 0);
	assert_string_equal(sb.buf, "x");
	assert_int_equal(strbuf_getline(&sb, fp), EOF);
	fclose(fp);
	strbuf_release(&sb);
}

static void test_prefix_suffix(void **state)
{
	const char *rest = NULL;

	assert_true(skip_prefix("--opt=val", "--opt=", &rest));
	assert_string_equal(rest, "val");
	rest = "unchanged";
	assert_false(skip_prefix("--op", "--opt=", &rest));
	assert_string_equal(rest, "unchanged");
	assert_true(skip_prefix("abc", "", &rest));
	assert_string_equal(rest, "abc");
	assert_true(skip_prefix("abc", "abc", &rest));
	assert_string_equal(rest, "");
	assert_true(skip_prefix("abc", "ab", NULL));
	assert_true(starts_with("abc", "a"));
	assert_true(starts_with("", ""));
	assert_false(starts_with("", "a"));
	assert_false(starts_with("ab", "abc"));
	assert_false(starts_with("abc", "b"));
	assert_true(ends_with("file.tar.gz", ".gz"));
	assert_true(ends_with("file.tar.gz", "file.tar.gz"));
	assert_true(ends_with("abc", ""));
	assert_true(ends_with("", ""));
	assert_false(ends_with("gz", ".gz"));
	assert_false(ends_with("file.tgz", ".gz"));
	assert_false(ends_with("", "a"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_empty),
		cmocka_unit_test(test_add_growth),
		cmocka_unit_test(test_addf_large),
		cmocka_unit_test(test_embedded_nul),
		cmocka_unit_test(test_detach),
		cmocka_unit_test(test_remove_insert),
		cmocka_unit_test(test_bounds_die),
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_complete_line_starts_with),
		cmocka_unit_test(test_read_fd_pipe),
		cmocka_unit_test(test_read_fd_error),
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_getline),
		cmocka_unit_test(test_prefix_suffix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
