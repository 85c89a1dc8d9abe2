#!/bin/bash
# bench/soak_health: does a healthy source under load stay clear of the permanent health
# failure, while a broken one beside it fails for good? One daemon, for DURATION seconds:
#  - block: the disk the root file system is on, under parallel dd jobs on files of that
#    disk (4 KiB O_DIRECT writes, 1 MiB buffered writes with fsync, 4 KiB and 64 KiB
#    O_DIRECT reads, 16 KiB O_DIRECT+O_DSYNC writes), each file at most SOAK_MB MiB;
#  - network: a veth pair in two private network namespaces, flooded by udpgen (FLOOD
#    packets as fast as it sends, from 32 addresses, then a pause of PAUSE seconds, over
#    and over), on the first CPU, while receive packet steering hands the packets to the
#    last CPU's poll, as a NIC's queue is drained (on a machine of one CPU, in the
#    sender's context);
#  - input: two broken devices replayed through FIFOs: event0 a key every 40 ms exactly (a
#    fixed period, one interval over and over), event1 a clock that stands still (every
#    key at the same time, as a stuck counter gives).
# Every SAMPLE seconds each instance's health is read ("entropyctl --json sources"); at the
# end the table says, per instance, its health failures (intermittent trips per hour),
# its permanent ones (and how many of those were a flood's start, taken back), its state,
# and its bits credited per event. It fails if the disk or the interface was failed
# permanently at two samples in a row or at the end (a flood's start, taken back within a
# second or so, is not), or if a broken device was not.
# The disk's and the interface's symbols are recorded (record.dir) and assessed afterwards
# with entropyd --assess, the whole recording and its first million symbols: the second
# table sets the online estimate per symbol (its average over the run, estimated_bits over
# the symbols) and the credit per symbol (credited_bits over the symbols) beside those
# offline assessments. It fails too if the credit per symbol is above the assessment of the
# whole recording.
# As root; a benchmark, not a test: run it by hand.
#   bench/soak_health.sh                       30 minutes
#   DURATION=300 bench/soak_health.sh          5 minutes
#   SOAK_DIR=/srv bench/soak_health.sh         the dd files there (default /var/tmp): on the
#                                              disk to load
#   SOAK_KEEP=DIR bench/soak_health.sh         keep the recordings and the log in DIR
#   top_builddir=build bench/soak_health.sh    the binaries of a build tree
set -u
DURATION=${DURATION:-1800}
SAMPLE=${SAMPLE:-10}
FLOOD=${FLOOD:-1000000}
PAUSE=${PAUSE:-20}
SOAK_MB=${SOAK_MB:-512}
# The tests' helpers: a private daemon, namespaces, the generators.
. "$(dirname "$0")/../tests/integration/lib.sh"
fail() { echo "FAIL: $*" >&2; [ -f "$T/log" ] && tail -20 "$T/log" | sed 's/^/  log: /' >&2; exit 1; }

netns_pair # skips without root
for p in "$EVGEN" "$UDPGEN" "$ENTROPYCTL"; do
	[ -x "$p" ] || skip "$p is not built (make check builds it)"
done
command -v jq > /dev/null || skip "needs jq"
root=$(findmnt -no SOURCE /)
disk=$(lsblk -no PKNAME "$root" 2> /dev/null | head -1)
[ -n "$disk" ] || disk=${root#/dev/}
[ -d "/sys/block/$disk" ] || skip "the root file system is on $root, not on a disk of /sys/block"
D=$(mktemp -d "${SOAK_DIR:-/var/tmp}/entropyd-soak.XXXXXX") || fail "no directory for the dd files"
LOAD_PIDS=
soak_cleanup() {
	# shellcheck disable=SC2086 # a list of PIDs
	[ -n "$LOAD_PIDS" ] && kill $LOAD_PIDS 2> /dev/null && wait $LOAD_PIDS 2> /dev/null
	rm -rf "$D"
	cleanup
	netns_cleanup
}
trap soak_cleanup EXIT

make_link
last_cpu=$(($(nproc) - 1))
if [ "$last_cpu" -gt 0 ]; then
	ip netns exec "$NB" sh -c "printf '%x' $((1 << last_cpu)) > /sys/class/net/$VB/queues/rx-0/rps_cpus" ||
		fail "cannot steer $VB's packets to CPU $last_cpu"
fi
daemon_in_ns
mkdir -p "$T/input"
cat > "$T/e.conf" <<EOF
feed = { mode = "always"; };
record = { dir = "$T/rec"; max_bytes = 1073741824; };
policy = { input = { mode = "trusted"; }; block = { mode = "trusted"; };
           network = { mode = "reduced"; scale = 0.25; }; };
sources = { input = { watch = "$T/input"; };
            block = { backend = "tracepoint"; devices = [ "$disk" ]; };
            network = { interfaces = [ "$VB" ]; }; };
control = { socket = "$CTL_SOCKET"; };
EOF
mkfifo "$T/input/event1"
start_fifo_daemon -v -f "$T/e.conf"
wait_for 5 grep -q "input/event1: attached" "$T/log" || fail "FIFO event1 not attached"
exec 8> "$T/input/event1"
grep -q "started: 4 sources open" "$T/log" || fail "not every class open: $(grep started: "$T/log")"

# The load, each job bounded by the end of the run.
end=$(($(date +%s) + DURATION))
job() { while [ "$(date +%s)" -lt "$end" ]; do timeout $((end - $(date +%s) + 1)) "$@" status=none 2> /dev/null; done; }
mb=$SOAK_MB
dd if=/dev/urandom of="$D/r1" bs=1M count="$mb" status=none || fail "dd"
dd if=/dev/urandom of="$D/r2" bs=1M count="$mb" status=none || fail "dd"
job dd if=/dev/zero of="$D/w1" bs=4k count=$((mb * 256)) oflag=direct &
LOAD_PIDS="$LOAD_PIDS $!"
job dd if=/dev/zero of="$D/w2" bs=1M count="$mb" conv=fsync &
LOAD_PIDS="$LOAD_PIDS $!"
job dd if="$D/r1" of=/dev/null bs=4k iflag=direct &
LOAD_PIDS="$LOAD_PIDS $!"
job dd if="$D/r2" of=/dev/null bs=64k iflag=direct &
LOAD_PIDS="$LOAD_PIDS $!"
job dd if=/dev/zero of="$D/w3" bs=16k count=$((mb * 64)) oflag=direct,dsync &
LOAD_PIDS="$LOAD_PIDS $!"
(while [ "$(date +%s)" -lt "$end" ]; do
	ip netns exec "$NA" taskset -c 0 "$UDPGEN" -d 10.77.0.2 -p 9999 -n "$FLOOD" -g 0 -r "$RANDOM" 2> /dev/null
	sleep "$PAUSE"
done) &
LOAD_PIDS="$LOAD_PIDS $!"

# health NAME: "state failures requalified" of instance CLASS/NAME.
health() {
	"$ENTROPYCTL" -s "$CTL_SOCKET" --json sources 2> /dev/null |
		jq -r --arg n "$1" '.sources[] | select(.class + "/" + .name == $n) |
			"\(.health.state) \(.health.failures) \(.health.requalified)"'
}
names=("block/$disk" "network/$VB" "input/event0" "input/event1")
declare -A seen_perm last_perm
printf '%8s' seconds
for n in "${names[@]}"; do printf ' %28s' "$n"; done
echo
t0=$(date +%s) round=0 next=0
while :; do
	now=$(($(date +%s) - t0))
	[ "$now" -ge "$DURATION" ] && break
	# The broken device: 25 keys a second of its own time, each 40 ms after the last.
	"$EVGEN" -n 25 -p periodic -g 40000 -s $((100 + round)) >&9 2> /dev/null || fail "evgen"
	# The stuck one: 1,000 keys a second, all at the same time.
	"$EVGEN" -n 1000 -p periodic -g 0 -s 100 >&8 2> /dev/null || fail "evgen"
	round=$((round + 1))
	if [ "$now" -ge "$next" ]; then
		kill -0 "$DAEMON_PID" 2> /dev/null || fail "the daemon is gone after $now s"
		printf '%8s' "$now"
		for n in "${names[@]}"; do
			h=$(health "$n")
			printf ' %28s' "${h:--}"
			case $h in
			failed-permanent*) [ -n "${last_perm[$n]:-}" ] && seen_perm[$n]=1; last_perm[$n]=1 ;;
			*) last_perm[$n]= ;;
			esac
		done
		echo
		next=$((next + SAMPLE))
	fi
	sleep 1
done
kill_load() {
	# shellcheck disable=SC2086 # a list of PIDs
	kill $LOAD_PIDS 2> /dev/null; wait $LOAD_PIDS 2> /dev/null; LOAD_PIDS=
}
kill_load
final=$("$ENTROPYCTL" -s "$CTL_SOCKET" --json sources) || fail "entropyctl sources"
exec 9>&- 8>&-
stop_daemon
if [ -n "${SOAK_KEEP:-}" ]; then
	mkdir -p "$SOAK_KEEP" && cp -a "$T/rec/." "$T/log" "$SOAK_KEEP/" || fail "cannot keep the recordings in $SOAK_KEEP"
fi

# Per instance: its failures (the status's count), the permanent ones and the flood starts
# taken back as the log said them (rate-limited: at least that many), the final state.
echo
printf '%-22s %9s %10s %9s %9s %16s %10s %10s\n' instance failures "trips/h" permanent \
	"taken back" state events "bits/event"
status=0
for n in "${names[@]}"; do
	read -r state failures requal events credited < <(echo "$final" | jq -r --arg n "$n" \
		'.sources[] | select(.class + "/" + .name == $n) |
		"\(.health.state) \(.health.failures) \(.health.requalified) \(.events) \(.credited_bits)"')
	perm=$(grep -c "^entropyd: [a-z]*: $n: .*, permanent)" "$T/log")
	back=$(grep -c "^entropyd: [a-z]*: $n: its health tests failed on the start of a flood" "$T/log")
	awk -v n="$n" -v f="$failures" -v d="$DURATION" -v p="$perm" -v b="$back" -v s="$state" \
		-v e="$events" -v c="$credited" 'BEGIN {
		printf "%-22s %9s %10.1f %9s %9s %16s %10s %10.4f\n", n, f, f * 3600 / d, p, b, s, e,
			(e > 0 ? c / e : 0) }'
	case $n in
	input/*)
		[ "$state" = failed-permanent ] ||
			{ echo "FAIL: the broken device $n is $state, not failed-permanent" >&2; status=1; } ;;
	*)
		if [ "$state" = failed-permanent ] || [ "$requal" -gt 0 ] || [ -n "${seen_perm[$n]:-}" ]; then
			echo "FAIL: $n failed permanently under load (state $state at the end," \
				"${seen_perm[$n]:+failed-permanent at two samples in a row, }re-qualified $requal times)" >&2
			status=1
		fi ;;
	esac
done
[ "${#seen_perm[@]}" -eq 0 ] || echo "failed-permanent at two samples in a row: ${!seen_perm[*]}"

# The online estimate against the offline assessment of the same symbols. A symbol is a
# timing event (a merged batch is one); the estimate is min(kernel rule, SP 800-90B's
# estimate in force, the class cap) for each.
assessed() { # FILE [BYTES]: entropyd --assess's bits per symbol over FILE (its first BYTES)
	local f=$1
	if [ -n "${2:-}" ]; then head -c "$2" "$1" > "$T/part" && f=$T/part; fi
	"$ENTROPYD" --assess "$f" --bits 8 --json 2> /dev/null | jq -r '.min_entropy // "-"'
}
echo
printf '%-22s %10s %16s %16s %16s %18s\n' instance symbols "estimate/symbol" \
	"credited/symbol" "offline whole" "offline first 1M"
for n in "block/$disk" "network/$VB"; do
	f=$T/rec/${n/\//-}.bin
	[ -s "$f" ] || { printf '%-22s %10s\n' "$n" 0; continue; }
	syms=$(stat -c %s "$f")
	read -r est credited < <(echo "$final" | jq -r --arg n "$n" '.sources[] |
		select(.class + "/" + .name == $n) | "\(.estimated_bits) \(.credited_bits)"')
	whole=$(assessed "$f")
	first=-
	[ "$syms" -gt 1000000 ] && first=$(assessed "$f" 1000000)
	awk -v n="$n" -v s="$syms" -v e="$est" -v c="$credited" -v w="$whole" -v f="$first" '
	function num(x) { return x ~ /^[0-9.]+$/ ? sprintf("%.4f", x) : x }
	BEGIN { printf "%-22s %10d %16.4f %16.4f %16s %18s\n", n, s, e / s, c / s, num(w), num(f)
		if (w ~ /^[0-9.]+$/ && c / s > w) {
			printf "FAIL: %s credited %.4f bits a symbol, above the %.4f assessed\n",
				n, c / s, w > "/dev/stderr"
			exit 1 } }' || status=1
done
exit $status
