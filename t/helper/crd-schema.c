#include "compat.h"
#include "crd-schema.h"
#include "json.h"
#include "strbuf.h"
#include "usage.h"
#include "yaml-json.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <regex.h>

struct rx_entry {
	const char *pattern; /* borrowed from the schema */
	regex_t re;
	int ok;
};

struct vctx {
	unsigned flags;
	int quiet; /* in a junctor branch: no pruning, defaults, unknowns */
	struct strvec *errors, *warnings;
	int nerr;
	struct rx_entry *rx;
	size_t rx_nr, rx_alloc;
};

static void add_err(struct vctx *c, const struct strbuf *path, const char *fmt,
		    ...) PRINTF_LIKE(3, 4);
static void add_err(struct vctx *c, const struct strbuf *path, const char *fmt,
		    ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (path->len)
		strbuf_addf(&sb, "%s: ", path->buf);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (c->errors)
		strvec_push(c->errors, sb.buf);
	c->nerr++;
	strbuf_release(&sb);
}

/* value as compact JSON, e.g. "x" with quotes, 12, {"a":1} */
static void add_json(struct strbuf *sb, const json_t *v)
{
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

	strbuf_addstr(sb, s ? s : "?");
	free(s);
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "integer";
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	default:
		return "null";
	}
}

static int is_integral(const json_t *v)
{
	double d;

	if (json_is_integer(v))
		return 1;
	if (!json_is_real(v))
		return 0;
	d = json_real_value(v);
	return isfinite(d) && d == floor(d) && fabs(d) < 9.2e18;
}

static int type_matches(const char *t, const json_t *v)
{
	if (!strcmp(t, "object"))
		return json_is_object(v);
	if (!strcmp(t, "array"))
		return json_is_array(v);
	if (!strcmp(t, "string"))
		return json_is_string(v);
	if (!strcmp(t, "integer"))
		return is_integral(v);
	if (!strcmp(t, "number"))
		return json_is_number(v);
	if (!strcmp(t, "boolean"))
		return json_is_boolean(v);
	return 1; /* an unknown type name is not ours to refuse */
}

static void type_error(struct vctx *c, const struct strbuf *path,
		       const char *want, const json_t *v)
{
	add_err(c, path,
		"Invalid value: \"%s\": %s in body must be of type "
		"%s: \"%s\"",
		type_name(v), path->len ? path->buf : "body", want,
		type_name(v));
}

static void invalid(struct vctx *c, const struct strbuf *path, const json_t *v,
		    const char *fmt, ...) PRINTF_LIKE(4, 5);
static void invalid(struct vctx *c, const struct strbuf *path, const json_t *v,
		    const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	add_json(&sb, v);
	strbuf_addstr(&sb, ": ");
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	add_err(c, path, "Invalid value: %s", sb.buf);
	strbuf_release(&sb);
}

static const char *body_path(const struct strbuf *path)
{
	return path->len ? path->buf : "body";
}

static int flag(const json_t *schema, const char *key)
{
	return json_is_true(json_object_get(schema, key));
}

static int nullable(const json_t *schema)
{
	return flag(schema, "nullable");
}

/* RFC 3339 date-time: 2006-01-02T15:04:05(.999)?(Z|+07:00) */
static int is_date_time(const char *s)
{
	int y, mo, d, h, mi, sec, n = 0;

	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
		return 0;
	s += 10;
	if (*s != 'T' && *s != 't')
		return 0;
	s++;
	n = 0;
	if (sscanf(s, "%2d:%2d:%2d%n", &h, &mi, &sec, &n) != 3 || n != 8)
		return 0;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 60)
		return 0;
	s += 8;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if ((*s == 'Z' || *s == 'z') && !s[1])
		return 1;
	if (*s != '+' && *s != '-')
		return 0;
	n = 0;
	if (sscanf(s + 1, "%2d:%2d%n", &h, &mi, &n) != 2 || n != 5 || s[6] ||
	    h > 23 || mi > 59)
		return 0;
	return 1;
}

/* append the bracket contents for \d \w \s, or -1 */
static int class_body(int e, struct strbuf *out)
{
	if (e == 'd')
		strbuf_addstr(out, "0-9");
	else if (e == 'w')
		strbuf_addstr(out, "A-Za-z0-9_");
	else if (e == 's')
		strbuf_addstr(out, "[:space:]");
	else
		return -1;
	return 0;
}

static int literal_escape(int e)
{
	switch (e) {
	case 'n':
		return '\n';
	case 't':
		return '\t';
	case 'r':
		return '\r';
	case 'f':
		return '\f';
	case 'v':
		return '\v';
	}
	if (ispunct(e))
		return e;
	return -1;
}

/* a bracket expression starting after '['; *pp is moved past ']' */
static int translate_bracket(const char **pp, struct strbuf *out)
{
	const char *p = *pp;
	struct strbuf body = STRBUF_INIT;
	int neg = 0, rbracket = 0, dash = 0, caret = 0, first = 1, ret = -1;

	if (*p == '^') {
		neg = 1;
		p++;
	}
	for (;; first = 0) {
		int ch = *p;

		if (!ch)
			goto out;
		if (ch == ']' && !first)
			break;
		if (ch == '\\') {
			int e = p[1], lit;

			if (!e)
				goto out;
			p += 2;
			if (!class_body(e, &body))
				continue;
			lit = literal_escape(e);
			if (lit < 0)
				goto out;
			if (lit == ']')
				rbracket = 1;
			else if (lit == '-')
				dash = 1;
			else if (lit == '^')
				caret = 1;
			else
				strbuf_addch(&body, lit);
			continue;
		}
		if (ch == '[' && p[1] == ':') {
			const char *end = strstr(p + 2, ":]");
			if (!end)
				goto out;
			strbuf_add(&body, p, end + 2 - p);
			p = end + 2;
			continue;
		}
		if (ch == ']')
			rbracket = 1;
		else if (ch == '^')
			caret = 1;
		else if (ch == '-' && (first || p[1] == ']'))
			dash = 1;
		else
			strbuf_addch(&body, ch);
		p++;
	}
	strbuf_addch(out, '[');
	if (neg)
		strbuf_addch(out, '^');
	if (rbracket)
		strbuf_addch(out, ']');
	strbuf_addbuf(out, &body);
	if (caret)
		strbuf_addch(out, '^');
	if (dash)
		strbuf_addch(out, '-');
	strbuf_addch(out, ']');
	*pp = p + 1;
	ret = 0;
out:
	strbuf_release(&body);
	return ret;
}

/*
 * Translate an RE2 pattern to POSIX ERE. Lazy quantifiers become
 * greedy: that changes which text matches, never whether one does.
 */
static int re2_to_ere(const char *p, struct strbuf *out)
{
	while (*p) {
		int ch = *p;

		if (ch == '\\') {
			int e = p[1], lit;

			if (!e)
				return -1;
			p += 2;
			if (e == 'd' || e == 'w' || e == 's' || e == 'D' ||
			    e == 'W' || e == 'S') {
				strbuf_addstr(out, isupper(e) ? "[^" : "[");
				class_body(tolower(e), out);
				strbuf_addch(out, ']');
				continue;
			}
			lit = literal_escape(e);
			if (lit < 0)
				return -1;
			if (ispunct(lit))
				strbuf_addch(out, '\\');
			strbuf_addch(out, lit);
			continue;
		}
		if (ch == '(' && p[1] == '?') {
			if (p[2] != ':')
				return -1;
			strbuf_addch(out, '(');
			p += 3;
			continue;
		}
		if (ch == '[') {
			p++;
			if (translate_bracket(&p, out))
				return -1;
			continue;
		}
		strbuf_addch(out, ch);
		p++;
		if ((ch == '*' || ch == '+' || ch == '?' || ch == '}') &&
		    *p == '?')
			p++;
	}
	return 0;
}

static struct rx_entry *get_regex(struct vctx *c, const char *pattern)
{
	struct strbuf ere = STRBUF_INIT;
	struct rx_entry *e;
	size_t i;

	for (i = 0; i < c->rx_nr; i++)
		if (!strcmp(c->rx[i].pattern, pattern))
			return &c->rx[i];
	ALLOC_GROW(c->rx, c->rx_nr + 1, c->rx_alloc);
	e = &c->rx[c->rx_nr++];
	e->pattern = pattern;
	e->ok = !re2_to_ere(pattern, &ere) &&
		!regcomp(&e->re, ere.buf, REG_EXTENDED | REG_NOSUB);
	strbuf_release(&ere);
	return e;
}

static size_t utf8_chars(const char *s, size_t len)
{
	size_t n = 0, i;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

static void check_string(struct vctx *c, const json_t *schema, const json_t *v,
			 const struct strbuf *path)
{
	const char *s = json_string_value(v);
	size_t chars = utf8_chars(s, json_string_length(v));
	const char *fmt = json_string_value(json_object_get(schema, "format"));
	const char *pattern;
	json_t *x;

	if ((x = json_object_get(schema, "maxLength")) && json_is_integer(x) &&
	    (json_int_t)chars > json_integer_value(x))
		add_err(c, path,
			"Too long: may not be longer than "
			"%" JSON_INTEGER_FORMAT,
			json_integer_value(x));
	if ((x = json_object_get(schema, "minLength")) && json_is_integer(x) &&
	    (json_int_t)chars < json_integer_value(x))
		invalid(c, path, v,
			"%s in body should be at least %" JSON_INTEGER_FORMAT
			" chars long",
			body_path(path), json_integer_value(x));
	pattern = json_string_value(json_object_get(schema, "pattern"));
	if (pattern) {
		struct rx_entry *e = get_regex(c, pattern);

		if (!e->ok)
			add_err(c, path,
				"Internal error: unsupported pattern "
				"'%s'",
				pattern);
		else if (strlen(s) != json_string_length(v) ||
			 regexec(&e->re, s, 0, NULL, 0))
			invalid(c, path, v, "%s in body should match '%s'",
				body_path(path), pattern);
	}
	if (fmt && !strcmp(fmt, "date-time") && !is_date_time(s))
		invalid(c, path, v,
			"%s in body must be of type date-time: "
			"\"%s\"",
			body_path(path), s);
	if (fmt && !strcmp(fmt, "byte")) {
		struct strbuf tmp = STRBUF_INIT;
		if (base64_decode_into(&tmp, s, strlen(s)))
			invalid(c, path, v,
				"%s in body must be of type "
				"byte: \"%s\"",
				body_path(path), s);
		strbuf_release(&tmp);
	}
}

static void check_number(struct vctx *c, const json_t *schema, const json_t *v,
			 const struct strbuf *path)
{
	double d = json_number_value(v);
	const char *fmt = json_string_value(json_object_get(schema, "format"));
	json_t *x;

	if ((x = json_object_get(schema, "maximum")) && json_is_number(x)) {
		double m = json_number_value(x);
		if (flag(schema, "exclusiveMaximum") ? d >= m : d > m)
			invalid(c, path, v,
				"%s in body should be less than "
				"%s%g",
				body_path(path),
				flag(schema, "exclusiveMaximum")
					? ""
					: "or equal to ",
				m);
	}
	if ((x = json_object_get(schema, "minimum")) && json_is_number(x)) {
		double m = json_number_value(x);
		if (flag(schema, "exclusiveMinimum") ? d <= m : d < m)
			invalid(c, path, v,
				"%s in body should be greater "
				"than %s%g",
				body_path(path),
				flag(schema, "exclusiveMinimum")
					? ""
					: "or equal to ",
				m);
	}
	if ((x = json_object_get(schema, "multipleOf")) && json_is_number(x) &&
	    json_number_value(x) > 0) {
		double q = d / json_number_value(x);
		if (q != floor(q))
			invalid(c, path, v,
				"%s in body should be a multiple "
				"of %g",
				body_path(path), json_number_value(x));
	}
	if (fmt && !strcmp(fmt, "int32") &&
	    (d < -2147483648.0 || d > 2147483647.0))
		invalid(c, path, v, "%s in body must be of type int32: \"%s\"",
			body_path(path), "out of range");
	if (fmt && !strcmp(fmt, "int64") && json_is_real(v) &&
	    (d < -9223372036854775808.0 || d >= 9223372036854775808.0))
		invalid(c, path, v, "%s in body must be of type int64: \"%s\"",
			body_path(path), "out of range");
}

static void check_enum(struct vctx *c, const json_t *schema, const json_t *v,
		       const struct strbuf *path)
{
	json_t *e = json_object_get(schema, "enum"), *x;
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	if (!json_is_array(e))
		return;
	json_array_foreach (e, i, x) {
		if (json_equal(x, v))
			return;
	}
	add_json(&sb, v);
	strbuf_addstr(&sb, ": supported values: ");
	json_array_foreach (e, i, x) {
		if (i)
			strbuf_addstr(&sb, ", ");
		add_json(&sb, x);
	}
	add_err(c, path, "Unsupported value: %s", sb.buf);
	strbuf_release(&sb);
}

static void validate(struct vctx *c, const json_t *schema, json_t *v,
		     struct strbuf *path, int root);

static void path_push_field(struct strbuf *path, const char *key)
{
	if (path->len)
		strbuf_addch(path, '.');
	strbuf_addstr(path, key);
}

static void unknown_field(struct vctx *c, json_t *obj, const char *key,
			  struct strbuf *path, int *deleted)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len = path->len;

	*deleted = 0;
	if (c->quiet)
		return;
	path_push_field(path, key);
	strbuf_addf(&sb, "unknown field \"%s\"", path->buf);
	if (c->flags & CRD_PRUNE) {
		if (c->warnings)
			strvec_push(c->warnings, sb.buf);
		json_object_del(obj, key);
		*deleted = 1;
	} else {
		if (c->errors)
			strvec_push(c->errors, sb.buf);
		c->nerr++;
	}
	strbuf_setlen(path, len);
	strbuf_release(&sb);
}

static int is_dns_subdomain(const char *s)
{
	size_t len = strlen(s), i;

	if (!len || len > 253)
		return 0;
	for (i = 0; i < len; i++) {
		int ch = s[i];
		int alnum =
			(ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
		if (!alnum && ch != '-' && ch != '.')
			return 0;
		if (!alnum && (i == 0 || i == len - 1 || s[i - 1] == '.' ||
			       (ch == '.' && s[i - 1] == '-')))
			return 0;
		if (ch == '-' && s[i + 1] == '.')
			return 0;
	}
	return 1;
}

static void check_string_map(struct vctx *c, json_t *m, struct strbuf *path)
{
	const char *k;
	json_t *x;
	size_t len = path->len;

	if (!json_is_object(m)) {
		if (!json_is_null(m))
			type_error(c, path, "object", m);
		return;
	}
	json_object_foreach (m, k, x) {
		if (json_is_string(x))
			continue;
		strbuf_addf(path, "[%s]", k);
		type_error(c, path, "string", x);
		strbuf_setlen(path, len);
	}
}

static const char *const meta_other[] = { "selfLink",
					  "uid",
					  "resourceVersion",
					  "generation",
					  "creationTimestamp",
					  "deletionTimestamp",
					  "deletionGracePeriodSeconds",
					  "ownerReferences",
					  "finalizers",
					  "managedFields",
					  NULL };

/* ObjectMeta, loosely */
static void check_metadata(struct vctx *c, json_t *m, struct strbuf *path)
{
	const char *k;
	json_t *x;
	void *tmp;
	size_t len = path->len;

	if (!json_is_object(m)) {
		type_error(c, path, "object", m);
		return;
	}
	json_object_foreach_safe (m, tmp, k, x) {
		int del, i, known = 0;

		path_push_field(path, k);
		if (!strcmp(k, "name") || !strcmp(k, "generateName") ||
		    !strcmp(k, "namespace")) {
			if (!json_is_string(x) && !json_is_null(x))
				type_error(c, path, "string", x);
			else if (!strcmp(k, "name") && json_is_string(x) &&
				 !is_dns_subdomain(json_string_value(x)))
				invalid(c, path, x,
					"a lowercase RFC 1123 "
					"subdomain must consist of lower case "
					"alphanumeric characters, '-' or '.', "
					"and must start and end with an "
					"alphanumeric character");
			known = 1;
		} else if (!strcmp(k, "labels") || !strcmp(k, "annotations")) {
			check_string_map(c, x, path);
			known = 1;
		}
		for (i = 0; !known && meta_other[i]; i++)
			known = !strcmp(k, meta_other[i]);
		strbuf_setlen(path, len);
		if (!known)
			unknown_field(c, m, k, path, &del);
	}
}

static void check_object(struct vctx *c, const json_t *schema, json_t *v,
			 struct strbuf *path, int root)
{
	json_t *props = json_object_get(schema, "properties");
	json_t *addl = json_object_get(schema, "additionalProperties");
	json_t *req = json_object_get(schema, "required"), *x, *sub;
	int embedded = flag(schema, "x-kubernetes-embedded-resource");
	int preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
	size_t len = path->len, i;
	const char *k;
	void *tmp;

	if (json_is_true(addl))
		preserve = 1;
	if ((c->flags & CRD_DEFAULT) && !c->quiet && json_is_object(props)) {
		json_object_foreach (props, k, sub) {
			json_t *def = json_object_get(sub, "default");
			x = json_object_get(v, k);
			if (def && (!x || (json_is_null(x) && !nullable(sub))))
				json_object_set_new(v, k, json_deep_copy(def));
		}
	}
	if (json_is_array(req)) {
		json_array_foreach (req, i, x) {
			json_t *m;
			if (!json_is_string(x))
				continue;
			m = json_object_get(v, json_string_value(x));
			if (m && !(json_is_null(m) &&
				   !nullable(json_object_get(
					   props, json_string_value(x)))))
				continue;
			path_push_field(path, json_string_value(x));
			add_err(c, path, "Required value");
			strbuf_setlen(path, len);
		}
	}
	if (embedded) {
		static const char *const need[] = { "apiVersion", "kind" };
		for (i = 0; i < ARRAY_SIZE(need); i++) {
			x = json_object_get(v, need[i]);
			if (json_is_string(x) && json_string_length(x))
				continue;
			path_push_field(path, need[i]);
			add_err(c, path, "Required value: must not be empty");
			strbuf_setlen(path, len);
		}
	}
	json_object_foreach_safe (v, tmp, k, x) {
		int del;

		sub = json_object_get(props, k);
		if ((root || embedded) &&
		    (!strcmp(k, "apiVersion") || !strcmp(k, "kind"))) {
			path_push_field(path, k);
			if (!json_is_string(x))
				type_error(c, path, "string", x);
			strbuf_setlen(path, len);
			continue;
		}
		if ((root || embedded) && !strcmp(k, "metadata")) {
			path_push_field(path, k);
			check_metadata(c, x, path);
			strbuf_setlen(path, len);
			continue;
		}
		if (sub) {
			if (json_is_null(x) && !nullable(sub)) {
				if ((c->flags & CRD_PRUNE) && !c->quiet)
					json_object_del(v, k);
				continue;
			}
			path_push_field(path, k);
			validate(c, sub, x, path, 0);
			strbuf_setlen(path, len);
		} else if (json_is_object(addl)) {
			if (json_is_null(x) && !nullable(addl)) {
				if ((c->flags & CRD_PRUNE) && !c->quiet)
					json_object_del(v, k);
				continue;
			}
			strbuf_addf(path, "[%s]", k);
			validate(c, addl, x, path, 0);
			strbuf_setlen(path, len);
		} else if (!preserve) {
			unknown_field(c, v, k, path, &del);
		}
	}
	if ((x = json_object_get(schema, "maxProperties")) &&
	    json_is_integer(x) &&
	    (json_int_t)json_object_size(v) > json_integer_value(x))
		add_err(c, path,
			"Too many: %zu: must have at most %" JSON_INTEGER_FORMAT
			" items",
			json_object_size(v), json_integer_value(x));
	if ((x = json_object_get(schema, "minProperties")) &&
	    json_is_integer(x) &&
	    (json_int_t)json_object_size(v) < json_integer_value(x))
		invalid(c, path, v,
			"%s in body should have at least %" JSON_INTEGER_FORMAT
			" properties",
			body_path(path), json_integer_value(x));
}

/*
 * the list-map key of item, as an array of the key values (an absent
 * key takes its default, as the API server defaults before validating)
 */
static json_t *map_key(const json_t *keys, const json_t *items,
		       const json_t *item)
{
	json_t *out = json_array(), *k, *props;
	size_t i;

	props = json_object_get(items, "properties");
	json_array_foreach (keys, i, k) {
		const char *name = json_string_value(k);
		json_t *x = json_object_get(item, name);
		if (!x)
			x = json_object_get(json_object_get(props, name),
					    "default");
		json_array_append(out, x ? x : json_null());
	}
	return out;
}

static void check_array(struct vctx *c, const json_t *schema, json_t *v,
			struct strbuf *path)
{
	json_t *items = json_object_get(schema, "items"), *x, *y;
	const char *lt = json_string_value(
		json_object_get(schema, "x-kubernetes-list-type"));
	json_t *mk = json_object_get(schema, "x-kubernetes-list-map-keys");
	int unique = flag(schema, "uniqueItems") || (lt && !strcmp(lt, "set"));
	size_t len = path->len, i, j;

	json_array_foreach (v, i, x) {
		strbuf_addf(path, "[%zu]", i);
		if (json_is_object(items))
			validate(c, items, x, path, 0);
		if (unique || (lt && !strcmp(lt, "map") && json_is_array(mk))) {
			for (j = 0; j < i; j++) {
				json_t *a, *b;
				int dup;

				y = json_array_get(v, j);
				if (unique) {
					dup = json_equal(x, y);
					a = json_incref(x);
				} else {
					a = map_key(mk, items, x);
					b = map_key(mk, items, y);
					dup = json_equal(a, b);
					json_decref(b);
				}
				if (dup) {
					struct strbuf sb = STRBUF_INIT;
					add_json(&sb, a);
					add_err(c, path, "Duplicate value: %s",
						sb.buf);
					strbuf_release(&sb);
				}
				json_decref(a);
				if (dup)
					break;
			}
		}
		strbuf_setlen(path, len);
	}
	if ((x = json_object_get(schema, "maxItems")) && json_is_integer(x) &&
	    (json_int_t)json_array_size(v) > json_integer_value(x))
		add_err(c, path,
			"Too many: %zu: must have at most %" JSON_INTEGER_FORMAT
			" items",
			json_array_size(v), json_integer_value(x));
	if ((x = json_object_get(schema, "minItems")) && json_is_integer(x) &&
	    (json_int_t)json_array_size(v) < json_integer_value(x))
		invalid(c, path, v,
			"%s in body should have at least %" JSON_INTEGER_FORMAT
			" items",
			body_path(path), json_integer_value(x));
}

/* errors of one junctor branch, counted but not reported */
static int branch_errors(struct vctx *c, const json_t *schema, json_t *v,
			 struct strbuf *path)
{
	struct vctx sub = *c;

	sub.errors = NULL;
	sub.warnings = NULL;
	sub.nerr = 0;
	sub.quiet = 1;
	validate(&sub, schema, v, path, 0);
	c->rx = sub.rx; /* the regex cache may have grown */
	c->rx_nr = sub.rx_nr;
	c->rx_alloc = sub.rx_alloc;
	return sub.nerr;
}

static void check_junctors(struct vctx *c, const json_t *schema, json_t *v,
			   struct strbuf *path)
{
	json_t *x, *b;
	size_t i;

	if (json_is_array(x = json_object_get(schema, "allOf"))) {
		int quiet = c->quiet;
		c->quiet = 1;
		json_array_foreach (x, i, b) {
			validate(c, b, v, path, 0);
		}
		c->quiet = quiet;
	}
	if (json_is_array(x = json_object_get(schema, "anyOf"))) {
		int ok = 0;
		json_array_foreach (x, i, b) {
			if (!branch_errors(c, b, v, path)) {
				ok = 1;
				break;
			}
		}
		if (!ok && json_array_size(x))
			invalid(c, path, v,
				"must validate at least one "
				"schema (anyOf)");
	}
	if (json_is_array(x = json_object_get(schema, "oneOf"))) {
		int n = 0;
		json_array_foreach (x, i, b) {
			n += !branch_errors(c, b, v, path);
		}
		if (n != 1 && json_array_size(x))
			invalid(c, path, v,
				"must validate one and only one "
				"schema (oneOf)");
	}
	if (json_is_object(x = json_object_get(schema, "not")) &&
	    !branch_errors(c, x, v, path))
		invalid(c, path, v, "must not validate the schema (not)");
}

static void validate(struct vctx *c, const json_t *schema, json_t *v,
		     struct strbuf *path, int root)
{
	const char *type;

	if (!json_is_object(schema))
		return;
	type = json_string_value(json_object_get(schema, "type"));
	if (json_is_null(v)) {
		if (!nullable(schema) && type)
			type_error(c, path, type, v);
		return;
	}
	if (type && !type_matches(type, v)) {
		type_error(c, path, type, v);
		return;
	}
	if (!type && flag(schema, "x-kubernetes-int-or-string") &&
	    !is_integral(v) && !json_is_string(v)) {
		type_error(c, path, "integer,string", v);
		return;
	}
	check_enum(c, schema, v, path);
	if (json_is_string(v))
		check_string(c, schema, v, path);
	else if (json_is_number(v))
		check_number(c, schema, v, path);
	else if (json_is_object(v))
		check_object(c, schema, v, path, root);
	else if (json_is_array(v))
		check_array(c, schema, v, path);
	check_junctors(c, schema, v, path);
}

int crd_schema_validate(const json_t *schema, json_t *value, const char *path,
			int root, unsigned flags, struct strvec *errors,
			struct strvec *warnings)
{
	struct vctx c = { 0 };
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	c.flags = flags;
	c.errors = errors;
	c.warnings = warnings;
	strbuf_addstr(&sb, path ? path : "");
	validate(&c, schema, value, &sb, root);
	for (i = 0; i < c.rx_nr; i++)
		if (c.rx[i].ok)
			regfree(&c.rx[i].re);
	free(c.rx);
	strbuf_release(&sb);
	return c.nerr;
}

int crd_from_json(struct crd *crd, json_t *doc, const char *origin)
{
	json_t *spec = json_object_get(doc, "spec");
	json_t *names = json_object_get(spec, "names");

	memset(crd, 0, sizeof(*crd));
	crd->group = json_object_str(spec, "group");
	crd->kind = json_object_str(names, "kind");
	crd->plural = json_object_str(names, "plural");
	crd->scope = json_object_str(spec, "scope");
	if (!crd->group || !crd->kind ||
	    !json_is_array(json_object_get(spec, "versions")))
		return error("'%s': not a CustomResourceDefinition "
			     "(no spec.group, spec.names.kind or "
			     "spec.versions)",
			     origin ? origin : "<input>");
	crd->doc = json_incref(doc);
	return 0;
}

void crd_release(struct crd *crd)
{
	json_decref(crd->doc);
	memset(crd, 0, sizeof(*crd));
}

json_t *crd_version(const struct crd *crd, const char *version)
{
	json_t *vs = json_object_get(json_object_get(crd->doc, "spec"),
				     "versions"),
	       *v;
	size_t i;

	json_array_foreach (vs, i, v) {
		const char *name = json_object_str(v, "name");
		if (name && !strcmp(name, version))
			return v;
	}
	return NULL;
}

json_t *crd_version_schema(const struct crd *crd, const char *version)
{
	json_t *v = crd_version(crd, version), *s;

	if (!v)
		return NULL;
	s = json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
	if (!s)
		s = json_object_get(
			json_object_get(json_object_get(crd->doc, "spec"),
					"validation"),
			"openAPIV3Schema");
	return s;
}

const char *crd_storage_version(const struct crd *crd)
{
	json_t *vs = json_object_get(json_object_get(crd->doc, "spec"),
				     "versions"),
	       *v;
	size_t i;

	json_array_foreach (vs, i, v) {
		if (json_is_true(json_object_get(v, "storage")))
			return json_object_str(v, "name");
	}
	return NULL;
}

int crd_validate_object(const struct crd *crd, json_t *obj, unsigned flags,
			struct strvec *errors, struct strvec *warnings)
{
	const char *av = json_object_str(obj, "apiVersion");
	const char *kind = json_object_str(obj, "kind");
	const char *slash, *version;
	json_t *ver, *schema;
	size_t glen;

	if (!json_is_object(obj)) {
		if (errors)
			strvec_pushf(errors,
				     "Invalid value: \"%s\": body "
				     "must be of type object",
				     type_name(obj));
		return 1;
	}
	if (!av || !(slash = strchr(av, '/'))) {
		if (errors)
			strvec_push(errors, "apiVersion: Required value: "
					    "must be <group>/<version>");
		return 1;
	}
	glen = slash - av;
	version = slash + 1;
	if (strlen(crd->group) != glen || strncmp(av, crd->group, glen) ||
	    !kind || strcmp(kind, crd->kind)) {
		if (errors)
			strvec_pushf(errors,
				     "kind: Invalid value: \"%s\": "
				     "this CRD serves %s of %s",
				     kind ? kind : "", crd->kind, crd->group);
		return 1;
	}
	ver = crd_version(crd, version);
	if (!ver || !json_is_true(json_object_get(ver, "served"))) {
		if (errors)
			strvec_pushf(errors,
				     "apiVersion: Unsupported value: "
				     "\"%s\": no such version served",
				     av);
		return 1;
	}
	if (json_is_true(json_object_get(ver, "deprecated")) && warnings) {
		const char *w = json_object_str(ver, "deprecationWarning");
		if (w)
			strvec_push(warnings, w);
		else
			strvec_pushf(warnings, "%s %s is deprecated", av,
				     crd->kind);
	}
	schema = crd_version_schema(crd, version);
	if (!schema)
		return 0; /* no schema: anything goes (preserved) */
	return crd_schema_validate(schema, obj, "", 1, flags, errors, warnings);
}

int crd_set_add(struct crd_set *set, json_t *doc, const char *origin)
{
	const char *kind = json_object_str(doc, "kind");
	struct crd crd;

	if (!kind || strcmp(kind, "CustomResourceDefinition"))
		return 0;
	if (crd_from_json(&crd, doc, origin))
		return -1;
	ALLOC_GROW(set->items, set->nr + 1, set->alloc);
	set->items[set->nr++] = crd;
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int crd_set_load_dir(struct crd_set *set, const char *dir)
{
	struct strvec names = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT;
	struct dirent *de;
	DIR *d = opendir(dir);
	int added = 0;
	size_t i;

	if (!d)
		return error_errno("cannot open CRD directory '%s'", dir);
	while ((de = readdir(d)))
		if (ends_with(de->d_name, ".yaml") ||
		    ends_with(de->d_name, ".yml") ||
		    ends_with(de->d_name, ".json"))
			strvec_push(&names, de->d_name);
	closedir(d);
	qsort(names.v, names.nr, sizeof(*names.v), cmp_str);
	for (i = 0; i < names.nr && added >= 0; i++) {
		json_t *docs, *doc;
		size_t j;

		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s", dir, names.v[i]);
		docs = yaml_load_file(path.buf);
		if (!docs) {
			added = -1;
			break;
		}
		json_array_foreach (docs, j, doc) {
			int r = crd_set_add(set, doc, path.buf);
			if (r < 0) {
				added = -1;
				break;
			}
			added += r;
		}
		json_decref(docs);
	}
	strvec_clear(&names);
	strbuf_release(&path);
	return added;
}

const struct crd *crd_set_find(const struct crd_set *set,
			       const char *api_version, const char *kind)
{
	const char *slash = api_version ? strchr(api_version, '/') : NULL;
	size_t i, glen;

	if (!slash || !kind)
		return NULL;
	glen = slash - api_version;
	for (i = 0; i < set->nr; i++) {
		const struct crd *c = &set->items[i];
		if (strlen(c->group) == glen &&
		    !strncmp(c->group, api_version, glen) &&
		    !strcmp(c->kind, kind))
			return c;
	}
	return NULL;
}

void crd_set_release(struct crd_set *set)
{
	size_t i;

	for (i = 0; i < set->nr; i++)
		crd_release(&set->items[i]);
	free(set->items);
	set->items = NULL;
	set->nr = set->alloc = 0;
}
