#ifndef KUBECONFIG_H
#define KUBECONFIG_H

#include "compat.h"
#include "strbuf.h"
#include "strvec.h"

/*
 * kubeconfig and in-cluster configuration for the Kubernetes backend
 * (Documentation/protocol/kubernetes.md "kubeconfig"), parsed with libyaml.
 * Behaviour follows client-go's clientcmd loader:
 *
 *  - files: opts->kubeconfig, else every existing file of $KUBECONFIG
 *    (colon-separated; missing ones skipped), else ~/.kube/config;
 *    when none exists (and no path was forced) and
 *    KUBERNETES_SERVICE_HOST/PORT are set: the in-cluster config;
 *  - merge: the first file to define a cluster, user or context name
 *    wins; current-context comes from the first file that sets it;
 *  - relative paths (certificate-authority, client-certificate,
 *    client-key, tokenFile, an exec command holding a '/') resolve
 *    against the directory of the file that names them.
 *
 * Stricter than client-go on purpose: unknown fields at the top level
 * and in cluster, user, context and exec entries are errors (a typo
 * must not silently drop a CA), e.g.
 *   cannot read kubeconfig '/home/a/.kube/config': line 3: unknown
 *   field 'clsuters'
 * Every error names the file and line (Documentation/technical/style.md
 * "Errors").
 */

/* Where a value came from: file (owned by the kube_config) and line. */
struct kube_origin {
	const char *file; /* NULL: not set, or not from a file */
	int line;	  /* 1-based */
};

struct kube_exec_config {
	char *command;	    /* PATH-searched, or resolved if it holds '/' */
	struct strvec args; /* arguments after the command */
	struct strvec env;  /* "NAME=value", added to our environment */
	/* client.authentication.k8s.io/v1 or .../v1beta1 */
	char *api_version;
	char *install_hint;	  /* shown when the plugin fails; or NULL */
	int provide_cluster_info; /* pass the cluster in KUBERNETES_EXEC_INFO */
	char *interactive_mode;	  /* "Never", "IfAvailable", "Always", NULL */
	struct kube_origin at;	  /* the "exec:" key */
};

struct kube_cluster {
	char *name;
	struct kube_origin at;
	char *server;
	struct kube_origin server_at;
	char *tls_server_name;
	struct kube_origin tls_server_name_at;
	char *ca_file; /* certificate-authority, absolute */
	struct kube_origin ca_file_at;
	struct strbuf ca_data; /* certificate-authority-data, decoded PEM */
	struct kube_origin ca_data_at;
	int insecure_skip_tls_verify;
	struct kube_origin insecure_at;
	char *proxy_url;
	struct kube_origin proxy_url_at;
	int disable_compression;
};

struct kube_user {
	char *name;
	struct kube_origin at;
	char *client_cert_file;
	struct kube_origin client_cert_file_at;
	struct strbuf client_cert_data; /* decoded PEM */
	struct kube_origin client_cert_data_at;
	char *client_key_file;
	struct kube_origin client_key_file_at;
	struct strbuf client_key_data; /* decoded PEM */
	struct kube_origin client_key_data_at;
	char *token;
	struct kube_origin token_at;
	char *token_file; /* absolute */
	struct kube_origin token_file_at;
	char *username, *password; /* basic authentication */
	struct kube_origin basic_at;
	char *impersonate;		  /* "as" */
	struct strvec impersonate_groups; /* "as-groups" */
	char *impersonate_uid;		  /* "as-uid" */
	struct strvec impersonate_extra;  /* "as-user-extra": "key=value" */
	char *auth_provider;		  /* its name; refused when used */
	struct kube_origin auth_provider_at;
	struct kube_exec_config *exec; /* NULL: no exec plugin */
};

struct kube_context {
	char *name;
	struct kube_origin at;
	char *cluster;
	struct kube_origin cluster_at;
	char *user;
	struct kube_origin user_at;
	char *namespace;
	struct kube_origin namespace_at;
};

struct kube_config_state;

/* The resolved configuration: one context, its cluster and user. */
struct kube_config {
	int in_cluster; /* from the pod's service account */
	char *sources;	/* the files read, ':'-joined (messages) */
	struct kube_context context;
	struct kube_cluster cluster;
	struct kube_user user;
	char *namespace;     /* context's, in-cluster file's, or "default" */
	struct strvec files; /* owns the origin file names */
	struct kube_config_state *state; /* token and credential caches */
};

struct kube_load_opts {
	const char *kubeconfig; /* --kubeconfig: only this file; or NULL */
	const char *context;	/* --context: instead of current-context */
	/* exec plugin time limit in ms; 0: 30000 */
	int64_t exec_timeout_ms;
};

/*
 * Load and resolve the configuration into kc (which needs no prior
 * init; release it with kube_config_release() whatever the result).
 * o may be NULL. Environment: KUBECONFIG, HOME, KUBERNETES_SERVICE_HOST,
 * KUBERNETES_SERVICE_PORT, GOSBX_SERVICEACCOUNT_DIR (instead of
 * /var/run/secrets/kubernetes.io/serviceaccount, for tests).
 *
 * Returns 0, or -1 with error(): unreadable file, YAML syntax error,
 * unknown field, bad base64, duplicate name in one file, no current
 * context, context/cluster/user not found, cluster without server,
 * conflicting settings (CA file and data; insecure with a CA; token
 * with basic auth), a referenced file unreadable, an exec apiVersion
 * other than v1/v1beta1, an auth-provider (gcp, oidc...: removed from
 * client-go; the message says to use gke-gcloud-auth-plugin or
 * kubelogin).
 */
int kube_config_load(struct kube_config *kc, const struct kube_load_opts *o);

/* Free everything kc holds (it is zeroed; NULL fields are fine). */
void kube_config_release(struct kube_config *kc);

/*
 * Internal to lib/kube/kubeconfig.c and lib/kube/kube-credentials.c.
 *
 * kube_at_err(): report an error about the value at at: error() with
 * "kubeconfig '<file>': line <n>: " before the printf-style message
 * when at names a file, else the message alone. Returns -1.
 *
 * kube_env_nonempty(): the value of the environment variable name,
 * or NULL when it is unset or empty (points into the environment).
 */
int kube_at_err(const struct kube_origin *at, const char *fmt, ...)
	PRINTF_LIKE(2, 3);
const char *kube_env_nonempty(const char *name);

#endif /* KUBECONFIG_H */
