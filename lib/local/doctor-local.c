/*
 * The doctor checks of the local backend (lib/session/doctor.h): isolation
 * from isolate_doctor() (lib/local/isolate.h), then the state, cache,
 * storage, runtime and claims checks. Moved from builtin/doctor.c.
 */
#include "compat.h"
#include "local/backend-local.h"
#include "dir.h"
#include "goenv.h"
#include "session/doctor.h"
#include "local/gostd.h"
#include "local/isolate.h"
#include "run-command.h"
#include "local/storage.h"

#include <sys/stat.h>

/* how long `gosbx-runtime --version` may take, ms */
#define VERSION_TIMEOUT_MS 10000

/* path exists (or is created) as a directory we can write into */
static void check_dir(struct check_list *cl, const char *name, const char *path,
		      const char *env)
{
	struct strbuf msg = STRBUF_INIT, fix = STRBUF_INIT;
	struct strbuf tmp = STRBUF_INIT;
	struct stat st;
	int fd;

	strbuf_addf(&fix,
		    "make '%s' a directory you can write to, or set "
		    "%s to another place",
		    path, env);
	if (mkdir_p(path, 0700) < 0) {
		strbuf_addf(&msg, "cannot create '%s': %s", path,
			    strerror(errno));
		goto fail;
	}
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		strbuf_addf(&msg, "'%s' is not a directory", path);
		goto fail;
	}
	strbuf_addf(&tmp, "%s/.gosbx-doctor-XXXXXX", path);
	fd = mkstemp(tmp.buf);
	if (fd < 0) {
		strbuf_addf(&msg, "cannot write in '%s': %s", path,
			    strerror(errno));
		goto fail;
	}
	close(fd);
	unlink(tmp.buf);
	strbuf_addf(&msg, "%s is writable", path);
	check_add(cl, name, DOCTOR_OK, msg.buf, NULL);
	goto out;
fail:
	check_add(cl, name, DOCTOR_FAIL, msg.buf, fix.buf);
out:
	strbuf_release(&msg);
	strbuf_release(&fix);
	strbuf_release(&tmp);
}

static void check_state_dir(struct check_list *cl)
{
	struct strbuf dir = STRBUF_INIT;
	struct capture cap;

	capture_start(&cap);
	if (local_claims_dir(&dir) < 0) {
		capture_end(&cap);
		check_add(cl, "state directory", DOCTOR_FAIL, cap.err.buf,
			  "set HOME or XDG_STATE_HOME");
	} else {
		capture_end(&cap);
		check_dir(cl, "state directory", dir.buf, "XDG_STATE_HOME");
	}
	capture_release(&cap);
	strbuf_release(&dir);
}

static void check_cache_dir(struct check_list *cl)
{
	const char *cache = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	struct strbuf dir = STRBUF_INIT;

	if (cache && *cache == '/')
		strbuf_addf(&dir, "%s/gosbx", cache);
	else if (home && *home)
		strbuf_addf(&dir, "%s/.cache/gosbx", home);
	if (dir.len)
		check_dir(cl, "cache directory", dir.buf, "XDG_CACHE_HOME");
	else
		check_add(cl, "cache directory", DOCTOR_FAIL,
			  "cannot find the cache directory: neither "
			  "XDG_CACHE_HOME nor HOME is set",
			  "set HOME or XDG_CACHE_HOME");
	strbuf_release(&dir);
}

/*
 * The claim's storage (lib/local/storage.h): whether --disk is a real quota
 * here, and what each host kind does instead.
 */
static void check_storage(struct check_list *cl)
{
	struct strbuf why = STRBUF_INIT, msg = STRBUF_INIT;

	if (storage_quota_available(&why) == STORAGE_QUOTA_LOOP) {
		strbuf_addf(&msg,
			    "enforced per claim: /app, /tmp and HOME (the Go "
			    "caches) share one loop-mounted ext4 image of "
			    "--disk bytes (default %" PRId64 " GiB, reserved "
			    "on the host at open); "
			    "a full disk gives ENOSPC to the writing command",
			    STORAGE_DEFAULT_DISK >> 30);
		check_add(cl, "disk quota", DOCTOR_OK, msg.buf, NULL);
	} else {
		strbuf_addf(&msg,
			    "not enforced: %s; /app and HOME (the Go caches) "
			    "use the host's file system without a limit, /tmp "
			    "is a tmpfs of at most %" PRId64 " GiB or half the "
			    "memory limit; an explicit --disk fails",
			    why.buf, ISOLATE_TMPFS_MAX >> 30);
		check_add(cl, "disk quota", DOCTOR_WARN, msg.buf,
			  geteuid() ? "run gosbx as root for a per-claim quota "
				      "(sandboxes still run unprivileged), or "
				      "give XDG_STATE_HOME a file system of "
				      "its own that may fill up"
				    : "load the loop module (modprobe loop) "
				      "and install e2fsprogs (mkfs.ext4)");
	}
	check_add(cl, "go caches", DOCTOR_OK,
		  "per claim: each claim's build and module caches live in "
		  "its own HOME; no sandbox writes another's, and the "
		  "standard library's shared layer is read-only",
		  NULL);
	strbuf_release(&why);
	strbuf_release(&msg);
}

/*
 * Issue 18: where sandboxes get modules from, whether they are
 * verified, the standard library's shared layer, and what network a
 * sandbox has
 */
static void check_go_network(struct check_list *cl)
{
	struct strbuf go = STRBUF_INIT, why = STRBUF_INIT, out = STRBUF_INIT;
	struct strbuf msg = STRBUF_INIT, layer = STRBUF_INIT;
	static const char *const names[] = { "GOPROXY", "GOSUMDB" };
	char *sumdb;

	check_add(cl, "network", DOCTOR_OK,
		  "none by default: a sandbox reaches only the hosts of "
		  "--allow-net, through gosbx netd on the host "
		  "(127.0.0.1:3128 inside); --network gives it the host's "
		  "whole network (unsafe)",
		  NULL);
	if (isolate_host_go(NULL, &go, &why) <= 0)
		goto out;
	if (goenv_lines(go.buf, names, ARRAY_SIZE(names), &out, &why) < 0 ||
	    !(sumdb = strchr(out.buf, '\n'))) {
		check_add(cl, "go modules", DOCTOR_WARN,
			  "'go env GOPROXY GOSUMDB' failed: sandboxes get "
			  "no modules",
			  "see 'go env'");
		goto out;
	}
	*sumdb++ = '\0';
	strbuf_setlen(&out, strlen(out.buf));
	if (!strcmp(out.buf, "off") || !*out.buf)
		check_add(cl, "go modules", DOCTOR_WARN,
			  "GOPROXY=off: sandboxes get no modules",
			  "go env -w GOPROXY=https://proxy.golang.org,direct "
			  "(or your proxy)");
	else if (!strncmp(sumdb, "off", 3))
		check_add(cl, "go modules", DOCTOR_WARN,
			  "GOSUMDB=off: the modules sandboxes get through "
			  "your GOPROXY are not checked against a checksum "
			  "database",
			  "go env -u GOSUMDB (or set your own database)");
	else {
		strbuf_addf(&msg,
			    "on: sandboxes get module versions through gosbx "
			    "netd, fetched once from GOPROXY=%s and verified "
			    "against GOSUMDB=%.*s by the go command, into a "
			    "cache no sandbox can write (--modules=off closes "
			    "it)",
			    out.buf, (int)strcspn(sumdb, "\n"), sumdb);
		check_add(cl, "go modules", DOCTOR_OK, msg.buf, NULL);
	}
	strbuf_reset(&msg);
	if (gostd_layer_find(go.buf, &layer) > 0) {
		strbuf_addf(&msg, "built: %s", layer.buf);
		check_add(cl, "std cache", DOCTOR_OK, msg.buf, NULL);
	} else if (layer.len) {
		strbuf_addf(&msg,
			    "not built yet: the next sandbox starts the build "
			    "into %s; sandboxes then build nothing of the "
			    "standard library",
			    layer.buf);
		check_add(cl, "std cache", DOCTOR_OK, msg.buf, NULL);
	}
out:
	strbuf_release(&go);
	strbuf_release(&why);
	strbuf_release(&out);
	strbuf_release(&msg);
	strbuf_release(&layer);
}

static void check_runtime(struct check_list *cl)
{
	static const char fix_find[] =
		"install gosbx-runtime next to gosbx or on PATH, or set "
		"GOSBX_RUNTIME to its path";
	struct strbuf path = STRBUF_INIT, out = STRBUF_INIT;
	struct strbuf msg = STRBUF_INIT;
	struct capture cap;
	const char *version;
	int r, status;

	capture_start(&cap);
	r = local_find_runtime(&path);
	capture_end(&cap);
	if (r < 0) {
		check_add(cl, "gosbx-runtime", DOCTOR_FAIL, cap.err.buf,
			  fix_find);
		goto out;
	}
	{
		const char *argv[] = { path.buf, "--version", NULL };
		status = run_capture(argv, &out, VERSION_TIMEOUT_MS);
	}
	first_line(&out);
	if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    !skip_prefix(out.buf, "gosbx-runtime version ", &version)) {
		strbuf_addf(&msg, "'%s --version' failed", path.buf);
		if (out.len)
			strbuf_addf(&msg, ": %s", out.buf);
		check_add(cl, "gosbx-runtime", DOCTOR_FAIL, msg.buf,
			  "reinstall gosbx-runtime from the same build as "
			  "gosbx, or set GOSBX_RUNTIME to a working one");
		goto out;
	}
	if (strcmp(version, GOSBX_VERSION)) {
		strbuf_addf(&msg, "%s is version %s but gosbx is %s", path.buf,
			    version, GOSBX_VERSION);
		check_add(cl, "gosbx-runtime", DOCTOR_WARN, msg.buf,
			  "install gosbx and gosbx-runtime from the same "
			  "build");
		goto out;
	}
	strbuf_addf(&msg, "version %s (%s)", version, path.buf);
	check_add(cl, "gosbx-runtime", DOCTOR_OK, msg.buf, NULL);
out:
	capture_release(&cap);
	strbuf_release(&path);
	strbuf_release(&out);
	strbuf_release(&msg);
}

static void check_stale_claims(struct check_list *cl)
{
	struct local_claim_info *list;
	struct strbuf msg = STRBUF_INIT, names = STRBUF_INIT;
	struct capture cap;
	size_t nr, stale = 0;
	int r;

	capture_start(&cap);
	r = local_claims_list(&list, &nr, 0);
	capture_end(&cap);
	if (r < 0) {
		check_add(cl, "claims", DOCTOR_FAIL, cap.err.buf,
			  "make the state directory readable");
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		/* a suspended claim is kept on purpose */
		if (list[i].status == LOCAL_CLAIM_READY ||
		    list[i].status == LOCAL_CLAIM_SUSPENDED)
			continue;
		stale++;
		if (names.len)
			strbuf_addstr(&names, ", ");
		strbuf_addf(&names, "%s (%s)", list[i].name,
			    local_claim_status_name(list[i].status));
	}
	if (stale) {
		strbuf_addf(&msg, "%zu of %zu claim%s expired or dead: %s",
			    stale, nr, nr == 1 ? "" : "s", names.buf);
		check_add(cl, "claims", DOCTOR_WARN, msg.buf,
			  "gosbx claims prune");
	} else {
		strbuf_addf(&msg, "%zu claim%s, none expired or dead", nr,
			    nr == 1 ? "" : "s");
		check_add(cl, "claims", DOCTOR_OK, msg.buf, NULL);
	}
	local_claims_free(list, nr);
out:
	capture_release(&cap);
	strbuf_release(&msg);
	strbuf_release(&names);
}

int doctor_local(struct check_list *cl, const struct doctor_opts *o)
{
	struct doctor_check *checks;
	struct capture cap;
	size_t nr;
	int r;

	capture_start(&cap);
	r = isolate_doctor(&checks, &nr);
	capture_end(&cap);
	if (r < 0)
		check_add(cl, "isolation", DOCTOR_FAIL, cap.err.buf, NULL);
	else
		check_take(cl, checks, nr);
	capture_release(&cap);

	check_state_dir(cl);
	check_cache_dir(cl);
	check_storage(cl);
	check_go_network(cl);
	check_runtime(cl);
	check_stale_claims(cl);
	if (o->probe)
		doctor_probe(cl, o);
	return 0;
}
