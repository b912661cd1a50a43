#!/bin/sh
test_description='gosbx exec -it: a terminal in the sandbox, driven with tmux'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

. "$TEST_DIRECTORY"/lib-tmux.sh
test_have_prereq LOCAL && test_atexit 'gosbx close --all'

# A local shell in tmux (80x24) whose terminal settings we can compare.
# tmux runs the command with its default shell's -c, which is the user's
# login shell: dash there forks rather than execs, so the exec makes the
# pane's process the shell itself, whichever shell that is (gosbx_gone
# and the SIGTERM test look for gosbx among its children).
test_expect_success 'setup: a claim and a tmux session' '
	{ test_have_prereq URL || gosbx open -q --name=t2041 >/dev/null; } &&
	tm -f /dev/null new-session -d -s t -x 80 -y 24 \
		"exec env PS1=\"local\$ \" sh" &&
	screen_has t "local$" &&
	echo sh >expect.comm &&
	ps -o comm= -p "$(tm list-panes -t t -F "#{pane_pid}")" >actual.comm &&
	test_cmp expect.comm actual.comm
'

test_expect_success 'stty in the sandbox sees a terminal of the local size' '
	tm send-keys -t t "stty -g >before.stty" Enter &&
	tm send-keys -t t "gosbx exec -it --claim=t2041 -- sh" Enter &&
	tm send-keys -t t "a=on-a; b=tty; tty >/dev/null && echo \$a-\$b; stty size" Enter &&
	screen_has t "on-a-tty" &&
	screen_has t "24 80"
'

test_expect_success 'a resize reaches the program (SIGWINCH)' '
	tm resize-window -t t -x 100 -y 30 &&
	size_shown t "30 100"
'

test_expect_success 'Ctrl-C goes to the program in the sandbox, not gosbx' '
	tm send-keys -t t "a=caught; b=int; c=waited" Enter &&
	tm send-keys -t t "(trap \"echo \$a-\$b\" INT; sleep 1000.$$1 & wait; echo \$c-\$b)" Enter &&
	test_retry 600 0.1 pgrep -f "^sleep 1000.$$1" >/dev/null &&
	tm send-keys -t t C-c &&
	screen_has t "caught-int" &&
	screen_has t "waited-int" &&
	pkill -f "^sleep 1000.$$1";
	tm send-keys -t t "echo \$c-\$a" Enter &&
	screen_has t "waited-caught"
'

test_expect_success 'a full-screen program: the alternate screen and back' '
	tm send-keys -t t "a=FULL; printf \"\\033[?1049h\\033[2J\\033[H%s-SCREEN\" \$a; read x; printf \"\\033[?1049l\"" Enter &&
	screen_has t "FULL-SCREEN" &&
	tm send-keys -t t Enter &&
	test_retry 600 0.1 sh -c \
		"! tmux -S \"$TMUX_SOCK\" capture-pane -p -t t | grep -q FULL-SCREEN"
'

test_expect_success 'the exit status comes back; the local terminal is restored' '
	tm send-keys -t t "exit 7" Enter &&
	gosbx_gone t &&
	tm send-keys -t t "echo status=\$?; stty -g >after.stty" Enter &&
	screen_has t "status=7" &&
	test_retry 100 0.1 test -s after.stty &&
	test_cmp before.stty after.stty
'

test_expect_success 'SIGTERM to gosbx restores the terminal too' '
	tm send-keys -t t "gosbx exec -it --claim=t2041 -- sleep 1000.$$2" Enter &&
	{
		test_retry 600 0.1 pgrep -f "^sleep 1000.$$2" >/dev/null || {
			echo >&4 "the sandbox runs no sleep 1000.$$2:"
			tm capture-pane -p -t t >&4
			false
		}
	} &&
	pkill -TERM -P "$(tm list-panes -t t -F "#{pane_pid}")" -x gosbx &&
	gosbx_gone t &&
	rm -f after.stty &&
	tm send-keys -t t "echo term=\$?; stty -g >after.stty" Enter &&
	screen_has t "term=143" &&
	test_retry 100 0.1 test -s after.stty &&
	test_cmp before.stty after.stty
'

test_done
