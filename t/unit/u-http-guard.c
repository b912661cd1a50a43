#include "compat.h"
#include "http-guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include <setjmp.h>
#include <cmocka.h>

/*
 * Unit tests of lib/http-guard.c: a libmicrohttpd server on 127.0.0.1
 * guarded with small limits, raw TCP clients that send nothing (idle)
 * or a whole request (honest), and what the server closes.
 */

struct srv {
	struct MHD_Daemon *d;
	struct http_guard *g;
	unsigned port;
};

static enum MHD_Result handler(void *cls, struct MHD_Connection *c,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	struct srv *s = cls;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	static int seen;

	if (!*con_cls) {
		/* the head: trusted; answer in the next call (an answer
		 * queued before the end of the request closes the
		 * connection after it) */
		http_guard_trust(s->g, c);
		*con_cls = &seen;
		return MHD_YES;
	}
	resp = MHD_create_response_from_buffer(2, (void *)"ok",
					       MHD_RESPMEM_PERSISTENT);
	ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void start(struct srv *s, unsigned max_pending, unsigned per_client,
		  unsigned head_s)
{
	struct http_guard_opts o = { head_s, 30, max_pending, per_client };
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const union MHD_DaemonInfo *info;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->g = http_guard_new(&o);
	assert_int_equal(http_guard_head_timeout(s->g), head_s);
	s->d = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION |
			MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL,
		0, NULL, NULL, handler, s, MHD_OPTION_SOCK_ADDR, &sa,
		MHD_OPTION_NOTIFY_CONNECTION, http_guard_notify, s->g,
		MHD_OPTION_CONNECTION_TIMEOUT, http_guard_head_timeout(s->g),
		MHD_OPTION_END);
	assert_non_null(s->d);
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	assert_non_null(info);
	s->port = info->port;
}

static void stop(struct srv *s)
{
	MHD_stop_daemon(s->d);
	http_guard_free(s->g);
}

static int dial(struct srv *s)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(s->port);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* the server closed fd within ms (end of file) */
static int closed_within(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	char c;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	return read(fd, &c, 1) <= 0;
}

/* wait until the server saw n connections start (accepts are async) */
static void settle(void)
{
	usleep(200 * 1000);
}

/* a whole request on fd, the status line's code, the connection kept */
static int ask(int fd)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	char buf[512];
	ssize_t n;

	assert_int_equal(write(fd, req, sizeof(req) - 1), sizeof(req) - 1);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strncmp(buf, "HTTP/1.1 ", 9) ? -1 : atoi(buf + 9);
}

static void test_per_client(void **state)
{
	struct srv s;
	int a, b, c;
	uint64_t evicted;

	/* loopback clients are one client: its limit is 2 */
	start(&s, 10, 2, 5);
	a = dial(&s);
	settle();
	b = dial(&s);
	settle();
	c = dial(&s);
	/* the third evicts the oldest of that client */
	assert_true(closed_within(a, 2000));
	assert_false(closed_within(b, 200));
	assert_false(closed_within(c, 200));
	http_guard_stats(s.g, &evicted, NULL);
	assert_int_equal(evicted, 1);
	/* the newest is served */
	assert_int_equal(ask(c), 200);
	close(a);
	close(b);
	close(c);
	stop(&s);
}

static void test_max_pending(void **state)
{
	struct srv s;
	int fd[4];

	start(&s, 2, 100, 5);
	for (int i = 0; i < 4; i++) {
		fd[i] = dial(&s);
		settle();
	}
	assert_true(closed_within(fd[0], 2000));
	assert_true(closed_within(fd[1], 2000));
	assert_false(closed_within(fd[2], 100));
	assert_int_equal(ask(fd[3]), 200);
	/*
	 * The trusted one left the count: fd[2] and e are the two
	 * pending; f evicts fd[2], never the trusted fd[3].
	 */
	{
		int e = dial(&s), f;

		settle();
		assert_false(closed_within(fd[2], 100));
		f = dial(&s);
		assert_true(closed_within(fd[2], 2000));
		assert_false(closed_within(e, 100));
		assert_false(closed_within(f, 100));
		assert_false(closed_within(fd[3], 100));
		assert_int_equal(ask(fd[3]), 200);
		close(e);
		close(f);
	}
	for (int i = 0; i < 4; i++)
		close(fd[i]);
	stop(&s);
}

static void test_head_deadline(void **state)
{
	struct srv s;
	int idle, slow, good;
	uint64_t expired;

	start(&s, 10, 10, 1);
	idle = dial(&s);
	slow = dial(&s);
	good = dial(&s);
	assert_int_equal(ask(good), 200);
	/* the slow one sends a byte now and then: never idle for 1 s */
	assert_int_equal(write(slow, "GET / HTTP/1.1\r\nX: ", 19), 19);
	for (int i = 0; i < 4; i++) {
		usleep(400 * 1000);
		assert_int_equal(write(slow, "y", 1), 1);
		http_guard_tick(s.g);
	}
	/* 1.6 s after accept: both are closed, the trusted one is not */
	assert_true(closed_within(idle, 2000));
	assert_true(closed_within(slow, 2000));
	assert_false(closed_within(good, 100));
	http_guard_stats(s.g, NULL, &expired);
	assert_true(expired >= 1); /* the idle one may time out by itself */
	assert_int_equal(ask(good), 200);
	close(idle);
	close(slow);
	close(good);
	stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_client),
		cmocka_unit_test(test_max_pending),
		cmocka_unit_test(test_head_deadline),
	};

	alarm(120);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
