# bash completion for gosbx: source it from ~/.bashrc, or install it as
# $(datadir)/bash-completion/completions/gosbx (make install).
#
# Nothing here is a list that could drift: the commands come from
# `gosbx --list-cmds`, a command's options from `gosbx <cmd> --list-opts`
# (both hidden; lib/parse-options.h) and claim names from `gosbx claims`
# (its first column), asked of the gosbx on PATH with the global options
# already typed (e.g. --backend=kube). None of them opens a sandbox.

# words[] and cword: COMP_WORDS with the words bash split at '=' and ':'
# (COMP_WORDBREAKS) joined again, so that --claim=x and x:/app are one
__gosbx_words() {
	local i w n=-1 glue=0

	words=()
	cword=0
	for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
		w=${COMP_WORDS[i]}
		if ((n >= 0)) && { ((glue)) || [[ $w == [=:]* ]]; }; then
			words[n]+=$w
			glue=0
			[[ $w == [=:] ]] && glue=1
		else
			words[++n]=$w
			glue=0
		fi
		((i == COMP_CWORD)) && cword=$n
	done
}

# the claim names of the backend of the global options in ${globals[@]}
__gosbx_claims() {
	gosbx "${globals[@]}" claims 2>/dev/null |
		awk 'NR > 1 && $1 != "" { print $1 }'
}

# COMPREPLY from the words $1 that start with $cur; no space after a
# reply that ends in '=' or ':'
__gosbx_reply() {
	local w

	COMPREPLY=()
	for w in $1; do
		[[ $w == "$cur"* ]] && COMPREPLY+=("$w")
	done
	for w in "${COMPREPLY[@]}"; do
		if [[ $w == *[=:] ]]; then
			compopt -o nospace 2>/dev/null
			break
		fi
	done
}

_gosbx() {
	local words cword cur cmd='' cmdi=0 i w strip
	local -a globals=()

	__gosbx_words
	cur=${words[cword]}
	# the command: the first word after the global options
	for ((i = 1; i < cword; i++)); do
		w=${words[i]}
		case $w in
		--*=*|-v|--verbose) globals+=("$w") ;;
		-*) ;;
		*)
			cmd=$w
			cmdi=$i
			break
			;;
		esac
	done

	case $cmd,$cur in
	,-*)
		__gosbx_reply "$(gosbx --list-opts 2>/dev/null)" ;;
	,*)
		__gosbx_reply "$(gosbx --list-cmds 2>/dev/null)" ;;
	help,*)
		((cword == cmdi + 1)) &&
			__gosbx_reply "$(gosbx --list-cmds 2>/dev/null)" ;;
	*,--claim=*)
		local c claims=
		for c in $(__gosbx_claims); do
			claims+=" --claim=$c"
		done
		__gosbx_reply "$claims" ;;
	*,-*)
		__gosbx_reply "$(gosbx "$cmd" --list-opts 2>/dev/null)" ;;
	close,*|logs,*|resume,*|suspend,*)
		__gosbx_reply "$(__gosbx_claims)" ;;
	cp,*/*|cp,.*)
		;;
	cp,*)
		local c claims=
		for c in $(__gosbx_claims); do
			claims+=" $c:"
		done
		__gosbx_reply "$claims"
		# and local files (complete -o default) when no claim fits
		;;
	esac

	# bash replaces only the text after the last '=' or ':' of
	# COMP_WORDBREAKS: drop what comes before it from the replies
	strip=${cur%"${cur##*[=:]}"}
	if [[ $strip && $COMP_WORDBREAKS == *"${strip: -1}"* ]]; then
		COMPREPLY=("${COMPREPLY[@]#"$strip"}")
	fi
	return 0
}

complete -o bashdefault -o default -F _gosbx gosbx
