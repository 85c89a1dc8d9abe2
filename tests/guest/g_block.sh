# g_block: the block source's blktrace backend on a real kernel whose relay files are open
# (no lockdown here, unlike the build machine), on a loop device; and the tracepoint backend
# on the same workload.
#
# Found by tracing block:block_rq_complete in this guest: on a loop device over a tmpfs file,
# each O_DIRECT read or write that blk_io issues (4 KiB or 64 KiB, one at a time) is exactly
# one request completion, and an idle loop device completes nothing. So the events counted
# must equal the I/Os done, exactly.
TEST=block
. /tests/glib.sh

DISK=/tmp/disk.img
PIDS=/tmp/block.pids

cleanup_block() {
	local p
	for p in $(cat "$PIDS" 2>/dev/null) $DPID; do
		kill -KILL "$p" 2>/dev/null
	done
	[ -n "${dev:-}" ] && losetup -d "$dev" 2>/dev/null
}
trap cleanup_block EXIT

# conf FILE BACKEND SOCKET: only the block class, only the loop device.
conf() {
	cat > "$1" <<EOF
sources = { input = { watch = "/tmp/no-input"; }; block = { backend = "$2"; devices = [ "$name" ]; }; };
policy = { input = { mode = "disabled"; }; network = { mode = "disabled"; }; };
control = { socket = "$3"; };
EOF
}

# run_daemon RUNDIR CONF: start_daemon with its own runtime directory (blktrace's state file).
run_daemon() {
	export RUNTIME_DIRECTORY=$1
	start_daemon "$2"
	unset RUNTIME_DIRECTORY
	echo "$DPID" >> "$PIDS"
}

events() { last_summary "block/$name" | sed -n 's/.* \([0-9]*\) events, .*/\1/p'; }

# expect COUNT: the summary reaches COUNT events for the loop device and, a second later,
# still says exactly COUNT.
expect() {
	summary "block/$name: kind [a-z]*, state [^,]*, .* $1 events, " 30 ||
		miscount "want $1 events; last summary: $(last_summary "block/$name")"
	sleep 1
	summary "block/$name: " 5
	[ "$(events)" = "$1" ] || miscount "$1 events, then $(events)"
}

# A wrong count: stop the daemon first, so that the log ends with what it read from the
# relay files ("blktrace read N completions, ... bytes of garbage ..."), and the kernel's
# count of records it dropped.
miscount() {
	echo "block/$name: the kernel dropped $(cat "/sys/kernel/debug/block/$name/dropped" 2>/dev/null || echo "?") records"
	kill -TERM "$DPID" 2> /dev/null
	wait "$DPID" 2> /dev/null
	DPID=
	fail "block/$name: $*"
}

# 5.10 answers ENXIO for trace/enable unless the device is open: it is, while this reads.
traced() { [ "$(cat "/sys/block/$name/trace/enable" 3< "$dev")" = 1 ]; }
relays() { ls "/sys/kernel/debug/block/$name" | grep -c '^trace[0-9]'; }
io() { # io read|write COUNT SIZE
	blk_io "$1" "$dev" "$2" "$3" > /tmp/io.out 2>&1 && grep -q "^done $2\$" /tmp/io.out ||
		fail "blk_io $*: $(cat /tmp/io.out)"
}
# torn_down WHEN: no trace is left on the disk, by sysfs and by a BLKTRACESETUP of our own.
torn_down() {
	traced && fail "$1: a blktrace is still set up on $name"
	[ "$(relays)" = 0 ] || fail "$1: relay files still under /sys/kernel/debug/block/$name"
	blk_io busy "$dev" > /tmp/busy.out || fail "$1: $name is still busy: $(cat /tmp/busy.out)"
}

# Does this entropyd have the block source at all?
dd if=/dev/zero of="$DISK" bs=1M count=64 2> /dev/null || fail "cannot make $DISK"
dev=$(losetup -f) || fail "no free loop device"
losetup "$dev" "$DISK" || fail "losetup $dev $DISK"
name=${dev#/dev/}
conf /tmp/probe.conf blktrace /run/probe.sock
run_daemon /run/ed-probe /tmp/probe.conf
if logged "block source: not started"; then
	skip "this entropyd has no block source yet: $(grep 'block source: not started' "$LOG" | sed 's/.*: not started: //')"
fi
stop_daemon
ncpu=$(grep -c '^processor' /proc/cpuinfo)
torn_down "before the tests"

# 1. blktrace: the relay files read, every completion counted, for a workload that fills
#    less than one sub-buffer (read by the drain timer) and for ones that fill many on both
#    CPUs (read when poll wakes); nothing dropped; the trace torn down on exit.
conf /tmp/bt.conf blktrace /run/bt.sock
run_daemon /run/ed-bt /tmp/bt.conf
wait_for 20 logged "block/$name: blktrace set up and started" || fail "blktrace not started on $name"
traced || fail "entropyd says started, but /sys/block/$name/trace/enable is not 1"
[ "$(relays)" = "$ncpu" ] || fail "$(relays) relay files for $ncpu CPUs"
expect 0
io read 100 4096
expect 100
pass "blktrace: 100 completions (less than a sub-buffer) counted exactly"
io write 3000 4096
expect 3100
io read 200 65536
expect 3300
dropped=$(cat "/sys/kernel/debug/block/$name/dropped")
[ "$dropped" = 0 ] || fail "the kernel dropped $dropped blktrace records"
pass "blktrace: 3000 writes and 200 64 KiB reads (many sub-buffers) counted exactly, none dropped"
stop_daemon
logged "block/$name: blktrace read 3300 completions" || fail "the exit summary does not say 3300 completions"
logged "block/$name: blktrace stopped and torn down" || fail "no teardown logged"
torn_down "after SIGTERM"
[ -e /run/ed-bt/blktrace.state ] && fail "state file left after a clean exit: $(cat /run/ed-bt/blktrace.state)"
pass "blktrace: stopped and torn down on exit"

# 2. SIGKILL leaves the trace set up (the kernel keeps it); the next start tears it down,
#    and traces again.
run_daemon /run/ed-bt /tmp/bt.conf
wait_for 20 logged "block/$name: blktrace set up and started" || fail "blktrace not started on $name"
io read 50 4096
expect 50
kill_daemon
traced || fail "no trace left after SIGKILL: the test cannot show the cleanup"
grep -q " $name\$" /run/ed-bt/blktrace.state || fail "$name not in the state file after SIGKILL"
run_daemon /run/ed-bt /tmp/bt.conf
logged "block/$name: tore down a blktrace left by an entropyd that did not exit cleanly" ||
	fail "the trace left by the killed daemon was not torn down at the next start"
wait_for 20 logged "block/$name: blktrace set up and started" || fail "blktrace not started again"
io write 60 4096
expect 60
stop_daemon
torn_down "after SIGKILL and a restart"
pass "blktrace: a trace left by SIGKILL torn down at the next start, which then counts exactly"

# 3. The tracepoint backend agrees: two daemons at once, one on each backend, one workload.
conf /tmp/tp.conf tracepoint /run/tp.sock
LOG=/tmp/bt.log
run_daemon /run/ed-bt /tmp/bt.conf
BT_PID=$DPID
wait_for 20 logged "block/$name: blktrace set up and started" || fail "blktrace not started on $name"
LOG=/tmp/tp.log
run_daemon /run/ed-tp /tmp/tp.conf
TP_PID=$DPID
logged "block: backend tracepoint" || fail "the tracepoint backend did not start"
io read 400 4096
io write 400 4096
io read 100 65536
expect 900
stop_daemon
LOG=/tmp/bt.log DPID=$BT_PID
expect 900
stop_daemon
torn_down "after the side-by-side run"
pass "tracepoint and blktrace backends, side by side on one workload: both 900 completions"
