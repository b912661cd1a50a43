#ifndef MODPROXY_H
#define MODPROXY_H

#include "compat.h"
#include "local/netd.h"
#include "strbuf.h"
#include "strvec.h"

/*
 * modproxy: the Go module proxy a local sandbox reaches as
 * GOPROXY=http://127.0.0.1:NETD_PORT NETD_GOPROXY_PATH (netd.h,
 * Documentation/protocol/network.md "Go modules").
 *
 * It speaks the GOPROXY protocol (https://go.dev/ref/mod#goproxy-protocol)
 * and the checksum database proxy protocol
 * (https://go.dev/ref/mod#checksum-database), nothing else:
 *
 *   <module>/@v/list                 the known versions, one a line
 *   <module>/@latest                 the .info of the latest version
 *   <module>/@v/<version>.info       {"Version":..., "Time":...}
 *   <module>/@v/<version>.mod        the go.mod of that version
 *   <module>/@v/<version>.zip        the module zip
 *   sumdb/<name>/supported           200 when <name> is the GOSUMDB
 *   sumdb/<name>/lookup/<module>@<version>
 *   sumdb/<name>/tile/8/<L>/<N>[.p/<W>]
 *   sumdb/<name>/latest
 *
 * where <module> and <version> are escaped as the go command escapes
 * them (golang.org/x/mod/module EscapePath: an upper-case letter is '!'
 * and its lower-case form) and may be percent-encoded as the go command
 * sends them ('!' as "%21": net/url PathEscape); both are decoded once
 * and then validated strictly, by the rules of golang.org/x/mod/module
 * CheckPath and of canonical semantic versions.
 *
 * What it never does is fetch or verify anything itself: a module
 * version is fetched by the host's go command (`go mod download`, `go
 * list -m`), through the user's GOPROXY, with the user's GOSUMDB
 * verifying it, into a module cache of the host (cache_dir) that no
 * sandbox can write; modproxy then serves the files of that cache. The
 * go command in the sandbox verifies again, against its go.sum and
 * through the checksum database requests relayed here. A sandbox can
 * make the host fetch public module versions it names, and the
 * checksum database answers for the documented request shapes: no
 * other URL.
 *
 * Threads: modproxy_serve() runs in a thread per connection; every
 * function may be called from several threads at once with the same
 * config (read only once loaded). At most MODPROXY_MAX_GO go commands
 * run at once; more requests wait for their turn.
 *
 * Each request is logged (log.h) as msg=module with via=goproxy,
 * module and version (of a checksum database request: "sumdb/<name>"
 * and the path under it), result (hit: served from the cache or
 * without asking anyone; fetched: the go command or the checksum
 * database was asked; denied; error), why (for denied and error),
 * target (the first 200 bytes of a request that names no module),
 * bytes (of the body sent) and ms (how long it took).
 */

/* how long one go command may run, ms; then its process group is killed */
#define MODPROXY_GO_TIMEOUT_MS (5 * 60 * 1000)
/* most go commands run at once by one process */
#define MODPROXY_MAX_GO 8
/* the longest request path after NETD_GOPROXY_PATH "/", bytes */
#define MODPROXY_PATH_MAX 1024
/*
 * most bytes of a checksum database answer relayed (the largest, a
 * data tile of 256 records, is about 80 KiB)
 */
#define MODPROXY_SUMDB_MAX ((size_t)1 << 20)
/* time limit of a checksum database request, ms */
#define MODPROXY_SUMDB_TIMEOUT_MS 60000
/* how long a sandbox may take to read each part of an answer, ms */
#define MODPROXY_WRITE_TIMEOUT_MS 60000

struct modproxy_config {
	/* the go binary the host side runs (an absolute path once loaded) */
	char *go;
	/*
	 * GOMODCACHE of the shared cache:
	 * <XDG_CACHE_HOME or ~/.cache>/gosbx/gomod, created 0700
	 */
	char *cache_dir;
	/*
	 * "K=V" strings, the whole environment of every go command run
	 * but for GOMODCACHE, GOFLAGS=-mod=mod, GOTOOLCHAIN=local,
	 * GOWORK=off and GO111MODULE=on: the user's module settings as
	 * `go env` reports them (GOPROXY, GOSUMDB, GOPRIVATE, GONOPROXY,
	 * GONOSUMDB, GOINSECURE, GOAUTH, GOVCS, GOENV; those that are not
	 * empty), then PATH and HOME (the real one: netrc, git config)
	 * and what of the caller's environment the go command needs to
	 * reach the registries (http_proxy, https_proxy, no_proxy in both
	 * cases, SSL_CERT_FILE, SSL_CERT_DIR), when set.
	 */
	struct strvec env;
	/*
	 * Where checksum database requests go, without trailing '/': the
	 * URL of GOSUMDB when it names one; else "<GOPROXY entry>/sumdb/
	 * <name>" of the first http(s) entry of GOPROXY that answers 200
	 * to ".../supported" (the go command's own rule, cmd/go
	 * internal/modfetch/sumdb.go; an entry that cannot be reached is
	 * kept, as the go command would fail rather than go on); else
	 * "https://<name>". NULL when GOSUMDB is off.
	 */
	char *sumdb_upstream;
};

void modproxy_config_init(struct modproxy_config *c);
void modproxy_config_release(struct modproxy_config *c);

/*
 * Fill c from `<go> env -json GOPROXY GOSUMDB GOPRIVATE GONOPROXY
 * GONOSUMDB GOINSECURE GOAUTH GOVCS GOENV` run with the caller's
 * environment (so that `go env -w` settings count; GOTOOLCHAIN=local,
 * in an empty directory), find c->sumdb_upstream (which may ask the
 * GOPROXY over the network, at most 10 s) and create the cache
 * directory. go: the go binary, looked up on PATH when it holds no
 * '/'. cache_dir: NULL for the default above. Returns 0, or -1 with
 * error() (go not found or failing, cache directory not creatable).
 *
 * GOPROXY=off or GOSUMDB=off are kept as the user has them: with
 * GOPROXY=off every module request answers 404 "gosbx: the host's
 * GOPROXY is off"; with GOSUMDB=off every checksum database request
 * answers 404.
 */
int modproxy_config_load(struct modproxy_config *c, const char *go,
			 const char *cache_dir);

/*
 * Serve one request whose head netd read (h->target starts with
 * NETD_GOPROXY_PATH "/"): answers on fd with a complete response and
 * "Connection: close", and does not close fd. GET and HEAD only (else
 * 405); a path modproxy_parse_path() refuses: 400; a private module, a
 * GOPROXY or GOSUMDB that is off, another checksum database: 404; a
 * version the go command cannot fetch: 404 with its error (first line
 * in the reason phrase, all of it in the body, which the go command
 * shows); the checksum database unreachable: 502. A request body is
 * not read. Never fails: a peer that is gone, or does not read for
 * MODPROXY_WRITE_TIMEOUT_MS, just ends the answer.
 */
void modproxy_serve(const struct modproxy_config *c, int fd,
		    const struct netd_head *h);

/* What a request asks for (modproxy_parse_path()). */
enum modproxy_kind {
	MODPROXY_LIST,		  /* <module>/@v/list */
	MODPROXY_LATEST,	  /* <module>/@latest */
	MODPROXY_INFO,		  /* <module>/@v/<version>.info */
	MODPROXY_MOD,		  /* <module>/@v/<version>.mod */
	MODPROXY_ZIP,		  /* <module>/@v/<version>.zip */
	MODPROXY_SUMDB_SUPPORTED, /* sumdb/<name>/supported */
	MODPROXY_SUMDB_LOOKUP,	  /* sumdb/<name>/lookup/<mod>@<ver> */
	MODPROXY_SUMDB_TILE,	  /* sumdb/<name>/tile/... */
	MODPROXY_SUMDB_LATEST,	  /* sumdb/<name>/latest */
};

/*
 * Parse a request path: what follows NETD_GOPROXY_PATH "/" in the
 * request-target, as sent (percent-encoded or not; it is decoded once).
 * At most MODPROXY_PATH_MAX bytes; no query, no "." or ".." segment,
 * no control byte.
 *
 * For the module kinds, module gets the module path unescaped
 * ("github.com/BurntSushi/toml") and version the version unescaped
 * ("v1.4.0-RC1"; "" for list and latest). A version is a canonical
 * semantic version (pseudo-versions are) with "+incompatible" allowed
 * from v2 on; an .info request may also name a query the go command
 * resolves (a branch or tag name, a commit hash: letters, digits, '.',
 * '_', '-', at most 128 bytes, starting with a letter or digit).
 *
 * For the sumdb kinds, module gets the database name and version the
 * path under it, to append to sumdb_upstream: "supported", "latest",
 * "lookup/<escaped module>@<escaped version>" (both validated as
 * above, and re-escaped), "tile/8/<L>/<N>[.p/<W>]" (the tile path
 * grammar of golang.org/x/mod/sumdb/tlog: height 8, level 0-9 or
 * "data", the index in groups of three digits, all but the last with
 * a leading 'x', at most 7 groups; a partial width 1-255).
 *
 * Returns 0, or -1 with a short message in why (appended) such as
 * "invalid char ':' in first path element"; module and version are
 * replaced, not appended to.
 */
int modproxy_parse_path(const char *path, struct strbuf *module,
			struct strbuf *version, enum modproxy_kind *kind,
			struct strbuf *why);

#endif /* MODPROXY_H */
