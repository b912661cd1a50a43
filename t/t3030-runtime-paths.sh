#!/bin/sh
test_description='gosbx-runtime: no path leaves the workdir

Every escape form, in every endpoint that takes a path: 403
"access denied: path must be within workdir", nothing read, written or
deleted outside. Writes and deletes only ever aim at a directory of the
trash ("outside"), never at /etc, so a broken server cannot damage the
machine.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

DENIED="access denied: path must be within workdir"

test_expect_success 'setup' '
	mkdir -p outside/sub work/dir &&
	printf "outside secret" >outside/secret &&
	printf "nested secret" >outside/sub/secret &&
	printf inside >work/dir/inside.txt &&
	ln -s ../outside work/out-link &&
	ln -s "$TRASH_DIRECTORY/outside" work/abs-link &&
	ln -s .. work/up &&
	ln -s /etc work/etc-link &&
	ln -s ../outside/not-yet work/dangling &&
	mkdir work/dir/deeper &&
	ln -s ../../../outside work/dir/deeper/rel-out &&
	rt_start &&
	rt_tree outside >outside.before &&
	rt_tree work >work.before
'

# the outside directory and the workdir are as they were
unchanged() {
	rt_tree outside >outside.after &&
	test_cmp outside.before outside.after &&
	rt_tree work >work.after &&
	test_cmp work.before work.after
}

# the last answer is the 403 and leaks nothing
denied() {
	test "$(cat status)" = 403 &&
	json_is body detail "$DENIED" &&
	! grep -q secret body
}

# Forms that name the outside directory (or, for etc-link, /etc).
DIR_FORMS='..
../outside
%2e%2e/outside
%2E%2E/outside
.%2e/outside
..%2foutside
%2e%2e%2foutside
%2e%2e%2Foutside
dir/../../outside
dir/%2e%2e/%2e%2e/outside
dir/deeper/rel-out
out-link
abs-link
up/outside
up
etc-link'

for f in $DIR_FORMS
do
	case "$f" in
	etc-link) file=$f/passwd ;;
	..) file=../outside/secret ;;
	up) file=up/outside/secret ;;
	*%2f* | *%2F*) file=$f%2fsecret ;;
	*) file=$f/secret ;;
	esac

	test_expect_success "download $file is refused" "
		rt_req GET '/download/$file' && denied && unchanged
	"
	test_expect_success "list $f is refused" "
		rt_req GET '/list/$f' && denied && unchanged
	"
	test_expect_success "exists $file is refused" "
		rt_req GET '/exists/$file' && denied && unchanged
	"
	test_expect_success "exists $f is refused" "
		rt_req GET '/exists/$f' && denied && unchanged
	"
	case "$f" in
	etc-link) continue ;; # no write ever aims at /etc
	esac
	test_expect_success "PUT $f/new is refused" "
		rt_req PUT '/v1/files/$f/new' --data-binary pwned &&
		denied && unchanged
	"
	test_expect_success "DELETE $file is refused" "
		rt_req DELETE '/v1/files/$file' && denied && unchanged
	"
done

test_expect_success 'DELETE of a directory through a symlink is refused' '
	rt_req DELETE /v1/files/out-link/sub && denied && unchanged
'

test_expect_success 'download //etc/passwd is workdir-relative: 404' '
	rt_expect_error 404 "file not found" GET /download//etc/passwd &&
	rt_expect_error 404 "file not found" GET /download/%2Fetc%2Fpasswd &&
	rt_expect_error 404 "file not found" GET /download/%2F%2Fetc/passwd &&
	! grep -q "root:" body
'

test_expect_success 'list //etc is workdir-relative: 404' '
	rt_expect_error 404 "directory not found" GET /list//etc &&
	rt_expect_error 404 "directory not found" GET /list/%2Fetc
'

test_expect_success 'exists //etc/passwd is workdir-relative: false' '
	rt_expect 200 GET /exists//etc/passwd &&
	json_is body exists false &&
	json_is body path /etc/passwd &&
	rt_expect 200 GET /exists/%2Fetc%2Fpasswd &&
	json_is body exists false &&
	json_is body path /etc/passwd
'

test_expect_success 'PUT to an absolute-looking path writes inside the workdir' '
	rt_expect 200 PUT "/v1/files/$TRASH_DIRECTORY/outside/new" \
		--data-binary fine &&
	json_is body path "$TRASH_DIRECTORY/outside/new" &&
	! test -e outside/new &&
	test -f "work/$TRASH_DIRECTORY/outside/new" &&
	rm -rf "work/$(echo "$TRASH_DIRECTORY" | cut -d/ -f2)" &&
	unchanged
'

test_expect_success 'DELETE of an absolute-looking path stays inside: 404' '
	rt_expect_error 404 "file not found" DELETE \
		"/v1/files/$TRASH_DIRECTORY/outside/secret" &&
	unchanged
'

test_expect_success 'a symlink inside pointing inside is fine' '
	ln -s dir work/in-link &&
	rt_expect 200 GET /download/in-link/inside.txt &&
	printf inside >expect && test_cmp expect body &&
	rt_expect 200 GET /list/in-link &&
	json_is body 0.name deeper &&
	rm work/in-link
'

test_expect_success 'the server is still alive' '
	rt_alive && unchanged
'

# last: a server that gets this wrong replaces the link in the workdir
test_expect_success 'PUT through a dangling symlink that points out is refused' '
	rt_req PUT /v1/files/dangling --data-binary pwned &&
	denied && unchanged &&
	! test -e outside/not-yet
'

test_expect_success 'the servers stop cleanly, no sanitizer report' '
	rt_stop_check
'

test_done
