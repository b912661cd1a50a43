#ifndef KUBECONFIG_H
#define KUBECONFIG_H

#include "compat.h"
#include "strbuf.h"
#include "strvec.h"

#include <time.h>

/*
 * kubeconfig and in-cluster configuration for the Kubernetes backend
 * (spec/kubernetes.md "kubeconfig"), parsed with libyaml. Behaviour
 * follows client-go's clientcmd loader:
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
 * Every error names the file and line (STYLE.md "Errors").
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

/* A credential returned by an exec plugin (ExecCredential status). */
struct kube_credential {
	struct strbuf token;	/* "" when none */
	struct strbuf cert_pem; /* clientCertificateData, "" when none */
	struct strbuf key_pem;	/* clientKeyData */
	time_t expiry;		/* expirationTimestamp; 0: none given */
	int cached;		/* 0: plugin ran, 1: memory, 2: disk cache */
};

void kube_credential_init(struct kube_credential *c);
void kube_credential_release(struct kube_credential *c);

/*
 * Get the user's exec plugin credential into out (initialised by the
 * caller; its old contents are replaced). A credential whose
 * expirationTimestamp is more than 60 s ahead is reused from memory,
 * or from $XDG_CACHE_HOME/gosbx/kube-exec/<hash>.json (mode 0600, dir
 * 0700; keyed by server, command, args, env, apiVersion). Otherwise
 * the plugin runs (posix_spawn through lib/exec.h, its own process
 * group) with our environment plus its env and KUBERNETES_EXEC_INFO =
 * {"apiVersion":..,"kind":"ExecCredential","spec":{"interactive":false,
 * "cluster":{...} when provideClusterInfo}} and stdin /dev/null
 * (client.authentication.k8s.io ExecCredential v1 and v1beta1).
 * Thread-safe for one kc.
 *
 * Returns 0, or -1 with error(): no exec plugin, interactiveMode
 * Always, plugin not found / failed (its stderr tail and installHint),
 * killed after the time limit, output not an ExecCredential of the
 * configured apiVersion, neither token nor certificate and key.
 */
int kube_exec_credential(struct kube_config *kc, struct kube_credential *out);

/*
 * Forget the cached exec credential (memory and disk) and the token
 * file contents, e.g. after a 401, so the next call fetches anew.
 */
void kube_config_forget_credential(struct kube_config *kc);

/* What an HTTP client needs to talk to the API server; owns its memory. */
struct kube_auth {
	char *server;			 /* base URL */
	char *ca_file;			 /* or NULL */
	struct strbuf ca_pem;		 /* "" when none */
	char *cert_file, *key_file;	 /* or NULL */
	struct strbuf cert_pem, key_pem; /* "" when none */
	int insecure_skip_verify;
	char *tls_server_name; /* or NULL */
	char *proxy_url;       /* or NULL */
	/*
	 * The transport as client-go's (kube_auth_http_opts() applies
	 * it): url is server with its host replaced by tls_server_name
	 * (https only) and connect_to the http.h entry that still
	 * connects to server's host, else both NULL; proxy is the
	 * proxy-url, else HTTPS_PROXY or HTTP_PROXY of the environment
	 * as Go reads them, "" for none (and always "" for a loopback
	 * server without proxy-url); no_proxy is "" with proxy-url
	 * (client-go ignores NO_PROXY then), else NO_PROXY or NULL.
	 */
	char *url, *connect_to, *proxy, *no_proxy;
	struct strbuf bearer_token; /* "" when none */
	/* "Authorization: Basic ..." and "Impersonate-*: ..." headers */
	struct strvec headers;
	time_t expiry; /* of an exec credential; 0: none */
};

void kube_auth_init(struct kube_auth *a);
void kube_auth_release(struct kube_auth *a);

/*
 * Fill out (initialised by the caller, replaced) with the current
 * credentials of kc: the bearer token (static token; tokenFile re-read
 * whenever the file changed, as projected service-account tokens
 * rotate; or the exec plugin's, see kube_exec_credential()), client
 * certificate and key (files, data, or the plugin's), CA and
 * verification settings. Returns 0, or -1 with error() (token file
 * unreadable, exec plugin failure).
 */
int kube_config_auth(struct kube_config *kc, struct kube_auth *out);

struct http_client_opts;
/*
 * Point the TLS, proxy and bearer-token fields of o (lib/http.h) at
 * a's memory (a must outlive o; http_client_new() copies it). Other
 * fields of o are left alone. Returns the base URL to give
 * http_client_new() with o (a->url or a->server; owned by a).
 */
const char *kube_auth_http_opts(const struct kube_auth *a,
				struct http_client_opts *o);

/*
 * Parse an RFC 3339 timestamp ("2024-05-01T10:00:00Z",
 * "...10:00:00.123+02:00") into seconds since the epoch. 0 or -1.
 */
int kube_parse_rfc3339(const char *s, time_t *out);

#endif /* KUBECONFIG_H */
