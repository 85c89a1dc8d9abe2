#!/bin/bash
# t_reload: SIGHUP with a good config applies it; with a bad one the old policy stays.
# entropyctl reload prints every notice and warning of the reload, and under the journal
# leaves the errors to the daemon's log.
. "$(dirname "$0")/lib.sh"

base='feed = { mode = "always"; };'
others='block = { mode = "disabled"; }; network = { mode = "disabled"; };'
credited() { grep -oE "input/event0: .* ([0-9.]+) bits credited" "$T/log" | tail -1 | grep -oE '[0-9.]+ bits credited$' | cut -d' ' -f1; }
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }

write_config "$T/e.conf" "$base" "policy = { input = { mode = \"trusted\"; cap_bits_per_second = 1000000.0; }; $others };"
start_fifo_daemon -v --dry-run -f "$T/e.conf"

"$EVGEN" -n 3000 -s 10 -p random -r 1 >&9 2>/dev/null
wait_summary "input/event0: .*policy trusted, .* 3000 events" || fail "first replay"
first=$(credited)
gt "$first" 0 || fail "the first replay earned nothing"

# A bad config: rejected whole, with file:line, and the trusted policy stays.
write_config "$T/e.conf" "$base" "policy = { input = { mode = \"mix-only\"; cap_bits_per_event = 99.0; }; $others };"
kill -HUP "$DAEMON_PID"
wait_for 5 grep -q "reload rejected (1 error)" "$T/log" || fail "bad reload not rejected"
grep -qE "$T/e.conf:3: policy.input.cap_bits_per_event: " "$T/log" || fail "reload error lacks file:line"
"$EVGEN" -n 1000 -s 30 -p random -r 2 >&9 2>/dev/null
wait_summary "input/event0: .*policy trusted, .* 4000 events" || fail "after a rejected reload the old trusted policy must stay"
second=$(credited)
gt "$second" "$first" || fail "trusted credit must keep growing after a rejected reload ($first -> $second)"

# A good config: mix-only from now on; counters and health state survive (no new start-up).
# The scale left beside it does not apply to mix-only: a notice with file:line, no error.
write_config "$T/e.conf" "$base" "policy = { input = { mode = \"mix-only\"; scale = 0.5; }; $others };"
kill -HUP "$DAEMON_PID"
wait_for 5 grep -q "configuration reloaded" "$T/log" || fail "good reload not applied"
grep -qF "$T/e.conf:3: notice: policy.input.scale: scale applies only to mode \"reduced\" (the mode here is \"mix-only\"); ignored" "$T/log" ||
	fail "the reload did not log the notice about scale: $(grep -F scale "$T/log")"
"$EVGEN" -n 1000 -s 50 -p random -r 3 >&9 2>/dev/null
wait_summary "input/event0: .*policy mix-only, health ok, .* 5000 events, 0 skipped, 40000 bytes mixed" ||
	fail "after reload to mix-only: counters and health must carry on"
[ "$(credited)" = "$second" ] || fail "after reload to mix-only, credit grew: $second -> $(credited)"
exec 9>&-
stop_daemon
pass "reload: bad config rejected with file:line, good config applied with its notice, state kept"

# Under the unit's UMask=0077: the collector, another user in a root of its own, still reads
# the configuration on reload (the directories of that root are 0755 whatever the umask).
write_config "$T/e.conf" "$base" "policy = { input = { mode = \"trusted\"; }; $others };"
rm -f "$T/input/event0"
umask 077
start_fifo_daemon -v --dry-run -f "$T/e.conf"
umask 022
kill -HUP "$DAEMON_PID"
wait_for 5 grep -qE "configuration reloaded|reload rejected" "$T/log" || fail "no answer to SIGHUP under umask 077"
grep -q "configuration reloaded" "$T/log" ||
	fail "under umask 077 the reload was rejected: $(grep -A2 'reload' "$T/log" | head -5)"
exec 9>&-
stop_daemon
pass "under umask 077 (the unit's), a reload reads the configuration"

# ---- entropyctl reload says everything the reload said: the file's notices, a name that
# matches nothing, what takes effect only at restart; in text and in JSON ----
write_config "$T/e.conf" "$base" "policy = { input = { mode = \"trusted\"; }; $others };"
rm -f "$T/input/event0"
start_fifo_daemon -v --dry-run -f "$T/e.conf"
write_config "$T/e.conf" 'feed = { mode = "always"; device = "/dev/urandom"; };' \
	"policy = { input = { mode = \"mix-only\"; scale = 0.5; instances = ( { name = \"nomatch$$\"; mode = \"trusted\"; } ); }; $others };"
"$ENTROPYCTL" -s "$CTL_SOCKET" reload > "$T/out" 2> "$T/err" || fail "reload: $(cat "$T/err")"
[ "$(cat "$T/out")" = "configuration reloaded" ] || fail "reload said: $(cat "$T/out")"
for want in "$T/e.conf:3: notice: policy.input.scale: scale applies only to mode \"reduced\"" \
	"warning: input: policy.input.instances[0].name \"nomatch$$\" matches no input device (yet)" \
	"warning: feed.device changed to /dev/urandom: takes effect at restart"; do
	grep -qF "$want" "$T/err" || fail "reload did not say \"$want\": $(cat "$T/err")"
done
[ "$(wc -l < "$T/err")" -eq 3 ] || fail "reload said more, or less, than its three: $(cat "$T/err")"
"$ENTROPYCTL" -s "$CTL_SOCKET" --json reload > "$T/json" || fail "reload --json"
jq_holds --arg n "nomatch$$" '.reloaded == true and (.notices | length) == 3 and
	(.notices | map(select(test("matches no input device"))) | .[0] | contains($n)) and
	(.notices | map(select(test("takes effect at restart"))) | length) == 1' "$T/json" > /dev/null ||
	fail "reload --json: $(cat "$T/json")"
pass "entropyctl reload: the file's notice, the name that matches nothing, the restart-only change; --json too"

# As ExecReload= runs it, its stderr the journal the daemon logs to: each error once, there.
printf 'feed = {\n  mode = "sometimes";\n};\n' > "$T/e.conf"
: > "$T/jerr"
rc=0
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/jerr") "$ENTROPYCTL" -s "$CTL_SOCKET" reload 2>> "$T/jerr" || rc=$?
[ "$rc" -eq 1 ] || fail "a refused reload exited $rc"
[ "$(cat "$T/jerr")" = "entropyctl: reload refused: the configuration has 1 error (each in the daemon's log above); the running one stays" ] ||
	fail "into the journal, entropyctl said: $(cat "$T/jerr")"
[ "$(grep -c 'feed.mode: unknown value "sometimes"' "$T/log")" -eq 1 ] ||
	fail "the daemon did not log the error once: $(grep -c 'feed.mode' "$T/log")"
rc=0; "$ENTROPYCTL" -s "$CTL_SOCKET" reload 2> "$T/err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "^$T/e.conf:2: feed.mode: unknown value" "$T/err" ||
	fail "on a terminal the error is not printed: $(cat "$T/err")"
exec 9>&-
stop_daemon
pass "a refused reload under the journal: each error once (the daemon's), entropyctl's one line"
