/*
 * gosbx open: create a kept sandbox and print its claim name
 * (DESIGN.md "One binary, many commands"). The sandbox lives until
 * `gosbx close` or until it has been idle for its TTL.
 */
#include "compat.h"
#include "builtin.h"
#include "parse-options.h"
#include "session.h"
#include "usage.h"

#include <math.h>

static const char *const open_usage[] = {
	"gosbx open [--name=<name>] [--memory=<size>] [--cpus=<n>] "
	"[--pids=<n>] [--network] [--ttl=<duration>] [-q]",
	NULL,
};

/* the most CPUs a limit may name; beyond that it is surely a typo */
#define MAX_CPUS 4096.0

/*
 * "--cpus=1.5": a decimal number of CPUs, 0 for no limit. Returns 0,
 * or -1 with error().
 */
static int parse_cpus(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v < 0 ||
	    v > MAX_CPUS)
		return error("option '--cpus' expects a number of CPUs such "
			     "as '1.5' (0 for no limit), not '%s'",
			     arg);
	*out = v;
	return 0;
}

int cmd_open(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct session_opts o = {0};
	struct session s;
	const char *name = NULL, *cpus = NULL;
	int64_t memory = -1, ttl = -1;
	int pids = INT_MIN, network = 0, quiet = 0;
	struct option opts[] = {
		OPT_STRING(0, "name", &name, "<name>",
			   "claim name (default: generated)"),
		OPT_SIZE(0, "memory", &memory,
			 "memory limit, e.g. 512m (default 2g, 0: none)"),
		OPT_STRING(0, "cpus", &cpus, "<n>",
			   "CPU limit, e.g. 1.5 (default 2, 0: none)"),
		OPT_INT(0, "pids", &pids,
			"limit of processes (default 512, 0: none)"),
		OPT_BOOL(0, "network", &network, "allow network access"),
		OPT_DURATION(0, "ttl", &ttl,
			     "close after being idle this long (default 1h)"),
		OPT_BOOL('q', "quiet", &quiet, "print only the claim name"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, open_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc) {
		error("unexpected argument '%s'", argv[0]);
		usage_with_options_to(stderr, open_usage, opts);
		return 129;
	}

	ctx_session_opts(ctx, &o);
	o.name = name;
	o.keep = 1;
	o.network = network;
	o.purpose = "open";
	if (memory >= 0) {
		o.memory_bytes = memory ? memory : -1;
		o.memory_set = 1;
	}
	if (pids != INT_MIN) {
		if (pids < 0) {
			error("option '--pids' expects a number of processes "
			      "(0 for no limit), not '%d'",
			      pids);
			return 129;
		}
		o.pids = pids ? pids : -1;
		o.pids_set = 1;
	}
	if (cpus) {
		double v = 0;

		if (parse_cpus(cpus, &v) < 0)
			return 129;
		o.cpus = v > 0 ? v : -1;
		o.cpus_set = 1;
	}
	if (ttl >= 0) {
		if (!ttl) {
			error("option '--ttl' expects a duration above zero");
			return 129;
		}
		o.ttl_ms = ttl;
	}
	if (name && strcmp(ctx->backend, "url") &&
	    session_check_claim_name(name) < 0)
		return 1;

	if (session_open(&s, &o) < 0)
		return 1;
	printf("%s\n", s.claim);
	if (!quiet)
		fprintf(stderr,
			"use it with: gosbx exec --claim=%s -- "
			"<command>\nclose it with: gosbx close %s\n",
			s.claim, s.claim);
	session_disconnect(&s);
	return 0;
}
