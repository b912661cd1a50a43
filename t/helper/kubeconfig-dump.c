#include "compat.h"
#include "json.h"
#include "kube/kube-credentials.h"
#include "kube/kubeconfig.h"
#include "parse-options.h"
#include "usage.h"

/*
 * Test/debug helper: load the kubeconfig as `gosbx --backend=kube`
 * would (lib/kube/kubeconfig.h) and print the resolved context, cluster and
 * user as one JSON object on stdout. Secrets (token, password, client
 * key, exec env values) are printed as "<redacted>"; certificates as
 * "<N bytes>". --auth also fetches the credentials (runs an exec
 * plugin, reads tokenFile) and reports what kind was found.
 * Exit status: 0, 1 when loading failed (message on stderr), 129 on
 * usage errors.
 */

static const char *const usage_lines[] = {
	"kubeconfig-dump [--kubeconfig=<path>] [--context=<name>] [--auth] "
	"[--exec-timeout=<duration>]",
	NULL
};

static void put_str(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

static void put_from(json_t *o, const char *k, const struct kube_origin *at)
{
	char buf[PATH_MAX + 32];

	if (!at->file)
		return;
	xsnprintf(buf, sizeof(buf), "%s:%d", at->file, at->line);
	json_object_set_new(o, k, json_string(buf));
}

static void put_bytes(json_t *o, const char *k, size_t n)
{
	char buf[64];

	if (!n)
		return;
	xsnprintf(buf, sizeof(buf), "<%zu bytes>", n);
	json_object_set_new(o, k, json_string(buf));
}

static void put_secret(json_t *o, const char *k, int present)
{
	if (present)
		json_object_set_new(o, k, json_string("<redacted>"));
}

int main(int argc, const char **argv)
{
	const char *kubeconfig = NULL, *context = NULL;
	int64_t timeout_ms = 0;
	int auth = 0, r;
	struct option opts[] = {
		OPT_STRING(0, "kubeconfig", &kubeconfig, "<path>",
			   "the kubeconfig file to use"),
		OPT_STRING(0, "context", &context, "<name>",
			   "the context to use"),
		OPT_BOOL(0, "auth", &auth, "fetch the credentials too"),
		OPT_DURATION(0, "exec-timeout", &timeout_ms,
			     "time limit of an exec plugin"),
		OPT_END(),
	};
	struct kube_load_opts lo = { 0 };
	struct kube_config kc;
	json_t *j, *c, *u, *x;
	char *s;
	size_t i;

	progname = "kubeconfig-dump";
	r = parse_options(argc, argv, opts, usage_lines, 0);
	if (r < 0)
		return parse_options_status(r);
	lo.kubeconfig = kubeconfig;
	lo.context = context;
	lo.exec_timeout_ms = timeout_ms;
	if (kube_config_load(&kc, &lo)) {
		kube_config_release(&kc);
		return 1;
	}

	j = json_object();
	json_object_set_new(j, "in-cluster", json_boolean(kc.in_cluster));
	put_str(j, "sources", kc.sources);
	put_str(j, "context", kc.context.name);
	put_from(j, "context-from", &kc.context.at);
	put_str(j, "namespace", kc.namespace);

	c = json_object();
	put_str(c, "name", kc.cluster.name);
	put_str(c, "server", kc.cluster.server);
	put_from(c, "server-from", &kc.cluster.server_at);
	put_str(c, "tls-server-name", kc.cluster.tls_server_name);
	put_str(c, "certificate-authority", kc.cluster.ca_file);
	put_bytes(c, "certificate-authority-data", kc.cluster.ca_data.len);
	put_from(c, "certificate-authority-data-from", &kc.cluster.ca_data_at);
	json_object_set_new(c, "insecure-skip-tls-verify",
			    json_boolean(kc.cluster.insecure_skip_tls_verify));
	put_str(c, "proxy-url", kc.cluster.proxy_url);
	json_object_set_new(j, "cluster", c);

	u = json_object();
	put_str(u, "name", kc.user.name);
	put_str(u, "client-certificate", kc.user.client_cert_file);
	put_bytes(u, "client-certificate-data", kc.user.client_cert_data.len);
	put_str(u, "client-key", kc.user.client_key_file);
	put_secret(u, "client-key-data", kc.user.client_key_data.len > 0);
	put_secret(u, "token", kc.user.token != NULL);
	put_from(u, "token-from", &kc.user.token_at);
	put_str(u, "tokenFile", kc.user.token_file);
	put_str(u, "username", kc.user.username);
	put_secret(u, "password", kc.user.password != NULL);
	if (kc.user.exec) {
		struct kube_exec_config *e = kc.user.exec;
		json_t *args = json_array(), *env = json_array();

		x = json_object();
		put_str(x, "command", e->command);
		for (i = 0; i < e->args.nr; i++)
			json_array_append_new(args, json_string(e->args.v[i]));
		json_object_set_new(x, "args", args);
		for (i = 0; i < e->env.nr; i++) {
			struct strbuf sb = STRBUF_INIT;
			strbuf_add(&sb, e->env.v[i], strcspn(e->env.v[i], "="));
			strbuf_addstr(&sb, "=<redacted>");
			json_array_append_new(env, json_string(sb.buf));
			strbuf_release(&sb);
		}
		json_object_set_new(x, "env", env);
		put_str(x, "apiVersion", e->api_version);
		put_from(x, "from", &e->at);
		json_object_set_new(u, "exec", x);
	}
	json_object_set_new(j, "user", u);

	r = 0;
	if (auth) {
		struct kube_auth a;

		kube_auth_init(&a);
		if (kube_config_auth(&kc, &a)) {
			r = 1;
		} else {
			x = json_object();
			put_secret(x, "bearer-token", a.bearer_token.len > 0);
			put_bytes(x, "client-certificate-pem", a.cert_pem.len);
			put_secret(x, "client-key-pem", a.key_pem.len > 0);
			put_str(x, "client-certificate", a.cert_file);
			put_bytes(x, "ca-pem", a.ca_pem.len);
			put_str(x, "ca-file", a.ca_file);
			put_str(x, "url", a.url);
			put_str(x, "connect-to", a.connect_to);
			put_str(x, "proxy", a.proxy);
			put_str(x, "no-proxy", a.no_proxy);
			json_object_set_new(
				x, "headers",
				json_integer((json_int_t)a.headers.nr));
			{
				/* the Impersonate-* headers (no secret) */
				json_t *imp = json_array();
				size_t n;

				for (n = 0; n < a.headers.nr; n++)
					if (starts_with(a.headers.v[n],
							"Impersonate-"))
						json_array_append_new(
							imp,
							json_string(
								a.headers
									.v[n]));
				json_object_set_new(x, "impersonation", imp);
			}
			json_object_set_new(j, "auth", x);
		}
		kube_auth_release(&a);
	}
	if (!r) {
		s = json_dumps(j, JSON_INDENT(2));
		puts(s);
		free(s);
	}
	json_decref(j);
	kube_config_release(&kc);
	return r;
}
