#include "compat.h"
#include "dir.h"
#include "local/storage.h"
#include "strbuf.h"

#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <sys/stat.h>

/*
 * Two threads of one process (two sessions of `gosbx mcp --http`) create
 * the first claims of a state directory at once: both find no template
 * image of the size and format one. Each must get its storage; the
 * temporary template of one must not be the other's.
 */
struct racer {
	pthread_barrier_t *go;
	char dir[PATH_MAX];
	const char *templates;
	int ret;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	struct storage_opts o = STORAGE_OPTS_INIT;
	struct storage st;

	o.disk_bytes = STORAGE_MIN_DISK;
	o.disk_explicit = 1;
	o.template_dir = r->templates;
	storage_init(&st);
	pthread_barrier_wait(r->go);
	r->ret = storage_create(&st, r->dir, &o);
	storage_release(&st);
	return NULL;
}

static void test_first_images_at_once(void **state)
{
	enum { N = 4 };
	struct strbuf why = STRBUF_INIT, base = STRBUF_INIT;
	struct strbuf templates = STRBUF_INIT;
	struct racer r[N];
	pthread_t t[N];
	pthread_barrier_t go;
	char tmpl[] = "/tmp/u-storage-XXXXXX";
	int i, round;

	if (storage_quota_available(&why) != STORAGE_QUOTA_LOOP) {
		print_message("skipped: no loop quota here: %s\n", why.buf);
		strbuf_release(&why);
		skip();
	}
	assert_non_null(mkdtemp(tmpl));
	strbuf_addstr(&base, tmpl);
	/* a few rounds, each with a fresh template directory */
	for (round = 0; round < 3; round++) {
		strbuf_reset(&templates);
		strbuf_addf(&templates, "%s/templates-%d", base.buf, round);
		pthread_barrier_init(&go, NULL, N);
		for (i = 0; i < N; i++) {
			r[i].go = &go;
			r[i].templates = templates.buf;
			snprintf(r[i].dir, sizeof(r[i].dir), "%s/claim-%d-%d",
				 base.buf, round, i);
			assert_int_equal(mkdir(r[i].dir, 0700), 0);
			assert_int_equal(
				pthread_create(&t[i], NULL, race, &r[i]), 0);
		}
		for (i = 0; i < N; i++)
			pthread_join(t[i], NULL);
		pthread_barrier_destroy(&go);
		for (i = 0; i < N; i++) {
			assert_int_equal(storage_unmount(r[i].dir), 0);
			assert_int_equal(r[i].ret, 0);
		}
	}
	assert_int_equal(remove_tree(base.buf), 0);
	strbuf_release(&why);
	strbuf_release(&base);
	strbuf_release(&templates);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_images_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
