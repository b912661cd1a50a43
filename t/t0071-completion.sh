#!/bin/sh
test_description='bash and zsh completion (contrib/completion/)

The completions ask gosbx: commands from the hidden gosbx --list-cmds,
options from gosbx <cmd> --list-opts, claim names from gosbx claims.
Bash is driven for real through its completion function; zsh loads the
function with compinit and runs it with compadd recorded.'
. "$(dirname "$0")"/test-lib.sh

BASH_COMP=$GOSBX_SOURCE_DIR/contrib/completion/gosbx.bash
ZSH_DIR=$GOSBX_SOURCE_DIR/contrib/completion

# complete <word>...: the replies of bash completion for the words, the
# last being the one completed (as bash splits them: "--claim" "=" "x")
complete() {
	bash -c '. "$1" && shift &&
		COMP_WORDS=("$@") && COMP_CWORD=$(($# - 1)) &&
		COMP_LINE="$*" && COMP_POINT=${#COMP_LINE} &&
		_gosbx && for w in "${COMPREPLY[@]}"; do echo "$w"; done' \
		complete "$BASH_COMP" "$@" >actual
}

test_expect_success 'the hidden lists: commands and options' '
	gosbx --list-cmds >cmds &&
	grep -x exec cmds &&
	grep -x version cmds &&
	grep -x help cmds &&
	! grep -x netd cmds &&
	gosbx exec --list-opts >opts &&
	grep -x -e "--claim=" opts &&
	grep -x -e "--tty" opts &&
	gosbx --list-opts >global &&
	grep -x -e "--backend=" global
'

test_expect_success 'bash: a command' '
	complete gosbx ex &&
	echo exec >expect &&
	test_cmp expect actual &&
	complete gosbx n &&
	test ! -s actual
'

test_expect_success 'bash: an option of exec' '
	complete gosbx exec --cl &&
	echo "--claim=" >expect &&
	test_cmp expect actual &&
	complete gosbx --backend = url exec --ti &&
	echo "--timeout=" >expect &&
	test_cmp expect actual
'

if command -v bwrap >/dev/null &&
	bwrap --unshare-user --ro-bind / / true 2>/dev/null; then
	test_set_prereq SANDBOX
fi

test_expect_success SANDBOX 'bash: the name of an opened sandbox' '
	gosbx open -q --name=t0071-one >name &&
	complete gosbx exec --claim = t0071 &&
	echo t0071-one >expect &&
	test_cmp expect actual &&
	complete gosbx exec --claim = "" &&
	test_cmp expect actual &&
	complete gosbx close t0071- &&
	test_cmp expect actual &&
	complete gosbx cp t0071 &&
	echo t0071-one: >expect &&
	test_cmp expect actual
'

# zsh_complete <word>...: what the zsh function _gosbx adds for the
# words (the last being completed), compadd recorded instead of shown
zsh_complete() {
	zsh -f -c '
		fpath=("$1" $fpath)
		autoload -U compinit && compinit -u -D || exit 1
		shift
		words=("$@")
		CURRENT=$#
		PREFIX=${words[CURRENT]}
		compadd() {
			local -a pre
			local a=0 s
			while (($#)); do
				case $1 in
				-a) a=1 ;;
				-S|-P) shift ;;
				-*) ;;
				*) break ;;
				esac
				shift
			done
			if ((a)); then
				for s in ${(P)1}; do
					[[ $s == ${PREFIX}* ]] && print -r -- $s
				done
			fi
			return 0
		}
		compset() { PREFIX=${PREFIX#$2}; }
		_files() { :; }
		autoload -U +X _gosbx && _gosbx
	' zsh_complete "$ZSH_DIR" "$@" >actual
}

test_expect_success 'zsh: the function loads with compinit' '
	zsh -f -c "fpath=(\"$ZSH_DIR\" \$fpath);
		autoload -U compinit && compinit -u -D &&
		autoload -U +X _gosbx && whence -w _gosbx" >out 2>err &&
	grep "_gosbx: function" out &&
	test ! -s err
'

test_expect_success 'zsh: a command, an option' '
	zsh_complete gosbx ex &&
	echo exec >expect &&
	test_cmp expect actual &&
	zsh_complete gosbx exec --cl &&
	echo "--claim=" >expect &&
	test_cmp expect actual
'

test_expect_success SANDBOX 'zsh: the name of an opened sandbox' '
	zsh_complete gosbx exec --claim=t0071 &&
	echo t0071-one >expect &&
	test_cmp expect actual &&
	zsh_complete gosbx close t0 &&
	test_cmp expect actual
'

test_expect_success SANDBOX 'close the sandbox: no name left to complete' '
	gosbx close t0071-one &&
	complete gosbx close t0071 &&
	test ! -s actual
'

test_done
