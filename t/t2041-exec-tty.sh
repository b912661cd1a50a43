#!/bin/sh
test_description='gosbx exec -it: a terminal in the sandbox, driven with tmux'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

command -v tmux >/dev/null || test_skip_all 'tmux is needed'
test_have_prereq LOCAL && test_atexit 'gosbx close --all'

# one tmux server for this script, on a socket in the trash directory
TMUX_SOCK=$TRASH_DIRECTORY/tmux.sock
tm() {
	tmux -S "$TMUX_SOCK" "$@"
}
test_atexit 'tmux -S "$TMUX_SOCK" kill-server 2>/dev/null; true'

# screen_has <text>: the pane shows text (waits up to 60 s)
screen_has() {
	test_retry 600 0.1 sh -c \
		"tmux -S '$TMUX_SOCK' capture-pane -p -t t | grep -qF -- '$1'" || {
		echo >&4 "the screen lacks '$1':"
		tm capture-pane -p -t t >&4
		return 1
	}
}

# gosbx_gone: no gosbx runs in the pane's shell any more (waits up to 60 s)
gosbx_gone() {
	test_retry 600 0.1 sh -c \
		"! pgrep -P \"\$(tmux -S '$TMUX_SOCK' list-panes -t t -F '#{pane_pid}')\" -x gosbx >/dev/null" || {
		echo >&4 "gosbx still runs in the pane:"
		ps -o pid,ppid,stat,wchan:20,args \
			--ppid "$(tm list-panes -t t -F "#{pane_pid}")" >&4
		tm capture-pane -p -t t >&4
		return 1
	}
}

# A local shell in tmux (80x24) whose terminal settings we can compare.
# tmux runs the command with its default shell's -c, which is the user's
# login shell: dash there forks rather than execs, so the exec makes the
# pane's process the shell itself, whichever shell that is (gosbx_gone
# and the SIGTERM test look for gosbx among its children).
test_expect_success 'setup: a claim and a tmux session' '
	{ test_have_prereq URL || gosbx open -q --name=t2041 >/dev/null; } &&
	tm -f /dev/null new-session -d -s t -x 80 -y 24 \
		"exec env PS1=\"local\$ \" sh" &&
	screen_has "local$" &&
	echo sh >expect.comm &&
	ps -o comm= -p "$(tm list-panes -t t -F "#{pane_pid}")" >actual.comm &&
	test_cmp expect.comm actual.comm
'

test_expect_success 'stty in the sandbox sees a terminal of the local size' '
	tm send-keys -t t "stty -g >before.stty" Enter &&
	tm send-keys -t t "gosbx exec -it --claim=t2041 -- sh" Enter &&
	tm send-keys -t t "a=on-a; b=tty; tty >/dev/null && echo \$a-\$b; stty size" Enter &&
	screen_has "on-a-tty" &&
	screen_has "24 80"
'

test_expect_success 'a resize reaches the program (SIGWINCH)' '
	tm resize-window -t t -x 100 -y 30 &&
	sleep 1 &&
	tm send-keys -t t "stty size" Enter &&
	screen_has "30 100"
'

test_expect_success 'Ctrl-C goes to the program in the sandbox, not gosbx' '
	tm send-keys -t t "a=caught; b=int; c=waited" Enter &&
	tm send-keys -t t "(trap \"echo \$a-\$b\" INT; sleep 1000.$$1 & wait; echo \$c-\$b)" Enter &&
	test_retry 600 0.1 pgrep -f "^sleep 1000.$$1" >/dev/null &&
	tm send-keys -t t C-c &&
	screen_has "caught-int" &&
	screen_has "waited-int" &&
	pkill -f "^sleep 1000.$$1";
	tm send-keys -t t "echo \$c-\$a" Enter &&
	screen_has "waited-caught"
'

test_expect_success 'a full-screen program: the alternate screen and back' '
	tm send-keys -t t "a=FULL; printf \"\\033[?1049h\\033[2J\\033[H%s-SCREEN\" \$a; read x; printf \"\\033[?1049l\"" Enter &&
	screen_has "FULL-SCREEN" &&
	tm send-keys -t t Enter &&
	test_retry 600 0.1 sh -c \
		"! tmux -S \"$TMUX_SOCK\" capture-pane -p -t t | grep -q FULL-SCREEN"
'

test_expect_success 'the exit status comes back; the local terminal is restored' '
	tm send-keys -t t "exit 7" Enter &&
	gosbx_gone &&
	tm send-keys -t t "echo status=\$?; stty -g >after.stty" Enter &&
	screen_has "status=7" &&
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
	gosbx_gone &&
	rm -f after.stty &&
	tm send-keys -t t "echo term=\$?; stty -g >after.stty" Enter &&
	screen_has "term=143" &&
	test_retry 100 0.1 test -s after.stty &&
	test_cmp before.stty after.stty
'

test_done
