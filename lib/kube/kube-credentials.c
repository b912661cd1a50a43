#include "compat.h"
#include "kube/kubeconfig.h"
#include "kube/kube-credentials.h"
#include "dir.h"
#include "exec.h"
#include "http.h"
#include "json.h"
#include "quote.h"
#include "usage.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <pthread.h>
#include <strings.h>
#include <sys/stat.h>
#include <jansson.h>

#define CACHE_MARGIN_S 60

extern char **environ;

/* ---- time ---- */

static int digits(const char **s, int n, int *out)
{
	int v = 0;

	while (n--) {
		if (**s < '0' || **s > '9')
			return -1;
		v = v * 10 + (*(*s)++ - '0');
	}
	*out = v;
	return 0;
}

int kube_parse_rfc3339(const char *s, time_t *out)
{
	struct tm tm;
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	if (digits(&s, 4, &y) || *s++ != '-' || digits(&s, 2, &mo) ||
	    *s++ != '-' || digits(&s, 2, &d) || (*s != 'T' && *s != 't'))
		return -1;
	s++;
	if (digits(&s, 2, &h) || *s++ != ':' || digits(&s, 2, &mi) ||
	    *s++ != ':' || digits(&s, 2, &sec))
		return -1;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -1;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s++ == '-' ? -1 : 1;
		if (digits(&s, 2, &oh) || *s++ != ':' || digits(&s, 2, &om))
			return -1;
	} else {
		return -1;
	}
	if (*s || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 60)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	*out = t - sign * (oh * 3600 + om * 60);
	return 0;
}

/* ---- exec credential plugins ---- */

void kube_credential_init(struct kube_credential *c)
{
	memset(c, 0, sizeof(*c));
	strbuf_init(&c->token, 0);
	strbuf_init(&c->cert_pem, 0);
	strbuf_init(&c->key_pem, 0);
}

void kube_credential_release(struct kube_credential *c)
{
	strbuf_release(&c->token);
	strbuf_release(&c->cert_pem);
	strbuf_release(&c->key_pem);
	kube_credential_init(c);
}

static void cred_copy(struct kube_credential *dst,
		      const struct kube_credential *src, int cached)
{
	strbuf_reset(&dst->token);
	strbuf_addbuf(&dst->token, &src->token);
	strbuf_reset(&dst->cert_pem);
	strbuf_addbuf(&dst->cert_pem, &src->cert_pem);
	strbuf_reset(&dst->key_pem);
	strbuf_addbuf(&dst->key_pem, &src->key_pem);
	dst->expiry = src->expiry;
	dst->cached = cached;
}

static int cred_fresh(const struct kube_credential *c)
{
	return !c->expiry || c->expiry - CACHE_MARGIN_S > time(NULL);
}

/* the cache key: everything that changes what the plugin returns */
static char *cache_key(struct kube_config *kc)
{
	struct kube_exec_config *e = kc->user.exec;
	json_t *a = json_array();
	size_t i;
	char *s;

	json_array_append_new(a, json_string(kc->cluster.server));
	json_array_append_new(a, json_string(e->command));
	for (i = 0; i < e->args.nr; i++)
		json_array_append_new(a, json_string(e->args.v[i]));
	for (i = 0; i < e->env.nr; i++)
		json_array_append_new(a, json_string(e->env.v[i]));
	json_array_append_new(a, json_string(e->api_version));
	s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s;
}

/* $XDG_CACHE_HOME/gosbx/kube-exec/<fnv1a-64 of key>.json, or NULL */
static char *cache_path(const char *key)
{
	const char *base = kube_env_nonempty("XDG_CACHE_HOME");
	const char *home = kube_env_nonempty("HOME");
	struct strbuf sb = STRBUF_INIT;
	uint64_t h = 14695981039346656037ULL;
	const unsigned char *k;

	for (k = (const unsigned char *)key; *k; k++)
		h = (h ^ *k) * 1099511628211ULL;
	if (base && *base == '/')
		strbuf_addstr(&sb, base);
	else if (home)
		strbuf_addf(&sb, "%s/.cache", home);
	else
		return NULL;
	strbuf_addf(&sb, "/gosbx/kube-exec/%016" PRIx64 ".json", h);
	return strbuf_detach(&sb, NULL);
}

#define cred_error(...) (quiet ? -1 : error(__VA_ARGS__))

/* quiet: no message (a bad cache file is just a miss) */
static int cred_from_status(struct kube_credential *c, json_t *status,
			    const char *cmd, int quiet)
{
	const char *tok = json_object_str(status, "token");
	const char *cert = json_object_str(status, "clientCertificateData");
	const char *key = json_object_str(status, "clientKeyData");
	const char *exp = json_object_str(status, "expirationTimestamp");

	kube_credential_release(c);
	if (!json_is_object(status))
		return cred_error("exec plugin '%s' returned no status", cmd);
	if (!!cert != !!key)
		return cred_error(
			"exec plugin '%s' returned a client certificate "
			"without its key or a key without certificate",
			cmd);
	if (!(tok && *tok) && !cert)
		return cred_error(
			"exec plugin '%s' returned neither a token nor "
			"a client certificate and key",
			cmd);
	if (exp && kube_parse_rfc3339(exp, &c->expiry))
		return cred_error("exec plugin '%s' returned a bad "
				  "expirationTimestamp '%s'",
				  cmd, exp);
	if (tok)
		strbuf_addstr(&c->token, tok);
	if (cert) {
		strbuf_addstr(&c->cert_pem, cert);
		strbuf_addstr(&c->key_pem, key);
	}
	return 0;
}

static int disk_cache_read(const char *path, const char *key,
			   struct kube_credential *c)
{
	struct strbuf sb = STRBUF_INIT;
	struct kube_credential tmp;
	struct stat st;
	json_t *j = NULL;
	const char *k;
	int fd, r = -1;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077))
		goto out;
	if (strbuf_read_fd(&sb, fd, 0) < 0)
		goto out;
	j = json_loadb(sb.buf, sb.len, 0, NULL);
	k = json_object_str(j, "key");
	if (!k || strcmp(k, key))
		goto out;
	kube_credential_init(&tmp);
	if (!cred_from_status(&tmp, json_object_get(j, "status"), "cache", 1) &&
	    tmp.expiry && cred_fresh(&tmp)) {
		cred_copy(c, &tmp, 2);
		r = 0;
	}
	kube_credential_release(&tmp);
out:
	json_decref(j);
	strbuf_release(&sb);
	close(fd);
	return r;
}

static void disk_cache_write(const char *path, const char *key, json_t *status)
{
	struct strbuf tmp = STRBUF_INIT;
	json_t *j = json_object();
	char *s = NULL;
	int fd = -1;

	json_object_set_new(j, "key", json_string(key));
	json_object_set(j, "status", status);
	s = json_dumps(j, JSON_COMPACT);
	if (mkdir_leading(path, 0700) && errno != EEXIST)
		goto fail;
	strbuf_addf(&tmp, "%s.%ld.tmp", path, (long)getpid());
	unlink(tmp.buf);
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write_in_full(fd, s, strlen(s)) < 0 || close(fd) ||
	    rename(tmp.buf, path)) {
		if (fd >= 0)
			unlink(tmp.buf);
		goto fail;
	}
	goto out;
fail:
	warning_errno("cannot write the credential cache '%s'", path);
out:
	free(s);
	json_decref(j);
	strbuf_release(&tmp);
}

/* the full path of cmd searched in PATH, or NULL */
static char *find_command(const char *cmd)
{
	const char *path = getenv("PATH"), *s;
	struct strbuf sb = STRBUF_INIT;

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) ? NULL : xstrdup(cmd);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (s = path;;) {
		const char *end = strchrnul(s, ':');
		strbuf_reset(&sb);
		if (end == s)
			strbuf_addch(&sb, '.');
		else
			strbuf_add(&sb, s, end - s);
		strbuf_addf(&sb, "/%s", cmd);
		if (!access(sb.buf, X_OK))
			return strbuf_detach(&sb, NULL);
		if (!*end)
			break;
		s = end + 1;
	}
	strbuf_release(&sb);
	return NULL;
}

/* put NAME=value into env, replacing an entry of the same name */
static void env_set(struct strvec *env, const char *kv)
{
	size_t n = strcspn(kv, "="), i;

	for (i = 0; i < env->nr; i++) {
		if (!strncmp(env->v[i], kv, n) && env->v[i][n] == '=') {
			free((char *)env->v[i]);
			env->v[i] = xstrdup(kv);
			return;
		}
	}
	strvec_push(env, kv);
}

static char *exec_info(struct kube_config *kc)
{
	struct kube_exec_config *e = kc->user.exec;
	json_t *j = json_object(), *spec = json_object();
	char *s;

	json_object_set_new(j, "kind", json_string("ExecCredential"));
	json_object_set_new(j, "apiVersion", json_string(e->api_version));
	json_object_set_new(spec, "interactive", json_false());
	if (e->provide_cluster_info) {
		struct kube_cluster *c = &kc->cluster;
		json_t *cl = json_object();
		struct strbuf ca = STRBUF_INIT, b64 = STRBUF_INIT;

		json_object_set_new(cl, "server", json_string(c->server));
		if (c->tls_server_name)
			json_object_set_new(cl, "tls-server-name",
					    json_string(c->tls_server_name));
		if (c->insecure_skip_tls_verify)
			json_object_set_new(cl, "insecure-skip-tls-verify",
					    json_true());
		if (c->ca_data.len)
			strbuf_addbuf(&ca, &c->ca_data);
		else if (c->ca_file)
			strbuf_read_file(&ca, c->ca_file, 0);
		if (ca.len) {
			base64_encode_into(&b64, ca.buf, ca.len);
			json_object_set_new(cl, "certificate-authority-data",
					    json_string(b64.buf));
		}
		if (c->proxy_url)
			json_object_set_new(cl, "proxy-url",
					    json_string(c->proxy_url));
		json_object_set_new(spec, "cluster", cl);
		strbuf_release(&ca);
		strbuf_release(&b64);
	}
	json_object_set_new(j, "spec", spec);
	s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return s;
}

static void add_hint(struct strbuf *msg, const struct kube_exec_config *e)
{
	if (e->install_hint && *e->install_hint) {
		strbuf_addstr(msg, "\n");
		strbuf_addstr(msg, e->install_hint);
		strbuf_rtrim(msg);
	}
}

static void add_tail(struct strbuf *msg, const struct strbuf *err)
{
	struct strbuf t = STRBUF_INIT;
	size_t start = err->len > 1024 ? err->len - 1024 : 0;

	strbuf_add(&t, err->buf + start, err->len - start);
	strbuf_trim(&t);
	if (t.len)
		strbuf_addf(msg, ": %s", t.buf);
	strbuf_release(&t);
}

static int run_plugin(struct kube_config *kc, struct kube_credential *c,
		      json_t **status_out)
{
	struct kube_exec_config *e = kc->user.exec;
	struct strbuf cmd = STRBUF_INIT, msg = STRBUF_INIT;
	struct strvec env = STRVEC_INIT;
	struct exec_request req;
	struct exec_result res;
	char *path = find_command(e->command), *info = NULL;
	json_t *j = NULL;
	json_error_t jerr;
	const char *kind, *av;
	char **ep;
	size_t i;
	int r = -1;

	exec_result_init(&res);
	*status_out = NULL;
	if (!path) {
		strbuf_addf(&msg, "exec plugin '%s' of user '%s' not found",
			    e->command, kc->user.name);
		add_hint(&msg, e);
		error("%s", msg.buf);
		goto out;
	}
	strbuf_addstr(&cmd, "exec ");
	sq_quote_buf(&cmd, path);
	for (i = 0; i < e->args.nr; i++) {
		strbuf_addch(&cmd, ' ');
		sq_quote_buf(&cmd, e->args.v[i]);
	}
	for (ep = environ; ep && *ep; ep++)
		strvec_push(&env, *ep);
	for (i = 0; i < e->env.nr; i++)
		env_set(&env, e->env.v[i]);
	info = exec_info(kc);
	strbuf_addf(&msg, "KUBERNETES_EXEC_INFO=%s", info);
	env_set(&env, msg.buf);
	strbuf_reset(&msg);

	exec_request_init(&req);
	req.command = cmd.buf;
	req.env = env.v;
	req.timeout_ms = kc->state->exec_timeout_ms;
	req.stream_cap = 1 << 20;
	exec_run(&req, &res);

	if (res.reason && !strcmp(res.reason, "timeout")) {
		strbuf_addf(&msg,
			    "exec plugin '%s' of user '%s' timed out "
			    "after %" PRId64 " ms and was killed",
			    e->command, kc->user.name,
			    kc->state->exec_timeout_ms);
		add_hint(&msg, e);
		error("%s", msg.buf);
		goto out;
	}
	if (res.exit_code != 0) {
		strbuf_addf(&msg, "exec plugin '%s' of user '%s' failed",
			    e->command, kc->user.name);
		if (res.signal)
			strbuf_addf(&msg, " (signal %d)", res.signal);
		else if (res.exit_code >= 0)
			strbuf_addf(&msg, " (exit code %d)", res.exit_code);
		add_tail(&msg, &res.err);
		add_hint(&msg, e);
		error("%s", msg.buf);
		goto out;
	}
	j = json_loadb(res.out.buf, res.out.len, 0, &jerr);
	if (!j) {
		error("exec plugin '%s' returned invalid JSON: %s (line %d)",
		      e->command, jerr.text, jerr.line);
		goto out;
	}
	kind = json_object_str(j, "kind");
	av = json_object_str(j, "apiVersion");
	if (!kind || strcmp(kind, "ExecCredential")) {
		error("exec plugin '%s' returned kind '%s', not "
		      "'ExecCredential'",
		      e->command, kind ? kind : "");
		goto out;
	}
	if (!av || strcmp(av, e->api_version)) {
		error("exec plugin '%s' returned apiVersion '%s', but the "
		      "kubeconfig asks for '%s'",
		      e->command, av ? av : "", e->api_version);
		goto out;
	}
	if (cred_from_status(c, json_object_get(j, "status"), e->command, 0))
		goto out;
	*status_out = json_incref(json_object_get(j, "status"));
	r = 0;
out:
	json_decref(j);
	free(info);
	free(path);
	strvec_clear(&env);
	strbuf_release(&cmd);
	strbuf_release(&msg);
	exec_result_release(&res);
	return r;
}

static int exec_credential_locked(struct kube_config *kc,
				  struct kube_credential *out)
{
	struct kube_config_state *st = kc->state;
	struct kube_exec_config *e = kc->user.exec;
	struct kube_credential fresh;
	json_t *status = NULL;
	char *key = NULL, *path = NULL;
	int r = -1;

	if (!e)
		return error("user '%s' has no exec plugin",
			     kc->user.name ? kc->user.name : "");
	if (e->interactive_mode && !strcmp(e->interactive_mode, "Always"))
		return kube_at_err(
			&e->at,
			"exec plugin '%s' needs a terminal "
			"(interactiveMode: Always), which gosbx does "
			"not provide",
			e->command);
	if (st->cred_ok && cred_fresh(&st->cred)) {
		cred_copy(out, &st->cred, 1);
		return 0;
	}
	key = cache_key(kc);
	path = cache_path(key);
	if (path && !disk_cache_read(path, key, out)) {
		cred_copy(&st->cred, out, 0);
		st->cred_ok = 1;
		r = 0;
		goto out;
	}
	kube_credential_init(&fresh);
	if (run_plugin(kc, &fresh, &status)) {
		kube_credential_release(&fresh);
		goto out;
	}
	if (path && fresh.expiry)
		disk_cache_write(path, key, status);
	cred_copy(&st->cred, &fresh, 0);
	st->cred_ok = 1;
	cred_copy(out, &fresh, 0);
	kube_credential_release(&fresh);
	r = 0;
out:
	json_decref(status);
	free(key);
	free(path);
	return r;
}

int kube_exec_credential(struct kube_config *kc, struct kube_credential *out)
{
	int r;

	pthread_mutex_lock(&kc->state->lock);
	r = exec_credential_locked(kc, out);
	pthread_mutex_unlock(&kc->state->lock);
	return r;
}

void kube_config_forget_credential(struct kube_config *kc)
{
	struct kube_config_state *st = kc->state;

	pthread_mutex_lock(&st->lock);
	if (kc->user.exec) {
		char *key = cache_key(kc);
		char *path = cache_path(key);
		if (path)
			unlink(path);
		free(path);
		free(key);
	}
	kube_credential_release(&st->cred);
	st->cred_ok = 0;
	st->file_token_ok = 0;
	pthread_mutex_unlock(&st->lock);
}

/* ---- auth ---- */

void kube_auth_init(struct kube_auth *a)
{
	memset(a, 0, sizeof(*a));
	strbuf_init(&a->ca_pem, 0);
	strbuf_init(&a->cert_pem, 0);
	strbuf_init(&a->key_pem, 0);
	strbuf_init(&a->bearer_token, 0);
	strvec_init(&a->headers);
}

void kube_auth_release(struct kube_auth *a)
{
	free(a->server);
	free(a->ca_file);
	strbuf_release(&a->ca_pem);
	free(a->cert_file);
	free(a->key_file);
	strbuf_release(&a->cert_pem);
	strbuf_release(&a->key_pem);
	free(a->tls_server_name);
	free(a->proxy_url);
	free(a->url);
	free(a->connect_to);
	free(a->proxy);
	free(a->no_proxy);
	strbuf_release(&a->bearer_token);
	strvec_clear(&a->headers);
	kube_auth_init(a);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/*
 * Split an http(s) URL: scheme length, host (without brackets), port
 * (the scheme's default when absent) and where the path starts. 0, or
 * -1 when it is not scheme://host... .
 */
static int split_url(const char *url, size_t *scheme_len, struct strbuf *host,
		     unsigned *port, const char **rest)
{
	const char *p = strstr(url, "://"), *h, *end, *colon;

	if (!p || p == url)
		return -1;
	*scheme_len = p - url;
	h = p + 3;
	end = h + strcspn(h, "/?#");
	*rest = end;
	if (memchr(h, '@', end - h))
		h = (const char *)memchr(h, '@', end - h) + 1;
	if (*h == '[') {
		const char *rb = memchr(h, ']', end - h);

		if (!rb)
			return -1;
		strbuf_add(host, h + 1, rb - h - 1);
		colon = rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(h, ':', end - h);
		strbuf_add(host, h, (colon ? colon : end) - h);
	}
	if (!host->len)
		return -1;
	if (colon && colon + 1 < end) {
		char *e;
		unsigned long v = strtoul(colon + 1, &e, 10);

		if (e != end || !v || v > 65535)
			return -1;
		*port = v;
	} else {
		*port = *scheme_len == 5 && !strncasecmp(url, "https", 5) ? 443
									  : 80;
	}
	return 0;
}

/* host as in a URL or a CONNECT_TO entry: IPv6 in brackets */
static void add_host(struct strbuf *sb, const char *host)
{
	if (strchr(host, ':'))
		strbuf_addf(sb, "[%s]", host);
	else
		strbuf_addstr(sb, host);
}

/* Go's net.IP.IsLoopback, and "localhost" (net/http/httpproxy) */
static int is_loopback(const char *host)
{
	unsigned char a[16];

	if (!strcasecmp(host, "localhost"))
		return 1;
	if (inet_pton(AF_INET, host, a) == 1)
		return a[0] == 127;
	if (inet_pton(AF_INET6, host, a) == 1) {
		static const unsigned char v4mapped[12] = { 0, 0, 0,	0,
							    0, 0, 0,	0,
							    0, 0, 0xff, 0xff };
		static const unsigned char one[16] = { [15] = 1 };

		return !memcmp(a, one, 16) ||
		       (!memcmp(a, v4mapped, 12) && a[12] == 127);
	}
	return 0;
}

/* the first of two environment variables that is set and not empty */
static const char *getenv_any(const char *a, const char *b)
{
	const char *v = getenv(a);

	if (!v || !*v)
		v = getenv(b);
	return v && *v ? v : NULL;
}

/*
 * A proxy URL as libcurl takes it, with Go's meaning: no scheme is
 * http://; socks5 resolves names on the proxy (Go's SOCKS5 dialer
 * sends the name), which libcurl calls socks5h.
 */
static char *proxy_for_curl(const char *v)
{
	struct strbuf sb = STRBUF_INIT;

	if (!strncasecmp(v, "socks5://", 9))
		strbuf_addf(&sb, "socks5h://%s", v + 9);
	else if (!strstr(v, "://"))
		strbuf_addf(&sb, "http://%s", v);
	else
		strbuf_addstr(&sb, v);
	return strbuf_detach(&sb, NULL);
}

/*
 * Fill a->url, connect_to, proxy and no_proxy from the cluster as
 * client-go would (rest.Config TLSClientConfig.ServerName, Proxy, and
 * otherwise http.ProxyFromEnvironment: localhost and loopback
 * addresses are never proxied). validate() has checked proxy-url.
 */
static void transport_fill(struct kube_auth *a, const struct kube_cluster *c)
{
	struct strbuf host = STRBUF_INIT, sb = STRBUF_INIT;
	size_t slen;
	unsigned port;
	const char *rest;
	int https;

	if (split_url(c->server, &slen, &host, &port, &rest) < 0)
		goto out;
	https = slen == 5 && !strncasecmp(c->server, "https", 5);
	if (c->tls_server_name && *c->tls_server_name && https) {
		strbuf_add(&sb, c->server, slen + 3);
		add_host(&sb, c->tls_server_name);
		strbuf_addf(&sb, ":%u%s", port, rest);
		a->url = strbuf_detach(&sb, NULL);
		add_host(&sb, c->tls_server_name);
		strbuf_addf(&sb, ":%u:", port);
		add_host(&sb, host.buf);
		strbuf_addf(&sb, ":%u", port);
		a->connect_to = strbuf_detach(&sb, NULL);
	}
	if (c->proxy_url && *c->proxy_url) {
		a->proxy = proxy_for_curl(c->proxy_url);
		a->no_proxy = xstrdup("");
	} else {
		/* Go: uppercase first; HTTP_PROXY not under CGI */
		const char *v =
			https ? getenv_any("HTTPS_PROXY", "https_proxy")
			: getenv("REQUEST_METHOD")
				? NULL
				: getenv_any("HTTP_PROXY", "http_proxy");
		const char *np = getenv_any("NO_PROXY", "no_proxy");

		a->proxy = v && !is_loopback(host.buf) ? proxy_for_curl(v)
						       : xstrdup("");
		a->no_proxy = np ? xstrdup(np) : NULL;
	}
out:
	strbuf_release(&host);
	strbuf_release(&sb);
}

/* the token file's contents, re-read when the file changed */
static int file_token_locked(struct kube_config *kc, struct strbuf *out)
{
	struct kube_config_state *st = kc->state;
	const char *path = kc->user.token_file;
	struct stat sb;

	if (stat(path, &sb))
		return kube_at_err(&kc->user.token_file_at,
				   "cannot read tokenFile '%s': %s", path,
				   strerror(errno));
	if (!st->file_token_ok || sb.st_ino != st->file_st.st_ino ||
	    sb.st_dev != st->file_st.st_dev ||
	    sb.st_size != st->file_st.st_size ||
	    sb.st_mtim.tv_sec != st->file_st.st_mtim.tv_sec ||
	    sb.st_mtim.tv_nsec != st->file_st.st_mtim.tv_nsec) {
		strbuf_reset(&st->file_token);
		if (strbuf_read_file(&st->file_token, path, 0) < 0) {
			st->file_token_ok = 0;
			return kube_at_err(&kc->user.token_file_at,
					   "cannot read tokenFile '%s': %s",
					   path, strerror(errno));
		}
		strbuf_trim(&st->file_token);
		st->file_st = sb;
		st->file_token_ok = 1;
	}
	strbuf_addbuf(out, &st->file_token);
	return 0;
}

int kube_config_auth(struct kube_config *kc, struct kube_auth *out)
{
	struct kube_cluster *c = &kc->cluster;
	struct kube_user *u = &kc->user;
	size_t i;
	int r = 0;

	kube_auth_release(out);
	out->server = dup_or_null(c->server);
	out->ca_file = dup_or_null(c->ca_file);
	strbuf_addbuf(&out->ca_pem, &c->ca_data);
	out->insecure_skip_verify = c->insecure_skip_tls_verify;
	out->tls_server_name = dup_or_null(c->tls_server_name);
	out->proxy_url = dup_or_null(c->proxy_url);
	transport_fill(out, c);
	out->cert_file = dup_or_null(u->client_cert_file);
	out->key_file = dup_or_null(u->client_key_file);
	strbuf_addbuf(&out->cert_pem, &u->client_cert_data);
	strbuf_addbuf(&out->key_pem, &u->client_key_data);

	if (u->exec) {
		struct kube_credential cred;

		kube_credential_init(&cred);
		r = kube_exec_credential(kc, &cred);
		if (!r) {
			strbuf_addbuf(&out->bearer_token, &cred.token);
			if (cred.cert_pem.len) {
				free(out->cert_file);
				free(out->key_file);
				out->cert_file = out->key_file = NULL;
				strbuf_reset(&out->cert_pem);
				strbuf_reset(&out->key_pem);
				strbuf_addbuf(&out->cert_pem, &cred.cert_pem);
				strbuf_addbuf(&out->key_pem, &cred.key_pem);
			}
			out->expiry = cred.expiry;
		}
		kube_credential_release(&cred);
	} else if (u->token_file) {
		pthread_mutex_lock(&kc->state->lock);
		r = file_token_locked(kc, &out->bearer_token);
		pthread_mutex_unlock(&kc->state->lock);
		if (r && u->token) {
			/* a static token stands in for an unreadable file */
			strbuf_addstr(&out->bearer_token, u->token);
			r = 0;
		}
	} else if (u->token) {
		strbuf_addstr(&out->bearer_token, u->token);
	}
	if (u->username || u->password) {
		struct strbuf up = STRBUF_INIT, h = STRBUF_INIT;

		strbuf_addf(&up, "%s:%s", u->username ? u->username : "",
			    u->password ? u->password : "");
		strbuf_addstr(&h, "Authorization: Basic ");
		base64_encode_into(&h, up.buf, up.len);
		strvec_push(&out->headers, h.buf);
		strbuf_release(&up);
		strbuf_release(&h);
	}
	if (u->impersonate)
		strvec_pushf(&out->headers, "Impersonate-User: %s",
			     u->impersonate);
	for (i = 0; i < u->impersonate_groups.nr; i++)
		strvec_pushf(&out->headers, "Impersonate-Group: %s",
			     u->impersonate_groups.v[i]);
	if (u->impersonate_uid)
		strvec_pushf(&out->headers, "Impersonate-Uid: %s",
			     u->impersonate_uid);
	for (i = 0; i < u->impersonate_extra.nr; i++) {
		/*
		 * Impersonate-Extra-<key>: <value>; the key
		 * percent-encoded as client-go does (a header name is a
		 * token: anything else, and '%', is %XX)
		 */
		const char *kv = u->impersonate_extra.v[i], *ch;
		const char *eq = strchr(kv, '=');
		struct strbuf h = STRBUF_INIT;

		strbuf_addstr(&h, "Impersonate-Extra-");
		for (ch = kv; ch < eq; ch++) {
			if (isalnum((unsigned char)*ch) ||
			    strchr("!#$&'*+-.^_`|~", *ch))
				strbuf_addch(&h, *ch);
			else
				strbuf_addf(&h, "%%%02X", (unsigned char)*ch);
		}
		strbuf_addf(&h, ": %s", eq + 1);
		strvec_push(&out->headers, h.buf);
		strbuf_release(&h);
	}
	return r;
}

const char *kube_auth_http_opts(const struct kube_auth *a,
				struct http_client_opts *o)
{
	o->proxy = a->proxy;
	o->no_proxy = a->no_proxy;
	o->connect_to = a->connect_to;
	o->ca_file = a->ca_file;
	o->ca_pem = a->ca_pem.len ? a->ca_pem.buf : NULL;
	o->ca_pem_len = a->ca_pem.len;
	o->cert_file = a->cert_file;
	o->key_file = a->key_file;
	o->cert_pem = a->cert_pem.len ? a->cert_pem.buf : NULL;
	o->cert_pem_len = a->cert_pem.len;
	o->key_pem = a->key_pem.len ? a->key_pem.buf : NULL;
	o->key_pem_len = a->key_pem.len;
	o->insecure_skip_verify = a->insecure_skip_verify;
	o->bearer_token = a->bearer_token.len ? a->bearer_token.buf : NULL;
	if (a->headers.nr)
		o->headers = a->headers.v;
	return a->url ? a->url : a->server;
}
