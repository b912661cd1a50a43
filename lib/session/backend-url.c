/*
 * The url backend: a runtime server at a base URL (a gosbx-runtime,
 * the upstream Go sandbox-server or agent-sandbox's python runtime).
 * There is no claim to create or delete; the claim name is the URL.
 */
#include "compat.h"
#include "session/doctor.h"
#include "http.h"
#include "session/sandboxd.h"
#include "session/session.h"
#include "usage.h"

static const struct backend_ops backend_url_sandboxd;

static int url_open(struct session *s, const struct session_opts *opts)
{
	const char *url = opts->url ? opts->url : opts->claim;
	struct http_client_opts ho = { 0 };
	const char *path;

	if (!url || !*url) {
		error("the url backend needs a runtime URL (--url or "
		      "GOSBX_URL)");
		return SESSION_BAD_OPTS;
	}
	/* a runtime started with --token-file (gosbx-runtime(1)) */
	if (sandboxd_url(url)) {
		s->ops = &backend_url_sandboxd;
		return sandboxd_open(s, url, opts);
	}
	if (opts->router_token && *opts->router_token)
		ho.bearer_token = opts->router_token;
	if (skip_prefix(url, "unix:", &path)) {
		ho.unix_socket = path;
		s->http = http_client_new("http://localhost", &ho);
	} else {
		s->http = http_client_new(url, &ho);
	}
	if (!s->http)
		return -1;
	s->claim = xstrdup(url);
	return 0;
}

static int url_destroy(struct session *s)
{
	return 0; /* not ours to delete */
}

static int sandboxd_destroy(struct session *s)
{
	sandboxd_close(s);
	return 0; /* not ours to delete */
}

/*
 * The url backend once its URL named a sandboxd server (sandboxd://,
 * session/sandboxd.h): commands through its ProcessService, files
 * through its REST files API; no logs of
 * a runtime (sandboxd_logs() says where they are).
 */
static const struct backend_ops backend_url_sandboxd = {
	.name = "url",
	.caps = BACKEND_IMPLICIT_SANDBOX | BACKEND_FREE_NAMES,
	.open = url_open,
	.run = sandboxd_run,
	.write_files = sandboxd_write_files,
	.push = sandboxd_push,
	.fetch_archive = sandboxd_fetch_archive,
	.get = sandboxd_get,
	.logs = sandboxd_logs,
	.runtime = "sandboxd",
	.proc = &sandboxd_proc_ops,
	.destroy = sandboxd_destroy,
	.detach = sandboxd_close,
	.doctor = doctor_url,
};

const struct backend_ops backend_url = {
	.name = "url",
	.logs = session_http_logs,
	/* the sandbox is the runtime at the URL; its "claim" is the URL */
	.caps = BACKEND_IMPLICIT_SANDBOX | BACKEND_FREE_NAMES |
		BACKEND_BEARER_TOKEN,
	.open = url_open,
	.destroy = url_destroy,
	.doctor = doctor_url,
};
