#!/bin/bash
# t_replay: the whole pipeline in --dry-run on a FIFO of input events; credited bits asserted.
# The kernel rule at 1 us: intervals of 1000 and 1100 us in turn give min(|d|,|d2|,|d3|) =
# 100, i.e. 6 bits, capped at 2 bits per event; the first three events earn nothing.
. "$(dirname "$0")/lib.sh"

run() { # run NAME PATTERN FRAMES POLICY-LINE
	local name=$1 pattern=$2 frames=$3 policy=$4
	write_config "$T/$name.conf" 'feed = { mode = "always"; };' "$policy"
	rm -f "$T/input/event0"; mkfifo "$T/input/event0"
	start_daemon -v --dry-run -f "$T/$name.conf"
	wait_for 5 grep -q "input/event0: attached" "$T/log" || fail "$name: FIFO not attached"
	open_fifo "$T/input/event0"
	"$EVGEN" -n "$frames" -p "$pattern" >&9 || fail "evgen"
	wait_summary "input/event0: .* $frames events" || fail "$name: $frames events not counted"
	exec 9>&-
	stop_daemon
}

policy='policy = { input = { mode = "trusted"; cap_bits_per_event = 2.0; cap_bits_per_second = 1000000.0; }; block = { mode = "disabled"; }; network = { mode = "disabled"; }; };'
run trusted alt 1000 "$policy"
grep -qE "input/event0: kind stream, .*1000 events, 0 skipped, 8000 bytes mixed, 1994\.0 bits estimated, 1994\.0 bits credited" "$T/log" ||
	fail "trusted: want 1000 events, 8000 bytes, 1994.0 bits credited"
grep -q "dry run: would feed" "$T/log" || fail "dry-run sink logged no batch"
grep -qE "dry-run sink: [1-9][0-9]* batches, 8000 bytes" "$T/log" || fail "not all bytes reached the sink"
pass "trusted replay credits 2 bits per event after warm-up"

run reduced alt 1000 "${policy/\"trusted\";/\"reduced\"; scale = 0.5;}"
grep -qE "input/event0: .*1994\.0 bits estimated, 997\.0 bits credited" "$T/log" ||
	fail "reduced 0.5: want 997.0 bits credited"
pass "reduced policy credits scale x estimate"

run mixonly alt 500 "${policy/\"trusted\";/\"mix-only\";}"
grep -qE "input/event0: .*500 events, 0 skipped, 4000 bytes mixed, .* 0\.0 bits credited" "$T/log" ||
	fail "mix-only: want 0.0 bits credited but 4000 bytes mixed"
pass "mix-only mixes without credit"

run periodic periodic 1000 "$policy"
grep -qE "input/event0: .*1000 events, .* 0\.0 bits credited" "$T/log" ||
	fail "periodic events must earn no credit"
pass "perfectly periodic events earn nothing"

# The per-second cap: 1000 frames 1 ms apart span about a second of event time.
run capped alt 1000 "${policy/1000000.0/100.0}"
credited=$(grep -oE "input/event0: .* ([0-9.]+) bits credited" "$T/log" | tail -1 | grep -oE '[0-9.]+ bits credited' | cut -d' ' -f1)
awk -v c="$credited" 'BEGIN { exit !(c > 0 && c <= 100 + 100 * 1.05 + 0.001) }' ||
	fail "per-second cap 100: credited $credited bits over ~1.05 s of events"
pass "per-second cap holds ($credited bits)"
