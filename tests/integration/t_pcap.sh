#!/bin/bash
# t_pcap: the network source for real. Two network namespaces made here and joined by a veth
# pair (no traffic leaves them); tests/helpers/udpgen sends in one, entropyd --dry-run captures in the
# other. Exact packet counts from the SIGUSR1 summaries; nanosecond timestamps; an interface
# that goes down, is removed and comes back; lo; per-interface filter, direction and snaplen,
# and a reload changing one interface's, or only its filter (in place, nothing lost); no
# CAP_NET_RAW; the policies; the event cap; sampling in the kernel under a flood; savefiles.
# Needs root.
. "$(dirname "$0")/lib.sh"

netns_pair
command -v setpriv > /dev/null || skip "needs setpriv (util-linux)"
make_link
daemon_in_ns # the daemon runs in the capturing namespace

credited() { line "$1" | grep -oE '[0-9.]+ bits credited' | cut -d' ' -f1; }
estimated() { line "$1" | grep -oE '[0-9.]+ bits estimated' | cut -d' ' -f1; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b + 1e-9) }'; }
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }

# ---- live capture: exact counts, the filter, nanoseconds, reduced credit ----
conf "interfaces = [ \"$VB\" ]; filter = \"udp dst port 9999\"; quantum_ns = 1;"
start_daemon -vv --dry-run --record "$T/rec" -f "$T/e.conf"
started_capturing "$VB"
grep -qE "network/$VB: capturing \(snaplen 64, direction in, host timestamps, nanosecond precision" "$T/log" ||
	fail "capture parameters not as configured"
send 3000 50-500
send 500 0 "$SOURCES" 9998 # filtered out
wait_summary "network/$VB: kind veth, state open, backend pcap, policy reduced, health ok, .* 3000 events, 0 skipped" ||
	fail "3000 packets to port 9999 not counted exactly"
c=$(credited "$VB")
gt "$c" 0 || fail "reduced policy credited nothing for 3000 random-looking arrivals"
le "$c" "$(awk 'BEGIN { print 0.25 * 0.5 * (3000 - 1024) + 0.05 }')" || fail "reduced credit $c above 0.25 x cap x events"
pass "live: exactly 3000 of 3500 packets (filter), $c bits credited (reduced)"

# ---- down, up, removed, back: never fatal, shown as state ----
ip -n "$NB" link set "$VB" down
wait_summary "network/$VB: kind veth, state down, .* 3000 events" || fail "state down not shown"
ip -n "$NB" link set "$VB" up
wait_for 5 grep -q "network/$VB: is up" "$T/log" || fail "link up not seen"
wait_for 5 captures "$VB" 2 || fail "not reopened after up"
send 100 100
wait_summary "network/$VB: kind veth, state open, .* 3100 events, 0 skipped" || fail "no capture after up"
ip -n "$NA" link del "$VA"
wait_summary "network/$VB: kind veth, state gone, .* 3100 events" || fail "state gone not shown"
kill -0 "$DAEMON_PID" || fail "daemon died when the interface was removed"
make_link
wait_for 5 captures "$VB" 3 || fail "not reopened when it came back"
send 100 100
wait_summary "network/$VB: kind veth, state open, .* 3200 events, 0 skipped" || fail "no capture after the interface came back"
stop_daemon
pass "down, up, removed and back: states down/gone/open, counts carried on, no crash"

# Nanoseconds: the debug count (never a timing), and the recorded symbols at a 1 ns quantum.
# With microsecond stamps every interval would be a multiple of 1000 ns, hence of 8.
sub=$(sed -n "s/.*network\/$VB: 3200 packets, \([0-9]*\) with a timestamp finer than a microsecond.*/\1/p" "$T/log")
[ -n "$sub" ] && [ "$sub" -ge 3000 ] || fail "only '${sub}' of 3200 timestamps finer than a microsecond"
rec=$T/rec/network-$VB.bin
[ "$(stat -c %s "$rec")" -eq 3199 ] || fail "$(stat -c %s "$rec") symbols recorded, want 3199"
odd=$(od -A n -v -t u1 "$rec" | tr -s ' ' '\n' | awk 'NF && $1 % 8 { n++ } END { print n + 0 }')
[ "$odd" -ge 2000 ] || fail "only $odd of 3199 symbols are not multiples of 8: no nanoseconds?"
pass "nanosecond timestamps: $sub of 3200 finer than 1 us; $odd of 3199 symbols off the 8 ns grid"

# ---- one source dominating: credit weighted down to nothing ----
conf "interfaces = [ \"$VB\" ]; filter = \"udp dst port 9999\";"
start_daemon -v --dry-run -f "$T/e.conf"
started_capturing "$VB"
send 2000 50-500 10.77.0.11
wait_summary "network/$VB: kind veth, state open \(one source 100% of packets\), .* 2000 events" ||
	fail "dominant source not shown in the state"
[ "$(credited "$VB")" = "0.0" ] || fail "a single source earned $(credited "$VB") bits"
gt "$(estimated "$VB")" 0 || fail "nothing estimated"
# Weighed to zero by the rule, whatever else holds (the kernel that no longer counts, a pool
# full between feeds): flow first, with its figures; the state said once.
j=$("$ENTROPYCTL" -s "$CTL_SOCKET" --json sources | jq -c --arg n "$VB" '.sources[] | select(.name == $n)')
echo "$j" | jq_holds '.credit.reason == "flow" and .credit.weight == 0 and
	(.credit.reasons[0].detail | test("^one source 100% of packets: weight 0\\.00 \\(0 in force\\)$"))' > /dev/null ||
	fail "a flow weighed to zero is not the first reason: $j"
"$ENTROPYCTL" -s "$CTL_SOCKET" sources | grep -qx "  state       open (one source 100% of packets)" ||
	fail "sources: $("$ENTROPYCTL" -s "$CTL_SOCKET" sources | grep state)"
stop_daemon
pass "one source: state shows 100%, credit 0, the reason flow first"

# ---- the event cap: a burst of 1000 within a second, 100 allowed ----
conf "interfaces = [ \"$VB\" ]; filter = \"udp dst port 9999\"; max_events_per_second = 100;"
start_daemon --dry-run -f "$T/e.conf"
wait_for 5 grep -q "started:" "$T/log"
sleep 0.3
send 1000 0
wait_summary "network/$VB: .* 1000 events, 900 skipped, 800 bytes mixed" || fail "event cap: $(line "$VB")"
stop_daemon
pass "event cap: 1000 packets, 900 skipped, 100 timed"

# ---- direction: out, then both after a reload (a new capture); and lo ----
conf "interfaces = [ \"$VB\" ]; filter = \"udp dst port 9999\"; direction = \"out\";"
start_daemon -v --dry-run -f "$T/e.conf"
started_capturing "$VB"
send 300 100
send 200 100 0.0.0.0 9999 10.77.0.1 "$NB"
wait_summary "network/$VB: kind veth, state open[^,]*, .* 200 events, 0 skipped" || fail "direction out: $(line "$VB")"
conf "interfaces = [ \"$VB\" ]; filter = \"udp dst port 9999\"; direction = \"both\";"
kill -HUP "$DAEMON_PID"
wait_for 5 grep -q "configuration reloaded" "$T/log" || fail "reload"
wait_for 5 grep -q "network/$VB: capturing (snaplen 64, direction both" "$T/log" || fail "direction both not applied"
send 300 100
send 200 100 0.0.0.0 9999 10.77.0.1 "$NB"
wait_summary "network/$VB: kind veth, state open[^,]*, .* 700 events, 0 skipped" || fail "direction both: $(line "$VB")"
stop_daemon
# On lo every packet leaves and arrives; libpcap shows it once whatever the direction.
conf "interfaces = [ \"lo\" ]; filter = \"udp dst port 9999\";"
start_daemon -v --dry-run -f "$T/e.conf"
started_capturing lo
send 500 100 127.0.0.1 9999 127.0.0.1 "$NB"
wait_summary "network/lo: kind loopback, state open[^,]*, .* 500 events, 0 skipped" || fail "lo: $(line lo)"
stop_daemon
pass "direction out: 200 of 500; both (after a reload): 500 more; lo: 500 of 500"

# ---- per-interface capture settings: an entry (a glob) for the veth, the class's on lo ----
entry() { echo "instances = ( { name = \"edpb*\"; filter = \"$1\"; direction = \"both\"; snaplen = 96; } );"; }
conf "interfaces = [ \"$VB\", \"lo\" ]; filter = \"udp dst port 9999\"; $(entry "udp dst port 9998")"
start_daemon -v --dry-run -f "$T/e.conf"
started_capturing "$VB"
started_capturing lo
grep -qE "network/$VB: capturing \(snaplen 96, direction both, .*, filter \"udp dst port 9998\"\)" "$T/log" ||
	fail "the entry's settings not applied to $VB: $(grep "$VB: capturing" "$T/log")"
grep -qE "network/lo: capturing \(snaplen 64, direction in, .*, filter \"udp dst port 9999\"\)" "$T/log" ||
	fail "the class's settings not applied to lo: $(grep "lo: capturing" "$T/log")"
send 300 100 "$SOURCES" 9999                     # veth in, 9999: neither
send 70 100 127.0.0.1 9998 127.0.0.1 "$NB"       # lo, 9998: neither
send 200 100 "$SOURCES" 9998                     # veth in, 9998: the veth
send 100 100 0.0.0.0 9998 10.77.0.1 "$NB"        # veth out, 9998: the veth (both)
send 50 100 127.0.0.1 9999 127.0.0.1 "$NB"       # lo, 9999: lo
events "$VB" 300
events lo 50
pass "per interface: $VB (entry edpb*: port 9998, both, snaplen 96) 300 of 720; lo (class: port 9999, in) 50 of 720"

# A reload that changes the veth's filter sets it in place; lo's capture is left alone.
conf "interfaces = [ \"$VB\", \"lo\" ]; filter = \"udp dst port 9999\"; $(entry "udp dst port 9999")"
kill -HUP "$DAEMON_PID"
wait_for 5 grep -q "network/$VB: filter now \"udp dst port 9999\" (set in place)" "$T/log" ||
	fail "the new filter not applied to $VB"
[ "$(grep -c "network/$VB: capturing" "$T/log")" -eq 1 ] || fail "$VB was captured afresh for a new filter"
[ "$(grep -c "network/lo: capturing" "$T/log")" -eq 1 ] || fail "lo was captured afresh, its settings did not change"
send 100 100 "$SOURCES" 9998                     # veth in, 9998: no longer
send 150 100 "$SOURCES" 9999                     # veth in, 9999: the veth
send 40 100 0.0.0.0 9999 10.77.0.1 "$NB"         # veth out, 9999: the veth
send 20 100 127.0.0.1 9999 127.0.0.1 "$NB"       # lo, 9999: lo
events "$VB" 490
events lo 70
# A filter that does not compile: a configuration error with its file, line and key; the
# reload is refused whole and the captures in use stay.
conf "interfaces = [ \"$VB\", \"lo\" ]; filter = \"udp dst port 9999\"; $(entry "udp port banana")"
kill -HUP "$DAEMON_PID"
wait_for 5 grep -q "reload rejected" "$T/log" || fail "a reload with a bad filter not rejected"
grep -qE "$T/e.conf:[0-9]+: sources.network.instances\[0\].filter: \"udp port banana\" does not compile" "$T/log" ||
	fail "a bad filter in an entry not reported with file:line: $(grep -i filter "$T/log" | tail -2)"
send 30 100 "$SOURCES" 9999
events "$VB" 520
[ "$(grep -c "network/$VB: capturing" "$T/log")" -eq 1 ] || fail "$VB captured afresh with a bad filter"
[ "$(grep -c "network/$VB: filter now" "$T/log")" -eq 1 ] || fail "$VB's filter changed to a bad one"
[ "$(grep -c "network/lo: capturing" "$T/log")" -eq 1 ] || fail "lo captured afresh"
stop_daemon
out=$("$REAL_ENTROPYD" -n -f "$T/e.conf" 2>&1) && fail "entropyd -n accepted a bad filter"
echo "$out" | grep -qE "^$T/e.conf:[0-9]+: sources.network.instances\[0\].filter: \"udp port banana\" does not compile: .*unknown port" ||
	fail "entropyd -n on a bad filter: $out"
pass "reload: $VB's filter changed (in place, 190 more), lo untouched (20 more); a bad filter is a config error at file:line (reload refused, -n fails)"

# ---- a reload that changes only the filter loses nothing ----
# 5000 packets at about 1 kHz while SIGHUP alternates the filter every 0.5 s (both filters
# take the traffic): the filter is set on the running capture, so every packet counts, those
# the kernel held at each change too. Closing and reopening the capture lost most of them.
conf "interfaces = [ \"$VB\" ]; filter = \"udp dst port 9999\";"
start_daemon -v --dry-run -f "$T/e.conf"
started_capturing "$VB"
ip netns exec "$NA" "$UDPGEN" -d 10.77.0.2 -p 9999 -n 5000 -g 1000 -s "$SOURCES" -r "$RANDOM" 2> "$T/gen" &
gen=$!
flip=0
while kill -0 "$gen" 2> /dev/null; do
	if [ "$flip" -eq 0 ]; then f="udp"; else f="udp dst port 9999"; fi
	flip=$((1 - flip))
	conf "interfaces = [ \"$VB\" ]; filter = \"$f\";"
	kill -HUP "$DAEMON_PID"
	sleep 0.5
done
wait "$gen" || fail "udpgen: $(cat "$T/gen")"
sent=$(sed -n 's/.*sent=\([0-9]*\).*/\1/p' "$T/gen")
[ "$sent" = 5000 ] || fail "udpgen sent '$sent' of 5000"
changes=$(grep -c "network/$VB: filter now" "$T/log")
[ "$changes" -ge 6 ] || fail "only $changes filter changes during the run"
events "$VB" 5000
[ "$(grep -c "network/$VB: capturing" "$T/log")" -eq 1 ] || fail "$VB was captured afresh for a new filter"
stop_daemon
pass "reloads alternating the filter every 0.5 s ($changes changes, in place): 5000 of 5000 packets counted"

# ---- auto, and the policies: mix-only credits nothing; disabled is never opened ----
conf "interfaces = [ \"auto\" ]; filter = \"udp dst port 9999\";" 'mode = "mix-only";'
start_daemon -v --dry-run -f "$T/e.conf"
started_capturing "$VB"
send 2000 50-500
wait_summary "network/$VB: kind veth, state open, backend pcap, policy mix-only, .* 2000 events, 0 skipped, 16000 bytes mixed" ||
	fail "mix-only: $(line "$VB")"
[ "$(credited "$VB")" = "0.0" ] || fail "mix-only credited $(credited "$VB")"
grep -q "network/lo:" "$T/log" && fail "auto opened lo"
stop_daemon
conf "interfaces = [ \"auto\" ];" "instances = ( { name = \"$VB\"; mode = \"disabled\"; } );"
start_daemon -v --dry-run -f "$T/e.conf"
wait_for 5 grep -q "network/$VB: not opened: disabled by policy" "$T/log" || fail "disabled not said"
send 200 0
kill -USR1 "$DAEMON_PID"
sleep 0.3
grep -qE "network/$VB: (attached|capturing|kind)" "$T/log" && fail "a disabled interface was opened"
stop_daemon
pass "auto skips lo; mix-only mixes 2000 events for 0 bits; disabled is never opened"

# ---- one arrival counted once: devices stacked on the veth, a bridge over it ----
# (This kernel has no 8021q or ipvlan; a VLAN's IFLA_LINK is handled as a macvlan's is, and
# check_net_stack covers the rule itself.)
MV=edpm$$ BR=edpr$$
make_macvlan "$MV"
for ifs in '"*"' '"auto"'; do
	conf "interfaces = [ $ifs ]; filter = \"udp dst port 9999\";"
	start_daemon -v --dry-run -f "$T/e.conf"
	started_capturing "$VB"
	send 300 50-500                                  # to the veth's address
	send 200 50-500 10.79.0.1 9999 10.79.0.2         # to the macvlan's
	events "$VB" 500
	[ "$(total)" -eq 500 ] || fail "interfaces $ifs: $(total) events in all for 500 arrivals"
	grep -qE "network/$MV: (attached|capturing)" "$T/log" && [ "$ifs" = '"auto"' ] &&
		fail "auto shows the macvlan"
	if [ "$ifs" = '"*"' ]; then
		line "$MV" | grep -qE "state stacked on $VB, .* 0 events" ||
			fail "the macvlan's state: $(line "$MV")"
		grep -q "network/$MV: capturing" "$T/log" && fail "the macvlan was captured"
	fi
	stop_daemon
done
ip -n "$NB" link del "$MV"
pass "a macvlan on the veth: 500 arrivals counted once, on $VB (\"*\" and auto); state \"stacked on $VB\""

# A tunnel: what it carries came in on the veth first, and the kernel names no lower device
# for it. Captured on both (the filter "udp" takes the outer and the inner packet), each
# arrival would count twice; auto leaves the tunnel out. A tunnel named in the list is
# captured.
VX=edpx$$
make_vxlan "$VX"
auto_counts_vxlan_once "$VX"
# Made a port of a bridge (down), the VXLAN is still secondhand: the bridge's own notice
# about its port (AF_BRIDGE, without the kind) does not make it a device of its own.
BX=edpy$$
ip -n "$NB" link add "$BX" type bridge forward_delay 0 || fail "bridge"
ip -n "$NB" link set "$VX" master "$BX"
sleep 1
send 200 50-500 10.76.0.1 9999 10.76.0.2
events "$VB" 600
[ "$(total)" -eq 600 ] || fail "a VXLAN in a bridge: $(total) events in all for 600 arrivals"
grep -qE "network/$VX: (attached|capturing)" "$T/log" && fail "auto captured the VXLAN in a bridge"
# The bridge up: it carries the VXLAN's packets, secondhand, and auto leaves it out too.
ip -n "$NB" link set "$BX" up
wait_for 5 grep -q "network/$BX: not captured: carries the packets of $VX" "$T/log" ||
	fail "the bridge over a VXLAN not left out"
send 200 50-500 10.76.0.1 9999 10.76.0.2
events "$VB" 800
[ "$(total)" -eq 800 ] || fail "a VXLAN in a bridge, up: $(total) events in all for 800 arrivals"
grep -qE "network/$BX: (attached|capturing)" "$T/log" && fail "auto captured the bridge over a VXLAN"
ip -n "$NB" link del "$BX"
stop_daemon
conf "interfaces = [ \"$VX\" ];"
start_daemon -v --dry-run -f "$T/e.conf"
started_capturing "$VX"
send 300 50-500 10.76.0.1 9999 10.76.0.2
events "$VX" 300
stop_daemon
unmake_vxlan "$VX"
pass "a VXLAN over the veth: auto leaves it out (400 arrivals counted once, on $VB), also as" \
	"a port of a bridge (200 more, once), and the bridge when it is up (200 more, once);" \
	"named, it is captured (300 of 300)"

# An ifb: every packet that arrives on the veth is redirected to it (tc mirred), and seen
# there again, leaving (so with direction "both" it would count twice). auto leaves it out.
IFB=edpi$$
make_ifb "$IFB"
auto_counts_ifb_once "$IFB"
unmake_ifb "$IFB"
pass "an ifb that the veth's arrivals are redirected to: auto leaves it out (300 counted once," \
	"direction both)"

# The veth as a bridge port: the bridge is captured, the port is not; the bridge down, the port.
make_bridge "$BR"
conf "interfaces = [ \"edp*\" ]; filter = \"udp dst port 9999\";"
start_daemon -v --dry-run -f "$T/e.conf"
started_capturing "$BR"
wait_for 5 grep -q "network/$VB: not captured: port of $BR" "$T/log" || fail "the port not said"
send 300 50-500
events "$BR" 300
line "$VB" | grep -qE "state port of $BR, .* 0 events" || fail "the port's state: $(line "$VB")"
[ "$(total)" -eq 300 ] || fail "bridge: $(total) events in all for 300 arrivals"
ip -n "$NB" link set "$BR" down
wait_for 5 grep -q "network/$VB: capturing" "$T/log" || fail "the port not captured with the bridge down"
send 100 50-500
events "$VB" 100
[ "$(total)" -eq 400 ] || fail "bridge down: $(total) events in all for 400 arrivals"
stop_daemon
unmake_bridge "$BR"
pass "a bridge over the veth: 300 arrivals counted once, on $BR (port: \"port of $BR\"); bridge down: on $VB"

# ---- without CAP_NET_RAW: a clear error, a state, and the daemon runs on ----
conf "interfaces = [ \"$VB\" ];"
SETPRIV=1 start_daemon --dry-run -f "$T/e.conf"
wait_for 5 grep -q "network/$VB: cannot capture: " "$T/log" || fail "no error without CAP_NET_RAW"
grep -q "network/$VB: cannot capture: EPERM: live capture needs the capability CAP_NET_RAW" "$T/log" ||
	fail "the error does not name CAP_NET_RAW: $(grep "cannot capture" "$T/log")"
wait_summary "network/$VB: kind veth, state EPERM," || fail "state EPERM not shown"
stop_daemon
pass "no CAP_NET_RAW: error names the capability, state EPERM, daemon keeps running"

# ---- sampling in the kernel: above the cap the kernel keeps about cap packets a second ----
rx() { ip netns exec "$NB" cat "/sys/class/net/$VB/statistics/rx_packets"; }
src_json() { "$ENTROPYCTL" -s "$CTL_SOCKET" --json sources | jq -c ".sources[] | select(.name == \"$VB\")"; }
field() { echo "$1" | jq -r "$2"; }
flood() { # flood COUNT GAP SOURCES PORT: in the background; $! its pid
	ip netns exec "$NA" "$UDPGEN" -d 10.77.0.2 -p "$4" -n "$1" -g "$2" -s "$3" -r "$RANDOM" 2>> "$T/flood" &
}
CAP=1000
conf "interfaces = [ \"$VB\" ]; filter = \"udp dst port 9999\"; max_events_per_second = $CAP;"
start_daemon -v --dry-run -f "$T/e.conf"
started_capturing "$VB"
# Under the cap: no sampling; random gaps earn credit.
send 3000 500-2000
events "$VB" 3000
j=$(src_json)
echo "$j" | jq_holds '.sampling.state == "off" and .sampling.ratio == 1' > /dev/null ||
	fail "sampling under the cap: $j"
rate0=$(field "$j" .sampling.arrival_rate | xargs printf %.0f)
awk -v r="$rate0" -v c="$CAP" 'BEGIN { exit !(r > 0 && r <= c) }' || fail "arrival rate $rate0 under a cap of $CAP"
c0=$(field "$j" .credited_bits)
gt "$c0" 0 || fail "nothing credited under the cap: $j"
# A flood from one address to the filter's port, and as much again to another port from the
# others, which the filter rejects: sampled or not, none of those is ever timed. How the two
# floods share the CPU is the scheduler's business: what reaches the filter's port is counted
# by the kernel as UDP to a port nothing listens on, with a socket that never reads on 9998.
udp_noports() {
	ip netns exec "$NB" awk '$1 == "Udp:" { if (n++) { print $3; exit } }' /proc/net/snmp
}
ip netns exec "$NB" python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 9998)); time.sleep(120)' &
sink=$!
wait_for 5 sh -c 'ip netns exec "$1" ss -Hlun | grep -q ":9998 "' _ "$NB" || fail "no socket on 9998"
: > "$T/flood"
flood 600000 10 10.77.0.11 9999; f1=$!
flood 600000 10 10.77.0.12,10.77.0.13,10.77.0.14 9998; f2=$!
sleep 3
j1=$(src_json); r1=$(rx); p1=$(udp_noports); t1=$(date +%s.%N)
sleep 2
j2=$(src_json); r2=$(rx); p2=$(udp_noports); t2=$(date +%s.%N)
[ "$(field "$j2" .sampling.state)" = on ] || fail "not sampling during a flood: $j2"
ratio1=$(field "$j2" .sampling.ratio)
rate1=$(field "$j2" .sampling.arrival_rate | xargs printf %.0f)
ev=$(awk -v a="$(field "$j1" .events)" -v b="$(field "$j2" .events)" -v t1="$t1" -v t2="$t2" 'BEGIN { printf "%.0f", (b - a) / (t2 - t1) }')
wire=$(awk -v a="$r1" -v b="$r2" -v t1="$t1" -v t2="$t2" 'BEGIN { printf "%.0f", (b - a) / (t2 - t1) }')
awk -v e="$ev" -v c="$CAP" 'BEGIN { exit !(e >= c / 3 && e <= 3 * c) }' || fail "the daemon took $ev packets a second, cap $CAP"
port=$(awk -v a="$p1" -v b="$p2" -v t1="$t1" -v t2="$t2" 'BEGIN { printf "%.0f", (b - a) / (t2 - t1) }')
awk -v w="$wire" -v c="$CAP" 'BEGIN { exit !(w >= 10 * c) }' || fail "the flood reached the interface at only $wire/s"
awk -v p="$port" -v c="$CAP" 'BEGIN { exit !(p >= 5 * c) }' || fail "the flood reached the filter's port at only $port/s"
# The estimate is of what the filter takes: what reached its port.
awk -v r="$rate1" -v p="$port" 'BEGIN { exit !(r >= p / 2 && r <= p * 2) }' ||
	fail "estimated arrival rate $rate1/s, the filter's port had about $port/s ($wire/s on the wire)"
jq -en --argjson a "$j1" --argjson b "$j2" '$a.credited_bits == $b.credited_bits' > /dev/null ||
	fail "credit grew while sampling: $j1 / $j2"
[ "$(field "$j2" .credit.reason)" = sampled ] || fail "the reason is not sampled: $j2"
[ "$(field "$j2" .state)" = sampled ] || fail "the state is not sampled: $j2"
field "$j2" .detail | grep -qE "one source (9[0-9]|100)% of packets" || fail "packets the filter rejects were timed: $(field "$j2" .detail)"
wait "$f1" "$f2"
kill "$sink"; wait "$sink" 2> /dev/null
# A lower rate: the share moves, once the daemon's estimate of the rate has followed. 2000 a
# second, under half of the flood's least (5 x CAP to this port, checked above), however fast
# a busy machine let the flood go.
flood 100000 500 "$SOURCES" 9999; f1=$!
share_moved() { j3=$(src_json); awk -v a="$ratio1" -v b="$(field "$j3" .sampling.ratio)" 'BEGIN { exit !(b > 2 * a) }'; }
wait_for 10 share_moved || fail "the share did not follow the rate: $ratio1, then $(field "$j3" .sampling.ratio)"
"$ENTROPYCTL" -s "$CTL_SOCKET" status > "$T/st" && "$ENTROPYCTL" -s "$CTL_SOCKET" sources > "$T/src" &&
	"$ENTROPYCTL" -s "$CTL_SOCKET" metrics > "$T/metrics" || fail "entropyctl status, sources, metrics"
ratio2=$(field "$j3" .sampling.ratio)
kill "$f1" 2> /dev/null; wait "$f1"
[ "$(field "$j3" .sampling.state)" = on ] || fail "not sampling at the lower rate: $j3"
grep -qE "^network/$VB: sampled in the kernel, 1 in [0-9]+ of about [0-9]+ packets a second kept" "$T/st" ||
	fail "entropyctl status does not say it samples: $(cat "$T/st")"
grep -qE "^  sampling    on; 1 in [0-9]+ kept; about [0-9]+ arriving a second$" "$T/src" ||
	fail "entropyctl sources does not say it samples: $(cat "$T/src")"
grep -qE "^entropyd_source_sample_ratio\{class=\"network\",name=\"$VB\"\} 0\.[0-9]" "$T/metrics" &&
	grep -qE "^entropyd_source_arrival_rate_per_second\{class=\"network\",name=\"$VB\"\} [0-9]" "$T/metrics" &&
	grep -q "^# HELP entropyd_source_sample_ratio " "$T/metrics" &&
	grep -q "entropyd_source_credit_reason{class=\"network\",name=\"$VB\",reason=\"sampled\"} 1" "$T/metrics" ||
	fail "the metrics lack the sampling: $(grep -E "sample|arrival|reason" "$T/metrics")"
awk -f "$top_srcdir/tests/helpers/prom_check.awk" "$T/metrics" || fail "metrics with sampling fail the strict checker"
# After the flood: sampling stops, the health tests never failed for good, and random gaps
# under the cap are credited again after the start-up.
sleep 2.5
send 4000 500-2000
j4=$(src_json)
[ "$(field "$j4" .sampling.state)" = off ] || fail "still sampling after the flood: $j4"
[ "$(field "$j4" .health.state)" = ok ] && [ "$(field "$j4" .health.retry_in_s)" = null ] ||
	fail "the health tests failed: $j4"
gt "$(field "$j4" .credited_bits)" "$(field "$j3" .credited_bits)" || fail "no credit after the flood: $j4"
grep -q "network/$VB: about [0-9]* packets a second: the kernel keeps 1 in" "$T/log" || fail "the start of sampling not logged"
stop_daemon
pass "sampling: under the cap none (rate $rate0/s, $c0 bits); a flood ($wire/s on the wire, $port/s to its port) reached the daemon at $ev/s (1 in $(awk -v r="$ratio1" 'BEGIN{printf "%.0f", 1/r}'), estimated $rate1/s), credited nothing, its filter held; a lower rate, 1 in $(awk -v r="$ratio2" 'BEGIN{printf "%.0f", 1/r}'); after it credit again"

# ---- savefiles: reduced is exactly a quarter of trusted; damaged files are refused ----
"$UDPGEN" -w "$T/trace.pcap" -n 6000 -g 50-2000 -s "$SOURCES" -r 11 2> /dev/null || fail "udpgen -w"
replay() { # replay POLICY-KEYS [SOURCE-KEYS]
	conf "file = \"$T/trace.pcap\"; ${2:-}" "$1"
	start_daemon -v --dry-run -f "$T/e.conf"
	wait_summary "network/trace.pcap: kind savefile, state (ended|refused)" || fail "replay did not end"
	stop_daemon
}
replay 'mode = "trusted"; cap_bits_per_second = 100000.0;'
grep -qE "network/trace.pcap: .* 6000 events, 0 skipped" "$T/log" || fail "replay counts: $(line trace.pcap)"
line trace.pcap | grep -q sampling && fail "a savefile's replay is sampled: $(line trace.pcap)"
trusted=$(credited trace.pcap)
replay 'cap_bits_per_second = 100000.0;'
reduced=$(credited trace.pcap)
gt "$trusted" 100 || fail "trusted replay credited only $trusted"
awk -v t="$trusted" -v r="$reduced" 'BEGIN { d = t / 4 - r; exit !(d < 0.11 && d > -0.11) }' ||
	fail "reduced credited $reduced, want a quarter of trusted $trusted"
replay 'cap_bits_per_second = 100000.0;' 'max_events_per_second = 500;'
grep -qE "network/trace.pcap: .* 6000 events, [1-9][0-9]* skipped" "$T/log" || fail "event cap on a replay"
truncate -s -7 "$T/trace.pcap"
replay ''
grep -q "network/trace.pcap: $T/trace.pcap: refused, nothing of it is used: the savefile is truncated or corrupt after 5999 good packets" "$T/log" ||
	fail "truncated savefile not refused clearly"
grep -qE "network/trace.pcap: kind savefile, state refused, .* 0 events" "$T/log" || fail "refused file counted"
pass "savefile: reduced $reduced = trusted $trusted / 4; event cap by recorded time; truncated file refused"

# ---- a name with terminal escapes: captured by its own name, shown printable everywhere ----
if [ -n "${DAEMON_PID:-}" ]; then stop_daemon; fi
evil=$'x\x1b[7m\x07' shown='x\x1b[7m\x07'
ip link add "$evil" netns "$NB" type veth peer name "edpe$$" netns "$NA" && ip -n "$NB" link set "$evil" up ||
	fail "a veth named $shown"
conf 'interfaces = [ "x*" ];'
start_daemon -v --dry-run -f "$T/e.conf"
wait_for 5 grep -qF "network/$shown: capturing" "$T/log" || fail "$shown not captured, or not shown printable"
grep -qF "network/$shown: attached" "$T/log" || fail "$shown: attach not shown printable"
wait_summary "network/x.x1b\[7m.x07: kind veth" || fail "$shown: no summary"
"$ENTROPYCTL" -s "$CTL_SOCKET" status > "$T/st" && "$ENTROPYCTL" -s "$CTL_SOCKET" sources > "$T/src" ||
	fail "entropyctl status, sources"
grep -qF "$shown" "$T/st" && grep -qxF "network/$shown" "$T/src" || fail "entropyctl: $shown not shown printable"
[ "$("$ENTROPYCTL" -s "$CTL_SOCKET" --json sources | jq -r '.sources[] | select(.policy.mode != "disabled") | .name')" = "$shown" ] || fail "--json: not $shown"
"$ENTROPYCTL" -s "$CTL_SOCKET" metrics | grep -qF "name=\"x\\\\x1b[7m\\\\x07\"" || fail "metrics: $shown not escaped"
LC_ALL=C grep -qP '[\x01-\x08\x0b-\x1f\x7f]' "$T/log" "$T/st" "$T/src" && fail "a control byte reached the log or entropyctl"
stop_daemon
ip -n "$NB" link del "$evil"
pass "an interface named $shown: captured, and shown so in the log, status, sources, --json and metrics"
