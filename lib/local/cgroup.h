#ifndef CGROUP_H
#define CGROUP_H

#include "compat.h"
#include "strbuf.h"

/*
 * Control groups for local sandboxes (Documentation/technical/design.md
 * "Backends", `local`): memory, pids and CPU limits, OOM-kill accounting and
 * clean removal.
 *
 * The host layout is detected under a cgroup root (/sys/fs/cgroup, or
 * $GOSBX_CGROUP_ROOT for tests):
 *   - v2 unified: <root>/cgroup.controllers exists;
 *   - hybrid: v2 at <root>/unified (usually without controllers) plus
 *     v1 hierarchies;
 *   - v1: one directory per controller, <root>/memory, <root>/pids,
 *     <root>/cpu (or "cpu,cpuacct").
 * Each controller is taken from v2 when the unified hierarchy offers
 * it, else from its v1 hierarchy. A sandbox's groups are
 * <hierarchy>/<parent>/<claim> (parent "gosbx" by default).
 *
 * When GOSBX_CGROUP_ROOT points at an ordinary directory (not a cgroup
 * file system), the code creates the interface files it writes, so a
 * fake tree in a temp dir records every write (t/unit/u-cgroup.c).
 */

enum cgroup_ctl { CGROUP_MEMORY, CGROUP_PIDS, CGROUP_CPU, CGROUP_NR_CTL };

#define CGROUP_BIT(c) (1u << (c))

/* "memory", "pids", "cpu" */
const char *cgroup_ctl_name(enum cgroup_ctl c);

enum cgroup_layout {
	CGROUP_LAYOUT_NONE,   /* nothing usable found */
	CGROUP_LAYOUT_V1,     /* v1 hierarchies only */
	CGROUP_LAYOUT_V2,     /* unified hierarchy at the root */
	CGROUP_LAYOUT_HYBRID, /* v2 at <root>/unified + v1 hierarchies */
};

/* "none", "v1", "v2", "hybrid" */
const char *cgroup_layout_name(enum cgroup_layout l);

struct cgroup_host {
	enum cgroup_layout layout;
	char *root;	  /* the cgroup root directory */
	char *v2_path;	  /* unified mount, or NULL */
	unsigned v2_ctls; /* CGROUP_BIT()s listed in v2 cgroup.controllers */
	char *v1_path[CGROUP_NR_CTL]; /* v1 hierarchy per controller or NULL */
	int v1_memsw; /* v1 memory.memsw.limit_in_bytes exists */
	int fake;     /* GOSBX_CGROUP_ROOT is not a cgroup fs */
};

/*
 * Detect the layout under $GOSBX_CGROUP_ROOT or /sys/fs/cgroup. Always
 * returns 0 (a host without cgroups has layout NONE); free with
 * cgroup_host_release().
 */
int cgroup_host_detect(struct cgroup_host *host);
void cgroup_host_release(struct cgroup_host *host);

/*
 * Which hierarchy would carry controller c: 2 (v2), 1 (v1) or 0 (none).
 */
int cgroup_host_version(const struct cgroup_host *host, enum cgroup_ctl c);

/*
 * Explain, for an error message, why c is not available, e.g. "v2 has
 * none, v1 not mounted". Appends to out.
 */
void cgroup_host_explain(const struct cgroup_host *host, enum cgroup_ctl c,
			 struct strbuf *out);

/* Describe the layout in one line for `gosbx doctor`; appends to out. */
void cgroup_host_describe(const struct cgroup_host *host, struct strbuf *out);

/* Resource limits; 0 means "no limit" for each. */
struct cgroup_limits {
	int64_t memory_bytes; /* memory (and swap 0) in bytes */
	int64_t pids;	      /* maximum number of tasks */
	double cpus;	      /* CPU bandwidth in CPUs, e.g. 1.5 */
};

/*
 * The groups of one sandbox. All paths are absolute directories; NULL
 * when that hierarchy is not used. This is what another process needs
 * to find, account and remove the groups later: save it with
 * cgroup_state_format() and load it with cgroup_state_parse().
 */
struct cgroup {
	char *v2;		 /* the v2 group */
	char *v1[CGROUP_NR_CTL]; /* the v1 group per controller */
	char *unit;		 /* systemd scope unit name, if delegated */
	int fake;		 /* test tree: create files when writing */
};

void cgroup_init(struct cgroup *cg);
/* Free the memory only (the groups stay on the host). */
void cgroup_release(struct cgroup *cg);
/* True if the sandbox uses at least one group. */
int cgroup_in_use(const struct cgroup *cg);

/*
 * Create <hierarchy>/<parent>/<name> for every controller whose limit
 * is non-zero in `want` (a CGROUP_BIT() mask of controllers to create
 * groups for; limits of controllers not in want are ignored), enabling
 * v2 controllers in the parents' cgroup.subtree_control as needed,
 * and write the limits:
 *   v2: memory.max, memory.swap.max=0, pids.max, cpu.max "Q 100000";
 *   v1: memory.limit_in_bytes (+ memory.memsw.limit_in_bytes when
 *       present), pids.max, cpu.cfs_period_us=100000, cpu.cfs_quota_us.
 * `name` must be a single path component. A group that already exists
 * is reused (its limits rewritten). On failure the groups created so
 * far are removed, error() names the controller and the cause, and -1
 * is returned. cg must be initialised; cgroup_release() frees it.
 */
int cgroup_create(const struct cgroup_host *host, const char *parent,
		  const char *name, unsigned want,
		  const struct cgroup_limits *lim, struct cgroup *cg);

/*
 * cgroup_create(), but when why is not NULL the cause of a failure is
 * stored there (replacing its contents) instead of being printed, so
 * a caller can turn it into a warning. Not reentrant per thread.
 */
int cgroup_create_why(const struct cgroup_host *host, const char *parent,
		      const char *name, unsigned want,
		      const struct cgroup_limits *lim, struct cgroup *cg,
		      struct strbuf *why);

/*
 * Move the calling process into every group of cg by writing "0" to
 * each cgroup.procs. Only open(2), write(2) and close(2) are used, so
 * it is safe between fork() and exec() of a threaded program. Returns
 * 0, or -1 with errno set (nothing printed).
 */
int cgroup_join_self(const struct cgroup *cg);

/*
 * Number of OOM kills recorded for the groups: v2 memory.events
 * "oom_kill", v1 memory.oom_control "oom_kill" (memory.failcnt on
 * kernels without it). Compare before/after a command to know whether
 * it was OOM-killed. Returns 0 with *out set (0 when the memory group
 * is not used), or -1 with error() when the counter cannot be read.
 */
int cgroup_oom_kills(const struct cgroup *cg, uint64_t *out);

/*
 * Kill every process in the groups: v2 cgroup.kill when present, then
 * SIGKILL each pid listed in cgroup.procs until all are empty (waits
 * up to timeout_ms). Returns 0, or -1 with error() if processes remain.
 */
int cgroup_kill_all(const struct cgroup *cg, int timeout_ms);

/*
 * Kill what remains (cgroup_kill_all) and remove the groups, retrying
 * rmdir while dying tasks leave them busy (up to timeout_ms). A group
 * that is already gone is not an error. The parent ("gosbx") stays.
 * Returns 0, or -1 with error(). cg's memory is not freed.
 */
int cgroup_destroy(const struct cgroup *cg, int timeout_ms);

/*
 * Persist cg as text lines "v2 <path>", "memory <path>", "pids
 * <path>", "cpu <path>", "unit <name>", "fake 1" (only those in use).
 * Appends to out.
 */
void cgroup_state_format(const struct cgroup *cg, struct strbuf *out);
/*
 * Load lines written by cgroup_state_format() into cg (initialised);
 * unknown lines are ignored so callers may mix in their own keys.
 * Returns 0 or -1 with error() on a malformed line.
 */
int cgroup_state_parse(struct cgroup *cg, const char *text);

#endif /* CGROUP_H */
