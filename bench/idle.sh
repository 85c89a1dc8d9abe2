#!/bin/bash
# bench/idle: how often an idle entropyd wakes up. Runs the daemon with an empty input
# directory for SECONDS (default 10) and counts the voluntary context switches of its two
# processes. top_builddir=DIR: the binary of a build tree (default: built in place).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
# The build tree ("make bench" says where; else the source tree, built in place).
: "${top_builddir:=$top}"
secs=${1:-10}
d=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; rm -rf "$d"' EXIT
mkdir "$d/input"
cat > "$d/e.conf" <<CONF
sources = { input = { watch = "$d/input"; }; };
policy = { block = { mode = "disabled"; }; network = { mode = "disabled"; }; };
control = { socket = "$d/io.entropyd"; };
CONF
"$top_builddir/src/entropyd" --foreground --dry-run -f "$d/e.conf" 2> "$d/log" &
pid=$!
sleep 1
# Both processes: the privileged one ($pid) and the collector, its child.
procs="$pid $(pgrep -P "$pid")"
sum() { for p in $procs; do awk -v f="$1:" '$1 == f {print $2}' "/proc/$p/status"; done |
	awk '{ s += $1 } END { print s }'; }
before=$(sum voluntary_ctxt_switches)
sleep "$secs"
after=$(sum voluntary_ctxt_switches)
echo "idle: $((after - before)) voluntary context switches in $secs s with no events (both processes)"
echo "rss: $(sum VmRSS) kB (privileged process $(awk '/^VmRSS/ {print $2}' "/proc/$pid/status") kB, collector the rest)"
