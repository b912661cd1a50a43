#include "compat.h"
#include "local/egress.h"
#include "session/sandbox-limits.h"
#include "session/session.h"
#include "usage.h"

#include <math.h>

/* the most CPUs a limit may name; beyond that it is surely a typo */
#define MAX_CPUS 4096.0

int limit_args_given(const struct limit_args *la)
{
	return la->memory >= 0 || la->cpus || la->pids != INT_MIN ||
	       la->disk >= 0 || la->network || la->allow_net || la->modules ||
	       la->go;
}

/* A limit below what the backend's sandboxes start with (backend_ops). */
static int check_minimums(const struct limit_args *la,
			  const struct backend_ops *ops)
{
	if (!ops)
		return 0;
	if (la->memory > 0 && la->memory < ops->min_memory_bytes)
		return error("option '--memory': %" PRId64 " bytes is too "
			     "small to start a sandbox; the minimum is %" PRId64
			     " MiB (--memory=%" PRId64 "m), or --memory=0 for "
			     "none",
			     la->memory, ops->min_memory_bytes >> 20,
			     ops->min_memory_bytes >> 20);
	if (la->pids > 0 && la->pids < ops->min_pids)
		return error("option '--pids': %d is too small to start a "
			     "sandbox; the minimum is %d (--pids=%d), or "
			     "--pids=0 for none",
			     la->pids, ops->min_pids, ops->min_pids);
	if (la->disk > 0 && la->disk < ops->min_disk_bytes)
		return error("option '--disk': %" PRId64 " bytes is too "
			     "small for a sandbox; the minimum is %" PRId64
			     " MiB (--disk=%" PRId64 "m), or --disk=0 for none",
			     la->disk, ops->min_disk_bytes >> 20,
			     ops->min_disk_bytes >> 20);
	return 0;
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
	if (check_minimums(la, backend_lookup(o->backend)) < 0)
		return -1;
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
	if (la->allow_net && !*la->allow_net)
		return error("option '--allow-net' expects hosts such as "
			     "'proxy.golang.org,*.pypi.org', not ''");
	if (la->allow_net && la->network)
		return error("options '--allow-net' and '--network' cannot be "
			     "used together: --network is the whole host "
			     "network");
	if (la->allow_net) {
		/* the list's syntax is checked here, before any backend */
		struct egress_policy check;
		int bad;

		egress_policy_init(&check);
		bad = egress_policy_add(&check, la->allow_net) < 0;
		egress_policy_release(&check);
		if (bad)
			return -1;
		o->allow_net = la->allow_net;
	}
	if (la->modules && strcmp(la->modules, "on") &&
	    strcmp(la->modules, "off"))
		return error("option '--modules' expects 'on' or 'off', "
			     "not '%s'",
			     la->modules);
	if (la->modules)
		o->modules_off = !strcmp(la->modules, "off");
	if (la->go && !*la->go)
		return error("option '--go' expects a go binary or a GOROOT");
	if (la->go)
		o->go = la->go;
	return 0;
}
