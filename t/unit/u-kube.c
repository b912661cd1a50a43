#include "compat.h"
#include "crd-schema.h"
#include "dir.h"
#include "kube/kube.h"
#include "kube/kube-credentials.h"
#include "kube/kubeconfig.h"
#include "strbuf.h"
#include "usage.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>
#include <microhttpd.h>

#include <setjmp.h>
#include <cmocka.h>

/*
 * Unit tests of lib/kube/kube.c against a small libmicrohttpd fake of the
 * Kubernetes API server started in this process on 127.0.0.1 (plain
 * HTTP; TLS is covered by u-http). Each test installs a route
 * function giving canned answers; the server records every request
 * ("METHOD raw-uri") and the last request body and Content-Type.
 */

struct answer {
	unsigned code;
	struct strbuf body;
	int hang; /* after body, keep the stream open until stop */
};

typedef void (*route_fn)(const char *method, const char *uri, const char *body,
			 struct answer *a);

static struct {
	struct MHD_Daemon *d;
	int port;
	pthread_mutex_t lock;
	route_fn route;
	struct strbuf log;   /* "METHOD uri\n" per request */
	struct strbuf body;  /* last request body */
	struct strbuf ctype; /* last request Content-Type */
	struct strbuf auth;  /* last request Authorization */
	int watches;	     /* watch requests so far */
	volatile int stop;
} fk;

static char tmp[] = "/tmp/u-kube-XXXXXX";
static struct strbuf errs = STRBUF_INIT;
static struct kube_config cfg;
static struct kube_client kc;

static void catch_errors(const char *prefix, const char *msg, void *data)
{
	strbuf_addf(&errs, "%s%s\n", prefix, msg);
}

struct rq {
	struct strbuf uri, body;
	int started; /* the handler saw the headers */
};

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *con)
{
	struct rq *r = xcalloc(1, sizeof(*r));

	strbuf_init(&r->uri, 0);
	strbuf_init(&r->body, 0);
	strbuf_addstr(&r->uri, uri);
	return r;
}

static void completed(void *cls, struct MHD_Connection *con, void **req_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct rq *r = *req_cls;

	if (!r)
		return;
	strbuf_release(&r->uri);
	strbuf_release(&r->body);
	free(r);
	*req_cls = NULL;
}

struct hang {
	struct strbuf body;
	size_t off;
	int hang;
	time_t end; /* timeoutSeconds: the stream ends then */
};

static ssize_t hang_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct hang *h = cls;

	if (h->off < h->body.len) {
		size_t n = h->body.len - h->off;
		if (n > max)
			n = max;
		memcpy(buf, h->body.buf + h->off, n);
		h->off += n;
		return n;
	}
	if (!h->hang || fk.stop || time(NULL) >= h->end)
		return MHD_CONTENT_READER_END_OF_STREAM;
	usleep(10000);
	return 0;
}

static void hang_free(void *cls)
{
	struct hang *h = cls;

	strbuf_release(&h->body);
	free(h);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *con,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_size, void **req_cls)
{
	struct rq *r = *req_cls;
	struct answer a = { 200, STRBUF_INIT, 0 };
	struct MHD_Response *resp;
	enum MHD_Result ret;
	const char *ct;

	if (!r->started) {
		r->started = 1;
		return MHD_YES;
	}
	if (*upload_size) {
		strbuf_add(&r->body, upload_data, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	ct = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Content-Type");
	pthread_mutex_lock(&fk.lock);
	strbuf_reset(&fk.auth);
	if (MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Authorization"))
		strbuf_addstr(&fk.auth,
			      MHD_lookup_connection_value(con, MHD_HEADER_KIND,
							  "Authorization"));
	strbuf_addf(&fk.log, "%s %s\n", method, r->uri.buf);
	strbuf_reset(&fk.body);
	strbuf_addbuf(&fk.body, &r->body);
	strbuf_reset(&fk.ctype);
	if (ct)
		strbuf_addstr(&fk.ctype, ct);
	if (strstr(r->uri.buf, "watch=1"))
		fk.watches++;
	if (fk.route)
		fk.route(method, r->uri.buf, r->body.buf, &a);
	else
		a.code = 404;
	pthread_mutex_unlock(&fk.lock);
	if (a.hang || strstr(r->uri.buf, "watch=1")) {
		struct hang *h = xcalloc(1, sizeof(*h));
		const char *t;
		h->body = a.body;
		h->hang = a.hang;
		t = strstr(r->uri.buf, "timeoutSeconds=");
		h->end = time(NULL) + (t ? atol(t + 15) : 3600);
		resp = MHD_create_response_from_callback(
			MHD_SIZE_UNKNOWN, 4096, hang_read, h, hang_free);
	} else {
		resp = MHD_create_response_from_buffer(a.body.len, a.body.buf,
						       MHD_RESPMEM_MUST_COPY);
		strbuf_release(&a.body);
	}
	MHD_add_response_header(resp, "Content-Type", "application/json");
	ret = MHD_queue_response(con, a.code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static int setup(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const union MHD_DaemonInfo *di;
	struct strbuf sb = STRBUF_INIT;
	struct kube_load_opts lo = { 0 };
	FILE *f;

	if (!mkdtemp(tmp))
		return -1;
	pthread_mutex_init(&fk.lock, NULL);
	strbuf_init(&fk.log, 0);
	strbuf_init(&fk.body, 0);
	strbuf_init(&fk.ctype, 0);
	strbuf_init(&fk.auth, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fk.d = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
		0, NULL, NULL, handler, NULL, MHD_OPTION_SOCK_ADDR, &sa,
		MHD_OPTION_URI_LOG_CALLBACK, uri_log, NULL,
		MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
	if (!fk.d)
		return -1;
	di = MHD_get_daemon_info(fk.d, MHD_DAEMON_INFO_BIND_PORT);
	fk.port = di->port;

	strbuf_addf(&sb, "%s/config", tmp);
	f = fopen(sb.buf, "w");
	if (!f)
		return -1;
	fprintf(f,
		"apiVersion: v1\nkind: Config\n"
		"clusters:\n- name: c\n  cluster:\n"
		"    server: http://127.0.0.1:%d\n"
		"users:\n- name: u\n  user:\n    token: t0ken\n"
		"contexts:\n- name: x\n  context:\n    cluster: c\n"
		"    user: u\n    namespace: ns1\n"
		"current-context: x\n",
		fk.port);
	fclose(f);
	unsetenv("KUBERNETES_SERVICE_HOST");
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s/cache", tmp);
	setenv("XDG_CACHE_HOME", sb.buf, 1);
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s/config", tmp);
	lo.kubeconfig = sb.buf;
	if (kube_config_load(&cfg, &lo) < 0)
		return -1;
	strbuf_release(&sb);
	if (kube_client_init(&kc, &cfg, NULL) < 0)
		return -1;
	set_error_routine(catch_errors, NULL);
	return 0;
}

static int teardown(void **state)
{

	set_error_routine(NULL, NULL);
	fk.stop = 1;
	kube_client_release(&kc);
	kube_config_release(&cfg);
	MHD_stop_daemon(fk.d);
	strbuf_release(&fk.log);
	strbuf_release(&fk.body);
	strbuf_release(&fk.ctype);
	strbuf_release(&fk.auth);
	strbuf_release(&errs);
	return remove_tree(tmp);
}

/* Before each test: a fresh log, the given route. */
static void use(route_fn r)
{
	pthread_mutex_lock(&fk.lock);
	fk.route = r;
	strbuf_reset(&fk.log);
	fk.watches = 0;
	pthread_mutex_unlock(&fk.lock);
	strbuf_reset(&errs);
	fk.stop = 0;
}

/* Discovery documents. */
static int served_beta; /* 0: v0.4 (v1alpha1), 1: v0.5 (both) */

static void group_doc(struct answer *a, const char *group)
{
	strbuf_addf(&a->body,
		    "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\","
		    "\"name\":\"%s\",\"versions\":[",
		    group);
	if (served_beta)
		strbuf_addf(&a->body,
			    "{\"groupVersion\":\"%s/v1beta1\","
			    "\"version\":\"v1beta1\"},",
			    group);
	strbuf_addf(&a->body,
		    "{\"groupVersion\":\"%s/v1alpha1\","
		    "\"version\":\"v1alpha1\"}],"
		    "\"preferredVersion\":{\"groupVersion\":\"%s/%s\","
		    "\"version\":\"%s\"}}",
		    group, group, served_beta ? "v1beta1" : "v1alpha1",
		    served_beta ? "v1beta1" : "v1alpha1");
}

static void route_discovery(const char *m, const char *uri, const char *b,
			    struct answer *a)
{
	if (!strcmp(uri, "/apis/extensions.agents.x-k8s.io"))
		group_doc(a, "extensions.agents.x-k8s.io");
	else if (!strcmp(uri, "/apis/agents.x-k8s.io"))
		group_doc(a, "agents.x-k8s.io");
	else
		a->code = 404;
}

static void route_none(const char *m, const char *uri, const char *b,
		       struct answer *a)
{
	a->code = 404;
	strbuf_addstr(&a->body, "{\"kind\":\"Status\",\"status\":\"Failure\","
				"\"message\":\"the server could not find the "
				"requested resource\",\"reason\":\"NotFound\","
				"\"code\":404}");
}

static void test_discovery(void **state)
{
	use(route_discovery);
	served_beta = 0;
	assert_int_equal(kube_discover(&kc, NULL), 0);
	assert_string_equal(kc.claim_version, "v1alpha1");
	assert_string_equal(kc.sandbox_version, "v1alpha1");

	served_beta = 1;
	assert_int_equal(kube_discover(&kc, NULL), 0);
	assert_string_equal(kc.claim_version, "v1beta1");
	assert_string_equal(kc.sandbox_version, "v1beta1");

	assert_int_equal(kube_discover(&kc, "v1alpha1"), 0);
	assert_string_equal(kc.claim_version, "v1alpha1");

	served_beta = 0;
	assert_int_equal(kube_discover(&kc, "v1beta1"), -1);
	assert_non_null(strstr(errs.buf, "does not serve version v1beta1"));

	use(route_none);
	assert_int_equal(kube_discover(&kc, NULL), -1);
	assert_string_equal(
		errs.buf,
		"error: agent-sandbox is not installed: the API group "
		"extensions.agents.x-k8s.io is not served; install it (see "
		"gosbx doctor)\n");
	snprintf(kc.claim_version, sizeof(kc.claim_version), "v1alpha1");
	snprintf(kc.sandbox_version, sizeof(kc.sandbox_version), "v1alpha1");
}

static void route_create(const char *m, const char *uri, const char *b,
			 struct answer *a)
{
	if (strcmp(m, "POST")) {
		a->code = 405;
		return;
	}
	a->code = 201;
	strbuf_addstr(&a->body,
		      "{\"kind\":\"SandboxClaim\",\"metadata\":{\"name\":"
		      "\"sandbox-claim-abcde\",\"namespace\":\"ns1\","
		      "\"resourceVersion\":\"41\"}}");
}

/* Check an RFC 3339 UTC time: with 9 fraction digits or none. */
static void check_time(const char *s, int nanos)
{
	size_t i;
	const char *shape = nanos ? "dddd-dd-ddTdd:dd:dd.dddddddddZ"
				  : "dddd-dd-ddTdd:dd:ddZ";

	assert_int_equal(strlen(s), strlen(shape));
	for (i = 0; shape[i]; i++) {
		if (shape[i] == 'd')
			assert_true(s[i] >= '0' && s[i] <= '9');
		else
			assert_int_equal(s[i], shape[i]);
	}
}

/*
 * The agent-sandbox CRDs of each release, from the Go module at that
 * version ($GOSBX_CRDS_DIR, made by t/crds.sh), or NULL when absent.
 */
static const char *crd_root(void)
{
	const char *env = getenv("GOSBX_CRDS_DIR");
	struct stat st;

	if (env && !stat(env, &st))
		return env;
	return NULL;
}

/*
 * Validate a claim body against the SandboxClaim CRD of a release
 * (strict: unknown fields are errors), as the API server would.
 */
static void check_schema(json_t *body, const char *release)
{
	struct crd_set set = CRD_SET_INIT;
	struct strvec errors = STRVEC_INIT, warnings = STRVEC_INIT;
	struct strbuf dir = STRBUF_INIT;
	const struct crd *crd;
	const char *root = crd_root();
	size_t i;

	/* t/run-tests.sh sets it (t/crds.sh): without it, a failure */
	assert_non_null(root);
	strbuf_addf(&dir, "%s/%s", root, release);
	assert_true(crd_set_load_dir(&set, dir.buf) > 0);
	crd = crd_set_find(
		&set, json_string_value(json_object_get(body, "apiVersion")),
		"SandboxClaim");
	assert_non_null(crd);
	crd_validate_object(crd, body, 0, &errors, &warnings);
	for (i = 0; i < errors.nr; i++)
		printf("# %s: %s\n", release, errors.v[i]);
	assert_int_equal(errors.nr, 0);
	strvec_clear(&errors);
	strvec_clear(&warnings);
	strbuf_release(&dir);
	crd_set_release(&set);
}

static void check_claim_body(const char *version)
{
	json_t *b = json_loads(fk.body.buf, 0, NULL);
	json_t *md, *labels, *spec, *lc;
	const char *t;
	time_t shut;
	struct strbuf want = STRBUF_INIT;

	assert_non_null(b);
	strbuf_addf(&want, "extensions.agents.x-k8s.io/%s", version);
	assert_string_equal(json_string_value(json_object_get(b, "apiVersion")),
			    want.buf);
	assert_string_equal(json_string_value(json_object_get(b, "kind")),
			    "SandboxClaim");
	md = json_object_get(b, "metadata");
	assert_string_equal(
		json_string_value(json_object_get(md, "generateName")),
		"sandbox-claim-");
	assert_null(json_object_get(md, "name"));
	assert_string_equal(json_string_value(json_object_get(md, "namespace")),
			    "ns1");
	labels = json_object_get(md, "labels");
	assert_int_equal(json_object_size(labels), 3);
	assert_string_equal(json_string_value(json_object_get(
				    labels, "agents.x-k8s.io/created-by")),
			    "gosbx");
	assert_string_equal(
		json_string_value(json_object_get(labels, "gosbx/persistent")),
		"true");
	assert_string_equal(
		json_string_value(json_object_get(labels, "gosbx/session")),
		"s-1");
	t = json_string_value(
		json_object_get(json_object_get(md, "annotations"),
				"agents.x-k8s.io/client-first-requested-at"));
	assert_non_null(t);
	check_time(t, 1);
	spec = json_object_get(b, "spec");
	if (!strcmp(version, "v1beta1")) {
		assert_string_equal(
			json_string_value(json_object_get(
				json_object_get(spec, "warmPoolRef"), "name")),
			"pool1");
		assert_null(json_object_get(spec, "sandboxTemplateRef"));
	} else {
		assert_string_equal(
			json_string_value(json_object_get(
				json_object_get(spec, "sandboxTemplateRef"),
				"name")),
			"tmpl1");
		assert_null(json_object_get(spec, "warmPoolRef"));
	}
	lc = json_object_get(spec, "lifecycle");
	assert_string_equal(
		json_string_value(json_object_get(lc, "shutdownPolicy")),
		"Delete");
	t = json_string_value(json_object_get(lc, "shutdownTime"));
	assert_non_null(t);
	check_time(t, 0);
	/* v0.4.6 serves v1alpha1 only; v0.5.6 stores v1beta1 */
	check_schema(b, !strcmp(version, "v1beta1") ? "v0.5.6" : "v0.4.6");
	if (!strcmp(version, "v1alpha1"))
		check_schema(b, "v0.5.6");
	assert_int_equal(kube_parse_rfc3339(t, &shut), 0);
	/* now + 600 s, whatever the clock did in between (loose) */
	assert_true(shut > time(NULL) + 300 && shut <= time(NULL) + 600);
	json_decref(b);
	strbuf_release(&want);
}

static void test_create(void **state)
{
	struct kube_claim c;
	struct kube_claim_spec sp = { .template_name = "tmpl1",
				      .warm_pool = "pool1",
				      .persistent = 1,
				      .session = "s-1",
				      .ttl_s = 600 };

	use(route_create);
	kube_claim_init(&c);
	assert_int_equal(kube_claim_create(&kc, &sp, &c), 0);
	assert_string_equal(c.name.buf, "sandbox-claim-abcde");
	assert_string_equal(c.resource_version.buf, "41");
	assert_non_null(strstr(
		fk.log.buf,
		"POST /apis/extensions.agents.x-k8s.io/v1alpha1"
		"/namespaces/ns1/sandboxclaims?fieldValidation=Strict\n"));
	assert_string_equal(fk.ctype.buf, "application/json");
	check_claim_body("v1alpha1");

	snprintf(kc.claim_version, sizeof(kc.claim_version), "v1beta1");
	assert_int_equal(kube_claim_create(&kc, &sp, &c), 0);
	assert_non_null(strstr(
		fk.log.buf,
		"POST /apis/extensions.agents.x-k8s.io/v1beta1"
		"/namespaces/ns1/sandboxclaims?fieldValidation=Strict\n"));
	check_claim_body("v1beta1");
	snprintf(kc.claim_version, sizeof(kc.claim_version), "v1alpha1");
	kube_claim_release(&c);
}

static void route_forbidden(const char *m, const char *uri, const char *b,
			    struct answer *a)
{
	a->code = 403;
	strbuf_addstr(&a->body,
		      "{\"kind\":\"Status\",\"status\":\"Failure\","
		      "\"message\":\"sandboxclaims.extensions.agents.x-k8s.io "
		      "is forbidden: User \\\"x\\\" cannot create resource\","
		      "\"reason\":\"Forbidden\",\"code\":403}");
}

static void test_create_forbidden(void **state)
{
	struct kube_claim c;
	struct kube_claim_spec sp = { .template_name = "t", .ttl_s = 60 };

	use(route_forbidden);
	kube_claim_init(&c);
	assert_int_equal(kube_claim_create(&kc, &sp, &c), -1);
	assert_string_equal(errs.buf,
			    "error: cannot create claim: "
			    "sandboxclaims.extensions.agents.x-k8s.io is "
			    "forbidden: User \"x\" cannot create resource\n");

	/* a v1alpha1 claim without a template is not sent */
	use(route_forbidden);
	sp.template_name = NULL;
	assert_int_equal(kube_claim_create(&kc, &sp, &c), -1);
	assert_string_equal(errs.buf, "error: cannot create claim: a "
				      "v1alpha1 claim names a template\n");
	assert_string_equal(fk.log.buf, "");
	kube_claim_release(&c);
}

static void test_get_delete_404(void **state)
{
	struct kube_claim c;
	struct kube_sandbox s;

	use(route_none);
	kube_claim_init(&c);
	kube_sandbox_init(&s);
	assert_int_equal(kube_claim_get(&kc, NULL, "gone", &c), 1);
	assert_int_equal(kube_claim_delete(&kc, NULL, "gone"), 0);
	assert_int_equal(kube_sandbox_get(&kc, "other", "gone", &s), 1);
	assert_string_equal(errs.buf, "");
	assert_string_equal(
		fk.log.buf,
		"GET /apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/ns1"
		"/sandboxclaims/gone\n"
		"DELETE /apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/"
		"ns1/sandboxclaims/gone\n"
		"GET /apis/agents.x-k8s.io/v1alpha1/namespaces/other"
		"/sandboxes/gone\n");
	kube_claim_release(&c);
	kube_sandbox_release(&s);
}

static void route_objects(const char *m, const char *uri, const char *b,
			  struct answer *a)
{
	if (strstr(uri, "/sandboxes/sb1"))
		strbuf_addstr(&a->body,
			      "{\"metadata\":{\"name\":\"sb1\",\"annotations\":"
			      "{\"agents.x-k8s.io/pod-name\":\"pod-x\"}},"
			      "\"status\":{\"podIPs\":[\"10.0.0.7\"]}}");
	else if (strstr(uri, "/sandboxes/sb2"))
		strbuf_addstr(&a->body, "{\"metadata\":{\"name\":\"sb2\"}}");
	else if (strstr(uri, "/sandboxclaims/c1"))
		strbuf_addstr(
			&a->body,
			"{\"metadata\":{\"name\":\"c1\",\"resourceVersion\""
			":\"7\"},\"status\":{\"sandbox\":{\"name\":\"sb1\"}"
			",\"conditions\":[{\"type\":\"Ready\",\"status\":"
			"\"True\",\"reason\":\"Ready\"}]}}");
	else if (strstr(uri, "sandboxclaims"))
		strbuf_addstr(&a->body,
			      "{\"kind\":\"SandboxClaimList\",\"metadata\":{"
			      "\"resourceVersion\":\"99\"},\"items\":["
			      "{\"metadata\":{\"name\":\"a\"}},"
			      "{\"metadata\":{\"name\":\"b\"}}]}");
	else if (strstr(uri, "selfsubjectaccessreviews"))
		strbuf_addf(&a->body, "{\"status\":{\"allowed\":%s}}",
			    strstr(b, "\"delete\"") ? "false" : "true");
	else if (strstr(uri, "/events"))
		strbuf_addstr(&a->body,
			      "{\"items\":[{\"reason\":\"Failed\"}]}");
	else
		a->code = 404;
}

static void test_get_list_sandbox(void **state)
{
	struct kube_claim c;
	struct kube_sandbox s;
	struct strbuf rv = STRBUF_INIT;
	json_t *items;

	use(route_objects);
	kube_claim_init(&c);
	kube_sandbox_init(&s);
	assert_int_equal(kube_claim_get(&kc, NULL, "c1", &c), 0);
	assert_string_equal(c.sandbox.buf, "sb1");
	assert_int_equal(c.ready, 1);
	assert_string_equal(c.resource_version.buf, "7");

	assert_int_equal(kube_claim_list(&kc, "*",
					 "gosbx/persistent=true,"
					 "agents.x-k8s.io/created-by=gosbx",
					 &items, &rv),
			 0);
	assert_int_equal(json_array_size(items), 2);
	assert_string_equal(rv.buf, "99");
	json_decref(items);
	assert_non_null(strstr(
		fk.log.buf,
		"GET /apis/extensions.agents.x-k8s.io/v1alpha1/sandboxclaims"
		"?labelSelector=gosbx%2Fpersistent%3Dtrue%2Cagents.x-k8s.io"
		"%2Fcreated-by%3Dgosbx\n"));
	assert_int_equal(kube_claim_list(&kc, NULL, NULL, &items, NULL), 0);
	json_decref(items);
	assert_non_null(strstr(fk.log.buf,
			       "GET /apis/extensions.agents.x-k8s.io/v1alpha1"
			       "/namespaces/ns1/sandboxclaims\n"));

	assert_int_equal(kube_sandbox_get(&kc, NULL, "sb1", &s), 0);
	assert_string_equal(s.pod_name.buf, "pod-x");
	assert_int_equal(s.pod_ips.nr, 1);
	assert_string_equal(s.pod_ips.v[0], "10.0.0.7");
	assert_int_equal(kube_sandbox_get(&kc, NULL, "sb2", &s), 0);
	assert_string_equal(s.pod_name.buf, "sb2");
	assert_int_equal(s.pod_ips.nr, 0);
	kube_claim_release(&c);
	kube_sandbox_release(&s);
	strbuf_release(&rv);
}

static void test_renew(void **state)
{
	json_t *b;

	use(route_objects);
	assert_int_equal(kube_claim_renew(&kc, NULL, "c1", 1700000000), 0);
	assert_string_equal(fk.ctype.buf, "application/merge-patch+json");
	assert_non_null(strstr(fk.log.buf,
			       "PATCH /apis/extensions.agents.x-k8s.io/v1alpha1"
			       "/namespaces/ns1/sandboxclaims/c1\n"));
	b = json_loads(fk.body.buf, 0, NULL);
	assert_non_null(b);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_object_get(b, "spec"),
						    "lifecycle"),
				    "shutdownTime")),
			    "2023-11-14T22:13:20Z");
	assert_int_equal(json_object_size(b), 1);
	json_decref(b);
}

static void test_can_i_events(void **state)
{
	int allowed = -1;
	json_t *ev, *doc, *b;

	use(route_objects);
	assert_int_equal(kube_can_i(&kc, "create", "", "pods/portforward",
				    "ns1", &allowed),
			 0);
	assert_int_equal(allowed, 1);
	doc = json_loads(fk.body.buf, 0, NULL);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "kind")),
			    "SelfSubjectAccessReview");
	b = json_object_get(json_object_get(doc, "spec"), "resourceAttributes");
	assert_string_equal(json_string_value(json_object_get(b, "resource")),
			    "pods");
	assert_string_equal(
		json_string_value(json_object_get(b, "subresource")),
		"portforward");
	assert_null(json_object_get(b, "name"));
	json_decref(doc);
	assert_int_equal(kube_can_i(&kc, "delete", "extensions.agents.x-k8s.io",
				    "sandboxclaims", "ns1", &allowed),
			 0);
	assert_int_equal(allowed, 0);

	assert_int_equal(kube_events_for(&kc, NULL, "Pod", "pod-x", &ev), 0);
	assert_int_equal(json_array_size(ev), 1);
	json_decref(ev);
	assert_non_null(strstr(
		fk.log.buf, "GET /api/v1/namespaces/ns1/events?fieldSelector="
			    "involvedObject.name%3Dpod-x%2CinvolvedObject."
			    "kind%3DPod\n"));
}

static void route_router(const char *m, const char *uri, const char *b,
			 struct answer *a)
{
	if (strcmp(uri, "/apis/discovery.k8s.io/v1/namespaces/ns1/"
			"endpointslices?labelSelector=kubernetes.io%2F"
			"service-name%3Dsandbox-router-svc")) {
		a->code = 404;
		return;
	}
	strbuf_addstr(&a->body,
		      "{\"items\":[{\"endpoints\":["
		      "{\"addresses\":[\"10.1.0.5\"],\"conditions\":{"
		      "\"ready\":false},\"targetRef\":{\"kind\":\"Pod\","
		      "\"name\":\"router-a\"}},"
		      "{\"addresses\":[\"10.1.0.6\"],\"conditions\":{"
		      "\"ready\":true},\"targetRef\":{\"kind\":\"Pod\","
		      "\"name\":\"router-b\"}}]}]}");
}

static void test_router_pods(void **state)
{
	struct strvec names = STRVEC_INIT, ips = STRVEC_INIT;

	use(route_router);
	assert_int_equal(kube_router_pods(&kc, NULL, &names, &ips), 0);
	assert_int_equal(names.nr, 1);
	assert_string_equal(names.v[0], "router-b");
	assert_string_equal(ips.v[0], "10.1.0.6");
	strvec_clear(&names);
	strvec_clear(&ips);
}

/* Watch scripts. */
#define CLAIM_OBJ(rv, extra)                                                   \
	"{\"kind\":\"SandboxClaim\",\"metadata\":{\"name\":\"c1\","            \
	"\"resourceVersion\":\"" rv "\"}" extra "}"
#define READY_STATUS                                                           \
	",\"status\":{\"sandbox\":{\"name\":\"sb-warm\",\"podIPs\":"           \
	"[\"10.2.0.9\"]},\"conditions\":[{\"type\":\"Ready\",\"status\":"      \
	"\"True\",\"reason\":\"Ready\"}]}"
#define PENDING_STATUS                                                         \
	",\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"         \
	"\"False\",\"reason\":\"SandboxNotReady\",\"message\":"                \
	"\"waiting for pod\"}]}"

static int wait_case;

static void route_watch(const char *m, const char *uri, const char *b,
			struct answer *a)
{
	int w = strstr(uri, "watch=1") != NULL;

	if (!strstr(uri, "fieldSelector=metadata.name%3Dc1")) {
		a->code = 400;
		return;
	}
	switch (wait_case) {
	case 0: /* ADDED then MODIFIED Ready */
		strbuf_addstr(
			&a->body,
			"{\"type\":\"ADDED\",\"object\":" CLAIM_OBJ(
				"11",
				PENDING_STATUS) "}\n"
						"{\"type\":\"MODIFIED\","
						"\"object\":" CLAIM_OBJ(
							"12",
							READY_STATUS) "}\n");
		a->hang = 1;
		break;
	case 1: /* bookmark, stream ends; re-watch from the bookmark */
		if (strstr(uri, "resourceVersion=10&")) {
			strbuf_addstr(&a->body,
				      "{\"type\":\"BOOKMARK\",\"object\":{"
				      "\"kind\":\"SandboxClaim\",\"metadata\":"
				      "{\"resourceVersion\":\"20\"}}}\n");
		} else if (strstr(uri, "resourceVersion=20&")) {
			strbuf_addstr(
				&a->body,
				"{\"type\":\"MODIFIED\",\"object\":" CLAIM_OBJ(
					"21", READY_STATUS) "}\n");
			a->hang = 1;
		} else {
			a->code = 400;
		}
		break;
	case 2: /* 410 ERROR event, list, re-watch from the list's rv */
		if (!w) {
			strbuf_addstr(&a->body,
				      "{\"kind\":\"SandboxClaimList\","
				      "\"metadata\":{\"resourceVersion\":"
				      "\"50\"},\"items\":[" CLAIM_OBJ(
					      "45", PENDING_STATUS) "]}");
		} else if (strstr(uri, "resourceVersion=10&")) {
			strbuf_addstr(
				&a->body,
				"{\"type\":\"ERROR\",\"object\":{\"kind\":"
				"\"Status\",\"code\":410,\"reason\":"
				"\"Expired\",\"message\":\"too old "
				"resource version\"}}\n");
			a->hang = 1;
		} else if (strstr(uri, "resourceVersion=50&")) {
			strbuf_addstr(
				&a->body,
				"{\"type\":\"MODIFIED\",\"object\":" CLAIM_OBJ(
					"51", READY_STATUS) "}\n");
			a->hang = 1;
		} else {
			a->code = 400;
		}
		break;
	case 3: /* HTTP 410, list finds it Ready */
		if (w) {
			a->code = 410;
			strbuf_addstr(&a->body, "{\"kind\":\"Status\","
						"\"code\":410}");
		} else {
			strbuf_addstr(&a->body,
				      "{\"metadata\":{\"resourceVersion\":"
				      "\"60\"},\"items\":[" CLAIM_OBJ(
					      "60", READY_STATUS) "]}");
		}
		break;
	case 4: /* TemplateNotFound */
		strbuf_addstr(&a->body,
			      "{\"type\":\"MODIFIED\",\"object\":" CLAIM_OBJ(
				      "11",
				      ",\"status\":{\"conditions\":[{\"type\":"
				      "\"Ready\",\"status\":\"False\","
				      "\"reason\":\"TemplateNotFound\","
				      "\"message\":\"template tmpl1 not "
				      "found\"}]}") "}\n");
		a->hang = 1;
		break;
	case 5: /* DELETED */
		strbuf_addstr(&a->body,
			      "{\"type\":\"DELETED\",\"object\":" CLAIM_OBJ(
				      "11", "") "}\n");
		a->hang = 1;
		break;
	case 7: /* a stream ends early; re-watch from the event's rv */
		if (strstr(uri, "resourceVersion=10&")) {
			strbuf_addstr(
				&a->body,
				"{\"type\":\"ADDED\",\"object\":" CLAIM_OBJ(
					"11", PENDING_STATUS) "}\n");
		} else if (strstr(uri, "resourceVersion=11&")) {
			strbuf_addstr(
				&a->body,
				"{\"type\":\"MODIFIED\",\"object\":" CLAIM_OBJ(
					"12", READY_STATUS) "}\n");
			a->hang = 1;
		} else {
			a->code = 400;
		}
		break;
	case 6: /* pending forever */
		strbuf_addstr(&a->body,
			      "{\"type\":\"MODIFIED\",\"object\":" CLAIM_OBJ(
				      "11", PENDING_STATUS) "}\n");
		a->hang = 1;
		break;
	}
}

static int run_wait(int which, long timeout_ms, volatile sig_atomic_t *cancel,
		    struct kube_ready *r)
{
	int ret;

	wait_case = which;
	use(route_watch);
	ret = kube_claim_wait_ready(&kc, NULL, "c1", "10", timeout_ms, cancel,
				    r);
	fk.stop = 1;
	return ret;
}

static void test_wait_ready(void **state)
{
	struct kube_ready r;

	kube_ready_init(&r);
	assert_int_equal(run_wait(0, 60000, NULL, &r), 0);
	assert_string_equal(r.sandbox.buf, "sb-warm");
	assert_int_equal(r.pod_ips.nr, 1);
	assert_string_equal(r.pod_ips.v[0], "10.2.0.9");
	assert_int_equal(fk.watches, 1);
	assert_non_null(strstr(fk.log.buf,
			       "GET /apis/extensions.agents.x-k8s.io/v1alpha1"
			       "/namespaces/ns1/sandboxclaims?watch=1&"
			       "fieldSelector=metadata.name%3Dc1&"
			       "resourceVersion=10&allowWatchBookmarks=true&"
			       "timeoutSeconds="));
	kube_ready_release(&r);
}

static void test_wait_bookmark_rewatch(void **state)
{
	struct kube_ready r;

	kube_ready_init(&r);
	assert_int_equal(run_wait(1, 60000, NULL, &r), 0);
	assert_string_equal(r.sandbox.buf, "sb-warm");
	assert_int_equal(fk.watches, 2);

	assert_int_equal(run_wait(7, 60000, NULL, &r), 0);
	assert_string_equal(r.sandbox.buf, "sb-warm");
	assert_int_equal(fk.watches, 2);
	assert_string_equal(errs.buf, "");
	kube_ready_release(&r);
}

static void test_wait_gone(void **state)
{
	struct kube_ready r;

	kube_ready_init(&r);
	assert_int_equal(run_wait(2, 60000, NULL, &r), 0);
	assert_string_equal(r.sandbox.buf, "sb-warm");
	assert_int_equal(fk.watches, 2);
	/* watch, list, watch */
	assert_non_null(strstr(fk.log.buf, "resourceVersion=10&"));
	assert_non_null(strstr(fk.log.buf,
			       "/sandboxclaims?fieldSelector=metadata.name"
			       "%3Dc1\n"));
	assert_non_null(strstr(fk.log.buf, "resourceVersion=50&"));

	assert_int_equal(run_wait(3, 60000, NULL, &r), 0);
	assert_int_equal(fk.watches, 1);
	kube_ready_release(&r);
}

static void test_wait_failures(void **state)
{
	struct kube_ready r;
	volatile sig_atomic_t cancel = 1;

	kube_ready_init(&r);
	assert_int_equal(run_wait(4, 60000, NULL, &r), -1);
	assert_string_equal(errs.buf,
			    "error: claim c1 failed: TemplateNotFound: "
			    "template tmpl1 not found\n");
	assert_int_equal(fk.watches, 1);

	assert_int_equal(run_wait(5, 60000, NULL, &r), -1);
	assert_non_null(strstr(errs.buf, "claim c1 was deleted"));

	assert_int_equal(run_wait(6, 1500, NULL, &r), -1);
	/* the server ends each stream after timeoutSeconds */
	assert_string_equal(errs.buf,
			    "error: timed out after 1500 ms waiting for claim "
			    "c1 to be Ready; last condition: Ready=False "
			    "SandboxNotReady: waiting for pod\n");

	assert_int_equal(run_wait(6, 60000, &cancel, &r), -1);
	assert_non_null(strstr(errs.buf, "interrupted"));
	kube_ready_release(&r);
}

static volatile sig_atomic_t cancel_flag;

static void *set_cancel(void *arg)
{
	/* after the watch has started */
	for (;;) {
		int n;
		pthread_mutex_lock(&fk.lock);
		n = fk.watches;
		pthread_mutex_unlock(&fk.lock);
		if (n)
			break;
		usleep(10000);
	}
	cancel_flag = 1;
	return NULL;
}

static void test_wait_cancel_during_watch(void **state)
{
	struct kube_ready r;
	pthread_t t;

	kube_ready_init(&r);
	cancel_flag = 0;
	fk.watches = 0;
	pthread_create(&t, NULL, set_cancel, NULL);
	assert_int_equal(run_wait(6, 120000, &cancel_flag, &r), -1);
	pthread_join(t, NULL);
	assert_non_null(strstr(errs.buf, "interrupted"));
	kube_ready_release(&r);
}

static void test_connect_error(void **state)
{
	struct kube_config c2;
	struct kube_client k2;
	struct kube_load_opts lo = { 0 };
	struct strbuf sb = STRBUF_INIT;
	struct kube_claim c;
	FILE *f;

	strbuf_addf(&sb, "%s/config2", tmp);
	f = fopen(sb.buf, "w");
	assert_non_null(f);
	/* port 1 on loopback: nothing listens there */
	fprintf(f, "apiVersion: v1\nkind: Config\n"
		   "clusters:\n- name: c\n  cluster:\n"
		   "    server: http://127.0.0.1:1\n"
		   "users:\n- name: u\n  user: {}\n"
		   "contexts:\n- name: x\n  context:\n    cluster: c\n"
		   "    user: u\n"
		   "current-context: x\n");
	fclose(f);
	lo.kubeconfig = sb.buf;
	assert_int_equal(kube_config_load(&c2, &lo), 0);
	assert_int_equal(kube_client_init(&k2, &c2, NULL), 0);
	kube_claim_init(&c);
	strbuf_reset(&errs);
	assert_int_equal(kube_claim_get(&k2, NULL, "x", &c), -1);
	/* one message, naming the server */
	assert_non_null(strstr(errs.buf, "error: cannot reach "
					 "'http://127.0.0.1:1"));
	assert_int_equal(strchr(errs.buf, '\n') - errs.buf + 1, errs.len);
	kube_claim_release(&c);
	kube_client_release(&k2);
	kube_config_release(&c2);
	unlink(sb.buf);
	strbuf_release(&sb);
}

/* 401 for every token but the plugin's second one. */
static void route_auth(const char *m, const char *uri, const char *b,
		       struct answer *a)
{
	if (strcmp(fk.auth.buf, "Bearer tok2")) {
		a->code = 401;
		strbuf_addstr(&a->body, "{\"kind\":\"Status\",\"message\":"
					"\"Unauthorized\",\"code\":401}");
		return;
	}
	route_objects(m, uri, b, a);
}

static void write_file(const char *path, const char *text, int mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

/*
 * A client whose user has an exec plugin counting its runs and
 * answering the token "tok<run>", expiring in 30 s when expiring (so
 * within the 60 s refresh margin: every request fetches anew).
 */
static void exec_client(int expiring, struct kube_config *c2,
			struct kube_client *k2)
{
	struct kube_load_opts lo = { 0 };
	struct strbuf cf = STRBUF_INIT, plug = STRBUF_INIT, sb = STRBUF_INIT;

	strbuf_addf(&sb, "%s/count", tmp);
	unlink(sb.buf);
	strbuf_reset(&sb);
	strbuf_addf(&plug, "%s/plugin", tmp);
	strbuf_addf(&sb,
		    "#!/bin/sh\n"
		    "n=$(cat %s/count 2>/dev/null || echo 0)\n"
		    "n=$((n + 1))\necho $n > %s/count\n"
		    "exp=\n",
		    tmp, tmp);
	if (expiring)
		strbuf_addstr(&sb, "exp=\",\\\"expirationTimestamp\\\":\\\"$("
				   "date -u -d '+30 seconds' "
				   "+%Y-%m-%dT%H:%M:%SZ)\\\"\"\n");
	strbuf_addstr(&sb,
		      "printf '{\"apiVersion\":\"client.authentication.k8s.io/"
		      "v1\",\"kind\":\"ExecCredential\",\"status\":"
		      "{\"token\":\"tok%s\"%s}}' $n \"$exp\"\n");
	write_file(plug.buf, sb.buf, 0755);
	strbuf_reset(&sb);
	strbuf_addf(&sb,
		    "apiVersion: v1\nkind: Config\n"
		    "clusters:\n- name: c\n  cluster:\n"
		    "    server: http://127.0.0.1:%d\n"
		    "users:\n- name: u\n  user:\n    exec:\n"
		    "      apiVersion: client.authentication.k8s.io/v1\n"
		    "      command: %s\n"
		    "      interactiveMode: Never\n"
		    "contexts:\n- name: x\n  context:\n    cluster: c\n"
		    "    user: u\n"
		    "current-context: x\n",
		    fk.port, plug.buf);
	strbuf_addf(&cf, "%s/config3", tmp);
	write_file(cf.buf, sb.buf, 0600);
	lo.kubeconfig = cf.buf;
	assert_int_equal(kube_config_load(c2, &lo), 0);
	assert_int_equal(kube_client_init(k2, c2, "ns1"), 0);
	strbuf_release(&cf);
	strbuf_release(&plug);
	strbuf_release(&sb);
}

static void test_exec_refresh_on_401(void **state)
{
	struct kube_config c2;
	struct kube_client k2;
	struct kube_claim c;

	exec_client(0, &c2, &k2);
	use(route_auth);
	kube_claim_init(&c);
	assert_int_equal(kube_claim_get(&k2, NULL, "c1", &c), 0);
	assert_string_equal(c.sandbox.buf, "sb1");
	/* one 401 with tok1, then the retry with tok2 */
	assert_string_equal(
		fk.log.buf,
		"GET /apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/ns1"
		"/sandboxclaims/c1\n"
		"GET /apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/ns1"
		"/sandboxclaims/c1\n");
	assert_string_equal(fk.auth.buf, "Bearer tok2");
	assert_string_equal(errs.buf, "");
	kube_claim_release(&c);
	kube_client_release(&k2);
	kube_config_release(&c2);
}

static void test_exec_refresh_on_expiry(void **state)
{
	struct kube_config c2;
	struct kube_client k2;
	struct kube_claim c;

	exec_client(1, &c2, &k2); /* tok1 */
	use(route_objects);
	kube_claim_init(&c);
	assert_int_equal(kube_claim_get(&k2, NULL, "c1", &c), 0);
	assert_string_equal(fk.auth.buf, "Bearer tok2");
	assert_int_equal(kube_claim_get(&k2, NULL, "c1", &c), 0);
	assert_string_equal(fk.auth.buf, "Bearer tok3");
	assert_string_equal(errs.buf, "");
	kube_claim_release(&c);
	kube_client_release(&k2);
	kube_config_release(&c2);
}

/* the API server's Warning values (KEP-1693) as gosbx shows them */
static void test_warning_text(void **state)
{
	static const struct {
		const char *value, *want;
	} cases[] = {
		{ "299 - \"v1alpha1 is deprecated\"",
		  "v1alpha1 is deprecated" },
		{ "299 - \"unknown field \\\"spec.replicas\\\"\"",
		  "unknown field \"spec.replicas\"" },
		{ "299 - \"a\x1b[2Jb\x7f\"", "a?[2Jb?" },
		{ "299 - \"no end", "no end" },
		{ "no quotes\tat all", "no quotes?at all" },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb = STRBUF_INIT;

		kube_warning_text(cases[i].value, strlen(cases[i].value), &sb);
		assert_string_equal(sb.buf, cases[i].want);
		strbuf_release(&sb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_warning_text),
		cmocka_unit_test(test_discovery),
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_create_forbidden),
		cmocka_unit_test(test_get_delete_404),
		cmocka_unit_test(test_get_list_sandbox),
		cmocka_unit_test(test_renew),
		cmocka_unit_test(test_can_i_events),
		cmocka_unit_test(test_router_pods),
		cmocka_unit_test(test_wait_ready),
		cmocka_unit_test(test_wait_bookmark_rewatch),
		cmocka_unit_test(test_wait_gone),
		cmocka_unit_test(test_wait_failures),
		cmocka_unit_test(test_wait_cancel_during_watch),
		cmocka_unit_test(test_connect_error),
		cmocka_unit_test(test_exec_refresh_on_401),
		cmocka_unit_test(test_exec_refresh_on_expiry),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
