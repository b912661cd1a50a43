#ifndef YAML_JSON_H
#define YAML_JSON_H

#include "compat.h"
#include "strbuf.h"

#include <jansson.h>

/*
 * YAML (libyaml's event parser) into jansson values, for manifests,
 * CRDs and kubeconfig.
 *
 * Scalars are typed by the YAML 1.2 core schema (yaml.org spec 1.2.2,
 * section 10.3): plain null, ~ and the empty value are null;
 * true/false (also True, TRUE...) are booleans; [-+]?[0-9]+, 0o17
 * and 0x1F are integers; decimal and exponent forms are reals.
 * Quoted and block scalars are always strings. Unlike Kubernetes'
 * own decoder (go-yaml, YAML 1.1), "yes", "on", "no", "off", "1_000"
 * and "017"-as-octal are not special: they stay strings (017 is 17).
 * An integer beyond int64 becomes a real; .inf and .nan have no JSON
 * value and are an error. The core tags !!str, !!int, !!float,
 * !!bool, !!null force a type; other tags are ignored.
 *
 * Mapping keys become strings (a plain 1 or true as "1", "true");
 * a key that is a mapping or sequence, and a duplicate key, are
 * errors. Anchors and aliases are expanded (at most
 * YAML_ALIAS_NODE_LIMIT nodes copied in total, against "billion
 * laughs" inputs); "<<" merge keys (YAML 1.1, used by go-yaml) merge
 * a mapping or a list of mappings without overriding explicit keys.
 *
 * Errors read "cannot parse '<origin>': line L, column C: <problem>"
 * (lines and columns from 1).
 */

#define YAML_ALIAS_NODE_LIMIT 1000000

/*
 * Called once per document of a stream, in order. doc is a borrowed
 * reference (take json_incref() to keep it); an empty document is
 * json null. index counts documents from 0; line is the line (from 1)
 * where the document starts. Return 0 to go on, non-zero to stop the
 * parse (yaml_parse_stream_cb then returns that value).
 */
typedef int (*yaml_doc_fn)(json_t *doc, size_t index, size_t line, void *data);

/*
 * Parse len bytes of YAML (UTF-8, or UTF-16 with a BOM), a stream of
 * zero or more documents separated by "---". origin names the input
 * in messages (a file name; NULL: "<input>"). Returns 0, -1 with a
 * message appended to err (may be NULL), or the callback's non-zero
 * value.
 */
int yaml_parse_stream_cb(const char *buf, size_t len, const char *origin,
			 yaml_doc_fn fn, void *data, struct strbuf *err);

/*
 * As yaml_parse_stream_cb(), collecting the documents into a new array
 * (empty for an empty stream). Returns a new reference the caller
 * json_decref()s, or NULL with a message in err.
 */
json_t *yaml_parse_stream(const char *buf, size_t len, const char *origin,
			  struct strbuf *err);

/*
 * Parse a stream that must hold at most one document (kubeconfig):
 * returns it (json null for an empty stream) as a new reference, or
 * NULL with a message in err, also when there are several documents.
 */
json_t *yaml_parse_one(const char *buf, size_t len, const char *origin,
		       struct strbuf *err);

/*
 * Read and parse the file at path into an array of documents (new
 * reference). On failure prints the error (error()) and returns NULL.
 */
json_t *yaml_load_file(const char *path);

#endif /* YAML_JSON_H */
