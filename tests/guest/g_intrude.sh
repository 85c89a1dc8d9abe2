# g_intrude: what a compromised collector would try (tests/helpers/intrusions.sh), each call
# made inside the real collector by tests/helpers/intrude, on this guest's kernel and
# architecture: the list (on a loop device's perf events and a packet socket on lo) all
# refused; a collector that stops reading, ended with the daemon on SIGTERM; and prlimit64
# and a signal on the privileged process, each of which kills the collector (SIGSYS).
TEST=intrude
. /tests/glib.sh
INTRUDE=/bin/intrude
. /tests/intrusions.sh

DISK=/tmp/idisk.img
SECRET=/run/intrude-secret
ROOTSOCK=/run/intrude-root.sock
CONF=/tmp/intrude.conf

cleanup_intrude() {
	[ -n "${LISTENER:-}" ] && kill "$LISTENER" 2>/dev/null
	cleanup_daemons
	[ -n "${dev:-}" ] && losetup -d "$dev" 2>/dev/null
}
trap cleanup_intrude EXIT

why=$(intrude_unknown) && skip "$why"
dd if=/dev/zero of="$DISK" bs=1M count=16 2> /dev/null || fail "cannot make $DISK"
dev=$(losetup -f) || fail "no free loop device"
losetup "$dev" "$DISK" || fail "losetup $dev $DISK"
name=${dev#/dev/}
ip link set lo up || fail "cannot bring lo up"
: > "$SECRET" && chmod 0000 "$SECRET" || fail "cannot make $SECRET"
unix_listen "$ROOTSOCK" > /tmp/listener.out 2>&1 &
LISTENER=$!
wait_for 10 grep -q listening /tmp/listener.out || fail "no root-only socket: $(cat /tmp/listener.out)"
cat > "$CONF" <<CONF
sources = { input = { watch = "/tmp/no-input"; };
            block = { backend = "tracepoint"; devices = [ "$name" ]; };
            network = { interfaces = [ "lo" ]; }; };
policy = { input = { mode = "disabled"; }; };
control = { socket = "/run/intrude.sock"; };
CONF
uid=$(id -u entropyd) || fail "no user entropyd in the guest"

# start: the daemon, and COLL, its collector once both sources are attached.
start() {
	start_daemon "$CONF"
	wait_for 60 logged "block/$name: attached" || fail "the loop device was not attached"
	wait_for 60 logged "network/lo: attached" || fail "lo was not attached"
	COLL=$(cat /proc/"$DPID"/task/*/children 2>/dev/null)
	[ -n "$COLL" ] || fail "no collector under the daemon ($DPID)"
}
# ended_by_sigsys: after the attempt $1, the daemon exits (its collector killed) within 30 s.
ended_by_sigsys() {
	case $1 in "ok: "*) ;; *) fail "$1" ;; esac
	wait_for 30 ended "$DPID" || fail "$1, but the daemon still runs 30 s later"
	wait "$DPID" 2> /dev/null
	DPID=
}

start
walls=$(sed -n 's/.*collector: walls: //p' "$LOG" | tail -1)
intrusions "$COLL" "$uid" "$CONF" "$SECRET" "$ROOTSOCK" "$dev" > /tmp/intrusions 2>&1
sed 's/^/  /' /tmp/intrusions
grep -q '^ok: the calls run in the collector' /tmp/intrusions || fail "the calls did not run in the collector"
grep -q '^ok: binding the capture to every interface' /tmp/intrusions ||
	fail "the packet socket's attempts did not run"
[ -e /etc/entropyd-intruder ] && fail "the collector made /etc/entropyd-intruder"
[ "$(stat -c %a "$SECRET")" = 0 ] || fail "the root file's mode changed"
[ "$INTRUSIONS_BAD" -eq 0 ] || fail "from inside the collector: $(grep '^BAD' /tmp/intrusions | tr '\n' ' ')"
# The programs' architecture (an arm64 kernel runs armhf ones too): their ELF e_machine.
case $(od -An -tu2 -j18 -N2 "$INTRUDE" | tr -d ' ') in
40) progs=arm ;; 62) progs=x86-64 ;; 183) progs=aarch64 ;; *) progs=unknown ;;
esac
pass "$progs programs on an $(uname -m) kernel, from inside the collector (walls: $walls), each of $(grep -c '^ok' /tmp/intrusions) attempts failed"

stall=$(attempt_stall "$COLL" "$DPID" 1 TERM)
echo "  $stall"
case $stall in "ok: "*) ;; *) fail "$stall" ;; esac
wait "$DPID" 2> /dev/null
DPID=
pass "a collector that stops reading: ${stall#ok: }"

start
last=$(attempt_last "$COLL" "$DPID")
echo "  $last"
ended_by_sigsys "$last"
start
last2=$(attempt_last "$COLL" "$DPID" tgkill)
echo "  $last2"
ended_by_sigsys "$last2"
pass "prlimit64 on the privileged process killed the collector (SIGSYS), and so did a signal to it; the daemon ended each time"
