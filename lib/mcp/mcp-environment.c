/*
 * The sandbox's environment in the tools' descriptions
 * (mcp-environment.h).
 */
#include "compat.h"
#include "goenv.h"
#include "mcp/mcp-environment.h"
#include "session/session.h"

#include <sys/stat.h>

/* `go env GOVERSION` of the Go sandboxes get: "go1.26.8", or "" */
static void go_version(const char *want, struct strbuf *out)
{
	struct strbuf go = STRBUF_INIT, v = STRBUF_INIT, why = STRBUF_INIT;
	struct stat st;

	if (want && !stat(want, &st) && S_ISDIR(st.st_mode))
		strbuf_addf(&go, "%s/bin/go", want);
	else
		strbuf_addstr(&go, want ? want : "go");
	if (!goenv_get(go.buf, "GOVERSION", &v, &why) &&
	    starts_with(v.buf, "go"))
		strbuf_addbuf(out, &v);
	strbuf_release(&go);
	strbuf_release(&v);
	strbuf_release(&why);
}

static void describe_go(const struct session_opts *so, unsigned caps,
			struct strbuf *out)
{
	struct strbuf v = STRBUF_INIT;

	if (!(caps & BACKEND_GO)) {
		strbuf_addstr(out, "Go: the Go of the sandbox's image");
		return;
	}
	go_version(so->go, &v);
	if (v.len)
		strbuf_addf(out, "Go: %s", v.buf);
	else
		strbuf_addstr(out, "Go: none found on the host");
	strbuf_release(&v);
	if (so->network || !so->modules_off)
		strbuf_addstr(out, " (a go.mod that asks for a newer Go gets "
				   "it: GOTOOLCHAIN=auto)");
}

static void describe_net(const struct session_opts *so, unsigned caps,
			 struct strbuf *out)
{
	if (!(caps & BACKEND_ALLOW_NET)) {
		strbuf_addstr(out, "; network and Go modules: what the "
				   "cluster's egress policy allows");
		return;
	}
	if (so->network) {
		strbuf_addstr(out, "; network: the host's whole network");
		return;
	}
	if (so->modules_off)
		strbuf_addstr(out, "; Go modules: off (GOPROXY=off: the "
				   "standard library and vendored code only)");
	else
		strbuf_addstr(out, "; Go modules: on (go get, go mod tidy "
				   "and go run fetch public modules through "
				   "the host's checksum-verified cache; "
				   "private ones must be vendored)");
	if (!so->allow_net) {
		strbuf_addstr(out, "; network: none (no host is reachable)");
		return;
	}
	strbuf_addf(out,
		    "; network: only %s, through the proxy that "
		    "HTTP_PROXY/HTTPS_PROXY name (curl, git, pip and npm "
		    "use it: `pip install --user <pkg>` or a venv, "
		    "`npm install <pkg>` work when their registry is on "
		    "that list); other hosts are refused with a message "
		    "naming them",
		    so->allow_net);
}

/* local sandboxes get the session.h defaults; others their template's */
static void describe_limits(const struct mcp_options *o, unsigned caps,
			    struct strbuf *out)
{
	const struct session_opts *so = &o->sandbox;
	int local = !!(caps & BACKEND_GO);
	int64_t mem = so->memory_bytes > 0	   ? so->memory_bytes
		      : !so->memory_bytes && local ? SESSION_DEFAULT_MEMORY
						   : 0;
	double cpus = so->cpus > 0	   ? so->cpus
		      : !so->cpus && local ? SESSION_DEFAULT_CPUS
					   : 0;
	int64_t pids = so->pids > 0	    ? so->pids
		       : !so->pids && local ? SESSION_DEFAULT_PIDS
					    : 0;
	int64_t t = o->call_timeout_ms > 0 ? o->call_timeout_ms : 300000;

	strbuf_addstr(out, "; limits: ");
	if (mem)
		strbuf_addf(out, "%" PRId64 " MiB of memory, ", mem >> 20);
	if (cpus)
		strbuf_addf(out, "%g CPUs, ", cpus);
	if (pids)
		strbuf_addf(out, "%" PRId64 " processes, ", pids);
	strbuf_addf(out, "%" PRId64 " s a command", t / 1000);
}

static void describe(const struct mcp_options *o, struct strbuf *out,
		     int limits)
{
	const struct session_opts *so = &o->sandbox;
	const struct backend_ops *ops =
		backend_lookup(so->backend ? so->backend : "local");
	unsigned caps = ops ? ops->caps : 0;

	strbuf_addstr(out, "\n\nThe sandbox: ");
	/*
	 * url: the one runtime at the server's URL, which gosbx neither
	 * creates nor limits. Say so, where a tool promises a fresh
	 * sandbox with limits (the jobs toolset), rather than let the
	 * promise stand (isolation is never less than told).
	 */
	if (caps & BACKEND_IMPLICIT_SANDBOX) {
		strbuf_addstr(out,
			      "the one runtime at the server's URL, shared "
			      "by every call and job of every client: its "
			      "workdir, network, Go and limits are that "
			      "runtime's own, and no fresh sandbox, memory "
			      "or network limit named above applies there.");
		return;
	}
	describe_go(so, caps, out);
	describe_net(so, caps, out);
	if (limits)
		describe_limits(o, caps, out);
	strbuf_addstr(out, ".");
}

void mcp_describe_environment(const struct mcp_options *o, struct strbuf *out)
{
	describe(o, out, 1);
}

void mcp_describe_environment_nolimits(const struct mcp_options *o,
				       struct strbuf *out)
{
	describe(o, out, 0);
}
