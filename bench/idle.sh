#!/bin/bash
# bench/idle: how often an idle entropyd wakes up. Runs the daemon with an empty input
# directory for SECONDS (default 10) and counts its voluntary context switches.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-10}
d=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; rm -rf "$d"' EXIT
mkdir "$d/input"
cat > "$d/e.conf" <<CONF
sources = { input = { watch = "$d/input"; }; };
policy = { block = { mode = "disabled"; }; network = { mode = "disabled"; }; };
control = { socket = "$d/io.entropyd"; };
CONF
"$top/src/entropyd" --foreground --dry-run -f "$d/e.conf" 2> "$d/log" &
pid=$!
sleep 1
before=$(awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$pid/status")
sleep "$secs"
after=$(awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$pid/status")
echo "idle: $((after - before)) voluntary context switches in $secs s with no events"
echo "rss: $(awk '/^VmRSS/ {print $2, $3}' "/proc/$pid/status")"
