/*
 * gosbx claims: list the sandboxes of the backend with their status,
 * age and the rest; `prune` removes the expired and dead ones
 * (Documentation/technical/design.md "One binary, many commands"). Listing and
 * pruning are the backend's list and prune ops (lib/session/claims.h); only the
 * options are here.
 */
#include "compat.h"
#include "builtin.h"
#include "session/claims.h"
#include "output.h"
#include "parse-options.h"
#include "session/session.h"
#include "usage.h"

static const char *const claims_usage[] = {
	"gosbx claims [-o table|json] [--json]",
	"gosbx claims prune [--dry-run]",
	"gosbx claims --backend=kube [-A] [--all] [-n <ns>] [-o table|json] "
	"[--json]",
	"gosbx claims --backend=kube prune [-A] [-n <ns>] [--dry-run]",
	NULL,
};

int cmd_claims(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct claims_query q = { 0 };
	struct session_opts so = { 0 };
	static const char *const formats[] = { "table", "json", NULL };
	struct output_opt output = OUTPUT_OPT_INIT;
	const char *backend = NULL;
	const char *kubeconfig = NULL, *context = NULL, *namespace = NULL;
	int r;
	struct option opts[] = {
		OPT_OUTPUT(&output, "table (default) or json"),
		OPT_GROUP("prune"),
		OPT_BOOL(0, "dry-run", &q.dry_run,
			 "only list what would be removed"),
		OPT_GROUP("kube backend"),
		OPT_STRING(0, "backend", &backend, "<name>",
			   "the backend (instead of gosbx's --backend)"),
		OPT_BOOL('A', "all-namespaces", &q.all_namespaces,
			 "claims of every namespace"),
		OPT_BOOL(0, "all", &q.all,
			 "every claim, not only those gosbx made"),
		OPT_STRING(0, "kubeconfig", &kubeconfig, "<file>",
			   "only this kubeconfig (default: KUBECONFIG, "
			   "~/.kube/config)"),
		OPT_STRING(0, "context", &context, "<name>",
			   "kubeconfig context (default: current)"),
		OPT_STRING_ENV('n', "namespace", &namespace, "<ns>",
			       "sandbox namespace (default: the context's)",
			       "GOSBX_NAMESPACE"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, claims_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc > 1 || (argc == 1 && strcmp(argv[0], "prune")))
		return usage_error(claims_usage, opts,
				   "unexpected argument '%s'", argv[argc - 1]);
	if (output_opt_resolve(&output, formats, claims_usage, opts))
		return PARSE_OPT_USAGE_STATUS;
	if (q.dry_run && !argc)
		return usage_error(claims_usage, opts,
				   "--dry-run goes with 'prune'");
	if (backend && ctx_set_backend(ctx, backend) < 0)
		return usage_error(claims_usage, opts,
				   "unknown backend '%s' (expected %s)",
				   backend, backend_names());
	if (ctx_check_backend_options(ctx) < 0)
		return EXIT_USAGE;
	ctx_session_opts(ctx, &so);
	/* the global backend options, unless the command's own were given */
	if (kubeconfig)
		so.kubeconfig = kubeconfig;
	if (context)
		so.context = context;
	if (namespace)
		so.namespace = namespace;
	q.session = &so;
	q.json = output.json;
	if (!(ctx->ops->caps & BACKEND_NAMESPACES) &&
	    (q.all_namespaces || q.all || kubeconfig))
		return usage_error(claims_usage, opts,
				   "-A, --all and --kubeconfig are not options "
				   "of the '%s' backend",
				   ctx->backend);
	if (q.all && argc)
		return usage_error(claims_usage, opts,
				   "--all goes with listing; prune only "
				   "removes claims gosbx made");
	if (!(argc ? ctx->ops->prune : ctx->ops->list))
		return usage_error(claims_usage, opts,
				   "the '%s' backend has no claims to %s",
				   ctx->backend, argc ? "prune" : "list");
	r = argc ? ctx->ops->prune(&q) : ctx->ops->list(&q);
	return r < 0 ? EXIT_OWN_FAILURE : 0;
}
