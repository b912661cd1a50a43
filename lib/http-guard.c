/*
 * Connection defences of the HTTP servers (http-guard.h): pending
 * connections in accept order, shut down when too many or too old.
 *
 * Shutting down is shutdown(2) of the connection's socket from another
 * thread: its own thread then reads end of file and libmicrohttpd
 * closes it. libmicrohttpd reports MHD_CONNECTION_NOTIFY_CLOSED before
 * it closes the socket, and the entry leaves the list there under the
 * lock, so a socket in the list is never one that was closed (and its
 * number reused).
 */
#include "compat.h"
#include "http-guard.h"

#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

struct conn {
	struct conn *prev, *next; /* the pending list, oldest first */
	int fd;
	uint64_t since_ms;     /* accept, or the body's last progress */
	unsigned char key[16]; /* the client: IPv4/IPv6 address */
	int pending;	       /* in the list */
	int shut;	       /* shut down by us */
};

struct http_guard {
	struct http_guard_opts o;
	pthread_mutex_t mu;
	struct conn *head, *tail; /* pending connections */
	unsigned live;		  /* pending ones not shut down */
	uint64_t evicted, expired;
};

struct http_guard *http_guard_new(const struct http_guard_opts *opts)
{
	struct http_guard *g = xcalloc(1, sizeof(*g));

	if (opts)
		g->o = *opts;
	if (!g->o.head_timeout_s)
		g->o.head_timeout_s = 10;
	if (!g->o.trusted_timeout_s)
		g->o.trusted_timeout_s = 300;
	if (!g->o.max_pending)
		g->o.max_pending = 256;
	if (!g->o.max_pending_per_client)
		g->o.max_pending_per_client = 64;
	pthread_mutex_init(&g->mu, NULL);
	return g;
}

void http_guard_free(struct http_guard *g)
{
	if (!g)
		return;
	/* the daemon is stopped: every connection was reported closed */
	pthread_mutex_destroy(&g->mu);
	free(g);
}

unsigned int http_guard_head_timeout(const struct http_guard *g)
{
	return g->o.head_timeout_s;
}

/* The client of a connection: its address; loopback and unix are one. */
static void client_key(struct MHD_Connection *c, unsigned char key[16])
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	memset(key, 0, 16);
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;
		const unsigned char *a = (const void *)&in->sin_addr;

		if (a[0] != 127) /* 127.0.0.0/8 is this machine */
			memcpy(key + 12, a, 4);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		const unsigned char *a = in6->sin6_addr.s6_addr;

		if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			return;
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			/* ::ffff:a.b.c.d is the IPv4 client a.b.c.d */
			if (a[12] != 127)
				memcpy(key + 12, a + 12, 4);
			return;
		}
		memcpy(key, a, 16);
	}
}

static void unlink_locked(struct http_guard *g, struct conn *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		g->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		g->tail = e->prev;
	e->prev = e->next = NULL;
	e->pending = 0;
	if (!e->shut)
		g->live--;
}

static void shut_locked(struct http_guard *g, struct conn *e)
{
	if (!e || e->shut)
		return;
	e->shut = 1;
	g->live--;
	if (e->fd >= 0)
		shutdown(e->fd, SHUT_RDWR);
}

/* the oldest live pending connection (of this client if key) */
static struct conn *oldest_locked(struct http_guard *g,
				  const unsigned char *key)
{
	for (struct conn *e = g->head; e; e = e->next)
		if (!e->shut && (!key || !memcmp(e->key, key, 16)))
			return e;
	return NULL;
}

static void started(struct http_guard *g, struct MHD_Connection *c,
		    void **socket_context)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct conn *e = xcalloc(1, sizeof(*e));
	unsigned same = 0;

	e->fd = ci ? ci->connect_fd : -1;
	e->since_ms = monotonic_ms();
	client_key(c, e->key);
	*socket_context = e;

	pthread_mutex_lock(&g->mu);
	for (struct conn *p = g->head; p; p = p->next)
		same += !p->shut && !memcmp(p->key, e->key, 16);
	if (same >= g->o.max_pending_per_client) {
		shut_locked(g, oldest_locked(g, e->key));
		g->evicted++;
	}
	if (g->live >= g->o.max_pending) {
		shut_locked(g, oldest_locked(g, NULL));
		g->evicted++;
	}
	e->pending = 1;
	e->prev = g->tail;
	if (g->tail)
		g->tail->next = e;
	else
		g->head = e;
	g->tail = e;
	g->live++;
	pthread_mutex_unlock(&g->mu);
}

void http_guard_notify(void *cls, struct MHD_Connection *c,
		       void **socket_context,
		       enum MHD_ConnectionNotificationCode toe)
{
	struct http_guard *g = cls;
	struct conn *e = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		started(g, c, socket_context);
		return;
	}
	if (toe != MHD_CONNECTION_NOTIFY_CLOSED || !e)
		return;
	pthread_mutex_lock(&g->mu);
	if (e->pending)
		unlink_locked(g, e);
	pthread_mutex_unlock(&g->mu);
	free(e);
	*socket_context = NULL;
}

void http_guard_trust(struct http_guard *g, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *e = ci ? ci->socket_context : NULL;
	int was_pending = 0;

	if (!e)
		return;
	pthread_mutex_lock(&g->mu);
	if (e->pending) {
		unlink_locked(g, e);
		was_pending = 1;
	}
	pthread_mutex_unlock(&g->mu);
	if (was_pending)
		MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT,
					  g->o.trusted_timeout_s);
}

void http_guard_progress(struct http_guard *g, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *e = ci ? ci->socket_context : NULL;

	if (!e)
		return;
	pthread_mutex_lock(&g->mu);
	if (e->pending && !e->shut && e != g->tail) {
		/* to the tail: the list stays in order of since_ms */
		unlink_locked(g, e);
		g->live++;
		e->pending = 1;
		e->prev = g->tail;
		g->tail->next = e;
		g->tail = e;
	}
	if (e->pending)
		e->since_ms = monotonic_ms();
	pthread_mutex_unlock(&g->mu);
}

int http_guard_tick(struct http_guard *g)
{
	uint64_t now = monotonic_ms();
	uint64_t limit = (uint64_t)g->o.head_timeout_s * 1000;
	int n = 0;

	pthread_mutex_lock(&g->mu);
	/* accept order: stop at the first one still in time */
	for (struct conn *e = g->head; e && now - e->since_ms >= limit;
	     e = e->next) {
		if (e->shut)
			continue;
		shut_locked(g, e);
		g->expired++;
		n++;
	}
	pthread_mutex_unlock(&g->mu);
	return n;
}

void http_guard_stats(struct http_guard *g, uint64_t *evicted,
		      uint64_t *expired)
{
	pthread_mutex_lock(&g->mu);
	if (evicted)
		*evicted = g->evicted;
	if (expired)
		*expired = g->expired;
	pthread_mutex_unlock(&g->mu);
}
