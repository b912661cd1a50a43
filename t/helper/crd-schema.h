#ifndef CRD_SCHEMA_H
#define CRD_SCHEMA_H

#include "compat.h"
#include "strvec.h"

#include <jansson.h>

/*
 * CustomResourceDefinitions (apiextensions.k8s.io/v1) and validation of
 * objects against their openAPIV3Schema, with the structural-schema
 * subset Kubernetes applies to custom resources (Kubernetes docs,
 * "Extend the Kubernetes API with CustomResourceDefinitions":
 * validation, pruning, defaulting, nullable).
 *
 * Checked: type (object, array, string, integer, number, boolean),
 * properties, required, additionalProperties (schema or bool), items,
 * enum, format (int32 and int64 ranges, date-time as RFC 3339, byte as
 * base64; other formats are not checked), minLength/maxLength (in
 * characters), minimum/maximum (+ exclusive*), multipleOf,
 * minItems/maxItems, uniqueItems, minProperties/maxProperties,
 * pattern, anyOf/oneOf/allOf/not, nullable, x-kubernetes-int-or-string,
 * x-kubernetes-preserve-unknown-fields, x-kubernetes-embedded-resource,
 * and duplicates in x-kubernetes-list-type set and map lists.
 * Not checked: x-kubernetes-validations (CEL rules).
 *
 * Patterns: Kubernetes evaluates them with Go's regexp (RE2), not
 * ECMA-262. They are translated to POSIX extended expressions
 * (regcomp REG_EXTENDED): \d \w \s (and their upper-case negations),
 * escapes inside brackets and (?: groups are rewritten; lookaround,
 * back-references, lazy quantifiers and \b cannot be: such a pattern is
 * reported as "unsupported pattern" instead of being guessed at.
 *
 * Unknown fields (not in properties, with no additionalProperties and
 * no x-kubernetes-preserve-unknown-fields) are errors by default, like
 * the API server's strict field validation (`unknown field
 * "spec.service"`); with CRD_PRUNE they are removed from the object
 * instead (reported as warnings when a warnings list is given). A null
 * member whose schema is not nullable counts as absent (Kubernetes
 * prunes it); with CRD_PRUNE it is removed. metadata at the root and in
 * embedded resources is checked loosely: name, generateName, namespace
 * strings (name a DNS-1123 subdomain), labels and annotations maps of
 * strings, other ObjectMeta fields allowed, unknown ones as above.
 *
 * Messages follow the API server's field errors:
 *   spec.sandboxTemplateRef.name: Required value
 *   spec.lifecycle.shutdownPolicy: Unsupported value: "x": supported
 *     values: "Delete", "DeleteForeground", "Retain"
 *   spec.replicas: Invalid value: "string": spec.replicas in body must
 *     be of type integer: "string"
 *   unknown field "spec.service"
 * Paths: ".name" for properties, "[key]" for additionalProperties keys,
 * "[i]" for items.
 */

/* flags of crd_schema_validate() and crd_validate_object() */
#define CRD_PRUNE (1u << 0)   /* remove unknown fields instead of errors */
#define CRD_DEFAULT (1u << 1) /* fill absent fields from "default" */

struct crd {
	json_t *doc;	    /* the whole CRD document (owned) */
	const char *group;  /* spec.group (points into doc) */
	const char *kind;   /* spec.names.kind */
	const char *plural; /* spec.names.plural */
	const char *scope;  /* spec.scope: Namespaced or Cluster */
};

/*
 * Fill crd from a parsed CustomResourceDefinition document (takes a
 * new reference to doc). origin names it in messages. Returns 0, or -1
 * with error() when doc is not a CRD (no group, kind or versions).
 * Release with crd_release().
 */
int crd_from_json(struct crd *crd, json_t *doc, const char *origin);
void crd_release(struct crd *crd);

/*
 * The openAPIV3Schema of a version (borrowed from crd->doc), or NULL
 * when the CRD has no such version. For apiextensions v1beta1 CRDs the
 * shared spec.validation schema is used when a version has none.
 */
json_t *crd_version_schema(const struct crd *crd, const char *version);
/* The version object spec.versions[i] named version (borrowed), or NULL. */
json_t *crd_version(const struct crd *crd, const char *version);
/* The storage version's name (borrowed), or NULL. */
const char *crd_storage_version(const struct crd *crd);

/*
 * Validate value against schema (an openAPIV3Schema or any of its
 * subschemas); path is the field path of value ("" at the root). With
 * root set, apiVersion, kind and metadata are treated as at the top of
 * an object. Each problem is appended to errors (and, with CRD_PRUNE,
 * each pruned field "unknown field \"...\"" to warnings when not NULL).
 * value is changed only with CRD_PRUNE or CRD_DEFAULT. Returns the
 * number of errors (0: valid).
 */
int crd_schema_validate(const json_t *schema, json_t *value, const char *path,
			int root, unsigned flags, struct strvec *errors,
			struct strvec *warnings);

/*
 * Validate a whole object (with apiVersion and kind) against the CRD:
 * the group and kind must match, the version must exist and be
 * served; a deprecated version adds its deprecationWarning to warnings.
 * Returns the number of errors appended to errors.
 */
int crd_validate_object(const struct crd *crd, json_t *obj, unsigned flags,
			struct strvec *errors, struct strvec *warnings);

/* A set of CRDs, e.g. loaded from a directory. */
struct crd_set {
	struct crd *items;
	size_t nr, alloc;
};
#define CRD_SET_INIT                                                           \
	{                                                                      \
		NULL, 0, 0                                                     \
	}

/*
 * Load every CustomResourceDefinition document of the *.yaml, *.yml and
 * *.json files in dir (other documents are skipped). Returns the
 * number of CRDs added, or -1 with error() when the directory or a file
 * cannot be read or parsed.
 */
int crd_set_load_dir(struct crd_set *set, const char *dir);
/* Add one document if it is a CRD: 1 added, 0 not a CRD, -1 error. */
int crd_set_add(struct crd_set *set, json_t *doc, const char *origin);
/*
 * The CRD of the group of an apiVersion ("group/version") and kind,
 * whatever the version (crd_validate_object() then refuses a version
 * it does not serve), or NULL (borrowed from set).
 */
const struct crd *crd_set_find(const struct crd_set *set,
			       const char *api_version, const char *kind);
void crd_set_release(struct crd_set *set);

#endif /* CRD_SCHEMA_H */
