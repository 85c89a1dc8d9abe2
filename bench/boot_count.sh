#!/bin/bash
# bench/boot_count.sh (make bench-boot-count): what entropyd executes from its start, counted
# rather than timed, so that a loaded machine changes nothing: for this tree's entropyd and,
# with BOOT_BASELINE=DIR (another tree's build directory, as for bench-boot), that tree's,
# side by side,
#   start   from exec until its log says "started:", with that tree's shipped configuration
#           (the control socket moved to a directory of the run), in a network namespace of
#           its own with no interface up, as in bench-boot's guest: instructions of each
#           process (valgrind --tool=callgrind) and system calls of each (strace -ff);
#   events  BOOT_EVENTS (1700: what a disk's boot takes to ready the CRNG) input events of a
#           fixed pseudo-random timing, read from a FIFO, through estimation, health tests and
#           credit: the collector's instructions until it has taken them all, less its
#           instructions at "started:" without them (the block class off, so no disk adds
#           events of its own).
# Under valgrind the collector builds no seccomp filter, Landlock ruleset or namespaces
# (priv_sandbox.c says so in its log): the instructions are the daemon's own code and its
# libraries; the walls' system calls are in the strace counts. The collector's instructions
# include what the process executed before the fork, as the privileged process's do.
# Needs root (the two processes, a network namespace), valgrind and strace.
# Environment: top_srcdir, top_builddir, ENTROPYD, BOOT_BASELINE, BOOT_EVENTS, BOOT_KEEP=1 (keep
# the work directory: logs, callgrind and strace files).
set -uo pipefail

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${ENTROPYD:=$top_builddir/src/entropyd}"
EVENTS=${BOOT_EVENTS:-1700}
EVGEN=$top_builddir/tests/helpers/evgen

[ "$(id -u)" -eq 0 ] || { echo "bench-boot-count: needs root (entropyd's two processes, a network namespace)" >&2; exit 77; }
for c in valgrind callgrind_annotate strace unshare; do
	command -v "$c" > /dev/null || { echo "bench-boot-count: needs $c" >&2; exit 77; }
done
case $EVENTS in '' | *[!0-9]* | 0) echo "bench-boot-count: BOOT_EVENTS=$EVENTS: give a count" >&2; exit 2 ;; esac
[ -x "$ENTROPYD" ] || { echo "bench-boot-count: $ENTROPYD is not built" >&2; exit 2; }
[ -x "$EVGEN" ] || { echo "bench-boot-count: $EVGEN is not built (make $top_builddir/tests/helpers/evgen)" >&2; exit 2; }
TREES="this:$top_srcdir:$ENTROPYD"
if [ -n "${BOOT_BASELINE:-}" ]; then
	base_src=$(sed -n "s/^abs_top_srcdir = //p" "$BOOT_BASELINE/Makefile" 2>/dev/null)
	if [ -z "$base_src" ] || [ ! -x "$BOOT_BASELINE/src/entropyd" ]; then
		echo "bench-boot-count: BOOT_BASELINE=$BOOT_BASELINE: not a configured build directory with src/entropyd built" >&2
		exit 2
	fi
	TREES="$TREES base:$base_src:$BOOT_BASELINE/src/entropyd"
fi
user=$(sed -n 's/^[[:space:]]*user[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' "$top_srcdir/conf/entropyd.conf" | head -1)
id "${user:=entropyd}" > /dev/null 2>&1 || { echo "bench-boot-count: no user $user for the collector" >&2; exit 77; }

T=$(mktemp -d "${TMPDIR:-/tmp}/entropyd-bench-count.XXXXXX")
chmod 755 "$T"
PIDS=
cleanup() {
	for p in $PIDS; do kill -KILL "$p" 2> /dev/null; done
	if [ "${BOOT_KEEP:-0}" = 1 ]; then echo "bench-boot-count: work directory kept: $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'echo "bench-boot-count: interrupted"; exit 1' INT TERM HUP

# wait_log FILE PATTERN SECONDS
wait_log() {
	for _ in $(seq $(($3 * 20))); do
		grep -q "$2" "$1" 2> /dev/null && return 0
		sleep 0.05
	done
	return 1
}

# conf SRCDIR DIR [events]: SRCDIR's shipped configuration, its socket in DIR/run; for the events
# run, input.watch DIR/input and the block class off.
conf() {
	mkdir -p "$2/run" "$2/input" "$2/rec"
	chmod 755 "$2" "$2/run" "$2/input"
	chown "$user" "$2/rec"
	sed "s|/run/entropyd/io.entropyd|$2/run/io.entropyd|" "$1/conf/entropyd.conf" > "$2/entropyd.conf"
	if [ "${3:-}" = events ]; then
		# The first "block = {" is the policy's, and its first mode line its mode.
		sed -i -e "s|watch = \"/dev/input\"|watch = \"$2/input\"|" \
			-e '0,/^[[:space:]]*block = {/b' -e '0,/mode = "trusted";/s//mode = "disabled";/' \
			"$2/entropyd.conf"
	fi
	chmod 644 "$2/entropyd.conf"
}

# ir FILE: the instructions callgrind counted in FILE.
ir() { sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$1"; }

# flags ENTROPYD DIR: FLAGS, --initramfs where that entropyd has it, as its initramfs script
# (and so bench-boot's guest) starts it; its boot record in DIR.
flags() {
	FLAGS=()
	if "$1" --help | grep -q -- --initramfs; then
		FLAGS=(--initramfs --boot-record "$2/boot.json")
	fi
}

# start NAME ENTROPYD DIR TOOL: one run of TOOL (callgrind or strace) until "started:".
start() {
	local pid priv
	rm -f "$3"/run/* "$3/boot.json"
	flags "$2" "$3"
	case $4 in
	callgrind)
		unshare -n valgrind -q --tool=callgrind --trace-children=yes \
			--callgrind-out-file="$3/rec/cg.%p" "$2" --foreground -f "$3/entropyd.conf" \
			--record "$3/rec" "${FLAGS[@]}" > "$3/log.$4" 2>&1 &
		pid=$! priv=$pid
		;;
	strace)
		unshare -n strace -ff -o "$3/st" "$2" --foreground -f "$3/entropyd.conf" \
			--record "$3/rec" "${FLAGS[@]}" > "$3/log.$4" 2>&1 &
		pid=$!
		;;
	esac
	PIDS="$PIDS $pid"
	wait_log "$3/log.$4" "started:" 300 || { echo "bench-boot-count: $1: no \"started:\" in $3/log.$4"; return 1; }
	[ "$4" = strace ] && priv=$(pgrep -P "$pid")
	kill -TERM "$priv" # strace passes no SIGTERM on: to the traced process itself
	wait "$pid"
}

# events NAME ENTROPYD DIR: the collector's instructions with EVENTS events taken, and at
# "started:" without them.
events() {
	local pid cg f
	flags "$2" "$3"
	for with in 0 1; do
		rm -f "$3"/run/* "$3"/rec/cg.* "$3/input/event0" "$3/boot.json"
		mkfifo -m 600 "$3/input/event0"
		unshare -n valgrind -q --tool=callgrind --trace-children=yes \
			--callgrind-out-file="$3/rec/cg.%p" "$2" --foreground -v -f "$3/entropyd.conf" \
			--record "$3/rec" "${FLAGS[@]}" > "$3/log.events$with" 2>&1 &
		pid=$!
		PIDS="$PIDS $pid"
		wait_log "$3/log.events$with" "started:" 300 || { echo "bench-boot-count: $1: no \"started:\" in $3/log.events$with"; return 1; }
		if [ $with = 1 ]; then
			"$EVGEN" -n "$EVENTS" -p random -r 1 > "$3/input/event0" 2> /dev/null
			# Taken when their symbols are recorded (within seconds: est_record.c), one
			# an event but the first.
			for _ in $(seq 1200); do
				[ "$(stat -c %s "$3/rec/input-event0.bin" 2> /dev/null || echo 0)" -ge $((EVENTS - 1)) ] && break
				sleep 0.05
			done
		fi
		# Both runs: one summary, the taken events' count in it.
		kill -USR1 "$pid"
		wait_log "$3/log.events$with" "input/event0: kind" 60 ||
			{ echo "bench-boot-count: $1: no summary in $3/log.events$with"; return 1; }
		kill -TERM "$pid"
		wait "$pid"
		# The collector's file: the one the privileged process did not write.
		for f in "$3"/rec/cg.*; do [ "$f" = "$3/rec/cg.$pid" ] || cg=$f; done
		ir "$cg" > "$3/ir.events$with"
	done
	grep -o "input/event0: kind .*, [0-9]* events\?," "$3/log.events1" | head -1 |
		sed 's/.*, \([0-9]*\) events\?,/\1 events taken/' > "$3/taken"
}

printf "bench-boot-count: %s events; trees:" "$EVENTS"
for t in $TREES; do
	IFS=: read -r name src bin <<< "$t"
	printf " %s %s (%s)" "$name" "$src" "$(git -C "$src" describe --always --dirty 2>/dev/null || echo "not a git tree")"
	conf "$src" "$T/$name"
	conf "$src" "$T/$name-ev" events
	start "$name" "$bin" "$T/$name" callgrind || exit 1
	start "$name" "$bin" "$T/$name" strace || exit 1
	events "$name" "$bin" "$T/$name-ev" || exit 1
done
echo

# The privileged process's files are the older (lower pid) of each pair.
# shellcheck disable=SC2086 # TREES is a word list
python3 - "$T" $TREES << 'EOF'
import glob, os, re, sys

d = sys.argv[1]
rows = {}
for t in sys.argv[2:]:
    name = t.split(":")[0]
    w = os.path.join(d, name)
    cg = sorted(glob.glob(w + "/rec/cg.*"), key=lambda f: int(f.rsplit(".", 1)[1]))
    ir = []
    for f in cg:
        m = re.search(r"^summary: *(\d+)", open(f).read(), re.M)
        ir.append(int(m.group(1)) if m else 0)
    st = sorted(glob.glob(w + "/st.*"), key=lambda f: int(f.rsplit(".", 1)[1]))
    calls = [sum(1 for l in open(f) if not l.startswith(("+++", "---"))) for f in st]
    e0 = int(open(os.path.join(d, name + "-ev", "ir.events0")).read() or 0)
    e1 = int(open(os.path.join(d, name + "-ev", "ir.events1")).read() or 0)
    taken = open(os.path.join(d, name + "-ev", "taken")).read().strip()
    rows[name] = (ir[:2], calls[:2], e1 - e0, taken)
names = list(rows)
fmt = "%-44s" + " %14s" * len(names) + ("  %8s" if len(names) > 1 else "")
print(fmt % (("",) + tuple(names) + (("ratio",) if len(names) > 1 else ())))
def line(label, vals, unit=1.0, f="%.2f M"):
    out = [f % (v / unit) for v in vals]
    if len(vals) > 1:
        out.append("%.3f" % (vals[0] / vals[1]) if vals[1] else "-")
    print(fmt % ((label,) + tuple(out)))
line("start: privileged process, instructions", [rows[n][0][0] for n in names], 1e6)
line("start: collector, instructions", [rows[n][0][1] for n in names], 1e6)
line("start: privileged process, system calls", [rows[n][1][0] for n in names], 1, "%d")
line("start: collector, system calls", [rows[n][1][1] for n in names], 1, "%d")
line("events: collector, instructions", [rows[n][2] for n in names], 1e6)
for n in names:
    print("%s: %s" % (n, rows[n][3] or "the events were not all taken"))
EOF
