#include "compat.h"
#include "kube/kubeconfig.h"
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
#include <yaml.h>
#include <jansson.h>

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define EXEC_V1 "client.authentication.k8s.io/v1"
#define EXEC_V1BETA1 "client.authentication.k8s.io/v1beta1"
#define CACHE_MARGIN_S 60

extern char **environ;

struct kube_config_state {
	pthread_mutex_t lock;
	int64_t exec_timeout_ms;
	/* token file cache */
	struct strbuf file_token;
	struct stat file_st;
	int file_token_ok;
	/* exec credential cache */
	struct kube_credential cred;
	int cred_ok;
};

/* ---- parsing ---- */

struct parse {
	struct kube_config *kc;
	const char *file; /* owned by kc->files */
	char *dir;	  /* absolute directory of file */
	yaml_document_t doc;
	struct kube_cluster *clusters;
	size_t clusters_nr, clusters_alloc;
	struct kube_user *users;
	size_t users_nr, users_alloc;
	struct kube_context *contexts;
	size_t contexts_nr, contexts_alloc;
	char *current;
	struct kube_origin current_at;
};

static int line_of(yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

static int perr(struct parse *p, yaml_node_t *n, const char *fmt, ...)
	PRINTF_LIKE(3, 4);
static int perr(struct parse *p, yaml_node_t *n, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	error("cannot read kubeconfig '%s': line %d: %s", p->file, line_of(n),
	      sb.buf);
	strbuf_release(&sb);
	return -1;
}

/*
 * An unknown field: kubectl (client-go's decoder) ignores it, so do
 * we, with a warning naming the file and line (a typo then shows).
 */
static void unknown_field(struct parse *p, yaml_node_t *k, const char *key,
			  const char *what)
{
	warning("kubeconfig '%s': line %d: unknown field '%s'%s ignored",
		p->file, line_of(k), key, what);
}

static int is_null(yaml_node_t *n)
{
	const char *v;

	if (!n)
		return 1;
	if (n->type != YAML_SCALAR_NODE)
		return 0;
	if (n->tag && !strcmp((char *)n->tag, YAML_NULL_TAG))
		return 1;
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	v = (const char *)n->data.scalar.value;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") ||
	       !strcmp(v, "Null") || !strcmp(v, "NULL");
}

static yaml_node_t *node(struct parse *p, int i)
{
	return yaml_document_get_node(&p->doc, i);
}

static char *scalar_dup(yaml_node_t *n)
{
	return xstrndup((const char *)n->data.scalar.value,
			n->data.scalar.length);
}

static void origin(struct parse *p, struct kube_origin *o, yaml_node_t *k)
{
	o->file = p->file;
	o->line = line_of(k);
}

/* "x" relative to the kubeconfig's directory */
static char *resolve(struct parse *p, const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	if (*path == '/' || !*path)
		return xstrdup(path);
	strbuf_addf(&sb, "%s/%s", p->dir, path);
	return strbuf_detach(&sb, NULL);
}

enum fkind { F_STR, F_PATH, F_B64, F_BOOL, F_LIST, F_ANY, F_FUNC };

struct field;
typedef int (*field_fn)(struct parse *p, yaml_node_t *k, yaml_node_t *v,
			void *obj, const char *what);

struct field {
	const char *key;
	enum fkind kind;
	size_t off;    /* of the value in the object */
	size_t at_off; /* of its kube_origin; (size_t)-1: none */
	field_fn fn;
};

#define NO_AT ((size_t)-1)

static int want_scalar(struct parse *p, yaml_node_t *k, yaml_node_t *v,
		       const char *what)
{
	if (v->type == YAML_SCALAR_NODE)
		return 0;
	return perr(p, k, "'%s' must be a string%s", k->data.scalar.value,
		    what);
}

static int parse_bool(struct parse *p, yaml_node_t *k, yaml_node_t *v, int *out)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes",
					   "YES",  "on",   "On",   "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No",
					  "NO",	   "off",   "Off",   "OFF" };
	size_t i;

	if (v->type == YAML_SCALAR_NODE) {
		const char *s = (const char *)v->data.scalar.value;
		for (i = 0; i < ARRAY_SIZE(yes); i++) {
			if (!strcmp(s, yes[i]))
				return *out = 1, 0;
			if (!strcmp(s, no[i]))
				return *out = 0, 0;
		}
	}
	return perr(p, k, "'%s' must be true or false", k->data.scalar.value);
}

static int parse_fields(struct parse *p, yaml_node_t *map,
			const struct field *fields, void *obj, const char *what)
{
	yaml_node_pair_t *pair;

	if (is_null(map))
		return 0;
	if (map->type != YAML_MAPPING_NODE)
		return perr(p, map, "expected a mapping%s", what);
	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = node(p, pair->key), *v = node(p, pair->value);
		const struct field *f;
		char *base = obj;
		const char *key;

		if (k->type != YAML_SCALAR_NODE)
			return perr(p, k, "a key must be a string%s", what);
		key = (const char *)k->data.scalar.value;
		for (f = fields; f->key; f++)
			if (!strcmp(f->key, key))
				break;
		if (!f->key) {
			unknown_field(p, k, key, what);
			continue;
		}
		if (is_null(v))
			continue;
		if (f->at_off != NO_AT)
			origin(p, (struct kube_origin *)(base + f->at_off), k);
		switch (f->kind) {
		case F_STR:
		case F_PATH: {
			char **dst = (char **)(base + f->off);
			char *s;
			if (want_scalar(p, k, v, what))
				return -1;
			s = scalar_dup(v);
			free(*dst);
			*dst = f->kind == F_PATH ? resolve(p, s) : s;
			if (f->kind == F_PATH)
				free(s);
			break;
		}
		case F_B64: {
			struct strbuf *dst = (struct strbuf *)(base + f->off);
			struct strbuf clean = STRBUF_INIT;
			size_t i;
			int r;
			if (want_scalar(p, k, v, what))
				return -1;
			/* Go's decoder skips line breaks */
			for (i = 0; i < v->data.scalar.length; i++) {
				char c = (char)v->data.scalar.value[i];
				if (c != '\n' && c != '\r')
					strbuf_addch(&clean, c);
			}
			strbuf_reset(dst);
			r = base64_decode_into(dst, clean.buf, clean.len);
			strbuf_release(&clean);
			if (r)
				return perr(p, v, "bad base64 in '%s'%s", key,
					    what);
			break;
		}
		case F_BOOL:
			if (parse_bool(p, k, v, (int *)(base + f->off)))
				return -1;
			break;
		case F_LIST: {
			struct strvec *dst = (struct strvec *)(base + f->off);
			yaml_node_item_t *it;
			if (v->type != YAML_SEQUENCE_NODE)
				return perr(p, k, "'%s' must be a list%s", key,
					    what);
			strvec_clear(dst);
			for (it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top; it++) {
				yaml_node_t *e = node(p, *it);
				if (e->type != YAML_SCALAR_NODE)
					return perr(p, e,
						    "'%s' must hold strings%s",
						    key, what);
				strvec_push(dst,
					    (const char *)e->data.scalar.value);
			}
			break;
		}
		case F_ANY:
			break;
		case F_FUNC:
			if (f->fn(p, k, v, obj, what))
				return -1;
			break;
		}
	}
	return 0;
}

#define FS(k, kind, T, m)                                                      \
	{                                                                      \
		k, kind, offsetof(T, m), offsetof(T, m##_at), NULL             \
	}
#define FN(k, kind, T, m)                                                      \
	{                                                                      \
		k, kind, offsetof(T, m), NO_AT, NULL                           \
	}

static const struct field cluster_fields[] = {
	FS("server", F_STR, struct kube_cluster, server),
	FS("tls-server-name", F_STR, struct kube_cluster, tls_server_name),
	FS("certificate-authority", F_PATH, struct kube_cluster, ca_file),
	FS("certificate-authority-data", F_B64, struct kube_cluster, ca_data),
	{ "insecure-skip-tls-verify", F_BOOL,
	  offsetof(struct kube_cluster, insecure_skip_tls_verify),
	  offsetof(struct kube_cluster, insecure_at), NULL },
	FS("proxy-url", F_STR, struct kube_cluster, proxy_url),
	FN("disable-compression", F_BOOL, struct kube_cluster,
	   disable_compression),
	{ "extensions", F_ANY, 0, NO_AT, NULL },
	{ NULL, 0, 0, 0, NULL }
};

static const struct field exec_env_fields[] = {
	{ "name", F_STR, 0, NO_AT, NULL },
	{ "value", F_STR, sizeof(char *), NO_AT, NULL },
	{ NULL, 0, 0, 0, NULL }
};

static int exec_env_fn(struct parse *p, yaml_node_t *k, yaml_node_t *v,
		       void *obj, const char *what)
{
	struct kube_exec_config *e = obj;
	yaml_node_item_t *it;

	if (v->type != YAML_SEQUENCE_NODE)
		return perr(p, k, "'env' must be a list%s", what);
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		char *nv[2] = { NULL, NULL };
		yaml_node_t *en = node(p, *it);
		int r = parse_fields(p, en, exec_env_fields, nv, what);

		if (!r && (!nv[0] || !*nv[0]))
			r = perr(p, en, "exec env entry without a name%s",
				 what);
		if (!r)
			strvec_pushf(&e->env, "%s=%s", nv[0],
				     nv[1] ? nv[1] : "");
		free(nv[0]);
		free(nv[1]);
		if (r)
			return -1;
	}
	return 0;
}

static const struct field exec_fields[] = {
	FN("command", F_STR, struct kube_exec_config, command),
	FN("args", F_LIST, struct kube_exec_config, args),
	{ "env", F_FUNC, 0, NO_AT, exec_env_fn },
	FN("apiVersion", F_STR, struct kube_exec_config, api_version),
	FN("installHint", F_STR, struct kube_exec_config, install_hint),
	FN("provideClusterInfo", F_BOOL, struct kube_exec_config,
	   provide_cluster_info),
	FN("interactiveMode", F_STR, struct kube_exec_config, interactive_mode),
	{ NULL, 0, 0, 0, NULL }
};

static void exec_config_free(struct kube_exec_config *e)
{
	if (!e)
		return;
	free(e->command);
	strvec_clear(&e->args);
	strvec_clear(&e->env);
	free(e->api_version);
	free(e->install_hint);
	free(e->interactive_mode);
	free(e);
}

static int exec_fn(struct parse *p, yaml_node_t *k, yaml_node_t *v, void *obj,
		   const char *what)
{
	struct kube_user *u = obj;
	struct kube_exec_config *e = xcalloc(1, sizeof(*e));
	const char *m;

	strvec_init(&e->args);
	strvec_init(&e->env);
	exec_config_free(u->exec);
	u->exec = e;
	origin(p, &e->at, k);
	if (parse_fields(p, v, exec_fields, e, what))
		return -1;
	if (!e->command || !*e->command)
		return perr(p, k, "exec has no command%s", what);
	if (strchr(e->command, '/')) {
		char *r = resolve(p, e->command);
		free(e->command);
		e->command = r;
	}
	if (!e->api_version)
		return perr(p, k, "exec has no apiVersion%s", what);
	if (strcmp(e->api_version, EXEC_V1) &&
	    strcmp(e->api_version, EXEC_V1BETA1))
		return perr(p, k,
			    "exec apiVersion '%s' is not supported "
			    "(use " EXEC_V1 " or " EXEC_V1BETA1 ")%s",
			    e->api_version, what);
	m = e->interactive_mode;
	if (m && strcmp(m, "Never") && strcmp(m, "IfAvailable") &&
	    strcmp(m, "Always"))
		return perr(p, k, "invalid exec interactiveMode '%s'%s", m,
			    what);
	return 0;
}

static int auth_provider_fn(struct parse *p, yaml_node_t *k, yaml_node_t *v,
			    void *obj, const char *what)
{
	struct kube_user *u = obj;
	yaml_node_pair_t *pair;

	origin(p, &u->auth_provider_at, k);
	free(u->auth_provider);
	u->auth_provider = xstrdup("?");
	if (v->type != YAML_MAPPING_NODE)
		return 0;
	for (pair = v->data.mapping.pairs.start;
	     pair < v->data.mapping.pairs.top; pair++) {
		yaml_node_t *pk = node(p, pair->key);
		yaml_node_t *pv = node(p, pair->value);
		if (pk->type == YAML_SCALAR_NODE &&
		    pv->type == YAML_SCALAR_NODE &&
		    !strcmp((char *)pk->data.scalar.value, "name")) {
			free(u->auth_provider);
			u->auth_provider = scalar_dup(pv);
		}
	}
	return 0;
}

/* as-user-extra: a map of lists of strings, kept as "key=value" */
static int user_extra_fn(struct parse *p, yaml_node_t *k, yaml_node_t *v,
			 void *obj, const char *what)
{
	struct kube_user *u = obj;
	yaml_node_pair_t *pair;

	strvec_clear(&u->impersonate_extra);
	if (v->type != YAML_MAPPING_NODE)
		return perr(p, k, "'as-user-extra' must be a mapping%s", what);
	for (pair = v->data.mapping.pairs.start;
	     pair < v->data.mapping.pairs.top; pair++) {
		yaml_node_t *pk = node(p, pair->key);
		yaml_node_t *pv = node(p, pair->value);
		yaml_node_item_t *it;

		if (pk->type != YAML_SCALAR_NODE ||
		    pv->type != YAML_SEQUENCE_NODE)
			return perr(p, pk,
				    "'as-user-extra' maps names to lists of "
				    "strings%s",
				    what);
		for (it = pv->data.sequence.items.start;
		     it < pv->data.sequence.items.top; it++) {
			yaml_node_t *e = node(p, *it);

			if (e->type != YAML_SCALAR_NODE)
				return perr(p, e,
					    "'as-user-extra' maps names to "
					    "lists of strings%s",
					    what);
			strvec_pushf(&u->impersonate_extra, "%s=%s",
				     (char *)pk->data.scalar.value,
				     (char *)e->data.scalar.value);
		}
	}
	return 0;
}

static const struct field user_fields[] = {
	FS("client-certificate", F_PATH, struct kube_user, client_cert_file),
	FS("client-certificate-data", F_B64, struct kube_user,
	   client_cert_data),
	FS("client-key", F_PATH, struct kube_user, client_key_file),
	FS("client-key-data", F_B64, struct kube_user, client_key_data),
	FS("token", F_STR, struct kube_user, token),
	FS("tokenFile", F_PATH, struct kube_user, token_file),
	{ "username", F_STR, offsetof(struct kube_user, username),
	  offsetof(struct kube_user, basic_at), NULL },
	{ "password", F_STR, offsetof(struct kube_user, password),
	  offsetof(struct kube_user, basic_at), NULL },
	FN("as", F_STR, struct kube_user, impersonate),
	FN("as-groups", F_LIST, struct kube_user, impersonate_groups),
	FN("as-uid", F_STR, struct kube_user, impersonate_uid),
	{ "as-user-extra", F_FUNC, 0, NO_AT, user_extra_fn },
	{ "auth-provider", F_FUNC, 0, NO_AT, auth_provider_fn },
	{ "exec", F_FUNC, 0, NO_AT, exec_fn },
	{ "extensions", F_ANY, 0, NO_AT, NULL },
	{ NULL, 0, 0, 0, NULL }
};

static const struct field context_fields[] = {
	FS("cluster", F_STR, struct kube_context, cluster),
	FS("user", F_STR, struct kube_context, user),
	FS("namespace", F_STR, struct kube_context, namespace),
	{ "extensions", F_ANY, 0, NO_AT, NULL },
	{ NULL, 0, 0, 0, NULL }
};

static void cluster_release(struct kube_cluster *c)
{
	free(c->name);
	free(c->server);
	free(c->tls_server_name);
	free(c->ca_file);
	strbuf_release(&c->ca_data);
	free(c->proxy_url);
	memset(c, 0, sizeof(*c));
	strbuf_init(&c->ca_data, 0);
}

static void user_release(struct kube_user *u)
{
	free(u->name);
	free(u->client_cert_file);
	strbuf_release(&u->client_cert_data);
	free(u->client_key_file);
	strbuf_release(&u->client_key_data);
	free(u->token);
	free(u->token_file);
	free(u->username);
	free(u->password);
	free(u->impersonate);
	free(u->impersonate_uid);
	strvec_clear(&u->impersonate_groups);
	strvec_clear(&u->impersonate_extra);
	free(u->auth_provider);
	exec_config_free(u->exec);
	memset(u, 0, sizeof(*u));
	strbuf_init(&u->client_cert_data, 0);
	strbuf_init(&u->client_key_data, 0);
	strvec_init(&u->impersonate_groups);
	strvec_init(&u->impersonate_extra);
}

static void context_release(struct kube_context *c)
{
	free(c->name);
	free(c->cluster);
	free(c->user);
	free(c->namespace);
	memset(c, 0, sizeof(*c));
}

/* Which kind of named list: clusters, users, contexts. */
enum kind { K_CLUSTER, K_USER, K_CONTEXT };
static const char *const kind_word[] = { "cluster", "user", "context" };

/* the entry named name in list kind, or NULL */
static void *find_entry(struct parse *p, enum kind kind, const char *name)
{
	size_t i;

	switch (kind) {
	case K_CLUSTER:
		for (i = 0; i < p->clusters_nr; i++)
			if (!strcmp(p->clusters[i].name, name))
				return &p->clusters[i];
		break;
	case K_USER:
		for (i = 0; i < p->users_nr; i++)
			if (!strcmp(p->users[i].name, name))
				return &p->users[i];
		break;
	case K_CONTEXT:
		for (i = 0; i < p->contexts_nr; i++)
			if (!strcmp(p->contexts[i].name, name))
				return &p->contexts[i];
		break;
	}
	return NULL;
}

static int parse_entry(struct parse *p, enum kind kind, yaml_node_t *e)
{
	const char *word = kind_word[kind];
	yaml_node_t *name_k = NULL, *name_v = NULL, *body = NULL;
	yaml_node_pair_t *pair;
	struct strbuf what = STRBUF_INIT;
	struct kube_origin at;
	struct kube_cluster c;
	struct kube_user u;
	struct kube_context x;
	void *prev;
	int r = -1;

	if (e->type != YAML_MAPPING_NODE)
		return perr(p, e, "%s entry must be a mapping", word);
	for (pair = e->data.mapping.pairs.start;
	     pair < e->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = node(p, pair->key);
		const char *key = (const char *)k->data.scalar.value;

		if (k->type != YAML_SCALAR_NODE)
			return perr(p, k, "a key must be a string");
		if (!strcmp(key, "name"))
			name_k = k, name_v = node(p, pair->value);
		else if (!strcmp(key, word))
			body = node(p, pair->value);
		else {
			struct strbuf w = STRBUF_INIT;

			strbuf_addf(&w, " in %s entry", word);
			unknown_field(p, k, key, w.buf);
			strbuf_release(&w);
		}
	}
	if (!name_v || is_null(name_v) || name_v->type != YAML_SCALAR_NODE)
		return perr(p, e, "%s entry without a name", word);
	origin(p, &at, name_k);
	strbuf_addf(&what, " in %s '%s'", word,
		    (const char *)name_v->data.scalar.value);
	prev = find_entry(p, kind, (const char *)name_v->data.scalar.value);
	if (prev &&
	    ((struct kube_origin *)((char *)prev +
				    (kind == K_CLUSTER
					     ? offsetof(struct kube_cluster, at)
				     : kind == K_USER
					     ? offsetof(struct kube_user, at)
					     : offsetof(struct kube_context,
							at))))
			    ->file == p->file) {
		perr(p, name_k, "duplicate %s name '%s'", word,
		     (const char *)name_v->data.scalar.value);
		goto out;
	}

	switch (kind) {
	case K_CLUSTER:
		memset(&c, 0, sizeof(c));
		strbuf_init(&c.ca_data, 0);
		c.name = scalar_dup(name_v);
		c.at = at;
		if (parse_fields(p, body, cluster_fields, &c, what.buf)) {
			cluster_release(&c);
			goto out;
		}
		if (prev) {
			cluster_release(&c); /* an earlier file wins */
		} else {
			ALLOC_GROW(p->clusters, p->clusters_nr + 1,
				   p->clusters_alloc);
			p->clusters[p->clusters_nr++] = c;
		}
		break;
	case K_USER:
		memset(&u, 0, sizeof(u));
		strbuf_init(&u.client_cert_data, 0);
		strbuf_init(&u.client_key_data, 0);
		strvec_init(&u.impersonate_groups);
		strvec_init(&u.impersonate_extra);
		u.name = scalar_dup(name_v);
		u.at = at;
		if (parse_fields(p, body, user_fields, &u, what.buf)) {
			user_release(&u);
			goto out;
		}
		if (prev) {
			user_release(&u);
		} else {
			ALLOC_GROW(p->users, p->users_nr + 1, p->users_alloc);
			p->users[p->users_nr++] = u;
		}
		break;
	case K_CONTEXT:
		memset(&x, 0, sizeof(x));
		x.name = scalar_dup(name_v);
		x.at = at;
		if (parse_fields(p, body, context_fields, &x, what.buf)) {
			context_release(&x);
			goto out;
		}
		if (prev) {
			context_release(&x);
		} else {
			ALLOC_GROW(p->contexts, p->contexts_nr + 1,
				   p->contexts_alloc);
			p->contexts[p->contexts_nr++] = x;
		}
		break;
	}
	r = 0;
out:
	strbuf_release(&what);
	return r;
}

static int parse_list(struct parse *p, enum kind kind, yaml_node_t *k,
		      yaml_node_t *v)
{
	yaml_node_item_t *it;

	if (is_null(v))
		return 0;
	if (v->type != YAML_SEQUENCE_NODE)
		return perr(p, k, "'%s' must be a list",
			    (const char *)k->data.scalar.value);
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++)
		if (parse_entry(p, kind, node(p, *it)))
			return -1;
	return 0;
}

static int parse_root(struct parse *p)
{
	yaml_node_t *root = yaml_document_get_root_node(&p->doc);
	yaml_node_pair_t *pair;

	if (!root || is_null(root))
		return 0; /* an empty file is an empty config */
	if (root->type != YAML_MAPPING_NODE)
		return perr(p, root, "expected a mapping");
	for (pair = root->data.mapping.pairs.start;
	     pair < root->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = node(p, pair->key), *v = node(p, pair->value);
		const char *key = (const char *)k->data.scalar.value;
		int r = 0;

		if (k->type != YAML_SCALAR_NODE)
			return perr(p, k, "a key must be a string");
		if (!strcmp(key, "clusters"))
			r = parse_list(p, K_CLUSTER, k, v);
		else if (!strcmp(key, "users"))
			r = parse_list(p, K_USER, k, v);
		else if (!strcmp(key, "contexts"))
			r = parse_list(p, K_CONTEXT, k, v);
		else if (!strcmp(key, "current-context")) {
			if (want_scalar(p, k, v, ""))
				return -1;
			if (!p->current && !is_null(v) &&
			    v->data.scalar.length) {
				p->current = scalar_dup(v);
				origin(p, &p->current_at, k);
			}
		} else if (strcmp(key, "apiVersion") && strcmp(key, "kind") &&
			   strcmp(key, "preferences") &&
			   strcmp(key, "extensions"))
			unknown_field(p, k, key, "");
		if (r)
			return -1;
	}
	return 0;
}

/* Parse one file; *missing is set (and 0 returned) when it does not exist. */
static int parse_file(struct parse *p, const char *path, int *missing)
{
	struct strbuf data = STRBUF_INIT, dir = STRBUF_INIT;
	yaml_parser_t parser;
	const char *slash;
	int r = -1;

	*missing = 0;
	if (strbuf_read_file(&data, path, 0) < 0) {
		if (errno == ENOENT) {
			*missing = 1;
			strbuf_release(&data);
			return 0;
		}
		error_errno("cannot read kubeconfig '%s'", path);
		strbuf_release(&data);
		return -1;
	}
	p->file = strvec_push(&p->kc->files, path);
	slash = strrchr(path, '/');
	if (*path != '/') {
		char cwd[PATH_MAX];
		if (getcwd(cwd, sizeof(cwd)))
			strbuf_addstr(&dir, cwd);
		else
			strbuf_addch(&dir, '.');
		if (slash)
			strbuf_addch(&dir, '/');
	}
	if (slash)
		strbuf_add(&dir, path, slash - path);
	if (!dir.len)
		strbuf_addch(&dir, '/');
	free(p->dir);
	p->dir = strbuf_detach(&dir, NULL);

	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (unsigned char *)data.buf,
				     data.len);
	if (!yaml_parser_load(&parser, &p->doc)) {
		error("cannot read kubeconfig '%s': line %d: %s%s%s", path,
		      (int)parser.problem_mark.line + 1,
		      parser.problem ? parser.problem : "bad YAML",
		      parser.context ? " " : "",
		      parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		strbuf_release(&data);
		return -1;
	}
	r = parse_root(p);
	yaml_document_delete(&p->doc);
	yaml_parser_delete(&parser);
	strbuf_release(&data);
	return r;
}

static void parse_release(struct parse *p)
{
	size_t i;

	for (i = 0; i < p->clusters_nr; i++)
		cluster_release(&p->clusters[i]);
	for (i = 0; i < p->users_nr; i++)
		user_release(&p->users[i]);
	for (i = 0; i < p->contexts_nr; i++)
		context_release(&p->contexts[i]);
	free(p->clusters);
	free(p->users);
	free(p->contexts);
	free(p->current);
	free(p->dir);
}

static int at_err(const struct kube_origin *at, const char *fmt, ...)
	PRINTF_LIKE(2, 3);
static int at_err(const struct kube_origin *at, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (at->file)
		error("kubeconfig '%s': line %d: %s", at->file, at->line,
		      sb.buf);
	else
		error("%s", sb.buf);
	strbuf_release(&sb);
	return -1;
}

static int check_readable(const char *what, const char *path,
			  const struct kube_origin *at)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return at_err(at, "cannot read %s '%s': %s", what, path,
		      strerror(errno));
}

static int validate(struct kube_config *kc)
{
	struct kube_cluster *c = &kc->cluster;
	struct kube_user *u = &kc->user;

	if (!c->server || !*c->server)
		return at_err(&c->at, "cluster '%s' has no server", c->name);
	if (c->proxy_url && *c->proxy_url) {
		/* client-go's rule and message (clientcmd validation) */
		const char *sep = strstr(c->proxy_url, "://");
		size_t n = sep ? (size_t)(sep - c->proxy_url) : 0;

		if (!n)
			return at_err(&c->proxy_url_at,
				      "invalid 'proxy-url' \"%s\" for cluster "
				      "\"%s\": could not parse: %s",
				      c->proxy_url, c->name, c->proxy_url);
		if (!((n == 4 && !strncasecmp(c->proxy_url, "http", 4)) ||
		      (n == 5 && !strncasecmp(c->proxy_url, "https", 5)) ||
		      (n == 6 && !strncasecmp(c->proxy_url, "socks5", 6))))
			return at_err(&c->proxy_url_at,
				      "invalid 'proxy-url' \"%s\" for cluster "
				      "\"%s\": unsupported scheme \"%.*s\", "
				      "must be http, https, or socks5",
				      c->proxy_url, c->name, (int)n,
				      c->proxy_url);
	}
	if (c->ca_file && c->ca_data.len)
		return at_err(&c->ca_file_at,
			      "cluster '%s' has both certificate-authority "
			      "and certificate-authority-data",
			      c->name);
	if (c->insecure_skip_tls_verify && (c->ca_file || c->ca_data.len))
		return at_err(&c->insecure_at,
			      "cluster '%s' sets insecure-skip-tls-verify "
			      "and a certificate authority",
			      c->name);
	if (c->ca_file &&
	    check_readable("certificate-authority", c->ca_file, &c->ca_file_at))
		return -1;
	if (u->auth_provider) {
		/* gcp and azure left client-go in 1.26; oidc is still there */
		const char *p = u->auth_provider;
		int gone = !strcmp(p, "gcp") || !strcmp(p, "azure");
		const char *hint =
			!strcmp(p, "gcp")
				? "install gke-gcloud-auth-plugin and run "
				  "'gcloud container clusters get-credentials' "
				  "to get an exec plugin entry"
			: !strcmp(p, "azure")
				? "use the kubelogin exec plugin "
				  "('kubelogin convert-kubeconfig')"
			: !strcmp(p, "oidc")
				? "use an exec plugin such as kubelogin "
				  "(kubectl oidc-login)"
				: "use an exec credential plugin";
		return at_err(&u->auth_provider_at,
			      "user '%s' uses auth-provider '%s', %s: %s",
			      u->name, p,
			      gone ? "which kubectl and client-go removed "
				     "in 1.26"
				   : "which gosbx does not support",
			      hint);
	}
	if (!u->impersonate &&
	    (u->impersonate_uid || u->impersonate_groups.nr ||
	     u->impersonate_extra.nr))
		/* kubectl's rule and message */
		return at_err(&u->at,
			      "requesting uid, groups or user-extra for %s "
			      "without impersonating a user",
			      u->name);
	if (u->client_cert_file && u->client_cert_data.len)
		return at_err(&u->client_cert_file_at,
			      "user '%s' has both client-certificate and "
			      "client-certificate-data",
			      u->name);
	if (u->client_key_file && u->client_key_data.len)
		return at_err(&u->client_key_file_at,
			      "user '%s' has both client-key and "
			      "client-key-data",
			      u->name);
	if ((u->client_cert_file || u->client_cert_data.len) !=
	    (u->client_key_file || u->client_key_data.len))
		return at_err(&u->at,
			      "user '%s' needs both a client certificate "
			      "and a client key",
			      u->name);
	if ((u->username || u->password) && (u->token || u->token_file))
		return at_err(&u->basic_at,
			      "user '%s' has both a token and a username/"
			      "password: only one is allowed",
			      u->name);
	if ((u->username || u->password) && u->exec)
		return at_err(&u->basic_at,
			      "user '%s' has both exec and a username/"
			      "password: only one is allowed",
			      u->name);
	if (u->client_cert_file &&
	    check_readable("client-certificate", u->client_cert_file,
			   &u->client_cert_file_at))
		return -1;
	if (u->client_key_file &&
	    check_readable("client-key", u->client_key_file,
			   &u->client_key_file_at))
		return -1;
	if (u->token_file && !u->token &&
	    check_readable("tokenFile", u->token_file, &u->token_file_at))
		return -1;
	return 0;
}

static const char *env_nonempty(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

static int load_in_cluster(struct kube_config *kc, const char *host,
			   const char *port)
{
	const char *dir = env_nonempty("GOSBX_SERVICEACCOUNT_DIR");
	struct strbuf sb = STRBUF_INIT;
	int fd;

	if (!dir)
		dir = SA_DIR;
	kc->in_cluster = 1;
	kc->sources = xstrdup(dir);
	if (strchr(host, ':'))
		strbuf_addf(&sb, "https://[%s]:%s", host, port);
	else
		strbuf_addf(&sb, "https://%s:%s", host, port);
	kc->cluster.server = strbuf_detach(&sb, NULL);
	kc->cluster.name = xstrdup("in-cluster");
	kc->user.name = xstrdup("in-cluster");
	kc->context.name = xstrdup("in-cluster");

	strbuf_addf(&sb, "%s/ca.crt", dir);
	fd = open(sb.buf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		kc->cluster.ca_file = strbuf_detach(&sb, NULL);
	} else {
		warning_errno("in-cluster CA '%s' unreadable; using the "
			      "system CAs",
			      sb.buf);
	}
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s/token", dir);
	kc->user.token_file = strbuf_detach(&sb, NULL);
	if (check_readable("service account token", kc->user.token_file,
			   &kc->user.token_file_at))
		return -1;
	strbuf_addf(&sb, "%s/namespace", dir);
	{
		struct strbuf ns = STRBUF_INIT;
		if (strbuf_read_file(&ns, sb.buf, 0) >= 0) {
			strbuf_trim(&ns);
			if (ns.len)
				kc->namespace = strbuf_detach(&ns, NULL);
		}
		strbuf_release(&ns);
	}
	strbuf_release(&sb);
	if (!kc->namespace)
		kc->namespace = xstrdup("default");
	return 0;
}

static void take_entries(struct kube_config *kc, struct parse *p)
{
	struct kube_cluster *c = NULL;
	struct kube_user *u = NULL;
	if (kc->context.cluster)
		c = find_entry(p, K_CLUSTER, kc->context.cluster);
	if (kc->context.user)
		u = find_entry(p, K_USER, kc->context.user);
	if (c) {
		cluster_release(&kc->cluster);
		kc->cluster = *c;
		memset(c, 0, sizeof(*c));
		c->name = xstrdup("");
		strbuf_init(&c->ca_data, 0);
	}
	if (u) {
		user_release(&kc->user);
		kc->user = *u;
		memset(u, 0, sizeof(*u));
		u->name = xstrdup("");
		strbuf_init(&u->client_cert_data, 0);
		strbuf_init(&u->client_key_data, 0);
		strvec_init(&u->impersonate_groups);
		strvec_init(&u->impersonate_extra);
	}
}

static void kc_init(struct kube_config *kc)
{
	memset(kc, 0, sizeof(*kc));
	strbuf_init(&kc->cluster.ca_data, 0);
	strbuf_init(&kc->user.client_cert_data, 0);
	strbuf_init(&kc->user.client_key_data, 0);
	strvec_init(&kc->user.impersonate_groups);
	strvec_init(&kc->user.impersonate_extra);
	strvec_init(&kc->files);
	kc->state = xcalloc(1, sizeof(*kc->state));
	pthread_mutex_init(&kc->state->lock, NULL);
	strbuf_init(&kc->state->file_token, 0);
	kube_credential_init(&kc->state->cred);
}

int kube_config_load(struct kube_config *kc, const struct kube_load_opts *o)
{
	static const struct kube_load_opts none;
	struct parse p;
	struct strvec paths = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	const char *env, *ctx_name;
	struct kube_context *x;
	size_t i, loaded = 0;
	int r = -1, missing;

	kc_init(kc);
	if (!o)
		o = &none;
	kc->state->exec_timeout_ms =
		o->exec_timeout_ms > 0 ? o->exec_timeout_ms : 30000;
	memset(&p, 0, sizeof(p));
	p.kc = kc;

	if (o->kubeconfig) {
		strvec_push(&paths, o->kubeconfig);
	} else if ((env = env_nonempty("KUBECONFIG"))) {
		const char *s = env;
		while (*s) {
			const char *end = strchrnul(s, ':');
			size_t j;
			if (end > s) {
				char *one = xstrndup(s, end - s);
				for (j = 0; j < paths.nr; j++)
					if (!strcmp(paths.v[j], one))
						break;
				if (j == paths.nr)
					strvec_push(&paths, one);
				free(one);
			}
			s = *end ? end + 1 : end;
		}
	} else if ((env = env_nonempty("HOME"))) {
		strvec_pushf(&paths, "%s/.kube/config", env);
	}

	for (i = 0; i < paths.nr; i++) {
		if (parse_file(&p, paths.v[i], &missing))
			goto out;
		if (missing && o->kubeconfig) {
			error("cannot read kubeconfig '%s': %s", paths.v[i],
			      strerror(ENOENT));
			goto out;
		}
		loaded += !missing;
	}
	for (i = 0; i < kc->files.nr; i++)
		strbuf_addf(&sb, "%s%s", i ? ":" : "", kc->files.v[i]);
	kc->sources = strbuf_detach(&sb, NULL);

	if (!loaded) {
		const char *host = env_nonempty("KUBERNETES_SERVICE_HOST");
		const char *port = env_nonempty("KUBERNETES_SERVICE_PORT");
		if (host && port && !o->context) {
			free(kc->sources);
			kc->sources = NULL;
			r = load_in_cluster(kc, host, port);
			goto out;
		}
		if (o->context)
			error("context '%s' not found: no kubeconfig file "
			      "exists",
			      o->context);
		else
			error("no kubeconfig: set KUBECONFIG or --kubeconfig, "
			      "create ~/.kube/config, or run in a pod with a "
			      "service account");
		goto out;
	}

	ctx_name = o->context ? o->context : p.current;
	if (!ctx_name || !*ctx_name) {
		error("no current context in kubeconfig '%s' (set "
		      "current-context or use --context)",
		      kc->sources);
		goto out;
	}
	x = find_entry(&p, K_CONTEXT, ctx_name);
	if (!x) {
		if (!o->context && p.current_at.file)
			at_err(&p.current_at, "context '%s' not found",
			       ctx_name);
		else
			error("context '%s' not found in kubeconfig '%s'",
			      ctx_name, kc->sources);
		goto out;
	}
	kc->context = *x;
	memset(x, 0, sizeof(*x));
	x->name = xstrdup("");
	if (!kc->context.cluster || !*kc->context.cluster) {
		at_err(&kc->context.at, "context '%s' names no cluster",
		       kc->context.name);
		goto out;
	}
	if (!find_entry(&p, K_CLUSTER, kc->context.cluster)) {
		at_err(&kc->context.cluster_at,
		       "context '%s' names cluster '%s', which is not defined",
		       kc->context.name, kc->context.cluster);
		goto out;
	}
	if (kc->context.user && *kc->context.user &&
	    !find_entry(&p, K_USER, kc->context.user)) {
		at_err(&kc->context.user_at,
		       "context '%s' names user '%s', which is not defined",
		       kc->context.name, kc->context.user);
		goto out;
	}
	take_entries(kc, &p);
	kc->namespace = xstrdup(kc->context.namespace && *kc->context.namespace
					? kc->context.namespace
					: "default");
	r = validate(kc);
out:
	parse_release(&p);
	strvec_clear(&paths);
	strbuf_release(&sb);
	return r;
}

void kube_config_release(struct kube_config *kc)
{
	if (!kc)
		return;
	if (kc->state) {
		strbuf_release(&kc->state->file_token);
		kube_credential_release(&kc->state->cred);
		pthread_mutex_destroy(&kc->state->lock);
		free(kc->state);
	}
	context_release(&kc->context);
	cluster_release(&kc->cluster);
	user_release(&kc->user);
	free(kc->sources);
	free(kc->namespace);
	strvec_clear(&kc->files);
	strbuf_release(&kc->cluster.ca_data);
	strbuf_release(&kc->user.client_cert_data);
	strbuf_release(&kc->user.client_key_data);
	strvec_clear(&kc->user.impersonate_groups);
	strvec_clear(&kc->user.impersonate_extra);
	memset(kc, 0, sizeof(*kc));
}

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
	const char *base = env_nonempty("XDG_CACHE_HOME");
	const char *home = env_nonempty("HOME");
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
		return at_err(&e->at,
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
		return at_err(&kc->user.token_file_at,
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
			return at_err(&kc->user.token_file_at,
				      "cannot read tokenFile '%s': %s", path,
				      strerror(errno));
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
