#include "compat.h"
#include "local/isolate.h"
#include "parse-options.h"
#include "session/doctor.h"
#include "usage.h"

#include <sys/wait.h>

/*
 * Test helper: run one command inside the local backend's isolation
 * (lib/local/isolate.h) and exit with its status, removing the cgroups
 * afterwards. Prints "isolate-run: oom" on stderr when the sandbox's
 * memory group recorded an OOM kill, and "isolate-run: cgroup <path>"
 * for each group with --show-cgroup (before the command runs).
 * Its stdout and stderr are the sandbox's; stdin only with --stdin
 * (else /dev/null). As root it gives the claim directory and the Go
 * caches to the sandbox's reserved uid first (isolate_chown_tree()).
 * Exit status: the command's; 125 when the sandbox could not be
 * created; 129 on usage errors.
 */

static const char *const usage_lines[] = {
	"isolate-run [--network] [--memory=<size>] [--pids=<n>] "
	"[--cpus=<n>] [--claim-dir=<dir>] -- <cmd> [<args>...]",
	NULL
};

/* the state appears as <file>.done once complete (tests poll for it) */
static int rename_state(const char *file)
{
	struct strbuf done = STRBUF_INIT;
	int r;

	strbuf_addf(&done, "%s.done", file);
	r = link(file, done.buf);
	strbuf_release(&done);
	return r;
}

/* --doctor: "<status> <name>: <message>" and "  fix: <fix>" lines */
static int run_doctor(void)
{
	struct doctor_check *checks;
	size_t nr, i;
	int fails = 0;

	if (isolate_doctor(&checks, &nr))
		return 1;
	for (i = 0; i < nr; i++) {
		printf("%s %s: %s\n", doctor_status_name(checks[i].status),
		       checks[i].name, checks[i].message);
		if (checks[i].fix)
			printf("  fix: %s\n", checks[i].fix);
		fails += checks[i].status == DOCTOR_FAIL;
	}
	doctor_checks_free(checks, nr);
	return fails ? 1 : 0;
}

/* --kill: load a state written by --state and release the sandbox */
static int kill_saved(const char *file)
{
	struct strbuf sb = STRBUF_INIT;
	struct isolate_handle h;
	int ret = 1;

	isolate_handle_init(&h);
	if (strbuf_read_file(&sb, file, 256) < 0)
		error_errno("cannot read '%s'", file);
	else if (!isolate_state_parse(&h, sb.buf))
		ret = isolate_destroy(&h) ? 1 : 0;
	isolate_handle_free(&h);
	strbuf_release(&sb);
	return ret;
}

/* the default Go caches of isolate.h, given to the sandbox's uid */
static int chown_caches(const struct isolate_config *cfg)
{
	static const char *const leaves[] = { "go-build", "go-mod" };
	const char *xdg = getenv("XDG_CACHE_HOME");
	struct strbuf p = STRBUF_INIT;
	int ret = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(leaves) && !ret && xdg && *xdg; i++) {
		strbuf_reset(&p);
		strbuf_addf(&p, "%s/gosbx/%s", xdg, leaves[i]);
		if (!access(p.buf, F_OK))
			ret = isolate_chown_tree(cfg, p.buf);
	}
	strbuf_release(&p);
	return ret;
}

int main(int argc, const char **argv)
{
	int network = 0, show_cgroup = 0, pids = -1, status, ret = 125;
	int64_t memory = -1, fsize = 0;
	const char *cpus = NULL, *claim_dir = NULL, *name = NULL;
	const char *state_file = NULL, *kill_file = NULL;
	int doctor = 0, detach = 0, stdin_too = 0;
	struct strvec binds = STRVEC_INIT, env = STRVEC_INIT;
	struct isolate_config cfg;
	struct isolate_handle h;
	uint64_t oom_before = 0, oom_after = 0;
	char *cwd = NULL;
	const struct option opts[] = {
		OPT_BOOL(0, "network", &network, "allow network access"),
		OPT_SIZE(0, "memory", &memory, "memory limit (0: none)"),
		OPT_INT(0, "pids", &pids, "tasks limit (0: none)"),
		OPT_STRING(0, "cpus", &cpus, "<n>", "CPU limit (0: none)"),
		OPT_SIZE(0, "fsize", &fsize, "largest file (RLIMIT_FSIZE)"),
		OPT_STRING(0, "claim-dir", &claim_dir, "<dir>",
			   "directory that becomes /app (default: .)"),
		OPT_STRING(0, "name", &name, "<name>",
			   "claim name (default: isolate-run-<pid>)"),
		OPT_STRING_LIST(0, "ro-bind", &binds, "<host[:path]>",
				"extra read-only bind"),
		OPT_STRING_LIST(0, "env", &env, "<k=v>", "extra variable"),
		OPT_BOOL(0, "show-cgroup", &show_cgroup,
			 "print the sandbox's cgroups on stderr"),
		OPT_STRING(0, "state", &state_file, "<file>",
			   "write the handle state there"),
		OPT_STRING(0, "kill", &kill_file, "<file>",
			   "end the sandbox saved by --state (another run)"),
		OPT_BOOL(0, "detach", &detach,
			 "leave the sandbox running (no --die-with-parent); "
			 "needs --state"),
		OPT_BOOL(0, "stdin", &stdin_too,
			 "give the sandbox our stdin (default: /dev/null)"),
		OPT_BOOL(0, "doctor", &doctor,
			 "print the isolation checks and exit"),
		OPT_END(),
	};

	progname = "isolate-run";
	argc = parse_options(argc, argv, opts, usage_lines,
			     PARSE_OPT_STOP_AT_NON_OPTION);
	if (argc < 0)
		return parse_options_status(argc);
	if (kill_file)
		return kill_saved(kill_file);
	if (doctor)
		return run_doctor();
	if (!argc) {
		usage_with_options_to(stderr, usage_lines, opts);
		return 129;
	}

	isolate_config_init(&cfg);
	if (!claim_dir) {
		cwd = getcwd(NULL, 0);
		if (!cwd)
			die_errno("getcwd");
		claim_dir = cwd;
	}
	cfg.claim_dir = claim_dir;
	{
		static char buf[64];

		if (!name) {
			xsnprintf(buf, sizeof(buf), "isolate-run-%d",
				  (int)getpid());
			name = buf;
		}
	}
	cfg.claim_name = name;
	cfg.network = network;
	cfg.die_with_parent = !detach;
	if (detach && !state_file)
		die("--detach needs --state");
	if (memory >= 0) {
		cfg.memory_bytes = memory;
		cfg.memory_explicit = 1;
	}
	if (pids >= 0) {
		cfg.pids = pids;
		cfg.pids_explicit = 1;
	}
	if (cpus) {
		char *end;

		cfg.cpus = strtod(cpus, &end);
		if (*end || cfg.cpus < 0)
			die("invalid --cpus '%s'", cpus);
		cfg.cpus_explicit = 1;
	}
	cfg.fsize_bytes = fsize;
	strvec_pushv(&cfg.ro_binds, binds.v);
	strvec_pushv(&cfg.env, env.v);
	strvec_pushv(&cfg.argv, argv);
	cfg.stdout_fd = 1;
	cfg.stderr_fd = 2;
	if (stdin_too)
		cfg.stdin_fd = 0;

	/*
	 * As root the sandbox runs as a reserved uid: give it the claim
	 * directory and the Go caches, as the local backend does.
	 */
	if (isolate_reserve_ids(&cfg) ||
	    (!access(cfg.claim_dir, F_OK) &&
	     isolate_chown_tree(&cfg, cfg.claim_dir)) ||
	    chown_caches(&cfg))
		goto out;
	if (isolate_spawn(&cfg, &h))
		goto out;
	if (state_file) {
		struct strbuf sb = STRBUF_INIT;
		FILE *fp = fopen(state_file, "w");

		isolate_state_format(&h, &sb);
		if (!fp || fputs(sb.buf, fp) < 0 || fclose(fp))
			warning_errno("cannot write '%s'", state_file);
		else if (rename_state(state_file))
			warning_errno("cannot rename '%s'", state_file);
		strbuf_release(&sb);
	}
	if (show_cgroup) {
		struct strbuf sb = STRBUF_INIT;

		cgroup_state_format(&h.cg, &sb);
		fprintf(stderr, "%s", sb.buf);
		strbuf_release(&sb);
	}
	if (detach) {
		/* bwrap is re-parented when we exit; --kill ends it */
		isolate_handle_free(&h);
		ret = 0;
		goto out;
	}
	isolate_oom_kills(&h, &oom_before);
	if (isolate_wait(&h, -1, &status) != 1) {
		isolate_destroy(&h);
		goto out;
	}
	if (isolate_oom_kills(&h, &oom_after) == 0 && oom_after > oom_before)
		fprintf(stderr, "isolate-run: oom\n");
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (isolate_destroy(&h))
		ret = ret ? ret : 125;
out:
	isolate_config_release(&cfg);
	strvec_clear(&binds);
	strvec_clear(&env);
	free(cwd);
	return ret;
}
