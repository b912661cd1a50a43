/*
 * gosbx doctor: diagnose the chosen backend and say what to fix
 * (Documentation/technical/design.md "One binary, many commands"). Each backend
 * contributes a list of checks (name, ok/warn/fail, what was found, how to fix
 * it); one printer shows any list as text or JSON. The checks are the backend's
 * doctor op (struct backend_ops.doctor, lib/session/doctor.h).
 */
#include "compat.h"
#include "builtin.h"
#include "session/doctor.h"
#include "json.h"
#include "output.h"
#include "parse-options.h"
#include "session/session.h"
#include "strbuf.h"
#include "usage.h"

static const char *const doctor_usage[] = {
	"gosbx doctor [--probe] [-o text|json] [--json]",
	"gosbx doctor --backend=kube [<kube-options>] [--probe] [-o text|json] "
	"[--json]",
	NULL,
};

static void count(const struct check_list *cl, size_t n[3])
{
	n[0] = n[1] = n[2] = 0;
	for (size_t i = 0; i < cl->nr; i++)
		n[cl->v[i].status]++;
}

/*
 * ok    bwrap: bubblewrap 0.8.0
 * warn  cpu limit: cannot be applied: ...
 *       fix: ...
 */
static void print_text(const char *backend, const struct check_list *cl)
{
	size_t n[3];

	for (size_t i = 0; i < cl->nr; i++) {
		const struct doctor_check *c = &cl->v[i];

		printf("%-6s%s: %s\n", doctor_status_name(c->status), c->name,
		       c->message);
		if (c->fix && *c->fix)
			printf("      fix: %s\n", c->fix);
	}
	count(cl, n);
	printf("%s backend: %zu ok, %zu warning%s, %zu failed\n", backend, n[0],
	       n[1], n[1] == 1 ? "" : "s", n[2]);
}

static int print_json(const char *backend, const struct check_list *cl)
{
	json_t *root = json_object(), *arr = json_array(), *sum;
	size_t n[3];
	char *text;

	for (size_t i = 0; i < cl->nr; i++) {
		const struct doctor_check *c = &cl->v[i];
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(c->name));
		json_object_set_new(o, "status",
				    json_string(doctor_status_name(c->status)));
		json_object_set_new(o, "message", json_string(c->message));
		json_object_set_new(o, "fix",
				    c->fix ? json_string(c->fix) : json_null());
		json_array_append_new(arr, o);
	}
	count(cl, n);
	sum = json_pack("{s:I, s:I, s:I}", "ok", (json_int_t)n[0], "warn",
			(json_int_t)n[1], "fail", (json_int_t)n[2]);
	json_object_set_new(root, "backend", json_string(backend));
	json_object_set_new(root, "ok", json_boolean(!n[2]));
	json_object_set_new(root, "summary", sum);
	json_object_set_new(root, "checks", arr);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!text)
		return error("cannot encode the checks as JSON");
	printf("%s\n", text);
	free(text);
	return 0;
}

int cmd_doctor(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct doctor_opts dopts = { 0 };
	struct session_opts so = { 0 };
	const char *backend = NULL;
	struct check_list cl = { 0 };
	static const char *const formats[] = { "text", "json", NULL };
	struct output_opt output = OUTPUT_OPT_INIT;
	size_t n[3];
	int ret;
	struct option opts[] = {
		OPT_BOOL(0, "probe", &dopts.probe,
			 "also open a sandbox, run 'true' and close it"),
		OPT_OUTPUT(&output, "text (default) or json"),
		OPT_STRING(0, "backend", &backend, "<name>",
			   "the backend to check (instead of gosbx's "
			   "--backend)"),
		OPT_GROUP("kube backend"),
		OPT_STRING(0, "kubeconfig", &dopts.kubeconfig, "<file>",
			   "only this kubeconfig (default: KUBECONFIG, "
			   "~/.kube/config)"),
		OPT_STRING(0, "context", &dopts.context, "<name>",
			   "kubeconfig context (default: current)"),
		OPT_STRING_ENV('n', "namespace", &dopts.namespace, "<ns>",
			       "sandbox namespace (default: the context's)",
			       "GOSBX_NAMESPACE"),
		OPT_STRING(0, "template", &dopts.template_name, "<name>",
			   "SandboxTemplate (default: " BACKEND_KUBE_TEMPLATE
			   ")"),
		OPT_DURATION_ENV(0, "probe-timeout", &dopts.probe_timeout_ms,
				 "how long the probe claim may take to be "
				 "Ready (default: 3m)",
				 "GOSBX_KUBE_PROBE_TIMEOUT"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, doctor_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc)
		return usage_error(doctor_usage, opts,
				   "unexpected argument '%s'", argv[0]);
	if (output_opt_resolve(&output, formats, doctor_usage, opts))
		return PARSE_OPT_USAGE_STATUS;
	if (backend && ctx_set_backend(ctx, backend) < 0)
		return usage_error(doctor_usage, opts,
				   "unknown backend '%s' (expected %s)",
				   backend, backend_names());
	if (ctx_check_backend_options(ctx) < 0)
		return EXIT_USAGE;
	/* the global kube options, unless the command's own were given */
	if (!dopts.kubeconfig)
		dopts.kubeconfig = ctx->session.kubeconfig;
	if (!dopts.context)
		dopts.context = ctx->session.context;
	if (!dopts.namespace)
		dopts.namespace = ctx->session.namespace;
	if (!dopts.template_name)
		dopts.template_name = ctx->session.template;
	if (!dopts.template_name || !*dopts.template_name)
		dopts.template_name = BACKEND_KUBE_TEMPLATE;
	if (dopts.probe_timeout_ms <= 0)
		dopts.probe_timeout_ms = 180000;
	ctx_session_opts(ctx, &so);
	dopts.session = &so;
	if (!ctx->ops->doctor) {
		error("the '%s' backend has no checks", ctx->backend);
		return EXIT_OWN_FAILURE;
	}
	ctx->ops->doctor(&cl, &dopts);
	if (output.json) {
		if (print_json(ctx->backend, &cl) < 0) {
			check_list_release(&cl);
			return EXIT_OWN_FAILURE;
		}
	} else {
		print_text(ctx->backend, &cl);
	}
	count(&cl, n);
	/* a failing check is the doctor's verdict, not its failure */
	ret = n[2] ? EXIT_NO : 0;
	check_list_release(&cl);
	return ret;
}
