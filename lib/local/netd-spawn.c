/*
 * Starting `gosbx netd` (netd-run.h): a grandchild in a session of its
 * own, with the sandbox's sockets and a pidfd of the sandbox as
 * descriptors 3 to 5 and a ready pipe as 6.
 */
#include "compat.h"
#include "local/netd-run.h"
#include "strvec.h"
#include "usage.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

enum { FD_LISTEN = 3, FD_DNS, FD_WATCH, FD_READY, FD_FIRST_FREE };

static int pidfd_of(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* async-signal-safe: between fork and exec */
static NORETURN void exec_netd(const char *gosbx, char *const *argv,
			       const int from[4])
{
	int devnull, i, moved[4];

	if (setsid() < 0)
		_exit(127);
	/* above every target first, so that no dup2 overwrites a source */
	for (i = 0; i < 4; i++) {
		moved[i] = fcntl(from[i], F_DUPFD, 64);
		if (moved[i] < 0)
			_exit(127);
	}
	for (i = 0; i < 4; i++)
		if (dup2(moved[i], FD_LISTEN + i) < 0)
			_exit(127);
	devnull = open("/dev/null", O_RDWR);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 ||
	    dup2(devnull, 2) < 0)
		_exit(127);
	syscall(SYS_close_range, FD_FIRST_FREE, ~0U, 0);
	execv(gosbx, argv);
	_exit(127);
}

int netd_spawn(const struct netd_spawn *n)
{
	struct strvec argv = STRVEC_INIT;
	int ready[2] = { -1, -1 }, from[4], status, ret = -1;
	int watch = pidfd_of(n->sandbox_pid);
	char ok[2];
	pid_t pid;

	if (watch < 0)
		return error_errno("cannot start netd: pidfd_open");
	if (pipe2(ready, O_CLOEXEC) < 0) {
		error_errno("cannot start netd: pipe");
		goto out;
	}
	strvec_push(&argv, n->gosbx);
	strvec_push(&argv, "netd");
	strvec_pushf(&argv, "--listen-fd=%d", FD_LISTEN);
	strvec_pushf(&argv, "--dns-fd=%d", FD_DNS);
	strvec_pushf(&argv, "--watch-fd=%d", FD_WATCH);
	strvec_pushf(&argv, "--ready-fd=%d", FD_READY);
	strvec_pushf(&argv, "--log=%s", n->log_path);
	if (n->allow_net)
		strvec_pushf(&argv, "--allow-net=%s", n->allow_net);
	strvec_pushf(&argv, "--modules=%s", n->modules ? "on" : "off");
	if (n->go)
		strvec_pushf(&argv, "--go=%s", n->go);
	from[0] = n->fds[0];
	from[1] = n->fds[1];
	from[2] = watch;
	from[3] = ready[1];
	pid = fork();
	if (!pid) {
		/* the grandchild is netd; the child ends at once */
		if (fork() == 0)
			exec_netd(n->gosbx, (char *const *)argv.v, from);
		_exit(0);
	}
	close(ready[1]);
	ready[1] = -1;
	if (pid < 0) {
		error_errno("cannot start netd: fork");
		goto out;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (read_in_full(ready[0], ok, 2) != 2 || memcmp(ok, "ok", 2)) {
		error("cannot start netd, the host side of the sandbox's "
		      "network: see '%s'",
		      n->log_path);
		goto out;
	}
	ret = 0;
out:
	if (ready[0] >= 0)
		close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	close(watch);
	strvec_clear(&argv);
	return ret;
}
