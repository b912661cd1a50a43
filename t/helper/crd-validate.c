#include "compat.h"
#include "crd-schema.h"
#include "json.h"
#include "parse-options.h"
#include "strbuf.h"
#include "usage.h"
#include "yaml-json.h"

/*
 * Test helper: validate the documents of YAML files against the CRDs of
 * a directory (t/helper/crd-schema.h), finding each document's CRD by
 * apiVersion and kind. One line per finding on stdout:
 *   <file>:<line>: <Kind>/<name>: ok (<apiVersion>)
 *   <file>:<line>: <Kind>/<name>: error: <field error>
 *   <file>:<line>: <Kind>/<name>: warning: <warning>
 *   <file>:<line>: <Kind>/<name>: not checked against a CRD
 * Documents without a CRD are checked for basic shape only (apiVersion,
 * kind, metadata.name or generateName). Without --strict unknown fields
 * are pruned and reported as warnings (the API server's
 * fieldValidation=Warn); with --strict they are errors. --json prints
 * each document (after pruning/defaulting) as one line of JSON instead
 * of the "ok" lines; with --json and no --crds every document (of any
 * shape) is only parsed and printed. A Kustomization needs no metadata.
 * Exit status: 0 all valid, 1 any error (parse errors included), 129
 * usage.
 */

static const char *const usage_lines[] = {
	"crd-validate [--crds=<dir>] [--strict] [--default] [--json] "
	"<file>...",
	NULL
};

struct run {
	struct crd_set crds;
	int have_crds, strict, defaults, json;
	const char *file;
	int errors;
};

static void say(struct run *r, size_t line, const char *what, const char *fmt,
		...) PRINTF_LIKE(4, 5);
static void say(struct run *r, size_t line, const char *what, const char *fmt,
		...)
{
	va_list ap;

	printf("%s:%zu: %s: ", r->file, line, what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static int basic_shape(struct run *r, json_t *doc, size_t line,
		       const char *what)
{
	json_t *meta = json_object_get(doc, "metadata");
	int bad = 0;

	if (!json_object_str(doc, "apiVersion")) {
		say(r, line, what, "error: apiVersion: Required value");
		bad++;
	}
	if (!json_object_str(doc, "kind")) {
		say(r, line, what, "error: kind: Required value");
		bad++;
	}
	if (!json_is_object(meta)) {
		say(r, line, what, "error: metadata: Required value");
		bad++;
	} else if (!json_object_str(meta, "name") &&
		   !json_object_str(meta, "generateName")) {
		say(r, line, what, "error: metadata.name: Required value");
		bad++;
	}
	return bad;
}

static int on_doc(json_t *doc, size_t index, size_t line, void *data)
{
	struct run *r = data;
	struct strvec errs = STRVEC_INIT, warns = STRVEC_INIT;
	struct strbuf what = STRBUF_INIT;
	const char *kind = json_object_str(doc, "kind");
	const char *av = json_object_str(doc, "apiVersion");
	const char *name =
		json_object_str(json_object_get(doc, "metadata"), "name");
	const struct crd *crd;
	size_t i;
	int bad;

	if (json_is_null(doc))
		return 0; /* an empty document, as kubectl skips it */
	if (!r->have_crds && r->json) {
		char *s = json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY);
		puts(s ? s : "null");
		free(s);
		return 0;
	}
	strbuf_addf(&what, "%s/%s", kind ? kind : "?", name ? name : "?");
	if (!json_is_object(doc)) {
		say(r, line, what.buf, "error: a document must be a mapping");
		r->errors++;
		goto out;
	}
	if (kind && !strcmp(kind, "Kustomization")) {
		say(r, line, what.buf, "not checked against a CRD (%s)",
		    av ? av : "?");
		goto out; /* kustomize's own file: no metadata needed */
	}
	bad = basic_shape(r, doc, line, what.buf);
	r->errors += bad;
	if (!r->have_crds)
		goto out;
	crd = crd_set_find(&r->crds, av, kind);
	if (!crd) {
		say(r, line, what.buf, "not checked against a CRD (%s)",
		    av ? av : "?");
		goto out;
	}
	bad = crd_validate_object(crd, doc,
				  (r->strict ? 0 : CRD_PRUNE) |
					  (r->defaults ? CRD_DEFAULT : 0),
				  &errs, &warns);
	for (i = 0; i < warns.nr; i++)
		say(r, line, what.buf, "warning: %s", warns.v[i]);
	for (i = 0; i < errs.nr; i++)
		say(r, line, what.buf, "error: %s", errs.v[i]);
	r->errors += bad;
	if (r->json) {
		char *s = json_dumps(doc, JSON_COMPACT);
		puts(s ? s : "null");
		free(s);
	} else if (!bad) {
		say(r, line, what.buf, "ok (%s)", av);
	}
out:
	strvec_clear(&errs);
	strvec_clear(&warns);
	strbuf_release(&what);
	return 0;
}

int main(int argc, const char **argv)
{
	struct run r = { CRD_SET_INIT };
	const char *dir = NULL;
	struct option opts[] = {
		OPT_STRING(0, "crds", &dir, "<dir>",
			   "directory of CustomResourceDefinition files"),
		OPT_BOOL(0, "strict", &r.strict,
			 "unknown fields are errors (else pruned, warned)"),
		OPT_BOOL(0, "default", &r.defaults, "apply schema defaults"),
		OPT_BOOL(0, "json", &r.json, "print each document as JSON"),
		OPT_END()
	};
	int i, n;

	progname = "crd-validate";
	n = parse_options(argc, argv, opts, usage_lines, 0);
	if (n < 0)
		return parse_options_status(n);
	if (!n) {
		usage_with_options_to(stderr, usage_lines, opts);
		return 129;
	}
	if (dir) {
		if (crd_set_load_dir(&r.crds, dir) < 0)
			return 1;
		r.have_crds = 1;
	}
	for (i = 0; i < n; i++) {
		struct strbuf sb = STRBUF_INIT, err = STRBUF_INIT;

		r.file = argv[i];
		if (strbuf_read_file(&sb, argv[i], 0) < 0) {
			error_errno("cannot read '%s'", argv[i]);
			r.errors++;
		} else if (yaml_parse_stream_cb(sb.buf, sb.len, argv[i], on_doc,
						&r, &err)) {
			printf("%s\n", err.buf);
			r.errors++;
		}
		strbuf_release(&sb);
		strbuf_release(&err);
	}
	crd_set_release(&r.crds);
	fflush(stdout);
	return r.errors ? 1 : 0;
}
