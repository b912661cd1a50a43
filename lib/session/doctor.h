#ifndef DOCTOR_H
#define DOCTOR_H

#include "compat.h"
#include "strbuf.h"

/*
 * The checks of `gosbx doctor` (Documentation/technical/design.md "One binary,
 * many commands"): each backend fills a check list through its ops' doctor op
 * (lib/session/session.h; lib/local/doctor-local.c, lib/session/doctor-url.c,
 * lib/kube/doctor-kube.c); builtin/doctor.c parses the options and prints
 * any list as text or JSON.
 */

struct session_opts;

/* The outcome of one check. */
enum doctor_status { DOCTOR_OK, DOCTOR_WARN, DOCTOR_FAIL };

/* One check; the strings are owned by the entry. */
struct doctor_check {
	char *name; /* e.g. "bwrap", "user namespaces" */
	enum doctor_status status;
	char *message; /* what was found */
	char *fix;     /* how to fix it, or NULL when ok */
};

/* Free the nr entries of checks and the array itself; checks may be NULL. */
void doctor_checks_free(struct doctor_check *checks, size_t nr);

/* "ok", "warn", "fail": the words of the text and JSON output */
const char *doctor_status_name(enum doctor_status s);

/* What the checks are asked to look at. */
struct doctor_opts {
	/*
	 * the session options of the global options (ctx_session_opts()),
	 * for --probe and the kube API version; not NULL
	 */
	const struct session_opts *session;
	int probe; /* also open a sandbox, run 'true' and close it */
	/* kube: the command's own options, else the global ones */
	const char *kubeconfig;	   /* or NULL: KUBECONFIG, ~/.kube/config */
	const char *context;	   /* or NULL: current-context */
	const char *namespace;	   /* or NULL: the context's */
	const char *template_name; /* SandboxTemplate to check; not NULL */
	int64_t probe_timeout_ms;  /* --probe: claim to Ready, > 0 */
};

/* A growing list of checks; entries own their strings. */
struct check_list {
	struct doctor_check *v;
	size_t nr, alloc;
};

/*
 * Append a check; name, message and fix are copied (fix is dropped
 * for an ok check; message NULL is "").
 */
void check_add(struct check_list *cl, const char *name,
	       enum doctor_status status, const char *message, const char *fix);
/* Move the nr entries of checks into cl and free the array. */
void check_take(struct check_list *cl, struct doctor_check *checks, size_t nr);
void check_list_release(struct check_list *cl);

/*
 * What the library reports through error() and warning() while a
 * check runs, kept instead of printed: errors in err, warnings in
 * warn, each joined with "; ". capture_end() restores the routine.
 */
struct capture {
	struct strbuf err;
	struct strbuf warn;
};
void capture_start(struct capture *cap);
void capture_end(struct capture *cap);
void capture_release(struct capture *cap);

/* Cut sb to its first line, trimmed. */
void first_line(struct strbuf *sb);

/*
 * The "probe" check: open a throwaway sandbox with the session
 * options of o, run `true`, close it; report the times.
 */
void doctor_probe(struct check_list *cl, const struct doctor_opts *o);

/* the doctor ops of the backends (struct backend_ops.doctor) */
int doctor_local(struct check_list *cl, const struct doctor_opts *o);
int doctor_url(struct check_list *cl, const struct doctor_opts *o);
int doctor_kube(struct check_list *cl, const struct doctor_opts *o);

#endif /* DOCTOR_H */
