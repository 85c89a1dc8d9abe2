#!/bin/bash
# bench/pcapsys.sh: what a packet capturer costs the whole machine, a packet: entropyd beside
# "tcpdump -s 64 -w /dev/null" and beside no capturer at all, on the same traffic in the same
# run. bench/pcap.sh counts each capturer's own CPU; this counts what neither process's CPU
# shows too: the kernel's work for a packet socket (for every packet its filter takes, a copy
# into the ring, in softirq context, charged to whatever runs then).
#
# Two private network namespaces joined by a veth pair (made here, removed on exit; no
# traffic leaves them); tests/udpgen sends in one from SOURCES source addresses in turn, and
# the capturer (none, entropyd --dry-run in its default configuration but for the interface,
# or tcpdump) runs in the other, both with the filter "udp dst port 9999" and direction in.
# Each round runs the three one after the other at each rate (1,000 and 20,000 packets a
# second, and as fast as the generator sends), so that a slow spell of the machine touches
# all three. The cost is the machine's non-idle CPU time (the first line of /proc/stat: user,
# nice, system, irq and softirq of every CPU) over the traffic, from a second before the
# first packet to the capturer's last hand-over (1.5 s after the last one); "extra" is that,
# less the median of the no-capturer runs at the same rate, divided by the packets sent.
# The table gives, per rate, the medians of the rounds: entropyd's extra ns a packet,
# tcpdump's, and entropyd / tcpdump; and entropyd's own CPU a second (its schedstat) with the
# packets it received a second (above max_events_per_second, 10,000 by default, the kernel
# samples and it receives about that many). The machine's other work lands in /proc/stat
# too: on a shared machine run several rounds and read the medians, and the spread.
#   bench/pcapsys.sh [SECONDS-PER-RUN]   (root; needs tcpdump; default 3 s)
#   ROUNDS=5 bench/pcapsys.sh            (default 3)
#   RATES="1000 max" bench/pcapsys.sh    (packets a second, or max)
#   SOURCES=64 bench/pcapsys.sh          (source addresses, 1..64; default 32)
set -u

secs=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/.." && pwd)}"
ENTROPYD=${ENTROPYD:-$top_builddir/src/entropyd}
UDPGEN=${UDPGEN:-$top_builddir/tests/udpgen}
SNAPLEN=64
FILTER="udp dst port 9999"
NSRC=${SOURCES:-32}

[ "$(id -u)" -eq 0 ] || { echo "bench/pcapsys.sh: needs root (network namespaces)" >&2; exit 77; }
command -v tcpdump > /dev/null || { echo "bench/pcapsys.sh: needs tcpdump (apt-get install tcpdump)" >&2; exit 77; }
[ -x "$UDPGEN" ] || { echo "bench/pcapsys.sh: build $UDPGEN first (make check builds it)" >&2; exit 77; }
[ "$NSRC" -ge 1 ] && [ "$NSRC" -le 64 ] || { echo "bench/pcapsys.sh: SOURCES is 1..64" >&2; exit 2; }

id=$$
NA=edsA$id NB=edsB$id VA=edsA$id VB=edsB$id
W=$(mktemp -d "${TMPDIR:-/tmp}/entropyd-bench.XXXXXX")
CPID=
cleanup() {
	[ -z "$CPID" ] || kill -KILL "$CPID" 2> /dev/null
	ip netns del "$NA" 2> /dev/null
	ip netns del "$NB" 2> /dev/null
	rm -rf "$W"
}
trap cleanup EXIT

ip netns add "$NA" && ip netns add "$NB" || exit 1
ip link add "$VA" netns "$NA" type veth peer name "$VB" netns "$NB" || exit 1
ip -n "$NA" addr add 10.202.0.1/16 dev "$VA"
srcs=
for i in $(seq "$NSRC"); do
	ip -n "$NA" addr add "10.202.1.$i/16" dev "$VA"
	srcs=$srcs${srcs:+,}10.202.1.$i
done
ip -n "$NB" addr add 10.202.0.2/16 dev "$VB"
for ns in "$NA" "$NB"; do ip -n "$ns" link set lo up; done
ip -n "$NA" link set "$VA" up
ip -n "$NB" link set "$VB" up
ip netns exec "$NA" sysctl -qw "net.ipv6.conf.$VA.disable_ipv6=1"
ip netns exec "$NB" sysctl -qw "net.ipv6.conf.$VB.disable_ipv6=1"
# No ARP or neighbour discovery in the middle of a measurement.
mac=$(ip -n "$NB" -br link show "$VB" | awk '{print $3}')
ip -n "$NA" neigh replace 10.202.0.2 lladdr "$mac" dev "$VA" nud permanent

mkdir -p "$W/input"
cat > "$W/e.conf" <<EOF
policy = { block = { mode = "disabled"; }; };
sources = {
  input = { watch = "$W/input"; };
  network = { interfaces = [ "$VB" ]; filter = "$FILTER"; snaplen = $SNAPLEN; direction = "in"; };
};
EOF

busy() { awk 'NR == 1 { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; } # USER_HZ ticks
hz=$(getconf CLK_TCK)
own() { awk '{print $1}' "/proc/$1/schedstat"; } # ns

# run CAPTURER RATE: one measurement; appends "capturer rate pps sent busy_ns own_ns taken".
run() {
	local who=$1 rate=$2 gap n b0 b1 o0 o1 sent span ev
	if [ "$rate" = max ]; then gap=0 n=$((250000 * secs)); else gap=$((1000000 / rate)) n=$((rate * secs)); fi
	case $who in
	none) CPID= ;;
	entropyd)
		ip netns exec "$NB" "$ENTROPYD" --foreground --dry-run -f "$W/e.conf" > "$W/log" 2>&1 &
		CPID=$!
		for _ in $(seq 50); do grep -q "started:" "$W/log" && break; sleep 0.1; done ;;
	tcpdump)
		ip netns exec "$NB" tcpdump -i "$VB" -s "$SNAPLEN" -Q in -w /dev/null -n "$FILTER" \
			> /dev/null 2> "$W/tcpdump" &
		CPID=$!
		for _ in $(seq 50); do grep -q "listening on" "$W/tcpdump" && break; sleep 0.1; done ;;
	esac
	sleep 1
	b0=$(busy); o0=$([ -z "$CPID" ] || own "$CPID")
	ip netns exec "$NA" "$UDPGEN" -d 10.202.0.2 -n "$n" -g "$gap" -s "$srcs" -r "$RANDOM" 2> "$W/gen"
	sleep 1.5 # the capturer hands over its last block (a 1 s buffer timeout)
	b1=$(busy); o1=$([ -z "$CPID" ] || own "$CPID")
	ev=0
	if [ "$who" = entropyd ]; then
		kill -USR1 "$CPID"
		sleep 0.3
		ev=$(grep -oE "network/$VB: .* [0-9]+ events," "$W/log" | tail -1 | grep -oE "[0-9]+ events" | cut -d' ' -f1)
	fi
	if [ -n "$CPID" ]; then kill -INT "$CPID"; wait "$CPID" 2> /dev/null; CPID=; fi
	sent=$(sed -n 's/^sent=\([0-9]*\).*/\1/p' "$W/gen")
	span=$(sed -n 's/.*span_us=\([0-9]*\).*/\1/p' "$W/gen")
	echo "$who $rate $((sent * 1000000 / (span > 0 ? span : 1))) $sent" \
		"$(((b1 - b0) * 1000000000 / hz)) $((${o1:-0} - ${o0:-0})) ${ev:-0} $span" >> "$W/runs"
}

echo "whole-machine CPU a packet above no capturer: entropyd (default config) vs" \
	"$(tcpdump --version 2>&1 | head -1); snaplen $SNAPLEN, \"$FILTER\", $NSRC sources, $(nproc) CPUs"
: > "$W/runs"
for round in $(seq "${ROUNDS:-3}"); do
	for rate in ${RATES:-1000 20000 max}; do
		for who in none entropyd tcpdump; do run "$who" "$rate"; done
	done
	echo "round $round of ${ROUNDS:-3} done" >&2
done

# Per rate: the no-capturer baseline (median busy ns a packet), then each capturer's extra.
awk '
function median(list,    v, m) {
	m = split(list, v, " "); asort(v)
	return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
{
	who = $1; rate = $2; sent = $4; busy = $5
	if (sent <= 0) next
	pps[rate] = pps[rate] " " $3
	per[who, rate] = per[who, rate] " " busy / sent
	if (who == "entropyd") { ecpu[rate] = ecpu[rate] " " $6 / ($8 / 1e6) / 1e9 * 100
		etaken[rate] = etaken[rate] " " $7 / ($8 / 1e6 + 1.5) }
	if (!(rate in seen)) { order[++n] = rate; seen[rate] = 1 }
	rounds[who, rate]++
}
END {
	printf "%-6s %9s %6s %10s %11s %11s %8s %11s %9s %6s\n", "rate", "pps", "rounds",
		"base-ns/pk", "ed+ns/pkt", "td+ns/pkt", "ed/td", "ed-cpu%", "ed-pkt/s", "spread"
	for (i = 1; i <= n; i++) {
		r = order[i]; base = median(per["none", r])
		m = split(per["entropyd", r], ev, " "); split(per["tcpdump", r], tv, " ")
		ratios = ""
		for (k = 1; k <= m; k++) if (tv[k] - base > 0) ratios = ratios " " (ev[k] - base) / (tv[k] - base)
		e = median(per["entropyd", r]) - base; t = median(per["tcpdump", r]) - base
		mm = split(ratios, rv, " "); asort(rv)
		printf "%-6s %9.0f %6d %10.0f %11.0f %11.0f %8s %11.1f %9.0f %6s\n", r, median(pps[r]),
			rounds["entropyd", r], base, e, t, (t > 0 ? sprintf("%.2f", e / t) : "-"),
			median(ecpu[r]), median(etaken[r]),
			(mm ? sprintf("%.2f-%.2f", rv[1], rv[mm]) : "-")
	}
}' "$W/runs"
echo "base-ns/pk: the whole machine's busy ns a packet with no capturer (the generator and the"
echo "stack); ed+/td+: what entropyd and tcpdump add to it, medians over the rounds; ed/td:"
echo "their ratio (spread: per-round ratios, lowest-highest); ed-cpu%: entropyd's own CPU over"
echo "the traffic, % of a core; ed-pkt/s: the packets it received a second (sampled above the cap)"
