#ifndef SANDBOX_LIMITS_H
#define SANDBOX_LIMITS_H

#include "compat.h"
#include "parse-options.h"

/*
 * The limit options of a new sandbox, shared by `gosbx open`,
 * `gosbx exec` (throwaway sandboxes) and `gosbx mcp`, so that they are
 * spelt, documented and checked once (Documentation/technical/design.md
 *"Backends": a limit the user asked for never degrades).
 *
 *	struct limit_args la = LIMIT_ARGS_INIT;
 *	struct option opts[] = { ..., OPT_SANDBOX_LIMITS(&la), OPT_END() };
 *	... parse_options ...
 *	if (limit_args_apply(&la, &session_opts) < 0) return 129;
 */
struct limit_args {
	int64_t memory;	  /* bytes; -1 not given, 0 none */
	const char *cpus; /* decimal CPUs; NULL not given, "0" none */
	int pids;	  /* INT_MIN not given, 0 none */
	int64_t disk;	  /* disk quota in bytes; -1 not given, 0 none */
	int network;
	const char *allow_net; /* --allow-net list; NULL not given */
	const char *modules;   /* "on"/"off"; NULL not given */
	const char *go;	       /* --go; NULL not given */
};

#define LIMIT_ARGS_INIT                                                        \
	{                                                                      \
		-1, NULL, INT_MIN, -1, 0, NULL, NULL, NULL                     \
	}

#define OPT_SANDBOX_LIMITS(la)                                                 \
	OPT_SIZE(0, "memory", &(la)->memory,                                   \
		 "memory limit, e.g. 512m (default 2g, 0: none)"),             \
		OPT_STRING(0, "cpus", &(la)->cpus, "<n>",                      \
			   "CPU limit, e.g. 1.5 (default 2, 0: none)"),        \
		OPT_INT(0, "pids", &(la)->pids,                                \
			"limit of processes (default 512, 0: none)"),          \
		OPT_SIZE(0, "disk", &(la)->disk,                               \
			 "disk quota of /app, /tmp and the Go caches, e.g. "   \
			 "1g (default 2g as root, 0: none)"),                  \
		OPT_STRING(0, "allow-net", &(la)->allow_net,                   \
			   "<host>[:<port>][,...]",                            \
			   "hosts the sandbox may reach through gosbx's "      \
			   "proxy (*.example.org: subdomains)"),               \
		OPT_STRING(0, "modules", &(la)->modules, "<on|off>",           \
			   "Go modules through the host's verified cache "     \
			   "(default on)"),                                    \
		OPT_STRING(0, "go", &(la)->go, "<path>",                       \
			   "the Go of the sandbox: a go binary or a GOROOT "   \
			   "(default the go on PATH)"),                        \
		OPT_BOOL(0, "network", &(la)->network,                         \
			 "UNSAFE: the host's whole network (loopback, LAN, "   \
			 "cloud metadata); prefer --allow-net")

/* True if any limit option was given (network included). */
int limit_args_given(const struct limit_args *la);

struct session_opts;
/*
 * Check the values and store them in o (session.h: 0 = default,
 * <0 = none, *_set when given). Returns 0, or -1 with error() naming
 * the option and the bad value.
 */
int limit_args_apply(const struct limit_args *la, struct session_opts *o);

#endif /* SANDBOX_LIMITS_H */
