#!/bin/sh
test_description='attack: the host Go root binds nothing else into sandboxes

The local backend binds the GOROOT of the go on PATH into every sandbox.
When that go is a wrapper (~/bin/go), the directory above the wrapper
(the home, with its ssh keys and every claim'"'"'s socket) must not be
what is bound: only a GOROOT that `go env GOROOT` names, that holds a
bin/go, and that neither holds the home, state or cache directories nor
lies inside what sandboxes write.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test_have_prereq GO || test_skip_all 'go is not installed'
realgo=$(command -v go)
goroot=$(go env GOROOT)

mkdir -p "$HOME/bin" "$HOME/.ssh" &&
echo "-----BEGIN OPENSSH PRIVATE KEY----- t7015" >"$HOME/.ssh/id_ed25519" &&
printf '#!/bin/sh\nexec %s "$@"\n' "$realgo" >"$HOME/bin/go" &&
chmod +x "$HOME/bin/go" || exit 1

# with_err cmd...: stderr in the file "err"

test_expect_success 'a wrapper go: its GOROOT is bound, not the home' '
	PATH=$HOME/bin:$PATH with_err isolate-run -- sh -c "
		go version
		ls \"$HOME/.ssh\" && echo HOME VISIBLE
		cat \"$HOME/.ssh/id_ed25519\" && echo KEY READ
		true" >out &&
	! grep VISIBLE out &&
	! grep "KEY READ" out &&
	! grep t7015 out &&
	go version >expect &&
	head -n 1 out >actual &&
	test_cmp expect actual &&
	! grep "no Go" err
'

test_expect_success 'a wrapper go: the state directory and the claims stay out' '
	name=$(PATH=$HOME/bin:$PATH gosbx open -q) &&
	test_atexit "gosbx close $name" &&
	gosbx exec --claim="$name" -- \
		"ls $XDG_STATE_HOME/gosbx/claims 2>&1; ls $HOME 2>&1; go version" \
		>out &&
	! grep "$name" out &&
	! grep "^bin\$" out &&
	grep "^go version" out &&
	gosbx close "$name"
'

# fake_go <dir> <goroot>: a go in <dir>/go whose `env GOROOT` says
# <goroot>, which gets a bin/go of its own (the real one, run)
fake_go() {
	mkdir -p "$1" "$2/bin" &&
	printf '#!/bin/sh\nexec %s "$@"\n' "$realgo" >"$2/bin/go" &&
	chmod +x "$2/bin/go" &&
	cat >"$1/go" <<-EOF &&
	#!/bin/sh
	GOROOT="$2" exec "$realgo" "\$@"
	EOF
	chmod +x "$1/go"
}

# goroot_says <file> <goroot>: a go at <file> whose GOROOT is <goroot>
goroot_says() {
	printf '#!/bin/sh\nGOROOT=%s exec %s "$@"\n' "$2" "$realgo" >"$1"
}

test_expect_success 'a GOROOT that holds the home is not bound' '
	fake_go "$TRASH_DIRECTORY/fake1" "$TRASH_DIRECTORY" &&
	PATH=$TRASH_DIRECTORY/fake1:$PATH with_err isolate-run -- \
		sh -c "ls \"$HOME/.ssh\" && echo HOME VISIBLE; true" >out &&
	! grep VISIBLE out &&
	grep "^warning: sandboxes get no Go from this host: GOROOT .* holds .*home" err
'

test_expect_success 'a GOROOT inside what sandboxes write is not bound' '
	fake_go "$TRASH_DIRECTORY/fake2" "$XDG_STATE_HOME/gosbx/claims/x/app/go" &&
	PATH=$TRASH_DIRECTORY/fake2:$PATH with_err isolate-run -- \
		sh -c "ls \"$XDG_STATE_HOME/gosbx/claims/x/app/go\" && echo BOUND; true" >out &&
	! grep BOUND out &&
	grep "^warning: sandboxes get no Go from this host: GOROOT .* is inside .*, which sandboxes write" err
'

test_expect_success 'a go whose GOROOT has no bin/go is not trusted' '
	mkdir -p fake3 nogo &&
	goroot_says fake3/go "$PWD/nogo" &&
	chmod +x fake3/go &&
	PATH=$PWD/fake3:$PATH with_err isolate-run -- true &&
	grep "^warning: sandboxes get no Go from this host: GOROOT .*/nogo. has no executable bin/go" err &&
	goroot_says fake3/go / &&
	PATH=$PWD/fake3:$PATH with_err isolate-run -- true &&
	grep "^warning: sandboxes get no Go from this host: GOROOT ./. holds" err
'

test_expect_success 'doctor says when sandboxes do not get the Go on PATH' '
	PATH=$TRASH_DIRECTORY/fake1:$PATH isolate-run --doctor >out || true &&
	grep "^fail go: .*but sandboxes do not get it: GOROOT .* holds" out &&
	grep "fix: put a Go whose GOROOT" out &&
	PATH=$HOME/bin:$PATH isolate-run --doctor >out || true &&
	grep "^ok go: go version .*, GOROOT $goroot)" out
'

test_done
