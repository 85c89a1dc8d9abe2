#!/bin/bash
# t_block_nouevent: the block source where the kernel's uevents cannot be had (a unit whose
# RestrictAddressFamilies= leaves AF_NETLINK out, a seccomp policy). The daemon runs under
# tests/helpers/nonetlink, whose seccomp filter makes socket(AF_NETLINK) fail with EAFNOSUPPORT, so it
# follows disks and CPUs by rescanning /sys/block every 30 s. On t_block's loop devices
# (direct I/O on files in /dev/shm, the tracepoint): it says so once and runs on; a disk named
# in the config and there at the start is traced with exact counts; one attached after the
# start is found by the first periodic rescan and counted exactly; a disk detached is shown
# gone by the second rescan while the other is still counted. About 65 s. Needs root, and
# libseccomp at build time (in CI a missing launcher fails: this test must run there).
# CPU hotplug is not done here: this daemon would see a CPU come back only at its next
# rescan. Like t_block, it holds the block lock (lib.sh: block_lock) for its whole run: the
# two take over each other's loop device numbers, and t_block takes a CPU offline.
. "$(dirname "$0")/lib.sh"

NONETLINK=$top_builddir/tests/helpers/nonetlink
cannot() { # cannot REASON...: skip, or fail where the test must run
	[ "${CI:-}" = true ] && { echo "FAIL: $* (CI=true: this test must run)" >&2; exit 1; }
	skip "$*"
}
[ "$(id -u)" -eq 0 ] || skip "needs root (perf_event_open, loop devices)"
for tool in losetup unshare; do
	command -v "$tool" > /dev/null || skip "no $tool"
done
[ -x "$NONETLINK" ] || cannot "needs tests/helpers/nonetlink, built when configure finds libseccomp" \
	"(Debian package libseccomp-dev; contrib/dev.sh test installs it)"
out=$("$NONETLINK" true 2>&1) || cannot "tests/helpers/nonetlink does not work here: $out"

RESCAN_S=30    # the daemon's period without uevents
RESCAN_WAIT=40 # how long a change may take to be seen, with room for a slow machine
NEW_IDX=       # the loop device this test made (not one it found free): removed at exit
nouevent_cleanup() {
	IN_CLEANUP=1
	[ -n "$DAEMON_PID" ] && kill_daemon KILL
	loops_cleanup
	[ -n "$NEW_IDX" ] && remove_loop "$NEW_IDX"
	cleanup
}
trap nouevent_cleanup EXIT
# remove_loop N: loopN goes from /sys/block altogether (LOOP_CTL_REMOVE), where python3 is
# there to ask; else it stays, unused, as losetup --find leaves the devices it adds.
remove_loop() {
	command -v python3 > /dev/null || return 0
	python3 -c 'import fcntl, os, sys
fcntl.ioctl(os.open("/dev/loop-control", os.O_RDWR), 0x4C81, int(sys.argv[1]))' "$1" 2>/dev/null
}
since() { awk -v t0="$1" -v t="$(date +%s.%N)" 'BEGIN { printf "%.1f", t - t0 }'; }
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; } # at_least A B: A >= B
gone() { grep -q "block/$1: gone (removed, detached or without a medium); dropped" "$T/log"; }

block_lock 900 || fail "another block test held $BLOCK_LOCK for 900 s: $(lock_users "$BLOCK_LOCK")"

# A disk there at the start, and the name of one that is not: a loop device of our own, past
# any that losetup --find hands out, so no other test can take it meanwhile.
new_loop L1
N1=${L1#/dev/}
for i in $(seq 64 255); do
	[ -e "/sys/block/loop$i" ] || [ -e "/dev/loop$i" ] || break
done
[ ! -e "/sys/block/loop$i" ] || fail "no free loop device number from 64 to 255"
N2=loop$i L2=/dev/loop$i
new_image IMG2

# ---- no uevents: said once; a disk there at the start is traced, exactly ----
block_conf "$T/nu.conf" tracepoint "$N1" "/dev/$N2"
t0=$(date +%s.%N)
WRAP=$NONETLINK start_ns "" -v --dry-run -f "$T/nu.conf"
grep -q "notice: block: no kernel uevents; disks that come and go are seen within $RESCAN_S s: Address family not supported by protocol" \
	"$T/log" || fail "the fallback not said"
grep -qE "block: backend tracepoint: block:block_rq_complete \(id [0-9]+\) on [0-9]+ CPUs" \
	"$T/log" || fail "not on the tracepoint"
wait_for 5 grep -q "block/$N1: attached (virtual), policy trusted" "$T/log" || fail "$N1 not attached"
grep -qF "warning: block: sources.block.devices[1] \"/dev/$N2\" matches no disk with a medium (yet)" "$T/log" ||
	fail "$N2, named but not there yet, not said"
base1=$(requests "$L1")
"$DIO" -r 1500 -w 1000 -s 51 "$L1" > "$T/dio" || fail "dio"
grep -q "reads=1500 writes=1000" "$T/dio" || fail "dio: $(cat "$T/dio")"
[ $(($(requests "$L1") - base1)) -eq 2500 ] || fail "kernel count $(($(requests "$L1") - base1))"
wait_last "$N1" "state open, backend tracepoint, policy trusted, " || fail "no summary: $(summary "$N1")"
expect_events "$N1" 2500
pass "no uevents: said, rescans every $RESCAN_S s instead; $N1, there at the start:" \
	"$((2500 - ${MISS[$N1]:-0})) samples for 2500 O_DIRECT completions"

# ---- appearing: a disk attached after the start is found by the periodic rescan ----
NEW_IDX=${N2#loop}
losetup --direct-io=on "$L2" "$IMG2" || fail "losetup $L2 $IMG2"
LOOPS+=("$L2")
t1=$(date +%s.%N)
wait_for $RESCAN_WAIT grep -q "block/$N2: attached (virtual), policy trusted" "$T/log" ||
	fail "$N2 not attached within $RESCAN_WAIT s of appearing"
took=$(since "$t1") at=$(since "$t0")
at_least "$at" $((RESCAN_S - 2)) || fail "$N2 attached $at s after the start: not by the periodic rescan"
wait_last "$N2" "state open, backend tracepoint, policy trusted, " || fail "$N2: $(summary "$N2")"
# Counted from here: udev's probe of the new device (without udevadm, as in a chroot, quiet
# cannot wait for it) is long over, and came before the daemon traced the disk.
quiet "$L2" || fail "$N2 never went quiet"
base2=$(requests "$L2")
"$DIO" -r 1500 -w 1000 -s 52 "$L2" > /dev/null || fail "dio $L2"
done2=$(($(requests "$L2") - base2))
[ "$done2" -eq 2500 ] || fail "the kernel completed $done2 requests on $N2 for 2500 O_DIRECT I/Os"
"$DIO" -r 1000 -s 53 "$L1" > /dev/null || fail "dio $L1"
expect_events "$N2" 2500
expect_events "$N1" 3500
pass "appearing: $N2 attached ${took} s after it appeared (${at} s after the start), 2500" \
	"of 2500 counted; $N1 went on (1000 more)"

# ---- going: a disk detached is shown gone by the next rescan; the other is still counted ----
done1=$(($(requests "$L1") - base1))
losetup -d "$L1" || fail "losetup -d $L1"
t2=$(date +%s.%N)
wait_for $RESCAN_WAIT gone "$N1" || fail "$N1 not dropped within $RESCAN_WAIT s of its detach"
took=$(since "$t2") at=$(since "$t0")
at_least "$at" $((2 * RESCAN_S - 2)) || fail "$N1 dropped $at s after the start: not by the second rescan"
kill -0 "$DAEMON_PID" 2> /dev/null || fail "the daemon died when $N1 was detached"
grep -q "block/$N1: detached after $((done1 - ${MISS[$N1]:-0})) events" "$T/log" ||
	fail "$N1's count when detached: $(grep "block/$N1: detached" "$T/log")"
"$DIO" -r 600 -w 400 -s 54 "$L2" > /dev/null || fail "dio $L2 after the detach"
expect_events "$N2" 3500
sed -n "/block\/$N1: detached after/,\$p" "$T/log" | grep -qF "block/$N1: kind " &&
	fail "$N1 still listed after it went"
[ "$(grep -c "no kernel uevents" "$T/log")" -eq 1 ] || fail "the fallback said more than once"
done_all=$((done1 + $(requests "$L2") - base2))
stop_daemon
pass "going: $N1 dropped ${took} s after its detach (${at} s after the start); $N2 went on" \
	"(1000 more); the fallback said once; the daemon exits 0"

# The whole account, as t_block's: what the kernel completed on the two disks while they were
# traced, what perf counted, what reached us, what perf never wrote.
tp_account_check "$done_all"
pass "$done_all completions: $TP_TAKEN sampled, $TP_NEVER never written by perf, none twice"
