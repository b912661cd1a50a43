/*
 * modproxy-serve: the module proxy of netd (lib/local/modproxy.h) on a
 * TCP port of 127.0.0.1, so that t7110 can use it with the real go
 * command and no sandbox:
 *
 *   modproxy-serve [--port-file=<path>] [--cache=<dir>] [--go=<go>]
 *
 * It loads the module settings as netd does (modproxy_config_load()
 * with the go given, default "go"; --cache: the module cache, default
 * <XDG_CACHE_HOME or ~/.cache>/gosbx/gomod), listens on 127.0.0.1 port
 * 0, prints the port on stdout, or writes it to --port-file (whole, by
 * a rename: a reader never sees half of it), and serves each
 * connection in a thread of its own as netd does (lib/local/netd-run.c):
 * netd_head_read(), then modproxy_serve() for targets under
 * NETD_GOPROXY_PATH "/", 404 for the others, 400 for a bad head. The
 * log lines (msg=module) go to stderr. SIGTERM or SIGINT end it: it
 * stops accepting, waits for the requests being served and exits 0
 * with everything freed (under SANITIZE, LeakSanitizer then checks
 * the handler's allocations).
 */
#include "compat.h"
#include "local/modproxy.h"
#include "local/netd.h"
#include "parse-options.h"
#include "strbuf.h"
#include "usage.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>

static const char *const usage_lines[] = {
	"modproxy-serve [--port-file=<path>] [--cache=<dir>] [--go=<go>]",
	NULL,
};

static struct modproxy_config config;

/* connections being served, to wait for at the end */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t live_cond = PTHREAD_COND_INITIALIZER;
static int live;

static void *serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct strbuf why = STRBUF_INIT;
	struct netd_head h;

	netd_head_init(&h);
	if (netd_head_read(fd, NULL, 0, &h, &why) < 0) {
		if (strcmp(why.buf, "connection closed"))
			netd_reply(fd, 400, "Bad Request", why.buf);
	} else if (starts_with(h.target, NETD_GOPROXY_PATH "/")) {
		modproxy_serve(&config, fd, &h);
	} else {
		netd_reply(fd, 404, "Not Found", "not a module proxy path");
	}
	netd_head_release(&h);
	strbuf_release(&why);
	close(fd);
	pthread_mutex_lock(&live_lock);
	live--;
	pthread_cond_signal(&live_cond);
	pthread_mutex_unlock(&live_lock);
	return NULL;
}

static void accept_one(int fd)
{
	int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	pthread_t t;

	if (c < 0)
		return;
	pthread_mutex_lock(&live_lock);
	live++;
	pthread_mutex_unlock(&live_lock);
	if (pthread_create(&t, NULL, serve, (void *)(intptr_t)c)) {
		close(c);
		pthread_mutex_lock(&live_lock);
		live--;
		pthread_mutex_unlock(&live_lock);
		return;
	}
	pthread_detach(t);
}

static int listen_local(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
		error_errno("cannot listen on 127.0.0.1");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

static int say_port(const char *port_file, int port)
{
	struct strbuf tmp = STRBUF_INIT;
	FILE *f;
	int ret = 0;

	if (!port_file) {
		printf("%d\n", port);
		return fflush(stdout) ? error_errno("cannot write the port")
				      : 0;
	}
	strbuf_addf(&tmp, "%s.tmp", port_file);
	f = fopen(tmp.buf, "w");
	if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f) ||
	    rename(tmp.buf, port_file) < 0)
		ret = error_errno("cannot write '%s'", port_file);
	strbuf_release(&tmp);
	return ret;
}

int main(int argc, const char **argv)
{
	const char *port_file = NULL, *cache = NULL, *go = "go";
	struct pollfd p[2];
	sigset_t end;
	int fd, port;
	const struct option opts[] = {
		OPT_STRING(0, "port-file", &port_file, "<path>",
			   "write the port there (default: stdout)"),
		OPT_STRING(0, "cache", &cache, "<dir>", "the module cache"),
		OPT_STRING(0, "go", &go, "<go>", "the go command"),
		OPT_END(),
	};

	progname = "modproxy-serve";
	argc = parse_options(argc, argv, opts, usage_lines, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc)
		return usage_error(usage_lines, opts, "no arguments expected");
	signal(SIGPIPE, SIG_IGN);
	/* blocked in every thread: the end is read from a signalfd */
	sigemptyset(&end);
	sigaddset(&end, SIGTERM);
	sigaddset(&end, SIGINT);
	pthread_sigmask(SIG_BLOCK, &end, NULL);
	p[1].fd = signalfd(-1, &end, SFD_CLOEXEC);
	if (p[1].fd < 0)
		die_errno("signalfd");
	modproxy_config_init(&config);
	if (modproxy_config_load(&config, go, cache) < 0)
		return 1;
	fd = listen_local(&port);
	if (fd < 0 || say_port(port_file, port) < 0)
		return 1;
	p[0].fd = fd;
	p[0].events = p[1].events = POLLIN;
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			die_errno("poll");
		if (p[1].revents)
			break;
		if (p[0].revents)
			accept_one(fd);
	}
	close(fd);
	pthread_mutex_lock(&live_lock);
	while (live)
		pthread_cond_wait(&live_cond, &live_lock);
	pthread_mutex_unlock(&live_lock);
	modproxy_config_release(&config);
	close(p[1].fd);
	return 0;
}
