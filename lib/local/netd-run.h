#ifndef NETD_RUN_H
#define NETD_RUN_H

#include "compat.h"
#include "local/egress.h"
#include "local/modproxy.h"

#include <pthread.h>

/*
 * The server loop of `gosbx netd` (netd.h): what one sandbox's
 * connections to 127.0.0.1:NETD_PORT and DNS queries to 127.0.0.1:53
 * reach, on the host, until the sandbox ends.
 */

/* connections served at once; more are closed at once (and logged) */
#define NETD_MAX_CONNECTIONS 256

struct netd_config {
	/* TCP socket listening in the sandbox's network namespace */
	int listen_fd;
	/* UDP socket bound to 127.0.0.1:53 there, or -1: no DNS */
	int dns_fd;
	/*
	 * A pidfd of the sandbox's bwrap (pidfd_open(2)): netd_run()
	 * returns once it ends. -1: run until killed.
	 */
	int watch_fd;
	/* hosts the sandbox may reach (may be empty: every host denied) */
	struct egress_policy policy;
	/*
	 * 1: serve the GOPROXY protocol under NETD_GOPROXY_PATH from mod,
	 * which netd_run() loads in the background (modproxy_config_load()
	 * of go: `go env` and a probe of the checksum database) so that
	 * the proxy does not wait for it; module requests do
	 */
	int modules;
	const char *go;
	struct modproxy_config mod;
	/* private: the state of mod (0 loading, 1 ready, -1 failed) */
	int mod_state;
	char *mod_why;
	pthread_mutex_t mod_lock;
	pthread_cond_t mod_cond;
};

void netd_config_init(struct netd_config *c);
void netd_config_release(struct netd_config *c);

/*
 * Serve until the sandbox ends (watch_fd readable). Each connection is
 * served by a thread of its own: SOCKS5 and HTTP proxy requests by
 * egress.h, module requests by modproxy.h, the rest answered 404.
 * Returns 0 when the sandbox ended, -1 with error() when the listening
 * socket failed.
 */
int netd_run(struct netd_config *c);

/* What the local backend starts netd with (netd_spawn()). */
struct netd_spawn {
	const char *gosbx;     /* the gosbx binary */
	const char *log_path;  /* the claim's runtime.log */
	int fds[2];	       /* isolate_handle.net_fds: TCP, UDP */
	pid_t sandbox_pid;     /* the sandbox's bwrap */
	const char *allow_net; /* --allow-net list, or NULL */
	int modules;	       /* serve Go modules */
	const char *go;	       /* the go binary that fetches them, or NULL */
};

/*
 * Start `gosbx netd` for a sandbox that was just created: a process of
 * its own (a new session, not our child: nobody has to wait for it),
 * which ends with the sandbox (a pidfd of sandbox_pid). Returns once
 * it has read its options (its "ok" on a pipe): 0, or -1 with error()
 * (its own message is in the log). n->fds stay the caller's.
 */
int netd_spawn(const struct netd_spawn *n);

#endif
