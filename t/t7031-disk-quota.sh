#!/bin/sh
test_description='local: --disk is a quota on /app, /tmp and HOME of a claim

Issue 9 finding 10: --disk used to be a per-file limit, /tmp a tmpfs
that counted as memory (filling it OOM-killed the runtime and left the
claim dead) and the Go caches outlived the sandbox on the host. As
root a claim now has one ext4 image of --disk bytes for /app, /tmp and
HOME; elsewhere /tmp is a tmpfs of bounded size and an explicit --disk
fails closed.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

claims="$XDG_STATE_HOME/gosbx/claims"
test_atexit 'gosbx close --all'

# A quota needs root (a normal user cannot mount a block file system
# image), loop devices and mkfs.ext4; QUOTA tests are skipped for a
# normal user for that reason, and NOQUOTA ones run instead.
if test_have_prereq ROOT && test -w /dev/loop-control &&
	PATH="$PATH:/usr/sbin:/sbin" command -v mkfs.ext4 >/dev/null
then
	test_set_prereq QUOTA
else
	test_set_prereq NOQUOTA
fi
# an explicit memory limit works here (as root; cgroup v1 is root-only)
isolate-run --memory=64m -- true 2>/dev/null && test_set_prereq MEMCG

# mounts under the claims directory, from the host's view
mounts_under() {
	awk -v p="$claims/" 'index($5, p) == 1 { print $5, $6 }' \
		/proc/self/mountinfo
}

# run a command with its stderr in the file "err"

# kb <file>: the size of a host file in KiB (1024-byte blocks used)
kb() {
	du -k "$1" | cut -f1
}

test_expect_success 'gosbx doctor says whether the quota is enforced' '
	gosbx doctor >out 2>&1 || true &&
	if test_have_prereq QUOTA
	then
		grep "^ok    disk quota: enforced per claim: /app, /tmp and HOME" out
	else
		grep "^warn  disk quota: not enforced: " out &&
		grep "explicit --disk fails" out
	fi &&
	grep "^ok    go caches: per claim" out
'

test_expect_success QUOTA 'setup: a claim with a 64 MiB quota' '
	gosbx open -q --name=q --disk=64m >/dev/null &&
	mounts_under >mounts &&
	grep "^$claims/q/fs rw,nosuid,nodev" mounts
'

test_expect_success QUOTA '/app, /tmp and HOME are on the quota file system' '
	gosbx exec --claim=q "stat -f -c \"%b %S\" /app; stat -c %d /app /tmp \$HOME \$HOME/.." >out &&
	read blocks bsize <out &&
	total=$((blocks * bsize)) &&
	test $total -gt $((48 << 20)) &&
	test $total -le $((64 << 20)) &&
	sed -n 2,4p out | sort -u >devs &&
	test_line_count = 1 devs &&
	sed -n 5p out >home-parent &&
	! test_cmp devs home-parent
'

test_expect_success QUOTA 'several files cannot pass the quota together' '
	test_must_fail with_err gosbx exec --claim=q "
		for i in 1 2 3 4; do
			dd if=/dev/zero of=/app/f\$i bs=1M count=30 ||
			{ echo failed at \$i; exit 1; }
		done" >out &&
	grep "^failed at [23]" out &&
	grep "No space left on device" err &&
	total=0 &&
	for f in "$claims"/q/fs/app/f*; do
		total=$((total + $(kb "$f")))
	done &&
	test $total -le $((64 << 10))
'

test_expect_success QUOTA 'the claim keeps working once the offender is gone' '
	gosbx exec --claim=q "rm -f /app/f*; echo fine >/app/ok; cat /app/ok" >out &&
	echo fine >expect &&
	test_cmp expect out
'

test_expect_success QUOTA '/tmp and HOME count in the same quota' '
	test_must_fail with_err gosbx exec --claim=q \
		"dd if=/dev/zero of=/tmp/t bs=1M count=40 2>/dev/null &&
		dd if=/dev/zero of=\$HOME/h bs=1M count=40" &&
	grep "No space left on device" err &&
	gosbx exec --claim=q "rm -f /tmp/t \$HOME/h; echo alive" >out &&
	echo alive >expect &&
	test_cmp expect out
'

test_expect_success QUOTA,MEMCG 'a full /tmp is ENOSPC, not an OOM kill of the claim' '
	gosbx open -q --name=small --memory=128m --disk=256m >/dev/null &&
	test_must_fail with_err gosbx exec --claim=small \
		"dd if=/dev/zero of=/tmp/fill bs=1M count=400" &&
	grep "No space left on device" err &&
	gosbx exec --claim=small "rm /tmp/fill; echo alive" >out &&
	echo alive >expect &&
	test_cmp expect out &&
	gosbx claims >list &&
	grep "^small .*ready" list
'

test_expect_success QUOTA 'closing a claim unmounts and removes its image' '
	gosbx close q &&
	gosbx close small &&
	mounts_under >mounts &&
	! test -s mounts &&
	! test -e "$claims/q"
'

test_expect_success QUOTA 'a quota below the minimum is refused, nothing left' '
	test_expect_code_err 129 gosbx open --name=tiny --disk=1m &&
	grep "option .--disk.: 1048576 bytes is too small for a sandbox; the minimum is 16 MiB" err &&
	! test -e "$claims/tiny"
'

# Issue 17: images were sparse, so a host whose disk filled lost what a
# sandbox had written (the loop device's writes failed after the
# sandbox's write() had succeeded) and corrupted the image. Here the
# host file system of the claims is a tmpfs of 96 MiB of the test's.
small="$TRASH_DIRECTORY/small"
on_small() {
	env XDG_STATE_HOME="$small/state" "$@"
}

test_expect_success QUOTA 'setup: claims on a host file system of 96 MiB' '
	mkdir "$small" &&
	mount -t tmpfs -o size=96m gosbx-t7031 "$small" &&
	test_atexit "env XDG_STATE_HOME=\"$small/state\" gosbx close --all; umount \"$small\""
'

test_expect_success QUOTA 'a disk the host cannot hold is refused at open, with what is free' '
	test_must_fail with_err on_small gosbx open --name=big --disk=200m &&
	grep "^error: cannot create sandbox: disk quota: the claim'"'"'s disk of 200 MiB is reserved on the host, and the file system of '"'"'$small/state/gosbx/claims/big'"'"' has 9[0-6] MiB free; pass a smaller --disk=<size>, or free space there" err &&
	! test -e "$small/state/gosbx/claims/big"
'

test_expect_success QUOTA 'the whole disk of a claim is reserved on the host at open' '
	on_small gosbx open -q --name=r --disk=48m >/dev/null &&
	test $(kb "$small/state/gosbx/claims/r/disk.img") -ge $((48 << 10))
'

test_expect_success QUOTA 'a full host disk loses nothing a sandbox writes, ENOSPC stays at its quota' '
	test_must_fail with_err dd if=/dev/zero of="$small/filler" bs=1M &&
	grep "No space left on device" err &&
	on_small gosbx exec --claim=r "dd if=/dev/urandom of=/app/data bs=1M count=30 conv=fsync status=none && sha256sum </app/data" >sum &&
	test_must_fail with_err on_small gosbx exec --claim=r \
		"dd if=/dev/zero of=/app/more bs=1M count=40 conv=fsync status=none" &&
	grep "No space left on device" err &&
	! grep -i "input/output" err &&
	on_small gosbx exec --claim=r "rm /app/more; sha256sum </app/data" >sum2 &&
	test_cmp sum sum2 &&
	sha256sum <"$small/state/gosbx/claims/r/fs/app/data" >sum3 &&
	test_cmp sum sum3
'

test_expect_success QUOTA 'closing the claim gives its reservation back' '
	rm "$small/filler" &&
	on_small gosbx close r &&
	test $(df -k --output=used "$small" | tail -1) -lt 1024
'

test_expect_success QUOTA 'a default disk is half of what the host has free, 256 MiB at least' '
	test_must_fail with_err on_small gosbx open --name=tight &&
	grep "disk of 256 MiB is reserved on the host, and the file system of .* has 9[0-6] MiB free" err &&
	mkdir "$small/big" &&
	mount -t tmpfs -o size=1g gosbx-t7031 "$small/big" &&
	test_atexit "env XDG_STATE_HOME=\"$small/big/state\" gosbx close --all; umount \"$small/big\"" &&
	env XDG_STATE_HOME="$small/big/state" gosbx open -q --name=half >/dev/null 2>err &&
	grep "^warning: the claim'"'"'s disk is 51[0-2] MiB, not the default 2048 MiB: half of what the file system of .* has free" err &&
	env XDG_STATE_HOME="$small/big/state" gosbx exec --claim=half "stat -f -c \"%b %S\" /app" >out &&
	read blocks bsize <out &&
	test $((blocks * bsize)) -gt $((400 << 20)) &&
	test $((blocks * bsize)) -le $((512 << 20)) &&
	env XDG_STATE_HOME="$small/big/state" gosbx close half
'

# Without a quota mechanism: as a normal user, or as root told to
# behave as one (GOSBX_NO_LOOP).
if test_have_prereq NOQUOTA; then
	noloop=
	test_set_prereq NONE
elif test_have_prereq QUOTA; then
	noloop="GOSBX_NO_LOOP=1"
	test_set_prereq NONE
fi

test_expect_success NONE 'without a quota mechanism an explicit --disk fails closed' '
	test_must_fail with_err env $noloop gosbx open --name=nq --disk=64m &&
	grep "^error: cannot create sandbox: disk quota: .*; use --disk=0 to run without a disk quota" err &&
	! test -e "$claims/nq" &&
	test -z "$(mounts_under)"
'

test_expect_success NONE 'the default quota is skipped with one warning' '
	env $noloop gosbx open -q --name=nd >out 2>err &&
	grep -c "^warning:" err >count &&
	echo 1 >expect &&
	test_cmp expect count &&
	grep "^warning: sandbox runs without some default limits: .*no disk quota (" err &&
	test -z "$(mounts_under)"
'

test_expect_success NONE '/tmp is a tmpfs of half the memory limit at most' '
	gosbx exec --claim=nd "stat -f -c \"%T %b %S\" /tmp" >out &&
	read type blocks bsize <out &&
	test "$type" = tmpfs &&
	test $((blocks * bsize)) = $((1 << 30))
'

test_expect_success NONE,MEMCG 'a full /tmp is ENOSPC and the claim lives on' '
	env $noloop gosbx open -q --name=nm --memory=128m >/dev/null 2>&1 &&
	test_must_fail with_err gosbx exec --claim=nm \
		"dd if=/dev/zero of=/tmp/fill bs=1M count=200" &&
	grep "No space left on device" err &&
	gosbx exec --claim=nm "stat -f -c \"%b %S\" /tmp; rm /tmp/fill" >out &&
	read blocks bsize <out &&
	test $((blocks * bsize)) = $((64 << 20))
'

test_expect_success NONE 'HOME (with the Go caches) is the claim'"'"'s own directory' '
	gosbx exec --claim=nd "echo mine >\$HOME/f" &&
	echo mine >expect &&
	test_cmp expect "$claims/nd/fs/home/f" &&
	gosbx close nd &&
	! test -e "$claims/nd"
'

test_done
