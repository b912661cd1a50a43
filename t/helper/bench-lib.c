#include "bench-lib.h"
#include "usage.h"

#include <pthread.h>
#include <time.h>

int bench_error_budget = 5;

int bench_may_report(void)
{
	return __atomic_sub_fetch(&bench_error_budget, 1, __ATOMIC_RELAXED) >=
	       0;
}

void bench_samples_add(struct bench_samples *s, int64_t ns)
{
	ALLOC_GROW(s->v, s->nr + 1, s->alloc);
	s->v[s->nr++] = ns;
}

void bench_samples_release(struct bench_samples *s)
{
	free(s->v);
	s->v = NULL;
	s->nr = s->alloc = 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void sort(struct bench_samples *s)
{
	if (s->nr)
		qsort(s->v, s->nr, sizeof(*s->v), cmp_i64);
}

/* Percentile p of sorted samples, in microseconds. */
static double pct_sorted(const struct bench_samples *s, double p)
{
	size_t rank;

	if (!s->nr)
		return 0;
	rank = (size_t)((p / 100.0) * (double)s->nr + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > s->nr)
		rank = s->nr;
	return (double)s->v[rank - 1] / 1000.0;
}

double bench_pct_us(struct bench_samples *s, double p)
{
	sort(s);
	return pct_sorted(s, p);
}

void bench_print_stats(struct bench_samples *s, const char *prefix)
{
	double sum = 0;
	size_t i;

	sort(s);
	for (i = 0; i < s->nr; i++)
		sum += (double)s->v[i];
	printf(" %ssamples=%zu %smedian_us=%.1f %sp90_us=%.1f %sp99_us=%.1f"
	       " %smean_us=%.1f %smin_us=%.1f %smax_us=%.1f",
	       prefix, s->nr, prefix, pct_sorted(s, 50), prefix,
	       pct_sorted(s, 90), prefix, pct_sorted(s, 99), prefix,
	       s->nr ? sum / (double)s->nr / 1000.0 : 0.0, prefix,
	       s->nr ? (double)s->v[0] / 1000.0 : 0.0, prefix,
	       s->nr ? (double)s->v[s->nr - 1] / 1000.0 : 0.0);
}

struct rps_thread {
	pthread_t thread;
	pthread_barrier_t *start;
	const int *stop;
	void *client;
	int (*warm)(void *client);
	uint64_t (*call)(void *client);
	struct bench_samples samples;
	uint64_t errors;
	int failed;
};

static void *rps_run(void *data)
{
	struct rps_thread *t = data;

	t->failed = t->warm && t->warm(t->client) < 0;
	pthread_barrier_wait(t->start);
	while (!t->failed && !__atomic_load_n(t->stop, __ATOMIC_ACQUIRE)) {
		uint64_t ns = t->call(t->client);

		if (ns)
			bench_samples_add(&t->samples, (int64_t)ns);
		else
			t->errors++;
	}
	return NULL;
}

void bench_rps(void *clients, int nr, size_t size, int (*warm)(void *client),
	       uint64_t (*call)(void *client), int64_t duration_ms,
	       struct bench_rps_result *res)
{
	struct rps_thread *t = xcalloc(nr, sizeof(*t));
	pthread_barrier_t start;
	struct timespec ts;
	uint64_t t0;
	int stop = 0, i;

	memset(res, 0, sizeof(*res));
	pthread_barrier_init(&start, NULL, nr + 1);
	for (i = 0; i < nr; i++) {
		t[i].start = &start;
		t[i].stop = &stop;
		t[i].client = (char *)clients + (size_t)i * size;
		t[i].warm = warm;
		t[i].call = call;
		if (pthread_create(&t[i].thread, NULL, rps_run, &t[i]))
			die("cannot create thread");
	}
	pthread_barrier_wait(&start);
	t0 = monotonic_ns();
	ts.tv_sec = duration_ms / 1000;
	ts.tv_nsec = (duration_ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < nr; i++)
		pthread_join(t[i].thread, NULL);
	res->secs = (double)(monotonic_ns() - t0) / 1e9;
	for (i = 0; i < nr; i++) {
		for (size_t j = 0; j < t[i].samples.nr; j++)
			bench_samples_add(&res->all, t[i].samples.v[j]);
		res->errors += t[i].errors;
		res->failed += t[i].failed;
		bench_samples_release(&t[i].samples);
	}
	pthread_barrier_destroy(&start);
	free(t);
}

int bench_main(int argc, const char **argv, const struct bench_cmd *cmds,
	       size_t nr, const char *const *usage,
	       const struct option *options)
{
	const struct bench_cmd *cmd = NULL;
	unsigned flags = PARSE_OPT_KEEP_ARGV0;
	size_t i;
	int r;

	if (argc < 2) {
		usage_with_options_to(stderr, usage, options);
		return 129;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage_with_options_to(stdout, usage, options);
		return 0;
	}
	for (i = 0; i < nr && !cmd; i++)
		if (!strcmp(argv[1], cmds[i].name))
			cmd = &cmds[i];
	if (!cmd) {
		error("unknown subcommand '%s'", argv[1]);
		usage_with_options_to(stderr, usage, options);
		return 129;
	}
	if (cmd->takes_args)
		flags |= PARSE_OPT_STOP_AT_NON_OPTION;
	r = parse_options(argc - 1, argv + 1, options, usage, flags);
	if (r < 0)
		return parse_options_status(r);
	if (!cmd->takes_args && r > 1) {
		error("unexpected argument '%s'", argv[2]);
		return 129;
	}
	argv[r + 1] = NULL; /* the arguments left, as a list */
	r = cmd->fn(r - 1, argv + 2);
	fflush(stdout);
	return r;
}
