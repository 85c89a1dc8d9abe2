#!/bin/bash
# bench/pcapsys.sh: what a packet capturer costs the whole machine, a packet: entropyd beside
# "tcpdump -s 64 -w /dev/null" and beside no capturer at all, on the same traffic in the same
# run. bench/pcap.sh counts each capturer's own CPU; this counts what neither process's CPU
# shows too: the kernel's work for a packet socket (for every packet its filter takes, a copy
# into the ring, in softirq context, charged to whatever runs then).
#
# Two private network namespaces joined by a veth pair (made here, removed on exit; no
# traffic leaves them); tests/helpers/udpgen sends in one from SOURCES source addresses in turn, and
# the capturer (none, entropyd --dry-run in its default configuration but for the interface,
# or tcpdump) runs in the other, both with the filter "udp dst port 9999" and direction in.
# Each round runs the three one after the other at each rate (1,000 and 20,000 packets a
# second, and as fast as the generator sends), so that a slow spell of the machine touches
# all three. The cost is the machine's non-idle CPU time (the first line of /proc/stat: user,
# nice, system, irq and softirq of every CPU) over the traffic, from a second before the
# first packet to the capturer's last hand-over (1.5 s after the last one); "extra" is that,
# less the median of the no-capturer runs at the same rate, divided by the packets sent.
# The table gives, per rate, the medians of the rounds: entropyd's extra ns a packet,
# tcpdump's, and entropyd / tcpdump; entropyd's own CPU (its schedstat); and the share of the
# packets sent that each capturer's socket took, which the kernel copied into its ring
# (above max_events_per_second, 10,000 by default, the kernel samples for entropyd: about
# that many a second).
# Everything else the machine does lands in /proc/stat too, and on a shared machine it can
# be larger than what is measured. So the same is also counted from the traffic's own tasks
# ("tasks" columns): the generator's CPU time (its system time holds the receive path, which
# veth runs in the sender's context, the copy into a capture ring included), the
# ksoftirqd threads' (the receive path deferred) and the capturer's. Read both; where they
# disagree, the machine was busy with other work and the task sums are the ones to quote.
#   bench/pcapsys.sh [SECONDS-PER-RUN]   (root; needs tcpdump; default 3 s)
#   ROUNDS=5 bench/pcapsys.sh            (default 3)
#   RATES="1000 max" bench/pcapsys.sh    (packets a second, or max)
#   SOURCES=64 bench/pcapsys.sh          (source addresses, 1..64; default 32)
#   RUNS=FILE bench/pcapsys.sh           (every run's figures kept in FILE)
#   LOGS=DIR bench/pcapsys.sh            (entropyd's log of every run kept in DIR)
set -u

secs=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/.." && pwd)}"
ENTROPYD=${ENTROPYD:-$top_builddir/src/entropyd}
UDPGEN=${UDPGEN:-$top_builddir/tests/helpers/udpgen}
SNAPLEN=64
FILTER="udp dst port 9999"
NSRC=${SOURCES:-32}
WARM=6000

[ "$(id -u)" -eq 0 ] || { echo "bench/pcapsys.sh: needs root (network namespaces)" >&2; exit 77; }
command -v tcpdump > /dev/null || { echo "bench/pcapsys.sh: needs tcpdump (apt-get install tcpdump)" >&2; exit 77; }
[ -x "$UDPGEN" ] || { echo "bench/pcapsys.sh: build $UDPGEN first (make check builds it)" >&2; exit 77; }
[ "$NSRC" -ge 1 ] && [ "$NSRC" -le 64 ] || { echo "bench/pcapsys.sh: SOURCES is 1..64" >&2; exit 2; }

. "$here/netns.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/entropyd-bench.XXXXXX")
CPID= NA= NB=
cleanup() {
	[ -z "$CPID" ] || kill -KILL "$CPID" 2> /dev/null
	netns_down
	rm -rf "$W"
}
trap cleanup EXIT
# The generator on CPU 0 (veth runs the receive path there, in its context), the capturer
# on CPU 1, where there are two.
netns_up eds 10.202 "$NSRC"
srcs=$SRCS

mkdir -p "$W/input"
cat > "$W/e.conf" <<EOF
policy = { block = { mode = "disabled"; }; };
control = { socket = "$W/io.entropyd"; };
sources = {
  input = { watch = "$W/input"; };
  network = { interfaces = [ "$VB" ]; filter = "$FILTER"; snaplen = $SNAPLEN; direction = "in"; };
};
EOF

busy() { awk 'NR == 1 { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; } # USER_HZ ticks
hz=$(getconf CLK_TCK)
own() { awk '{print $1}' "/proc/$1/schedstat"; } # ns
ksoftirqd() { # ns, every CPU's ksoftirqd
	local p n=0
	for p in $(pgrep -x 'ksoftirqd/[0-9]+'); do n=$((n + $(own "$p"))); done
	echo "$n"
}

# run CAPTURER RATE: one measurement; appends to the runs (see RUNS below).
run() {
	local who=$1 rate=$2 gap n b0 b1 o0 o1 k0 k1 sent span ev gen
	if [ "$rate" = max ]; then gap=0 n=$((250000 * secs)); else gap=$((1000000 / rate)) n=$((rate * secs)); fi
	case $who in
	none) CPID= ;;
	entropyd)
		$RX ip netns exec "$NB" "$ENTROPYD" --foreground --dry-run -f "$W/e.conf" > "$W/log" 2>&1 &
		CPID=$!
		for _ in $(seq 50); do grep -q "started:" "$W/log" && break; sleep 0.1; done ;;
	tcpdump)
		$RX ip netns exec "$NB" tcpdump -i "$VB" -s "$SNAPLEN" -Q in -w /dev/null -n "$FILTER" \
			> /dev/null 2> "$W/tcpdump" &
		CPID=$!
		for _ in $(seq 50); do grep -q "listening on" "$W/tcpdump" && break; sleep 0.1; done ;;
	esac
	# Warm-up, for all three alike: entropyd's first estimates (at 1024, 2048 and 4096
	# packets, every estimator at once) are a one-off start-up cost; bench/pcap.sh shows it.
	$TX ip netns exec "$NA" "$UDPGEN" -d 10.202.0.2 -n "$WARM" -g 200 -s "$srcs" -r 5 2> /dev/null
	sleep 1.5
	b0=$(busy); o0=$([ -z "$CPID" ] || own "$CPID"); k0=$(ksoftirqd)
	{ TIMEFORMAT='%3U %3S'; time $TX ip netns exec "$NA" "$UDPGEN" -d 10.202.0.2 -n "$n" \
		-g "$gap" -s "$srcs" -r "$RANDOM" 2> "$W/gen"; } 2> "$W/time"
	sleep 1.5 # the capturer hands over its last block (a 1 s buffer timeout)
	b1=$(busy); o1=$([ -z "$CPID" ] || own "$CPID"); k1=$(ksoftirqd)
	gen=$(awk '{ printf "%.0f", ($1 + $2) * 1e9 }' "$W/time")
	ev=0
	if [ "$who" = entropyd ]; then
		kill -USR1 "$CPID"
		sleep 0.3
		ev=$(grep -oE "network/$VB: .* [0-9]+ events," "$W/log" | tail -1 | grep -oE "[0-9]+ events" | cut -d' ' -f1)
	fi
	if [ -n "$CPID" ]; then kill -INT "$CPID"; wait "$CPID" 2> /dev/null; CPID=; fi
	[ -z "${LOGS:-}" ] || [ "$who" != entropyd ] || cp "$W/log" "$LOGS/entropyd-$rate-$(date +%s).log"
	[ "$who" != tcpdump ] || ev=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured.*/\1/p' "$W/tcpdump")
	ev=$((${ev:-0} > WARM ? ${ev:-0} - WARM : 0))
	sent=$(sed -n 's/^sent=\([0-9]*\).*/\1/p' "$W/gen")
	span=$(sed -n 's/.*span_us=\([0-9]*\).*/\1/p' "$W/gen")
	echo "$who $rate $((sent * 1000000 / (span > 0 ? span : 1))) $sent" \
		"$(((b1 - b0) * 1000000000 / hz)) $((${o1:-0} - ${o0:-0})) ${ev:-0} $span" \
		"$((gen + k1 - k0 + ${o1:-0} - ${o0:-0}))" >> "$W/runs"
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
function sortv(v, m,    i, j, x) { # insertion sort of v[1..m] (mawk has no asort)
	for (i = 2; i <= m; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
}
function median(list,    v, m) {
	m = split(list, v, " "); sortv(v, m)
	return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
# One measure at rate r: the baseline, the extra of entropyd and of tcpdump (medians), their
# ratio, and the range of the per-round ratios (the rounds paired in order).
function columns(x, r,    base, e, t, m, k, ev, tv, ratios, mm, rv) {
	base = median(x["none", r])
	m = split(x["entropyd", r], ev, " "); split(x["tcpdump", r], tv, " ")
	ratios = ""
	for (k = 1; k <= m; k++) if (tv[k] - base > 0) ratios = ratios " " (ev[k] - base) / (tv[k] - base)
	e = median(x["entropyd", r]) - base; t = median(x["tcpdump", r]) - base
	mm = split(ratios, rv, " "); sortv(rv, mm)
	return sprintf("%7.0f %8.0f %8.0f %6s %11s", base, e, t, (t > 0 ? sprintf("%.2f", e / t) : "-"),
		(mm ? sprintf("%.2f-%.2f", rv[1], rv[mm]) : "-"))
}
{
	who = $1; rate = $2; sent = $4; busy = $5
	if (sent <= 0) next
	pps[rate] = pps[rate] " " $3
	per[who, rate] = per[who, rate] " " busy / sent
	task[who, rate] = task[who, rate] " " $9 / sent
	if (who == "entropyd") ecpu[rate] = ecpu[rate] " " $6 / ($8 / 1e6) / 1e9 * 100
	if (who != "none") took[who, rate] = took[who, rate] " " $7 / sent
	if (!(rate in seen)) { order[++n] = rate; seen[rate] = 1 }
	rounds[who, rate]++
}
END {
	printf "%-6s %7s %4s | %7s %8s %8s %6s %11s | %7s %8s %8s %6s %11s | %7s %7s %7s\n",
		"rate", "pps", "rnds", "base", "ed+", "td+", "ed/td", "spread", "base", "ed+", "td+",
		"ed/td", "spread", "ed-cpu%", "ed-took", "td-took"
	for (i = 1; i <= n; i++) {
		r = order[i]
		printf "%-6s %7.0f %4d | %s | %s | %7.2f %7.3f %7.3f\n", r, median(pps[r]),
			rounds["entropyd", r], columns(per, r), columns(task, r), median(ecpu[r]),
			median(took["entropyd", r]), median(took["tcpdump", r])
	}
}' "$W/runs"
# RUNS=FILE keeps every run: capturer, rate, pps, sent, /proc/stat busy ns, the capturer's
# own ns, the packets it took (after the warm-up), the traffic's span in us, the tasks' ns.
[ -z "${RUNS:-}" ] || cp "$W/runs" "$RUNS"
echo "ns a packet, first from /proc/stat (every CPU's user+nice+system+irq+softirq), then from the"
echo "traffic's tasks (generator + ksoftirqd + capturer): base with no capturer; ed+/td+ what"
echo "entropyd and tcpdump add to it, medians over the rounds; ed/td their ratio (spread: the"
echo "rounds' ratios, lowest-highest); ed-cpu%: entropyd's own CPU over the traffic, % of a"
echo "core; ed-took, td-took: the share of the packets sent that each one's socket took (the"
echo "kernel copied into its ring; above the cap the kernel samples for entropyd)"
