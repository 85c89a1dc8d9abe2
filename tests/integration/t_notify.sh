#!/bin/bash
# t_notify: the service manager messages through a test NOTIFY_SOCKET.
. "$(dirname "$0")/lib.sh"

"$ENTROPYD" --help > /dev/null
write_config "$T/e.conf" 'policy = { block = { mode = "disabled"; }; network = { mode = "disabled"; }; };'
"$NOTIFY_SINK" "$T/notify" 20 > "$T/msgs" &
SINK_PID=$!
wait_for 5 test -S "$T/notify" || fail "notify socket not made"
NOTIFY_SOCKET=$T/notify WATCHDOG_USEC=200000 start_daemon --dry-run -f "$T/e.conf"
wait_for 5 grep -q "WATCHDOG=1" "$T/msgs" || fail "no WATCHDOG=1 with WATCHDOG_USEC set"
kill -HUP "$DAEMON_PID"
wait_for 5 grep -q "^RELOADING=1" "$T/msgs" || fail "no RELOADING=1 on SIGHUP"
stop_daemon
wait_for 5 grep -q "STOPPING=1" "$T/msgs" || fail "no STOPPING=1 on SIGTERM"
kill "$SINK_PID" 2>/dev/null
grep -q "^READY=1$" "$T/msgs" || fail "no READY=1"
grep -qE "^STATUS=[a-z]+: [0-9]+ of [0-9]+ sources? open, [0-9]+ events?, [0-9]+ bits? credited" "$T/msgs" ||
	fail "no STATUS= summary: $(cat "$T/msgs")"
# STATUS= counts the sources open as the log's start-up line does (the FIFO of write_config
# is not there: none is open).
n_log=$(grep -oE "started: [0-9]+ sources? open" "$T/log" | grep -oE "[0-9]+")
n_status=$(grep -m1 -oE "^STATUS=[a-z]+: [0-9]+ of" "$T/msgs" | grep -oE "[0-9]+")
[ -n "$n_log" ] && [ "$n_log" = "$n_status" ] ||
	fail "STATUS= says $n_status sources open, the log $n_log: $(cat "$T/msgs")"
# READY=1 comes before any STATUS and again after the reload.
[ "$(grep -c '^READY=1$' "$T/msgs")" -ge 2 ] || fail "READY=1 not sent again after reload"
pass "sd_notify: READY, STATUS, WATCHDOG, RELOADING, STOPPING"

# A start on an invalid file (a restart has stopped the daemon before): no READY=1, and a
# STATUS= that the failed unit keeps, with the first error and what to do.
printf 'feed = {\n  mode = "sometimes";\n};\n' > "$T/bad.conf"
"$NOTIFY_SINK" "$T/notify-bad" 20 > "$T/msgs-bad" &
SINK_PID=$!
wait_for 5 test -S "$T/notify-bad" || fail "notify socket not made"
rc=0
NOTIFY_SOCKET=$T/notify-bad timeout -k 5 30 "$ENTROPYD" -F -d -f "$T/bad.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "start on an invalid file exited $rc, want 1: $(cat "$T/out")"
wait_for 5 grep -q "^STATUS=" "$T/msgs-bad" || fail "no STATUS= on an invalid file: $(cat "$T/msgs-bad")"
kill "$SINK_PID" 2>/dev/null
grep -qF "STATUS=not started (any previous daemon was stopped); fix the file and start again: $T/bad.conf:2: feed.mode: unknown value" "$T/msgs-bad" ||
	fail "STATUS= on an invalid file: $(cat "$T/msgs-bad")"
grep -q "READY=1" "$T/msgs-bad" && fail "READY=1 on an invalid file"
pass "sd_notify on an invalid file: STATUS= with the first error and the fix, no READY"

# ---- the counts that matter: open of those configured, and failing ----
# A FIFO whose events, exactly 1 ms apart, fail the health tests, and an interface no one
# made: one of two open, one failing. STATUS= is sent at once on a reload.
[ "$(id -u)" -eq 0 ] || skip "the counts: needs root (the network class)"
IF=ntx$$
mkfifo "$T/input/event0"
cat > "$T/e.conf" <<EOF
feed = { mode = "always"; };
policy = { block = { mode = "disabled"; }; network = { mode = "trusted"; }; };
sources = { input = { watch = "$T/input"; }; network = { interfaces = [ "$IF" ]; }; };
control = { socket = "$CTL_SOCKET"; };
EOF
"$NOTIFY_SINK" "$T/notify-c" 60 > "$T/msgs-c" &
SINK_PID=$!
wait_for 5 test -S "$T/notify-c" || fail "notify socket not made"
NOTIFY_SOCKET=$T/notify-c start_daemon -v --dry-run -f "$T/e.conf"
wait_for 5 grep -q "input/event0: attached" "$T/log" || fail "FIFO not attached"
open_fifo "$T/input/event0"
"$EVGEN" -n 3000 -s 10 -p periodic >&9 2> /dev/null
failed() {
	"$ENTROPYCTL" -s "$CTL_SOCKET" --json sources | jq_holds '.sources[] |
		select(.name == "event0") | .events == 3000 and (.health.state | startswith("failed"))' > /dev/null
}
wait_for 20 failed || fail "the periodic FIFO did not fail its health tests: $("$ENTROPYCTL" -s "$CTL_SOCKET" sources)"
kill -HUP "$DAEMON_PID"
want="STATUS=always: 1 of 2 sources open, 1 failing its health tests, 3000 events, 0 bits credited"
wait_for 10 grep -qF "$want" "$T/msgs-c" || fail "no \"$want\": $(grep STATUS= "$T/msgs-c")"
exec 9>&-
stop_daemon
kill "$SINK_PID" 2>/dev/null
pass "STATUS= gives the counts that matter: $(grep -F "$want" "$T/msgs-c" | tail -1)"
