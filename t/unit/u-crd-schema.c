#include "compat.h"
#include "crd-schema.h"
#include "strbuf.h"
#include "yaml-json.h"

#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>

static json_t *yaml1(const char *s)
{
	struct strbuf err = STRBUF_INIT;
	json_t *v = yaml_parse_one(s, strlen(s), "t.yaml", &err);

	if (!v)
		fail_msg("%s", err.buf);
	strbuf_release(&err);
	return v;
}

static void expect_json(const char *yaml, const char *want)
{
	json_t *v = yaml1(yaml);
	char *got = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	if (strcmp(got, want))
		fail_msg("'%s': got %s, want %s", yaml, got, want);
	free(got);
	json_decref(v);
}

static void expect_err(const char *yaml, const char *want)
{
	struct strbuf err = STRBUF_INIT;
	json_t *v = yaml_parse_stream(yaml, strlen(yaml), "x.yaml", &err);

	assert_null(v);
	if (!strstr(err.buf, want))
		fail_msg("'%s': got '%s', want '%s'", yaml, err.buf, want);
	strbuf_release(&err);
}

static void test_yaml_scalars(void **state)
{
	expect_json("a: 1\nb: -2\nc: 0x1F\nd: 0o17\ne: 017\n",
		    "{\"a\":1,\"b\":-2,\"c\":31,\"d\":15,\"e\":17}");
	expect_json("[1.5, 1e3, -.5, 2.5e-1]", "[1.5,1000.0,-0.5,0.25]");
	expect_json("- ~\n- null\n- Null\n-\n- true\n- False\n- TRUE\n",
		    "[null,null,null,null,true,false,true]");
	expect_json("[yes, no, on, off, 1_000, '1', \"true\", 0x]",
		    "[\"yes\",\"no\",\"on\",\"off\",\"1_000\",\"1\",\"true\","
		    "\"0x\"]");
	expect_json("[!!str 1, !!int \"2\", !!float 3, !!bool true]",
		    "[\"1\",2,3.0,true]");
	expect_json("a: |\n  x\n  y\nb: >-\n  p\n  q\n",
		    "{\"a\":\"x\\ny\\n\",\"b\":\"p q\"}");
	expect_json("99999999999999999999", "1e20");
	expect_json("", "null");
	expect_json("1: a\ntrue: b\n", "{\"1\":\"a\",\"true\":\"b\"}");
}

static void test_yaml_structure(void **state)
{
	expect_json("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\n",
		    "{\"base\":{\"x\":1,\"y\":2},\"other\":{\"y\":3,\"x\":1}}");
	expect_json("- &a [1, 2]\n- *a\n", "[[1,2],[1,2]]");
	expect_json("{a: {b: [c, {d: e}]}}",
		    "{\"a\":{\"b\":[\"c\",{\"d\":\"e\"}]}}");
}

static int count_docs(json_t *doc, size_t index, size_t line, void *data)
{
	size_t *lines = data;

	lines[index] = line;
	return index == 2 ? 7 : 0;
}

static void test_yaml_stream(void **state)
{
	static const char s[] = "a: 1\n---\n---\nb: 2\n---\nc: 3\n";
	struct strbuf err = STRBUF_INIT;
	json_t *docs = yaml_parse_stream(s, strlen(s), NULL, &err);
	size_t lines[4] = { 0 };

	assert_int_equal(json_array_size(docs), 4);
	assert_true(json_is_null(json_array_get(docs, 1)));
	json_decref(docs);
	/* the callback sees each document and can stop the parse */
	assert_int_equal(yaml_parse_stream_cb(s, strlen(s), NULL, count_docs,
					      lines, &err),
			 7);
	assert_int_equal(lines[0], 1);
	assert_int_equal(lines[2], 3);
	assert_int_equal(lines[3], 0);
	assert_null(yaml_parse_one(s, strlen(s), "k", &err));
	assert_non_null(strstr(err.buf, "4 documents, expected one"));
	strbuf_release(&err);
}

static void test_yaml_errors(void **state)
{
	expect_err("a: 1\nb:\n  c: 1\n    d: 2\n",
		   "cannot parse 'x.yaml': line 4, column 6: mapping values "
		   "are not allowed");
	expect_err("a: 1\na: 2\n", "line 2, column 1: duplicate key \"a\"");
	expect_err("[*nope]", "line 1, column 2: unknown anchor 'nope'");
	expect_err("? [a]\n: 1\n", "a mapping key must be a scalar");
	expect_err("a: .inf\n", "no JSON value");
	expect_err("a: !!int x\n", "not an integer");
	expect_err("a: [1\n", "line 2, column 1:");
	expect_err("a: \"\xff\"\n", "line 1");
}

static void test_yaml_alias_bomb(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	int i;

	strbuf_addstr(&sb, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (i = 1; i < 9; i++)
		strbuf_addf(&sb,
			    "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, "
			    "*a%d, *a%d, *a%d, *a%d, *a%d]\n",
			    i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
			    i - 1, i - 1, i - 1, i - 1);
	expect_err(sb.buf, "aliases expand to more than");
	strbuf_release(&sb);
}

/* ---- CRD schemas ---- */

static const char *crd_root(void)
{
	const char *env = getenv("GOSBX_CRDS_DIR");
	struct stat st;

	if (env && !stat(env, &st))
		return env;
	return NULL;
}

struct sets {
	struct crd_set v04, v05;
};

static int setup(void **state)
{
	struct sets *s = calloc(1, sizeof(*s));
	const char *root = crd_root();
	struct strbuf p = STRBUF_INIT;

	if (!root)
		return -1;
	strbuf_addf(&p, "%s/v0.4.6", root);
	if (crd_set_load_dir(&s->v04, p.buf) != 4)
		return -1;
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/v0.5.6", root);
	if (crd_set_load_dir(&s->v05, p.buf) != 4)
		return -1;
	strbuf_release(&p);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct sets *s = *state;

	crd_set_release(&s->v04);
	crd_set_release(&s->v05);
	free(s);
	return 0;
}

/* validate yaml against set; the errors joined by "\n" */
static int check(struct crd_set *set, const char *yaml, unsigned flags,
		 struct strbuf *out)
{
	struct strvec errs = STRVEC_INIT, warns = STRVEC_INIT;
	json_t *doc = yaml1(yaml);
	const struct crd *crd = crd_set_find(
		set, json_string_value(json_object_get(doc, "apiVersion")),
		json_string_value(json_object_get(doc, "kind")));
	size_t i;
	int n;

	assert_non_null(crd);
	n = crd_validate_object(crd, doc, flags, &errs, &warns);
	strbuf_reset(out);
	for (i = 0; i < errs.nr; i++)
		strbuf_addf(out, "%s\n", errs.v[i]);
	for (i = 0; i < warns.nr; i++)
		strbuf_addf(out, "W %s\n", warns.v[i]);
	if (flags & (CRD_PRUNE | CRD_DEFAULT)) {
		char *s = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
		strbuf_addf(out, "= %s\n", s);
		free(s);
	}
	assert_int_equal((size_t)n, errs.nr);
	json_decref(doc);
	strvec_clear(&errs);
	strvec_clear(&warns);
	return n;
}

#define HAS(sb, s)                                                             \
	do {                                                                   \
		if (!strstr((sb).buf, (s)))                                    \
			fail_msg("missing '%s' in:\n%s", (s), (sb).buf);       \
	} while (0)

static const char claim_a[] =
	"apiVersion: extensions.agents.x-k8s.io/v1alpha1\n"
	"kind: SandboxClaim\n"
	"metadata: {generateName: sandbox-claim-, namespace: ns,\n"
	"  labels: {agents.x-k8s.io/created-by: gosbx},\n"
	"  annotations: {agents.x-k8s.io/client-first-requested-at: "
	"\"2026-11-22T03:00:00.123456789Z\"}}\n"
	"spec:\n"
	"  sandboxTemplateRef: {name: go-runtime-template}\n"
	"  lifecycle: {shutdownTime: \"2026-11-22T04:00:00+01:00\",\n"
	"    shutdownPolicy: Delete, ttlSecondsAfterFinished: 30}\n";

static void test_claims(void **state)
{
	struct sets *s = *state;
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(check(&s->v04, claim_a, 0, &out), 0);
	/* v0.5.6 still serves v1alpha1, with a deprecation warning */
	assert_int_equal(check(&s->v05, claim_a, 0, &out), 0);
	HAS(out, "W extensions.agents.x-k8s.io/v1alpha1 SandboxClaim is "
		 "deprecated");
	/* v1beta1 claims name a warm pool, and only v0.5.6 has them */
	assert_int_equal(
		check(&s->v05,
		      "apiVersion: extensions.agents.x-k8s.io/v1beta1\n"
		      "kind: SandboxClaim\nmetadata: {name: c}\n"
		      "spec: {warmPoolRef: {name: go-runtime-warmpool}}\n",
		      0, &out),
		0);
	assert_int_equal(
		check(&s->v04,
		      "apiVersion: extensions.agents.x-k8s.io/v1beta1\n"
		      "kind: SandboxClaim\nmetadata: {name: c}\n"
		      "spec: {warmPoolRef: {name: p}}\n",
		      0, &out),
		1);
	HAS(out, "no such version served");
	/* sandboxTemplateRef does not exist in v1beta1 */
	assert_int_equal(
		check(&s->v05,
		      "apiVersion: extensions.agents.x-k8s.io/v1beta1\n"
		      "kind: SandboxClaim\nmetadata: {name: c}\n"
		      "spec: {sandboxTemplateRef: {name: t}}\n",
		      0, &out),
		2);
	HAS(out, "spec.warmPoolRef: Required value\n");
	HAS(out, "unknown field \"spec.sandboxTemplateRef\"\n");
	strbuf_release(&out);
}

static void test_claim_errors(void **state)
{
	struct sets *s = *state;
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(
		check(&s->v04,
		      "apiVersion: extensions.agents.x-k8s.io/v1alpha1\n"
		      "kind: SandboxClaim\n"
		      "metadata: {name: Bad_Name, labels: {a: 1}, bogus: 1}\n"
		      "spec:\n"
		      "  sandboxTemplateRef: {}\n"
		      "  warmpool: [x]\n"
		      "  lifecycle: {shutdownPolicy: x, shutdownTime: soon,\n"
		      "    ttlSecondsAfterFinished: -1}\n"
		      "  env: [{name: A, value: b}, {name: B}]\n"
		      "  service: true\n"
		      "status: {conditions: [{type: Ready, status: Maybe,\n"
		      "  reason: '1bad', message: m,\n"
		      "  lastTransitionTime: '2026-01-01T00:00:00Z'}]}\n",
		      0, &out),
		12);
	HAS(out, "metadata.name: Invalid value: \"Bad_Name\": a lowercase "
		 "RFC 1123 subdomain");
	HAS(out, "metadata.labels[a]: Invalid value: \"integer\": "
		 "metadata.labels[a] in body must be of type string: "
		 "\"integer\"\n");
	HAS(out, "unknown field \"metadata.bogus\"\n");
	HAS(out, "spec.sandboxTemplateRef.name: Required value\n");
	HAS(out, "spec.warmpool: Invalid value: \"array\": spec.warmpool "
		 "in body must be of type string: \"array\"\n");
	HAS(out, "spec.lifecycle.shutdownPolicy: Unsupported value: \"x\": "
		 "supported values: \"Delete\", \"DeleteForeground\", "
		 "\"Retain\"\n");
	HAS(out, "spec.lifecycle.shutdownTime: Invalid value: \"soon\": "
		 "spec.lifecycle.shutdownTime in body must be of type "
		 "date-time: \"soon\"\n");
	HAS(out, "spec.lifecycle.ttlSecondsAfterFinished: Invalid value: -1: "
		 "spec.lifecycle.ttlSecondsAfterFinished in body should be "
		 "greater than or equal to 0\n");
	HAS(out, "spec.env[1].value: Required value\n");
	HAS(out, "unknown field \"spec.service\"\n");
	HAS(out, "status.conditions[0].status: Unsupported value: \"Maybe\"");
	HAS(out, "status.conditions[0].reason: Invalid value: \"1bad\": "
		 "status.conditions[0].reason in body should match "
		 "'^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$'\n");
	strbuf_release(&out);
}

static void test_prune_and_default(void **state)
{
	struct sets *s = *state;
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(
		check(&s->v04,
		      "apiVersion: extensions.agents.x-k8s.io/v1alpha1\n"
		      "kind: SandboxClaim\nmetadata: {name: c}\n"
		      "spec: {sandboxTemplateRef: {name: t, x: 1}, service: "
		      "true,\n"
		      "  lifecycle: {shutdownTime: null}}\n",
		      CRD_PRUNE | CRD_DEFAULT, &out),
		0);
	HAS(out, "W unknown field \"spec.service\"\n");
	HAS(out, "W unknown field \"spec.sandboxTemplateRef.x\"\n");
	HAS(out, "= {\"apiVersion\":\"extensions.agents.x-k8s.io/v1alpha1\","
		 "\"kind\":\"SandboxClaim\",\"metadata\":{\"name\":\"c\"},"
		 "\"spec\":{\"lifecycle\":{\"shutdownPolicy\":\"Retain\"},"
		 "\"sandboxTemplateRef\":{\"name\":\"t\"},"
		 "\"warmpool\":\"default\"}}\n");
	strbuf_release(&out);
}

static const char tmpl_fmt[] =
	"apiVersion: extensions.agents.x-k8s.io/%s\n"
	"kind: SandboxTemplate\nmetadata: {name: go-runtime-template}\n"
	"spec:\n"
	"  service: %s\n"
	"  podTemplate:\n"
	"    spec:\n"
	"      containers:\n"
	"      - name: runtime\n"
	"        image: ghcr.io/gosbx/gosbx-runtime:latest\n"
	"        ports: [{name: http, containerPort: %s}]\n"
	"        resources: {limits: {cpu: %s, memory: 2Gi}}\n"
	"        readinessProbe: {httpGet: {path: /, port: %s}}\n";

static int check_tmpl(struct crd_set *set, const char *version,
		      const char *service, const char *port, const char *cpu,
		      const char *probe, struct strbuf *out)
{
	struct strbuf y = STRBUF_INIT;
	int n;

	strbuf_addf(&y, tmpl_fmt, version, service, port, cpu, probe);
	n = check(set, y.buf, 0, out);
	strbuf_release(&y);
	return n;
}

static void test_templates(void **state)
{
	struct sets *s = *state;
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(check_tmpl(&s->v04, "v1alpha1", "true", "8888",
				    "\"2\"", "8888", &out),
			 0);
	assert_int_equal(check_tmpl(&s->v05, "v1alpha1", "true", "8888", "2",
				    "http", &out),
			 0);
	assert_int_equal(check_tmpl(&s->v05, "v1beta1", "true", "8888", "500m",
				    "8888", &out),
			 0);
	/* wrong types, int-or-string, quantity pattern, int32 range */
	assert_int_equal(check_tmpl(&s->v04, "v1alpha1", "\"yes\"",
				    "99999999999", "2 cores", "true", &out),
			 4);
	HAS(out, "spec.service: Invalid value: \"string\": spec.service in "
		 "body must be of type boolean: \"string\"\n");
	HAS(out, "spec.podTemplate.spec.containers[0].ports[0]."
		 "containerPort: Invalid value: 99999999999: ");
	HAS(out, "must be of type int32");
	HAS(out, "resources.limits[cpu]: Invalid value: \"2 cores\": ");
	HAS(out, "readinessProbe.httpGet.port: Invalid value: \"boolean\": ");
	HAS(out, "must be of type integer,string: \"boolean\"\n");
	strbuf_release(&out);
}

static void test_duplicates(void **state)
{
	struct sets *s = *state;
	struct strbuf out = STRBUF_INIT;

	/* containers is a list-map keyed by name in the pod spec */
	assert_int_equal(
		check(&s->v04,
		      "apiVersion: extensions.agents.x-k8s.io/v1alpha1\n"
		      "kind: SandboxTemplate\nmetadata: {name: t}\n"
		      "spec: {podTemplate: {spec: {containers: [\n"
		      "  {name: a, image: x, ports: [{containerPort: 1},"
		      " {containerPort: 1}]}]}}}\n",
		      0, &out),
		1);
	HAS(out, "ports[1]: Duplicate value: [1,\"TCP\"]");
	strbuf_release(&out);
}

static void test_schema_keywords(void **state)
{
	struct strvec errs = STRVEC_INIT;
	json_t *schema = yaml1(
		"type: object\n"
		"properties:\n"
		"  n: {type: number, maximum: 5, exclusiveMaximum: true}\n"
		"  s: {type: string, maxLength: 3, minLength: 2,\n"
		"      pattern: '^\\d+(?:\\.\\w)?$'}\n"
		"  o: {oneOf: [{type: integer}, {minimum: 0}]}\n"
		"  e: {type: object, x-kubernetes-embedded-resource: true,\n"
		"      x-kubernetes-preserve-unknown-fields: true}\n"
		"  m: {type: object, additionalProperties: {type: integer}}\n"
		"  z: {type: string, nullable: true}\n"
		"  a: {type: array, maxItems: 1, items: {type: string}}\n");
	json_t *ok = yaml1("{n: 4.5, s: '1.a', o: 1.5, e: {apiVersion: v1, "
			   "kind: Pod, metadata: {name: p}, anything: 1}, "
			   "m: {x: 1}, z: null, a: [x]}");
	json_t *bad = yaml1("{n: 5, s: 'ab', o: 1, e: {x: 1}, m: {x: y}, "
			    "a: [x, 1]}");

	assert_int_equal(crd_schema_validate(schema, ok, "", 0, 0, &errs, NULL),
			 0);
	assert_int_equal(
		crd_schema_validate(schema, bad, "", 0, 0, &errs, NULL), 8);
	assert_string_equal(errs.v[0], "n: Invalid value: 5: n in body "
				       "should be less than 5");
	assert_string_equal(errs.v[1], "s: Invalid value: \"ab\": s in body "
				       "should match '^\\d+(?:\\.\\w)?$'");
	assert_string_equal(errs.v[2], "o: Invalid value: 1: must validate "
				       "one and only one schema (oneOf)");
	assert_string_equal(errs.v[3], "e.apiVersion: Required value: must "
				       "not be empty");
	assert_string_equal(errs.v[5],
			    "m[x]: Invalid value: \"string\": "
			    "m[x] in body must be of type integer: \"string\"");
	assert_string_equal(errs.v[7], "a: Too many: 2: must have at most 1 "
				       "items");
	json_decref(schema);
	json_decref(ok);
	json_decref(bad);
	strvec_clear(&errs);
}

static int pattern_errors(const char *pattern, const char *value,
			  struct strvec *errs)
{
	json_t *schema =
		json_pack("{s:s, s:s}", "type", "string", "pattern", pattern);
	json_t *v = json_string(value);
	int n;

	strvec_clear(errs);
	n = crd_schema_validate(schema, v, "p", 0, 0, errs, NULL);
	json_decref(schema);
	json_decref(v);
	return n;
}

/* RE2 patterns, as Kubernetes evaluates them, over POSIX regcomp */
static void test_patterns(void **state)
{
	struct strvec errs = STRVEC_INIT;

	/* escapes inside brackets are escapes, not backslashes */
	assert_int_equal(pattern_errors("^[a-z\\-\\.]+$", "a-b.c", &errs), 0);
	assert_int_equal(pattern_errors("^[a-z\\-\\.]+$", "a\\b", &errs), 1);
	assert_int_equal(pattern_errors("^[\\]x]+$", "]x]", &errs), 0);
	assert_int_equal(pattern_errors("^\\d{2,3}\\s\\w+$", "12 ab_9", &errs),
			 0);
	assert_int_equal(pattern_errors("^\\d{2,3}$", "1234", &errs), 1);
	assert_int_equal(pattern_errors("^\\D\\S\\W$", "a-!", &errs), 0);
	assert_int_equal(pattern_errors("^\\D$", "1", &errs), 1);
	/* lazy quantifiers match the same strings as greedy ones */
	assert_int_equal(pattern_errors("^a+?b*?$", "aab", &errs), 0);
	/* unanchored patterns match anywhere, as in RE2 */
	assert_int_equal(pattern_errors("b", "abc", &errs), 0);
	/* lookahead has no POSIX counterpart: said, not guessed */
	assert_int_equal(pattern_errors("^(?=a)a$", "a", &errs), 1);
	assert_string_equal(errs.v[0], "p: Internal error: unsupported "
				       "pattern '^(?=a)a$'");
	strvec_clear(&errs);
}

int main(void)
{
	const struct CMUnitTest yaml_tests[] = {
		cmocka_unit_test(test_yaml_scalars),
		cmocka_unit_test(test_yaml_structure),
		cmocka_unit_test(test_yaml_stream),
		cmocka_unit_test(test_yaml_errors),
		cmocka_unit_test(test_yaml_alias_bomb),
		cmocka_unit_test(test_schema_keywords),
		cmocka_unit_test(test_patterns),
	};
	const struct CMUnitTest crd_tests[] = {
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_claim_errors),
		cmocka_unit_test(test_prune_and_default),
		cmocka_unit_test(test_templates),
		cmocka_unit_test(test_duplicates),
	};
	int r = cmocka_run_group_tests_name("yaml-json", yaml_tests, NULL,
					    NULL);

	if (!crd_root()) {
		/* t/run-tests.sh sets it (t/crds.sh): without it, a failure */
		printf("not ok - GOSBX_CRDS_DIR names no directory of the "
		       "agent-sandbox CRDs (t/crds.sh)\n");
		return 1;
	}
	return r | cmocka_run_group_tests_name("crd-schema", crd_tests, setup,
					       teardown);
}
