/*
 * The interactive channel's framing and control messages, both ends
 * (channel.h).
 */
#include "compat.h"
#include "proto/channel.h"

#include <signal.h>

void exec_channel_frame(struct strbuf *out, enum exec_channel ch,
			const void *data, size_t len)
{
	strbuf_grow(out, len + 1);
	strbuf_addch(out, (char)ch);
	if (len)
		strbuf_add(out, data, len);
}

int exec_channel_split(const void *msg, size_t len, unsigned *ch,
		       const void **payload, size_t *plen)
{
	if (!len)
		return -1;
	*ch = *(const unsigned char *)msg;
	*payload = (const char *)msg + 1;
	*plen = len - 1;
	return 0;
}

static const struct {
	const char *name;
	int sig;
} signals[] = {
	{ "HUP", SIGHUP },   { "INT", SIGINT },	    { "QUIT", SIGQUIT },
	{ "KILL", SIGKILL }, { "USR1", SIGUSR1 },   { "USR2", SIGUSR2 },
	{ "TERM", SIGTERM }, { "CONT", SIGCONT },   { "STOP", SIGSTOP },
	{ "TSTP", SIGTSTP }, { "WINCH", SIGWINCH },
};

void exec_control_add_resize(struct strbuf *out, unsigned cols, unsigned rows)
{
	strbuf_addf(out, "{\"type\":\"resize\",\"cols\":%u,\"rows\":%u}", cols,
		    rows);
}

void exec_control_add_signal(struct strbuf *out, const char *name)
{
	strbuf_addstr(out, "{\"type\":\"signal\",\"signal\":");
	json_add_str(out, name);
	strbuf_addch(out, '}');
}

void exec_control_add_eof(struct strbuf *out)
{
	strbuf_addstr(out, "{\"type\":\"eof\"}");
}

static int parse_resize(const json_t *j, struct exec_control *c,
			struct strbuf *err)
{
	int64_t cols, rows;

	if (json_object_int(j, "cols", &cols) <= 0 ||
	    json_object_int(j, "rows", &rows) <= 0 || cols < 1 || rows < 1 ||
	    cols > 65535 || rows > 65535) {
		strbuf_addstr(err, "resize wants cols and rows from 1 to "
				   "65535");
		return -1;
	}
	c->cols = (unsigned)cols;
	c->rows = (unsigned)rows;
	return 0;
}

static int parse_signal(const json_t *j, struct exec_control *c,
			struct strbuf *err)
{
	const char *name = json_object_str(j, "signal");

	for (size_t i = 0; name && i < ARRAY_SIZE(signals); i++)
		if (!strcmp(name, signals[i].name)) {
			c->signo = signals[i].sig;
			return 0;
		}
	strbuf_addstr(err, "signal wants \"signal\": one of ");
	for (size_t i = 0; i < ARRAY_SIZE(signals); i++)
		strbuf_addf(err, "%s%s", i ? ", " : "", signals[i].name);
	return -1;
}

int exec_control_parse(const json_t *j, struct exec_control *c,
		       struct strbuf *err)
{
	const char *type = json_object_str(j, "type");

	memset(c, 0, sizeof(*c));
	if (!type) {
		strbuf_addstr(err, "a control message is a JSON object with "
				   "a \"type\"");
		return -1;
	}
	if (!strcmp(type, "start")) {
		c->type = EXEC_CONTROL_START;
		return 0;
	}
	if (!strcmp(type, "eof")) {
		c->type = EXEC_CONTROL_EOF;
		return 0;
	}
	if (!strcmp(type, "resize")) {
		c->type = EXEC_CONTROL_RESIZE;
		return parse_resize(j, c, err);
	}
	if (!strcmp(type, "signal")) {
		c->type = EXEC_CONTROL_SIGNAL;
		return parse_signal(j, c, err);
	}
	strbuf_addstr(err, "unknown control message type '");
	strbuf_add(err, type, strnlen(type, 32));
	strbuf_addch(err, '\'');
	return -1;
}
