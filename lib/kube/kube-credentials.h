#ifndef KUBE_CREDENTIALS_H
#define KUBE_CREDENTIALS_H

#include "compat.h"
#include "strbuf.h"
#include "strvec.h"

#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

/*
 * Credentials for the Kubernetes backend from a loaded kubeconfig
 * (lib/kube/kubeconfig.h): exec credential plugins and their caches,
 * token files, and what an HTTP client needs to talk to the API server.
 */

struct kube_config;

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
 * The token and credential caches of a kube_config (kc->state),
 * internal to lib/kube/kubeconfig.c (which allocates and frees it)
 * and lib/kube/kube-credentials.c (which fills it, under lock).
 */
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

#endif /* KUBE_CREDENTIALS_H */
