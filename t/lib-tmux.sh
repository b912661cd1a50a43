# Driving gosbx on a terminal with tmux (t2041, t2047). Source after
# test-lib.sh; without tmux the script is skipped, saying so.
#
#	tm <tmux args>            tmux on this script's own server (a socket
#	                          in the trash directory, killed at exit)
#	screen_has <pane> <text>  the pane shows text (waits up to 60 s)
#	gosbx_gone <pane>         no gosbx runs in the pane's shell any more
#	                          (waits up to 60 s)
#	size_shown <pane> <text>  "stty size" in the pane, again until it
#	                          shows text (a resize travels on its own)
# On a timeout each says what the pane showed, on fd 4.

command -v tmux >/dev/null || test_skip_all 'tmux is needed'

TMUX_SOCK=$TRASH_DIRECTORY/tmux.sock
tm() {
	tmux -S "$TMUX_SOCK" "$@"
}
test_atexit 'tmux -S "$TMUX_SOCK" kill-server 2>/dev/null; true'

screen_has() {
	test_retry 600 0.1 sh -c \
		"tmux -S '$TMUX_SOCK' capture-pane -p -t $1 | grep -qF -- '$2'" || {
		echo >&4 "the screen lacks '$2':"
		tm capture-pane -p -t "$1" >&4
		return 1
	}
}

gosbx_gone() {
	_tm_pane=$(tm list-panes -t "$1" -F "#{pane_pid}") &&
	test_retry 600 0.1 sh -c "! pgrep -P $_tm_pane -x gosbx >/dev/null" || {
		echo >&4 "gosbx still runs in the pane:"
		ps -o pid,ppid,stat,wchan:20,args --ppid "$_tm_pane" >&4
		tm capture-pane -p -t "$1" >&4
		return 1
	}
}

# size_shown <pane> <text>: "stty size" in the pane, again until it
# shows text (a resize travels on its own)
size_shown() {
	_i=0
	while test $_i -lt 100; do
		tm send-keys -t "$1" "stty size" Enter &&
		test_retry 10 0.1 sh -c \
			"tmux -S '$TMUX_SOCK' capture-pane -p -t $1 | grep -qF -- '$2'" &&
		return 0
		_i=$((_i + 1))
	done
	echo >&4 "the screen never showed '$2':"
	tm capture-pane -p -t "$1" >&4
	return 1
}
