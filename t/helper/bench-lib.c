#include "bench-lib.h"
#include "usage.h"

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
