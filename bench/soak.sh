#!/bin/bash
# bench/soak: are memory and descriptors bounded over time? One daemon with all three classes
# busy (input frames through a FIFO, O_DIRECT I/O on a loop device seen by the block
# tracepoint, UDP on a veth pair captured in a network namespace), a SIGHUP every RELOAD
# seconds, status clients (status, sources, metrics) every round, for DURATION seconds;
# both processes' resident memory (VmRSS) and descriptors sampled every SAMPLE seconds, the
# curve printed, and for each whether it reached a plateau (the second half of the run sets
# no new high beyond PLATEAU_KB for RSS, none at all for descriptors). As root; a benchmark,
# not a test: run it by hand.
#   bench/soak.sh                                    30 minutes, a reload every 2 s
#   DURATION=300 RELOAD=0.1 bench/soak.sh            many reloads, fast
#   ESTIMATE=1 bench/soak.sh                         every class's estimate_interval 1 s:
#                                                    the costlier estimators (whose shared
#                                                    work area is the largest buffer) run
#                                                    from the first minutes, not after 10
#   LAUNCHER=/path/to/vg bench/soak.sh               the daemon under a launcher that execs
#                                                    its arguments (valgrind, say)
#   top_builddir=build bench/soak.sh                 the binaries of a build tree
# The samples go to $SOAK_CSV if set (seconds, reloads, events, then RSS in kB and descriptors
# of the privileged process and of the collector).
set -u
DURATION=${DURATION:-1800}
RELOAD=${RELOAD:-2}
SAMPLE=${SAMPLE:-10}
PLATEAU_KB=${PLATEAU_KB:-256}
: "${START_WAIT:=120}" # start_daemon: under valgrind, on a busy machine
# The tests' helpers: a private daemon, namespaces, loop devices, the generators.
. "$(dirname "$0")/../tests/integration/lib.sh"
# lib.sh's, with the log's end only: a reload logs a line every RELOAD seconds
fail() { echo "FAIL: $*" >&2; [ -f "$T/log" ] && tail -20 "$T/log" | sed 's/^/  log: /' >&2; exit 1; }

netns_pair # skips without root
HUP_PID=
soak_cleanup() {
	[ -n "$HUP_PID" ] && kill "$HUP_PID" 2> /dev/null && wait "$HUP_PID" 2> /dev/null
	cleanup
	loops_cleanup
	netns_cleanup
}
trap soak_cleanup EXIT
for p in "$DIO" "$EVGEN" "$UDPGEN" "$ENTROPYCTL"; do
	[ -x "$p" ] || skip "$p is not built (make check builds it)"
done
# The block tests' lock only while the loop device is attached: losetup --find must not hand
# out a number t_block has detached for a moment. (Its taking a CPU offline costs this daemon
# a ring, which it opens again.)
block_lock 600 || fail "a block test held $BLOCK_LOCK for 600 s"
new_loop L
exec 7>&-
make_link
daemon_in_ns ${LAUNCHER:-}
mkdir -p "$T/input"
mkfifo "$T/input/event0"
est=${ESTIMATE:+estimate_interval = $ESTIMATE;}
cat > "$T/e.conf" <<EOF
feed = { mode = "always"; };
policy = { input = { mode = "trusted"; cap_bits_per_second = 1000000.0; };
           block = { mode = "trusted"; }; network = { mode = "reduced"; scale = 0.25; }; };
sources = { input = { watch = "$T/input"; $est };
            block = { backend = "tracepoint"; devices = [ "${L#/dev/}" ]; $est };
            network = { interfaces = [ "$VB" ]; $est }; };
control = { socket = "$CTL_SOCKET"; };
EOF
start_daemon -f "$T/e.conf"
grep -q "started: 3 sources open" "$T/log" || fail "not every class open"
open_fifo "$T/input/event0"
# The daemon's two processes: the privileged one is the deepest process of the launcher's
# chain that has a child, the collector that child.
mapfile -t procs < <(daemon_procs | cut -d: -f1)
[ "${#procs[@]}" -ge 2 ] || fail "want two processes, found ${procs[*]}"
PRIV=${procs[-2]} COLL=${procs[-1]}

rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status" 2> /dev/null; }
fds() { ls "/proc/$1/fd" 2> /dev/null | wc -l; }
reloads() { grep -c "configuration reloaded" "$T/log"; }
events() { "$ENTROPYCTL" -s "$CTL_SOCKET" --json status 2> /dev/null | jq '.totals.events' 2> /dev/null; }

(while sleep "$RELOAD"; do kill -HUP "$PRIV" 2> /dev/null || exit 0; done) &
HUP_PID=$!
csv=${SOAK_CSV:-$T/soak.csv}
echo "seconds,reloads,events,priv_rss_kb,priv_fds,coll_rss_kb,coll_fds" > "$csv"
printf '%8s %8s %10s %12s %9s %12s %9s\n' seconds reloads events "priv RSS kB" "priv fds" \
	"coll RSS kB" "coll fds"
t0=$(date +%s)
next=0
round=0
while :; do
	now=$(($(date +%s) - t0))
	if [ "$now" -ge "$next" ]; then
		kill -0 "$COLL" 2> /dev/null || fail "the collector is gone after $now s"
		line="$now,$(reloads),$(events),$(rss "$PRIV"),$(fds "$PRIV"),$(rss "$COLL"),$(fds "$COLL")"
		echo "$line" >> "$csv"
		echo "$line" | awk -F, '{ printf "%8s %8s %10s %12s %9s %12s %9s\n", $1, $2, $3, $4, $5, $6, $7 }'
		next=$((next + SAMPLE))
	fi
	[ "$now" -ge "$DURATION" ] && break
	round=$((round + 1))
	"$EVGEN" -n 300 -p random -s $((round * 2)) -r "$round" >&9 2> /dev/null || fail "evgen"
	"$DIO" -r 200 -w 100 -s "$round" "$L" > /dev/null || fail "dio"
	send 200 500-3000
	for q in status "--json sources" metrics; do
		# shellcheck disable=SC2086 # a command and its option
		"$ENTROPYCTL" -s "$CTL_SOCKET" $q > /dev/null || fail "entropyctl $q failed after $now s"
	done
done
kill "$HUP_PID"; wait "$HUP_PID" 2> /dev/null; HUP_PID=
exec 9>&-
stop_daemon
grep -E "kernel sink: .* errors" "$T/log" | tail -1 | sed 's/^.*kernel sink/kernel sink/'

# plateau COLUMN NAME TOLERANCE: the largest value of the second half against the first's.
plateau() {
	awk -F, -v c="$1" -v name="$2" -v tol="$3" 'NR > 1 { v[++n] = $c }
	END {
		h = int(n / 2)
		if (h < 2) { printf "%s: %d samples, too few to tell\n", name, n; exit }
		for (i = 2; i <= h; i++) if (v[i] > a) a = v[i] # the first sample is the start
		for (i = h + 1; i <= n; i++) if (v[i] > b) b = v[i]
		printf "%s: %s at the start, highest %s in the first half, %s in the second: ",
			name, v[1], a, b
		print (b <= a + tol ? "a plateau" : "still growing")
	}' "$csv"
}
plateau 4 "privileged process RSS (kB)" "$PLATEAU_KB"
plateau 6 "collector RSS (kB)" "$PLATEAU_KB"
plateau 5 "privileged process descriptors" 0
plateau 7 "collector descriptors" 0
echo "$(tail -1 "$csv" | cut -d, -f2) reloads, $(tail -1 "$csv" | cut -d, -f3) events in $DURATION s"
