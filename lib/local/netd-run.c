/*
 * The server loop of `gosbx netd` (netd-run.h): accept in the
 * sandbox's namespace, serve on the host, one thread a connection.
 */
#include "compat.h"
#include "local/netd-run.h"
#include "local/netd.h"
#include "log.h"
#include "usage.h"

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

/* a thread's stack: the handlers keep their buffers on the heap */
#define NETD_THREAD_STACK (256 * 1024)
#define DNS_REPLY_MAX 512

static atomic_int live_connections;

void netd_config_init(struct netd_config *c)
{
	memset(c, 0, sizeof(*c));
	c->listen_fd = c->dns_fd = c->watch_fd = -1;
	egress_policy_init(&c->policy);
	modproxy_config_init(&c->mod);
	pthread_mutex_init(&c->mod_lock, NULL);
	pthread_cond_init(&c->mod_cond, NULL);
}

void netd_config_release(struct netd_config *c)
{
	egress_policy_release(&c->policy);
	modproxy_config_release(&c->mod);
	free(c->mod_why);
	pthread_mutex_destroy(&c->mod_lock);
	pthread_cond_destroy(&c->mod_cond);
}

static void *load_modules(void *arg)
{
	struct netd_config *c = arg;
	int r = modproxy_config_load(&c->mod, c->go ? c->go : "go", NULL);

	pthread_mutex_lock(&c->mod_lock);
	if (r < 0) {
		c->mod_why = xstrdup(last_error());
		log_msg(LOG_WARN, "net: Go modules are off", "why", c->mod_why);
	}
	c->mod_state = r < 0 ? -1 : 1;
	pthread_cond_broadcast(&c->mod_cond);
	pthread_mutex_unlock(&c->mod_lock);
	return NULL;
}

/* the module configuration once loaded, or NULL with why */
static const struct modproxy_config *modules_ready(struct netd_config *c,
						   const char **why)
{
	int state;

	pthread_mutex_lock(&c->mod_lock);
	while (!c->mod_state)
		pthread_cond_wait(&c->mod_cond, &c->mod_lock);
	state = c->mod_state;
	*why = c->mod_why;
	pthread_mutex_unlock(&c->mod_lock);
	return state > 0 ? &c->mod : NULL;
}

struct connection {
	struct netd_config *cfg;
	int fd;
};

static int is_proxy_request(const struct netd_head *h)
{
	return !strcmp(h->method, "CONNECT") ||
	       !strncasecmp(h->target, "http://", 7) ||
	       !strncasecmp(h->target, "https://", 8);
}

static void serve_http(struct netd_config *cfg, int fd)
{
	struct netd_head h;
	struct strbuf why = STRBUF_INIT;
	const struct modproxy_config *mod;
	const char *off;

	netd_head_init(&h);
	if (netd_head_read(fd, NULL, 0, &h, &why) < 0) {
		if (strcmp(why.buf, "connection closed")) {
			struct strbuf msg = STRBUF_INIT;

			strbuf_addf(&msg, "gosbx: bad request: %s", why.buf);
			netd_reply(fd, 400, msg.buf, msg.buf);
			strbuf_release(&msg);
		}
		goto out;
	}
	if (is_proxy_request(&h)) {
		egress_serve_http(&cfg->policy, fd, &h);
	} else if (starts_with(h.target, NETD_GOPROXY_PATH "/")) {
		if (cfg->modules && (mod = modules_ready(cfg, &off)))
			modproxy_serve(mod, fd, &h);
		else if (cfg->modules) {
			strbuf_addf(&why, "gosbx: Go modules are off: %s",
				    off ? off : "?");
			netd_reply(fd, 503, why.buf, why.buf);
		} else
			netd_reply(fd, 404,
				   "gosbx: Go modules are off in this "
				   "sandbox (--modules=off)",
				   "gosbx: Go modules are off in this sandbox "
				   "(--modules=off)");
	} else {
		netd_reply(fd, 404, "Not Found",
			   "gosbx: this is the sandbox's proxy "
			   "(HTTP_PROXY) and module proxy (GOPROXY)");
	}
out:
	netd_head_release(&h);
	strbuf_release(&why);
}

static void *serve_connection(void *arg)
{
	struct connection *c = arg;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	unsigned char first;

	/* SOCKS5 opens with its version byte; HTTP with a method token */
	if (poll(&pfd, 1, NETD_HEAD_TIMEOUT_MS) == 1 &&
	    recv(c->fd, &first, 1, MSG_PEEK) == 1) {
		if (first == 0x05)
			egress_serve_socks5(&c->cfg->policy, c->fd);
		else
			serve_http(c->cfg, c->fd);
	}
	close(c->fd);
	free(c);
	atomic_fetch_sub(&live_connections, 1);
	return NULL;
}

static void accept_one(struct netd_config *cfg)
{
	struct connection *c;
	pthread_attr_t attr;
	pthread_t t;
	int fd = accept4(cfg->listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (atomic_fetch_add(&live_connections, 1) >= NETD_MAX_CONNECTIONS) {
		struct log_line l;

		atomic_fetch_sub(&live_connections, 1);
		if (log_begin(&l, LOG_WARN, "net deny")) {
			log_str(&l, "why", "too many connections at once");
			log_int(&l, "max", NETD_MAX_CONNECTIONS);
			log_end(&l);
		}
		close(fd);
		return;
	}
	c = xcalloc(1, sizeof(*c));
	c->cfg = cfg;
	c->fd = fd;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, NETD_THREAD_STACK);
	if (pthread_create(&t, &attr, serve_connection, c)) {
		close(fd);
		free(c);
		atomic_fetch_sub(&live_connections, 1);
	}
	pthread_attr_destroy(&attr);
}

static void *serve_dns(void *arg)
{
	const struct netd_config *cfg = arg;
	unsigned char q[DNS_REPLY_MAX], out[DNS_REPLY_MAX];

	for (;;) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(cfg->dns_fd, q, sizeof(q), 0,
				     (struct sockaddr *)&from, &fl);
		size_t len;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return NULL;
		len = egress_dns_reply(&cfg->policy, q, n, out, sizeof(out));
		if (len)
			sendto(cfg->dns_fd, out, len, MSG_DONTWAIT,
			       (struct sockaddr *)&from, fl);
	}
}

int netd_run(struct netd_config *c)
{
	pthread_t dns, mod;

	if (c->modules && pthread_create(&mod, NULL, load_modules, c))
		return error("netd: cannot start loading the module settings");
	if (c->modules)
		pthread_detach(mod);

	if (c->dns_fd >= 0 && pthread_create(&dns, NULL, serve_dns, c))
		return error("netd: cannot start the DNS thread");
	if (c->dns_fd >= 0)
		pthread_detach(dns);
	for (;;) {
		struct pollfd p[2] = { { .fd = c->listen_fd, .events = POLLIN },
				       { .fd = c->watch_fd,
					 .events = POLLIN } };
		int r = poll(p, c->watch_fd >= 0 ? 2 : 1, -1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return error_errno("netd: poll");
		if (c->watch_fd >= 0 && p[1].revents)
			return 0;
		if (p[0].revents & (POLLERR | POLLNVAL))
			return error("netd: the listening socket failed");
		if (p[0].revents & POLLIN)
			accept_one(c);
	}
}
