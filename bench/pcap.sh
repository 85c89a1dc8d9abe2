#!/bin/bash
# bench/pcap.sh: CPU per captured packet, entropyd beside tcpdump, on the same traffic in the
# same run. Two private network namespaces joined by a veth pair (made here, removed on
# exit; no traffic leaves them); tests/helpers/udpgen sends in one, entropyd --dry-run and
# "tcpdump -s SNAPLEN -w /dev/null" capture side by side in the other, with the same filter
# and direction. CPU is each process's own run time (/proc/PID/schedstat, nanoseconds) over
# the traffic, divided by the packets it counted. With two CPUs or more, the capturing
# processes (two, or three with FLOOR=1) run on CPU 1 and the generator on CPU 0, so that
# the receive path's softirq work (veth delivers on the sender's CPU) is not charged to
# whichever capturer happened to be running when it came. Rates: low, medium, a flood (no
# event cap), and the medium rate and the flood under the default cap of 10000 events a second.
# Each run first sends WARM packets (5000 a second) and measures from after them: the
# instance's first estimates (at 1024, 2048 and 4096 packets, every estimator at once) are a
# one-off start-up cost, shown apart as ed-start-ms; what follows is the steady state. The
# estimator's cost is bounded by event time, whatever the rate: for packets a block every
# minute (sources.network.estimate_interval), the costlier estimators every 12 and 60
# minutes (src/est_online.c). A run of a few seconds sees none of them, one of 620 s ten
# cheap ones; so the whole cycle's cost a second (bench/pipeline --levels, measured here
# first) is shared out over each rate's packets a second and added in the last column,
# ratio+est: what the daemon costs a packet in the long run, beside tcpdump.
#   bench/pcap.sh [SECONDS-PER-RATE]     (root; needs tcpdump; default 4 s)
#   RATES="low medium" bench/pcap.sh 620 (only those rows)
#   ROUNDS=5 bench/pcap.sh               (every rate 5 times, alternating; medians at the end)
#   FLOOR=1 bench/pcap.sh                (a third capturer, bench/pcapfloor: libpcap alone,
#                                         opened and read as entropyd does, doing nothing with
#                                         the packets; fl-ns/pkt is what neither can change,
#                                         own = (ed - fl) / (td - fl) compares what each does
#                                         with a packet on top of it. It shares CPU 1 with the
#                                         other two, so compare ratios of FLOOR=1 runs with
#                                         each other, not with those of runs without it)
set -u

secs=${1:-4}
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/.." && pwd)}"
ENTROPYD=${ENTROPYD:-$top_builddir/src/entropyd}
UDPGEN=${UDPGEN:-$top_builddir/tests/helpers/udpgen}
PIPELINE=${PIPELINE:-$top_builddir/bench/pipeline} # "make bench" builds it
PCAPFLOOR=${PCAPFLOOR:-$top_builddir/bench/pcapfloor}
case ${FLOOR:-0} in 0 | no | "") FLOOR=0 ;; *) FLOOR=1 ;; esac
SNAPLEN=64
FILTER="udp dst port 9999"
WARM=6000

[ "$(id -u)" -eq 0 ] || { echo "bench/pcap.sh: needs root (network namespaces)" >&2; exit 77; }
command -v tcpdump > /dev/null || { echo "bench/pcap.sh: needs tcpdump (apt-get install tcpdump)" >&2; exit 77; }
[ -x "$UDPGEN" ] || { echo "bench/pcap.sh: build $UDPGEN first (make check builds it)" >&2; exit 77; }
[ "$FLOOR" = 0 ] || [ -x "$PCAPFLOOR" ] ||
	{ echo "bench/pcap.sh: build $PCAPFLOOR first (make bench builds it)" >&2; exit 77; }

. "$here/netns.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/entropyd-bench.XXXXXX")
EPID= TPID= FPID= NA= NB=
cleanup() {
	for p in $EPID $TPID $FPID; do kill -KILL "$p" 2> /dev/null; done
	netns_down
	rm -rf "$W"
}
trap cleanup EXIT
netns_up edb 10.201

mkdir -p "$W/input"
write_conf() { # write_conf MAX_EVENTS_PER_SECOND
	cat > "$W/e.conf" <<-EOF
	policy = { block = { mode = "disabled"; }; };
	control = { socket = "$W/io.entropyd"; };
	sources = {
	  input = { watch = "$W/input"; };
	  network = { interfaces = [ "$VB" ]; filter = "$FILTER"; snaplen = $SNAPLEN;
	              direction = "in"; max_events_per_second = $1; };
	};
	EOF
}

# cpu_ns PID: the run time of PID and its children (entropyd's privileged process and its
# collector; tcpdump and pcapfloor have none).
cpu_ns() {
	local p sum=0
	for p in "$1" $(pgrep -P "$1"); do
		sum=$((sum + $(awk '{print $1}' "/proc/$p/schedstat")))
	done
	echo "$sum"
}

# The estimators' whole cycle, in us of CPU a second of events, at the network default.
est_us=$("$PIPELINE" --levels 2> /dev/null | sed -n 's/.*estimate_interval of 60 s: \([0-9.]*\) us/\1/p')

# run LABEL GAP_US COUNT MAX_EPS: one measurement; prints a table row.
run() {
	local label=$1 gap=$2 count=$3 eps=$4 e0 t0 e1 t1 f0 f1 ev tp fp sent w0
	write_conf "$eps"
	$RX ip netns exec "$NB" "$ENTROPYD" --foreground --dry-run -f "$W/e.conf" > "$W/log" 2>&1 &
	EPID=$!
	$RX ip netns exec "$NB" tcpdump -i "$VB" -s "$SNAPLEN" -Q in -w /dev/null -n "$FILTER" \
		> /dev/null 2> "$W/tcpdump" &
	TPID=$!
	: > "$W/floor"
	if [ "$FLOOR" != 0 ]; then
		$RX ip netns exec "$NB" "$PCAPFLOOR" "$VB" "$SNAPLEN" in "$FILTER" 2> "$W/floor" &
		FPID=$!
	fi
	for _ in $(seq 50); do
		grep -q "started:" "$W/log" && grep -q "listening on" "$W/tcpdump" &&
			{ [ "$FLOOR" = 0 ] || grep -q "listening on" "$W/floor"; } && break
		sleep 0.1
	done
	if [ -n "$FPID" ] && ! kill -0 "$FPID" 2> /dev/null; then
		echo "bench/pcap.sh: bench/pcapfloor did not start:" >&2
		cat "$W/floor" >&2
		exit 1
	fi
	sleep 0.5
	w0=$(cpu_ns "$EPID")
	$TX ip netns exec "$NA" "$UDPGEN" -d 10.201.0.2 -n "$WARM" -g 200 -r 5 2> /dev/null
	sleep 1.5
	e0=$(cpu_ns "$EPID"); t0=$(cpu_ns "$TPID"); f0=$([ -z "$FPID" ] || cpu_ns "$FPID")
	$TX ip netns exec "$NA" "$UDPGEN" -d 10.201.0.2 -n "$count" -g "$gap" -r 7 2> "$W/gen"
	sleep 1.5 # all hand over their last buffered block (tcpdump's timeout is 1 s)
	e1=$(cpu_ns "$EPID"); t1=$(cpu_ns "$TPID"); f1=$([ -z "$FPID" ] || cpu_ns "$FPID")
	kill -USR1 "$EPID"
	sleep 0.3
	ev=$(grep -oE "network/$VB: .* ([0-9]+) events, ([0-9]+) skipped" "$W/log" | tail -1 |
		sed -E 's/.* ([0-9]+) events, ([0-9]+) skipped/\1 \2/')
	kill -INT "$TPID"; wait "$TPID" 2> /dev/null; TPID=
	if [ -n "$FPID" ]; then kill -INT "$FPID"; wait "$FPID" 2> /dev/null; FPID=; fi
	kill -TERM "$EPID"; wait "$EPID" 2> /dev/null; EPID=
	tp=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured.*/\1/p' "$W/tcpdump")
	sent=$(sed -n 's/^sent=\([0-9]*\).*/\1/p' "$W/gen")
	fp=$(sed -n 's/^\([0-9]*\) packets$/\1/p' "$W/floor")
	set -- $ev
	awk -v label="$label" -v sent="$sent" -v span="$(sed -n 's/.*span_us=//p' "$W/gen")" \
		-v epk="$((${1:-0} - WARM))" -v esk="${2:-0}" -v ecpu="$((e1 - e0))" \
		-v tpk="$((${tp:-0} - WARM))" -v tcpu="$((t1 - t0))" -v start="$((e0 - w0))" \
		-v est="${est_us:-0}" -v fpk="$((${fp:-0} - WARM))" -v fcpu="$((${f1:-0} - ${f0:-0}))" \
		-v floor="$FLOOR" 'BEGIN {
		rate = span > 0 ? sent / (span / 1e6) : 0
		en = epk ? ecpu / epk : 0; tn = tpk ? tcpu / tpk : 0; fn = fpk > 0 ? fcpu / fpk : 0
		# The cycle costs the same a second of packet time at any rate (or cap).
		long = en + (rate > 0 ? est * 1000 / rate : 0)
		printf "%-14s %8.0f %9d %9d %8d %8.2f %6.1f %9.0f %9d %8.2f %9.0f %6.2f %11.1f %9s",
			label, rate, sent, epk, esk, ecpu / 1e6, (span > 0 ? ecpu / 10 / span : 0), en,
			tpk, tcpu / 1e6, tn, (tn ? en / tn : 0), start / 1e6,
			(est > 0 && tn ? sprintf("%.2f", long / tn) : "-")
		if (floor != 0)
			printf " %10.0f %6s", fn, (fn > 0 && tn > fn ? sprintf("%.2f", (en - fn) / (tn - fn)) : "-")
		printf "\n"
	}' | tee -a "$W/rows"
}

# Rates: the generator's gap sets them; the flood is as fast as one core sends.
low_n=$((1000 * secs)) med_n=$((20000 * secs)) flood_n=$((150000 * secs))
echo "entropyd $(basename "$ENTROPYD") vs $(tcpdump --version 2>&1 | head -1); snaplen $SNAPLEN, filter \"$FILTER\", direction in"
printf "%-14s %8s %9s %9s %8s %8s %6s %9s %9s %8s %9s %6s %11s %9s" rate pps sent ed-pkts \
	ed-skip ed-cpu-ms ed-cpu% ed-ns/pkt td-pkts td-cpu-ms td-ns/pkt ratio ed-start-ms ratio+est
[ "$FLOOR" = 0 ] && echo || printf " %10s %6s\n" fl-ns/pkt own
for _ in $(seq "${ROUNDS:-1}"); do
	for r in ${RATES:-low medium flood medium+cap flood+cap}; do
		case $r in
		low) run low 1000 "$low_n" 100000000 ;;
		medium) run medium 50 "$med_n" 100000000 ;;
		flood) run flood 0 "$flood_n" 100000000 ;;
		medium+cap) run medium+cap 50 "$med_n" 10000 ;;
		flood+cap) run flood+cap 0 "$flood_n" 10000 ;;
		*) echo "bench/pcap.sh: unknown rate $r (low, medium, flood, medium+cap, flood+cap)" >&2 ;;
		esac
	done
done
# Rounds alternate the rates, so that a slow spell of the machine touches several; the
# median of each rate's ratios is what to quote.
medians() { # medians COLUMN NAME
	sort -k1,1 -k"$1,$1n" "$W/rows" | awk -v c="$1" -v name="$2" '
		$c != "-" { r[$1] = r[$1] " " $c; n[$1]++ }
		END { for (k in r) { split(substr(r[k], 2), v, " "); m = n[k]
			med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
			printf "median %-9s %-14s %5.2f of %d rounds (%s)\n", name, k, med, m,
				substr(r[k], 2) } }'
}
if [ "${ROUNDS:-1}" -gt 1 ]; then
	medians 12 ratio
	medians 14 ratio+est
	[ "$FLOOR" = 0 ] || medians 16 own
fi
echo "ratio = entropyd ns/packet / tcpdump ns/packet (target: <= 1); ed-skip: over the event cap;"
echo "ed-cpu% = entropyd's CPU over the traffic's span, in % of one core; the first three rows"
echo "time every packet (no cap); +cap rows run the default configuration (10000 events/s);"
echo "ed-start-ms: entropyd's CPU for the $WARM packets sent first (its first estimates), not counted"
[ "$FLOOR" = 0 ] || echo "fl-ns/pkt: bench/pcapfloor's CPU a packet (libpcap alone); own = (ed - fl) / (td - fl)"
if [ -n "$est_us" ]; then
	echo "ratio+est: with the estimators' whole cycle, $est_us us a second of packets (bench/pipeline"
	echo "--levels), shared out over the packets of that second: the long-run ratio"
else
	echo "ratio+est: not known (build bench/pipeline: make bench)"
fi
