#!/bin/bash
# t_reload: SIGHUP with a good config applies it; with a bad one the old policy stays.
. "$(dirname "$0")/lib.sh"

base='feed = { mode = "always"; };'
others='block = { mode = "disabled"; }; network = { mode = "disabled"; };'
write_config "$T/e.conf" "$base" "policy = { input = { mode = \"trusted\"; cap_bits_per_second = 1000000.0; }; $others };"
mkfifo "$T/input/event0"
start_daemon -v --dry-run -f "$T/e.conf"
wait_for 5 grep -q "input/event0: attached" "$T/log" || fail "FIFO not attached"
open_fifo "$T/input/event0"

"$EVGEN" -n 100 -s 10 -p alt >&9
wait_summary "input/event0: .*100 events, .*194\.0 bits credited" || fail "first replay"

# A bad config: rejected whole, with file:line, and the trusted policy stays.
write_config "$T/e.conf" "$base" "policy = { input = { mode = \"mix-only\"; cap_bits_per_event = 99.0; }; $others };"
kill -HUP "$DAEMON_PID"
wait_for 5 grep -q "reload rejected (1 error)" "$T/log" || fail "bad reload not rejected"
grep -qE "$T/e.conf:3: policy.input.cap_bits_per_event: " "$T/log" || fail "reload error lacks file:line"
# The second replay starts 10 s later: that gap makes every one of its events earn the cap.
"$EVGEN" -n 100 -s 20 -p alt >&9
wait_summary "input/event0: .*policy trusted, 200 events, .*394\.0 bits credited" ||
	fail "after a rejected reload the old trusted policy must stay"

# A good config: mix-only from now on; counters and estimator state survive.
write_config "$T/e.conf" "$base" "policy = { input = { mode = \"mix-only\"; }; $others };"
kill -HUP "$DAEMON_PID"
wait_for 5 grep -q "configuration reloaded" "$T/log" || fail "good reload not applied"
"$EVGEN" -n 100 -s 30 -p alt >&9
wait_summary "input/event0: .*policy mix-only, 300 events, .*394\.0 bits credited" ||
	fail "after reload to mix-only, credit must not grow"
exec 9>&-
stop_daemon
pass "reload: bad config rejected with file:line, good config applied, state kept"
