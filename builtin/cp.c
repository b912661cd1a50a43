/*
 * gosbx cp: copy files and trees between here and a kept sandbox's
 * /app, both ways, as `kubectl cp` and `docker cp` do (issue 13):
 * `gosbx cp ./src x:/app/src`, `gosbx cp x:/app/bin/app ./app`.
 *
 * Both ways are one tar stream (lib/tarball.h): into the sandbox with
 * session_push() into a staging directory, then one `mv` there (so the
 * copy can take a new name); out of it with session_fetch_archive()
 * into a temporary file, extracted with tar_extract_safe() into a
 * staging directory beside the target, then renamed into place. The
 * archive a sandbox sends is hostile: tar_extract_safe() refuses
 * absolute names, "..", devices and symlinks that leave the copy, and
 * then nothing is written.
 */
#include "compat.h"
#include "builtin.h"
#include "dir.h"
#include "parse-options.h"
#include "session/session.h"
#include "strbuf.h"
#include "tarball.h"
#include "usage.h"
#include "workpath.h"

#include <fcntl.h>
#include <libgen.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

static const char *const cp_usage[] = {
	"gosbx cp [-v] [--max-size=<size>] <src> <dest>",
	NULL,
};

/* the most a copy out of a sandbox takes by default: 16 GiB */
#define CP_DEFAULT_MAX ((int64_t)16 << 30)

static volatile sig_atomic_t got_sigint;

static void on_sigint(int sig)
{
	got_sigint = sig;
}

/*
 * "<claim>:<path>" names a path in a sandbox: the part before the first
 * ':' is not empty and has no '/' (so "./a:b" is local). Returns the
 * path part and sets *claim (allocated), or NULL for a local path.
 */
static const char *remote_part(const char *arg, char **claim)
{
	const char *colon = strchr(arg, ':');

	if (!colon || colon == arg || memchr(arg, '/', colon - arg))
		return NULL;
	*claim = xstrndup(arg, colon - arg);
	return colon + 1;
}

static void random_name(struct strbuf *sb)
{
	unsigned char raw[8];

	if (getrandom(raw, sizeof(raw), 0) != sizeof(raw))
		memset(raw, 0, sizeof(raw)); /* still one name per run */
	strbuf_addstr(sb, ".gosbx-cp-");
	for (int i = 0; i < 8; i++)
		strbuf_addf(sb, "%02x", raw[i]);
}

/* The sandbox side of an upload: move the staged entry to its place. */
static const char place_script[] =
	"s=\n"
	"for e in \"$GOSBX_CP_STAGE\"/* \"$GOSBX_CP_STAGE\"/.[!.]* "
	"\"$GOSBX_CP_STAGE\"/..?*; do\n"
	" if [ -e \"$e\" ] || [ -L \"$e\" ]; then s=$e; fi\n"
	"done\n"
	"d=$GOSBX_CP_DEST\n"
	"if [ -z \"$s\" ]; then echo 'nothing arrived' >&2; rc=1\n"
	"elif [ -z \"$d\" ] || [ \"$GOSBX_CP_INTO\" = 1 ] ||\n"
	"  { [ -d \"$d\" ] && [ ! -L \"$d\" ]; }; then\n"
	" mkdir -p -- \"${d:-.}\" && mv -f -- \"$s\" \"${d:-.}/\"; rc=$?\n"
	"else\n"
	" mkdir -p -- \"$(dirname -- \"$d\")\" && mv -fT -- \"$s\" \"$d\"; "
	"rc=$?\n"
	"fi\n"
	"rm -rf -- \"$GOSBX_CP_STAGE\"\n"
	"exit $rc\n";

static int copy_in(struct session *s, const char *src, const char *dest,
		   int into)
{
	struct strbuf stage = STRBUF_INIT, env_stage = STRBUF_INIT,
		      env_dest = STRBUF_INIT;
	struct session_exec e = { 0 };
	struct session_result res;
	const char *env[4];
	int ret;

	random_name(&stage);
	if (session_push(s, &src, 1, stage.buf) < 0) {
		strbuf_release(&stage);
		return -1;
	}
	strbuf_addf(&env_stage, "GOSBX_CP_STAGE=%s", stage.buf);
	strbuf_addf(&env_dest, "GOSBX_CP_DEST=%s", dest);
	env[0] = env_stage.buf;
	env[1] = env_dest.buf;
	env[2] = into ? "GOSBX_CP_INTO=1" : "GOSBX_CP_INTO=0";
	env[3] = NULL;
	e.command = place_script;
	e.env = env;
	session_result_init(&res);
	ret = session_execute(s, &e, &res);
	if (!ret && res.exit_code) {
		strbuf_trim(&res.err);
		ret = error("cannot put '%s' at '/app/%s' in the sandbox: %s",
			    src, dest, res.err.buf);
	} else if (ret) {
		ret = -1;
	}
	session_result_release(&res);
	strbuf_release(&stage);
	strbuf_release(&env_stage);
	strbuf_release(&env_dest);
	return ret;
}

/*
 * What a copy out may take, in archive bytes: max_bytes, and no more
 * than half of what is free where the stage is (the archive is kept
 * there while its files are written beside it). *by_space is set when
 * the free space is the bound.
 */
static uint64_t copy_out_bound(const char *stage, uint64_t max_bytes,
			       int *by_space)
{
	struct statvfs vfs;
	uint64_t room;

	*by_space = 0;
	if (statvfs(stage, &vfs) < 0)
		return max_bytes;
	room = (uint64_t)vfs.f_bavail * vfs.f_frsize / 2;
	if (room < max_bytes) {
		*by_space = 1;
		return room;
	}
	return max_bytes;
}

static int copy_out(struct session *s, const char *rel, const char *dest,
		    int into, uint64_t max_bytes)
{
	struct strbuf target = STRBUF_INIT, stage = STRBUF_INIT,
		      err = STRBUF_INIT, from = STRBUF_INIT;
	const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	struct tar_stats st;
	struct stat sb;
	char *real = NULL, *tmp;
	int fd = -1, ret = -1, rc, by_space;
	uint64_t bound;

	if (!*base)
		base = "app";
	strbuf_addstr(&target, dest);
	if (into || (!stat(dest, &sb) && S_ISDIR(sb.st_mode))) {
		if (into && mkdir_p(dest, 0755) < 0) {
			error_errno("cannot create '%s'", dest);
			goto out;
		}
		strbuf_addf(&target, "/%s", base);
	}
	/* the staging directory sits beside the target: rename() works */
	tmp = xstrdup(target.buf);
	strbuf_addf(&stage, "%s/.gosbx-cp-XXXXXX", dirname(tmp));
	free(tmp);
	if (!mkdtemp(stage.buf)) {
		error_errno("cannot create a directory in '%s'", stage.buf);
		goto out;
	}
	real = realpath(stage.buf, NULL);
	fd = real ? open(real, O_TMPFILE | O_RDWR, 0600) : -1;
	if (fd < 0) {
		error_errno("cannot create a temporary file in '%s'",
			    stage.buf);
		goto out_stage;
	}
	bound = copy_out_bound(real, max_bytes, &by_space);
	rc = session_fetch_archive(s, rel, fd, bound, &got_sigint);
	if (rc == 1) {
		error("cancelled");
		goto out_stage;
	}
	if (rc == SESSION_FETCH_TOO_LARGE && by_space)
		error("'%s' has room for %" PRIu64 " MiB of archive "
		      "(half of what is free there): not enough for "
		      "'/app/%s'; nothing was written",
		      stage.buf, bound >> 20, rel);
	else if (rc == SESSION_FETCH_TOO_LARGE)
		error("nothing was written; --max-size=<size> allows a "
		      "larger copy");
	if (rc)
		goto out_stage;
	if (tar_extract_safe(fd, real, NULL, 0, &st, &err) < 0) {
		error("the archive of '/app/%s' from the sandbox: %s", rel,
		      err.buf);
		goto out_stage;
	}
	strbuf_addf(&from, "%s%s%s", real, *rel ? "/" : "", rel);
	if (!*rel) {
		/* all of /app: its entries are at the top of the stage */
		if (rename(stage.buf, target.buf) < 0) {
			error_errno("cannot create '%s'", target.buf);
			goto out_stage;
		}
		chmod(target.buf, 0755);
		ret = 0;
		goto out;
	}
	if (rename(from.buf, target.buf) < 0) {
		error_errno("cannot create '%s'", target.buf);
		goto out_stage;
	}
	ret = 0;
out_stage:
	if (remove_tree(stage.buf) < 0)
		warning("cannot remove '%s'", stage.buf);
out:
	if (fd >= 0)
		close(fd);
	free(real);
	strbuf_release(&target);
	strbuf_release(&stage);
	strbuf_release(&err);
	strbuf_release(&from);
	return ret;
}

int cmd_cp(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct session_opts o = { 0 };
	struct session s;
	struct strbuf rel = STRBUF_INIT;
	struct sigaction sa = { 0 }, old, old_term, old_hup;
	char *claim_src = NULL, *claim_dst = NULL;
	const char *rsrc, *rdst;
	int verbose = 0, into = 0, ret;
	int64_t max_size = CP_DEFAULT_MAX;
	struct option opts[] = {
		OPT_BOOL('v', "verbose", &verbose, "say what was copied"),
		OPT_SIZE(0, "max-size", &max_size,
			 "the most a copy out of a sandbox may write, e.g. "
			 "100m (default 16g; holes are free)"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, cp_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	verbose |= ctx->verbose;
	if (argc != 2) {
		error("give a source and a destination");
		usage_with_options_to(stderr, cp_usage, opts);
		return 129;
	}
	rsrc = remote_part(argv[0], &claim_src);
	rdst = remote_part(argv[1], &claim_dst);
	if (!rsrc == !rdst) {
		error(rsrc ? "both paths are in a sandbox: one must be here"
			   : "neither path names a sandbox: write one as "
			     "<claim>:<path>");
		usage_with_options_to(stderr, cp_usage, opts);
		free(claim_src);
		free(claim_dst);
		return 129;
	}
	/* the one rule for paths in a sandbox (lib/workpath.h) */
	if (workpath_sandbox("the sandbox path", rsrc ? rsrc : rdst, &rel,
			     &into) < 0) {
		ret = usage_reported(cp_usage, opts);
		goto out;
	}
	if (!rsrc) {
		struct stat st;

		if (lstat(argv[0], &st) < 0) {
			error_errno("cannot copy '%s'", argv[0]);
			ret = EXIT_OWN_FAILURE;
			goto out;
		}
	} else {
		size_t n = strlen(argv[1]);

		into = n && argv[1][n - 1] == '/';
	}
	ctx_session_opts(ctx, &o);
	o.claim = rsrc ? claim_src : claim_dst;
	o.purpose = "cp";
	ret = session_open(&s, &o);
	if (ret < 0) {
		ret = ret == SESSION_BAD_OPTS ? usage_reported(cp_usage, opts)
					      : EXIT_OWN_FAILURE;
		goto out;
	}
	/*
	 * SIGINT, SIGTERM and SIGHUP stop the transfer and leave no
	 * staging directory behind; the status then says which (128+N)
	 */
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	if (rsrc)
		ret = copy_out(&s, rel.buf, argv[1], into,
			       max_size > 0 ? (uint64_t)max_size : 0);
	else
		ret = copy_in(&s, argv[0], rel.buf, into);
	sigaction(SIGINT, &old, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	if (!ret && verbose)
		fprintf(stderr, "copied '%s' to '%s'\n", argv[0], argv[1]);
	session_disconnect(&s);
	ret = got_sigint ? 128 + got_sigint : ret ? EXIT_OWN_FAILURE : 0;
out:
	strbuf_release(&rel);
	free(claim_src);
	free(claim_dst);
	return ret;
}
