# g_kernel: on this kernel, entropyd finds how credit is treated from the kernel itself, and
# acts on it: it says the semantics and why, credits while the CRNG is not ready, notices
# the moment it becomes ready (the kernel's "crng init done"), within one feed interval, and
# credits nothing after. Run first (init), while the CRNG is not ready yet: the guest boots
# with random.trust_cpu=off and no virtio-rng.
#
# The workload: O_DIRECT reads on a loop device over a tmpfs file, which the kernel does not
# credit itself (loop's queue/add_random is 0): what makes the CRNG ready is entropyd's credit.
# Times: "crng init done" and two marks written to /dev/kmsg around entropyd's start are on
# the kernel's log clock; entropyd's own "ready after" counts from its start, which lies
# between the marks.
TEST=kernel
. /tests/glib.sh

DISK=/tmp/kdisk.img
SOCK=/run/kernel.sock
BATCH_INTERVAL=1

cleanup_kernel() {
	[ -n "${IOPID:-}" ] && kill -KILL "$IOPID" 2>/dev/null
	cleanup_daemons
	[ -n "${dev:-}" ] && losetup -d "$dev" 2>/dev/null
}
trap cleanup_kernel EXIT

R=/proc/sys/kernel/random
for f in "$R"/*; do
	echo "kernel: $(uname -r): $f = $(cat "$f")"
done
# kmsg_time PATTERN: the kernel log's time of the first line matching PATTERN (seconds).
kmsg_time() { dmesg | grep -m1 -E "$1" | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p'; }
ready_time() { kmsg_time 'random: crng init done'; }
[ -z "$(ready_time)" ] ||
	skip "the CRNG was ready before the test (at $(ready_time) s): nothing to watch"

# What the kernel says, read here as entropyd should read it.
poolsize=$(cat "$R/poolsize")
case $poolsize in
256) want_sem=until-ready want_phase=boot
	want_why="poolsize 256: credit counts until the CRNG is ready (5.18 semantics)" ;;
*) want_sem=depleting want_phase=watermark want_why="poolsize $poolsize: " ;;
esac

dd if=/dev/zero of="$DISK" bs=1M count=64 2> /dev/null || fail "cannot make $DISK"
dev=$(losetup -f) || fail "no free loop device"
losetup "$dev" "$DISK" || fail "losetup $dev $DISK"
name=${dev#/dev/}
cat > /tmp/kernel.conf <<CONF
feed = { mode = "auto"; batch_interval = $BATCH_INTERVAL.0; mix_interval = 1.0; };
sources = { input = { watch = "/tmp/no-input"; }; block = { devices = [ "$name" ]; }; };
policy = { input = { mode = "disabled"; }; network = { mode = "disabled"; }; };
control = { socket = "$SOCK"; };
CONF

# Not a dry run: the credit is real, and it is what makes the CRNG ready.
: > "$LOG"
echo "g_kernel: entropyd starting" > /dev/kmsg
entropyd --foreground -v -f /tmp/kernel.conf >> "$LOG" 2>&1 &
DPID=$!
wait_for 60 logged "started:" || fail "daemon did not start"
echo "g_kernel: entropyd started" > /dev/kmsg
t_start0=$(kmsg_time 'g_kernel: entropyd starting')
t_start1=$(kmsg_time 'g_kernel: entropyd started')

# 1. The semantics, and why, from the kernel; the phase they call for.
grep "notice: kernel [0-9.]*: " "$LOG" | grep -qF ": $want_why" ||
	fail "the log does not say \"$want_why\": $(grep 'notice: kernel' "$LOG")"
logged "phase $want_phase:" || fail "not in the $want_phase phase: $(grep 'phase' "$LOG")"
entropyctl -s "$SOCK" status > /tmp/kstatus || fail "entropyctl status: $(cat /tmp/kstatus)"
grep -qF "kernel semantics $want_sem: $want_why" /tmp/kstatus ||
	fail "entropyctl status does not say the semantics: $(cat /tmp/kstatus)"
pass "$(uname -r): $(grep -m1 "notice: kernel [0-9]" "$LOG" | sed 's/^entropyd: notice: //')"
[ "$want_sem" = until-ready ] || skip "the old semantics: no boot phase to watch"

# 2. Credit before ready, the readiness noticed within a feed interval of the kernel's.
(while :; do blk_io read "$dev" 2000 4096 > /dev/null || exit 1; done) &
IOPID=$!
READY_LINE="notice: CRNG is ready, [0-9.]+ s after start"
wait_for 240 logged "$READY_LINE" ||
	fail "not ready 240 s after the I/O started: $(entropyctl -s "$SOCK" status)"
t_ready=$(ready_time)
[ -n "$t_ready" ] || fail "entropyd says ready, the kernel's log has no 'crng init done'"
line=$(grep -m1 -E "$READY_LINE" "$LOG")
after=$(echo "$line" | sed -n 's/.*ready, \([0-9.]*\) s after start.*/\1/p')
before=$(echo "$line" | sed -n 's/.* with \([0-9]*\) bits credited by entropyd before.*/\1/p')
[ -n "$after" ] && [ -n "$before" ] || fail "cannot read: $line"
[ "$before" -gt 0 ] || fail "nothing credited before the CRNG was ready: $line"
# entropyd noticed it between t_start0 + after and t_start1 + after (its start lies between
# the marks); the kernel's moment must be at most a feed interval before that, and not after.
verdict=$(awk -v s0="$t_start0" -v s1="$t_start1" -v a="$after" -v k="$t_ready" -v i="$BATCH_INTERVAL" 'BEGIN {
	lo = s0 + a; hi = s1 + a + 0.02
	if (lo - k > i) printf "late: noticed at %.2f..%.2f s, the kernel ready at %.2f s", lo, hi, k
	else if (hi < k) printf "early: noticed at %.2f..%.2f s, the kernel ready at %.2f s", lo, hi, k
	else printf "ok: noticed at %.2f..%.2f s, the kernel ready at %.2f s", lo, hi, k }')
case $verdict in ok:*) ;; *) fail "readiness $verdict" ;; esac
pass "credited $before bits before the CRNG was ready; readiness ${verdict#ok: } (start between $t_start0 and $t_start1 s)"

# 3. No credit after: the batches go on (mixing every second), their credit does not.
feeds() { entropyctl -s "$SOCK" status | sed -n 's/^sink: *\([0-9]*\) feeds*, .*/\1/p'; }
feeds0=$(feeds)
mixed() { feeds1=$(feeds); [ "$feeds1" -ge $((feeds0 + 3)) ]; }
wait_for 60 mixed || fail "no batch mixed after ready ($feeds0, then $feeds1 feeds)"
credited=$(entropyctl -s "$SOCK" status | sed -n 's/^sink: .*, \([0-9]*\) bits* credited, .*/\1/p')
kill -KILL "$IOPID"
wait "$IOPID" 2>/dev/null
IOPID=
[ "$credited" = "$before" ] || fail "$credited bits credited in all, $before by the time the CRNG was ready"
entropyctl -s "$SOCK" status |
	grep -q "^kernel [0-9.]*: CRNG ready (.* s after entropyd started), credit no longer counts" ||
	fail "status: $(entropyctl -s "$SOCK" status | grep '^kernel')"
stop_daemon
pass "after ready: $((feeds1 - feeds0)) more batches mixed, no more credit ($credited bits in all)"
