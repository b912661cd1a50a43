/*
 * gosbx close: delete sandboxes (or, with --disconnect, keep them and
 * only drop the connection). DESIGN.md "One binary, many commands".
 */
#include "compat.h"
#include "backend-local.h"
#include "backend-kube.h"
#include "builtin.h"
#include "parse-options.h"
#include "session.h"
#include "usage.h"

#include <sys/stat.h>

static const char *const close_usage[] = {
	"gosbx close [--disconnect] [--all] <name>...",
	NULL,
};

/* --disconnect on the local backend: nothing to drop, say it is kept */
static int local_keep(const char *name)
{
	struct strbuf dir = STRBUF_INIT;
	struct stat st;
	int ret = -1;

	if (local_claims_dir(&dir) < 0)
		goto out;
	strbuf_addf(&dir, "/%s", name);
	if (lstat(dir.buf, &st) < 0 || !S_ISDIR(st.st_mode)) {
		error("no such claim '%s'", name);
		goto out;
	}
	fprintf(stderr, "kept claim '%s'\n", name);
	ret = 0;
out:
	strbuf_release(&dir);
	return ret;
}

static int close_one(struct gosbx_ctx *ctx, const char *name, int disconnect)
{
	struct session_opts o = { 0 };
	struct session s;

	if (!strcmp(ctx->backend, "local")) {
		if (disconnect)
			return local_keep(name);
		if (local_claim_delete(name) < 0)
			return -1;
		fprintf(stderr, "closed claim '%s'\n", name);
		return 0;
	}

	ctx_session_opts(ctx, &o);
	if (!strcmp(ctx->backend, "kube") && !disconnect) {
		/* no need to reach a sandbox that may never get Ready */
		if (kube_backend_delete(&o, name) < 0)
			return -1;
		fprintf(stderr, "closed claim '%s'\n", name);
		return 0;
	}
	o.claim = name;
	o.keep = disconnect;
	o.purpose = "close";
	if (session_open(&s, &o) < 0)
		return -1;
	if (disconnect) {
		session_disconnect(&s);
		fprintf(stderr, "kept claim '%s'\n", name);
		return 0;
	}
	if (session_close(&s) < 0)
		return -1;
	fprintf(stderr, "closed claim '%s'\n", name);
	return 0;
}

static void say_closed(const char *name, void *data)
{
	(void)data;
	fprintf(stderr, "closed claim '%s'\n", name);
}

static int close_all_local(void)
{
	struct local_claim_info *list;
	size_t nr;
	int ret = 0;

	if (local_claims_list(&list, &nr, 0) < 0)
		return EXIT_OWN_FAILURE;
	for (size_t i = 0; i < nr; i++) {
		if (local_claim_delete(list[i].name) < 0)
			ret = EXIT_OWN_FAILURE;
		else
			fprintf(stderr, "closed claim '%s'\n", list[i].name);
	}
	local_claims_free(list, nr);
	return ret;
}

int cmd_close(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	int disconnect = 0, all = 0, ret = 0;
	struct option opts[] = {
		OPT_BOOL(0, "disconnect", &disconnect,
			 "keep the sandbox, only drop the connection"),
		OPT_BOOL(0, "all", &all,
			 "close every claim (kube: those gosbx made in the "
			 "namespace)"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, close_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (all && argc)
		return usage_error(close_usage, opts,
				   "--all takes no claim names");
	if (all && disconnect)
		return usage_error(close_usage, opts,
				   "--all and --disconnect cannot be used "
				   "together");
	if (!all && !argc)
		return usage_error(close_usage, opts,
				   "which claim? name at least one, or use "
				   "--all");
	if (all && strcmp(ctx->backend, "kube") &&
	    strcmp(ctx->backend, "local"))
		return usage_error(close_usage, opts,
				   "--all needs the local or the kube backend "
				   "(a url backend has one sandbox: close it "
				   "by name)");
	/* every name is checked before any claim is closed */
	for (int i = 0; i < argc; i++)
		if (strcmp(ctx->backend, "url") &&
		    session_check_claim_name(argv[i]) < 0)
			return usage_reported(close_usage, opts);
	if (all) {
		if (!strcmp(ctx->backend, "kube")) {
			struct session_opts o = { 0 };

			ctx_session_opts(ctx, &o);
			return kube_backend_delete_all(&o, say_closed, NULL) < 0
				       ? EXIT_OWN_FAILURE
				       : 0;
		}
		return close_all_local();
	}
	for (int i = 0; i < argc; i++)
		if (close_one(ctx, argv[i], disconnect) < 0)
			ret = EXIT_OWN_FAILURE;
	return ret;
}
