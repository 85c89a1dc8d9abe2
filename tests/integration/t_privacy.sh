#!/bin/bash
# t_privacy: not a keylogger. Key codes, values and event times written into the input
# stream never appear in any log line or output, even at debug verbosity.
. "$(dirname "$0")/lib.sh"

code=0x2a7   # 679
value=0x5ec12e7 # 99357415
start=987654 # event times start at 987654 s
write_config "$T/e.conf" 'feed = { mode = "always"; };' \
	'policy = { block = { mode = "disabled"; }; network = { mode = "disabled"; }; };'
mkfifo "$T/input/event0"
start_daemon -v -v --dry-run -f "$T/e.conf"
open_fifo "$T/input/event0"
"$EVGEN" -n 300 -p random -r 7 -s "$start" -k "$code" -x "$value" >&9
wait_summary "input/event0: .*300 events" || fail "events not counted"
exec 9>&-
"$ENTROPYD" -p -f "$T/e.conf" >> "$T/log" 2>&1
stop_daemon
# Numbers that differ from run to run are not ours to judge: the private directory's random
# name, and the two processes' IDs ("privileged process P: the collector is process C"), in
# which a needle can turn up by chance (process 26794 holds 679).
sed -i -E "s|$T||g; s/process [0-9]+/process PID/g" "$T/log"
for needle in 679 2a7 2A7 99357415 5ec12e7 5EC12E7 "$start"; do
	grep -qi -- "$needle" "$T/log" &&
		fail "input content or timing '$needle' leaked into the output: $(grep -i -m3 -- "$needle" "$T/log")"
done
# The masking hid no more than the IDs: the log still names both processes.
[ "$(grep -o 'process PID' "$T/log" | wc -l)" -ge 2 ] || fail "the log does not name the two processes"
# The needles are really in the stream we sent (so the test can fail).
"$EVGEN" -n 1 -s "$start" -k "$code" -x "$value" | od -A n -t d4 | grep -q 99357415 || fail "test stream lacks the value"
pass "no key code, value or event time in any output"
