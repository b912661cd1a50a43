#include "compat.h"
#include "json.h"
#include "local/egress.h"
#include "mcp/mcp-environment.h"
#include "mcp/mcp.h"
#include "mcp/mcp-result.h"
#include "parse-options.h"
#include "quote.h"
#include "session/jobs.h"
#include "session/session.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"
#include "utf8.h"

#include <math.h>
#include <pthread.h>
#include <sys/random.h>
#include <time.h>

/*
 * Toolset "sandbox" (Documentation/protocol/mcp.md "Toolset sandbox", seed 002:
 * microsandbox's MCP tools): named sandboxes, started and stopped by
 * the client, kept in the MCP session's state under (namespace, name).
 *
 * Choices this file makes (also said in the tool descriptions):
 * - sandbox_start of a name that is already running is an error (the
 *   config could differ; stop it first), not a silent success.
 * - `image` only picks a runtime profile on the local backend: every
 *   profile runs the same host toolchains; unknown images are refused.
 * - `volumes` and `ports` cannot be honoured locally: refused, never
 *   ignored.
 * - A command of a sandbox runs while holding that sandbox's lock, so
 *   commands of one sandbox run one after the other; sandbox_stop
 *   waits for the running one to end.
 * - The operator's limits (gosbx mcp --memory, --cpus) bound every
 *   sandbox: config.memory and config.cpus may lower them, never raise
 *   them (a larger value is clamped, and the result says so); an MCP
 *   session holds at most max_sandboxes sandboxes at once.
 */

/* One started sandbox. */
struct sbx {
	char *ns, *name;
	char *image;
	struct strvec env;    /* "K=V" of config.envs */
	pthread_mutex_t lock; /* held while the session is in use */
	struct session sess;
	int opened; /* sess is open */
	int gone;   /* stopped or failed to start */
	int refs;   /* guarded by the MCP session lock */
};

struct sbx_state {
	struct sbx **v;
	size_t nr, alloc;
	/*
	 * Sandboxes this client stopped with keep (suspended, not
	 * deleted), pairs "<namespace>/<sandbox>" and claim name: the
	 * next sandbox_start of that name resumes the claim
	 */
	struct strvec suspended;
};

static const char *const known_images[] = {
	"microsandbox/python",
	"python",
	"microsandbox/node",
	"node",
	"nodejs",
	"go",
	"golang",
	"bash",
	"shell",
};

static struct sbx_state *get_state(struct mcp_session *s)
{
	void **slot = mcp_session_state(s, &mcp_toolset_sandbox);

	if (!*slot) {
		struct sbx_state *st = xcalloc(1, sizeof(*st));

		strvec_init(&st->suspended);
		*slot = st;
	}
	return *slot;
}

static void sbx_free(struct sbx *b)
{
	free(b->ns);
	free(b->name);
	free(b->image);
	strvec_clear(&b->env);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

/* Drop a reference; the MCP session lock must be held. */
static void sbx_unref_locked(struct sbx *b)
{
	if (--b->refs == 0)
		sbx_free(b);
}

static void sbx_unref(struct mcp_session *s, struct sbx *b)
{
	mcp_session_lock(s);
	sbx_unref_locked(b);
	mcp_session_unlock(s);
}

static ssize_t find_locked(struct sbx_state *st, const char *ns,
			   const char *name)
{
	for (size_t i = 0; i < st->nr; i++)
		if (!strcmp(st->v[i]->ns, ns) && !strcmp(st->v[i]->name, name))
			return (ssize_t)i;
	return -1;
}

static void remove_locked(struct sbx_state *st, struct sbx *b)
{
	for (size_t i = 0; i < st->nr; i++) {
		if (st->v[i] != b)
			continue;
		memmove(st->v + i, st->v + i + 1,
			(st->nr - i - 1) * sizeof(*st->v));
		st->nr--;
		sbx_unref_locked(b);
		return;
	}
}

/*
 * A sandbox whose start failed (b locked by the caller, unlocked here):
 * gone from the session's list; suspended_claim (or NULL): the claim of
 * ns/name stays suspended, to be resumed by a later start.
 */
static void drop_unopened(struct mcp_session *session, struct sbx *b,
			  const char *ns, const char *name,
			  const char *suspended_claim)
{
	struct sbx_state *st;

	b->gone = 1;
	pthread_mutex_unlock(&b->lock);
	mcp_session_lock(session);
	st = get_state(session);
	remove_locked(st, b);
	if (suspended_claim) {
		strvec_pushf(&st->suspended, "%s/%s", ns, name);
		strvec_push(&st->suspended, suspended_claim);
	}
	sbx_unref_locked(b);
	mcp_session_unlock(session);
}

/* Look a sandbox up and take a reference, or NULL. */
static struct sbx *sbx_get(struct mcp_session *s, const char *ns,
			   const char *name)
{
	struct sbx_state *st;
	struct sbx *b = NULL;
	ssize_t i;

	mcp_session_lock(s);
	st = get_state(s);
	i = find_locked(st, ns, name);
	if (i >= 0) {
		b = st->v[i];
		b->refs++;
	}
	mcp_session_unlock(s);
	return b;
}

/*
 * Lock a sandbox for use. Returns 0 with b->lock held, or -1 (lock
 * released) when it is not running (any more).
 */
static int sbx_lock_open(struct sbx *b)
{
	pthread_mutex_lock(&b->lock);
	if (b->opened && !b->gone)
		return 0;
	pthread_mutex_unlock(&b->lock);
	return -1;
}

static void not_running(struct mcp_result *res, const char *ns,
			const char *name)
{
	mcp_result_error(res,
			 "sandbox '%s/%s' is not running; start it with "
			 "sandbox_start",
			 ns, name);
}

/* ---- argument helpers ---- */

/* A required non-empty string argument, or NULL with res set. */
static const char *arg_str(struct mcp_call *call, struct mcp_result *res,
			   const char *key)
{
	json_t *v = json_object_get(call->args, key);

	if (!v || json_is_null(v)) {
		mcp_result_error(res, "missing argument '%s'", key);
		return NULL;
	}
	if (!json_is_string(v)) {
		mcp_result_error(res, "argument '%s' must be a string", key);
		return NULL;
	}
	if (!*json_string_value(v)) {
		mcp_result_error(res, "argument '%s' must not be empty", key);
		return NULL;
	}
	return json_string_value(v);
}

/* sandbox and namespace: required, printable, at most 128 bytes */
static int arg_target(struct mcp_call *call, struct mcp_result *res,
		      const char **ns, const char **name)
{
	const char *keys[2] = { "namespace", "sandbox" };
	const char **out[2] = { ns, name };

	for (int i = 0; i < 2; i++) {
		const char *v = arg_str(call, res, keys[i]);
		if (!v)
			return -1;
		if (strlen(v) > 128) {
			mcp_result_error(res,
					 "argument '%s' is longer than "
					 "128 bytes",
					 keys[i]);
			return -1;
		}
		for (const char *p = v; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f ||
			    (*p == '/' && i == 1)) {
				mcp_result_error(
					res,
					"argument '%s' must not contain "
					"control characters%s",
					keys[i], i ? " or '/'" : "");
				return -1;
			}
		*out[i] = v;
	}
	return 0;
}

static int check_unknown(struct mcp_call *call, struct mcp_result *res,
			 const json_t *obj, const char *const *allowed,
			 size_t nr, const char *where)
{
	const char *key;
	json_t *v;

	(void)call;
	json_object_foreach ((json_t *)obj, key, v) {
		size_t i;
		for (i = 0; i < nr; i++)
			if (!strcmp(key, allowed[i]))
				break;
		if (i == nr) {
			mcp_result_error(res, "unknown %s '%s'", where, key);
			return -1;
		}
	}
	return 0;
}

/* ---- output ---- */

/*
 * The result of a command: text
 *   exit=<N>  (<ms>ms)[  reason=<why>][  signal=<n>][  cpu=<s>s
 *   peak_memory=<MB>MB][  [truncated: ...]]   (one line)
 *   <blank line>
 *   ── stdout ── ...  ── stderr ── ...   (or "(no output)")
 * isError when the exit code is not 0, structuredContent
 * {exit_code, stdout, stderr, duration_ms, reason, signal, cpu_ms,
 * peak_rss_kb} (the last four when known).
 */
static void command_result(struct mcp_result *res, struct session_result *r)
{
	int trunc_o, trunc_e;
	json_t *o;

	session_result_head_tail(r);
	trunc_o = r->out_truncated;
	trunc_e = r->err_truncated;
	o = json_object();
	json_object_set_new(o, "exit_code", json_integer(r->exit_code));
	json_object_set_new(o, "stdout",
			    mcp_result_json_string(r->out.buf, r->out.len));
	json_object_set_new(o, "stderr",
			    mcp_result_json_string(r->err.buf, r->err.len));
	json_object_set_new(o, "duration_ms", json_integer(r->duration_ms));
	if (strcmp(r->reason, "exited"))
		json_object_set_new(o, "reason", json_string(r->reason));
	if (r->signal > 0)
		json_object_set_new(o, "signal", json_integer(r->signal));
	if (r->cpu_ms >= 0)
		json_object_set_new(o, "cpu_ms", json_integer(r->cpu_ms));
	if (r->peak_rss_kb >= 0)
		json_object_set_new(o, "peak_rss_kb",
				    json_integer(r->peak_rss_kb));

	strbuf_reset(&res->text);
	strbuf_addf(&res->text, "exit=%d  (%" PRId64 "ms)", r->exit_code,
		    r->duration_ms);
	if (strcmp(r->reason, "exited"))
		strbuf_addf(&res->text, "  reason=%s", r->reason);
	if (r->signal > 0)
		strbuf_addf(&res->text, "  signal=%d", r->signal);
	if (r->cpu_ms >= 0)
		strbuf_addf(&res->text, "  cpu=%.3fs", r->cpu_ms / 1000.0);
	if (r->peak_rss_kb >= 0)
		strbuf_addf(&res->text, "  peak_memory=%.1fMB",
			    r->peak_rss_kb / 1024.0);
	if (trunc_o || trunc_e)
		strbuf_addf(&res->text, "  [truncated: %s%s%s]",
			    trunc_o ? "stdout" : "",
			    trunc_o && trunc_e ? ", " : "",
			    trunc_e ? "stderr" : "");
	strbuf_addch(&res->text, '\n');
	if (!r->out.len && !r->err.len)
		strbuf_addstr(&res->text, "\n(no output)\n");
	mcp_result_add_stream(&res->text, "stdout", r->out.buf, r->out.len);
	mcp_result_add_stream(&res->text, "stderr", r->err.buf, r->err.len);
	res->is_error = r->exit_code != 0;
	json_decref(res->structured);
	res->structured = o;
}

struct phase_data {
	struct mcp_call *call;
	double n;
};

/* notifications/progress at each phase (when the client asked) */
static void on_phase(const char *phase, void *data)
{
	struct phase_data *pd = data;

	mcp_call_progress(pd->call, ++pd->n, 0, phase);
}

/* The timeout argument, default --call-timeout; -1 with res set. */
static int arg_timeout(struct mcp_call *call, struct mcp_result *res,
		       int64_t *ms)
{
	const struct mcp_options *o = mcp_session_options(call->session);

	return mcp_call_timeout_arg(call, res, o->call_timeout_ms, ms);
}

/*
 * Run one command in a started sandbox and fill res; timeout_ms is the
 * longest run (arg_timeout()).
 */
static int run_in(struct mcp_call *call, struct mcp_result *res, const char *ns,
		  const char *name, const char *command,
		  const struct session_file *files, size_t nr_files,
		  int64_t timeout_ms)
{
	struct session_exec e = { 0 };
	struct session_result r;
	struct phase_data pd = { call, 0 };
	struct sbx *b = sbx_get(call->session, ns, name);
	int ret;

	if (!b || sbx_lock_open(b) < 0) {
		not_running(res, ns, name);
		if (b)
			sbx_unref(call->session, b);
		return 0;
	}
	e.files = files;
	e.nr_files = nr_files;
	e.command = command;
	e.env = b->env.nr ? b->env.v : NULL;
	e.cancel = &call->cancelled;
	e.on_phase = on_phase;
	e.data = &pd;
	e.timeout_ms = timeout_ms; /* the argument or --call-timeout */
	/* command_result() returns head and tail only */
	e.keep_bytes = SESSION_KEEP_HEAD_TAIL;
	session_result_init(&r);
	ret = session_execute(&b->sess, &e, &r);
	pthread_mutex_unlock(&b->lock);
	sbx_unref(call->session, b);
	if (ret < 0)
		mcp_result_error(res, "execute failed: %s", last_error());
	else
		command_result(res, &r);
	session_result_release(&r);
	return 0;
}

/* ---- sandbox_start ---- */

static void add_random(struct strbuf *sb, size_t n)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[16];

	if (n > sizeof(rnd))
		n = sizeof(rnd);
	if (getrandom(rnd, n, 0) != (ssize_t)n) {
		uint64_t t = monotonic_us() ^ (uint64_t)getpid() << 32;
		for (size_t i = 0; i < n; i++, t >>= 5)
			rnd[i] = (unsigned char)t;
	}
	for (size_t i = 0; i < n; i++)
		strbuf_addch(sb, chars[rnd[i] % (sizeof(chars) - 1)]);
}

/*
 * "<namespace>-<sandbox>-<5 random>" made a valid claim name
 * ([a-z0-9][a-z0-9-]{0,62}): lower case, other characters become '-',
 * no doubled or leading '-', at most 26 characters.
 */
static void claim_name(struct strbuf *out, const char *ns, const char *name)
{
	struct strbuf raw = STRBUF_INIT;

	strbuf_addf(&raw, "%s-%s", ns, name);
	/* short: the local backend's socket path must fit in sun_path */
	for (size_t i = 0; i < raw.len && out->len < 20; i++) {
		int c = (unsigned char)raw.buf[i];
		if (c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			c = '-';
		if (c == '-' && (!out->len || out->buf[out->len - 1] == '-'))
			continue;
		strbuf_addch(out, c);
	}
	if (out->len && out->buf[out->len - 1] != '-')
		strbuf_addch(out, '-');
	add_random(out, 5);
	strbuf_release(&raw);
}

/*
 * --persistent: the claim of ns/name is "<namespace>-<sandbox>-<5 of a
 * hash of both>", the same in every process, so that a sandbox_start
 * after a restart of the server (or from another client) finds the
 * kept sandbox with its files and its background commands. If that
 * claim exists, resume it when suspended and return 1 (reattach to
 * it); 0: create it; -1: the backend cannot tell without opening it
 * (session.h keep_claim NULL): try to reattach, else create.
 */
static int stable_claim_name(struct strbuf *out, const struct session_opts *o,
			     const char *ns, const char *name)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	const struct backend_ops *ops = backend_find(o->backend);
	uint64_t h = 14695981039346656037ULL; /* FNV-1a */
	struct strbuf key = STRBUF_INIT;
	report_fn fn;
	void *fn_data;
	size_t len;
	int found;

	claim_name(out, ns, name);
	strbuf_setlen(out, out->len - 5); /* the random part */
	strbuf_addf(&key, "%s/%s", ns, name);
	for (size_t i = 0; i <= key.len; i++) /* the NUL too */
		h = (h ^ (unsigned char)key.buf[i]) * 1099511628211ULL;
	strbuf_release(&key);
	for (int i = 0; i < 5; i++, h /= sizeof(chars) - 1)
		strbuf_addch(out, chars[h % (sizeof(chars) - 1)]);
	if (!ops)
		return 0;
	if (!ops->keep_claim)
		return -1; /* kube: no check but session_open() itself */
	get_error_routine(&fn, &fn_data);
	set_error_routine(report_nothing, NULL); /* "no such claim": expected */
	found = ops->keep_claim(o, out->buf) == 0;
	set_error_routine(fn, fn_data);
	if (!found)
		return 0;
	len = out->len;
	mcp_log_stderr("reattaching to kept claim %s", out->buf);
	if (ops->resume_claim && ops->resume_claim(o, out->buf) < 0)
		mcp_log_stderr("resuming claim %s: %s", out->buf, last_error());
	strbuf_setlen(out, len);
	return 1;
}

/* 1 if o's backend applies the default limits (BACKEND_DEFAULT_LIMITS) */
static int default_limits(const struct session_opts *o)
{
	const struct backend_ops *ops = backend_lookup(o->backend);

	return ops && (ops->caps & BACKEND_DEFAULT_LIMITS);
}

/*
 * The operator's limits on every new sandbox: what one started without
 * config gets (session.h: 0 is the local backend's default, < 0 none;
 * on other backends 0 leaves it to the template). 0: no limit here.
 */
static int64_t operator_memory(const struct session_opts *o)
{
	if (o->memory_bytes > 0)
		return o->memory_bytes;
	return !o->memory_bytes && default_limits(o) ? SESSION_DEFAULT_MEMORY
						     : 0;
}

static double operator_cpus(const struct session_opts *o)
{
	if (o->cpus > 0)
		return o->cpus;
	return !o->cpus && default_limits(o) ? SESSION_DEFAULT_CPUS : 0;
}

static int max_sandboxes(const struct mcp_options *mo)
{
	return mo->max_sandboxes > 0 ? mo->max_sandboxes : 4;
}

static int check_env(const char *kv)
{
	const char *eq = strchr(kv, '=');

	if (!eq || eq == kv)
		return -1;
	for (const char *p = kv; p < eq; p++)
		if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= 'a' && *p <= 'z') ||
		      (p > kv && *p >= '0' && *p <= '9')))
			return -1;
	return 0;
}

/*
 * Parse config into opts (which holds the operator's settings), image
 * and env; what was clamped to the operator's limits is said in notes.
 * -1 with res set.
 */
/*
 * 1 if the operator's list op allows everything rule r does (egress.h):
 * a name or literal on every port r names, a wildcard under one of the
 * operator's wildcards with the same ports
 */
static int rule_covered(const struct egress_policy *op,
			const struct egress_rule *r)
{
	static const int web[] = { 80, 443 };
	size_t i;

	if (!r->wildcard) {
		if (r->port)
			return egress_host_allowed(op, r->host, r->port);
		return egress_host_allowed(op, r->host, web[0]) &&
		       egress_host_allowed(op, r->host, web[1]);
	}
	for (i = 0; i < op->nr; i++) {
		const struct egress_rule *w = &op->rules[i];
		size_t hl = strlen(r->host), wl = strlen(w->host);
		int under = !strcmp(r->host, w->host) ||
			    (hl > wl && r->host[hl - wl - 1] == '.' &&
			     !strcmp(r->host + hl - wl, w->host));

		if (w->wildcard && under &&
		    (w->port == r->port ||
		     (!w->port && (r->port == 80 || r->port == 443))))
			return 1;
	}
	return 0;
}

/*
 * config.allow_net: hosts for this sandbox, each within the operator's
 * --allow-net (a model may narrow the list, never widen it); the list
 * goes to opts->allow_net through allow (the caller's, kept until the
 * sandbox is open)
 */
static int config_allow_net(struct mcp_result *res, const json_t *v,
			    struct session_opts *opts, struct strbuf *allow)
{
	struct egress_policy want, op;
	size_t i;
	int ret = -1;

	egress_policy_init(&want);
	egress_policy_init(&op);
	if (!json_is_array(v)) {
		mcp_result_error(res, "config.allow_net must be an array of "
				      "hosts such as \"pypi.org\"");
		goto out;
	}
	for (i = 0; i < json_array_size(v); i++) {
		const char *h = json_string_value(json_array_get(v, i));

		if (!h || !*h || strchr(h, ',')) {
			mcp_result_error(res,
					 "config.allow_net[%zu] must be "
					 "one host, e.g. \"pypi.org\", "
					 "\"*.example.org\" or "
					 "\"example.org:8080\"",
					 i);
			goto out;
		}
		strbuf_addf(allow, "%s%s", i ? "," : "", h);
	}
	if (!allow->len) {
		ret = 0;
		goto out;
	}
	if (egress_policy_add(&want, allow->buf) < 0) {
		mcp_result_error(res, "config.allow_net: %s", last_error());
		goto out;
	}
	if (opts->allow_net)
		egress_policy_add(&op, opts->allow_net);
	for (i = 0; i < want.nr; i++)
		if (!rule_covered(&op, &want.rules[i])) {
			struct strbuf one = STRBUF_INIT;
			struct egress_policy single = { &want.rules[i], 1, 1 };

			egress_policy_format(&single, &one);
			mcp_result_error(res,
					 "config.allow_net: '%s' is not "
					 "within what this server allows "
					 "(gosbx mcp --allow-net=%s)",
					 one.buf,
					 opts->allow_net ? opts->allow_net
							 : "<none>");
			strbuf_release(&one);
			goto out;
		}
	opts->allow_net = allow->buf;
	ret = 0;
out:
	egress_policy_release(&want);
	egress_policy_release(&op);
	return ret;
}

static int parse_config(struct mcp_result *res, const json_t *cfg,
			struct session_opts *opts, const char **image,
			struct strvec *env, struct strbuf *notes,
			struct strbuf *allow)
{
	static const char *const keys[] = {
		"image", "memory", "cpus",	"volumes",
		"ports", "envs",   "allow_net",
	};
	json_t *v;

	if (!cfg || json_is_null(cfg))
		return 0;
	if (!json_is_object(cfg)) {
		mcp_result_error(res, "argument 'config' must be an object");
		return -1;
	}
	if (check_unknown(NULL, res, cfg, keys, ARRAY_SIZE(keys),
			  "config field") < 0)
		return -1;

	v = json_object_get(cfg, "image");
	if (v && !json_is_null(v)) {
		size_t i;
		if (!json_is_string(v)) {
			mcp_result_error(res, "config.image must be a string");
			return -1;
		}
		for (i = 0; i < ARRAY_SIZE(known_images); i++)
			if (!strcmp(json_string_value(v), known_images[i]))
				break;
		if (i == ARRAY_SIZE(known_images)) {
			struct strbuf list = STRBUF_INIT;
			for (i = 0; i < ARRAY_SIZE(known_images); i++)
				strbuf_addf(&list, "%s%s", i ? ", " : "",
					    known_images[i]);
			mcp_result_error(res,
					 "unknown image '%s'; known images: %s",
					 json_string_value(v), list.buf);
			strbuf_release(&list);
			return -1;
		}
		*image = json_string_value(v);
	}

	v = json_object_get(cfg, "memory");
	if (v && !json_is_null(v)) {
		json_int_t mib;
		if (!json_is_integer(v) || (mib = json_integer_value(v)) <= 0 ||
		    mib > (json_int_t)1 << 30) {
			mcp_result_error(res,
					 "config.memory must be a positive "
					 "integer (MiB)");
			return -1;
		}
		if (operator_memory(opts) &&
		    ((int64_t)mib << 20) > operator_memory(opts)) {
			strbuf_addf(notes,
				    "; config.memory %" PRId64 " MiB is above "
				    "this server's limit: the sandbox gets "
				    "%" PRId64 " MiB",
				    (int64_t)mib, operator_memory(opts) >> 20);
		} else {
			opts->memory_bytes = (int64_t)mib << 20;
			opts->memory_set = 1;
		}
	}

	v = json_object_get(cfg, "allow_net");
	if (v && !json_is_null(v) && config_allow_net(res, v, opts, allow) < 0)
		return -1;

	v = json_object_get(cfg, "cpus");
	if (v && !json_is_null(v)) {
		if (!json_is_number(v) || json_number_value(v) <= 0 ||
		    json_number_value(v) > 1024) {
			mcp_result_error(res, "config.cpus must be a positive "
					      "number");
			return -1;
		}
		if (operator_cpus(opts) &&
		    json_number_value(v) > operator_cpus(opts)) {
			strbuf_addf(notes,
				    "; config.cpus %g is above this server's "
				    "limit: the sandbox gets a CPU limit of "
				    "%g",
				    json_number_value(v), operator_cpus(opts));
		} else {
			opts->cpus = json_number_value(v);
			opts->cpus_set = 1;
		}
	}

	for (int i = 0; i < 2; i++) {
		const char *k = i ? "ports" : "volumes";
		v = json_object_get(cfg, k);
		if (!v || json_is_null(v))
			continue;
		if (!json_is_array(v)) {
			mcp_result_error(res, "config.%s must be an array", k);
			return -1;
		}
		if (json_array_size(v)) {
			mcp_result_error(
				res,
				"config.%s is not supported on the "
				"'%s' backend: %s",
				k, opts->backend ? opts->backend : "local",
				i ? "sandboxes have no network port "
				    "mappings"
				  : "sandboxes see only their own /app;"
				    " copy files in with "
				    "sandbox_run_command or run_code");
			return -1;
		}
	}

	v = json_object_get(cfg, "envs");
	if (v && !json_is_null(v)) {
		size_t i;
		json_t *e;
		if (!json_is_array(v)) {
			mcp_result_error(res, "config.envs must be an array of "
					      "\"NAME=value\" strings");
			return -1;
		}
		json_array_foreach (v, i, e) {
			if (!json_is_string(e) ||
			    check_env(json_string_value(e)) < 0 ||
			    strlen(json_string_value(e)) !=
				    json_string_length(e)) {
				mcp_result_error(res,
						 "config.envs[%zu] is not a "
						 "\"NAME=value\" string",
						 i);
				return -1;
			}
			strvec_push(env, json_string_value(e));
		}
	}
	return 0;
}

/*
 * If this client stopped ns/name with keep, forget that and put its
 * claim name into claim: 1; else 0. The MCP session lock is held.
 */
static int take_suspended_locked(struct sbx_state *st, const char *ns,
				 const char *name, struct strbuf *claim)
{
	struct strbuf key = STRBUF_INIT;
	int ret = 0;

	strbuf_addf(&key, "%s/%s", ns, name);
	for (size_t i = 0; i + 1 < st->suspended.nr; i += 2) {
		if (strcmp(st->suspended.v[i], key.buf))
			continue;
		strbuf_addstr(claim, st->suspended.v[i + 1]);
		free((char *)st->suspended.v[i]);
		free((char *)st->suspended.v[i + 1]);
		/* the NULL at the end moves too */
		memmove(&st->suspended.v[i], &st->suspended.v[i + 2],
			(st->suspended.nr - i - 1) * sizeof(*st->suspended.v));
		st->suspended.nr -= 2;
		ret = 1;
		break;
	}
	strbuf_release(&key);
	return ret;
}

/* The backend's resume of the claim (gosbx-resume(1)); 0 or -1 */
static int resume_claim(const struct session_opts *opts, const char *claim)
{
	const struct backend_ops *ops = backend_find(opts->backend);

	if (!ops)
		return -1;
	if (!ops->resume_claim)
		return error("the %s backend cannot resume a sandbox",
			     ops->name);
	mcp_log_stderr("resuming claim %s", claim);
	return ops->resume_claim(opts, claim) < 0 ? -1 : 0;
}

static int tool_start(struct mcp_call *call, struct mcp_result *res)
{
	static const char *const keys[] = { "sandbox", "namespace", "config" };
	const struct mcp_options *mo = mcp_session_options(call->session);
	struct session_opts opts = mo->sandbox;
	struct strvec env = STRVEC_INIT;
	struct strbuf claim = STRBUF_INIT, notes = STRBUF_INIT;
	struct strbuf allow = STRBUF_INIT;
	const char *ns, *name, *image = NULL;
	struct sbx_state *st;
	struct sbx *b;
	int64_t mem;
	double cpus;
	int suspended, reattach = 0, preopened = 0;

	if (check_unknown(call, res, call->args, keys, ARRAY_SIZE(keys),
			  "argument") < 0 ||
	    arg_target(call, res, &ns, &name) < 0 ||
	    parse_config(res, json_object_get(call->args, "config"), &opts,
			 &image, &env, &notes, &allow) < 0) {
		strvec_clear(&env);
		strbuf_release(&notes);
		strbuf_release(&allow);
		return 0;
	}

	b = xcalloc(1, sizeof(*b));
	b->ns = xstrdup(ns);
	b->name = xstrdup(name);
	b->image = xstrdup(image ? image : "default");
	b->env = env;
	pthread_mutex_init(&b->lock, NULL);
	b->refs = 2; /* the table's and ours */
	pthread_mutex_lock(&b->lock);

	mcp_session_lock(call->session);
	st = get_state(call->session);
	if (find_locked(st, ns, name) >= 0) {
		mcp_session_unlock(call->session);
		pthread_mutex_unlock(&b->lock);
		sbx_free(b);
		mcp_result_error(res,
				 "sandbox '%s/%s' is already running; stop it "
				 "with sandbox_stop first",
				 ns, name);
		strbuf_release(&notes);
		strbuf_release(&allow);
		return 0;
	}
	if (st->nr >= (size_t)max_sandboxes(mo)) {
		/* starting ones count: each will hold a sandbox */
		mcp_session_unlock(call->session);
		pthread_mutex_unlock(&b->lock);
		sbx_free(b);
		mcp_result_error(res,
				 "cannot start sandbox '%s/%s': this client "
				 "already has %d sandboxes, the most this "
				 "server allows (gosbx mcp --max-sandboxes); "
				 "stop one with sandbox_stop first",
				 ns, name, max_sandboxes(mo));
		strbuf_release(&notes);
		strbuf_release(&allow);
		return 0;
	}
	ALLOC_GROW(st->v, st->nr + 1, st->alloc);
	st->v[st->nr++] = b;
	suspended = take_suspended_locked(st, ns, name, &claim);
	mcp_session_unlock(call->session);

	if (!opts.namespace)
		opts.namespace = mo->namespace;
	if (!opts.template)
		opts.template = mo->template;
	if (!opts.open_timeout_ms)
		opts.open_timeout_ms = mo->open_timeout_ms;
	if (!suspended && mo->persistent)
		reattach = stable_claim_name(&claim, &opts, ns, name);
	else if (!suspended)
		claim_name(&claim, ns, name);
	opts.claim = reattach ? claim.buf : NULL;
	opts.name = reattach ? NULL : claim.buf;
	if (reattach < 0) {
		report_fn fn;
		void *fn_data;

		/* an existing claim of that name: reattach; else create */
		get_error_routine(&fn, &fn_data);
		set_error_routine(report_nothing, NULL);
		opts.keep = mo->persistent;
		opts.purpose = "mcp-sandbox";
		reattach = session_open(&b->sess, &opts) == 0;
		set_error_routine(fn, fn_data);
		if (reattach) {
			mcp_log_stderr("reattaching to kept claim %s",
				       claim.buf);
			preopened = 1;
		} else {
			opts.claim = NULL;
			opts.name = claim.buf;
		}
	}
	/*
	 * --persistent: kept from the start (a sandbox opened otherwise is
	 * owned by this process and ends with it, even when killed)
	 */
	opts.keep = mo->persistent;
	opts.purpose = "mcp-sandbox";
	mcp_log_stderr("opening sandbox '%s/%s' (image=%s claim=%s)", ns, name,
		       b->image, claim.buf);
	if (suspended) {
		/* stopped with keep: the same claim, its files, its limits */
		opts.claim = claim.buf;
		opts.name = NULL;
	}
	if (suspended && resume_claim(&opts, claim.buf) < 0) {
		mcp_result_error(res, "could not resume sandbox: %s",
				 last_error());
		drop_unopened(call->session, b, ns, name, claim.buf);
		strbuf_release(&claim);
		strbuf_release(&notes);
		strbuf_release(&allow);
		return 0;
	}
	if (!preopened && session_open(&b->sess, &opts) < 0) {
		mcp_result_error(res, "could not open sandbox: %s",
				 last_error());
		drop_unopened(call->session, b, ns, name, NULL);
		strbuf_release(&claim);
		strbuf_release(&notes);
		strbuf_release(&allow);
		return 0;
	}
	b->opened = 1;
	mcp_log_stderr("sandbox open: claim=%s", b->sess.claim);
	session_keepalive_start(&b->sess, MCP_KEEPALIVE_MS);
	mem = operator_memory(&opts);
	cpus = operator_cpus(&opts);
	strbuf_reset(&res->text);
	strbuf_addf(&res->text, "sandbox '%s/%s' %s (image %s, claim %s", ns,
		    name,
		    suspended  ? "resumed"
		    : reattach ? "reattached"
			       : "started",
		    b->image, b->sess.claim);
	if (mem)
		strbuf_addf(&res->text, ", memory %" PRId64 " MiB", mem >> 20);
	if (cpus)
		strbuf_addf(&res->text, ", cpus %g", cpus);
	strbuf_addf(&res->text, ")%s", notes.buf);
	res->structured =
		json_pack("{s:s, s:s, s:s, s:s, s:b, s:o, s:o}", "name", name,
			  "namespace", ns, "image", b->image, "claim",
			  b->sess.claim, "running", 1, "memory",
			  mem ? json_integer(mem >> 20) : json_null(), "cpus",
			  cpus ? json_real(cpus) : json_null());
	pthread_mutex_unlock(&b->lock);
	sbx_unref(call->session, b);
	strbuf_release(&claim);
	strbuf_release(&notes);
	strbuf_release(&allow);
	return 0;
}

/*
 * The operator's limits and the sandbox cap, in sandbox_start's
 * description (what a model can ask for is what the tool says).
 */
static void describe_start(const struct mcp_options *o, struct strbuf *out)
{
	int64_t mem = operator_memory(&o->sandbox);
	double cpus = operator_cpus(&o->sandbox);

	strbuf_addstr(out, " Limits of this server: every sandbox gets ");
	if (mem)
		strbuf_addf(out, "at most %" PRId64 " MiB of memory",
			    mem >> 20);
	else if (default_limits(&o->sandbox))
		strbuf_addstr(out, "no memory limit");
	else
		strbuf_addstr(out, "the memory limit of its template");
	if (cpus)
		strbuf_addf(out, " and a CPU limit of %g", cpus);
	else if (default_limits(&o->sandbox))
		strbuf_addstr(out, " and no CPU limit");
	else
		strbuf_addstr(out, " and the CPU limit of its template");
	strbuf_addf(out,
		    "; config.memory and config.cpus may lower these, never "
		    "raise them (a larger value is clamped and the result "
		    "says so). A client may hold at most %d sandboxes at "
		    "once: stop one to start another.",
		    max_sandboxes(o));
}

/* ---- sandbox_stop ---- */

/* Close (or with persistent, disconnect) an open sandbox; lock held. */
static void sbx_shut(struct sbx *b, int persistent)
{
	if (!b->opened)
		return;
	if (persistent) {
		mcp_log_stderr("disconnecting (claim %s preserved)",
			       b->sess.claim);
		session_disconnect(&b->sess);
	} else {
		mcp_log_stderr("closing (deleting sandbox %s)", b->sess.claim);
		b->sess.keep = 0; /* sandbox_stop deletes a kept one too */
		session_close(&b->sess);
	}
	b->opened = 0;
}

/*
 * sandbox_stop with keep: suspend the claim of the open sandbox b
 * (gosbx-suspend(1)) instead of deleting it, and remember it for the
 * next sandbox_start of ns/name; b's lock held. Only with --persistent
 * (a sandbox is otherwise owned by this process and ends with it).
 */
static void stop_keep(struct mcp_call *call, struct mcp_result *res,
		      struct sbx *b)
{
	const struct mcp_options *mo = mcp_session_options(call->session);
	const struct backend_ops *ops = b->sess.ops;
	struct session_opts opts = mo->sandbox;
	struct sbx_state *st;
	char *claim = xstrdup(b->sess.claim);

	if (!opts.namespace)
		opts.namespace = mo->namespace;
	sbx_shut(b, 1);
	mcp_log_stderr("suspending claim %s", claim);
	if (!ops->suspend_claim || ops->suspend_claim(&opts, claim) < 0) {
		mcp_result_error(res,
				 "could not suspend sandbox '%s/%s': %s; it is "
				 "kept (claim %s)",
				 b->ns, b->name,
				 ops->suspend_claim ? last_error()
						    : "the backend cannot "
						      "suspend a sandbox",
				 claim);
		free(claim);
		return;
	}
	mcp_session_lock(call->session);
	st = get_state(call->session);
	strvec_pushf(&st->suspended, "%s/%s", b->ns, b->name);
	strvec_push(&st->suspended, claim);
	mcp_session_unlock(call->session);
	strbuf_reset(&res->text);
	strbuf_addf(&res->text,
		    "sandbox '%s/%s' suspended (claim %s): its files are "
		    "kept; sandbox_start of the same sandbox resumes it",
		    b->ns, b->name, claim);
	res->structured = json_pack("{s:s, s:s, s:s, s:b, s:b}", "name",
				    b->name, "namespace", b->ns, "claim", claim,
				    "running", 0, "suspended", 1);
	free(claim);
}

static int tool_stop(struct mcp_call *call, struct mcp_result *res)
{
	static const char *const keys[] = { "sandbox", "namespace", "keep" };
	const char *ns, *name;
	struct sbx_state *st;
	struct sbx *b = NULL;
	json_t *jkeep;
	ssize_t i;
	int keep;

	if (check_unknown(call, res, call->args, keys, ARRAY_SIZE(keys),
			  "argument") < 0 ||
	    arg_target(call, res, &ns, &name) < 0)
		return 0;
	jkeep = json_object_get(call->args, "keep");
	if (jkeep && !json_is_boolean(jkeep)) {
		mcp_result_error(res, "keep must be a boolean");
		return 0;
	}
	keep = json_is_true(jkeep);
	if (keep && !mcp_session_options(call->session)->persistent) {
		mcp_result_error(res,
				 "cannot keep sandbox '%s/%s': this server "
				 "deletes its sandboxes when its client goes "
				 "(start it with --persistent to keep them)",
				 ns, name);
		return 0;
	}
	mcp_session_lock(call->session);
	st = get_state(call->session);
	i = find_locked(st, ns, name);
	if (i >= 0) {
		b = st->v[i];
		b->refs++;
		remove_locked(st, b);
	}
	mcp_session_unlock(call->session);
	if (!b) {
		not_running(res, ns, name);
		return 0;
	}
	/* waits for a command that is running in it */
	pthread_mutex_lock(&b->lock);
	if (!b->opened) {
		/* it failed to start while we waited */
		pthread_mutex_unlock(&b->lock);
		sbx_unref(call->session, b);
		not_running(res, ns, name);
		return 0;
	}
	if (keep) {
		stop_keep(call, res, b);
	} else {
		sbx_shut(b, 0);
		strbuf_reset(&res->text);
		strbuf_addf(&res->text, "sandbox '%s/%s' stopped", ns, name);
	}
	b->gone = 1;
	pthread_mutex_unlock(&b->lock);
	sbx_unref(call->session, b);
	return 0;
}

/* ---- sandbox_run_code ---- */

static int tool_run_code(struct mcp_call *call, struct mcp_result *res)
{
	static const char *const keys[] = { "sandbox", "namespace", "code",
					    "language", "timeout" };
	const char *ns, *name, *code, *lang;
	struct strbuf dir = STRBUF_INIT, cmd = STRBUF_INIT;
	struct strbuf p1 = STRBUF_INIT, p2 = STRBUF_INIT;
	struct session_file files[2];
	size_t nr = 0;
	json_t *jcode;
	int64_t timeout_ms;

	if (check_unknown(call, res, call->args, keys, ARRAY_SIZE(keys),
			  "argument") < 0 ||
	    arg_target(call, res, &ns, &name) < 0 ||
	    !(lang = arg_str(call, res, "language")) ||
	    arg_timeout(call, res, &timeout_ms) < 0)
		return 0;
	jcode = json_object_get(call->args, "code");
	if (!json_is_string(jcode)) {
		mcp_result_error(res, jcode ? "argument 'code' must be a string"
					    : "missing argument 'code'");
		return 0;
	}
	code = json_string_value(jcode);

	/* a private directory under /app, removed after the run */
	strbuf_addstr(&dir, ".gosbx-run-");
	add_random(&dir, 8);
	files[0].data = code;
	files[0].len = json_string_length(jcode);
	if (!strcmp(lang, "python") || !strcmp(lang, "python3")) {
		strbuf_addf(&p1, "%s/main.py", dir.buf);
		strbuf_addf(&cmd, "python3 %s/main.py", dir.buf);
	} else if (!strcmp(lang, "nodejs") || !strcmp(lang, "node") ||
		   !strcmp(lang, "javascript")) {
		strbuf_addf(&p1, "%s/main.js", dir.buf);
		strbuf_addf(&cmd, "node %s/main.js", dir.buf);
	} else if (!strcmp(lang, "bash")) {
		strbuf_addf(&p1, "%s/main.sh", dir.buf);
		strbuf_addf(&cmd, "bash %s/main.sh", dir.buf);
	} else if (!strcmp(lang, "go")) {
		static const char gomod[] = "module main\n\ngo 1.19\n";
		strbuf_addf(&p1, "%s/main.go", dir.buf);
		strbuf_addf(&p2, "%s/go.mod", dir.buf);
		files[1].path = p2.buf;
		files[1].data = gomod;
		files[1].len = sizeof(gomod) - 1;
		nr = 1;
		/* built in its directory, run from /app */
		strbuf_addf(&cmd, "(cd %s && go build -o main .) && %s/main",
			    dir.buf, dir.buf);
	} else {
		mcp_result_error(res,
				 "unknown language '%s'; use python, nodejs, "
				 "go or bash",
				 lang);
		goto out;
	}
	files[0].path = p1.buf;
	nr++;
	strbuf_addf(&cmd, "; rc=$?; rm -rf %s; exit $rc", dir.buf);
	run_in(call, res, ns, name, cmd.buf, files, nr, timeout_ms);
out:
	strbuf_release(&dir);
	strbuf_release(&cmd);
	strbuf_release(&p1);
	strbuf_release(&p2);
	return 0;
}

/* ---- sandbox_run_command ---- */

/*
 * command with each of the "args" argument appended single-quoted, into
 * cmd; -1 with res set
 */
static int build_command(struct mcp_call *call, struct mcp_result *res,
			 const char *command, struct strbuf *cmd)
{
	json_t *args, *a;
	size_t i;

	strbuf_addstr(cmd, command);
	args = json_object_get(call->args, "args");
	if (args && !json_is_null(args) && !json_is_array(args)) {
		mcp_result_error(res, "argument 'args' must be an array of "
				      "strings");
		return -1;
	}
	json_array_foreach (args, i, a) {
		if (!json_is_string(a) ||
		    strlen(json_string_value(a)) != json_string_length(a)) {
			mcp_result_error(res,
					 "args[%zu] must be a string "
					 "without NUL bytes",
					 i);
			return -1;
		}
		strbuf_addch(cmd, ' ');
		sq_quote_buf(cmd, json_string_value(a));
	}
	return 0;
}

static int tool_run_command(struct mcp_call *call, struct mcp_result *res)
{
	static const char *const keys[] = { "sandbox", "namespace", "command",
					    "args", "timeout" };
	struct strbuf cmd = STRBUF_INIT;
	const char *ns, *name, *command;
	int64_t timeout_ms;

	if (check_unknown(call, res, call->args, keys, ARRAY_SIZE(keys),
			  "argument") < 0 ||
	    arg_target(call, res, &ns, &name) < 0 ||
	    !(command = arg_str(call, res, "command")) ||
	    arg_timeout(call, res, &timeout_ms) < 0)
		return 0;
	if (!build_command(call, res, command, &cmd))
		run_in(call, res, ns, name, cmd.buf, NULL, 0, timeout_ms);
	strbuf_release(&cmd);
	return 0;
}

/* ---- background commands: sandbox_exec_* ---- */

/*
 * Background commands are the runtime's jobs (lib/session/jobs.h): the
 * sandbox's runtime owns them, so they outlive the call and the MCP
 * client; the exec id is the runtime's job id. Each call takes the
 * sandbox's lock for its request, so it waits behind a
 * sandbox_run_command of the same sandbox.
 */
#define EXEC_POLL_MAX (64 * 1024)     /* output bytes one poll returns */
#define EXEC_KEEP_BYTES (4 << 20)     /* output a job keeps (runtime) */
#define EXEC_STDIN_MAX (1 << 20)      /* bytes of one write_stdin */
#define EXEC_TIMEOUT_MAX (86400000LL) /* most a job's timeout asks: 24 h */

/* exec_id: "j" and 12 lower-case hex digits; NULL with res set */
static const char *arg_exec_id(struct mcp_call *call, struct mcp_result *res)
{
	const char *id = arg_str(call, res, "exec_id");
	size_t i;

	if (!id)
		return NULL;
	for (i = 1; id[0] == 'j' && i < 13; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		      (id[i] >= 'a' && id[i] <= 'f')))
			break;
	if (i != 13 || id[13]) {
		mcp_result_error(res,
				 "argument 'exec_id' is not an exec id (\"j\" "
				 "and 12 hex digits, as sandbox_exec_start "
				 "gave)");
		return NULL;
	}
	return id;
}

/*
 * The started sandbox of the call's arguments, locked; NULL with res
 * set. Release with exec_done().
 */
static struct sbx *exec_sandbox(struct mcp_call *call, struct mcp_result *res,
				const char *ns, const char *name)
{
	struct sbx *b = sbx_get(call->session, ns, name);

	if (!b || sbx_lock_open(b) < 0) {
		not_running(res, ns, name);
		if (b)
			sbx_unref(call->session, b);
		return NULL;
	}
	return b;
}

static void exec_done(struct mcp_call *call, struct sbx *b)
{
	pthread_mutex_unlock(&b->lock);
	sbx_unref(call->session, b);
}

/* A failed job request as the tool's error, the runtime's words kept. */
static void exec_error(struct mcp_result *res, const char *what, const char *id,
		       struct sbx *b)
{
	const char *msg = last_error();

	if (strstr(msg, "no job '"))
		mcp_result_error(res,
				 "unknown exec id '%s' in sandbox '%s/%s' (it "
				 "was closed, or is another sandbox's)",
				 id, b->ns, b->name);
	else if (strstr(msg, "has ended"))
		mcp_result_error(res, "exec '%s' has ended", id);
	else
		mcp_result_error(res, "%s failed: %s", what, msg);
}

/* A job's timeout argument: 0 none; -1 with res set. */
static int arg_job_timeout(struct mcp_call *call, struct mcp_result *res,
			   int64_t *ms)
{
	json_t *v = json_object_get(call->args, "timeout");

	*ms = 0;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_number(v)) {
		double sec = json_number_value(v);

		if (isfinite(sec) && sec > 0 && sec <= EXEC_TIMEOUT_MAX / 1000)
			*ms = (int64_t)(sec * 1000 + 0.5);
	} else if (json_is_string(v) &&
		   parse_duration_ms(json_string_value(v), ms) < 0) {
		*ms = 0;
	}
	if (*ms <= 0 || *ms > EXEC_TIMEOUT_MAX) {
		mcp_result_error(res, "argument 'timeout' must be a number of "
				      "seconds above 0 or a duration such as "
				      "\"90s\" or \"2h\", at most 24 hours");
		return -1;
	}
	return 0;
}

/* env: an array of "NAME=value" after the sandbox's envs; -1 res set */
static int arg_job_env(struct mcp_call *call, struct mcp_result *res,
		       const struct sbx *b, struct strvec *env)
{
	json_t *v = json_object_get(call->args, "env"), *e;
	size_t i;

	strvec_pushv(env, b->env.v);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v)) {
		mcp_result_error(res, "argument 'env' must be an array of "
				      "\"NAME=value\" strings");
		return -1;
	}
	json_array_foreach (v, i, e) {
		if (!json_is_string(e) || check_env(json_string_value(e)) < 0 ||
		    strlen(json_string_value(e)) != json_string_length(e)) {
			mcp_result_error(res,
					 "env[%zu] is not a \"NAME=value\" "
					 "string",
					 i);
			return -1;
		}
		strvec_push(env, json_string_value(e));
	}
	return 0;
}

static int tool_exec_start(struct mcp_call *call, struct mcp_result *res)
{
	static const char *const keys[] = { "sandbox", "namespace", "command",
					    "args",    "stdin",	    "env",
					    "cwd",     "timeout" };
	struct strbuf cmd = STRBUF_INIT;
	struct strvec env = STRVEC_INIT;
	struct session_exec e = { 0 };
	const char *ns, *name, *command, *cwd = NULL, *id;
	json_t *v, *job = NULL;
	struct sbx *b;
	int64_t timeout_ms;
	int keep_stdin;

	if (check_unknown(call, res, call->args, keys, ARRAY_SIZE(keys),
			  "argument") < 0 ||
	    arg_target(call, res, &ns, &name) < 0 ||
	    !(command = arg_str(call, res, "command")) ||
	    arg_job_timeout(call, res, &timeout_ms) < 0 ||
	    build_command(call, res, command, &cmd) < 0)
		goto out;
	v = json_object_get(call->args, "stdin");
	if (v && !json_is_null(v) && !json_is_boolean(v)) {
		mcp_result_error(res, "argument 'stdin' must be a boolean");
		goto out;
	}
	keep_stdin = json_is_true(v);
	v = json_object_get(call->args, "cwd");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v) ||
		    strlen(json_string_value(v)) != json_string_length(v) ||
		    json_string_length(v) > 4096) {
			mcp_result_error(res, "argument 'cwd' must be a path "
					      "under /app");
			goto out;
		}
		cwd = json_string_value(v);
	}
	if (!(b = exec_sandbox(call, res, ns, name)))
		goto out;
	if (arg_job_env(call, res, b, &env) < 0) {
		exec_done(call, b);
		goto out;
	}
	e.command = cmd.buf;
	e.env = env.nr ? env.v : NULL;
	e.cwd = cwd;
	e.timeout_ms = timeout_ms;
	e.output_keep_bytes = EXEC_KEEP_BYTES;
	if (session_job_start(&b->sess, &e, &job) < 0) {
		mcp_result_error(res, "could not start the command: %s",
				 last_error());
		exec_done(call, b);
		goto out;
	}
	id = json_object_str(job, "id");
	/* without stdin, the command reads EOF at once */
	if (!keep_stdin && session_job_stdin(&b->sess, id, "", 0, 1) < 0)
		mcp_log_stderr("exec %s: closing stdin: %s", id, last_error());
	exec_done(call, b);
	mcp_log_stderr("exec %s started in sandbox '%s/%s'", id, ns, name);
	strbuf_reset(&res->text);
	strbuf_addf(&res->text,
		    "exec_id=%s  state=running  stdin=%s\n\nstarted in sandbox "
		    "'%s/%s'; read its output with sandbox_exec_poll "
		    "(exec_id \"%s\", since 0)",
		    id, keep_stdin ? "open" : "closed", ns, name, id);
	res->structured = json_pack("{s:s, s:s, s:s, s:s, s:b}", "exec_id", id,
				    "sandbox", name, "namespace", ns, "state",
				    "running", "stdin", keep_stdin);
out:
	json_decref(job);
	strvec_clear(&env);
	strbuf_release(&cmd);
	return 0;
}

/* The wait argument of sandbox_exec_poll in ms; -1 with res set. */
static int arg_wait(struct mcp_call *call, struct mcp_result *res, int64_t *ms)
{
	int64_t limit = mcp_session_options(call->session)->call_timeout_ms;
	json_t *v = json_object_get(call->args, "wait");
	double sec;

	*ms = 0;
	if (!v || json_is_null(v))
		return 0;
	sec = json_is_number(v) ? json_number_value(v) : -1;
	if (!isfinite(sec) || sec < 0) {
		mcp_result_error(res, "argument 'wait' must be a number of "
				      "seconds, 0 or more");
		return -1;
	}
	if (sec * 1000 > (double)limit) {
		mcp_result_error(res,
				 "argument 'wait' (%g s) is above this "
				 "server's limit of %g s (gosbx mcp "
				 "--call-timeout): ask for at most %g s",
				 sec, limit / 1000.0, limit / 1000.0);
		return -1;
	}
	*ms = (int64_t)(sec * 1000 + 0.5);
	return 0;
}

/* since: a byte offset, 0 or more; -1 with res set */
static int arg_since(struct mcp_call *call, struct mcp_result *res,
		     uint64_t *since)
{
	json_t *v = json_object_get(call->args, "since");

	*since = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		mcp_result_error(res, "argument 'since' must be a byte offset "
				      "(an integer, 0 or more): the 'next' of "
				      "the previous poll");
		return -1;
	}
	*since = (uint64_t)json_integer_value(v);
	return 0;
}

static int tool_exec_poll(struct mcp_call *call, struct mcp_result *res)
{
	static const char *const keys[] = { "sandbox", "namespace", "exec_id",
					    "since", "wait" };
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct session_job_read r;
	struct session_result sr;
	const char *ns, *name, *id;
	uint64_t since;
	int64_t wait_ms;
	json_t *o, *job = NULL;
	struct sbx *b;
	int ended;

	if (check_unknown(call, res, call->args, keys, ARRAY_SIZE(keys),
			  "argument") < 0 ||
	    arg_target(call, res, &ns, &name) < 0 ||
	    !(id = arg_exec_id(call, res)) ||
	    arg_since(call, res, &since) < 0 ||
	    arg_wait(call, res, &wait_ms) < 0)
		return 0;
	if (!(b = exec_sandbox(call, res, ns, name)))
		return 0;
	session_result_init(&sr);
	if (session_job_read(&b->sess, id, since, EXEC_POLL_MAX, wait_ms,
			     &call->cancelled, &out, &err, &sr, &r) < 0) {
		const char *past = strstr(last_error(), "past the end");

		if (past)
			mcp_result_error(res,
					 "since %" PRIu64 " is %s of exec '%s'",
					 since, past, id);
		else
			exec_error(res, "reading the output", id, b);
		goto done;
	}
	ended = r.ended;
	if (!ended && session_job_get(&b->sess, id, &job) == 0 &&
	    !strcmp(json_object_str(job, "state")
			    ? json_object_str(job, "state")
			    : "",
		    "exited")) {
		size_t got = out.len + err.len;
		struct session_job_read r2;

		/*
		 * It ended after the read, maybe writing more meanwhile:
		 * take that too (up to the bound), so that "exited" with
		 * more false means all of the output came.
		 */
		if (!r.more && got < EXEC_POLL_MAX &&
		    session_job_read(&b->sess, id, r.next, EXEC_POLL_MAX - got,
				     0, &call->cancelled, &out, &err, &sr,
				     &r2) == 0) {
			r.next = r2.next;
			r.trimmed += r2.trimmed;
			r.more = r2.more;
		}
		session_result_from_json(&sr, job);
		ended = 1;
	}

	o = json_object();
	json_object_set_new(o, "exec_id", json_string(id));
	json_object_set_new(o, "state",
			    json_string(ended ? "exited" : "running"));
	json_object_set_new(o, "stdout",
			    mcp_result_json_string(out.buf, out.len));
	json_object_set_new(o, "stderr",
			    mcp_result_json_string(err.buf, err.len));
	json_object_set_new(o, "since", json_integer((json_int_t)since));
	json_object_set_new(o, "next", json_integer((json_int_t)r.next));
	json_object_set_new(o, "more", json_boolean(r.more));
	strbuf_reset(&res->text);
	strbuf_addf(&res->text, "exec_id=%s  state=%s", id,
		    ended ? "exited" : "running");
	if (ended) {
		json_object_set_new(o, "exit_code", json_integer(sr.exit_code));
		json_object_set_new(o, "reason", json_string(sr.reason));
		json_object_set_new(o, "duration_ms",
				    json_integer(sr.duration_ms));
		strbuf_addf(&res->text, "  exit=%d  (%" PRId64 "ms)",
			    sr.exit_code, sr.duration_ms);
		if (strcmp(sr.reason, "exited"))
			strbuf_addf(&res->text, "  reason=%s", sr.reason);
		if (sr.signal > 0) {
			json_object_set_new(o, "signal",
					    json_integer(sr.signal));
			strbuf_addf(&res->text, "  signal=%d", sr.signal);
		}
	}
	strbuf_addf(&res->text, "  next=%" PRIu64, r.next);
	if (r.trimmed) {
		json_object_set_new(o, "trimmed_bytes",
				    json_integer((json_int_t)r.trimmed));
		strbuf_addf(&res->text,
			    "  [%" PRIu64 " bytes of output trimmed: the "
			    "sandbox keeps the last %d MiB]",
			    r.trimmed, EXEC_KEEP_BYTES >> 20);
	}
	if (r.more)
		strbuf_addstr(&res->text, "  [more output: poll again from "
					  "next]");
	strbuf_addch(&res->text, '\n');
	if (!out.len && !err.len)
		strbuf_addstr(&res->text, "\n(no new output)\n");
	mcp_result_add_stream(&res->text, "stdout", out.buf, out.len);
	mcp_result_add_stream(&res->text, "stderr", err.buf, err.len);
	res->structured = o;
done:
	exec_done(call, b);
	json_decref(job);
	session_result_release(&sr);
	strbuf_release(&out);
	strbuf_release(&err);
	return 0;
}

static int tool_exec_write_stdin(struct mcp_call *call, struct mcp_result *res)
{
	static const char *const keys[] = { "sandbox", "namespace", "exec_id",
					    "data", "eof" };
	const char *ns, *name, *id, *data = "";
	size_t len = 0;
	json_t *v;
	struct sbx *b;
	int eof, rc;

	if (check_unknown(call, res, call->args, keys, ARRAY_SIZE(keys),
			  "argument") < 0 ||
	    arg_target(call, res, &ns, &name) < 0 ||
	    !(id = arg_exec_id(call, res)))
		return 0;
	v = json_object_get(call->args, "eof");
	if (v && !json_is_null(v) && !json_is_boolean(v)) {
		mcp_result_error(res, "argument 'eof' must be a boolean");
		return 0;
	}
	eof = json_is_true(v);
	v = json_object_get(call->args, "data");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v)) {
			mcp_result_error(res, "argument 'data' must be a "
					      "string");
			return 0;
		}
		data = json_string_value(v);
		len = json_string_length(v);
	} else if (!eof) {
		mcp_result_error(res, "missing argument 'data' (or eof: true)");
		return 0;
	}
	if (len > EXEC_STDIN_MAX) {
		mcp_result_error(res,
				 "argument 'data' is %zu bytes, above the "
				 "limit of %d bytes per call: send it in "
				 "parts",
				 len, EXEC_STDIN_MAX);
		return 0;
	}
	if (!(b = exec_sandbox(call, res, ns, name)))
		return 0;
	rc = session_job_stdin(&b->sess, id, data, len, eof);
	if (rc < 0)
		exec_error(res, "writing stdin", id, b);
	else if (rc > 0)
		mcp_result_error(res,
				 "the stdin of exec '%s' is not open: the "
				 "command ended or closed it, it was closed "
				 "with eof, or it was started without stdin: "
				 "true",
				 id);
	exec_done(call, b);
	if (rc)
		return 0;
	strbuf_reset(&res->text);
	strbuf_addf(&res->text, "wrote %zu bytes to the stdin of exec '%s'%s",
		    len, id, eof ? "; stdin closed" : "");
	res->structured = json_pack("{s:s, s:I, s:b}", "exec_id", id, "bytes",
				    (json_int_t)len, "eof", eof);
	return 0;
}

/* signal: a name such as "TERM" or "SIGKILL", or a number; NULL: bad */
static const char *signal_arg(json_t *v, char *buf, size_t size)
{
	const char *s;

	if (!v || json_is_null(v))
		return "TERM";
	if (json_is_integer(v)) {
		json_int_t n = json_integer_value(v);

		if (n < 1 || n > 64)
			return NULL;
		snprintf(buf, size, "%d", (int)n);
		return buf;
	}
	if (!json_is_string(v))
		return NULL;
	s = json_string_value(v);
	if (!*s || strlen(s) > 16 || strlen(s) != json_string_length(v))
		return NULL;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '+' || *p == '-'))
			return NULL;
	return s;
}

static int tool_exec_signal(struct mcp_call *call, struct mcp_result *res)
{
	static const char *const keys[] = { "sandbox", "namespace", "exec_id",
					    "signal" };
	const char *ns, *name, *id, *sig;
	char num[16];
	struct sbx *b;

	if (check_unknown(call, res, call->args, keys, ARRAY_SIZE(keys),
			  "argument") < 0 ||
	    arg_target(call, res, &ns, &name) < 0 ||
	    !(id = arg_exec_id(call, res)))
		return 0;
	sig = signal_arg(json_object_get(call->args, "signal"), num,
			 sizeof(num));
	if (!sig) {
		mcp_result_error(res, "argument 'signal' must be a signal name "
				      "such as \"TERM\", \"INT\" or \"KILL\", "
				      "or a number from 1 to 64");
		return 0;
	}
	if (!(b = exec_sandbox(call, res, ns, name)))
		return 0;
	if (session_job_signal(&b->sess, id, sig) < 0) {
		const char *msg = last_error();

		if (strstr(msg, "a name such as"))
			mcp_result_error(res, "unknown signal '%s'", sig);
		else
			exec_error(res, "signalling", id, b);
		exec_done(call, b);
		return 0;
	}
	exec_done(call, b);
	strbuf_reset(&res->text);
	strbuf_addf(&res->text,
		    "sent signal %s to exec '%s'; sandbox_exec_poll tells "
		    "when it ends",
		    sig, id);
	res->structured = json_pack("{s:s, s:s}", "exec_id", id, "signal", sig);
	return 0;
}

static int tool_exec_close(struct mcp_call *call, struct mcp_result *res)
{
	static const char *const keys[] = { "sandbox", "namespace", "exec_id" };
	const char *ns, *name, *id;
	struct sbx *b;

	if (check_unknown(call, res, call->args, keys, ARRAY_SIZE(keys),
			  "argument") < 0 ||
	    arg_target(call, res, &ns, &name) < 0 ||
	    !(id = arg_exec_id(call, res)))
		return 0;
	if (!(b = exec_sandbox(call, res, ns, name)))
		return 0;
	if (session_job_delete(&b->sess, id) < 0) {
		exec_error(res, "closing", id, b);
		exec_done(call, b);
		return 0;
	}
	exec_done(call, b);
	strbuf_reset(&res->text);
	strbuf_addf(&res->text,
		    "exec '%s' closed: killed if it was running, its output "
		    "forgotten",
		    id);
	res->structured = json_pack("{s:s, s:b}", "exec_id", id, "closed", 1);
	return 0;
}

/* ---- sandbox_get_metrics ---- */

static json_t *metrics_of(struct sbx *b, const char *ns, const char *name)
{
	double cpu = 0, mem = 0;
	int64_t disk = 0;
	int running = 0, busy = 0;
	json_t *o;

	if (b) {
		struct timespec ts;
		int rc;

		deadline_in_ms(&ts, CLOCK_REALTIME, 2000);
		rc = pthread_mutex_timedlock(&b->lock, &ts);
		if (rc == ETIMEDOUT) {
			running = 1; /* a command holds it */
			busy = 1;
		} else if (!rc) {
			if (b->opened && !b->gone) {
				running = 1;
				session_metrics(&b->sess, &cpu, &mem, &disk,
						NULL);
			}
			pthread_mutex_unlock(&b->lock);
		}
	}
	o = json_object();
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "namespace", json_string(ns));
	json_object_set_new(o, "running", json_boolean(running));
	if (busy) {
		/* usage unknown while a command holds the connection */
		json_object_set_new(o, "cpu_usage", json_null());
		json_object_set_new(o, "memory_usage", json_null());
		json_object_set_new(o, "disk_usage", json_null());
	} else {
		json_object_set_new(o, "cpu_usage", json_real(cpu));
		json_object_set_new(o, "memory_usage", json_real(mem));
		json_object_set_new(o, "disk_usage", json_integer(disk));
	}
	if (b)
		json_object_set_new(o, "image", json_string(b->image));
	return o;
}

static int tool_metrics(struct mcp_call *call, struct mcp_result *res)
{
	static const char *const keys[] = { "sandbox", "namespace" };
	const char *ns, *name = NULL;
	struct sbx **list = NULL;
	size_t nr = 0, alloc = 0;
	struct sbx_state *st;
	json_t *arr, *v;

	if (check_unknown(call, res, call->args, keys, ARRAY_SIZE(keys),
			  "argument") < 0 ||
	    !(ns = arg_str(call, res, "namespace")))
		return 0;
	v = json_object_get(call->args, "sandbox");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v) || !*json_string_value(v)) {
			mcp_result_error(res, "argument 'sandbox' must be a "
					      "non-empty string");
			return 0;
		}
		name = json_string_value(v);
	}

	mcp_session_lock(call->session);
	st = get_state(call->session);
	for (size_t i = 0; i < st->nr; i++) {
		struct sbx *b = st->v[i];
		if ((strcmp(ns, "*") && strcmp(ns, b->ns)) ||
		    (name && strcmp(name, b->name)))
			continue;
		b->refs++;
		ALLOC_GROW(list, nr + 1, alloc);
		list[nr++] = b;
	}
	mcp_session_unlock(call->session);

	arr = json_array();
	for (size_t i = 0; i < nr; i++) {
		json_array_append_new(
			arr, metrics_of(list[i], list[i]->ns, list[i]->name));
		sbx_unref(call->session, list[i]);
	}
	if (!nr && name)
		json_array_append_new(arr, metrics_of(NULL, ns, name));
	free(list);
	res->structured = json_pack("{s:o}", "sandboxes", arr);
	strbuf_reset(&res->text);
	mcp_result_add_json(&res->text, res->structured);
	return 0;
}

/* ---- the toolset ---- */

static void sandbox_session_end(struct mcp_session *s, void *state)
{
	struct sbx_state *st = state;
	int persistent = mcp_session_options(s)->persistent;

	if (!st)
		return;
	for (size_t i = 0; i < st->nr; i++) {
		struct sbx *b = st->v[i];
		pthread_mutex_lock(&b->lock);
		sbx_shut(b, persistent);
		b->gone = 1;
		pthread_mutex_unlock(&b->lock);
		sbx_unref_locked(b);
	}
	strvec_clear(&st->suspended);
	free(st->v);
	free(st);
}

#define TARGET_PROPS                                                           \
	"\"sandbox\":{\"type\":\"string\",\"description\":"                    \
	"\"Name of the sandbox\"},"                                            \
	"\"namespace\":{\"type\":\"string\",\"description\":"                  \
	"\"Namespace of the sandbox\"}"

#define RUN_OUTPUT_SCHEMA                                                      \
	"{\"type\":\"object\",\"properties\":{"                                \
	"\"exit_code\":{\"type\":\"integer\"},"                                \
	"\"stdout\":{\"type\":\"string\"},"                                    \
	"\"stderr\":{\"type\":\"string\"},"                                    \
	"\"duration_ms\":{\"type\":\"integer\"},"                              \
	"\"reason\":{\"type\":\"string\"},"                                    \
	"\"signal\":{\"type\":\"integer\"},"                                   \
	"\"cpu_ms\":{\"type\":\"integer\"},"                                   \
	"\"peak_rss_kb\":{\"type\":\"integer\"}},"                             \
	"\"required\":[\"exit_code\",\"stdout\",\"stderr\",\"duration_ms\"]}"

#define RUN_RESULT_DOC                                                               \
	" The result is text: a first line `exit=<code>  (<ms>ms)`, with "           \
	"`  reason=<why>` when the command did not simply exit (timeout, "           \
	"oom, cancelled, signaled), `  signal=<n>` when a signal ended it, "         \
	"`  cpu=<s>s  peak_memory=<MB>MB` (every process the command "               \
	"started, killed ones too) when the server says, and "                       \
	"`  [truncated: stdout|stderr]` when "                                       \
	"the server dropped output, then a blank line, then `── stdout ──` " \
	"and `── stderr ──` sections (a stream that is empty is left out; "  \
	"`(no output)` when both are). A stream longer than 16 KiB keeps "           \
	"its first and last 8 KiB. isError is true when the exit code is "           \
	"not 0. structuredContent: {exit_code, stdout, stderr, "                     \
	"duration_ms, reason, signal, cpu_ms, peak_rss_kb}."

static const struct mcp_tool sandbox_tools[] = {
	{
		"sandbox_start",
		"Start a sandbox",
		"Start a new named sandbox (an isolated Linux environment "
		"with its own /app working directory) that later calls "
		"address by sandbox and namespace. config is optional: "
		"image picks the runtime profile (microsandbox/python, "
		"python, microsandbox/node, node, nodejs, go, golang, bash, "
		"shell; on the local backend every profile has python3, "
		"node, go and bash), memory is the memory limit in MiB, cpus "
		"the CPU limit, envs a list of \"NAME=value\" set for every "
		"command of the sandbox. volumes and ports are not supported "
		"on the local backend and are refused. Starting a sandbox "
		"that is already running is an error: stop it first. Always "
		"stop a sandbox when done; all of them are deleted when the "
		"client disconnects.",
		"{\"type\":\"object\",\"properties\":{" TARGET_PROPS ","
		"\"config\":{\"type\":\"object\",\"description\":"
		"\"Sandbox configuration\",\"properties\":{"
		"\"image\":{\"type\":\"string\",\"description\":"
		"\"Runtime image, e.g. microsandbox/python or "
		"microsandbox/node\"},"
		"\"memory\":{\"type\":\"integer\",\"description\":"
		"\"Memory limit in MiB\"},"
		"\"cpus\":{\"type\":\"number\",\"description\":"
		"\"Number of CPUs\"},"
		"\"volumes\":{\"type\":\"array\",\"items\":{\"type\":"
		"\"string\"},\"description\":\"Volume mounts (not supported "
		"on the local backend)\"},"
		"\"ports\":{\"type\":\"array\",\"items\":{\"type\":"
		"\"string\"},\"description\":\"Port mappings (not supported "
		"on the local backend)\"},"
		"\"envs\":{\"type\":\"array\",\"items\":{\"type\":"
		"\"string\"},\"description\":\"Environment variables as "
		"NAME=value\"},"
		"\"allow_net\":{\"type\":\"array\",\"items\":{\"type\":"
		"\"string\"},\"description\":\"Hosts the sandbox may reach "
		"through its proxy, within what this server allows, e.g. "
		"[\\\"pypi.org\\\",\\\"files.pythonhosted.org\\\"]; "
		"default: all of them\"}},\"additionalProperties\":false}},"
		"\"required\":[\"sandbox\",\"namespace\"],"
		"\"additionalProperties\":false}",
		NULL,
		MCP_HINT_NOT_DESTRUCTIVE,
		tool_start,
		describe_start,
	},
	{
		"sandbox_stop",
		"Stop a sandbox",
		"Stop a running sandbox and delete it with everything in it; "
		"with keep, suspend it instead: its processes stop, its files "
		"stay, and the next sandbox_start of the same sandbox resumes "
		"it (needs a server started with --persistent). "
		"Waits for a command that is running in it to finish. "
		"Stopping a sandbox that is not running is an error.",
		"{\"type\":\"object\",\"properties\":{" TARGET_PROPS
		",\"keep\":{\"type\":\"boolean\",\"description\":"
		"\"Suspend the sandbox instead of deleting it (default "
		"false)\"}},"
		"\"required\":[\"sandbox\",\"namespace\"],"
		"\"additionalProperties\":false}",
		NULL,
		MCP_HINT_DESTRUCTIVE,
		tool_stop,
	},
	{
		"sandbox_run_code",
		"Run code in a sandbox",
		"Run code in a sandbox that was started with sandbox_start "
		"(running in a sandbox that is not running fails). language: "
		"python (python3), nodejs (node), go (a main package, built "
		"with the sandbox's Go in a module of its own) or bash. The "
		"code is "
		"written to a temporary directory under /app, removed after "
		"the run; it runs with /app as its working directory, so "
		"files under /app persist between calls." RUN_RESULT_DOC,
		"{\"type\":\"object\",\"properties\":{" TARGET_PROPS ","
		"\"code\":{\"type\":\"string\",\"description\":"
		"\"Code to execute\"},"
		"\"language\":{\"type\":\"string\",\"enum\":[\"python\","
		"\"nodejs\",\"go\",\"bash\"],\"description\":"
		"\"Programming language\"}," MCP_TIMEOUT_PROP "},"
		"\"required\":[\"sandbox\",\"namespace\",\"code\","
		"\"language\"],\"additionalProperties\":false}",
		RUN_OUTPUT_SCHEMA,
		MCP_HINT_NOT_DESTRUCTIVE,
		tool_run_code,
		mcp_describe_environment_nolimits,
	},
	{
		"sandbox_run_command",
		"Run a command in a sandbox",
		"Run a shell command in a sandbox that was started with "
		"sandbox_start (running in a sandbox that is not running "
		"fails), in /app. command is used as given (it may be a "
		"shell snippet); each of args is appended single-quoted, so "
		"args are passed literally: command \"ls\" with args "
		"[\"-la\", \"/app\"] runs ls '-la' '/app'." RUN_RESULT_DOC,
		"{\"type\":\"object\",\"properties\":{" TARGET_PROPS ","
		"\"command\":{\"type\":\"string\",\"description\":"
		"\"Command to execute\"},"
		"\"args\":{\"type\":\"array\",\"items\":{\"type\":"
		"\"string\"},\"description\":\"Command "
		"arguments\"}," MCP_TIMEOUT_PROP "},"
		"\"required\":[\"sandbox\",\"namespace\",\"command\"],"
		"\"additionalProperties\":false}",
		RUN_OUTPUT_SCHEMA,
		MCP_HINT_NOT_DESTRUCTIVE,
		tool_run_command,
	},
	{
		"sandbox_get_metrics",
		"Get sandbox metrics",
		"Get status and metrics of this client's sandboxes: all of a "
		"namespace, all of them with namespace \"*\", or one named "
		"sandbox. Returns JSON {\"sandboxes\":[{name, namespace, "
		"running, cpu_usage (percent), memory_usage (MiB), "
		"disk_usage (bytes), image}]}. A named sandbox that is not "
		"running is listed with running false; usage fields are null "
		"while a command holds the sandbox busy.",
		"{\"type\":\"object\",\"properties\":{"
		"\"namespace\":{\"type\":\"string\",\"description\":"
		"\"Namespace to query (* for all namespaces)\"},"
		"\"sandbox\":{\"type\":\"string\",\"description\":"
		"\"Optional sandbox name\"}},"
		"\"required\":[\"namespace\"],\"additionalProperties\":false}",
		"{\"type\":\"object\",\"properties\":{\"sandboxes\":{"
		"\"type\":\"array\",\"items\":{\"type\":\"object\"}}},"
		"\"required\":[\"sandboxes\"]}",
		MCP_HINT_READ_ONLY | MCP_HINT_IDEMPOTENT,
		tool_metrics,
	},
	{
		"sandbox_exec_start",
		"Start a background command in a sandbox",
		"Start a command in the background in a sandbox that was "
		"started with sandbox_start, in /app, and return its exec_id "
		"at once; the command runs on after the call (and after "
		"this client goes, as long as the sandbox lives). command "
		"is used as given (a shell snippet); each of args is "
		"appended single-quoted. stdin: true keeps its standard "
		"input open for sandbox_exec_write_stdin (default: it reads "
		"end of file at once). env: more \"NAME=value\" after the "
		"sandbox's envs; cwd: a directory under /app; timeout: "
		"its longest run in seconds (default none, at most 24 h). "
		"Read its output with sandbox_exec_poll; the sandbox keeps "
		"the last 4 MiB of it. End it with sandbox_exec_signal or "
		"sandbox_exec_close.",
		"{\"type\":\"object\",\"properties\":{" TARGET_PROPS ","
		"\"command\":{\"type\":\"string\",\"description\":"
		"\"Command to run\"},"
		"\"args\":{\"type\":\"array\",\"items\":{\"type\":"
		"\"string\"},\"description\":\"Command arguments\"},"
		"\"stdin\":{\"type\":\"boolean\",\"description\":"
		"\"Keep standard input open (default false)\"},"
		"\"env\":{\"type\":\"array\",\"items\":{\"type\":"
		"\"string\"},\"description\":\"Environment variables as "
		"NAME=value\"},"
		"\"cwd\":{\"type\":\"string\",\"description\":"
		"\"Working directory, relative to /app\"},"
		"\"timeout\":{\"type\":\"number\",\"description\":"
		"\"Longest run in seconds (or a duration such as "
		"\\\"10m\\\"); default none, at most 24 h\"}},"
		"\"required\":[\"sandbox\",\"namespace\",\"command\"],"
		"\"additionalProperties\":false}",
		"{\"type\":\"object\",\"properties\":{"
		"\"exec_id\":{\"type\":\"string\"},"
		"\"state\":{\"type\":\"string\"},"
		"\"stdin\":{\"type\":\"boolean\"}},"
		"\"required\":[\"exec_id\",\"state\"]}",
		MCP_HINT_NOT_DESTRUCTIVE,
		tool_exec_start,
	},
	{
		"sandbox_exec_poll",
		"Read a background command's output",
		"Read what a command started with sandbox_exec_start wrote "
		"since byte offset since (default 0; pass the next of the "
		"previous poll), at most 64 KiB a call, and its state. "
		"wait: seconds to wait for new output or the end when "
		"there is none yet (default 0, at most the server's call "
		"timeout). The text's first line is `exec_id=<id>  "
		"state=running|exited`, with `  exit=<code>  (<ms>ms)` "
		"(and `  reason=<why>`, `  signal=<n>`) once it ended, "
		"`  next=<offset>`, `  [N bytes of output trimmed: ...]` "
		"when the sandbox dropped older output than since, "
		"`  [more output: poll again from next]` when the 64 KiB "
		"bound cut this read; then the `── stdout ──` and "
		"`── stderr ──` sections of the new output. "
		"structuredContent: {exec_id, state, stdout, stderr, since, "
		"next, more, trimmed_bytes, exit_code, reason, signal, "
		"duration_ms}.",
		"{\"type\":\"object\",\"properties\":{" TARGET_PROPS ","
		"\"exec_id\":{\"type\":\"string\",\"description\":"
		"\"The exec_id of sandbox_exec_start\"},"
		"\"since\":{\"type\":\"integer\",\"description\":"
		"\"Byte offset to read from: the next of the previous "
		"poll (default 0)\"},"
		"\"wait\":{\"type\":\"number\",\"description\":"
		"\"Seconds to wait for new output (default 0)\"}},"
		"\"required\":[\"sandbox\",\"namespace\",\"exec_id\"],"
		"\"additionalProperties\":false}",
		"{\"type\":\"object\",\"properties\":{"
		"\"exec_id\":{\"type\":\"string\"},"
		"\"state\":{\"type\":\"string\"},"
		"\"stdout\":{\"type\":\"string\"},"
		"\"stderr\":{\"type\":\"string\"},"
		"\"since\":{\"type\":\"integer\"},"
		"\"next\":{\"type\":\"integer\"},"
		"\"more\":{\"type\":\"boolean\"},"
		"\"trimmed_bytes\":{\"type\":\"integer\"},"
		"\"exit_code\":{\"type\":\"integer\"},"
		"\"reason\":{\"type\":\"string\"},"
		"\"signal\":{\"type\":\"integer\"},"
		"\"duration_ms\":{\"type\":\"integer\"}},"
		"\"required\":[\"exec_id\",\"state\",\"stdout\",\"stderr\","
		"\"next\"]}",
		MCP_HINT_READ_ONLY,
		tool_exec_poll,
	},
	{
		"sandbox_exec_write_stdin",
		"Write to a background command's stdin",
		"Write data (text, at most 1 MiB a call) to the standard "
		"input of a command started with sandbox_exec_start with "
		"stdin: true; eof: true closes it after the data (data may "
		"then be left out). An error when its stdin is not open.",
		"{\"type\":\"object\",\"properties\":{" TARGET_PROPS ","
		"\"exec_id\":{\"type\":\"string\",\"description\":"
		"\"The exec_id of sandbox_exec_start\"},"
		"\"data\":{\"type\":\"string\",\"description\":"
		"\"Text to write\"},"
		"\"eof\":{\"type\":\"boolean\",\"description\":"
		"\"Close standard input after the data (default "
		"false)\"}},"
		"\"required\":[\"sandbox\",\"namespace\",\"exec_id\"],"
		"\"additionalProperties\":false}",
		NULL,
		MCP_HINT_NOT_DESTRUCTIVE,
		tool_exec_write_stdin,
	},
	{
		"sandbox_exec_signal",
		"Signal a background command",
		"Send a signal to the process group of a running command "
		"started with sandbox_exec_start: a name (\"TERM\", "
		"\"SIGINT\", \"KILL\"...) or a number; default TERM. An "
		"error when it has ended.",
		"{\"type\":\"object\",\"properties\":{" TARGET_PROPS ","
		"\"exec_id\":{\"type\":\"string\",\"description\":"
		"\"The exec_id of sandbox_exec_start\"},"
		"\"signal\":{\"type\":\"string\",\"description\":"
		"\"Signal name such as TERM, or its number (default "
		"TERM)\"}},"
		"\"required\":[\"sandbox\",\"namespace\",\"exec_id\"],"
		"\"additionalProperties\":false}",
		NULL,
		MCP_HINT_DESTRUCTIVE,
		tool_exec_signal,
	},
	{
		"sandbox_exec_close",
		"Close a background command",
		"Forget a command started with sandbox_exec_start: kill it "
		"if it is still running and delete its output. Its exec_id "
		"is unknown afterwards.",
		"{\"type\":\"object\",\"properties\":{" TARGET_PROPS ","
		"\"exec_id\":{\"type\":\"string\",\"description\":"
		"\"The exec_id of sandbox_exec_start\"}},"
		"\"required\":[\"sandbox\",\"namespace\",\"exec_id\"],"
		"\"additionalProperties\":false}",
		NULL,
		MCP_HINT_DESTRUCTIVE,
		tool_exec_close,
	},
};

const struct mcp_toolset mcp_toolset_sandbox = {
	"sandbox",
	sandbox_tools,
	ARRAY_SIZE(sandbox_tools),
	sandbox_session_end,
};
