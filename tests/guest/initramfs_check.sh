#!/bin/sh
# initramfs_check: the checks of tests/guest/initramfs.sh, on the booted root, run by a
# oneshot unit ordered after entropyd.service. Results on the console as "PASS: initramfs: "
# and "FAIL: initramfs: " lines between "=== initramfs check" and "=== end"; then "done" to
# the host on the control channel (ttyS1; under -M virt, the virtio console the command
# line's guest_ctl= names), and power off.
#
# One clock: the kernel log's timestamps (dmesg), and systemd's monotonic timestamp of the
# service's start, both counted from boot.
log=/run/initramfs/entropyd.log
pass() { echo "PASS: initramfs: $*"; }
fail() { echo "FAIL: initramfs: $*"; }
# kmsg_time PATTERN: the timestamp (seconds) of the first kernel log line matching PATTERN.
kmsg_time() { dmesg | sed -n "s/^\[ *\([0-9.]*\)\] .*$1.*/\1/p" | head -1; }
before() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0) }'; }

echo "=== initramfs check"
started=$(kmsg_time 'entropyd: started in the initramfs')
mounted=$(kmsg_time 'EXT4-fs (vda): mounted filesystem')
stopped=$(kmsg_time 'entropyd: stopped the initramfs')
if [ -s "$log" ] && grep -q 'started: ' "$log" && before "$started" "$mounted"; then
	pass "entropyd started in the initramfs at $started s, before the root was mounted at $mounted s"
else
	fail "entropyd in the initramfs: started at '${started:-?}', root mounted at '${mounted:-?}', log: $(head -c 400 "$log" 2>&1)"
fi

# What it credited from the disk there: its notice when the CRNG got ready, or else what its
# block instance had credited when it was stopped.
bits=$(sed -n 's/.*CRNG is ready, [0-9.]* s after start, with \([0-9]*\) bits credited.*/\1/p' "$log" | head -1)
vda=$(sed -n 's|.*block/vda: .*, \([0-9.]*\) bits credited$|\1|p' "$log" | tail -1)
if awk -v v="${vda:-0}" 'BEGIN { exit !(v > 0) }'; then
	pass "it credited $vda bits from the disk in the initramfs (${bits:-?} bits before the CRNG was ready)"
else
	fail "no credit from the disk in the initramfs: $(grep -E 'block|CRNG|total' "$log" | head -8)"
fi

# The boot the service remembers: the initramfs's daemon left its record in /run/initramfs,
# which came along to the real root; the service's daemon read it, and its verdict, status
# and metrics tell what the initramfs's did (the CRNG was ready before the service started).
rec=/run/initramfs/entropyd-boot.json
after=$(sed -n 's/.*CRNG is ready, \([0-9.]*\) s after start, with .*/\1/p' "$log" | head -1)
json=$(entropyctl --json status 2>&1)
verdict=$(echo "$json" | sed -n 's/.*"verdict": "\([a-z-]*\)".*/\1/p' | head -1)
summary=$(entropyctl status 2>&1 | sed -n 's/^verdict: //p')
metric=$(entropyctl metrics 2>&1 | sed -n 's/^entropyd_kernel_crng_ready_after_seconds //p')
credited=$(entropyctl metrics 2>&1 | sed -n 's/^entropyd_initramfs_credited_bits //p')
if [ "$(stat -c '%U %a' "$rec" 2>&1)" = "root 644" ] && grep -q '"ended":true' "$rec" &&
	[ "$verdict" = credited ] &&
	[ "${summary#entropyd in the initramfs credited }" != "$summary" ] &&
	[ -n "$after" ] && awk -v a="$after" -v m="${metric:-x}" 'BEGIN { d = a - m; exit !(m != "x" && d < 0.06 && d > -0.06) }' &&
	awk -v c="${credited:-0}" 'BEGIN { exit !(c >= 1) }'; then
	pass "the service remembers the boot: verdict \"$summary\"; entropyd_kernel_crng_ready_after_seconds $metric (the initramfs's log: $after s), entropyd_initramfs_credited_bits $credited"
else
	fail "the boot record: $(stat -c '%U %a' "$rec" 2>&1), $(head -c 300 "$rec" 2>&1); verdict '$verdict' '$summary'; metric '${metric}' (log '${after}'), credited '${credited}'"
fi

# The hand-over: the initramfs's daemon exited on SIGTERM before the switch to the root, and
# the root's service started after that.
svc_us=$(systemctl show -P ExecMainStartTimestampMonotonic entropyd.service)
svc=$(awk -v u="${svc_us:-0}" 'BEGIN { printf "%.6f", u / 1e6 }')
oldpid=$(dmesg | sed -n 's/.*entropyd: stopped the initramfs.s entropyd (pid \([0-9]*\)).*/\1/p' | head -1)
if grep -q 'signal 15: flushing and exiting' "$log" && grep -q 'total: ' "$log" &&
	before "$stopped" "$svc" && [ -n "$oldpid" ] && ! kill -0 "$oldpid" 2>/dev/null; then
	pass "the initramfs's entropyd (pid $oldpid) exited at $stopped s; entropyd.service started at $svc s"
else
	fail "hand-over: stopped at '${stopped:-?}' (pid '${oldpid:-?}'), service at '$svc', $(tail -3 "$log")"
fi
state=$(systemctl is-active entropyd.service)
# The service's two processes: the main (privileged) one and its child, the collector.
main=$(systemctl show -P MainPID entropyd.service)
collector=$(tr -d ' ' < "/proc/$main/task/$main/children" 2> /dev/null)
others=
for pid in $(pidof entropyd); do
	[ "$pid" = "$main" ] || [ "$pid" = "$collector" ] || others="$others $pid"
done
if [ "$state" = active ] && [ -n "$collector" ] && [ -z "$others" ]; then
	pass "entropyd.service is active (pid $main and its collector $collector), no other entropyd running"
else
	fail "entropyd.service is $state (pid $main, collector '${collector}'); other entropyd processes:${others:- none}"
	journalctl -b -u entropyd.service -o cat --no-pager 2>&1 | tail -15 | sed 's/^/  journal: /'
fi

# The collector in a box of its own, in the initramfs (started by its hooks, where the root
# is the rootfs, which no pivot_root leaves) and under the unit: its own PID and mount
# namespaces, not the privileged process's.
if grep -q 'collector: its own PID and mount namespaces' "$log"; then
	pass "in the initramfs, the collector had its own PID and mount namespaces"
else
	fail "in the initramfs, the collector's namespaces: $(grep -E 'collector: .*(namespace|root|user)' "$log" | head -4)"
fi
ns_of() { readlink "/proc/$1/ns/$2" 2> /dev/null; }
if [ -n "$collector" ] && [ -n "$(ns_of "$main" mnt)" ] &&
   [ "$(ns_of "$main" mnt)" != "$(ns_of "$collector" mnt)" ] &&
   [ "$(ns_of "$main" pid)" != "$(ns_of "$collector" pid)" ]; then
	pass "under the unit, the collector has its own mount and PID namespaces ($(ns_of "$collector" mnt), $(ns_of "$collector" pid))"
else
	fail "under the unit, the collector's namespaces: mnt $(ns_of "$collector" mnt) (main $(ns_of "$main" mnt)), pid $(ns_of "$collector" pid) (main $(ns_of "$main" pid))"
fi

# Nothing left behind: every perf event open belongs to the service's collector, and no
# blktrace is set up on the disk.
stray=
for fd in /proc/[0-9]*/fd/*; do
	case $(readlink "$fd" 2>/dev/null) in
	*perf_event*)
		pid=${fd#/proc/}
		pid=${pid%%/*}
		[ "$pid" = "$collector" ] || stray="$stray $pid"
		;;
	esac
done
busy=$(blk_io busy /dev/vda 2>&1)
if [ -z "$stray" ] && [ "$busy" = free ]; then
	pass "no perf event open outside the service's collector (pid $collector), no blktrace on vda ($busy)"
else
	fail "left behind: perf events of pids:${stray:- none}; blktrace on vda: $busy"
fi
# A compromised collector's attempts (tests/helpers/intrusions.sh): those made in the
# initramfs (by the test's init-premount script, the stall on a second instance), then the same under the unit, ended by
# prlimit64 on the main process, which kills the collector (Restart= brings it back).
sed 's/^/  initramfs: /' /run/initramfs/intrusions.txt 2> /dev/null
if grep -q '^ok: the calls run in the collector' /run/initramfs/intrusions.txt 2> /dev/null &&
	! grep -q '^BAD' /run/initramfs/intrusions.txt; then
	pass "in the initramfs, from inside the collector, each attempt failed ($(grep -c '^ok' /run/initramfs/intrusions.txt) lines)"
else
	fail "in the initramfs, from inside the collector: $(grep -v '^ok' /run/initramfs/intrusions.txt 2>&1 | head -4)"
fi
# The one attempt that ends its daemon, made on a throw-away second instance there (the
# test's init-premount script), while the real one ran on to hand over its boot record.
stall=$(grep 'a collector that sends' /run/initramfs/intrusions.txt 2> /dev/null)
case $stall in
"ok: "*) pass "in the initramfs, on a second instance: ${stall#ok: }" ;;
*) fail "in the initramfs, a collector that stops reading: ${stall:-not tried}; $(tail -3 /run/initramfs/entropyd-stall/log 2>&1)" ;;
esac
# shellcheck disable=SC2034 # intrusions.sh runs $INTRUDE
INTRUDE=/usr/local/bin/intrude
# shellcheck disable=SC1091 # the guest's copy of tests/helpers/intrusions.sh
. /usr/local/lib/entropyd-test/intrusions.sh
uid=$(id -u entropyd)
conf=$(entropyd -p 2> /dev/null | sed -n 's/^# entropyd configuration in effect.*; from //p')
install -m 0000 /dev/null /run/entropyd-test-secret
t0=$(cut -d' ' -f1 /proc/uptime)
intrusions "$collector" "$uid" "$conf" /run/entropyd-test-secret /run/systemd/private \
	/dev/vda > /run/intrusions.txt 2>&1
attempt "$collector" "reading /dev/vda" open /dev/vda r >> /run/intrusions.txt
echo "  unit: the attempts took $(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }') s"
restarts=$(systemctl show -P NRestarts entropyd.service)
last=$(attempt_last "$collector" "$main")
sed 's/^/  unit: /' /run/intrusions.txt
echo "  unit: $last"
restarted() {
	[ "$(systemctl show -P NRestarts entropyd.service)" -gt "$restarts" ] &&
		[ "$(systemctl is-active entropyd.service)" = active ]
}
i=0
while ! restarted && [ "$i" -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
if [ "$INTRUSIONS_BAD" -eq 0 ] && grep -q '^ok: the calls run in the collector' /run/intrusions.txt &&
	[ ! -e /etc/entropyd-intruder ] && [ "${last#ok:}" != "$last" ] && restarted &&
	journalctl -b -u entropyd.service -o cat | grep -q 'the collector was killed by signal 31'; then
	pass "under the unit, from inside the collector, each attempt failed; prlimit64 on the main process killed it (SIGSYS), Restart= brought the service back"
else
	fail "under the unit, from inside the collector: $(grep -v '^ok' /run/intrusions.txt | head -4) $last; $(systemctl is-active entropyd.service)"
	journalctl -b -u entropyd.service -o short-monotonic --no-pager 2>&1 | tail -25 | sed 's/^/  journal: /'
fi
entropyctl status 2>&1 | sed 's/^/  status: /'
echo "=== end"

ctl=$(sed -n 's/.*guest_ctl=\([^ ]*\).*/\1/p' /proc/cmdline)
: "${ctl:=/dev/ttyS1}"
# A virtio console opens once its driver (udev loads it) has probed the device.
i=0
while ! (: <> "$ctl") 2> /dev/null && [ "$i" -lt 300 ]; do sleep 0.2; i=$((i + 1)); done
exec 3<> "$ctl"
stty -F "$ctl" raw -echo
echo "done" >&3
systemctl poweroff --force --force
