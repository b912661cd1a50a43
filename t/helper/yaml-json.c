#include "compat.h"
#include "yaml-json.h"
#include "usage.h"

#include <math.h>
#include <yaml.h>

#define TAG_PREFIX "tag:yaml.org,2002:"
#define MAX_DEPTH 10000

struct frame {
	json_t *node; /* the array or object being built */
	char *anchor; /* its anchor, registered when complete */
	char *key;    /* mappings: the pending key, or NULL */
	size_t key_len;
	int key_is_merge; /* the pending key is a plain "<<" */
	json_t *merges;	  /* mappings to merge at the end (array) */
	size_t line, col; /* where the pending key started */
};

struct parse_state {
	const char *origin;
	struct strbuf *err;
	struct frame *stack;
	size_t nr, alloc;
	json_t *root;
	json_t *anchors; /* name -> value */
	size_t alias_nodes;
};

static int fail_at(struct parse_state *ps, const yaml_mark_t *mark,
		   const char *fmt, ...) PRINTF_LIKE(3, 4);
static int fail_at(struct parse_state *ps, const yaml_mark_t *mark,
		   const char *fmt, ...)
{
	va_list ap;

	if (!ps->err)
		return -1;
	strbuf_addf(ps->err,
		    "cannot parse '%s': line %lu, column %lu: ", ps->origin,
		    (unsigned long)mark->line + 1,
		    (unsigned long)mark->column + 1);
	va_start(ap, fmt);
	strbuf_vaddf(ps->err, fmt, ap);
	va_end(ap);
	return -1;
}

static int all_digits(const char *s, size_t len, int base)
{
	size_t i;

	if (!len)
		return 0;
	for (i = 0; i < len; i++) {
		int c = (unsigned char)s[i];
		if (base == 8 && !(c >= '0' && c <= '7'))
			return 0;
		if (base == 10 && !(c >= '0' && c <= '9'))
			return 0;
		if (base == 16 &&
		    !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		      (c >= 'A' && c <= 'F')))
			return 0;
	}
	return 1;
}

/* [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
static int is_core_float(const char *s, size_t len)
{
	size_t i = 0, d1 = 0, d2 = 0;

	if (i < len && (s[i] == '-' || s[i] == '+'))
		i++;
	while (i < len && s[i] >= '0' && s[i] <= '9')
		i++, d1++;
	if (i < len && s[i] == '.') {
		i++;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++, d2++;
	}
	if (!d1 && !d2)
		return 0;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t d3 = 0;
		i++;
		if (i < len && (s[i] == '-' || s[i] == '+'))
			i++;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++, d3++;
		if (!d3)
			return 0;
	}
	return i == len;
}

static int is_one_of(const char *s, size_t len, const char *const *words)
{
	for (; *words; words++)
		if (strlen(*words) == len && !memcmp(s, *words, len))
			return 1;
	return 0;
}

static const char *const null_words[] = { "~", "null", "Null", "NULL", NULL };
static const char *const true_words[] = { "true", "True", "TRUE", NULL };
static const char *const false_words[] = { "false", "False", "FALSE", NULL };
static const char *const inf_words[] = { ".inf",  ".Inf",  ".INF",  "+.inf",
					 "+.Inf", "+.INF", "-.inf", "-.Inf",
					 "-.INF", ".nan",  ".NaN",  ".NAN",
					 NULL };

/* an integer in base; beyond int64 (decimal only) becomes a real */
static json_t *make_int(const char *s, size_t len, int base)
{
	char *copy = xstrndup(s, len), *end;
	json_t *v = NULL;
	long long n;

	errno = 0;
	n = strtoll(copy, &end, base);
	if (!*end && !errno)
		v = json_integer(n);
	else if (errno == ERANGE && base == 10)
		v = json_real(strtod(copy, NULL));
	free(copy);
	return v;
}

static json_t *make_real(const char *s, size_t len)
{
	char *copy = xstrndup(s, len);
	double d = strtod(copy, NULL);

	free(copy);
	if (!isfinite(d))
		return NULL;
	return json_real(d);
}

/*
 * Resolve one scalar. Returns a new reference, or NULL with *why set.
 */
static json_t *resolve_scalar(const yaml_event_t *ev, const char **why)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;
	const char *t = NULL;
	json_t *v;

	*why = NULL;
	if (tag && skip_prefix(tag, TAG_PREFIX, &t)) {
		if (!strcmp(t, "str") || !strcmp(t, "binary"))
			return json_stringn(s, len);
		if (!strcmp(t, "null"))
			return json_null();
		if (!strcmp(t, "bool")) {
			if (is_one_of(s, len, true_words))
				return json_true();
			if (is_one_of(s, len, false_words))
				return json_false();
			*why = "not a boolean";
			return NULL;
		}
	} else if (tag && !strcmp(tag, "!")) {
		return json_stringn(s, len);
	}
	if (!t && !ev->data.scalar.plain_implicit)
		return json_stringn(s, len);
	if (!t && ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE &&
	    ev->data.scalar.style != YAML_ANY_SCALAR_STYLE)
		return json_stringn(s, len);
	if (!t || !strcmp(t, "int") || !strcmp(t, "float")) {
		int want_int = t && !strcmp(t, "int");
		int want_float = t && !strcmp(t, "float");

		if (!want_int && !want_float) {
			if (!len || is_one_of(s, len, null_words))
				return json_null();
			if (is_one_of(s, len, true_words))
				return json_true();
			if (is_one_of(s, len, false_words))
				return json_false();
		}
		if (!want_float) {
			v = NULL;
			if (len > 2 && s[0] == '0' && s[1] == 'o' &&
			    all_digits(s + 2, len - 2, 8))
				v = make_int(s + 2, len - 2, 8);
			else if (len > 2 && s[0] == '0' && s[1] == 'x' &&
				 all_digits(s + 2, len - 2, 16))
				v = make_int(s + 2, len - 2, 16);
			else if ((s[0] == '-' || s[0] == '+')
					 ? all_digits(s + 1, len - 1, 10)
					 : all_digits(s, len, 10))
				v = make_int(s, len, 10);
			if (v)
				return v;
			if (len > 2 && s[0] == '0' &&
			    (s[1] == 'o' || s[1] == 'x') &&
			    all_digits(s + 2, len - 2, s[1] == 'o' ? 8 : 16)) {
				*why = "integer out of range";
				return NULL;
			}
		}
		if (is_core_float(s, len))
			return make_real(s, len);
		if (is_one_of(s, len, inf_words)) {
			*why = "infinity and NaN have no JSON value";
			return NULL;
		}
		if (want_int || want_float) {
			*why = want_int ? "not an integer" : "not a number";
			return NULL;
		}
	}
	return json_stringn(s, len);
}

static size_t count_nodes(const json_t *v)
{
	size_t n = 1, i;
	const char *k;
	json_t *x;

	if (json_is_array(v)) {
		json_array_foreach (v, i, x) {
			n += count_nodes(x);
		}
	} else if (json_is_object(v)) {
		json_object_foreach ((json_t *)v, k, x) {
			n += count_nodes(x);
		}
	}
	return n;
}

static struct frame *top(struct parse_state *ps)
{
	return ps->nr ? &ps->stack[ps->nr - 1] : NULL;
}

/* add a completed value (steals the reference) where it belongs */
static int add_value(struct parse_state *ps, json_t *v, const yaml_mark_t *mark)
{
	struct frame *f = top(ps);
	yaml_mark_t km;

	if (!f) {
		ps->root = v;
		return 0;
	}
	if (json_is_array(f->node)) {
		json_array_append_new(f->node, v);
		return 0;
	}
	if (!f->key) {
		json_decref(v);
		return fail_at(ps, mark, "a mapping key must be a scalar");
	}
	if (f->key_is_merge) {
		size_t i;
		json_t *x;

		if (json_is_object(v)) {
			json_array_append_new(f->merges, v);
		} else if (json_is_array(v)) {
			json_array_foreach (v, i, x) {
				if (!json_is_object(x)) {
					json_decref(v);
					return fail_at(ps, mark,
						       "a merge key needs "
						       "mappings");
				}
				json_array_append(f->merges, x);
			}
			json_decref(v);
		} else {
			json_decref(v);
			return fail_at(ps, mark, "a merge key needs mappings");
		}
	} else {
		if (json_object_getn(f->node, f->key, f->key_len)) {
			km.line = f->line;
			km.column = f->col;
			km.index = 0;
			json_decref(v);
			fail_at(ps, &km, "duplicate key \"%.*s\"",
				(int)f->key_len, f->key);
			return -1;
		}
		json_object_setn_new(f->node, f->key, f->key_len, v);
	}
	free(f->key);
	f->key = NULL;
	f->key_is_merge = 0;
	return 0;
}

static int take_key(struct parse_state *ps, const char *s, size_t len,
		    int merge, const yaml_mark_t *mark)
{
	struct frame *f = top(ps);

	f->key = xstrndup(s, len);
	f->key_len = len;
	f->key_is_merge = merge;
	f->line = mark->line;
	f->col = mark->column;
	return 0;
}

static int awaiting_key(struct parse_state *ps)
{
	struct frame *f = top(ps);

	return f && json_is_object(f->node) && !f->key;
}

static void register_anchor(struct parse_state *ps, const char *anchor,
			    json_t *v)
{
	if (anchor)
		json_object_set(ps->anchors, anchor, v);
}

static int on_scalar(struct parse_state *ps, const yaml_event_t *ev)
{
	const char *why;
	json_t *v;

	if (awaiting_key(ps)) {
		const char *s = (const char *)ev->data.scalar.value;
		size_t len = ev->data.scalar.length;
		int merge = len == 2 && !memcmp(s, "<<", 2) &&
			    ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
			    !ev->data.scalar.tag;
		if (ev->data.scalar.anchor) {
			json_t *k = json_stringn(s, len);
			register_anchor(
				ps, (const char *)ev->data.scalar.anchor, k);
			json_decref(k);
		}
		return take_key(ps, s, len, merge, &ev->start_mark);
	}
	v = resolve_scalar(ev, &why);
	if (!v)
		return fail_at(ps, &ev->start_mark, "%s: '%.*s'",
			       why ? why : "invalid scalar",
			       (int)ev->data.scalar.length,
			       (const char *)ev->data.scalar.value);
	register_anchor(ps, (const char *)ev->data.scalar.anchor, v);
	return add_value(ps, v, &ev->start_mark);
}

static int on_alias(struct parse_state *ps, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	json_t *v = json_object_get(ps->anchors, name);

	if (!v)
		return fail_at(ps, &ev->start_mark, "unknown anchor '%s'",
			       name);
	if (awaiting_key(ps)) {
		if (!json_is_string(v))
			return fail_at(ps, &ev->start_mark,
				       "a mapping key must be a scalar");
		return take_key(ps, json_string_value(v), json_string_length(v),
				0, &ev->start_mark);
	}
	ps->alias_nodes += count_nodes(v);
	if (ps->alias_nodes > YAML_ALIAS_NODE_LIMIT)
		return fail_at(ps, &ev->start_mark,
			       "aliases expand to more than %d nodes",
			       YAML_ALIAS_NODE_LIMIT);
	return add_value(ps, json_deep_copy(v), &ev->start_mark);
}

static int push_frame(struct parse_state *ps, json_t *node,
		      const yaml_char_t *anchor, const yaml_mark_t *mark)
{
	struct frame *f;

	if (awaiting_key(ps)) {
		json_decref(node);
		return fail_at(ps, mark, "a mapping key must be a scalar");
	}
	if (ps->nr >= MAX_DEPTH) {
		json_decref(node);
		return fail_at(ps, mark, "nested more than %d levels",
			       MAX_DEPTH);
	}
	ALLOC_GROW(ps->stack, ps->nr + 1, ps->alloc);
	f = &ps->stack[ps->nr++];
	memset(f, 0, sizeof(*f));
	f->node = node;
	f->anchor = anchor ? xstrdup((const char *)anchor) : NULL;
	if (json_is_object(node))
		f->merges = json_array();
	return 0;
}

static void frame_release(struct frame *f)
{
	json_decref(f->node);
	json_decref(f->merges);
	free(f->anchor);
	free(f->key);
}

static int pop_frame(struct parse_state *ps, const yaml_mark_t *mark)
{
	struct frame f = ps->stack[--ps->nr];
	json_t *node = f.node;
	size_t i;
	json_t *m;

	if (f.merges) {
		json_array_foreach (f.merges, i, m) {
			const char *k;
			json_t *x;

			json_object_foreach (m, k, x) {
				if (!json_object_get(node, k))
					json_object_set(node, k, x);
			}
		}
	}
	register_anchor(ps, f.anchor, node);
	f.node = NULL;
	frame_release(&f);
	return add_value(ps, node, mark);
}

static void reset_state(struct parse_state *ps)
{
	while (ps->nr)
		frame_release(&ps->stack[--ps->nr]);
	json_decref(ps->root);
	ps->root = NULL;
}

int yaml_parse_stream_cb(const char *buf, size_t len, const char *origin,
			 yaml_doc_fn fn, void *data, struct strbuf *err)
{
	struct parse_state ps = { 0 };
	yaml_parser_t parser;
	yaml_event_t ev;
	size_t index = 0, doc_line = 1;
	int ret = 0, done = 0;

	ps.origin = origin ? origin : "<input>";
	ps.err = err;
	ps.anchors = json_object();
	if (!yaml_parser_initialize(&parser)) {
		json_decref(ps.anchors);
		if (err)
			strbuf_addf(err, "cannot parse '%s': out of memory",
				    ps.origin);
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done && !ret) {
		if (!yaml_parser_parse(&parser, &ev)) {
			yaml_mark_t *m = &parser.problem_mark;

			fail_at(&ps, m, "%s",
				parser.problem ? parser.problem : "bad input");
			if (err && parser.context)
				strbuf_addf(err,
					    " (%s at line %lu, column %lu)",
					    parser.context,
					    (unsigned long)parser.context_mark
							    .line +
						    1,
					    (unsigned long)parser.context_mark
							    .column +
						    1);
			ret = -1;
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			doc_line = ev.start_mark.line + 1;
			json_object_clear(ps.anchors);
			break;
		case YAML_DOCUMENT_END_EVENT:
			if (!ps.root)
				ps.root = json_null();
			if (fn)
				ret = fn(ps.root, index, doc_line, data);
			index++;
			json_decref(ps.root);
			ps.root = NULL;
			break;
		case YAML_SCALAR_EVENT:
			ret = on_scalar(&ps, &ev);
			break;
		case YAML_ALIAS_EVENT:
			ret = on_alias(&ps, &ev);
			break;
		case YAML_SEQUENCE_START_EVENT:
			ret = push_frame(&ps, json_array(),
					 ev.data.sequence_start.anchor,
					 &ev.start_mark);
			break;
		case YAML_MAPPING_START_EVENT:
			ret = push_frame(&ps, json_object(),
					 ev.data.mapping_start.anchor,
					 &ev.start_mark);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			ret = pop_frame(&ps, &ev.start_mark);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	reset_state(&ps);
	free(ps.stack);
	json_decref(ps.anchors);
	yaml_parser_delete(&parser);
	return ret;
}

static int collect(json_t *doc, size_t index, size_t line, void *data)
{
	json_array_append((json_t *)data, doc);
	return 0;
}

json_t *yaml_parse_stream(const char *buf, size_t len, const char *origin,
			  struct strbuf *err)
{
	json_t *docs = json_array();

	if (yaml_parse_stream_cb(buf, len, origin, collect, docs, err)) {
		json_decref(docs);
		return NULL;
	}
	return docs;
}

json_t *yaml_parse_one(const char *buf, size_t len, const char *origin,
		       struct strbuf *err)
{
	json_t *docs = yaml_parse_stream(buf, len, origin, err), *v;

	if (!docs)
		return NULL;
	if (json_array_size(docs) > 1) {
		if (err)
			strbuf_addf(err,
				    "cannot parse '%s': %zu documents, "
				    "expected one",
				    origin ? origin : "<input>",
				    json_array_size(docs));
		json_decref(docs);
		return NULL;
	}
	v = json_array_size(docs) ? json_incref(json_array_get(docs, 0))
				  : json_null();
	json_decref(docs);
	return v;
}

json_t *yaml_load_file(const char *path)
{
	struct strbuf sb = STRBUF_INIT, err = STRBUF_INIT;
	json_t *docs = NULL;

	if (strbuf_read_file(&sb, path, 0) < 0) {
		error_errno("cannot read '%s'", path);
		goto out;
	}
	docs = yaml_parse_stream(sb.buf, sb.len, path, &err);
	if (!docs)
		error("%s", err.buf);
out:
	strbuf_release(&sb);
	strbuf_release(&err);
	return docs;
}
