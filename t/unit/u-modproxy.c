#include "compat.h"
#include "dir.h"
#include "local/modproxy.h"
#include "local/netd.h"
#include "log.h"
#include "strbuf.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <setjmp.h>
#include <cmocka.h>

/*
 * Unit tests of lib/local/modproxy.c: the request path grammar
 * (modproxy_parse_path()) on what the go command sends and on hostile
 * paths, then modproxy_serve() over a socketpair with a stand-in go
 * command (a shell script): refusals, answers from the cache, a fetch,
 * the go command's error, and the environment it runs in. The real go
 * command and the real registries are t7110's.
 */

/* ---- modproxy_parse_path() */

struct good {
	const char *path;
	enum modproxy_kind kind;
	const char *module, *version;
};

static const struct good good_paths[] = {
	{ "golang.org/x/text/@v/list", MODPROXY_LIST, "golang.org/x/text", "" },
	{ "golang.org/x/text/@latest", MODPROXY_LATEST, "golang.org/x/text",
	  "" },
	{ "golang.org/x/text/@v/v0.20.0.info", MODPROXY_INFO,
	  "golang.org/x/text", "v0.20.0" },
	/* the go command sends '!' percent-encoded (net/url PathEscape) */
	{ "github.com/%21burnt%21sushi/toml/@v/v1.4.0.mod", MODPROXY_MOD,
	  "github.com/BurntSushi/toml", "v1.4.0" },
	{ "github.com/!burnt!sushi/toml/@v/v1.4.0-!r!c1.zip", MODPROXY_ZIP,
	  "github.com/BurntSushi/toml", "v1.4.0-RC1" },
	{ "github.com/docker/docker/@v/v28.0.1+incompatible.zip", MODPROXY_ZIP,
	  "github.com/docker/docker", "v28.0.1+incompatible" },
	{ "golang.org/x/tools/@v/"
	  "v0.21.1-0.20240508182429-e35e4ccd0d2d.mod",
	  MODPROXY_MOD, "golang.org/x/tools",
	  "v0.21.1-0.20240508182429-e35e4ccd0d2d" },
	{ "example.com/m/@v/v1.2.3-pre.0.20191109021931-daa7c04131f5.info",
	  MODPROXY_INFO, "example.com/m",
	  "v1.2.3-pre.0.20191109021931-daa7c04131f5" },
	{ "golang.org/toolchain/@v/v0.0.1-go1.26.0.linux-amd64.zip",
	  MODPROXY_ZIP, "golang.org/toolchain", "v0.0.1-go1.26.0.linux-amd64" },
	{ "gopkg.in/yaml.v3/@v/v3.0.1.info", MODPROXY_INFO, "gopkg.in/yaml.v3",
	  "v3.0.1" },
	{ "github.com/x/y/v2/@v/v2.1.0.mod", MODPROXY_MOD, "github.com/x/y/v2",
	  "v2.1.0" },
	{ "example.com/a_b~c-d.e/@v/v0.0.0.info", MODPROXY_INFO,
	  "example.com/a_b~c-d.e", "v0.0.0" },
	/* queries the go command resolves, for .info only */
	{ "golang.org/x/text/@v/master.info", MODPROXY_INFO,
	  "golang.org/x/text", "master" },
	{ "golang.org/x/text/@v/e35e4ccd0d2d.info", MODPROXY_INFO,
	  "golang.org/x/text", "e35e4ccd0d2d" },
	{ "sumdb/sum.golang.org/supported", MODPROXY_SUMDB_SUPPORTED,
	  "sum.golang.org", "supported" },
	{ "sumdb/sum.golang.org/latest", MODPROXY_SUMDB_LATEST,
	  "sum.golang.org", "latest" },
	{ "sumdb/sum.golang.org/lookup/github.com/%21burnt%21sushi/"
	  "toml@v1.4.0",
	  MODPROXY_SUMDB_LOOKUP, "sum.golang.org",
	  "lookup/github.com/!burnt!sushi/toml@v1.4.0" },
	{ "sumdb/sum.golang.org/lookup/golang.org/toolchain@"
	  "v0.0.1-go1.26.0.linux-amd64",
	  MODPROXY_SUMDB_LOOKUP, "sum.golang.org",
	  "lookup/golang.org/toolchain@v0.0.1-go1.26.0.linux-amd64" },
	{ "sumdb/sum.golang.org/tile/8/0/x277/562", MODPROXY_SUMDB_TILE,
	  "sum.golang.org", "tile/8/0/x277/562" },
	{ "sumdb/sum.golang.org/tile/8/1/x001/084.p/13", MODPROXY_SUMDB_TILE,
	  "sum.golang.org", "tile/8/1/x001/084.p/13" },
	{ "sumdb/sum.golang.org/tile/8/data/x001/234", MODPROXY_SUMDB_TILE,
	  "sum.golang.org", "tile/8/data/x001/234" },
	{ "sumdb/sum.golang.org/tile/8/3/000.p/255", MODPROXY_SUMDB_TILE,
	  "sum.golang.org", "tile/8/3/000.p/255" },
};

static void test_parse_good(void **state)
{
	struct strbuf mod = STRBUF_INIT, ver = STRBUF_INIT, why = STRBUF_INIT;
	size_t i;

	/* stale contents are replaced, not appended to */
	strbuf_addstr(&mod, "stale");
	strbuf_addstr(&ver, "stale");
	for (i = 0; i < ARRAY_SIZE(good_paths); i++) {
		const struct good *g = &good_paths[i];
		enum modproxy_kind kind;
		int r = modproxy_parse_path(g->path, &mod, &ver, &kind, &why);

		if (r)
			print_message("%s: %s\n", g->path, why.buf);
		assert_int_equal(r, 0);
		assert_int_equal(kind, g->kind);
		assert_string_equal(mod.buf, g->module);
		assert_string_equal(ver.buf, g->version);
	}
	strbuf_release(&mod);
	strbuf_release(&ver);
	strbuf_release(&why);
}

static const char *const bad_paths[] = {
	"",
	"golang.org/x/text",
	"golang.org/x/text/@v/",
	"golang.org/x/text/@v/list/",
	"/golang.org/x/text/@v/list",
	"golang.org//x/@v/list",
	/* dot segments, plain and percent-encoded in any case */
	"../etc/passwd/@v/list",
	"golang.org/../x/@v/list",
	"golang.org/x/text/@v/../../x.info",
	"golang.org/x/text/@v/v1.0.0.zip/../../x",
	"%2e%2e/%2E%2E/etc/@v/list",
	"..%2f..%2fetc/@v/list",
	"golang.org/x/./text/@v/list",
	"./golang.org/x/@v/list",
	"golang.org/x/text/@v/.info",
	/* no double decoding: "%252e" is "%2e", and '%' is no path byte */
	"golang.org/%252e%252e/@v/list",
	"golang.org/x/%zz/@v/list",
	"golang.org/x/%2/@v/list",
	"golang.org/x/text%",
	/* control bytes, NUL, spaces, non-ASCII */
	"golang.org/x/%00/@v/list",
	"golang.org/x/te\001xt/@v/list",
	"golang.org/x/%0a/@v/list",
	"golang.org/x/a%20b/@v/list",
	"golang.org/x/%c3%a9/@v/list",
	"golang.org/x/\xc3\xa9/@v/list",
	/* absolute URLs, queries, fragments, '@' and '\\' */
	"http://evil.example/x/@v/list",
	"//evil.example/x/@v/list",
	"golang.org/x/text/@v/list?x=1",
	"golang.org/x/text/@v/list#x",
	"golang.org/x/text@v1.0.0/@v/list",
	"golang.org/x\\text/@v/list",
	/* module path rules of golang.org/x/mod/module CheckPath */
	"-x.example/y/@v/list",
	".x.example/y/@v/list",
	"x.example./y/@v/list",
	"localhost/y/@v/list",
	"x_y.example/z/@v/list",
	"x.example/y./@v/list",
	"x.example/.y/@v/list",
	"x.example/con/@v/list",
	"x.example/lpt1.txt/@v/list",
	"x.example/abc~1/@v/list",
	"golang.org/x/text/v1/@v/list",
	"golang.org/x/text/v0/@v/list",
	"golang.org/x/text/v02/@v/list",
	"golang.org/x/text/v2.1/@v/list",
	"gopkg.in/yaml/@v/list",
	"gopkg.in/yaml.v01/@v/list",
	/* upper case must be escaped; '!' must escape a lower-case letter */
	"github.com/BurntSushi/toml/@v/list",
	"EXAMPLE.com/x/@v/list",
	"%21example.com/x/@v/list",
	"github.com/!!x/@v/list",
	"github.com/x!/@v/list",
	"github.com/!1/@v/list",
	"golang.org/x/text/@v/V1.0.0.zip",
	/* versions: canonical only, but for the query of an .info */
	"golang.org/x/text/@v/-v1.0.0.info",
	"golang.org/x/text/@v/v1.0.zip",
	"golang.org/x/text/@v/v1.zip",
	"golang.org/x/text/@v/v01.0.0.zip",
	"golang.org/x/text/@v/v1.00.0.mod",
	"golang.org/x/text/@v/1.0.0.mod",
	"golang.org/x/text/@v/v1.0.0-.mod",
	"golang.org/x/text/@v/v1.0.0-01.mod",
	"golang.org/x/text/@v/v1.0.0-a..b.mod",
	"golang.org/x/text/@v/v1.0.0+meta.zip",
	"golang.org/x/text/@v/v1.0.0+incompatible.zip",
	"golang.org/x/text/@v/v1.0.0.exe",
	"golang.org/x/text/@v/v1.0.0",
	"golang.org/x/text/@v/master.zip",
	"golang.org/x/text/@v/a/b.info",
	"golang.org/x/text/@v/_x.info",
	"golang.org/x/text/@v/x%2fy.info",
	"golang.org/x/text/@latest/x",
	"golang.org/x/text/@v/listx",
	/* the checksum database: its documented shapes only */
	"sumdb/sum.golang.org",
	"sumdb/sum.golang.org/",
	"sumdb//latest",
	"sumdb/-x/latest",
	"sumdb/sum.golang.org/http://x",
	"sumdb/sum.golang.org/../../etc/passwd",
	"sumdb/sum.golang.org/lookup",
	"sumdb/sum.golang.org/lookup/golang.org/x/text",
	"sumdb/sum.golang.org/lookup/golang.org/x/text@master",
	"sumdb/sum.golang.org/lookup/golang.org/x/text@v1.0.0@v1.0.0",
	"sumdb/sum.golang.org/lookup/../x@v1.0.0",
	"sumdb/sum.golang.org/tile/9/0/000",
	"sumdb/sum.golang.org/tile/8/10/000",
	"sumdb/sum.golang.org/tile/8/a/000",
	"sumdb/sum.golang.org/tile/8/0/0000",
	"sumdb/sum.golang.org/tile/8/0/00",
	"sumdb/sum.golang.org/tile/8/0/x1/000",
	"sumdb/sum.golang.org/tile/8/0/x001",
	"sumdb/sum.golang.org/tile/8/0/000/",
	"sumdb/sum.golang.org/tile/8/0/000.p",
	"sumdb/sum.golang.org/tile/8/0/000.p/",
	"sumdb/sum.golang.org/tile/8/0/000.p/0",
	"sumdb/sum.golang.org/tile/8/0/000.p/07",
	"sumdb/sum.golang.org/tile/8/0/000.p/256",
	"sumdb/sum.golang.org/tile/8/0/000.p/1000",
	"sumdb/sum.golang.org/tile/8/0/000.p/1/x",
	"sumdb/sum.golang.org/tile/8/0/x000/x000/x000/x000/x000/x000/x000/000",
	"sumdb/sum.golang.org/tile/8/data/000.p/-1",
	"sumdb/sum.golang.org/tiles/8/0/000",
	"sumdb/sum.golang.org/latest/x",
	"sumdb/sum.golang.org/supportedx",
};

static void test_parse_hostile(void **state)
{
	struct strbuf mod = STRBUF_INIT, ver = STRBUF_INIT, why = STRBUF_INIT;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad_paths); i++) {
		enum modproxy_kind kind;

		strbuf_reset(&why);
		if (!modproxy_parse_path(bad_paths[i], &mod, &ver, &kind, &why))
			print_message("accepted: '%s'\n", bad_paths[i]);
		assert_int_equal(modproxy_parse_path(bad_paths[i], &mod, &ver,
						     &kind, &why),
				 -1);
		if (!why.len)
			print_message("no reason: '%s'\n", bad_paths[i]);
		assert_true(why.len > 0);
		assert_int_equal(mod.len, 0);
		assert_int_equal(ver.len, 0);
	}
	strbuf_release(&mod);
	strbuf_release(&ver);
	strbuf_release(&why);
}

static void test_parse_limits(void **state)
{
	struct strbuf p = STRBUF_INIT, mod = STRBUF_INIT, ver = STRBUF_INIT;
	struct strbuf why = STRBUF_INIT;
	enum modproxy_kind kind;

	/* a long, valid path is fine up to MODPROXY_PATH_MAX bytes */
	strbuf_addstr(&p, "example.com/");
	while (p.len < MODPROXY_PATH_MAX - 20)
		strbuf_addstr(&p, "abcdefghi/");
	strbuf_addstr(&p, "z/@v/list");
	assert_true(p.len <= MODPROXY_PATH_MAX);
	assert_int_equal(modproxy_parse_path(p.buf, &mod, &ver, &kind, &why),
			 0);
	while (p.len <= MODPROXY_PATH_MAX)
		strbuf_insert(&p, 12, "abcdefghi/", 10);
	assert_int_equal(modproxy_parse_path(p.buf, &mod, &ver, &kind, &why),
			 -1);
	assert_non_null(strstr(why.buf, "over 1024 bytes"));

	/* a huge one is refused before any work */
	strbuf_reset(&p);
	strbuf_reset(&why);
	while (p.len < (1 << 20))
		strbuf_addstr(&p, "%2e%2e/");
	assert_int_equal(modproxy_parse_path(p.buf, &mod, &ver, &kind, &why),
			 -1);
	assert_non_null(strstr(why.buf, "over 1024 bytes"));

	/* a query longer than 128 bytes is no query */
	strbuf_reset(&p);
	strbuf_addstr(&p, "golang.org/x/text/@v/");
	while (p.len < 21 + 129)
		strbuf_addch(&p, 'a');
	strbuf_addstr(&p, ".info");
	assert_int_equal(modproxy_parse_path(p.buf, &mod, &ver, &kind, &why),
			 -1);
	strbuf_release(&p);
	strbuf_release(&mod);
	strbuf_release(&ver);
	strbuf_release(&why);
}

/* ---- modproxy_serve() with a stand-in go command */

struct fixture {
	char dir[64];		 /* a temporary directory */
	struct strbuf cache, go; /* the module cache, the go script */
	struct modproxy_config c;
};

/*
 * The stand-in go: it records its arguments, environment and working
 * directory in <dir>/go.<n>, answers `list -m -json example.com/ok@...`
 * and `mod download -json example.com/ok@v1.0.0` by writing into the
 * cache what the go command would, and fails everything else the way
 * the go command does.
 */
static const char go_script[] =
	"#!/bin/sh\n"
	"n=$(ls \"$DIR\" | grep -c '^go\\.')\n"
	"{ echo \"args: $*\"; echo \"cwd: $(pwd)\"; env; } >\"$DIR/go.$n\"\n"
	"d=\"$GOMODCACHE/cache/download/example.com/ok/@v\"\n"
	"case \"$*\" in\n"
	"'list -m -json example.com/ok@v1.0.0')\n"
	"  mkdir -p \"$d\" &&\n"
	"  echo '{\"Version\":\"v1.0.0\"}' >\"$d/v1.0.0.info\" &&\n"
	"  echo 'module example.com/ok' >\"$d/v1.0.0.mod\" &&\n"
	"  echo '{\"Path\":\"example.com/ok\",\"Version\":\"v1.0.0\"}';;\n"
	"'list -m -json example.com/ok@latest')\n"
	"  echo "
	"'{\"Version\":\"v1.2.0\",\"Time\":\"2020-01-01T00:00:00Z\"}';;\n"
	"'mod download -json example.com/ok@v1.0.0')\n"
	"  mkdir -p \"$d\" && printf 'PK-zip' >\"$d/v1.0.0.zip\" &&\n"
	"  echo '{\"Path\":\"example.com/ok\"}';;\n"
	"'list -m -versions -retracted -json example.com/ok')\n"
	"  echo '{\"Versions\":[\"v1.0.0\",\"v1.2.0\",\"bad version\"]}';;\n"
	"'list -m -json example.com/nomod@v1.0.0' | "
	"'list -m -json example.com/empty@v1.0.0' | "
	"'mod download -json example.com/empty@v1.0.0')\n"
	"  echo '{}';;\n"
	"'mod download -json example.com/nomod@v1.0.0')\n"
	"  d=\"$GOMODCACHE/cache/download/example.com/nomod/@v\" &&\n"
	"  mkdir -p \"$d\" && echo 'module example.com/nomod' "
	">\"$d/v1.0.0.mod\";;\n"
	"'mod download -json '*)\n"
	"  printf '%s\\n' '{\"Error\":\"example.com/gone@v1.0.0: reading "
	"https://proxy/: "
	"404 Not Found\\n\\tserver response: not found\"}'; exit 1;;\n"
	"*) echo 'go: boom: it failed' >&2; echo 'second line' >&2;"
	" exit 1;;\n"
	"esac\n";

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	int fd;

	snprintf(f->dir, sizeof(f->dir), "/tmp/u-modproxy-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	strbuf_init(&f->cache, 0);
	strbuf_init(&f->go, 0);
	strbuf_addf(&f->cache, "%s/cache", f->dir);
	strbuf_addf(&f->go, "%s/go", f->dir);
	fd = open(f->go.buf, O_WRONLY | O_CREAT | O_EXCL, 0700);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, go_script, strlen(go_script)),
			 (ssize_t)strlen(go_script));
	close(fd);
	assert_int_equal(mkdir(f->cache.buf, 0700), 0);

	/* a config as modproxy_config_load() makes one, by hand */
	modproxy_config_init(&f->c);
	f->c.go = xstrdup(f->go.buf);
	f->c.cache_dir = xstrdup(f->cache.buf);
	strvec_push(&f->c.env, "GOPROXY=https://proxy.example,direct");
	strvec_push(&f->c.env, "GOSUMDB=sum.golang.org");
	strvec_push(&f->c.env, "GOPRIVATE=*.corp.example,example.com/private");
	strvec_push(&f->c.env, "GONOSUMDB=example.com/nosum");
	strvec_pushf(&f->c.env, "DIR=%s", f->dir);
	strvec_push(&f->c.env, "PATH=/usr/bin:/bin");
	f->c.sumdb_upstream =
		xstrdup("http://127.0.0.1:1/sumdb/sum.golang.org");
	/* must never reach the go command */
	setenv("GOSBX_U_MODPROXY_SECRET", "leaked", 1);
	log_fd = open("/dev/null", O_WRONLY);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	/* the go command leaves read-only directories; remove_tree copes */
	assert_int_equal(remove_tree(f->dir), 0);
	modproxy_config_release(&f->c);
	strbuf_release(&f->cache);
	strbuf_release(&f->go);
	close(log_fd);
	log_fd = 2;
	free(f);
	return 0;
}

/* serve one request; the whole answer in out */
static void request(const struct modproxy_config *c, const char *method,
		    const char *target, struct strbuf *out)
{
	struct netd_head h;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	netd_head_init(&h);
	h.method = xstrdup(method);
	h.target = xstrdup(target);
	h.minor = 1;
	modproxy_serve(c, sv[0], &h);
	close(sv[0]);
	strbuf_reset(out);
	assert_true(strbuf_read_fd(out, sv[1], 0) >= 0);
	close(sv[1]);
	netd_head_release(&h);
}

/* the status line, and the body after the head */
static void assert_answer(const struct strbuf *out, const char *status,
			  const char *body)
{
	const char *b = strstr(out->buf, "\r\n\r\n");

	if (!starts_with(out->buf, status) || !b ||
	    (body && strcmp(b + 4, body)))
		print_message("answer:\n%s\n", out->buf);
	assert_true(starts_with(out->buf, status));
	assert_non_null(b);
	assert_non_null(strstr(out->buf, "Connection: close\r\n"));
	if (body)
		assert_string_equal(b + 4, body);
}

static int go_runs(const struct fixture *f)
{
	struct strbuf p = STRBUF_INIT;
	int n;
	struct stat st;

	for (n = 0;; n++) {
		strbuf_reset(&p);
		strbuf_addf(&p, "%s/go.%d", f->dir, n);
		if (stat(p.buf, &st))
			break;
	}
	strbuf_release(&p);
	return n;
}

static void test_serve_refusals(void **state)
{
	struct fixture *f = *state;
	struct strbuf out = STRBUF_INIT;

	request(&f->c, "POST", "/mod/example.com/ok/@v/list", &out);
	assert_answer(&out, "HTTP/1.1 405 gosbx: the module proxy answers GET",
		      NULL);
	request(&f->c, "GET", "/mod/../etc/passwd", &out);
	assert_answer(&out, "HTTP/1.1 400 gosbx: bad module request: '..'",
		      NULL);
	request(&f->c, "GET", "/mod/golang.org/x/%2e%2e/@v/list", &out);
	assert_answer(&out, "HTTP/1.1 400 gosbx: bad module request: ", NULL);
	request(&f->c, "GET", "/mod/GitHub.com/x/@v/list", &out);
	assert_answer(&out,
		      "HTTP/1.1 400 gosbx: bad module request: upper-case",
		      NULL);
	request(&f->c, "GET", "/modx/example.com/ok/@v/list", &out);
	assert_answer(&out, "HTTP/1.1 400 ", NULL);
	request(&f->c, "GET",
		"http://127.0.0.1:3128/mod/example.com/ok/@v/list", &out);
	assert_answer(&out, "HTTP/1.1 400 ", NULL);

	/* GOPRIVATE (a glob of the first element; a prefix) */
	request(&f->c, "GET", "/mod/git.corp.example/a/b/@v/v1.0.0.zip", &out);
	assert_answer(&out,
		      "HTTP/1.1 404 gosbx: git.corp.example/a/b is private "
		      "(GOPRIVATE); vendor it or push it into the sandbox\r\n",
		      "gosbx: git.corp.example/a/b is private (GOPRIVATE); "
		      "vendor it or push it into the sandbox\n");
	request(&f->c, "GET", "/mod/example.com/private/x/@v/list", &out);
	assert_answer(&out,
		      "HTTP/1.1 404 gosbx: example.com/private/x is "
		      "private",
		      NULL);
	request(&f->c, "GET",
		"/mod/sumdb/sum.golang.org/lookup/example.com/nosum@v1.0.0",
		&out);
	assert_answer(&out, "HTTP/1.1 404 gosbx: example.com/nosum is private",
		      NULL);
	/* another checksum database than the host's */
	request(&f->c, "GET", "/mod/sumdb/sum.example.org/supported", &out);
	assert_answer(&out,
		      "HTTP/1.1 404 gosbx: sum.example.org is not the host's "
		      "checksum database",
		      NULL);
	request(&f->c, "GET", "/mod/sumdb/sum.golang.org/supported", &out);
	assert_answer(&out, "HTTP/1.1 200 OK\r\n", "");
	assert_int_equal(go_runs(f), 0);
	strbuf_release(&out);
}

static void test_serve_off(void **state)
{
	struct fixture *f = *state;
	struct strbuf out = STRBUF_INIT;

	strvec_clear(&f->c.env);
	strvec_push(&f->c.env, "GOPROXY=off");
	strvec_push(&f->c.env, "GOSUMDB=off");
	strvec_pushf(&f->c.env, "DIR=%s", f->dir);
	free(f->c.sumdb_upstream);
	f->c.sumdb_upstream = NULL;
	request(&f->c, "GET", "/mod/example.com/ok/@v/v1.0.0.zip", &out);
	assert_answer(&out, "HTTP/1.1 404 gosbx: the host's GOPROXY is off\r\n",
		      NULL);
	request(&f->c, "GET", "/mod/sumdb/sum.golang.org/supported", &out);
	assert_answer(&out, "HTTP/1.1 404 gosbx: the host's GOSUMDB is off\r\n",
		      NULL);
	assert_int_equal(go_runs(f), 0);
	strbuf_release(&out);
}

static void test_serve_fetch_and_hit(void **state)
{
	struct fixture *f = *state;
	struct strbuf out = STRBUF_INIT, env = STRBUF_INIT;
	struct strbuf p = STRBUF_INIT;

	/* a miss: the go command fetches into the cache, then it is served */
	request(&f->c, "GET", "/mod/example.com/ok/@v/v1.0.0.zip", &out);
	assert_answer(&out, "HTTP/1.1 200 OK\r\n", "PK-zip");
	assert_non_null(strstr(out.buf, "Content-Type: application/zip\r\n"));
	assert_non_null(strstr(out.buf, "Content-Length: 6\r\n"));
	assert_int_equal(go_runs(f), 1);
	/* a hit: no go command */
	request(&f->c, "GET", "/mod/example.com/ok/@v/v1.0.0.zip", &out);
	assert_answer(&out, "HTTP/1.1 200 OK\r\n", "PK-zip");
	request(&f->c, "HEAD", "/mod/example.com/ok/@v/v1.0.0.zip", &out);
	assert_answer(&out, "HTTP/1.1 200 OK\r\n", "");
	assert_non_null(strstr(out.buf, "Content-Length: 6\r\n"));
	assert_int_equal(go_runs(f), 1);
	/* .mod and .info come from `go list -m` */
	request(&f->c, "GET", "/mod/example.com/ok/@v/v1.0.0.mod", &out);
	assert_answer(&out, "HTTP/1.1 200 OK\r\n", "module example.com/ok\n");
	request(&f->c, "GET", "/mod/example.com/ok/@v/v1.0.0.info", &out);
	assert_answer(&out, "HTTP/1.1 200 OK\r\n",
		      "{\"Version\":\"v1.0.0\"}\n");
	assert_int_equal(go_runs(f), 2);
	/* @latest: a version with no .info in the cache gets one made */
	request(&f->c, "GET", "/mod/example.com/ok/@latest", &out);
	assert_answer(&out, "HTTP/1.1 200 OK\r\n",
		      "{\"Version\":\"v1.2.0\",\"Time\":"
		      "\"2020-01-01T00:00:00Z\"}\n");
	/* @v/list: one version a line, anything else dropped */
	request(&f->c, "GET", "/mod/example.com/ok/@v/list", &out);
	assert_answer(&out, "HTTP/1.1 200 OK\r\n", "v1.0.0\nv1.2.0\n");
	assert_int_equal(go_runs(f), 4);
	/* what `go list -m` leaves out, `go mod download` fetches */
	request(&f->c, "GET", "/mod/example.com/nomod/@v/v1.0.0.mod", &out);
	assert_answer(&out, "HTTP/1.1 200 OK\r\n",
		      "module example.com/nomod\n");
	assert_int_equal(go_runs(f), 6);
	request(&f->c, "GET", "/mod/example.com/empty/@v/v1.0.0.mod", &out);
	assert_answer(&out,
		      "HTTP/1.1 404 gosbx: go mod download: example.com/"
		      "empty@v1.0.0.mod not in the cache after it\r\n",
		      NULL);
	assert_int_equal(go_runs(f), 8);

	/* the go command ran with a clean environment, in an empty dir */
	strbuf_addf(&p, "%s/go.0", f->dir);
	assert_true(strbuf_read_file(&env, p.buf, 0) > 0);
	assert_non_null(strstr(env.buf, "args: mod download -json "
					"example.com/ok@v1.0.0\n"));
	strbuf_reset(&p);
	strbuf_addf(&p, "\ncwd: %s/.gosbx-cwd\n", f->cache.buf);
	assert_non_null(strstr(env.buf, p.buf));
	strbuf_reset(&p);
	strbuf_addf(&p, "\nGOMODCACHE=%s\n", f->cache.buf);
	assert_non_null(strstr(env.buf, p.buf));
	assert_non_null(strstr(env.buf, "\nGOFLAGS=-mod=mod\n"));
	assert_non_null(strstr(env.buf, "\nGOTOOLCHAIN=local\n"));
	assert_non_null(strstr(env.buf, "\nGOWORK=off\n"));
	assert_non_null(
		strstr(env.buf, "\nGOPROXY=https://proxy.example,direct\n"));
	assert_null(strstr(env.buf, "GOSBX_U_MODPROXY_SECRET"));
	strbuf_release(&out);
	strbuf_release(&env);
	strbuf_release(&p);
}

static void test_serve_go_errors(void **state)
{
	struct fixture *f = *state;
	struct strbuf out = STRBUF_INIT;

	/* the Error of `go mod download -json`: first line as reason */
	request(&f->c, "GET", "/mod/example.com/gone/@v/v1.0.0.zip", &out);
	assert_answer(&out,
		      "HTTP/1.1 404 gosbx: go mod download: example.com/"
		      "gone@v1.0.0: reading https://proxy/: 404 Not Found\r\n",
		      "gosbx: go mod download: example.com/gone@v1.0.0: "
		      "reading https://proxy/: 404 Not Found\n\tserver "
		      "response: not found\n");
	/* stderr of `go list`, without "go: " */
	request(&f->c, "GET", "/mod/example.com/gone/@v/v1.0.0.info", &out);
	assert_answer(&out,
		      "HTTP/1.1 404 gosbx: go list -m: boom: it failed\r\n",
		      "gosbx: go list -m: boom: it failed\nsecond line\n");
	request(&f->c, "HEAD", "/mod/example.com/gone/@v/list", &out);
	assert_answer(&out, "HTTP/1.1 404 gosbx: go list -m -versions: boom",
		      "");
	/* a go command that cannot run at all */
	free(f->c.go);
	f->c.go = xstrdup("/nonexistent/go");
	request(&f->c, "GET", "/mod/example.com/new/@v/v1.0.0.mod", &out);
	assert_answer(&out,
		      "HTTP/1.1 404 gosbx: go list -m: cannot run "
		      "'/nonexistent/go'\r\n",
		      NULL);
	strbuf_release(&out);
}

/* modproxy_config_load() with a stand-in `go env -json` */
static void test_config_load(void **state)
{
	struct fixture *f = *state;
	struct modproxy_config c;
	struct strbuf cache = STRBUF_INIT, script = STRBUF_INIT;
	FILE *fp;

	/* lib/goenv.h: nothing kept in the user's cache by a test */
	setenv("GOSBX_GOENV_CACHE", "off", 1);
	strbuf_addf(&script, "%s/goenv", f->dir);
	fp = fopen(script.buf, "w");
	assert_non_null(fp);
	fprintf(fp, "#!/bin/sh\n"
		    "test \"$GOTOOLCHAIN\" = local || exit 3\n"
		    "test \"$*\" = 'env -json GOVERSION GOOS GOARCH GOROOT "
		    "GOPROXY GOSUMDB GOPRIVATE GONOPROXY GONOSUMDB GOINSECURE "
		    "GOAUTH GOVCS GOENV GOFLAGS' || exit 4\n"
		    "test \"$PWD\" = / || exit 5\n"
		    "echo '{\"GOPROXY\":\"direct\",\"GOSUMDB\":"
		    "\"sum.example.org+abc https://sum.example.org/x/\","
		    "\"GOPRIVATE\":\"\",\"GONOPROXY\":\"x.example\"}'\n");
	fclose(fp);
	chmod(script.buf, 0700);
	strbuf_addf(&cache, "%s/new/gomod", f->dir);
	modproxy_config_init(&c);
	assert_int_equal(modproxy_config_load(&c, script.buf, cache.buf), 0);
	assert_string_equal(c.go, script.buf);
	assert_string_equal(c.cache_dir, cache.buf);
	assert_string_equal(c.env.v[0], "GOPROXY=direct");
	assert_string_equal(c.env.v[1], "GOSUMDB=sum.example.org+abc "
					"https://sum.example.org/x/");
	/* empty settings are left out */
	assert_string_equal(c.env.v[2], "GONOPROXY=x.example");
	assert_true(starts_with(c.env.v[3], "PATH="));
	/* GOPROXY=direct: straight to the URL GOSUMDB names */
	assert_string_equal(c.sumdb_upstream, "https://sum.example.org/x");
	modproxy_config_release(&c);

	/* a go that fails: an error, nothing half-filled */
	assert_int_equal(modproxy_config_load(&c, "/bin/false", cache.buf), -1);
	assert_null(c.go);
	assert_int_equal(c.env.nr, 0);
	assert_int_equal(modproxy_config_load(&c, "no-such-go-here", NULL), -1);
	modproxy_config_release(&c);
	strbuf_release(&cache);
	strbuf_release(&script);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_hostile),
		cmocka_unit_test(test_parse_limits),
		cmocka_unit_test_setup_teardown(test_serve_refusals, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_serve_off, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_serve_fetch_and_hit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_serve_go_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_config_load, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
