#include "compat.h"
#include "run-command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#define CAPTURE_MAX (64 * 1024)

int exited_ok(int status)
{
	return status >= 0 && WIFEXITED(status) && !WEXITSTATUS(status);
}

int run_capture(const char *const *argv, struct strbuf *out, int timeout_ms)
{
	return run_capture_in(argv, NULL, NULL, out, timeout_ms);
}

int run_capture_in(const char *const *argv, const char *const *env,
		   const char *dir, struct strbuf *out, int timeout_ms)
{
	uint64_t deadline = monotonic_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int fds[2], status;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		signal(SIGPIPE, SIG_DFL);
		if (dir && chdir(dir) < 0)
			_exit(127);
		if (env)
			execvpe(argv[0], (char *const *)argv,
				(char *const *)env);
		else
			execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		int wait_ms = -1;
		char buf[4096];
		ssize_t n;

		if (timeout_ms > 0) {
			int64_t left =
				(int64_t)deadline - (int64_t)monotonic_ms();
			if (left <= 0) {
				kill(pid, SIGKILL);
				break;
			}
			wait_ms = (int)left;
		}
		if (poll(&pfd, 1, wait_ms) < 0 && errno != EINTR)
			break;
		if (!pfd.revents)
			continue;
		n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out->len < CAPTURE_MAX)
			strbuf_add(out, buf, n);
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}
