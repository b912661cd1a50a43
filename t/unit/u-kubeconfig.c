#include "compat.h"
#include "dir.h"
#include "http.h"
#include "kube/kube-credentials.h"
#include "kube/kubeconfig.h"
#include "usage.h"

#include <setjmp.h>
#include <sys/stat.h>
#include <cmocka.h>

/*
 * lib/kube/kubeconfig.h: kubeconfig files written into a temporary
 * directory, exec plugins as small shell scripts that count their runs
 * in a file.
 */

static char tmp[] = "/tmp/u-kubeconfig-XXXXXX";
/* exec plugin time limit for load(); 0: the default (30 s) */
static int64_t exec_timeout_ms;
static struct strbuf errs = STRBUF_INIT;

static void catch_errors(const char *prefix, const char *msg, void *data)
{
	strbuf_addf(&errs, "%s%s\n", prefix, msg);
}

static char *path_of(const char *name)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "%s/%s", tmp, name);
	return strbuf_detach(&sb, NULL);
}

static char *write_file(const char *name, const char *text, mode_t mode)
{
	char *p = path_of(name);
	FILE *f;

	assert_int_equal(mkdir_leading(p, 0755), 0);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(p, mode), 0);
	return p;
}

static int load(struct kube_config *kc, const char *file, const char *ctx)
{
	struct kube_load_opts o = { 0 };
	char *p = file ? path_of(file) : NULL;
	int r;

	o.kubeconfig = p;
	o.context = ctx;
	o.exec_timeout_ms = exec_timeout_ms;
	strbuf_reset(&errs);
	r = kube_config_load(kc, &o);
	free(p);
	return r;
}

static int count_runs(void)
{
	struct strbuf sb = STRBUF_INIT;
	char *p = path_of("runs");
	int n;

	if (strbuf_read_file(&sb, p, 0) < 0)
		n = 0;
	else
		n = (int)sb.len; /* one byte per run */
	strbuf_release(&sb);
	free(p);
	return n;
}

static int setup(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	if (!mkdtemp(tmp))
		return -1;
	strbuf_addf(&sb, "%s/cache", tmp);
	setenv("XDG_CACHE_HOME", sb.buf, 1);
	strbuf_release(&sb);
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	set_error_routine(catch_errors, NULL);
	return 0;
}

static int teardown(void **state)
{
	set_error_routine(NULL, NULL);
	strbuf_release(&errs);
	return remove_tree(tmp);
}

#define KIND_CONFIG                                                            \
	"apiVersion: v1\n"                                                     \
	"kind: Config\n"                                                       \
	"clusters:\n"                                                          \
	"- name: kind-kind\n"                                                  \
	"  cluster:\n"                                                         \
	"    server: https://127.0.0.1:40000\n"                                \
	"    certificate-authority-data: Q0EgUEVN\n"                           \
	"users:\n"                                                             \
	"- name: kind-kind\n"                                                  \
	"  user:\n"                                                            \
	"    client-certificate-data: Q0VSVA==\n"                              \
	"    client-key-data: S0VZ\n"                                          \
	"contexts:\n"                                                          \
	"- name: kind-kind\n"                                                  \
	"  context:\n"                                                         \
	"    cluster: kind-kind\n"                                             \
	"    user: kind-kind\n"                                                \
	"    namespace: agents\n"                                              \
	"current-context: kind-kind\n"

static void test_kind_cert_data(void **state)
{
	struct kube_config kc;
	struct kube_auth a;
	char *p = write_file("kind.yaml", KIND_CONFIG, 0600);

	assert_int_equal(load(&kc, "kind.yaml", NULL), 0);
	assert_string_equal(kc.cluster.server, "https://127.0.0.1:40000");
	assert_string_equal(kc.cluster.ca_data.buf, "CA PEM");
	assert_string_equal(kc.user.client_cert_data.buf, "CERT");
	assert_string_equal(kc.user.client_key_data.buf, "KEY");
	assert_string_equal(kc.namespace, "agents");
	assert_string_equal(kc.cluster.server_at.file, p);
	assert_int_equal(kc.cluster.server_at.line, 6);
	assert_int_equal(kc.user.client_key_data_at.line, 12);
	kube_auth_init(&a);
	assert_int_equal(kube_config_auth(&kc, &a), 0);
	assert_string_equal(a.ca_pem.buf, "CA PEM");
	assert_string_equal(a.cert_pem.buf, "CERT");
	assert_string_equal(a.key_pem.buf, "KEY");
	assert_int_equal(a.bearer_token.len, 0);
	assert_int_equal(a.insecure_skip_verify, 0);
	kube_auth_release(&a);
	kube_config_release(&kc);
	free(p);
}

static void test_token_and_insecure(void **state)
{
	struct kube_config kc;
	struct kube_auth a;
	char *p = write_file("tok.yaml",
			     "clusters:\n"
			     "- name: c\n"
			     "  cluster:\n"
			     "    server: https://h:6443\n"
			     "    insecure-skip-tls-verify: true\n"
			     "users:\n"
			     "- name: u\n"
			     "  user:\n"
			     "    token: s3cret\n"
			     "contexts:\n"
			     "- {name: x, context: {cluster: c, user: u}}\n"
			     "current-context: x\n",
			     0600);

	assert_int_equal(load(&kc, "tok.yaml", NULL), 0);
	assert_int_equal(kc.cluster.insecure_skip_tls_verify, 1);
	assert_string_equal(kc.namespace, "default");
	kube_auth_init(&a);
	assert_int_equal(kube_config_auth(&kc, &a), 0);
	assert_string_equal(a.bearer_token.buf, "s3cret");
	assert_int_equal(a.insecure_skip_verify, 1);
	kube_auth_release(&a);
	kube_config_release(&kc);
	free(p);
}

static void test_token_file_relative(void **state)
{
	struct kube_config kc;
	struct kube_auth a;
	char *tok = write_file("sub/secrets/token", "first\n", 0600);
	char *p = write_file("sub/config",
			     "clusters:\n"
			     "- name: c\n"
			     "  cluster: {server: 'https://h:6443'}\n"
			     "users:\n"
			     "- name: u\n"
			     "  user: {tokenFile: secrets/token}\n"
			     "contexts:\n"
			     "- {name: x, context: {cluster: c, user: u}}\n"
			     "current-context: x\n",
			     0600);

	assert_int_equal(load(&kc, "sub/config", NULL), 0);
	assert_string_equal(kc.user.token_file, tok);
	kube_auth_init(&a);
	assert_int_equal(kube_config_auth(&kc, &a), 0);
	assert_string_equal(a.bearer_token.buf, "first");
	/* a rotated token is picked up */
	free(write_file("sub/secrets/token.new", "second-token\n", 0600));
	{
		char *n = path_of("sub/secrets/token.new");
		assert_int_equal(rename(n, tok), 0);
		free(n);
	}
	assert_int_equal(kube_config_auth(&kc, &a), 0);
	assert_string_equal(a.bearer_token.buf, "second-token");
	kube_auth_release(&a);
	kube_config_release(&kc);
	free(p);
	free(tok);
}

static void test_merge_first_wins(void **state)
{
	struct kube_config kc;
	struct strbuf env = STRBUF_INIT;
	char *a = write_file("m/a",
			     "clusters:\n"
			     "- name: shared\n"
			     "  cluster: {server: 'https://from-a'}\n"
			     "contexts:\n"
			     "- {name: one, context: {cluster: shared}}\n",
			     0600);
	char *b = write_file("m/b",
			     "clusters:\n"
			     "- name: shared\n"
			     "  cluster: {server: 'https://from-b'}\n"
			     "- name: only-b\n"
			     "  cluster: {server: 'https://only-b'}\n"
			     "contexts:\n"
			     "- {name: one, context: {cluster: only-b}}\n"
			     "- {name: two, context: {cluster: only-b}}\n"
			     "current-context: one\n",
			     0600);

	strbuf_addf(&env, "%s::%s/m/missing:%s", a, tmp, b);
	setenv("KUBECONFIG", env.buf, 1);
	/* current-context from b (a has none); context 'one' from a */
	assert_int_equal(load(&kc, NULL, NULL), 0);
	assert_string_equal(kc.context.name, "one");
	assert_string_equal(kc.cluster.server, "https://from-a");
	assert_string_equal(kc.cluster.at.file, a);
	assert_string_equal(kc.context.at.file, a);
	kube_config_release(&kc);

	/* --context picks b's context */
	assert_int_equal(load(&kc, NULL, "two"), 0);
	assert_string_equal(kc.cluster.server, "https://only-b");
	kube_config_release(&kc);

	/* a missing context is an error */
	assert_int_equal(load(&kc, NULL, "three"), -1);
	assert_non_null(strstr(errs.buf, "context 'three' not found"));
	kube_config_release(&kc);

	unsetenv("KUBECONFIG");
	strbuf_release(&env);
	free(a);
	free(b);
}

/* auth of a one-cluster kubeconfig with server and extra cluster lines */
static void transport(const char *server, const char *extra,
		      struct kube_auth *a)
{
	struct kube_config kc;
	struct strbuf y = STRBUF_INIT;
	char *p;

	strbuf_addf(&y,
		    "clusters:\n"
		    "- name: c\n"
		    "  cluster:\n"
		    "    server: '%s'\n"
		    "%s"
		    "users:\n"
		    "- {name: u, user: {token: t}}\n"
		    "contexts:\n"
		    "- {name: x, context: {cluster: c, user: u}}\n"
		    "current-context: x\n",
		    server, extra);
	p = write_file("transport", y.buf, 0600);
	assert_int_equal(load(&kc, "transport", NULL), 0);
	kube_auth_init(a);
	assert_int_equal(kube_config_auth(&kc, a), 0);
	kube_config_release(&kc);
	strbuf_release(&y);
	free(p);
}

/* client-go's choices: rest.Config ServerName, Proxy, ProxyFromEnvironment */
static void test_transport(void **state)
{
	struct http_client_opts o = { 0 };
	struct kube_auth a;

	unsetenv("NO_PROXY");
	unsetenv("no_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("http_proxy");
	unsetenv("REQUEST_METHOD");
	setenv("HTTPS_PROXY", "proxy.corp:3128", 1);

	transport("https://[::1]:6443/base", "    tls-server-name: api.x\n",
		  &a);
	assert_string_equal(kube_auth_http_opts(&a, &o),
			    "https://api.x:6443/base");
	assert_string_equal(o.connect_to, "api.x:6443:[::1]:6443");
	assert_string_equal(o.proxy, ""); /* loopback: never proxied */
	assert_null(o.no_proxy);
	kube_auth_release(&a);

	transport("https://10.0.0.1", "    tls-server-name: api.x\n", &a);
	assert_string_equal(a.url, "https://api.x:443");
	assert_string_equal(a.connect_to, "api.x:443:10.0.0.1:443");
	assert_string_equal(a.proxy, "http://proxy.corp:3128");
	kube_auth_release(&a);

	setenv("NO_PROXY", "10.0.0.0/8", 1);
	transport("https://10.0.0.1", "    proxy-url: socks5://s:1080\n", &a);
	assert_null(a.url);
	assert_null(a.connect_to);
	assert_string_equal(a.proxy, "socks5h://s:1080");
	assert_string_equal(a.no_proxy, ""); /* NO_PROXY ignored */
	kube_auth_release(&a);

	/* http: HTTP_PROXY, not under CGI; tls-server-name unused */
	setenv("HTTP_PROXY", "http://hp:8080", 1);
	transport("http://h:8080", "    tls-server-name: api.x\n", &a);
	assert_null(a.url);
	assert_string_equal(a.proxy, "http://hp:8080");
	assert_string_equal(a.no_proxy, "10.0.0.0/8");
	kube_auth_release(&a);
	setenv("REQUEST_METHOD", "GET", 1);
	transport("http://h:8080", "", &a);
	assert_string_equal(a.proxy, "");
	kube_auth_release(&a);
	unsetenv("REQUEST_METHOD");
	unsetenv("HTTP_PROXY");
	unsetenv("HTTPS_PROXY");
	unsetenv("NO_PROXY");
	(void)state;
}

static void test_errors(void **state)
{
	struct kube_config kc;
	struct strbuf want = STRBUF_INIT;
	char *p;

	p = write_file("typo",
		       "apiVersion: v1\n"
		       "kind: Config\n"
		       "clsuters: []\n",
		       0600);
	/* ignored with a warning, as kubectl does; then nothing to use */
	assert_int_equal(load(&kc, "typo", NULL), -1);
	strbuf_addf(&want,
		    "warning: kubeconfig '%s': line 3: unknown field "
		    "'clsuters' ignored\n",
		    p);
	assert_true(starts_with(errs.buf, want.buf));
	kube_config_release(&kc);
	free(p);

	p = write_file("typo2",
		       "clusters:\n"
		       "- name: c\n"
		       "  cluster:\n"
		       "    server: https://h\n"
		       "    certificate-authority-dat: eA==\n",
		       0600);
	assert_int_equal(load(&kc, "typo2", NULL), -1);
	assert_non_null(strstr(errs.buf, "line 5: unknown field "
					 "'certificate-authority-dat' in "
					 "cluster 'c'"));
	kube_config_release(&kc);
	free(p);

	p = write_file("b64",
		       "users:\n"
		       "- name: u\n"
		       "  user:\n"
		       "    client-key-data: 'not base64!'\n",
		       0600);
	assert_int_equal(load(&kc, "b64", NULL), -1);
	strbuf_reset(&want);
	strbuf_addf(&want,
		    "error: cannot read kubeconfig '%s': line 4: bad base64 "
		    "in 'client-key-data' in user 'u'\n",
		    p);
	assert_string_equal(errs.buf, want.buf);
	kube_config_release(&kc);
	free(p);

	p = write_file("nocur",
		       "clusters:\n"
		       "- {name: c, cluster: {server: 'https://h'}}\n",
		       0600);
	assert_int_equal(load(&kc, "nocur", NULL), -1);
	assert_non_null(strstr(errs.buf, "no current context"));
	kube_config_release(&kc);
	free(p);

	p = write_file("nocluster",
		       "contexts:\n"
		       "- {name: x, context: {cluster: gone}}\n"
		       "current-context: x\n",
		       0600);
	assert_int_equal(load(&kc, "nocluster", NULL), -1);
	assert_non_null(strstr(errs.buf, "line 2: context 'x' names "
					 "cluster 'gone', which is not "
					 "defined"));
	kube_config_release(&kc);
	free(p);

	p = write_file("noca",
		       "clusters:\n"
		       "- name: c\n"
		       "  cluster:\n"
		       "    server: https://h\n"
		       "    certificate-authority: ca.crt\n"
		       "contexts:\n"
		       "- {name: x, context: {cluster: c}}\n"
		       "current-context: x\n",
		       0600);
	assert_int_equal(load(&kc, "noca", NULL), -1);
	assert_non_null(strstr(errs.buf, "line 5: cannot read "
					 "certificate-authority"));
	assert_non_null(strstr(errs.buf, "/ca.crt': No such file"));
	kube_config_release(&kc);
	free(p);

	p = write_file("dup",
		       "clusters:\n"
		       "- {name: c, cluster: {server: 'https://h'}}\n"
		       "- {name: c, cluster: {server: 'https://h2'}}\n",
		       0600);
	assert_int_equal(load(&kc, "dup", NULL), -1);
	assert_non_null(strstr(errs.buf, "line 3: duplicate cluster name"));
	kube_config_release(&kc);
	free(p);

	assert_int_equal(load(&kc, "does-not-exist", NULL), -1);
	assert_non_null(strstr(errs.buf, "No such file"));
	kube_config_release(&kc);

	p = write_file("gcp",
		       "clusters:\n"
		       "- {name: c, cluster: {server: 'https://h'}}\n"
		       "users:\n"
		       "- name: u\n"
		       "  user:\n"
		       "    auth-provider:\n"
		       "      name: gcp\n"
		       "      config: {cmd-path: /x/gcloud}\n"
		       "contexts:\n"
		       "- {name: x, context: {cluster: c, user: u}}\n"
		       "current-context: x\n",
		       0600);
	assert_int_equal(load(&kc, "gcp", NULL), -1);
	assert_non_null(strstr(errs.buf, "line 6: user 'u' uses "
					 "auth-provider 'gcp'"));
	assert_non_null(strstr(errs.buf, "gke-gcloud-auth-plugin"));
	kube_config_release(&kc);
	free(p);
	strbuf_release(&want);
}

static void test_in_cluster(void **state)
{
	struct kube_config kc;
	struct kube_auth a;
	char *dir = path_of("sa");
	char *home = path_of("home-empty");

	free(write_file("sa/token", "sa-token\n", 0600));
	free(write_file("sa/ca.crt", "CA\n", 0644));
	free(write_file("sa/namespace", "team-a\n", 0644));
	setenv("GOSBX_SERVICEACCOUNT_DIR", dir, 1);
	setenv("HOME", home, 1); /* no ~/.kube/config there */
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);

	assert_int_equal(load(&kc, NULL, NULL), 0);
	assert_int_equal(kc.in_cluster, 1);
	assert_string_equal(kc.cluster.server, "https://10.96.0.1:443");
	assert_string_equal(kc.namespace, "team-a");
	assert_non_null(strstr(kc.cluster.ca_file, "/sa/ca.crt"));
	kube_auth_init(&a);
	assert_int_equal(kube_config_auth(&kc, &a), 0);
	assert_string_equal(a.bearer_token.buf, "sa-token");
	kube_auth_release(&a);
	kube_config_release(&kc);

	/* without the service env: no configuration at all */
	unsetenv("KUBERNETES_SERVICE_HOST");
	assert_int_equal(load(&kc, NULL, NULL), -1);
	assert_non_null(strstr(errs.buf, "no kubeconfig"));
	kube_config_release(&kc);

	unsetenv("KUBERNETES_SERVICE_PORT");
	unsetenv("GOSBX_SERVICEACCOUNT_DIR");
	free(dir);
	free(home);
}

/*
 * A plugin answering apiVersion av with a token expiring at exp; it
 * appends one byte to "runs" and copies KUBERNETES_EXEC_INFO to
 * "info".
 */
static void write_plugin(const char *av, const char *exp)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb,
		    "#!/bin/sh\n"
		    "printf x >>'%s/runs'\n"
		    "printf '%%s' \"$KUBERNETES_EXEC_INFO\" >'%s/info'\n"
		    "echo \"$1 $MYVAR\" >'%s/argv'\n"
		    "cat <<EOF\n"
		    "{\"kind\":\"ExecCredential\",\"apiVersion\":\"%s\","
		    "\"status\":{\"token\":\"tok-$1\","
		    "\"expirationTimestamp\":\"%s\"}}\n"
		    "EOF\n",
		    tmp, tmp, tmp, av, exp);
	free(write_file("bin/plugin", sb.buf, 0755));
	strbuf_release(&sb);
}

static void write_exec_config(const char *av, const char *extra)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb,
		    "clusters:\n"
		    "- name: c\n"
		    "  cluster: {server: 'https://gke:443'}\n"
		    "users:\n"
		    "- name: u\n"
		    "  user:\n"
		    "    exec:\n"
		    "      apiVersion: %s\n"
		    "      command: ../bin/plugin\n"
		    "      args: [arg1]\n"
		    "      env: [{name: MYVAR, value: myval}]\n"
		    "      installHint: install the plugin, please\n"
		    "      provideClusterInfo: true\n"
		    "      interactiveMode: IfAvailable\n"
		    "%s"
		    "contexts:\n"
		    "- {name: x, context: {cluster: c, user: u}}\n"
		    "current-context: x\n",
		    av, extra);
	free(write_file("e/config", sb.buf, 0600));
	strbuf_release(&sb);
}

static void reset_exec_state(void)
{
	char *runs = path_of("runs"), *cache = path_of("cache");

	unlink(runs);
	remove_tree(cache);
	free(runs);
	free(cache);
}

static void test_exec_plugin(void **state)
{
	const char *av[] = { "client.authentication.k8s.io/v1",
			     "client.authentication.k8s.io/v1beta1" };
	struct kube_config kc;
	struct kube_credential cred;
	struct kube_auth a;
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(av); i++) {
		reset_exec_state();
		write_plugin(av[i], "2099-01-01T00:00:00Z");
		write_exec_config(av[i], "");
		assert_int_equal(load(&kc, "e/config", NULL), 0);
		kube_credential_init(&cred);
		assert_int_equal(kube_exec_credential(&kc, &cred), 0);
		assert_string_equal(cred.token.buf, "tok-arg1");
		assert_int_equal(cred.cached, 0);
		assert_int_equal(count_runs(), 1);
		/* the plugin saw its args, env and the exec info */
		strbuf_reset(&sb);
		{
			char *p = path_of("argv");
			assert_true(strbuf_read_file(&sb, p, 0) >= 0);
			free(p);
		}
		assert_string_equal(sb.buf, "arg1 myval\n");
		strbuf_reset(&sb);
		{
			char *p = path_of("info");
			assert_true(strbuf_read_file(&sb, p, 0) >= 0);
			free(p);
		}
		assert_non_null(strstr(sb.buf, "\"kind\":\"ExecCredential\""));
		assert_non_null(strstr(sb.buf, av[i]));
		assert_non_null(strstr(sb.buf, "\"interactive\":false"));
		assert_non_null(
			strstr(sb.buf, "\"server\":\"https://gke:443\""));

		/* the second call uses the memory cache */
		assert_int_equal(kube_exec_credential(&kc, &cred), 0);
		assert_int_equal(cred.cached, 1);
		assert_int_equal(count_runs(), 1);
		kube_config_release(&kc);

		/* a new process (new kc) uses the disk cache */
		assert_int_equal(load(&kc, "e/config", NULL), 0);
		kube_auth_init(&a);
		assert_int_equal(kube_config_auth(&kc, &a), 0);
		assert_string_equal(a.bearer_token.buf, "tok-arg1");
		assert_int_equal(count_runs(), 1);
		kube_auth_release(&a);

		/* forgetting it (a 401) runs the plugin again */
		kube_config_forget_credential(&kc);
		assert_int_equal(kube_exec_credential(&kc, &cred), 0);
		assert_int_equal(cred.cached, 0);
		assert_int_equal(count_runs(), 2);
		kube_credential_release(&cred);
		kube_config_release(&kc);
	}
	strbuf_release(&sb);
}

static void test_exec_cache_file_mode(void **state)
{
	struct kube_config kc;
	struct kube_credential cred;
	struct strbuf sb = STRBUF_INIT;
	char *dir = path_of("cache/gosbx/kube-exec");
	struct stat st;
	FILE *ls;
	char line[PATH_MAX];

	reset_exec_state();
	write_plugin("client.authentication.k8s.io/v1",
		     "2099-01-01T00:00:00+02:00");
	write_exec_config("client.authentication.k8s.io/v1", "");
	assert_int_equal(load(&kc, "e/config", NULL), 0);
	kube_credential_init(&cred);
	assert_int_equal(kube_exec_credential(&kc, &cred), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	strbuf_addf(&sb, "ls '%s'", dir);
	ls = popen(sb.buf, "r");
	assert_non_null(ls);
	assert_non_null(fgets(line, sizeof(line), ls));
	pclose(ls);
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s/%s", dir, line);
	strbuf_rtrim(&sb);
	assert_true(ends_with(sb.buf, ".json"));
	assert_int_equal(stat(sb.buf, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	kube_credential_release(&cred);
	kube_config_release(&kc);
	strbuf_release(&sb);
	free(dir);
}

static void test_exec_expired(void **state)
{
	struct kube_config kc;
	struct kube_credential cred;

	reset_exec_state();
	write_plugin("client.authentication.k8s.io/v1beta1",
		     "2001-01-01T00:00:00Z");
	write_exec_config("client.authentication.k8s.io/v1beta1", "");
	assert_int_equal(load(&kc, "e/config", NULL), 0);
	kube_credential_init(&cred);
	assert_int_equal(kube_exec_credential(&kc, &cred), 0);
	assert_int_equal(kube_exec_credential(&kc, &cred), 0);
	assert_int_equal(cred.cached, 0);
	assert_int_equal(count_runs(), 2);
	kube_credential_release(&cred);
	kube_config_release(&kc);
}

static void test_exec_failures(void **state)
{
	struct kube_config kc;
	struct kube_credential cred;

	kube_credential_init(&cred);
	reset_exec_state();
	write_exec_config("client.authentication.k8s.io/v1", "");

	/* failing: its stderr and the install hint */
	free(write_file("bin/plugin",
			"#!/bin/sh\n"
			"echo 'some noise' >&2\n"
			"echo 'login required: run gcloud auth login' >&2\n"
			"exit 3\n",
			0755));
	assert_int_equal(load(&kc, "e/config", NULL), 0);
	strbuf_reset(&errs);
	assert_int_equal(kube_exec_credential(&kc, &cred), -1);
	assert_non_null(strstr(errs.buf, "failed (exit code 3)"));
	assert_non_null(strstr(errs.buf, "login required: run gcloud"));
	assert_non_null(strstr(errs.buf, "install the plugin, please"));
	kube_config_release(&kc);

	/* hanging: killed after the time limit */
	free(write_file("bin/plugin", "#!/bin/sh\nsleep 600\n", 0755));
	exec_timeout_ms = 1000;
	assert_int_equal(load(&kc, "e/config", NULL), 0);
	exec_timeout_ms = 0;
	strbuf_reset(&errs);
	assert_int_equal(kube_exec_credential(&kc, &cred), -1);
	assert_non_null(strstr(errs.buf, "timed out"));
	kube_config_release(&kc);

	/* the wrong apiVersion */
	write_plugin("client.authentication.k8s.io/v1beta1",
		     "2099-01-01T00:00:00Z");
	assert_int_equal(load(&kc, "e/config", NULL), 0);
	strbuf_reset(&errs);
	assert_int_equal(kube_exec_credential(&kc, &cred), -1);
	assert_non_null(strstr(errs.buf, "returned apiVersion "
					 "'client.authentication.k8s.io/"
					 "v1beta1'"));
	kube_config_release(&kc);

	/* not installed */
	{
		char *p = path_of("bin/plugin");
		unlink(p);
		free(p);
	}
	assert_int_equal(load(&kc, "e/config", NULL), 0);
	strbuf_reset(&errs);
	assert_int_equal(kube_exec_credential(&kc, &cred), -1);
	assert_non_null(strstr(errs.buf, "not found"));
	assert_non_null(strstr(errs.buf, "install the plugin, please"));
	kube_config_release(&kc);

	/* v1alpha1 is refused when loading */
	write_exec_config("client.authentication.k8s.io/v1alpha1", "");
	assert_int_equal(load(&kc, "e/config", NULL), -1);
	assert_non_null(strstr(errs.buf, "line 7: exec apiVersion "
					 "'client.authentication.k8s.io/"
					 "v1alpha1' is not supported"));
	kube_config_release(&kc);
	kube_credential_release(&cred);
}

/* a plugin may answer with a client certificate instead of a token */
static void test_exec_client_cert(void **state)
{
	struct kube_config kc;
	struct kube_auth a;

	reset_exec_state();
	free(write_file("bin/plugin",
			"#!/bin/sh\n"
			"echo '{\"kind\":\"ExecCredential\",\"apiVersion\":"
			"\"client.authentication.k8s.io/v1\",\"status\":{"
			"\"clientCertificateData\":\"CERT PEM\","
			"\"clientKeyData\":\"KEY PEM\"}}'\n",
			0755));
	write_exec_config("client.authentication.k8s.io/v1", "");
	assert_int_equal(load(&kc, "e/config", NULL), 0);
	kube_auth_init(&a);
	assert_int_equal(kube_config_auth(&kc, &a), 0);
	assert_string_equal(a.cert_pem.buf, "CERT PEM");
	assert_string_equal(a.key_pem.buf, "KEY PEM");
	assert_int_equal(a.bearer_token.len, 0);
	assert_int_equal(a.expiry, 0);
	kube_auth_release(&a);
	kube_config_release(&kc);
}

static void test_rfc3339(void **state)
{
	time_t t;

	assert_int_equal(kube_parse_rfc3339("1970-01-01T00:01:00Z", &t), 0);
	assert_int_equal(t, 60);
	assert_int_equal(kube_parse_rfc3339("1970-01-01T02:00:00.5+02:00", &t),
			 0);
	assert_int_equal(t, 0);
	assert_int_equal(kube_parse_rfc3339("1970-01-01 00:00:00Z", &t), -1);
	assert_int_equal(kube_parse_rfc3339("1970-01-01T00:00:00", &t), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind_cert_data),
		cmocka_unit_test(test_token_and_insecure),
		cmocka_unit_test(test_token_file_relative),
		cmocka_unit_test(test_merge_first_wins),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_in_cluster),
		cmocka_unit_test(test_exec_plugin),
		cmocka_unit_test(test_exec_cache_file_mode),
		cmocka_unit_test(test_exec_expired),
		cmocka_unit_test(test_exec_failures),
		cmocka_unit_test(test_exec_client_cert),
		cmocka_unit_test(test_rfc3339),
		cmocka_unit_test(test_transport),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
