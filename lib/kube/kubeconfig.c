#include "compat.h"
#include "kube/kubeconfig.h"
#include "kube/kube-credentials.h"
#include "json.h"
#include "usage.h"

#include <fcntl.h>
#include <pthread.h>
#include <strings.h>
#include <yaml.h>

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define EXEC_V1 "client.authentication.k8s.io/v1"
#define EXEC_V1BETA1 "client.authentication.k8s.io/v1beta1"

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

int kube_at_err(const struct kube_origin *at, const char *fmt, ...)
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
	return kube_at_err(at, "cannot read %s '%s': %s", what, path,
			   strerror(errno));
}

static int validate(struct kube_config *kc)
{
	struct kube_cluster *c = &kc->cluster;
	struct kube_user *u = &kc->user;

	if (!c->server || !*c->server)
		return kube_at_err(&c->at, "cluster '%s' has no server",
				   c->name);
	if (c->proxy_url && *c->proxy_url) {
		/* client-go's rule and message (clientcmd validation) */
		const char *sep = strstr(c->proxy_url, "://");
		size_t n = sep ? (size_t)(sep - c->proxy_url) : 0;

		if (!n)
			return kube_at_err(
				&c->proxy_url_at,
				"invalid 'proxy-url' \"%s\" for cluster "
				"\"%s\": could not parse: %s",
				c->proxy_url, c->name, c->proxy_url);
		if (!((n == 4 && !strncasecmp(c->proxy_url, "http", 4)) ||
		      (n == 5 && !strncasecmp(c->proxy_url, "https", 5)) ||
		      (n == 6 && !strncasecmp(c->proxy_url, "socks5", 6))))
			return kube_at_err(
				&c->proxy_url_at,
				"invalid 'proxy-url' \"%s\" for cluster "
				"\"%s\": unsupported scheme \"%.*s\", "
				"must be http, https, or socks5",
				c->proxy_url, c->name, (int)n, c->proxy_url);
	}
	if (c->ca_file && c->ca_data.len)
		return kube_at_err(
			&c->ca_file_at,
			"cluster '%s' has both certificate-authority "
			"and certificate-authority-data",
			c->name);
	if (c->insecure_skip_tls_verify && (c->ca_file || c->ca_data.len))
		return kube_at_err(&c->insecure_at,
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
		return kube_at_err(&u->auth_provider_at,
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
		return kube_at_err(
			&u->at,
			"requesting uid, groups or user-extra for %s "
			"without impersonating a user",
			u->name);
	if (u->client_cert_file && u->client_cert_data.len)
		return kube_at_err(&u->client_cert_file_at,
				   "user '%s' has both client-certificate and "
				   "client-certificate-data",
				   u->name);
	if (u->client_key_file && u->client_key_data.len)
		return kube_at_err(&u->client_key_file_at,
				   "user '%s' has both client-key and "
				   "client-key-data",
				   u->name);
	if ((u->client_cert_file || u->client_cert_data.len) !=
	    (u->client_key_file || u->client_key_data.len))
		return kube_at_err(&u->at,
				   "user '%s' needs both a client certificate "
				   "and a client key",
				   u->name);
	if ((u->username || u->password) && (u->token || u->token_file))
		return kube_at_err(&u->basic_at,
				   "user '%s' has both a token and a username/"
				   "password: only one is allowed",
				   u->name);
	if ((u->username || u->password) && u->exec)
		return kube_at_err(&u->basic_at,
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

const char *kube_env_nonempty(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

static int load_in_cluster(struct kube_config *kc, const char *host,
			   const char *port)
{
	const char *dir = kube_env_nonempty("GOSBX_SERVICEACCOUNT_DIR");
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
	} else if ((env = kube_env_nonempty("KUBECONFIG"))) {
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
	} else if ((env = kube_env_nonempty("HOME"))) {
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
		const char *host = kube_env_nonempty("KUBERNETES_SERVICE_HOST");
		const char *port = kube_env_nonempty("KUBERNETES_SERVICE_PORT");
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
			kube_at_err(&p.current_at, "context '%s' not found",
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
		kube_at_err(&kc->context.at, "context '%s' names no cluster",
			    kc->context.name);
		goto out;
	}
	if (!find_entry(&p, K_CLUSTER, kc->context.cluster)) {
		kube_at_err(
			&kc->context.cluster_at,
			"context '%s' names cluster '%s', which is not defined",
			kc->context.name, kc->context.cluster);
		goto out;
	}
	if (kc->context.user && *kc->context.user &&
	    !find_entry(&p, K_USER, kc->context.user)) {
		kube_at_err(
			&kc->context.user_at,
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
