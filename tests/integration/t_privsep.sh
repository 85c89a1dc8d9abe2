#!/bin/bash
# t_privsep: privilege separation, seen from outside. A compromised collector (tests/
# privhostile, against the real privileged loop) gets no more credit than the ceiling (summed
# from strace's decoding of RNDADDENTROPY) and no descriptor for a message that breaks the
# protocol or asks for what the configuration does not name. A daemon running all three
# classes (an input FIFO, a loop device on the tracepoint, a veth in a namespace): exactly one
# process holds CAP_SYS_ADMIN, and it holds no packet socket, no control socket and no perf
# ring; the collector holds no capability in any set, runs under seccomp with no_new_privs,
# and never makes a packet socket itself; killing either process ends the other, and the
# next start comes up clean (a blktrace left behind is torn down).
. "$(dirname "$0")/lib.sh"

netns_pair
trap 'cleanup; loops_cleanup; netns_cleanup' EXIT
[ "$(id -u)" -eq 0 ] || skip "needs root (capabilities, RNDADDENTROPY, perf events, loop devices, packet sockets)"
id -u entropyd > /dev/null 2>&1 || skip "needs the user entropyd, without which entropyd does not start (contrib/dev.sh and the package make it)"
for tool in strace losetup setpriv; do
	command -v "$tool" > /dev/null || skip "needs $tool"
done
HOSTILE=$top_builddir/tests/helpers/privhostile
# LeakSanitizer cannot run in a process under ptrace: in a sanitizer build the runs of
# privhostile under strace are checked by ASan and UBSan but not for leaks.
traced_env=
if [ -n "${ENTROPYD_SANITIZERS:-}" ]; then
	echo "SKIP: a sanitizer build: no leak check of privhostile under strace (LeakSanitizer cannot run under ptrace)"
	traced_env="ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0"
fi
export RUNTIME_DIRECTORY=$T/run # the blktrace state file: this test's own
mkdir -p "$T/run" "$T/hin"

# ---- a compromised collector: the ceiling ----
# Two input nodes, 64 bits/s each, the other classes disabled: the ceiling is 128 bits/s.
mkfifo "$T/hin/event0" "$T/hin/event1"
cat > "$T/h.conf" <<EOF
policy = { input = { mode = "trusted"; cap_bits_per_second = 64.0; };
           block = { mode = "disabled"; }; network = { mode = "disabled"; }; };
sources = { input = { watch = "$T/hin"; }; };
EOF
RATE=128
env $traced_env strace -f -qq -e trace=ioctl -o "$T/hs" "$HOSTILE" "$T/h.conf" credit 3 > "$T/hout" 2> "$T/herr" ||
	fail "privhostile credit: $(cat "$T/hout" "$T/herr")"
read -r asked credited secs <<< "$(sed -E 's/.* ([0-9]+) bits asked, ([0-9]+) credited in ([0-9.]+) s.*/\1 \2 \3/' "$T/hout")"
kernel=$(grep -oE 'RNDADDENTROPY, \{entropy_count=[0-9]+' "$T/hs" | awk -F= '{ s += $2 } END { print s + 0 }')
[ "$kernel" -eq "$credited" ] || fail "the kernel was given $kernel bits, the replies said $credited"
grep -qE 'RNDADDENTROPY.* = -1' "$T/hs" && fail "an RNDADDENTROPY failed: $(grep -m1 ' = -1' "$T/hs")"
# The bucket starts with one second's worth, as the collector's own caps do.
awk -v c="$credited" -v r="$RATE" -v t="$secs" 'BEGIN { exit !(c <= r * (t + 1) + 1) }' ||
	fail "$credited bits credited in $secs s, over the ceiling of $RATE bits/s (and a second's worth)"
# The ceiling is the rate, not less: an honest collector at the caps is never clipped.
awk -v c="$credited" -v r="$RATE" -v t="$secs" 'BEGIN { exit !(c >= 0.8 * r * t) }' ||
	fail "only $credited bits credited in $secs s at a ceiling of $RATE bits/s"
[ "$asked" -gt $((credited * 100)) ] || fail "the forged credit was not much more than the ceiling: $asked"
grep -q "credit ceiling: .* bits asked were not credited (the data was mixed)" "$T/herr" ||
	fail "clipping not logged"
pass "forged credit: $asked bits asked, $credited credited in $secs s (ceiling $RATE bits/s), as strace shows"

# A collector that makes more input nodes (FIFOs: it is uid 0) gains nothing by them: only
# the input major's character devices count when they appear, other nodes only if they
# were there at start.
"$HOSTILE" "$T/h.conf" credit 2 "$T/hin" > "$T/hout" 2> "$T/herr" ||
	fail "privhostile credit with more nodes: $(cat "$T/hout" "$T/herr")"
[ -p "$T/hin/event107" ] || fail "privhostile made no FIFOs"
read -r asked credited secs <<< "$(sed -E 's/.* ([0-9]+) bits asked, ([0-9]+) credited in ([0-9.]+) s.*/\1 \2 \3/' "$T/hout")"
awk -v c="$credited" -v r="$RATE" -v t="$secs" 'BEGIN { exit !(c <= r * (t + 1) + 1) }' ||
	fail "with 8 FIFOs made after start: $credited bits credited in $secs s, over $RATE bits/s"
rm -f "$T"/hin/event1??
pass "8 input FIFOs made by the collector after start: still $credited bits in $secs s"

# ---- a compromised collector: messages that break the protocol ----
# The block tests' lock before a loop device is taken: t_block detaches and re-attaches its
# own, and losetup --find could hand one of those out in between.
block_lock 900 || fail "another block test held $BLOCK_LOCK for 900 s: $(lock_users "$BLOCK_LOCK")"
new_loop L
N=${L#/dev/}
read -r MAJ MIN <<< "$(tr ':' ' ' < "/sys/block/$N/dev")"
cat > "$T/n.conf" <<EOF
policy = { input = { mode = "disabled"; }; block = { mode = "trusted"; }; };
sources = { block = { backend = "blktrace"; devices = [ "none-such" ]; };
            network = { interfaces = [ "lo" ]; }; };
EOF
KINDS=0
hostile() { # hostile CONFIG CASE: closed, no descriptor, nothing privileged done
	KINDS=$((KINDS + 1))
	env $traced_env strace -f -qq -e trace=ioctl,perf_event_open,socket -o "$T/hs" "$HOSTILE" "$1" "$2" > "$T/hout" 2>&1 ||
		fail "$2: $(cat "$T/hout")"
	grep -q "^PASS: $2: connection closed, no descriptor" "$T/hout" || fail "$2: $(cat "$T/hout")"
	grep -qE "RNDADDENTROPY|RNDRESEEDCRNG|BLKTRACE|perf_event_open\(|AF_PACKET" "$T/hs" &&
		fail "$2: something privileged was done: $(grep -E "RND|BLK|perf|PACKET" "$T/hs" | head -2)"
	return 0
}
for c in oversized truncated short unknown-type unknown-version size-lie bits-beyond-bytes \
	negative-bits too-many-bytes perf-no-such-cpu perf-bad-kind blktrace-path \
	blktrace-stop-foreign notify-unprintable notify-unterminated with-descriptor \
	packet-stream packet-protocol packet-no-interface input-path input-not-event; do
	hostile "$T/n.conf" "$c"
done
pass "bad messages ($KINDS kinds) close the connection, hand over nothing, do nothing privileged"
# Well-formed requests that the configuration does not allow: what an honest collector sends
# when the file was edited between its reload and the privileged process's. Refused, nothing
# privileged done, and the connection stays (editing a file must not end the daemon).
KINDS=0
refused() { # refused CONFIG CASE
	KINDS=$((KINDS + 1))
	env $traced_env strace -f -qq -e trace=ioctl,perf_event_open,socket -o "$T/hs" "$HOSTILE" "$1" refused "$2" > "$T/hout" 2>&1 ||
		fail "$2: $(cat "$T/hout")"
	grep -q "^PASS: $2: refused twice (EACCES), no descriptor, connection kept; exit 0" "$T/hout" ||
		fail "$2: $(cat "$T/hout")"
	grep -qE "RNDADDENTROPY|RNDRESEEDCRNG|BLKTRACE|perf_event_open\(|AF_PACKET" "$T/hs" &&
		fail "$2: something privileged was done: $(grep -E "RND|BLK|perf|PACKET" "$T/hs" | head -2)"
	grep -q "privileged process: refused .*was $1 changed since the last reload" "$T/hout" ||
		fail "$2: the refusal was not said: $(cat "$T/hout")"
	return 0
}
refused "$T/n.conf" "blktrace:$N:$MAJ:$MIN"          # a disk the configuration does not name
refused "$T/n.conf" perf                             # the tracepoint, under backend blktrace
sed -i "s/none-such/$N/" "$T/n.conf"
refused "$T/n.conf" "blktrace:$N:$MAJ:$((MIN + 1))"  # named, but not that device number
refused "$T/h.conf" packet                           # the network class disabled
sed 's/"lo"/"auto"/' "$T/n.conf" > "$T/a.conf"
refused "$T/a.conf" packet                           # lo, which "auto" does not select
# The positive control: the same request, the network class enabled, gets its socket.
"$HOSTILE" "$T/n.conf" packet > "$T/hout" 2>&1 || fail "packet: $(cat "$T/hout")"
pass "requests the configuration does not allow ($KINDS kinds) are refused, the connection kept, nothing privileged done; a valid one gets its packet socket"

# More packet sockets than interfaces selected: each new one for lo makes the one before
# deaf for good (a locked drop-all filter), so at most one per interface hears anything; and
# past one per interface and two spare, each further request is refused (EAGAIN).
"$HOSTILE" "$T/n.conf" packets 8 > "$T/hout" 2>&1 || fail "packets: $(cat "$T/hout")"
pass "$(grep -o 'packets: .*' "$T/hout")"

# A flood of perf events: 2,000 disk events asked for on CPU 0, each enabled with no device
# filter (so every completion of every disk runs them). The budget (one per disk selected,
# here $N, and two spare) comes; the rest is refused with EAGAIN, and the kernel holds that
# many. What that costs another disk: direct reads of a second loop device while the events
# are held, against the same reads before and after (reported, not asserted: a shared
# machine's times move; the assertion is the count the kernel holds).
sed 's/backend = "blktrace"/backend = "tracepoint"/' "$T/n.conf" > "$T/p.conf"
grep -q "devices = \[ \"$N\" \]" "$T/p.conf" || fail "p.conf does not select $N: $(cat "$T/p.conf")"
new_loop M
dio_ns() { "$DIO" -r 5000 -w 0 "$M" | sed -n 's/.* ns=\([0-9]*\)$/\1/p'; }
dio_ns > /dev/null # the device's first reads, apart
base1=$(dio_ns)
mkfifo "$T/hold"
"$HOSTILE" "$T/p.conf" perfs 2000 hold < "$T/hold" > "$T/hout" 2> "$T/herr" &
HOLDER=$!
exec 8> "$T/hold"
wait_for 30 grep -q '^perfs: ' "$T/hout" || fail "perfs: $(cat "$T/hout" "$T/herr")"
# One disk event for $N and two spare at once, and one more every 10 s the flood took.
read -r got secs <<< "$(sed -nE 's/^perfs: ([0-9]+) of 2000 handed over and enabled, ([0-9]+) refused with EAGAIN, 0 otherwise; \1 perf events held; in ([0-9.]+) s$/\1 \3/p' "$T/hout")"
[ -n "$got" ] || fail "the perf flood: $(cat "$T/hout")"
want=$((1 + 2))
most=$(awk -v w="$want" -v t="$secs" 'BEGIN { printf "%d", w + int(t / 10) }')
[ "$got" -ge "$want" ] && [ "$got" -le "$most" ] ||
	fail "the perf flood: $got handed over in $secs s, not $want (at most $most): $(cat "$T/hout")"
held=$(ls -l "/proc/$HOLDER/fd" | grep -c 'anon_inode:\[perf_event\]')
[ "$held" -eq "$got" ] || fail "the kernel lists $held perf events held by the flood, not $got"
flood=$(dio_ns)
exec 8>&-
wait "$HOLDER" || fail "perfs: $(cat "$T/hout" "$T/herr")"
base2=$(dio_ns)
grep -q "asked for more disk perf events on CPU 0 than it needs" "$T/herr" ||
	fail "the refusal was not logged: $(cat "$T/herr")"
ratio=$(awk -v f="$flood" -v a="$base1" -v b="$base2" 'BEGIN { printf "%.2f", 2 * f / (a + b) }')
pass "a flood of 2,000 perf events: $got handed over (the budget), $((2000 - got)) refused (EAGAIN) in $secs s, $held held in the kernel; 5,000 direct reads of another loop device took $ratio times as long as beside none"

# Input nodes the privileged process must not open for a collector: a symlink out of the
# watched directory, a block device, a file root does not own, a character device of another
# driver, a file with a second link: each refused (EACCES), no descriptor, the connection kept.
mkdir -p "$T/iw"
ln -s /etc/shadow "$T/iw/event1"
mknod "$T/iw/event2" b 7 0
echo x > "$T/iw/event3" && chown nobody "$T/iw/event3"
mknod "$T/iw/event4" c 1 3
echo x > "$T/iw/event5" && ln "$T/iw/event5" "$T/iw/event5b"
printf 'sources = { input = { watch = "%s"; }; };\n' "$T/iw" > "$T/i.conf"
for c in event1 event2 event3 event4 event5; do
	"$HOSTILE" "$T/i.conf" refused "input:$c" > "$T/hout" 2>&1 || fail "input:$c: $(cat "$T/hout")"
done
mkfifo "$T/iw/event6"
"$HOSTILE" "$T/i.conf" refused "input:event6" > "$T/hout" 2>&1 &&
	fail "input:event6, a FIFO root made there, was refused"
pass "input nodes refused: a symlink to /etc/shadow, a block device, a file of another owner, /dev/null's major, a file with two links; a root FIFO opened"

# ---- the daemon, all three classes ----
make_link
daemon_in_ns
mkdir -p "$T/input"
mkfifo "$T/input/event0"
cat > "$T/e.conf" <<EOF
feed = { mode = "always"; };
sources = { input = { watch = "$T/input"; };
            block = { backend = "tracepoint"; devices = [ "$N" ]; };
            network = { interfaces = [ "$VB" ]; }; };
control = { socket = "$CTL_SOCKET"; };
EOF
# A descriptor the launcher leaves open (fd 251, as a shell's) reaches neither process.
exec 251< /dev/null
start_daemon -v -f "$T/e.conf"
exec 251<&-
started_capturing "$VB"
wait_for 5 grep -q "block/$N: attached" "$T/log" || fail "$N not attached"
wait_for 5 grep -q "input/event0: attached" "$T/log" || fail "the FIFO not attached"
open_fifo "$T/input/event0"
"$EVGEN" -n 500 -p random >&9 2> /dev/null || fail "evgen"
send 200 100
"$DIO" -r 200 -w 0 -s 3 "$L" > /dev/null || fail "dio"
wait_summary "input/event0: .* 500 events" || fail "input events not counted"

COLLECTOR=$(pgrep -P "$DAEMON_PID")
[ "$(echo "$COLLECTOR" | wc -w)" -eq 1 ] || fail "want one collector, the children are: $COLLECTOR"
if command -v jq > /dev/null; then
	pid=$("$ENTROPYCTL" --socket "$CTL_SOCKET" --json status | jq .daemon.pid)
	[ "$pid" = "$DAEMON_PID" ] || fail "status names pid $pid, not the main process $DAEMON_PID"
fi
[ -z "$(pgrep -P "$COLLECTOR")" ] || fail "the collector has children"
# The collector's user: the system user entropyd (dev.sh and the package make it), its own
# group, no supplementary group; all four ids of each.
uid=$(id -u entropyd)
gid=$(id -g entropyd)
[ "$(awk '$1 == "Uid:" { print $2, $3, $4, $5 }' "/proc/$COLLECTOR/status")" = "$uid $uid $uid $uid" ] ||
	fail "the collector's uids: $(grep Uid: "/proc/$COLLECTOR/status"), want $uid"
[ "$(awk '$1 == "Gid:" { print $2, $3, $4, $5 }' "/proc/$COLLECTOR/status")" = "$gid $gid $gid $gid" ] ||
	fail "the collector's gids: $(grep Gid: "/proc/$COLLECTOR/status"), want $gid"
[ -z "$(awk '$1 == "Groups:" { print $2 }' "/proc/$COLLECTOR/status")" ] ||
	fail "the collector has supplementary groups: $(grep Groups: "/proc/$COLLECTOR/status")"
grep -q "collector: user entropyd, no supplementary groups" "$T/log" || fail "the collector's user is not logged"
who="user entropyd ($uid:$gid), no supplementary group"
# What it holds: no launcher's descriptor, nothing but the log, /dev/null, sockets, pipes,
# perf events, inotify and epoll, the input FIFO, and /dev/random write-only (the feed's
# watch of the kernel's poll answers; writing it mixes without credit, as any user may).
for p in "$DAEMON_PID" "$COLLECTOR"; do
	[ -e "/proc/$p/fd/251" ] && fail "process $p kept the launcher's fd 251"
done
odd=$(ls -l "/proc/$COLLECTOR/fd" | awk 'NR > 1 { print $NF }' |
	grep -vE "^(socket|pipe|anon_inode):|^/dev/(null|random)$|^$T/log$|^$T/input/event0$" || true)
mode=$(for f in /proc/"$COLLECTOR"/fd/*; do
	[ "$(readlink "$f")" != /dev/random ] || awk '/^flags:/ { print $2 }' "/proc/$COLLECTOR/fdinfo/${f##*/}"
done)
[ -z "$mode" ] || [ $((0$mode & 3)) -eq 1 ] || fail "the collector holds /dev/random other than write-only (flags $mode)"
[ -z "$odd" ] || fail "the collector holds: $odd"
# Not yet its own namespaces (entropyd(8) says so): the same root as the privileged process.
[ "$(readlink "/proc/$COLLECTOR/root")" = / ] || fail "the collector's root: $(readlink "/proc/$COLLECTOR/root")"
pass "the collector: $who, no descriptor of the launcher's, only sockets, pipes, perf events, inotify, the log"
field() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; } # field PID NAME
sys_admin() { echo $(( (0x$(field "$1" CapEff) | 0x$(field "$1" CapPrm)) >> 21 & 1 )); }
[ "$(sys_admin "$DAEMON_PID")" = 1 ] && [ "$(sys_admin "$COLLECTOR")" = 0 ] ||
	fail "CAP_SYS_ADMIN: privileged process $(field "$DAEMON_PID" CapEff), collector $(field "$COLLECTOR" CapEff)"
for f in CapEff CapPrm; do
	[ "$(field "$DAEMON_PID" $f)" = 0000000000202020 ] ||
		fail "the privileged process's $f is $(field "$DAEMON_PID" $f), want CAP_SYS_ADMIN, CAP_NET_RAW and CAP_KILL"
done
for f in CapEff CapPrm CapInh CapAmb CapBnd; do
	[ "$(field "$COLLECTOR" $f)" = 0000000000000000 ] || fail "the collector's $f is $(field "$COLLECTOR" $f)"
done
[ "$(field "$COLLECTOR" Seccomp)" = 2 ] || fail "the collector's Seccomp is $(field "$COLLECTOR" Seccomp)"
[ "$(field "$COLLECTOR" NoNewPrivs)" = 1 ] || fail "the collector's NoNewPrivs is $(field "$COLLECTOR" NoNewPrivs)"

# What each process holds: socket inodes from /proc/PID/fd against /proc/net/packet and the
# control socket's entry in /proc/net/unix; perf rings from /proc/PID/maps.
sockets() { ls -l "/proc/$1/fd" | grep -oE 'socket:\[[0-9]+\]' | tr -dc '0-9\n' | sort -u; }
packet=$(awk 'NR > 1 { print $9 }' "/proc/$DAEMON_PID/net/packet" | sort -u)
control=$(awk -v p="$CTL_SOCKET" '$8 == p { print $7 }' "/proc/$DAEMON_PID/net/unix")
[ -n "$packet" ] && [ -n "$control" ] || fail "no packet socket ($packet) or control socket ($control) found"
# The privileged process keeps its own descriptor of each packet socket it handed out (to
# make it deaf if another is asked for the same interface): one, the collector's.
held=$(comm -12 <(sockets "$DAEMON_PID") <(echo "$packet"))
[ "$(echo "$held" | grep -c .)" -le 1 ] || fail "the privileged process holds packet sockets $held, want at most one (one interface)"
[ -z "$(comm -23 <(echo "$held" | grep .) <(sockets "$COLLECTOR"))" ] || fail "the privileged process holds a packet socket the collector has not"
[ -n "$(comm -12 <(sockets "$COLLECTOR") <(echo "$packet"))" ] || fail "the collector holds no packet socket"
sockets "$DAEMON_PID" | grep -qx "$control" && fail "the privileged process holds the control socket"
sockets "$COLLECTOR" | grep -qx "$control" || fail "the collector does not hold the control socket"
grep -q perf_event "/proc/$DAEMON_PID/maps" && fail "the privileged process maps a perf ring"
ls -l "/proc/$DAEMON_PID/fd" | grep -q perf_event && fail "the privileged process holds a perf event"
grep -q perf_event "/proc/$COLLECTOR/maps" || fail "the collector maps no perf ring"
pass "one process with CAP_SYS_ADMIN (and CAP_NET_RAW, CAP_KILL), holding no control socket or perf ring, and no packet socket but its copy of the collector's; the collector: no capability in any set, Seccomp 2, NoNewPrivs 1, the packet socket, the control socket, the rings"

# A capture that opens again: the packet socket is made by the privileged process only.
strace -f -qq -e trace=socket -o "$T/st" -p "$DAEMON_PID" -p "$COLLECTOR" 2> /dev/null &
STRACE_PID=$!
traced "$DAEMON_PID" "$COLLECTOR"
n=$(grep -c "network/$VB: capturing" "$T/log")
ip -n "$NB" link set "$VB" down
wait_for 5 grep -q "network/$VB: .*down" "$T/log" || true
ip -n "$NB" link set "$VB" up
wait_for 10 captures "$VB" $((n + 1)) || fail "capture not opened again"
kill "$STRACE_PID"; wait "$STRACE_PID" 2> /dev/null
grep -q "^$DAEMON_PID .*socket(AF_PACKET" "$T/st" || fail "the privileged process made no packet socket: $(cat "$T/st")"
grep -qE "^$COLLECTOR .*socket\(AF_PACKET" "$T/st" && fail "the collector made a packet socket itself"
pass "a capture opened again: its packet socket made by the privileged process, never by the collector"

# ---- either process killed: the other goes; the next start is clean ----
kill -KILL "$COLLECTOR"
rc=0; timeout 5 tail --pid="$DAEMON_PID" -f /dev/null || fail "the privileged process outlived the collector"
wait "$DAEMON_PID" || rc=$?
[ "$rc" -eq 4 ] || fail "the privileged process exited $rc after the collector was killed, want 4"
grep -q "the collector was killed by signal 9" "$T/log" || fail "the collector's death not said"
DAEMON_PID=
start_daemon -v -f "$T/e.conf"
started_capturing "$VB"
# As a privileged process killed while it traced a disk would leave it: a trace, listed.
"$BLKT" leave "$L" || fail "blkt could not leave a trace on $L"
printf '# entropyd\n%s:%s %s\n' "$MAJ" "$MIN" "$N" > "$T/run/blktrace.state"
kill_daemon KILL # fails naming the collector if it outlives the privileged process
start_daemon -v -f "$T/e.conf"
grep -q "block/$N: tore down a blktrace left by an entropyd that did not exit cleanly" "$T/log" ||
	fail "the trace left behind was not torn down"
[ "$(cat "/sys/block/$N/trace/enable")" = 0 ] || fail "the trace left behind is still there"
started_capturing "$VB"
wait_for 5 grep -q "block/$N: attached" "$T/log" || fail "$N not attached after the restart"
"$ENTROPYCTL" --socket "$CTL_SOCKET" status > /dev/null || fail "no status after the restart (stale socket?)"
exec 9>&-
stop_daemon
grep -q "privileged process: .* bits asked, .* credited, 0 clipped by the ceiling" "$T/log" ||
	fail "an honest collector was clipped: $(grep "privileged process:" "$T/log")"
pass "collector killed: the privileged process exits 4; privileged process killed: the collector goes; restarts clean, the trace left behind torn down"

# ---- a compromised collector, inside the real one ----
# What an exploit of one of its parsers could do: the calls made from inside the running
# collector (tests/helpers/intrude, a ptrace of it from root: its user, capability sets,
# NoNewPrivs, filters and namespaces all apply to them). Each must fail. The same list runs
# under the unit (t_system) and in the initramfs guest (tests/guest/initramfs.sh).
INTRUDE=$top_builddir/tests/helpers/intrude
. "$top_srcdir/tests/helpers/intrusions.sh"
# The list is this test's last part: where intrude cannot run, the rest has passed.
if why=$(intrude_unknown); then
	echo "SKIP: a compromised collector's attempts from inside: $why"
	exit 0
fi
mkdir -p "$T/input"
[ -p "$T/input/event0" ] || mkfifo "$T/input/event0"
start_daemon -v -f "$T/e.conf"
COLLECTOR=$(pgrep -P "$DAEMON_PID")
install -m 0000 /dev/null "$T/secret"
python3 -c 'import os, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o600); s.listen()
time.sleep(120)' "$T/root.sock" &
LISTENER=$!
wait_for 5 test -S "$T/root.sock" || fail "no root-only socket to try"
cp "$T/e.conf" "$T/e.conf.orig"
# What the collector sees, from outside: its own mount and PID namespaces, a root with only
# the bound paths, none writable but record.dir, and a /proc with itself alone.
if grep -q "collector: its own PID and mount namespaces" "$T/log"; then
	for ns in mnt pid; do
		[ "$(readlink "/proc/$COLLECTOR/ns/$ns")" != "$(readlink "/proc/$DAEMON_PID/ns/$ns")" ] ||
			fail "the collector shares the privileged process's $ns namespace"
	done
	top=$(ls -A "/proc/$COLLECTOR/root" | tr '\n' ' ')
	want="dev etc proc run sys ${T#/}"
	want=$(echo "$want" | tr ' ' '\n' | cut -d/ -f1 | sort -u | tr '\n' ' ')
	[ "$top" = "$want" ] || fail "the collector's root holds '$top', not '$want'"
	touch "/proc/$COLLECTOR/root/x" 2> /dev/null && fail "the collector's root is writable"
	touch "/proc/$COLLECTOR/root/etc/entropyd-hostile" 2> /dev/null && fail "its /etc is writable"
	touch "/proc/$COLLECTOR/root$T/x" 2> /dev/null && fail "its view of $T is writable"
	procs=$(ls "/proc/$COLLECTOR/root/proc" | grep -E '^[0-9]+$' | tr '\n' ' ')
	[ "$procs" = "1 " ] || fail "the collector's /proc lists processes '$procs', not itself (1) alone"
	grep -q " /proc proc ro," "/proc/$COLLECTOR/mounts" || fail "the collector's /proc is not read-only"
	pass "the collector: its own mount and PID namespaces, root ${top% }, read-only; /proc shows process 1 (itself) only"
	# The walls, as the log gives them at start and status shows them (JSON and text).
	abi=$(sed -n 's/.*collector: Landlock (ABI \([0-9]*\)).*/\1/p' "$T/log")
	landlock="no Landlock"
	[ -z "$abi" ] || landlock="Landlock ABI $abi"
	walls="user entropyd ($uid:$gid), its own PID namespace, its own mount namespace, a read-only view (recursive), $landlock, system call filter"
	grep -q "notice: collector: walls: $walls$" "$T/log" || fail "the walls not logged: $(grep 'walls:' "$T/log")"
	if command -v jq > /dev/null; then
		"$ENTROPYCTL" --socket "$CTL_SOCKET" --json status |
			jq_holds --argjson u "$uid" --argjson g "$gid" --argjson a "${abi:-null}" '.collector ==
			{user: "entropyd", uid: $u, gid: $g, bounding_set_empty: true, no_new_privs: true,
			 pid_namespace: true, mount_namespace: true, read_only: "recursive",
			 landlock_abi: $a, seccomp: true, missing: []}' > /dev/null ||
			fail "status's collector: $("$ENTROPYCTL" --socket "$CTL_SOCKET" --json status | jq -c .collector)"
	fi
	line="collector: user entropyd ($uid:$gid), its own PID and mount namespaces, read-only view recursive, $landlock, system call filter"
	"$ENTROPYCTL" --socket "$CTL_SOCKET" status | grep -qxF "$line" ||
		fail "status's walls: $("$ENTROPYCTL" --socket "$CTL_SOCKET" status | grep '^collector')"
	pass "the walls, logged and in status: $walls"
else
	[ "$(id -u)" -eq 0 ] && fail "running as root, yet the collector has no namespaces: $(grep "collector: cannot" "$T/log")"
	echo "SKIP: the collector has no namespaces of its own here"
fi
# The list (the first line is the positive control: the calls run in the collector, as its
# user), then what only a start by hand has to try: the test's files and processes.
attempts=$T/intrusions
perf_held() { ls -l "/proc/$1/fd" | grep -c 'anon_inode:\[perf_event\]'; }
held0=$(perf_held "$COLLECTOR")
# An interface beside $VB that the configuration does not select, up in the same namespace.
ip -n "$NB" link add "edpx$$" type veth peer name "edpy$$" || fail "no second interface in $NB"
ip -n "$NB" link set "edpx$$" up && ip -n "$NB" link set "edpy$$" up
OTHER=$(ip -n "$NB" -o link show dev "edpx$$" | cut -d: -f1)
intrusions "$COLLECTOR" "$uid" "$T/e.conf" "$T/secret" \
	"$T/root.sock" "$L" "$OTHER" > "$attempts"
# The perf flood from inside: the collector holds its own events (an owner, a waker and one
# for $N per CPU) and got at most the two spare disk events of CPU 0 more; the kernel says so.
held1=$(perf_held "$COLLECTOR")
got=$(sed -n 's/^ok: a flood of perf events: -11 EAGAIN (after \([0-9]*\) handed over)$/\1/p' "$attempts")
[ -n "$got" ] && [ "$got" -le 2 ] && [ $((held1 - held0)) -eq "$got" ] ||
	fail "the perf flood from inside: $(grep 'perf events' "$attempts"); the collector held $held0 perf events, then $held1"
grep -q '^ok: binding the capture to an interface not selected' "$attempts" ||
	fail "the packet socket's attempts did not run: $(cat "$attempts")"
if grep -q "collector: Landlock" "$T/log"; then
	# Any user may write /tmp; Landlock keeps the collector from making anything there.
	attempt "$COLLECTOR" "creating a file in /tmp (Landlock)" open "/tmp/entropyd-hostile.$$" new >> "$attempts"
fi
if grep -q "collector: its own PID and mount namespaces" "$T/log"; then
	# Any user may read another's status; the collector's PID namespace has no such process.
	attempt "$COLLECTOR" "reading the privileged process's status" open "/proc/$DAEMON_PID/status" r >> "$attempts"
	attempt "$COLLECTOR" "reading the test's status" open "/proc/$$/status" r >> "$attempts"
	attempt "$COLLECTOR" "opening /usr (outside its root)" open /usr r >> "$attempts"
fi
attempt "$COLLECTOR" "opening the privileged process's memory" open "/proc/$DAEMON_PID/mem" rw >> "$attempts"
sed 's/^/  /' "$attempts"
for f in /etc/entropyd-intruder /run/entropyd-intruder; do
	[ -e "$f" ] && { rm -f "$f"; fail "the collector made $f"; }
done
[ -e "/tmp/entropyd-hostile.$$" ] && { rm -f "/tmp/entropyd-hostile.$$"; fail "the collector made a file in /tmp"; }
cmp -s "$T/e.conf" "$T/e.conf.orig" || fail "the configuration changed"
[ "$(stat -c %a "$T/secret")" = 0 ] || fail "the root file's mode changed"
grep -q '^ok: the calls run in the collector' "$attempts" || fail "the calls did not run in the collector"
[ "$INTRUSIONS_BAD" -eq 0 ] || fail "from inside the collector: $(grep '^BAD' "$attempts" | tr '\n' ' ')"
kill "$LISTENER" 2> /dev/null
# What the capture hears after those attempts: the frames of $VB alone. 300 datagrams to it
# and 1,000 over lo and over the other interface of its namespace (each seen there twice,
# out and in): exactly 300 events, once what the kernel held has been handed over. Static
# neighbours for the senders: no ARP reply to count.
for s in ${SOURCES//,/ }; do
	ip -n "$NB" neigh replace "$s" lladdr "$(mac "$NA" "$VA")" dev "$VB" nud permanent
done
send 300 100
send 1000 20 127.0.0.1 9999 127.0.0.1 "$NB"
# Out of edpx$$ and into edpy$$, its peer (not an address of the namespace: a frame on the
# wire, not on lo).
ip -n "$NB" addr add 10.78.0.1/24 dev "edpx$$" &&
	ip -n "$NB" neigh replace 10.78.0.9 lladdr "$(mac "$NB" "edpy$$")" dev "edpx$$" nud permanent ||
	fail "no address on edpx$$"
send 1000 20 10.78.0.1 9999 10.78.0.9 "$NB"
events "$VB" 300
pass "after the attempts, the capture hears $VB alone: 300 of its datagrams counted, none of 1,000 over lo or 1,000 out of edpx$$ into edpy$$"
# Last, as it ends the collector: lowering a root process's limits (the privileged
# process's; pid 1 in its own PID namespace is the collector itself) is a call outside its
# filter (prlimit64 on another pid), which kills it.
last=$(attempt_last "$COLLECTOR" "$DAEMON_PID")
echo "  $last"
[ "$INTRUSIONS_BAD" -eq 0 ] && case $last in ok:*) ;; *) false ;; esac ||
	fail "the collector survived prlimit64 on the privileged process: $last"
timeout 5 tail --pid="$COLLECTOR" -f /dev/null || fail "the collector is still there after prlimit64"
wait "$DAEMON_PID" 2> /dev/null; DAEMON_PID=
grep -q "the collector was killed by signal 31" "$T/log" || fail "the collector was not killed by its filter (SIGSYS)"
# And, in a collector started again, a signal to the privileged process.
start_daemon -v -f "$T/e.conf"
COLLECTOR=$(pgrep -P "$DAEMON_PID")
last=$(attempt_last "$COLLECTOR" "$DAEMON_PID" tgkill)
echo "  $last"
case $last in ok:*) ;; *) fail "the collector survived a signal to the privileged process: $last" ;; esac
timeout 5 tail --pid="$COLLECTOR" -f /dev/null || fail "the collector is still there after tgkill"
wait "$DAEMON_PID" 2> /dev/null; DAEMON_PID=
grep -q "the collector was killed by signal 31" "$T/log" || fail "the collector was not killed by its filter (SIGSYS) on tgkill"
pass "from inside the collector, each failed: $(sed -n 's/^ok: \([^:]*\):.*/\1/p' "$attempts" | paste -sd, | sed 's/,/, /g'); prlimit64 on the privileged process killed it (SIGSYS), and so did a signal to it"

# ---- a collector that stops reading: the privileged process never waits on it ----
# From inside the collector: one request, its reply never read, the collector held stopped
# (deaf to signals, as one that ignores SIGTERM); SIGTERM to the daemon, as systemctl stop
# sends it, ends it all the same: the collector killed once its grace is up, the teardown
# run (the privileged process's last line, the control socket removed).
stalled() { # stalled N [TERM] SAID: attempt_stall on a daemon started afresh, whose log must
	local r rc=0 # say SAID; the attempt's line in STALLED
	start_daemon -v -f "$T/e.conf"
	r=$(attempt_stall "$(pgrep -P "$DAEMON_PID")" "$DAEMON_PID" "$1" ${3:+"$2"})
	echo "  $r"
	case $r in ok:*) ;; *) fail "$r" ;; esac
	wait "$DAEMON_PID" || rc=$?
	DAEMON_PID=
	[ "$rc" -eq 4 ] || fail "$r: the daemon exited $rc, want 4"
	grep -q "privileged process: ${3:-$2}" "$T/log" || fail "$r: not said: $(grep 'privileged process' "$T/log")"
	grep -q "privileged process: .* bits asked, .* credited" "$T/log" || fail "$r: the privileged process's teardown did not run"
	[ -e "$CTL_SOCKET" ] && fail "$r: the control socket outlived the daemon"
	STALLED=$r
}
# Its grace is 2 s, and 30 s in a sanitizer build (entropyd(8)).
stalled 1 TERM "the collector did not end within [0-9]* s of the signal to stop"
r=$STALLED
# Many requests, no reply read: the replies' queue fills, and the privileged process, which
# sends without waiting, ends the collector at once as a failed one (no signal needed).
stalled 5000 "the collector does not read its replies (its queue is full): closing the connection"
r2=$STALLED
within() { echo "$1" | sed 's/.*ended within \([0-9.]* s\).*/\1/'; }
pass "a collector that stops reading: SIGTERM ends the daemon in $(within "$r") (its grace is 2 s, 30 s in a sanitizer build); one that never reads is ended at once ($(within "$r2"))"

# ---- never uid 0 ----
# Where /etc/passwd has no entropyd (a mount namespace of the test's), the start is refused,
# with how to create the user.
r=$(attempt_no_user "${REAL_ENTROPYD:-$ENTROPYD}" "$T/e.conf" entropyd)
echo "  $r"
case $r in ok:*) ;; *) fail "$r" ;; esac
pass "a start without the user entropyd: refused, saying how to create it"

# ---- fewer walls: a host as a container is, and an older kernel ----
# tests/helpers/nowalls: a seccomp filter under the daemon that answers Landlock with ENOSYS
# and refuses mount and PID namespaces (EPERM), as a container or RestrictNamespaces= does.
# The walls missing are warnings in the log and rows of status; the list of attempts runs
# again, to show what still holds there: the user and the system call filter.
NOWALLS=$top_builddir/tests/helpers/nowalls
if [ ! -x "$NOWALLS" ]; then
	echo "SKIP: fewer walls: tests/helpers/nowalls was not built (no libseccomp)"
	exit 0
fi
cat > "$T/w.conf" <<EOF
feed = { mode = "always"; };
sources = { input = { watch = "$T/input"; };
            block = { backend = "tracepoint"; devices = [ "$N" ]; }; };
policy = { network = { mode = "disabled"; }; };
control = { socket = "$CTL_SOCKET"; };
EOF
ENTROPYD=${REAL_ENTROPYD:-$ENTROPYD}
WRAP="$NOWALLS -l -n" start_daemon -v -f "$T/w.conf"
COLLECTOR=$(pgrep -P "$DAEMON_PID")
grep -q "warning: collector: cannot make a mount namespace of its own (Operation not permitted)" "$T/log" ||
	fail "no warning of the mount namespace refused: $(grep collector "$T/log")"
grep -q "warning: collector: walls: user entropyd ($uid:$gid), no PID namespace, no mount namespace (it sees the whole file system), no read-only view, no Landlock, system call filter; fewer than this host allows: no PID namespace of its own (Operation not permitted)" "$T/log" ||
	fail "the walls not logged as fewer: $(grep 'walls' "$T/log")"
if command -v jq > /dev/null; then
	"$ENTROPYCTL" --socket "$CTL_SOCKET" --json status |
		jq_holds '.collector | .pid_namespace == false and .mount_namespace == false and
			.read_only == "none" and .landlock_abi == null and .seccomp == true and
			(.missing | length) == 2' > /dev/null ||
		fail "status's collector, fewer walls: $("$ENTROPYCTL" --socket "$CTL_SOCKET" --json status | jq -c .collector)"
fi
"$ENTROPYCTL" --socket "$CTL_SOCKET" status | grep -q "^collector: WARNING: no mount namespace of its own (Operation not permitted)" ||
	fail "status shows no missing wall: $("$ENTROPYCTL" --socket "$CTL_SOCKET" status | grep '^collector')"
# Without its PID namespace the collector sees a client's real pid: the log names it.
"$ENTROPYCTL" --socket "$CTL_SOCKET" reload > /dev/null &
rpid=$!
wait "$rpid" || fail "reload, fewer walls"
grep -q "control: reload requested by uid 0, pid $rpid$" "$T/log" ||
	fail "the reload's real pid not logged: $(grep 'reload requested' "$T/log")"
python3 -c 'import os, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o600); s.listen()
time.sleep(120)' "$T/root2.sock" &
LISTENER=$!
wait_for 5 test -S "$T/root2.sock" || fail "no root-only socket to try"
INTRUSIONS_BAD=0
intrusions "$COLLECTOR" "$uid" "$T/w.conf" "$T/secret" "$T/root2.sock" "$L" "$OTHER" > "$T/intrusions-fewer" 2>&1
attempt "$COLLECTOR" "opening the privileged process's memory" open "/proc/$DAEMON_PID/mem" rw >> "$T/intrusions-fewer"
sed 's/^/  fewer walls: /' "$T/intrusions-fewer"
for f in /etc/entropyd-intruder /run/entropyd-intruder; do
	[ -e "$f" ] && { rm -f "$f"; fail "fewer walls: the collector made $f"; }
done
[ "$(stat -c %a "$T/secret")" = 0 ] || fail "fewer walls: the root file's mode changed"
[ "$INTRUSIONS_BAD" -eq 0 ] || fail "fewer walls, from inside the collector: $(grep '^BAD' "$T/intrusions-fewer" | tr '\n' ' ')"
kill "$LISTENER" 2> /dev/null
stop_daemon
# Below Linux 5.12 (no mount_setattr) a read-only bind covers its top mount only: said.
WRAP="$NOWALLS -s" start_daemon -v -f "$T/w.conf"
grep -q "warning: collector: mount_setattr: Function not implemented (Linux before 5.12): of each path it keeps, only the top mount is read-only" "$T/log" ||
	fail "no warning of the read-only view's top mounts only: $(grep collector "$T/log")"
"$ENTROPYCTL" --socket "$CTL_SOCKET" status | grep -q "^collector: .*, read-only view top-mounts, " ||
	fail "status: $("$ENTROPYCTL" --socket "$CTL_SOCKET" status | grep '^collector')"
stop_daemon
pass "fewer walls (no Landlock, no namespaces; no mount_setattr): each a warning and a status row; what still holds from inside the collector: $(sed -n 's/^ok: \([^:]*\):.*/\1/p' "$T/intrusions-fewer" | paste -sd, | sed 's/,/, /g')"
