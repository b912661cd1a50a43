#ifndef SESSION_SANDBOXD_H
#define SESSION_SANDBOXD_H

#include "session/session.h"

/*
 * The url backend's second server: agent-sandbox's sandboxd (v1.0.3,
 * packages/sandboxd; KEP-539.2), reached at
 *
 *	sandboxd://<host>[:<grpc_port>][?rest=<rest_port>]
 *
 * (GOSBX_URL, --url): its gRPC ProcessService at <host>:<grpc_port>
 * (default 9090) and its REST API at http://<host>:<rest_port>
 * (default 8080), upstream's ports (clients/go/sandbox options.go).
 * Commands run through ProcessService.Start (lib/proto/grpc-client.h).
 */

/* The URL names a sandboxd server (starts with "sandboxd://"). */
int sandboxd_url(const char *url);

/*
 * The url backend's open for a sandboxd URL: parse it, connect to the
 * gRPC port and check the REST API's GET /v1/health. Sets s->backend
 * (freed by sandboxd_close()), s->http (the REST API), s->claim.
 * Returns 0, SESSION_BAD_OPTS for a malformed URL, or -1 with error().
 */
int sandboxd_open(struct session *s, const char *url,
		  const struct session_opts *opts);

/*
 * Run e->command (sh -c, with e->env, e->cwd, e->stdin_data) through
 * ProcessService.Start: its stdout and stderr events to e->on_output
 * and res as they come, its exit event into res. e->timeout_ms passing
 * sends SIGKILL (reason "timeout"); *e->cancel set sends SIGINT
 * (SendSignal) and returns 1. Returns 0 when the command ran, -1 with
 * error() when it could not (the server's status, a broken connection).
 */
int sandboxd_run(struct session *s, const struct session_exec *e,
		 struct session_result *res);

/* Free what sandboxd_open() set in s->backend. */
void sandboxd_close(struct session *s);

#endif
