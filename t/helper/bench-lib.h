#ifndef BENCH_LIB_H
#define BENCH_LIB_H

#include "compat.h"
#include "parse-options.h"

/*
 * What the benchmark helpers (t/helper/bench-*.c) share: latency
 * samples, their statistics in the one output format t/perf/run.sh
 * reads (space-separated key=value pairs, times in microseconds), and
 * a bound on the errors reported. Time is read with monotonic_ns()
 * (compat.h).
 */

/*
 * Latency samples in nanoseconds; signed, as a difference may be < 0.
 * Zero-initialized is empty.
 */
struct bench_samples {
	int64_t *v;
	size_t nr, alloc;
};

/* Append one sample of ns nanoseconds. */
void bench_samples_add(struct bench_samples *s, int64_t ns);

/* Free the samples; s is empty and usable again afterwards. */
void bench_samples_release(struct bench_samples *s);

/*
 * Nearest-rank percentile p (0 to 100) of s in microseconds, 0 for no
 * samples. Sorts s.
 */
double bench_pct_us(struct bench_samples *s, double p);

/*
 * Print " <prefix>samples=<n> <prefix>median_us=... <prefix>p90_us=...
 * <prefix>p99_us=... <prefix>mean_us=... <prefix>min_us=...
 * <prefix>max_us=..." to stdout, times with one decimal (0 for no
 * samples); prefix is e.g. "" or "vs_". Sorts s.
 */
void bench_print_stats(struct bench_samples *s, const char *prefix);

/*
 * Errors are reported on stderr, but only the first few: 1 while the
 * budget (bench_error_budget, 5 to begin with) lasts, each call using
 * one, then 0. Safe from several threads.
 */
extern int bench_error_budget;
int bench_may_report(void);

/*
 * A throughput run, as bench-mcp rps and bench-runtime rps do it: nr
 * clients, each on a thread of its own, call as fast as they can for
 * duration_ms after all of them have warmed up.
 *
 * clients: nr structs of size bytes each, set up by the caller, passed
 * one each to warm() and call() (as qsort() passes its elements).
 * warm: on the client's thread before the clock starts; < 0 marks the
 * client failed (it then makes no calls). May be NULL.
 * call: one call; its latency in nanoseconds, or 0 for a failed call.
 */
struct bench_rps_result {
	struct bench_samples all; /* every call's latency */
	uint64_t errors;	  /* failed calls */
	int failed;		  /* failed clients */
	double secs;		  /* from the start to the last thread's end */
};

void bench_rps(void *clients, int nr, size_t size, int (*warm)(void *client),
	       uint64_t (*call)(void *client), int64_t duration_ms,
	       struct bench_rps_result *res);

/* A subcommand: fn gets the arguments after the subcommand's name. */
struct bench_cmd {
	const char *name;
	int (*fn)(int argc, const char **argv);
	int takes_args; /* 0: an argument left after the options is bad */
};

/*
 * The main() of a helper: `<progname> <subcommand> [<options>]
 * [<args>]`, the nr subcommands in cmds sharing one option table and
 * usage. -h or --help as the first argument prints the usage to stdout
 * (0); no subcommand, an unknown one or bad options print it to stderr
 * (129). Options are parsed with parse_options() (stopping at the
 * first non-option when the subcommand takes arguments), then the
 * subcommand runs with the arguments left (a NULL-terminated list) and
 * stdout is flushed. Returns main's exit code.
 */
int bench_main(int argc, const char **argv, const struct bench_cmd *cmds,
	       size_t nr, const char *const *usage,
	       const struct option *options);

#endif /* BENCH_LIB_H */
