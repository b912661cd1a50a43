/*
 * gosbx open: create a kept sandbox and print its claim name
 * (Documentation/technical/design.md "One binary, many commands"). The sandbox
 * lives until `gosbx close` or until it has been idle for its TTL.
 */
#include "compat.h"
#include "builtin.h"
#include "json.h"
#include "output.h"
#include "parse-options.h"
#include "session/session.h"
#include "session/sandbox-limits.h"
#include "strbuf.h"
#include "usage.h"
#include "utf8.h"

static const char *const open_usage[] = {
	"gosbx open [--name=<name>] [--memory=<size>] [--cpus=<n>] "
	"[--pids=<n>] [--disk=<size>] [--allow-net=<hosts>] "
	"[--modules=<on|off>] [--go=<path>] [--network] [--ttl=<duration>] "
	"[-q] [-o text|json] [--json]",
	NULL,
};

/* a JSON string of s (invalid UTF-8 as U+FFFD), or null for NULL */
static json_t *str_or_null(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *v;

	if (!s)
		return json_null();
	utf8_sanitize_into(&sb, s, strlen(s));
	v = json_string(sb.buf);
	strbuf_release(&sb);
	return v;
}

/* a limit of struct session_granted: -1 unknown is null */
static json_t *limit(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

/* the hosts of --allow-net, each as given ("*.example.org:443") */
static json_t *allow_net_list(const char *list)
{
	json_t *arr = json_array();

	while (list && *list) {
		size_t n = strcspn(list, ",");
		char *host = xstrndup(list, n);

		if (n)
			json_array_append_new(arr, str_or_null(host));
		free(host);
		list += n + (list[n] == ',');
	}
	return arr;
}

/*
 * The -o json object (Documentation/gosbx-open.txt "JSON OUTPUT"):
 * what the sandbox of s got, as o asked it and as the backend says.
 */
static int print_json(const struct session *s, const struct session_opts *o,
		      const char *backend, unsigned caps)
{
	struct backend_defaults d = { 0 };
	int64_t ttl = o->ttl_ms > 0 ? o->ttl_ms : 3600 * 1000;
	json_t *root = json_object();
	char *text;

	json_object_set_new(root, "claim", str_or_null(s->claim));
	json_object_set_new(root, "backend", json_string(backend));
	if (caps & BACKEND_NAMESPACES) {
		backend_defaults(o, &d);
		json_object_set_new(root, "namespace",
				    str_or_null(d.namespace));
		json_object_set_new(root, "template", str_or_null(d.template));
		backend_defaults_release(&d);
	}
	json_object_set_new(root, "ttl_s",
			    ttl % 1000 ? json_real(ttl / 1000.0)
				       : json_integer(ttl / 1000));
	json_object_set_new(root, "memory_bytes",
			    limit(s->granted.memory_bytes));
	json_object_set_new(root, "cpus",
			    s->granted.cpus < 0 ? json_null()
						: json_real(s->granted.cpus));
	json_object_set_new(root, "pids", limit(s->granted.pids));
	json_object_set_new(root, "disk_bytes", limit(s->granted.disk_bytes));
	json_object_set_new(root, "network", json_boolean(o->network));
	json_object_set_new(root, "allow_net", allow_net_list(o->allow_net));
	json_object_set_new(
		root, "modules",
		caps & BACKEND_ALLOW_NET
			? json_boolean(!o->network && !o->modules_off)
			: json_null());
	json_object_set_new(root, "go", str_or_null(o->go));
	json_object_set_new(root, "go_version",
			    str_or_null(s->granted.go_version));
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!text)
		return error("cannot encode the sandbox as JSON");
	printf("%s\n", text);
	free(text);
	return 0;
}

int cmd_open(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct session_opts o = { 0 };
	struct session s;
	struct limit_args la = LIMIT_ARGS_INIT;
	const char *name = NULL;
	int64_t ttl = -1;
	int quiet = 0, ret = 0;
	static const char *const formats[] = { "text", "json", NULL };
	struct output_opt output = OUTPUT_OPT_INIT;
	struct option opts[] = {
		OPT_STRING(0, "name", &name, "<name>",
			   "claim name (default: generated)"),
		OPT_SANDBOX_LIMITS(&la),
		OPT_DURATION(0, "ttl", &ttl,
			     "close after being idle this long (default 1h)"),
		OPT_BOOL('q', "quiet", &quiet, "print only the claim name"),
		OPT_OUTPUT(&output, "text (default: the claim name) or json"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, open_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc)
		return usage_error(open_usage, opts, "unexpected argument '%s'",
				   argv[0]);
	if (output_opt_resolve(&output, formats, open_usage, opts))
		return PARSE_OPT_USAGE_STATUS;

	ctx_session_opts(ctx, &o);
	o.name = name;
	o.keep = 1;
	if (limit_args_apply(&la, &o) < 0)
		return usage_reported(open_usage, opts);
	if (ttl >= 0) {
		if (!ttl)
			return usage_error(open_usage, opts,
					   "option '--ttl' expects a duration "
					   "above zero");
		o.ttl_ms = ttl;
	}
	if (name && ctx_check_claim_name(ctx, name) < 0)
		return usage_reported(open_usage, opts);

	ret = session_open(&s, &o);
	if (ret < 0)
		return ret == SESSION_BAD_OPTS
			       ? usage_reported(open_usage, opts)
			       : EXIT_OWN_FAILURE;
	if (output.json) {
		if (print_json(&s, &o, ctx->backend, ctx->ops->caps) < 0)
			ret = EXIT_OWN_FAILURE;
	} else {
		printf("%s\n", s.claim);
	}
	if (!quiet && !output.json)
		fprintf(stderr,
			"use it with: gosbx exec --claim=%s -- "
			"<command>\nclose it with: gosbx close %s\n",
			s.claim, s.claim);
	session_disconnect(&s);
	return ret;
}
