/*
 * gosbx netd: the host side of one local sandbox's network (an
 * internal command: lib/local/netd.h). The local backend starts it
 * with the sockets it made in the sandbox's network namespace; it
 * serves the allow-list proxy and the module proxy until the sandbox
 * ends. Not listed in `gosbx -h`.
 */
#include "compat.h"
#include "builtin.h"
#include "local/netd-run.h"
#include "log.h"
#include "parse-options.h"
#include "usage.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static const char *const netd_usage[] = {
	"gosbx netd --listen-fd=<fd> [--dns-fd=<fd>] [--watch-fd=<fd>] "
	"[--ready-fd=<fd>] [--log=<path>] [--allow-net=<hosts>] "
	"[--modules=<on|off>] [--go=<go>]",
	NULL,
};

static int check_fd(int fd, const char *what)
{
	if (fd >= 0 && fcntl(fd, F_GETFD) < 0)
		return error_errno("netd: %s %d", what, fd);
	if (fd >= 0)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	return 0;
}

/*
 * netd reads what hostile code in the sandbox sends; it needs no
 * privilege for that (its sockets are made, its log is open), so it
 * keeps none, and neither does the go command it runs: no new
 * privileges through exec (setuid files, file capabilities), and as
 * root an empty bounding set, no capabilities and securebits that
 * keep uid 0 from regaining them on exec (capabilities(7)). Without
 * CAP_SETPCAP (not root) only the last two steps apply, and there is
 * nothing they take. Returns 0, or -1 with error(): netd does not
 * serve with privileges it was meant to lose.
 */
static int drop_privileges(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3,
						0 };
	struct __user_cap_data_struct none[2] = { { 0 } };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_errno("netd: cannot set no_new_privs");
	/* EPERM: no CAP_SETPCAP, and no_new_privs keeps what is left out */
	for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EPERM)
			return error_errno("netd: cannot drop capability %d",
					   cap);
	/* the bounding set goes first: both need CAP_SETPCAP in effect */
	if (!geteuid() && prctl(PR_SET_SECUREBITS,
				SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
					SECBIT_NO_SETUID_FIXUP |
					SECBIT_NO_SETUID_FIXUP_LOCKED |
					SECBIT_KEEP_CAPS_LOCKED,
				0, 0, 0) < 0)
		return error_errno("netd: cannot set securebits");
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capset, &hdr, none) < 0)
		return error_errno("netd: cannot drop capabilities");
	return 0;
}

int cmd_netd(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct netd_config c = { .listen_fd = -1 };
	const char *log_path = NULL, *allow = NULL, *modules = "on";
	const char *go = NULL;
	int ready_fd = -1, ret = EXIT_OWN_FAILURE;
	struct option opts[] = {
		OPT_INT(0, "listen-fd", &c.listen_fd, "listening TCP socket"),
		OPT_INT(0, "dns-fd", &c.dns_fd, "UDP socket for DNS"),
		OPT_INT(0, "watch-fd", &c.watch_fd, "pidfd of the sandbox"),
		OPT_INT(0, "ready-fd", &ready_fd, "say 'ok' here once ready"),
		OPT_STRING(0, "log", &log_path, "<path>",
			   "append the log here"),
		OPT_STRING(0, "allow-net", &allow, "<hosts>", "allow-list"),
		OPT_STRING(0, "modules", &modules, "<on|off>",
			   "serve Go modules"),
		OPT_STRING(0, "go", &go, "<go>", "the go that fetches modules"),
		OPT_END(),
	};

	(void)ctx;
	netd_config_init(&c);
	argc = parse_options(argc, argv, opts, netd_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc || c.listen_fd < 0)
		return usage_error(netd_usage, opts, "--listen-fd is required");
	if (check_fd(c.listen_fd, "--listen-fd") < 0 ||
	    check_fd(c.dns_fd, "--dns-fd") < 0 ||
	    check_fd(c.watch_fd, "--watch-fd") < 0 ||
	    check_fd(ready_fd, "--ready-fd") < 0)
		goto out;
	if (log_path) {
		int fd = open(log_path,
			      O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
				      O_NOFOLLOW,
			      0600);

		if (fd < 0) {
			error_errno("netd: cannot open '%s'", log_path);
			goto out;
		}
		log_fd = fd;
		/* error() lines too: the log is where they can be read */
		dup2(fd, 2);
	}
	/*
	 * every connection the sandbox makes is a line: the log, outside
	 * the claim's disk quota, must not grow as fast as it can connect
	 */
	log_rate_limit(NETD_LOG_LINES_PER_S, NETD_LOG_BURST);
	if (chdir("/") < 0) {
		error_errno("netd: chdir /");
		goto out;
	}
	if (drop_privileges() < 0)
		goto out;
	if (allow && egress_policy_add(&c.policy, allow) < 0)
		goto out;
	if (ready_fd >= 0) {
		if (write_in_full(ready_fd, "ok", 2) != 2) {
			error_errno("netd: cannot say it is ready");
			goto out;
		}
		close(ready_fd);
		ready_fd = -1;
	}
	/* loaded in the background: the proxy need not wait for it */
	c.modules = !strcmp(modules, "on");
	c.go = go;
	ret = netd_run(&c) < 0 ? EXIT_OWN_FAILURE : 0;
	/*
	 * The sandbox is gone: end now, with every thread. Connection
	 * threads may still wait in a relay or for the module settings,
	 * and a normal exit (freeing what they use, atexit handlers, a
	 * leak checker stopping the world) could wait for them: under
	 * the sanitizers netd stayed behind its sandbox that way.
	 */
	_exit(ret);
out:
	if (ready_fd >= 0)
		close(ready_fd);
	netd_config_release(&c);
	return ret;
}
