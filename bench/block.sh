#!/bin/bash
# bench/block: does the block source slow the disk it watches? A fixed O_DIRECT workload
# (tests/helpers/dio: random 4 KiB reads and writes from a fixed seed) on a loop device backed by a
# file in /dev/shm with direct I/O, timed without entropyd and with entropyd tracing the
# device (tracepoint backend), in alternating rounds (ABBA, against drift) in one run; the
# ratio of the medians and of the fastest rounds (other load on a shared machine only ever
# adds time), and the daemon's CPU time per completion from /proc/PID/stat (and
# /proc/PID/schedstat, which is finer). As root.
#   bench/block.sh [ROUNDS [IOS]]     defaults: 8 rounds of 20000 I/Os
#   BENCH_DIR=/var/tmp bench/block.sh  the backing file elsewhere (a real disk's latency)
#   top_builddir=build bench/block.sh  the binaries of a build tree (default: built in place)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
# The build tree (top_builddir=DIR, as "make bench" gives it; else the source tree).
: "${top_builddir:=$top}"
rounds=${1:-8}
ios=${2:-20000}
dio=$top_builddir/tests/helpers/dio
[ "$(id -u)" -eq 0 ] || { echo "bench/block: needs root" >&2; exit 77; }
[ -x "$dio" ] || make -C "$top_builddir" tests/helpers/dio > /dev/null
d=$(mktemp -d)
img=$(mktemp "${BENCH_DIR:-/dev/shm}/entropyd-bench-block.XXXXXX")
loop=
pid=
finish() {
	[ -n "$pid" ] && kill "$pid" 2> /dev/null && wait "$pid" 2> /dev/null
	[ -n "$loop" ] && losetup -d "$loop"
	rm -rf "$d" "$img"
}
trap finish EXIT
truncate -s 256M "$img"
loop=$(losetup --find --show --direct-io=on "$img")
name=${loop#/dev/}
cat > "$d/e.conf" << CONF
feed = { mode = "always"; };
policy = { input = { mode = "disabled"; }; network = { mode = "disabled"; };
           block = { mode = "trusted"; }; };
sources = { block = { backend = "tracepoint"; devices = [ "$name" ]; }; };
control = { socket = "$d/run/io.entropyd"; };
CONF
reads=$((ios * 3 / 5))
writes=$((ios - reads))

# One run of the workload; prints its duration in ns.
workload() { "$dio" -r "$reads" -w "$writes" -s 42 "$loop" | sed 's/.*ns=//'; }
# The daemon's CPU: utime+stime in clock ticks, and schedstat's run time in ns.
# Both processes: the privileged one ($pid) and its child, the collector.
cpu_ticks() { cat "/proc/$pid/stat" $(pgrep -P "$pid" | sed 's|.*|/proc/&/stat|') | awk '{ s += $14 + $15 } END { print s }'; }
cpu_ns() { cat "/proc/$pid/schedstat" $(pgrep -P "$pid" | sed 's|.*|/proc/&/schedstat|') 2> /dev/null | awk '{ s += $1 } END { print s + 0 }'; }
secs() { awk -v x="$1" 'BEGIN { printf "%.3f", x / 1e9 }'; }

start() {
	mkdir -p "$d/run"
	RUNTIME_DIRECTORY=$d/run unshare -m "$top_builddir/src/entropyd" --foreground --dry-run \
		-f "$d/e.conf" > "$d/log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		grep -q "started:" "$d/log" && return 0
		sleep 0.05
	done
	echo "bench/block: daemon did not start:" >&2
	cat "$d/log" >&2
	exit 1
}
stop() { kill "$pid"; wait "$pid" || true; pid=; }

without=()
with=()
ticks=0
sched=0
lost=0
unsampled=0
workload > /dev/null # warm up
for r in $(seq "$rounds"); do
	for which in $([ $((r % 2)) -eq 1 ] && echo "off on" || echo "on off"); do
		if [ "$which" = off ]; then
			without+=("$(workload)")
			continue
		fi
		start
		t0=$(cpu_ticks)
		s0=$(cpu_ns)
		with+=("$(workload)")
		sleep 0.2 # let the daemon read the last completions
		ticks=$((ticks + $(cpu_ticks) - t0))
		sched=$((sched + $(cpu_ns) - s0))
		kill -USR1 "$pid"
		sleep 0.1
		events=$(grep -oE "block/$name: .*, [0-9]+ events" "$d/log" | tail -1 |
			grep -oE '[0-9]+ events' | cut -d' ' -f1)
		stop
		# "N taken, F of other disks, L lost (ring full), B malformed; perf counted C, of
		# which it never wrote U; ..."
		set -- $(grep -o "block: tracepoint: .*" "$d/log" | grep -oE '[0-9]+')
		lost=$((lost + ${3:-0}))
		unsampled=$((unsampled + ${6:-0}))
		[ "${events:-0}" -eq "$ios" ] ||
			echo "bench/block: round $r: the daemon sampled ${events:-0} completions of $ios (ring overruns ${3:-?}, never written by perf ${6:-?})" >&2
	done
	echo "round $r: without $(secs "${without[-1]}") s, with $(secs "${with[-1]}") s"
done

median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
mo=$(median "${without[@]}")
mw=$(median "${with[@]}")
# The fastest round of each: on a shared machine, other load only ever adds time.
lo=$(printf '%s\n' "${without[@]}" | sort -n | head -1)
lw=$(printf '%s\n' "${with[@]}" | sort -n | head -1)
hz=$(getconf CLK_TCK)
awk -v mo="$mo" -v mw="$mw" -v ios="$ios" -v rounds="$rounds" -v where="${BENCH_DIR:-/dev/shm}" 'BEGIN {
	printf "block: %d rounds of %d O_DIRECT 4 KiB I/Os, loop device on %s (direct I/O)\n", rounds, ios, where
	printf "block: median without entropyd %.3f s (%.1f us/IO), with entropyd tracing %.3f s (%.1f us/IO)\n", mo / 1e9, mo / ios / 1e3, mw / 1e9, mw / ios / 1e3
	printf "block: ratio with/without %.4f (%+.2f %%) by the medians\n", mw / mo, (mw / mo - 1) * 100
}'
awk -v lo="$lo" -v lw="$lw" -v ios="$ios" 'BEGIN {
	printf "block: fastest rounds: without %.1f us/IO, with %.1f us/IO, ratio %.4f (%+.2f %%)\n", lo / ios / 1e3, lw / ios / 1e3, lw / lo, (lw / lo - 1) * 100
}'
awk -v t="$ticks" -v hz="$hz" -v s="$sched" -v n="$((rounds * ios))" 'BEGIN {
	printf "block: daemon CPU per completion: %.2f us (utime+stime %d ticks at %d Hz over %d completions)", t / hz / n * 1e6, t, hz, n
	if (s > 0) printf "; %.2f us by schedstat", s / n / 1e3
	printf "\n"
}'
echo "block: of $((rounds * ios)) traced completions, $lost lost to full rings, $unsampled counted by perf but never written to a ring (the kernel's)"
