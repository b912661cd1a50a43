/*
 * gosbx version (and gosbx --version): what this gosbx is and what it
 * runs with, for a bug report or a first hour on a new machine (issue
 * 19): the version and the compiler it was built with, each library
 * as built against and as loaded now, the bubblewrap and the Go that
 * local sandboxes get, and the defaults of the backend. Needs no
 * backend and never fails for a missing optional library: it says
 * which is missing and why. The JSON keys are stable
 * (Documentation/gosbx-version.txt).
 */
#include "compat.h"
#include "builtin.h"
#include "dl/dl.h"
#include "goenv.h"
#include "json.h"
#include "output.h"
#include "local/isolate.h"
#include "parse-options.h"
#include "run-command.h"
#include "session/session.h"
#include "strbuf.h"
#include "usage.h"

#include <archive.h>
#include <curl/curl.h>
#include <microhttpd.h>
#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#include <readline/readline.h>
#include <seccomp.h>
#include <wslay/wslay.h>

/* `git describe --tags --always --dirty` of the source (Makefile) */
#ifndef GOSBX_GIT_DESCRIBE
#define GOSBX_GIT_DESCRIBE ""
#endif

#if defined(__clang__)
#define COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define COMPILER "gcc " __VERSION__
#else
#define COMPILER "unknown"
#endif

static const char *const version_usage[] = {
	"gosbx version [-o text|json] [--json]",
	"gosbx --version",
	NULL,
};

/* One library: as built (its header) and as loaded now. */
struct lib_version {
	const char *name;
	char built[32];
	const char *loaded; /* NULL: missing (why) or no run-time version */
	const char *why;    /* why it is missing; NULL: not missing */
};

/* What `gosbx version` reports; strings owned by the strbufs. */
struct version_info {
	struct lib_version libs[8];
	size_t nr_libs;
	char seccomp[32];
	struct strbuf bwrap_path, bwrap, bwrap_why;
	struct strbuf go_path, go, go_why;
	struct backend_defaults bd;
};

static struct lib_version *add_lib(struct version_info *v, const char *name,
				   const char *built, const char *loaded)
{
	struct lib_version *l = &v->libs[v->nr_libs++];

	l->name = name;
	snprintf(l->built, sizeof(l->built), "%s", built);
	l->loaded = loaded;
	l->why = NULL;
	return l;
}

/* the libraries loaded with dlopen() on first use (lib/dl/dl.h) */
static void add_dl_lib(struct version_info *v, const char *name,
		       const char *built,
		       const char *(*version)(const char **why))
{
	const char *why = NULL;
	const char *loaded = version(&why);

	add_lib(v, name, built, loaded)->why = loaded ? NULL : why;
}

static void find_libs(struct version_info *v)
{
	const struct scmp_version *sv = seccomp_version();
	char mhd[32], rl[32], scmp[32];

	add_lib(v, "libcurl", LIBCURL_VERSION,
		curl_version_info(CURLVERSION_NOW)->version);
	add_lib(v, "jansson", JANSSON_VERSION, jansson_version_str());
	add_lib(v, "openssl", OPENSSL_VERSION_TEXT,
		OpenSSL_version(OPENSSL_VERSION));
	snprintf(scmp, sizeof(scmp), "%d.%d.%d", SCMP_VER_MAJOR, SCMP_VER_MINOR,
		 SCMP_VER_MICRO);
	if (sv)
		snprintf(v->seccomp, sizeof(v->seccomp), "%u.%u.%u", sv->major,
			 sv->minor, sv->micro);
	add_lib(v, "libseccomp", scmp, sv ? v->seccomp : NULL);
	/* wslay has no run-time version function */
	add_lib(v, "wslay", WSLAY_VERSION, NULL);
	add_dl_lib(v, "libarchive", ARCHIVE_VERSION_ONLY_STRING,
		   dl_archive_version);
	/* MHD_VERSION is 0xMMmmpp00 in hexadecimal digits: "0.9.75" */
	snprintf(mhd, sizeof(mhd), "%x.%x.%x", (MHD_VERSION >> 24) & 0xff,
		 (MHD_VERSION >> 16) & 0xff, (MHD_VERSION >> 8) & 0xff);
	add_dl_lib(v, "libmicrohttpd", mhd, dl_mhd_version);
	snprintf(rl, sizeof(rl), "%d.%d", RL_VERSION_MAJOR, RL_VERSION_MINOR);
	add_dl_lib(v, "readline", rl, dl_readline_version);
}

/* the Go local sandboxes get (isolate_host_go()) and its GOVERSION */
static void find_go(struct version_info *v)
{
	int r = isolate_host_go(NULL, &v->go_path, &v->go_why);

	if (!r)
		strbuf_addstr(&v->go_why, "no go on PATH");
	if (r <= 0)
		return;
	if (goenv_get(v->go_path.buf, "GOVERSION", &v->go, &v->go_why) < 0)
		return;
	if (!starts_with(v->go.buf, "go")) {
		strbuf_reset(&v->go);
		strbuf_addf(&v->go_why, "'%s env GOVERSION' failed",
			    v->go_path.buf);
	}
}

static void version_info_gather(struct version_info *v,
				const struct gosbx_ctx *ctx)
{
	struct session_opts so;
	int r;

	memset(v, 0, sizeof(*v));
	strbuf_init(&v->bwrap_path, 0);
	strbuf_init(&v->bwrap, 0);
	strbuf_init(&v->bwrap_why, 0);
	strbuf_init(&v->go_path, 0);
	strbuf_init(&v->go, 0);
	strbuf_init(&v->go_why, 0);
	find_libs(v);
	r = isolate_bwrap_version(&v->bwrap_path, &v->bwrap);
	if (!r)
		strbuf_addstr(&v->bwrap_why, "not found");
	else if (r < 0)
		strbuf_addf(&v->bwrap_why, "'%s --version' failed",
			    v->bwrap_path.buf);
	find_go(v);
	ctx_session_opts(ctx, &so);
	/* -1: the backend could not tell; bd is filled as far as known */
	backend_defaults(&so, &v->bd);
}

static void version_info_release(struct version_info *v)
{
	strbuf_release(&v->bwrap_path);
	strbuf_release(&v->bwrap);
	strbuf_release(&v->bwrap_why);
	strbuf_release(&v->go_path);
	strbuf_release(&v->go);
	strbuf_release(&v->go_why);
	backend_defaults_release(&v->bd);
}

/* "2 GiB", "512 MiB", "1000 B" */
static void add_bytes(struct strbuf *sb, int64_t n)
{
	if (n && !(n % ((int64_t)1 << 30)))
		strbuf_addf(sb, "%" PRId64 " GiB", n >> 30);
	else if (n && !(n % ((int64_t)1 << 20)))
		strbuf_addf(sb, "%" PRId64 " MiB", n >> 20);
	else
		strbuf_addf(sb, "%" PRId64 " B", n);
}

/* "1h", "30m", "90s", "1500ms" */
static void add_duration(struct strbuf *sb, int64_t ms)
{
	if (ms && !(ms % 3600000))
		strbuf_addf(sb, "%" PRId64 "h", ms / 3600000);
	else if (ms && !(ms % 60000))
		strbuf_addf(sb, "%" PRId64 "m", ms / 60000);
	else if (ms && !(ms % 1000))
		strbuf_addf(sb, "%" PRId64 "s", ms / 1000);
	else
		strbuf_addf(sb, "%" PRId64 "ms", ms);
}

static void print_text(const struct version_info *v, const char *backend,
		       unsigned caps)
{
	const struct backend_defaults *d = &v->bd;
	struct strbuf sb = STRBUF_INIT;

	printf("gosbx version %s", GOSBX_VERSION);
	if (*GOSBX_GIT_DESCRIBE)
		printf(" (git %s)", GOSBX_GIT_DESCRIBE);
	printf("\ncompiler: %s\nlibraries:\n", COMPILER);
	for (size_t i = 0; i < v->nr_libs; i++) {
		const struct lib_version *l = &v->libs[i];

		if (l->why)
			printf("   %-14s missing (built against %s): %s\n",
			       l->name, l->built, l->why);
		else
			printf("   %-14s %s (built against %s)\n", l->name,
			       l->loaded ? l->loaded : "linked", l->built);
	}
	if (v->bwrap.len)
		printf("bwrap: %s (%s)\n", v->bwrap.buf, v->bwrap_path.buf);
	else
		printf("bwrap: %s\n", v->bwrap_why.buf);
	if (v->go.len)
		printf("go: %s (%s)\n", v->go.buf, v->go_path.buf);
	else
		printf("go: none: %s\n", v->go_why.buf);
	printf("backend: %s\n", backend);
	if (caps & BACKEND_NAMESPACES)
		printf("   namespace %s, template %s\n", d->namespace,
		       d->template);
	if (d->memory_bytes) {
		strbuf_addstr(&sb, "   memory ");
		add_bytes(&sb, d->memory_bytes);
		strbuf_addf(&sb, ", cpus %g, pids %d, disk ", d->cpus, d->pids);
		add_bytes(&sb, d->disk_bytes);
		strbuf_addstr(&sb, ", idle ttl ");
		add_duration(&sb, d->ttl_ms);
		printf("%s\n", sb.buf);
	}
	strbuf_release(&sb);
}

/* a JSON string, or null for NULL or "" (or text that is not UTF-8) */
static json_t *str_or_null(const char *s)
{
	json_t *j = s && *s ? json_string(s) : NULL;

	return j ? j : json_null();
}

static json_t *int_or_null(int64_t n)
{
	return n ? json_integer(n) : json_null();
}

static int print_json(const struct version_info *v, const char *backend,
		      unsigned caps)
{
	const struct backend_defaults *d = &v->bd;
	json_t *root = json_object(), *libs = json_object(), *o;
	char *text;

	json_object_set_new(root, "version", json_string(GOSBX_VERSION));
	json_object_set_new(root, "git", str_or_null(GOSBX_GIT_DESCRIBE));
	json_object_set_new(root, "compiler", json_string(COMPILER));
	for (size_t i = 0; i < v->nr_libs; i++) {
		const struct lib_version *l = &v->libs[i];

		json_object_set_new(libs, l->name,
				    json_pack("{s:s, s:o, s:o}", "built",
					      l->built, "loaded",
					      str_or_null(l->loaded), "error",
					      str_or_null(l->why)));
	}
	json_object_set_new(root, "libraries", libs);
	json_object_set_new(root, "bwrap",
			    json_pack("{s:o, s:o, s:o}", "path",
				      str_or_null(v->bwrap_path.buf), "version",
				      str_or_null(v->bwrap.buf), "error",
				      str_or_null(v->bwrap_why.buf)));
	json_object_set_new(root, "go",
			    json_pack("{s:o, s:o, s:o}", "path",
				      str_or_null(v->go_path.buf), "version",
				      str_or_null(v->go.buf), "error",
				      str_or_null(v->go_why.buf)));
	o = json_object();
	json_object_set_new(o, "name", json_string(backend));
	json_object_set_new(
		o, "namespace",
		str_or_null(caps & BACKEND_NAMESPACES ? d->namespace : NULL));
	json_object_set_new(
		o, "template",
		str_or_null(caps & BACKEND_NAMESPACES ? d->template : NULL));
	json_object_set_new(o, "memory_bytes", int_or_null(d->memory_bytes));
	json_object_set_new(o, "cpus",
			    d->cpus > 0 ? json_real(d->cpus) : json_null());
	json_object_set_new(o, "pids", int_or_null(d->pids));
	json_object_set_new(o, "disk_bytes", int_or_null(d->disk_bytes));
	json_object_set_new(o, "ttl_ms", int_or_null(d->ttl_ms));
	json_object_set_new(root, "backend", o);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!text)
		return error("cannot encode the version as JSON");
	printf("%s\n", text);
	free(text);
	return 0;
}

int cmd_version(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	static const char *const formats[] = { "text", "json", NULL };
	struct output_opt out = OUTPUT_OPT_INIT;
	int r;
	struct version_info v;
	struct option opts[] = {
		OPT_OUTPUT(&out, "text (default) or json"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, version_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc)
		return usage_error(version_usage, opts,
				   "unexpected argument '%s'", argv[0]);
	if (output_opt_resolve(&out, formats, version_usage, opts))
		return PARSE_OPT_USAGE_STATUS;
	version_info_gather(&v, ctx);
	r = 0;
	if (out.json)
		r = print_json(&v, ctx->backend, ctx->ops->caps);
	else
		print_text(&v, ctx->backend, ctx->ops->caps);
	version_info_release(&v);
	return r < 0 ? EXIT_OWN_FAILURE : 0;
}
