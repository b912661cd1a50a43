#!/bin/sh
test_description='gosbx open, close and claims on the local backend'
. "$(dirname "$0")/test-lib.sh"

claims_dir="$XDG_STATE_HOME/gosbx/claims"

if command -v bwrap >/dev/null &&
	bwrap --unshare-user --ro-bind / / true 2>/dev/null; then
	test_set_prereq SANDBOX
fi

test_atexit 'gosbx close --all'
test_atexit 'XDG_STATE_HOME="$TRASH_DIRECTORY/other-state" gosbx close --all'

# status NAME: the claim's status as `gosbx claims` shows it
status() {
	gosbx claims | awk -v n="$1" '$1 == n { print $3 }'
}

test_expect_success SANDBOX 'open prints the claim name, claims shows it ready' '
	gosbx open >name 2>hint &&
	test_line_count = 1 name &&
	name=$(cat name) &&
	echo "$name" | grep -x "[a-z0-9][a-z0-9-]*" &&
	grep "gosbx exec --claim=$name -- " hint &&
	gosbx claims >list &&
	head -n 1 list >header &&
	grep "^NAME  *BACKEND  *STATUS  *AGE  *IDLE  *SIZE  *MODE$" header &&
	grep "^$name  *local  *ready  *[0-9]*s  *[0-9]*s  *[0-9.]*[BKM]  *running$" list &&
	test -d "$claims_dir/$name/fs/app"
'

test_expect_success SANDBOX 'the opened sandbox runs commands' '
	gosbx exec --claim=$(cat name) -- "echo hello >greeting; cat greeting" >out &&
	echo hello >expect &&
	test_cmp expect out &&
	test_cmp expect "$claims_dir/$(cat name)/fs/app/greeting"
'

test_expect_success SANDBOX 'open -q prints only the name' '
	gosbx open -q --name=quiet >out 2>err &&
	echo quiet >expect &&
	test_cmp expect out &&
	test_drop_limits_warning err &&
	test_line_count = 0 err &&
	test "$(status quiet)" = ready
'

test_expect_success SANDBOX 'open --name twice: the second fails, the first is intact' '
	gosbx open -q --name=twice >out &&
	gosbx exec --claim=twice -- "echo first >mark" &&
	expect_code_err 125 gosbx open -q --name=twice >out2 &&
	grep "already exists" err &&
	test_line_count = 0 out2 &&
	test "$(status twice)" = ready &&
	gosbx exec --claim=twice -- "cat mark" >out &&
	echo first >expect &&
	test_cmp expect out
'

test_expect_success 'invalid claim names are refused by open' '
	mkdir -p "$XDG_STATE_HOME/gosbx" &&
	long=$(printf "a%.0s" $(seq 64)) &&
	for n in ../x a/b UPPER "$long" -lead "a b" .. ""; do
		expect_code_err 129 gosbx open -q --name="$n" >out &&
		grep "invalid claim name" err &&
		test_line_count = 0 out || return 1
	done &&
	! test -e "$XDG_STATE_HOME/gosbx/x" &&
	! test -e "$claims_dir/a" &&
	! test -e "$claims_dir/UPPER"
'

test_expect_success 'a 63-character name is fine for the name check' '
	n63=$(printf "b%.0s" $(seq 63)) &&
	expect_code_err 125 gosbx close "$n63" &&
	grep "no such claim" err
'

test_expect_success 'invalid claim names are refused by close, nothing outside is touched' '
	mkdir -p "$XDG_STATE_HOME/gosbx/victim/sub" "$claims_dir" &&
	echo precious >"$XDG_STATE_HOME/gosbx/victim/file" &&
	mkdir -p outside/claims-sibling &&
	for n in ../victim ../../gosbx/victim a/b .. UPPER "" \
		"../../../$(basename "$PWD")/outside"; do
		expect_code_err 129 gosbx close "$n" &&
		grep "invalid claim name" err || return 1
	done &&
	test -f "$XDG_STATE_HOME/gosbx/victim/file" &&
	test -d "$XDG_STATE_HOME/gosbx/victim/sub" &&
	test -d outside/claims-sibling &&
	test_expect_code 129 gosbx close --disconnect ../victim &&
	test -f "$XDG_STATE_HOME/gosbx/victim/file"
'

test_expect_success 'bad option values are usage errors' '
	ls "$claims_dir" >before &&
	test_expect_code 129 gosbx open --cpus=lots &&
	test_expect_code 129 gosbx open --cpus=-1 &&
	test_expect_code 129 gosbx open --cpus=1.5x &&
	test_expect_code 129 gosbx open --cpus=nan &&
	test_expect_code 129 gosbx open --pids=-3 &&
	test_expect_code 129 gosbx open --pids=many &&
	test_expect_code 129 gosbx open --memory=lots &&
	test_expect_code 129 gosbx open --memory=-5m &&
	test_expect_code 129 gosbx open --ttl=soon &&
	test_expect_code 129 gosbx open --ttl=0 &&
	ls "$claims_dir" >after &&
	test_cmp before after
'

test_expect_success 'close of a missing claim exits 125' '
	expect_code_err 125 gosbx close no-such-claim &&
	grep "no such claim .no-such-claim." err
'

test_expect_success SANDBOX 'close: a bad name is a usage error, nothing is closed' '
	gosbx open -q --name=gone1 &&
	expect_code_err 129 gosbx close gone1 no-such-claim ../bad &&
	grep "invalid claim name .\.\./bad." err &&
	test "$(status gone1)" = ready
'

test_expect_success SANDBOX 'close: a missing name fails, the others are still closed' '
	expect_code_err 125 gosbx close gone1 no-such-claim &&
	grep "no such claim .no-such-claim." err &&
	test -z "$(status gone1)" &&
	! test -e "$claims_dir/gone1"
'

test_expect_success SANDBOX 'close --disconnect keeps the sandbox' '
	gosbx close --disconnect quiet 2>err &&
	grep "kept" err &&
	test "$(status quiet)" = ready &&
	gosbx exec --claim=quiet -- true &&
	test_expect_code 125 gosbx close --disconnect no-such-claim
'

test_expect_success SANDBOX 'close deletes the sandbox: processes, cgroups, files' '
	name=$(cat name) &&
	pid=$(awk "\$1 == \"pid\" { print \$2 }" "$claims_dir/$name/meta") &&
	test -n "$pid" &&
	awk "\$1 ~ /^(memory|pids|cpu)\$/ { print \$2 }" \
		"$claims_dir/$name/meta" >cgroups &&
	gosbx close "$name" &&
	! test -e "$claims_dir/$name" &&
	test -z "$(status "$name")" &&
	test_retry 200 0.1 test_ended $pid &&
	while read cg; do
		! test -e "$cg" || return 1
	done <cgroups &&
	test_expect_code 125 gosbx exec --claim="$name" -- true
'

test_expect_success SANDBOX 'close --all closes every claim' '
	gosbx open -q --name=all1 &&
	gosbx open -q --name=all2 &&
	gosbx claims >list &&
	test $(wc -l <list) -ge 3 &&
	gosbx close --all &&
	gosbx claims >list &&
	test_line_count = 1 list &&
	test -z "$(ls "$claims_dir")"
'

test_expect_success SANDBOX 'same name in another state directory: independent sandboxes' '
	other="$PWD/other-state" &&
	gosbx open -q --name=twin >/dev/null &&
	XDG_STATE_HOME="$other" gosbx open -q --name=twin >/dev/null &&
	gosbx exec --claim=twin -- "echo here >where" &&
	XDG_STATE_HOME="$other" gosbx exec --claim=twin -- "echo there >where" &&
	XDG_STATE_HOME="$other" gosbx close twin &&
	gosbx exec --claim=twin -- "cat where" >out &&
	echo here >expect &&
	test_cmp expect out &&
	test "$(status twin)" = ready &&
	gosbx close twin
'

test_expect_success 'close --all with no claims succeeds' '
	gosbx close --all
'

test_expect_success 'claims with no claims prints only the header; json is []' '
	gosbx claims >list &&
	test_line_count = 1 list &&
	gosbx claims -o json >list.json &&
	echo "[]" >expect &&
	test_cmp expect list.json
'

# The state directory cannot be made: the real cause, with the path
test_expect_success 'a file in the way of the state directory: ENOTDIR' '
	echo file >afile &&
	expect_code_err 125 env XDG_STATE_HOME="$PWD/afile/x" gosbx open &&
	test_grep "^error: cannot create .$PWD/afile/x/gosbx/claims.: Not a directory\$" err &&
	expect_code_err 125 env -u XDG_STATE_HOME HOME="$PWD/afile" gosbx open &&
	test_grep "^error: cannot create .$PWD/afile/.local/state/gosbx/claims.: Not a directory\$" err
'

# root passes permission bits: EACCES is checked as an ordinary user
if test "$(id -u)" != 0; then
	as_user() { "$@"; }
	test_set_prereq USER
elif id gosbxci >/dev/null 2>&1 && command -v runuser >/dev/null; then
	as_user() { runuser -u gosbxci -- "$@"; }
	test_set_prereq USER
fi

test_expect_success USER 'a state directory this user may not write: EACCES' '
	mkdir -p ro-state &&
	chmod 555 ro-state &&
	chmod a+x "$PWD" &&
	expect_code_err 125 as_user env XDG_STATE_HOME="$PWD/ro-state/x" \
		"$(command -v gosbx)" open &&
	test_grep "^error: cannot create .$PWD/ro-state/x/gosbx/claims.: Permission denied\$" err
'

test_expect_success ROOT 'a read-only state directory: EROFS' '
	mkdir -p rofs &&
	mount --bind rofs rofs &&
	test_atexit "umount \"$PWD/rofs\"" &&
	mount -o remount,bind,ro rofs &&
	expect_code_err 125 env XDG_STATE_HOME="$PWD/rofs/x" gosbx open &&
	test_grep "^error: cannot create .$PWD/rofs/x/gosbx/claims.: Read-only file system\$" err
'

test_done
