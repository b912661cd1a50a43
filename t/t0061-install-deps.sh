#!/bin/sh
test_description='contrib/install-deps.sh for a user who may not use sudo

Run as a user who is not root (gosbxci, else nobody, when the tests run
as root) with no sudo on PATH, or a sudo that the user may not use:
with every package installed (as on a machine that ran the script as
root) it says so and succeeds; with one missing it prints the apt-get
command to run as root, naming the missing package, and fails.'
. "$(dirname "$0")"/test-lib.sh

dpkg_query=$(command -v dpkg-query) ||
	test_skip_all 'no dpkg-query: not a Debian system'

# the script and a PATH of its own, in a directory any user can read
# (the trash directory may lie under a home that others cannot enter)
dir=$(mktemp -d /tmp/gosbx-t0061.XXXXXX) || exit 1
test_atexit "rm -rf '$dir'"
mkdir "$dir/bin" "$dir/bin-sudo" "$dir/bin-missing"
cp "$GOSBX_SOURCE_DIR/contrib/install-deps.sh" "$dir/"
for c in sh awk grep mktemp rm id cat dpkg-query
do
	p=$(command -v $c) || exit 1
	for b in bin bin-sudo bin-missing
	do
		ln -s "$p" "$dir/$b/$c"
	done
done
# node and npm: the script asks for Debian's only where they are not
for c in node npm
do
	p=$(command -v $c) || continue
	for b in bin bin-sudo bin-missing
	do
		ln -s "$p" "$dir/$b/$c"
	done
done
# bin-sudo: the same with sudo
if p=$(command -v sudo); then
	ln -s "$p" "$dir/bin-sudo/sudo"
	test_set_prereq SUDO
fi
# bin-missing: a dpkg that has everything but bubblewrap
rm "$dir/bin-missing/dpkg-query"
cat >"$dir/bin-missing/dpkg-query" <<EOF
#!/bin/sh
"$dpkg_query" "\$@" | grep -v ' bubblewrap\$'
EOF
chmod -R a+rX "$dir"
chmod 755 "$dir/bin-missing/dpkg-query"

# as_user <path> <command...>: run it with PATH=<path> as a user who is
# not root, stdin not a terminal (so sudo cannot ask for a password)
if test "$(id -u)" = 0; then
	user=gosbxci
	id "$user" >/dev/null 2>&1 || user=nobody
	as_user() {
		_p=$1
		shift
		runuser -u "$user" -- env -i PATH="$_p" HOME=/ "$@" </dev/null
	}
else
	as_user() {
		_p=$1
		shift
		env -i PATH="$_p" HOME=/ "$@" </dev/null
	}
fi

test_expect_success 'the packages are installed on this machine' '
	sh "$dir/install-deps.sh" >out &&
	test_grep "every package is installed" out
'

test_expect_success 'without sudo, everything installed: it succeeds' '
	as_user "$dir/bin" sh "$dir/install-deps.sh" >out 2>err &&
	test_grep "every package is installed" out &&
	test_grep ! "apt-get" err
'

test_expect_success 'without sudo, a package missing: the command to run' '
	test_expect_code_err 1 as_user "$dir/bin-missing" \
		sh "$dir/install-deps.sh" &&
	test_grep "not root, and sudo is not there or may not be used" err &&
	test_grep "^apt-get update && apt-get install -y --no-install-recommends bubblewrap\$" err
'

test_expect_success ROOT,SUDO 'a sudo the user may not use: the command to run' '
	test_expect_code_err 1 as_user "$dir/bin-missing:$dir/bin-sudo" \
		sh "$dir/install-deps.sh" &&
	test_grep "not root, and sudo is not there or may not be used" err &&
	test_grep "apt-get install -y --no-install-recommends bubblewrap\$" err
'

test_done
