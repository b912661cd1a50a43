#include "compat.h"
#include "terminal.h"
#include "usage.h"

#include <sys/ioctl.h>
#include <termios.h>

static struct termios saved_tty;
static volatile sig_atomic_t tty_is_raw;
static volatile sig_atomic_t *winch_flag;

void terminal_restore(void)
{
	if (tty_is_raw) {
		tcsetattr(0, TCSADRAIN, &saved_tty);
		tty_is_raw = 0;
	}
}

int terminal_make_raw(void)
{
	static int registered;
	struct termios t;

	if (tcgetattr(0, &saved_tty) < 0)
		return error_errno("cannot read the terminal's settings");
	t = saved_tty;
	cfmakeraw(&t);
	if (tcsetattr(0, TCSADRAIN, &t) < 0)
		return error_errno("cannot put the terminal in raw mode");
	tty_is_raw = 1;
	if (!registered++)
		atexit(terminal_restore);
	return 0;
}

int terminal_size(unsigned *cols, unsigned *rows)
{
	struct winsize ws;

	if (ioctl(0, TIOCGWINSZ, &ws) < 0 && ioctl(1, TIOCGWINSZ, &ws) < 0)
		return -1;
	if (!ws.ws_col || !ws.ws_row)
		return -1;
	*cols = ws.ws_col;
	*rows = ws.ws_row;
	return 0;
}

static void on_winch(int sig)
{
	(void)sig;
	if (winch_flag)
		*winch_flag = 1;
}

void terminal_watch_resize(volatile sig_atomic_t *flag)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	winch_flag = flag;
	sa.sa_handler = on_winch;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, NULL);
}
