#include "compat.h"
#include "parse-options.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"

#include <ctype.h>
#include <math.h>

/*
 * Scan a plain decimal number at p: digits with an optional fraction,
 * at least one digit ("5", "1.5", ".5", "5."). No sign, exponent, hex,
 * "inf" or "nan", which strtod() alone would accept. Returns the end
 * of the number, or NULL if there is none.
 */
static const char *scan_decimal(const char *p, double *out)
{
	const char *q = p;
	char *end;
	int digits = 0;

	while (isdigit((unsigned char)*q))
		q++, digits++;
	if (*q == '.')
		for (q++; isdigit((unsigned char)*q); q++)
			digits++;
	if (!digits)
		return NULL;
	errno = 0;
	*out = strtod(p, &end);
	/* strtod() must have read exactly the digits scanned above */
	if (errno || end != q)
		return NULL;
	return q;
}

int parse_duration_ms(const char *s, int64_t *out_ms)
{
	double total = 0;
	const char *p = s;

	if (!s || !*s)
		return -1;
	/* a bare number is seconds */
	p = scan_decimal(s, &total);
	if (p && !*p) {
		total *= 1000;
		p = "";
	} else {
		total = 0;
		p = s;
	}
	while (*p) {
		double v, mult;

		p = scan_decimal(p, &v);
		if (!p)
			return -1;
		if (skip_prefix(p, "ms", &p))
			mult = 1;
		else if (skip_prefix(p, "us", &p))
			mult = 0.001;
		else if (skip_prefix(p, "h", &p))
			mult = 3600000;
		else if (skip_prefix(p, "m", &p))
			mult = 60000;
		else if (skip_prefix(p, "s", &p))
			mult = 1000;
		else
			return -1;
		total += v * mult;
		if (!(total <= (double)INT64_MAX / 2))
			return -1;
	}
	if (!(total <= (double)INT64_MAX / 2))
		return -1;
	*out_ms = (int64_t)llround(total);
	return 0;
}

int parse_size_bytes(const char *s, int64_t *out_bytes)
{
	const char *end;
	double v;
	double mult = 1;

	if (!s || !(end = scan_decimal(s, &v)))
		return -1;
	switch (tolower((unsigned char)*end)) {
	case '\0':
		break;
	case 'k':
		mult = 1024.0;
		end++;
		break;
	case 'm':
		mult = 1024.0 * 1024;
		end++;
		break;
	case 'g':
		mult = 1024.0 * 1024 * 1024;
		end++;
		break;
	case 't':
		mult = 1024.0 * 1024 * 1024 * 1024;
		end++;
		break;
	case 'b':
		break;
	default:
		return -1;
	}
	if (tolower((unsigned char)*end) == 'i')
		end++;
	if (tolower((unsigned char)*end) == 'b')
		end++;
	if (*end)
		return -1;
	if (!(v * mult <= (double)INT64_MAX / 2))
		return -1;
	*out_bytes = (int64_t)llround(v * mult);
	return 0;
}

static int opt_takes_arg(const struct option *o)
{
	return o->type != OPTION_BOOL && o->type != OPTION_GROUP &&
	       o->type != OPTION_END;
}

static void opt_name(struct strbuf *sb, const struct option *o, int shrt)
{
	if (shrt)
		strbuf_addf(sb, "-%c", o->short_name);
	else
		strbuf_addf(sb, "--%s", o->long_name);
}

static int set_value(const struct option *o, const char *arg, int shrt,
		     int negated)
{
	struct strbuf name = STRBUF_INIT;
	int ret = 0;

	opt_name(&name, o, shrt);
	switch (o->type) {
	case OPTION_BOOL:
		*(int *)o->value = !negated;
		break;
	case OPTION_STRING:
		*(const char **)o->value = negated ? NULL : arg;
		break;
	case OPTION_STRING_LIST:
		if (negated)
			strvec_clear(o->value);
		else
			strvec_push(o->value, arg);
		break;
	case OPTION_INT: {
		char *end;
		long v;

		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v > INT_MAX || v < INT_MIN)
			ret = error("option '%s' expects a number, not '%s'",
				    name.buf, arg);
		else
			*(int *)o->value = (int)v;
		break;
	}
	case OPTION_DURATION:
		if (parse_duration_ms(arg, o->value))
			ret = error("option '%s' expects a duration such as "
				    "'30s', '5m' or '1m30s', not '%s'",
				    name.buf, arg);
		break;
	case OPTION_SIZE:
		if (parse_size_bytes(arg, o->value))
			ret = error("option '%s' expects a size such as "
				    "'512m' or '2g', not '%s'",
				    name.buf, arg);
		break;
	default:
		break;
	}
	strbuf_release(&name);
	return ret;
}

static void apply_env(const struct option *opts)
{
	for (const struct option *o = opts; o->type != OPTION_END; o++) {
		const char *v;

		if (!o->env || !(v = getenv(o->env)) || !*v)
			continue;
		if (set_value(o, v, 0, 0))
			warning("ignoring environment variable '%s'", o->env);
	}
}

void usage_with_options_to(FILE *fp, const char *const *usage,
			   const struct option *opts)
{
	fprintf(fp, "usage: %s\n", *usage++);
	while (*usage && **usage)
		fprintf(fp, "   or: %s\n", *usage++);
	for (; *usage; usage++)
		fprintf(fp, "%s%s\n", **usage ? "    " : "", *usage);
	if (opts->type != OPTION_END && opts->type != OPTION_GROUP)
		fputc('\n', fp);
	for (const struct option *o = opts; o->type != OPTION_END; o++) {
		struct strbuf sb = STRBUF_INIT;

		if (o->type == OPTION_GROUP) {
			fprintf(fp, "\n%s\n", o->help ? o->help : "");
			continue;
		}
		strbuf_addstr(&sb, "    ");
		if (o->short_name)
			strbuf_addf(&sb, "-%c", o->short_name);
		if (o->short_name && o->long_name)
			strbuf_addstr(&sb, ", ");
		if (o->long_name)
			strbuf_addf(&sb, "--%s", o->long_name);
		if (opt_takes_arg(o))
			strbuf_addf(&sb, "%s%s", o->long_name ? "=" : " ",
				    o->argh ? o->argh : "<value>");
		if (sb.len >= 30) {
			fprintf(fp, "%s\n", sb.buf);
			strbuf_reset(&sb);
		}
		while (sb.len < 30)
			strbuf_addch(&sb, ' ');
		strbuf_addstr(&sb, o->help ? o->help : "");
		if (o->env)
			strbuf_addf(&sb, " (env %s)", o->env);
		fprintf(fp, "%s\n", sb.buf);
		strbuf_release(&sb);
	}
	fputc('\n', fp);
}

int usage_error(const char *const *usage, const struct option *opts,
		const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	error("%s", msg.buf);
	strbuf_release(&msg);
	return usage_reported(usage, opts);
}

int usage_reported(const char *const *usage, const struct option *opts)
{
	usage_with_options_to(stderr, usage, opts);
	return PARSE_OPT_USAGE_STATUS;
}

static const struct option *
find_long(const struct option *opts, const char *name, size_t len, int *negated)
{
	*negated = 0;
	for (const struct option *o = opts; o->type != OPTION_END; o++) {
		if (!o->long_name)
			continue;
		if (strlen(o->long_name) == len &&
		    !strncmp(o->long_name, name, len))
			return o;
	}
	if (len > 3 && !strncmp(name, "no-", 3)) {
		for (const struct option *o = opts; o->type != OPTION_END;
		     o++) {
			if (!o->long_name || o->type == OPTION_INT ||
			    o->type == OPTION_DURATION ||
			    o->type == OPTION_SIZE)
				continue;
			if (strlen(o->long_name) == len - 3 &&
			    !strncmp(o->long_name, name + 3, len - 3)) {
				*negated = 1;
				return o;
			}
		}
	}
	return NULL;
}

static const struct option *find_short(const struct option *opts, int c)
{
	for (const struct option *o = opts; o->type != OPTION_END; o++)
		if (o->short_name == c)
			return o;
	return NULL;
}

/* --list-opts: the long options, "--name=" when it takes a value */
static void list_opts(const struct option *opts)
{
	for (const struct option *o = opts; o->type != OPTION_END; o++)
		if (o->long_name && o->type != OPTION_GROUP)
			printf("--%s%s\n", o->long_name,
			       opt_takes_arg(o) ? "=" : "");
}

int parse_options(int argc, const char **argv, const struct option *opts,
		  const char *const *usage, unsigned flags)
{
	int out = (flags & PARSE_OPT_KEEP_ARGV0) ? 1 : 0;
	int i;

	if (argc == 2 && !strcmp(argv[1], "--list-opts")) {
		list_opts(opts);
		return PARSE_OPT_HELP;
	}
	apply_env(opts);
	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if (!strcmp(arg, "--")) {
			i++;
			break;
		}
		if (arg[0] != '-' || !arg[1]) {
			if (flags & PARSE_OPT_STOP_AT_NON_OPTION)
				break;
			argv[out++] = arg;
			continue;
		}
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage_with_options_to(stdout, usage, opts);
			return PARSE_OPT_HELP;
		}
		if (arg[1] == '-') {
			const char *name = arg + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			int negated;
			const struct option *o =
				find_long(opts, name, len, &negated);
			const char *val = NULL;

			if (!o) {
				error("unknown option '%.*s'", (int)len + 2,
				      arg);
				goto bad;
			}
			if (opt_takes_arg(o) && !negated) {
				if (eq)
					val = eq + 1;
				else if (i + 1 < argc)
					val = argv[++i];
				else {
					error("option '--%s' requires a value",
					      o->long_name);
					goto bad;
				}
			} else if (eq) {
				error("option '--%s' takes no value",
				      o->long_name);
				goto bad;
			}
			if (set_value(o, val, 0, negated))
				goto bad;
			continue;
		}
		/* a cluster of short options: -qv, -fFILE, -f FILE */
		for (const char *p = arg + 1; *p; p++) {
			const struct option *o = find_short(opts, *p);
			const char *val = NULL;

			if (!o) {
				error("unknown switch '%c'", *p);
				goto bad;
			}
			if (opt_takes_arg(o)) {
				if (p[1])
					val = p + 1;
				else if (i + 1 < argc)
					val = argv[++i];
				else {
					error("switch '%c' requires a value",
					      *p);
					goto bad;
				}
				if (set_value(o, val, 1, 0))
					goto bad;
				break;
			}
			if (set_value(o, NULL, 1, 0))
				goto bad;
		}
	}
	for (; i < argc; i++)
		argv[out++] = argv[i];
	if (out < argc)
		argv[out] = NULL;
	return out;
bad:
	usage_with_options_to(stderr, usage, opts);
	return PARSE_OPT_ERROR;
}
