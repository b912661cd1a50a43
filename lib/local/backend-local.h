#ifndef BACKEND_LOCAL_H
#define BACKEND_LOCAL_H

#include "compat.h"
#include "strbuf.h"

/*
 * The local backend's claims on disk (Documentation/technical/design.md
 * "Backends"): each is a directory $XDG_STATE_HOME/gosbx/claims/<name>/
 * (default
 * ~/.local/state/gosbx) holding
 *   fs/          the claim's storage (storage.h), the only part the
 *                sandbox sees: fs/app is /app, fs/home the sandbox's
 *                HOME with its own Go caches, fs/tmp /tmp; with a disk
 *                quota, the mount of
 *   disk.img     the claim's file system image (root only)
 *   run/         ours alone (mode 0700, never bound into the sandbox):
 *     runtime.sock  the socket we listen on and hand to the runtime
 *     end           the runtime writes "expired" here (through a
 *                   descriptor we gave it) when its idle TTL ends it
 *     owner         only for a sandbox that must not outlive the gosbx
 *                   that made it: locked (flock) while that process
 *                   lives; free, the claim is removed by the next gosbx
 *                   that lists or creates claims
 *   meta         name, created, ttl, keep, owner, limits, the isolate
 *                state, "mode running|suspended" (written by us only);
 *                a suspended claim (gosbx-suspend(1)) has no process,
 *                cgroup or namespace left, only its files, and meta
 *                says how to start it again with the same isolation
 *   runtime.log  the runtime's stderr (only the runtime, pid 1 of the
 *                sandbox and not dumpable, holds it open)
 *   last-used    its mtime is the last use
 * Nothing the host reads later is writable from inside the sandbox.
 * $XDG_STATE_HOME/gosbx/disk-templates/ holds the formatted empty
 * images that disk.img files are copied from (root only).
 */

enum local_claim_status {
	LOCAL_CLAIM_READY,   /* its runtime runs */
	LOCAL_CLAIM_EXPIRED, /* the runtime ended after its idle TTL */
	LOCAL_CLAIM_DEAD,    /* the runtime ended otherwise (crash, kill) */
	/* gosbx suspend stopped it; its files wait for gosbx resume */
	LOCAL_CLAIM_SUSPENDED,
};

struct local_claim_info {
	char *name;
	enum local_claim_status status;
	int64_t created;   /* epoch seconds */
	int64_t last_used; /* epoch seconds */
	int64_t ttl_ms;
	int64_t app_bytes; /* disk used by /app, bytes */
	int network;
	int keep; /* opened with --keep */
	char *purpose;
	char *reason; /* not ready: how it ended (NULL while ready) */
};

/* "ready", "expired", "dead", "suspended" */
const char *local_claim_status_name(enum local_claim_status s);

/*
 * The claims directory ($XDG_STATE_HOME/gosbx/claims), appended to
 * out. Returns 0, or -1 with error() if no home directory is known.
 */
int local_claims_dir(struct strbuf *out);

/*
 * When tail (the last bytes of a command's stderr) ends with the go
 * command's refusal of a newer go line under GOTOOLCHAIN=local ("go:
 * go.mod requires go >= 1.27 (running go 1.26.8; GOTOOLCHAIN=local)"),
 * append to hint one line, ending in a newline, that names both
 * versions and how to get the newer Go (--go, or modules on). Else
 * leaves hint alone. Issue 18; Go's toolchain selection (go.dev/doc/
 * toolchain).
 */
void local_go_version_hint(const struct strbuf *tail, struct strbuf *hint);

/*
 * List every claim, sorted by name. *out is an array of *nr entries,
 * freed with local_claims_free(). Returns 0 or -1 with error().
 * with_size: also measure /app (walks the tree). First removes the
 * claims of owners that died (see run/owner above); creating a claim
 * does so too.
 */
int local_claims_list(struct local_claim_info **out, size_t *nr, int with_size);
void local_claims_free(struct local_claim_info *c, size_t nr);

/*
 * Delete a claim without opening a session: kill its sandbox if it
 * runs, remove its cgroups and its directory. Returns 0, or -1 with
 * error() (e.g. no such claim).
 */
int local_claim_delete(const char *name);

/*
 * The gosbx-runtime binary to run inside sandboxes: $GOSBX_RUNTIME,
 * else gosbx-runtime next to the running program, else on PATH.
 * Appended to out; returns 0 or -1 with error().
 */
int local_find_runtime(struct strbuf *out);

#endif /* BACKEND_LOCAL_H */
