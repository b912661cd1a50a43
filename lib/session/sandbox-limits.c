#include "compat.h"
#include "session/sandbox-limits.h"
#include "session/session.h"
#include "usage.h"

#include <math.h>

/* the most CPUs a limit may name; beyond that it is surely a typo */
#define MAX_CPUS 4096.0

int limit_args_given(const struct limit_args *la)
{
	return la->memory >= 0 || la->cpus || la->pids != INT_MIN ||
	       la->disk >= 0 || la->network;
}

int limit_args_apply(const struct limit_args *la, struct session_opts *o)
{
	if (la->pids != INT_MIN && la->pids < 0)
		return error("option '--pids' expects a number of processes "
			     "(0 for no limit), not '%d'",
			     la->pids);
	if (la->cpus) {
		char *end;
		double v;

		errno = 0;
		v = strtod(la->cpus, &end);
		if (errno || end == la->cpus || *end || !isfinite(v) || v < 0 ||
		    v > MAX_CPUS)
			return error("option '--cpus' expects a number of CPUs "
				     "such as '1.5' (0 for no limit), not '%s'",
				     la->cpus);
		o->cpus = v > 0 ? v : -1;
		o->cpus_set = 1;
	}
	if (la->memory >= 0) {
		o->memory_bytes = la->memory ? la->memory : -1;
		o->memory_set = 1;
	}
	if (la->pids != INT_MIN) {
		o->pids = la->pids ? la->pids : -1;
		o->pids_set = 1;
	}
	if (la->disk >= 0)
		o->disk_bytes = la->disk ? la->disk : -1;
	if (la->network)
		o->network = 1;
	return 0;
}
