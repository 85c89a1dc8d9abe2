#!/bin/bash
# t_pcap_nonetlink: the network source where rtnetlink cannot be used (a unit whose
# RestrictAddressFamilies= leaves AF_NETLINK out, a seccomp policy). The daemon runs under
# tests/helpers/nonetlink, whose seccomp filter makes socket(AF_NETLINK) fail with EAFNOSUPPORT, so
# it follows interfaces by its fallback: /proc/net/dev, ioctls and sysfs, rescanned every
# 10 s. In t_pcap.sh's namespaces: it says so and runs on; auto captures the veth with exact
# counts, and not lo; an interface that appears is captured within a rescan, one removed is
# shown gone; a macvlan on the veth and a bridge over it (stacking read from sysfs) count
# each arrival once. Needs root, and libseccomp at build time (in CI a missing launcher
# fails: this test must run there).
. "$(dirname "$0")/lib.sh"

NONETLINK=$top_builddir/tests/helpers/nonetlink
cannot() { # cannot REASON...: skip, or fail where the test must run
	[ "${CI:-}" = true ] && { echo "FAIL: $* (CI=true: this test must run)" >&2; exit 1; }
	skip "$*"
}
[ -x "$NONETLINK" ] || cannot "needs tests/helpers/nonetlink, built when configure finds libseccomp" \
	"(Debian package libseccomp-dev; contrib/dev.sh test installs it)"
out=$("$NONETLINK" true 2>&1) || cannot "tests/helpers/nonetlink does not work here: $out"
netns_pair
make_link
daemon_in_ns "$NONETLINK"
VC=edpc$$ VD=edpd$$ MV=edpm$$ BR=edpr$$
RESCAN_WAIT=25 # a rescan every 10 s, with room for a slow machine
since() { awk -v t0="$1" -v t="$(date +%s.%N)" 'BEGIN { printf "%.1f", t - t0 }'; }
# after PATTERN TEXT: TEXT is in the log at or after the first line matching PATTERN.
after() { sed -n "\|$1|,\$p" "$T/log" | grep -q "$2"; }

# ---- auto: no rtnetlink, said once; the veth captured with exact counts; lo not ----
conf "interfaces = [ \"auto\" ]; filter = \"udp dst port 9999\";"
start_daemon -vv --dry-run -f "$T/e.conf"
grep -q "warning: network: no rtnetlink link notifications; interfaces are rescanned every 10 s: " \
	"$T/log" || fail "the fallback not said"
started_capturing "$VB"
send 1000 50-500
send 200 100 127.0.0.1 9999 127.0.0.1 "$NB" # on lo
events "$VB" 1000
grep -q "network/lo:" "$T/log" && fail "auto opened lo"
[ "$(total)" -eq 1000 ] || fail "auto: $(total) events in all for 1000 on $VB and 200 on lo"
pass "no rtnetlink: said, rescans instead; auto: exactly 1000 of 1000 on $VB, none of 200 on lo"

# ---- appearing: a second veth pair, and a macvlan on the first, found by a rescan ----
t0=$(date +%s.%N)
make_link "$VC" "$VD" 10.78.0
make_macvlan "$MV"
wait_for $RESCAN_WAIT grep -q "network/$VD: capturing" "$T/log" ||
	fail "$VD not captured within $RESCAN_WAIT s of appearing"
took=$(since "$t0")
wait_for $RESCAN_WAIT grep -q "network/$MV: not captured: stacked on $VB" "$T/log" ||
	fail "the macvlan not seen as stacked on $VB (sysfs lower_$VB)"
send 300 50-500 10.78.0.1 9999 10.78.0.2     # to the new veth
send 200 50-500                              # to the first veth's address
send 250 50-500 10.79.0.1 9999 10.79.0.2     # to the macvlan's: counted on $VB, once
events "$VD" 300
events "$VB" 1450
[ "$(total)" -eq 1750 ] || fail "$(total) events in all for 1750 arrivals"
grep -qE "network/$MV: (attached|capturing|kind)" "$T/log" && fail "auto captured the macvlan"
pass "appearing: $VD captured ${took} s after it appeared, 300 of 300; the macvlan on $VB" \
	"not captured (stacked, from sysfs), its 250 arrivals counted once on $VB"

# ---- removed: shown gone; the daemon and the other captures carry on ----
ip -n "$NA" link del "$VC" # takes $VD with it
wait_for $RESCAN_WAIT grep -q "network/$VD: gone; its counters go to the totals" "$T/log" ||
	fail "$VD's removal not seen"
kill -0 "$DAEMON_PID" 2> /dev/null || fail "the daemon died when $VD was removed"
send 100 50-500
events "$VB" 1550
after "network/$VD: gone" "network/$VD: kind" && fail "$VD still in the status after it went"
captures "$VB" 2 && fail "$VB captured afresh by a rescan"
[ "$(grep -c "network/$MV: not captured" "$T/log")" -eq 1 ] || fail "the macvlan's state said at every rescan"
[ "$(grep -c "no rtnetlink" "$T/log")" -eq 1 ] || fail "the fallback said more than once"
stop_daemon
pass "removed: $VD gone, dropped from the status; $VB went on (100 more), captured once" \
	"through every rescan; the fallback said once; the daemon exits 0"

# ---- by glob: the states from sysfs; a macvlan removed, a bridge made, under one rescan ----
conf "interfaces = [ \"edp*\" ]; filter = \"udp dst port 9999\";"
start_daemon -v --dry-run -f "$T/e.conf"
started_capturing "$VB"
wait_for 5 grep -q "network/$MV: not captured: stacked on $VB" "$T/log" || fail "the macvlan not said"
send 300 50-500
send 200 50-500 10.79.0.1 9999 10.79.0.2
events "$VB" 500
line "$MV" | grep -qE "state stacked on $VB, .* 0 events" || fail "the macvlan's state: $(line "$MV")"
[ "$(total)" -eq 500 ] || fail "macvlan: $(total) events in all for 500 arrivals"
# Neither change closes a capture, so only the periodic rescan can see them.
t0=$(date +%s.%N)
ip -n "$NB" link del "$MV"
make_bridge "$BR"
wait_for $RESCAN_WAIT grep -q "network/$MV: gone" "$T/log" || fail "the macvlan's removal not seen"
wait_for $RESCAN_WAIT grep -q "network/$BR: capturing" "$T/log" || fail "the bridge not captured"
took=$(since "$t0")
grep -q "network/$VB: closed: port of $BR" "$T/log" || fail "$VB not closed as a port of $BR"
send 300 50-500
events "$BR" 300
line "$VB" | grep -qE "state port of $BR, .* 500 events" || fail "the port's state: $(line "$VB")"
[ "$(total)" -eq 800 ] || fail "bridge: $(total) events in all for 800 arrivals"
# The bridge down: the port is captured again. libpcap (1.10 here) does not report a link
# going down, so it is the next periodic rescan that finds it: the rescans go on.
ip -n "$NB" link set "$BR" down
wait_for $RESCAN_WAIT captures "$VB" 2 || fail "the port not captured with the bridge down"
send 100 50-500
events "$VB" 600
line "$BR" | grep -qE "state down, .* 300 events" || fail "the bridge's state: $(line "$BR")"
[ "$(total)" -eq 900 ] || fail "bridge down: $(total) events in all for 900 arrivals"
stop_daemon
pass "by glob: the macvlan \"stacked on $VB\" (500 counted once), then gone; a bridge over" \
	"$VB captured ${took} s after both changes, $VB \"port of $BR\" (300 counted once);" \
	"the bridge down: shown down, $VB captured again (100 more)"

# ---- tunnels, told from sysfs: a VXLAN (its device type) and a tun device (tun_flags) ----
unmake_bridge "$BR"
VX=edpx$$ TN=edpt$$
make_vxlan "$VX"
ip netns exec "$NB" ip tuntap add "$TN" mode tun || fail "tun"
ip -n "$NB" link set "$TN" up
auto_counts_vxlan_once "$VX|$TN"
stop_daemon
conf "interfaces = [ \"$VX\", \"$TN\" ];"
start_daemon -v --dry-run -f "$T/e.conf"
started_capturing "$VX"
started_capturing "$TN"
wait_summary "network/$VX: kind vxlan," || fail "the VXLAN's kind from sysfs: $(line "$VX")"
wait_summary "network/$TN: kind tun," || fail "the tun device's kind from sysfs: $(line "$TN")"
stop_daemon
unmake_vxlan "$VX"
ip -n "$NB" link del "$TN"
pass "tunnels from sysfs: auto leaves a VXLAN and a tun device out (400 arrivals counted once," \
	"on $VB); named, both are captured, shown as kind vxlan and tun"

# ---- an ifb, told by its driver's name (ethtool): sysfs gives it no device type ----
# Every packet that arrives on the veth is redirected to it (tc mirred) and seen there again,
# leaving (so with direction "both" it would count twice). auto leaves it out.
IFB=edpi$$
make_ifb "$IFB"
auto_counts_ifb_once "$IFB"
conf "interfaces = [ \"$IFB\", \"$VB\" ];"
start_daemon -v --dry-run -f "$T/e.conf"
started_capturing "$IFB"
wait_summary "network/$IFB: kind ifb," || fail "the ifb's kind: $(line "$IFB")"
wait_summary "network/$VB: kind veth," || fail "the veth's kind: $(line "$VB")"
stop_daemon
unmake_ifb "$IFB"
pass "an ifb that the veth's arrivals are redirected to, told by its driver: auto leaves it" \
	"out (300 counted once, direction both); named, shown as kind ifb (the veth as veth)"
