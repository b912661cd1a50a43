#include "compat.h"
#include "bench-lib.h"
#include "parse-options.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"

/*
 * bench-local: times whole processes for the "local" section of
 * t/perf/run.sh (`gosbx open`, `gosbx exec`, `go run` in a sandbox
 * and on the host).
 *
 *   bench-local run [--n=<n>] [--warmup=<n>] [--after=<sh-text>]
 *                   [--timeout=<d>] -- <program> [<arg>...]
 *                   [--vs <program> [<arg>...]]
 *
 * Each measured run is posix_spawnp() of the argv (stdin and stdout on
 * /dev/null, stderr inherited) up to the waitpid() that reaps it, on
 * CLOCK_MONOTONIC. With `--vs`, the two commands alternate (A, B, A,
 * B...) so that a load spike on a shared machine hits both about
 * equally. Every "{}" in an argument or in the --after text becomes
 * the run's index (0, 1, ... over the warm-up runs and then the
 * measured ones). The --after text runs with `sh -c` after each run of
 * the first command, untimed (e.g. closing the sandbox just opened).
 *
 * Prints one line on stdout:
 *   bench=run n=<n> errors=<e> samples=... median_us=... p90_us=...
 *   [vs_samples=... vs_median_us=... ...]
 * percentiles by nearest rank. A run that exits non-zero, dies of a
 * signal or outlasts --timeout (then killed) is an error and not a
 * sample. Exit status: 0 without errors, 1 with some, 129 on bad usage.
 */

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static int opt_n = 30;
static int opt_warmup = 1;
static const char *opt_after;
static int64_t opt_timeout_ms = 120000;

static const struct option bench_options[] = {
	OPT_INT(0, "n", &opt_n, "measured runs (of each command)"),
	OPT_INT(0, "warmup", &opt_warmup, "unmeasured runs first (each)"),
	OPT_STRING(0, "after", &opt_after, "<sh-text>",
		   "untimed sh -c text after each run of the first command"),
	OPT_DURATION(0, "timeout", &opt_timeout_ms,
		     "kill a run after this long (an error)"),
	OPT_END(),
};

static const char *const bench_usage[] = {
	"bench-local run [--n=<n>] [--warmup=<n>] [--after=<sh-text>] "
	"-- <cmd>... [--vs <cmd>...]",
	NULL,
};

/* Copy of `text` with every "{}" replaced by `index`. */
static char *expand(const char *text, int index)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;

	while ((p = strstr(text, "{}"))) {
		strbuf_add(&sb, text, (size_t)(p - text));
		strbuf_addf(&sb, "%d", index);
		text = p + 2;
	}
	strbuf_addstr(&sb, text);
	return strbuf_detach(&sb, NULL);
}

/*
 * Wait for pid until the deadline (ns on CLOCK_MONOTONIC; SIGCHLD is
 * blocked); kill it when the deadline passes. Returns 0 with *status
 * set, or -1 after a timeout or a wait error (reported).
 */
static int wait_deadline(pid_t pid, int *status, uint64_t deadline)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		uint64_t now;
		struct timespec ts;

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR) {
			error_errno("waitpid");
			return -1;
		}
		now = monotonic_ns();
		if (now >= deadline) {
			kill(pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0 && errno == EINTR)
				;
			if (bench_may_report())
				error("a run took longer than %" PRId64
				      " ms; killed",
				      opt_timeout_ms);
			return -1;
		}
		ts.tv_sec = (time_t)((deadline - now) / 1000000000u);
		ts.tv_nsec = (long)((deadline - now) % 1000000000u);
		sigtimedwait(&set, NULL, &ts);
	}
}

/*
 * Run argv (with "{}" expanded to index) once; returns its duration in
 * ns, or 0 when it could not run or did not exit 0 (reported).
 */
static uint64_t run_once(const char **argv, int index,
			 const posix_spawn_file_actions_t *fa)
{
	struct strvec args = STRVEC_INIT;
	uint64_t t0, t1;
	pid_t pid;
	int status = 0, err, i;

	for (i = 0; argv[i]; i++) {
		char *arg = expand(argv[i], index);

		strvec_push(&args, arg);
		free(arg);
	}
	t0 = monotonic_ns();
	err = posix_spawnp(&pid, args.v[0], fa, NULL, (char **)args.v, environ);
	if (err) {
		errno = err;
		if (bench_may_report())
			error_errno("cannot run '%s'", args.v[0]);
		strvec_clear(&args);
		return 0;
	}
	if (wait_deadline(pid, &status,
			  t0 + (uint64_t)opt_timeout_ms * 1000000u)) {
		strvec_clear(&args);
		return 0;
	}
	t1 = monotonic_ns();
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		if (bench_may_report()) {
			struct strbuf cmd = STRBUF_INIT;

			for (i = 0; args.v[i]; i++)
				strbuf_addf(&cmd, "%s%s", i ? " " : "",
					    args.v[i]);
			if (WIFEXITED(status))
				error("'%s' exited with %d", cmd.buf,
				      WEXITSTATUS(status));
			else
				error("'%s' died of signal %d", cmd.buf,
				      WTERMSIG(status));
			strbuf_release(&cmd);
		}
		strvec_clear(&args);
		return 0;
	}
	strvec_clear(&args);
	return t1 > t0 ? t1 - t0 : 1;
}

static int cmd_run(int argc, const char **argv)
{
	const char **a = argv, **b = NULL;
	const char *after[] = { "sh", "-c", opt_after, NULL };
	posix_spawn_file_actions_t fa;
	struct bench_samples sa = { 0 }, sb = { 0 };
	sigset_t set;
	int i, errors = 0;

	for (i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--vs")) {
			argv[i] = NULL;
			b = argv + i + 1;
			break;
		}
	if (!a[0] || (b && !b[0])) {
		error("no command to run");
		usage_with_options_to(stderr, bench_usage, bench_options);
		return 129;
	}
	if (opt_n < 1 || opt_warmup < 0 || opt_timeout_ms <= 0) {
		error("--n must be at least 1, --warmup and --timeout"
		      " positive");
		return 129;
	}
	/* SIGCHLD blocked for sigtimedwait(); children get it unblocked */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fflush(stdout);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	for (i = 0; i < opt_warmup + opt_n; i++) {
		uint64_t ns = run_once(a, i, &fa);

		if (opt_after && !run_once(after, i, &fa))
			errors++;
		if (i >= opt_warmup) {
			if (ns)
				bench_samples_add(&sa, ns);
			else
				errors++;
		}
		if (!b)
			continue;
		ns = run_once(b, i, &fa);
		if (i >= opt_warmup) {
			if (ns)
				bench_samples_add(&sb, ns);
			else
				errors++;
		}
	}
	posix_spawn_file_actions_destroy(&fa);
	printf("bench=run n=%d warmup=%d errors=%d", opt_n, opt_warmup, errors);
	bench_print_stats(&sa, "");
	if (b)
		bench_print_stats(&sb, "vs_");
	printf("\n");
	bench_samples_release(&sa);
	bench_samples_release(&sb);
	return errors ? 1 : 0;
}

static const struct bench_cmd subcommands[] = {
	{ "run", cmd_run, 1 },
};

int main(int argc, const char **argv)
{
	progname = "bench-local";
	return bench_main(argc, argv, subcommands, ARRAY_SIZE(subcommands),
			  bench_usage, bench_options);
}
