#ifndef UIDPOOL_H
#define UIDPOOL_H

#include "compat.h"
#include "strbuf.h"

/*
 * Host uids for the sandboxes that root starts
 * (Documentation/technical/design.md "Backends": untrusted code never runs as
 * host uid 0). As root, each sandbox runs as its own unprivileged host uid and
 * gid, taken from one range; two live sandboxes never share one. isolate.h uses
 * this; see isolate_reserve_ids().
 *
 * The range: the "gosbx" lines of /etc/subuid and /etc/subgid
 * ("gosbx:<first>:<count>", subuid(5), the files podman and LXC take
 * their ranges from); without them UIDPOOL_DEFAULT_BASE and the
 * UIDPOOL_DEFAULT_COUNT ids after it, for uids and gids alike: the
 * start of the range that systemd's UIDS-GIDS.md leaves unused above
 * its container ranges (524288..1879048191), below 2^31. The n-th uid
 * of the range goes with the n-th gid.
 *
 * A uid is free when no reservation of it is held by a live process,
 * no process on the host (but a zombie) has it (or its gid) as a real,
 * effective, saved or file-system id, and neither the user nor the group
 * database knows it (getpwuid_r, getgrgid_r). Reservations are files
 * UIDPOOL_DIR/<uid> (root only; /run is emptied at boot, with every
 * sandbox), each with "owner <pid> <start>" (the process that reserved
 * it) and, once started, "sandbox <pid> <start>" (the sandbox's bwrap):
 * pid and start time (proc_start_time()) name one process for good.
 * A reservation lives while one of them does. Every change happens
 * under an exclusive flock(2) of UIDPOOL_DIR/lock, so concurrent gosbx
 * processes never pick the same uid.
 *
 * Only root may call these (they return -1 with error() otherwise).
 */

#define UIDPOOL_DIR "/run/gosbx/uids"
#define UIDPOOL_DEFAULT_BASE 1879048192u /* 0x70000000 */
#define UIDPOOL_DEFAULT_COUNT 65536u

struct uidpool_range {
	uint32_t uid_base;
	uint32_t gid_base;
	uint32_t count; /* ids in the range, >= 1 */
	/* "/etc/subuid and /etc/subgid" or "the built-in range" */
	const char *source;
};

/*
 * Read the range into r. Returns 0, or -1 with error() when the files
 * are inconsistent (a "gosbx" line in one file but not the other, a
 * range that includes 0 or passes 2^32-2).
 */
int uidpool_range(struct uidpool_range *r);

/*
 * Reserve a free uid and its gid for a sandbox about to start, owned
 * by the calling process until uidpool_bind(). Returns 0 with *uid and
 * *gid, or -1 with error() ("cannot create sandbox: uid: ...") when
 * the range is exhausted or UIDPOOL_DIR cannot be used.
 */
int uidpool_reserve(uid_t *uid, gid_t *gid);
/*
 * The same for one given uid (and the gid that goes with it, into
 * *gid): a suspended claim's sandbox resumes as the host uid that owns
 * its files (backend-local.c). Returns 0, or -1 with error() ("...: host
 * uid N is in use", or not in the range).
 */
int uidpool_reserve_id(uid_t uid, gid_t *gid);

/*
 * Record that the sandbox whose bwrap is pid (started at start, clock
 * ticks since boot) holds uid: the reservation then outlives the
 * process that made it. Returns 0 or -1 with error().
 */
int uidpool_bind(uid_t uid, pid_t pid, uint64_t start);

/*
 * Give uid back. pid 0: only if the reservation is still the calling
 * process's and no sandbox was bound to it (a start that failed);
 * otherwise only if pid and start are the bound sandbox, so that a
 * stale handle never frees a uid that a newer sandbox holds. Errors
 * are ignored (a reservation left behind is reclaimed once its
 * processes are gone).
 */
void uidpool_release(uid_t uid, pid_t pid, uint64_t start);

/*
 * For `gosbx doctor`: how many uids of the range are reserved by live
 * processes. Returns 0 with *nr, or -1 with error().
 */
int uidpool_count_live(size_t *nr);

#endif /* UIDPOOL_H */
