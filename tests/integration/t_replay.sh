#!/bin/bash
# t_replay: the whole pipeline in --dry-run on a FIFO of input events; credited bits asserted.
# No instance earns credit before its first 1024 symbols pass the health tests; after that a
# trusted instance earns min(cap, estimate) per event, a reduced one scale times that.
. "$(dirname "$0")/lib.sh"

policy='policy = { input = { mode = "trusted"; cap_bits_per_event = 2.0; cap_bits_per_second = 1000000.0; }; block = { mode = "disabled"; }; network = { mode = "disabled"; }; };'

start() { # start NAME POLICY-LINE
	write_config "$T/$1.conf" 'feed = { mode = "always"; };' "$2"
	rm -f "$T/input/event0"; mkfifo "$T/input/event0"
	start_daemon -v --dry-run -f "$T/$1.conf"
	wait_for 5 grep -q "input/event0: attached" "$T/log" || fail "$1: FIFO not attached"
	open_fifo "$T/input/event0"
}
send() { # send TOTAL-EVENTS-AFTER EVGEN-ARGS...
	local total=$1; shift
	"$EVGEN" "$@" >&9 2> "$T/span" || fail "evgen"
	wait_summary "input/event0: .* $total events" || fail "$total events not counted"
}
credited() { grep -oE "input/event0: .* ([0-9.]+) bits credited" "$T/log" | tail -1 | grep -oE '[0-9.]+ bits credited$' | cut -d' ' -f1; }
field() { grep -oE "input/event0: .*" "$T/log" | tail -1 | grep -oE "$1 [a-z-]+" | tail -1 | cut -d' ' -f2; }
stop() { exec 9>&-; stop_daemon; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b + 1e-9) }'; }

# Trusted, random intervals: nothing before 1024 symbols, then at most the cap per event.
start trusted "$policy"
send 1000 -n 1000 -p random -r 3
[ "$(credited)" = "0.0" ] || fail "credit during the start-up test: $(credited)"
send 4000 -n 3000 -p random -r 4 -s 100
trusted=$(credited)
[ "$(field health)" = "ok" ] || fail "random stream: health $(field health)"
grep -qE "input/event0: kind stream, .*4000 events, 0 skipped, 32000 bytes mixed" "$T/log" || fail "counts"
le "$trusted" $((2 * (4000 - 1024))) || fail "trusted credit $trusted above cap x events after start-up"
le 1000 "$trusted" || fail "trusted credit $trusted: a random stream should earn credit"
grep -q "dry run: would feed" "$T/log" || fail "dry-run sink logged no batch"
stop
grep -qE "dry-run sink: [1-9][0-9]* batches, 32000 bytes" "$T/log" || fail "not all bytes reached the sink"
pass "trusted: no credit in start-up, then $trusted bits for 4000 random events"

# Reduced 0.5: exactly half of the same stream's trusted credit.
start reduced "${policy/\"trusted\";/\"reduced\"; scale = 0.5;}"
send 1000 -n 1000 -p random -r 3
send 4000 -n 3000 -p random -r 4 -s 100
reduced=$(credited)
stop
awk -v t="$trusted" -v r="$reduced" 'BEGIN { d = t / 2 - r; exit !(d < 0.11 && d > -0.11) }' ||
	fail "reduced 0.5 credited $reduced, want half of $trusted"
pass "reduced: $reduced bits, half of trusted"

start mixonly "${policy/\"trusted\";/\"mix-only\";}"
send 3000 -n 3000 -p random -r 5
[ "$(credited)" = "0.0" ] || fail "mix-only credited $(credited)"
grep -qE "input/event0: .*3000 events, 0 skipped, 24000 bytes mixed" "$T/log" || fail "mix-only must still mix"
stop
pass "mix-only mixes without credit"

# Stuck and periodic sources end at zero credit, and the health state says why.
start periodic "$policy"
send 3000 -n 3000 -p periodic
[ "$(credited)" = "0.0" ] || fail "events exactly 1 ms apart earned $(credited) bits"
health=$(field health)
case "$health" in failed*) ;; *) fail "periodic: health $health";; esac
stop
pass "events exactly 1 ms apart: no credit, health $health"

# A replayed trace (256 intervals, over and over) ends at zero credit: a second pass of
# 4000 events earns nothing more than the first.
start loop "$policy"
send 4000 -n 4000 -p loop -r 9
first=$(credited)
send 8000 -n 4000 -p loop -r 9 -s 100
[ "$(credited)" = "$first" ] || fail "a looped trace kept earning: $first then $(credited) bits"
stop
pass "looped trace: $first bits, then nothing more"

# The per-second cap holds on the daemon's clock too: seconds of recorded events replayed in
# a moment credit no more than the cap times the moment, plus the first second's worth. The
# moment is timed from the first event sent to the credit read (the bucket starts full at the
# first event and holds no more than a second's worth), not over the daemon's start and stop.
start capped "${policy/1000000.0/5.0}"
t0=$(date +%s.%N)
send 4000 -n 4000 -p random -r 6
capped=$(credited)
wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
span=$(sed -n 's/^span_us=//p' "$T/span")
stop
le "$wall" "$(awk -v s="$span" 'BEGIN { print s / 4e6 }')" ||
	fail "the replay took $wall s of $span us recorded: too slow to tell the clocks apart"
le "$capped" "$(awk -v w="$wall" 'BEGIN { print 5 + 5 * w }')" ||
	fail "per-second cap 5: $capped bits in $wall s ($span us of events)"
le 5 "$capped" || fail "per-second cap: not even the first second's worth credited ($capped)"
pass "per-second cap holds in real time ($capped bits in $wall s, $span us of events)"
