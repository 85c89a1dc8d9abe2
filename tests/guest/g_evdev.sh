# g_evdev: the evdev source on real input devices (virtio keyboard and mouse, uinput).
#
# What one injected thing gives, found by reading the devices in this guest: the virtio
# keyboard sends a key press and a key release as two reports (EV_KEY + SYN_REPORT each, no
# EV_MSC), when the host sends them as two input-send-event commands, which it does; the
# virtio mouse sends one report per command (REL_X, REL_Y, SYN_REPORT). So N presses must
# count exactly 2N events, N motions exactly N.
#
# QEMU gives its virtio input devices the bus type BUS_VIRTUAL, so entropyd's default
# (exclude_virtual = true) leaves them out, as it does uinput devices: the counts are asserted
# with exclude_virtual = false; the default config is checked to use only the machine's own
# keyboard (the AT keyboard; a USB keyboard under -M virt).
TEST=evdev
. /tests/glib.sh

KEYS_PER_PRESS=2
UNAME=entropyd-guest-uinput
VERBOSE="-v -v" # debug: everything entropyd can log is searched for the keys

conf() { # conf FILE EXCLUDE_VIRTUAL
	cat > "$1" <<EOF
sources = { input = { watch = "/dev/input"; exclude_virtual = $2; }; };
policy = { block = { mode = "disabled"; }; network = { mode = "disabled"; }; };
EOF
}

# events NODE: the event count in the newest summary line of input/NODE (empty if none).
events() { last_summary "input/$1" | sed -n 's/.* \([0-9]*\) events, .*/\1/p'; }

# expect NODE KIND COUNT: the summary reaches COUNT events for input/NODE of that kind, and a
# second later still says exactly COUNT (nothing extra trickles in).
expect() {
	summary "input/$1: kind $2, state open, .* $3 events, " 30 ||
		fail "input/$1: want kind $2 and $3 events; last summary: $(last_summary "input/$1")"
	sleep 1
	summary "input/$1: " 5
	[ "$(events "$1")" = "$3" ] || fail "input/$1: $3 events, then $(events "$1")"
}

# The uinput helper, fed commands through a FIFO held open on fd 4.
uinput_start() {
	rm -f /tmp/u.in /tmp/u.out
	mkfifo /tmp/u.in
	uinput_dev "$UNAME" < /tmp/u.in > /tmp/u.out 2>&1 &
	UPID=$!
	exec 4> /tmp/u.in
	wait_for 20 grep -q '^node ' /tmp/u.out || fail "uinput device not created: $(cat /tmp/u.out)"
	UNODE=$(sed -n 's/^node //p' /tmp/u.out)
}
uinput_emit() {
	echo "emit $1" >&4
	wait_for 30 grep -q "^emitted $1\$" /tmp/u.out || fail "uinput emit $1: $(cat /tmp/u.out)"
}
uinput_destroy() {
	echo destroy >&4
	exec 4>&-
	wait "$UPID" || fail "uinput helper failed: $(cat /tmp/u.out)"
}

# The machine's own keyboard, which the default config uses: the PC's AT keyboard; -M virt
# (the arm64 and armhf guests) has no PC keyboard controller, and qemu_run.py gives it a USB
# keyboard (BUS_USB, behind xhci) instead.
AT_NAME="AT Translated Set 2 keyboard"
[ -d /proc/device-tree ] && AT_NAME="QEMU QEMU USB Keyboard"
there() { echo "(there: $(cat /sys/class/input/event*/device/name 2>/dev/null | tr '\n' ';'))"; }
kbd=$(wait_for 20 node_named "QEMU Virtio Keyboard") || fail "no virtio keyboard in /sys/class/input $(there)"
mouse=$(node_named "QEMU Virtio Mouse") || fail "no virtio mouse in /sys/class/input $(there)"
at=$(wait_for 20 node_named "$AT_NAME") || fail "no \"$AT_NAME\" in /sys/class/input $(there)"
uinput_dev -R "/dev/input/$kbd" || fail "cannot push out the keyboard's autorepeat"
VIRT="not used: a virtual device \(bus virtual or uinput\), and exclude_virtual is set"

# 1. The default config: the AT keyboard used, the virtio devices (BUS_VIRTUAL) left out and
#    never read, a uinput keyboard plugged in during the run seen and left out as virtual
#    (the helper claims BUS_USB: only its place in sysfs gives it away).
conf /tmp/default.conf true
start_daemon /tmp/default.conf
logged "input/$at: attached \(keyboard\)" || fail "$AT_NAME $at not attached as a keyboard"
logged "input/$kbd \(\"QEMU Virtio Keyboard\"\): $VIRT" || fail "virtio keyboard not excluded as virtual"
logged "input/$mouse \(\"QEMU Virtio Mouse\"\): $VIRT" || fail "virtio mouse not excluded as virtual"
ctl keys 5 || fail "host could not press keys"
expect "$at" keyboard 0
for n in $kbd $mouse; do
	logged "input/$n: (attached|kind)" && fail "excluded device $n was used"
done
pass "default config: $AT_NAME $at used; virtio $kbd and $mouse (BUS_VIRTUAL) excluded"

uinput_start
wait_for 20 logged "input/$UNODE \(\"$UNAME\"\): $VIRT" ||
	fail "uinput device $UNODE not reported as excluded"
uinput_emit 20
summary "input/$at: " 5
logged "input/$UNODE: (attached|kind)" && fail "excluded uinput device $UNODE was used"
uinput_destroy
pass "default config: uinput keyboard $UNODE plugged in during the run, seen, excluded as virtual"

# Status output must show no key codes either: -p and the summaries go to the log, which the
# host searches with the rest of the console.
entropyd -p -f /tmp/default.conf >> "$LOG" 2>&1 || fail "entropyd -p failed"
stop_daemon
echo "--- entropyd log, default config"
sed 's/^/log: /' "$LOG"

# 2. exclude_virtual = false: the virtio keyboard and mouse found and classified, injected
#    reports counted exactly; a uinput keyboard plugged in during the run used and counted
#    exactly, then destroyed mid-run and dropped cleanly while the daemon carries on.
conf /tmp/virtual.conf false
start_daemon /tmp/virtual.conf
logged "input/$kbd: attached \(keyboard\)" || fail "virtio keyboard $kbd not attached as a keyboard"
logged "input/$mouse: attached \(mouse\)" || fail "virtio mouse $mouse not attached as a mouse"
expect "$kbd" keyboard 0
expect "$mouse" mouse 0
pass "exclude_virtual = false: found $kbd (keyboard) and $mouse (mouse)"

ctl keys 25 || fail "host could not press keys"
expect "$kbd" keyboard $((25 * KEYS_PER_PRESS))
ctl mouse 30 || fail "host could not move the mouse"
expect "$mouse" mouse 30
expect "$kbd" keyboard $((25 * KEYS_PER_PRESS))
expect "$at" keyboard 0
pass "25 key presses: $((25 * KEYS_PER_PRESS)) reports; 30 mouse motions: 30 reports"

uinput_start
wait_for 20 logged "input/$UNODE: attached \(keyboard\)" ||
	fail "uinput device $UNODE not attached with exclude_virtual = false"
uinput_emit 40
expect "$UNODE" keyboard 40
pass "uinput keyboard $UNODE plugged in during the run: used, 40 reports counted"

uinput_destroy
wait_for 20 logged "input/$UNODE: (device gone \(ENODEV\)|node removed); closed" ||
	fail "removal of $UNODE not noticed"
wait_for 5 logged "input/$UNODE: detached after 40 events" || fail "$UNODE not detached after 40 events"
kill -0 "$DPID" || fail "daemon died when $UNODE went away"
n_before=$(grep -c "input/$UNODE: kind" "$LOG")
ctl keys 5 || fail "host could not press keys"
expect "$kbd" keyboard $(((25 + 5) * KEYS_PER_PRESS))
[ "$(grep -c "input/$UNODE: kind" "$LOG")" = "$n_before" ] ||
	fail "removed device $UNODE still in the summary"
entropyd -p -f /tmp/virtual.conf >> "$LOG" 2>&1 || fail "entropyd -p failed"
# The control socket's status output too goes to the console, for the host's search. The
# metrics' sample values are masked there: they are counters (bits estimated, say), which
# can equal a key code by chance; their names and labels are searched.
if command -v entropyctl > /dev/null; then
	{
		entropyctl --color never status && entropyctl sources &&
			entropyctl --json status && entropyctl --json sources
	} > /tmp/ctl.out 2>&1 || fail "entropyctl: $(cat /tmp/ctl.out)"
	grep -qE "(^|[^a-z0-9])$kbd[^0-9].* $(((25 + 5) * KEYS_PER_PRESS)) " /tmp/ctl.out ||
		fail "entropyctl status does not show $kbd with $(((25 + 5) * KEYS_PER_PRESS)) events"
	entropyctl metrics > /tmp/metrics.out 2>&1 || fail "entropyctl metrics: $(cat /tmp/metrics.out)"
	echo "--- entropyctl status, sources, --json status, --json sources"
	sed 's/^/ctl: /' /tmp/ctl.out
	echo "--- entropyctl metrics (sample values masked)"
	sed -E 's/ [-+0-9.eE]+$/ <value>/; s/^/ctl: /' /tmp/metrics.out
	pass "entropyctl status shows $kbd with $(((25 + 5) * KEYS_PER_PRESS)) events"
fi
stop_daemon
pass "uinput device removed mid-run: closed, detached after 40 events; the rest carries on"
echo "--- entropyd log, exclude_virtual = false"
sed 's/^/log: /' "$LOG"
