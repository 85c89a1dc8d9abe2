#!/bin/bash
# t_ioctl: the real kernel sink. As root, RNDADDENTROPY succeeds (seen with strace); without
# CAP_SYS_ADMIN in the bounding set, start-up stops with one clear EPERM message.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root: RNDADDENTROPY requires CAP_SYS_ADMIN"
command -v strace > /dev/null || skip "needs strace (apt-get install strace)"
command -v setpriv > /dev/null || skip "needs setpriv (util-linux)"

policy='policy = { input = { cap_bits_per_second = 1000000.0; }; block = { mode = "disabled"; }; network = { mode = "disabled"; }; };'
write_config "$T/e.conf" 'feed = { mode = "always"; batch_bits = 64; };' "$policy"
mkfifo "$T/input/event0"

# LeakSanitizer cannot run in a process under ptrace: in a sanitizer build this run (and only
# this one) is checked by ASan and UBSan but not for leaks.
traced_env=
if [ -n "${ENTROPYD_SANITIZERS:-}" ]; then
	echo "SKIP: a sanitizer build: no leak check of the run under strace (LeakSanitizer cannot run under ptrace)"
	traced_env="ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0"
fi
env $traced_env "$ENTROPYD" --foreground -f "$T/e.conf" > "$T/log" 2>&1 &
DAEMON_PID=$!
wait_for 10 grep -q "started:" "$T/log" || fail "daemon did not start"
strace -f -qq -e trace=ioctl -o "$T/strace" -p "$DAEMON_PID" &
STRACE_PID=$!
traced "$DAEMON_PID"
open_fifo "$T/input/event0"
"$EVGEN" -n 3000 -p random >&9 2>/dev/null || fail "evgen"
wait_summary "input/event0: .* 3000 events" || fail "events not counted"
exec 9>&-
stop_daemon
wait "$STRACE_PID" 2>/dev/null
grep -qE 'ioctl\([0-9]+, RNDADDENTROPY, \{entropy_count=[1-9][0-9]*, buf_size=[0-9]+, .*\) = 0' "$T/strace" ||
	fail "no successful crediting RNDADDENTROPY in strace: $(head -5 "$T/strace")"
grep -qE 'RNDADDENTROPY.* = -1' "$T/strace" && fail "an RNDADDENTROPY call failed"
grep -qE "kernel sink: [1-9][0-9]* batches, 24000 bytes, [1-9][0-9]* bits credited, 0 errors" "$T/log" ||
	fail "kernel sink totals wrong"
# The semantics read from /proc/sys/kernel/random (this kernel has poolsize 256), not from the
# version, and what they mean now.
grep -qE "kernel [0-9]+\.[0-9]+: poolsize 256: credit counts until the CRNG is ready" "$T/log" ||
	fail "kernel semantics not read from poolsize, or not explained"
grep -qE "kernel: CRNG (not )?ready: " "$T/log" || fail "kernel state not explained"
pass "RNDADDENTROPY credits the kernel ($(grep -c 'RNDADDENTROPY.* = 0' "$T/strace") calls)"

# Without CAP_SYS_ADMIN: one clear message, exit status 3, no spinning.
rc=0
timeout 10 setpriv --bounding-set=-sys_admin -- "$ENTROPYD" --foreground -f "$T/e.conf" > "$T/log" 2>&1 || rc=$?
[ "$rc" -eq 3 ] || fail "without CAP_SYS_ADMIN exited $rc, want 3"
grep -q "cannot credit entropy: RNDADDENTROPY on /dev/random is not permitted (EPERM) (entropyd needs CAP_SYS_ADMIN" "$T/log" ||
	fail "no clear EPERM message"
[ "$(grep -c 'not permitted' "$T/log")" -eq 1 ] || fail "the EPERM message is not said once"
pass "without CAP_SYS_ADMIN: clear EPERM message, status 3"
