#!/bin/bash
# t_names: nothing the policy says goes unsaid — a name or glob that matches nothing is warned
# about by -n, at start and at reload (once each, however many rescans), disabled classes and
# instances are listed in status, sources, --json and metrics, and the start-up line counts
# only what is open and names what is not.
. "$(dirname "$0")/lib.sh"

command -v jq > /dev/null || skip "jq is not installed (it reads --json; apt-get install jq)"
ctl() { "$ENTROPYCTL" -s "$CTL_SOCKET" "$@"; }
count() { grep -c -- "$1" "$T/log" || true; }

# conf LINES...: a config of these groups and the private control socket.
conf() {
	mkdir -p "$T/input"
	{ for l in "$@"; do echo "$l"; done; echo "control = { socket = \"$CTL_SOCKET\"; };"; } > "$T/e.conf"
}
# Overrides in every class, lists of every kind; some match, some do not.
conf 'feed = { mode = "always"; };' \
	'policy = { input = { instances = ( { name = "event7"; mode = "disabled"; },
	                                      { name = "uxv9"; mode = "trusted"; } ); };
	            block = { mode = "disabled"; };
	            network = { instances = ( { name = "nosuch0"; mode = "trusted"; } ); }; };' \
	"sources = { input = { watch = \"$T/input\"; include = [ \"event*\", \"kbd-nosuch*\" ]; };
	             network = { interfaces = [ \"lo\", \"veth-nosuch*\" ];
	                         instances = ( { name = \"lo\"; direction = \"both\"; },
	                                       { name = \"wl-nosuch\"; snaplen = 96; } ); }; };"
mkfifo "$T/input/event0" "$T/input/event7"
mkdir "$T/input/event2"              # not a device: skipped
ln -s "$T/nowhere" "$T/input/event1" # cannot be opened: waits

want_said() { # PATTERN WHERE: said exactly once
	local n
	n=$(grep -cF -- "$1" "$2" || true)
	[ "$n" -eq 1 ] || fail "said $n times, want once: $1 in $(cat "$2")"
}

# ---- -n: valid, and says what matches nothing on this host ----
"$ENTROPYD" -n -f "$T/e.conf" > "$T/out" 2> "$T/err" || fail "-n refused the config: $(cat "$T/err")"
[ "$(cat "$T/out")" = "configuration OK" ] || fail "-n printed: $(cat "$T/out")"
want_said 'warning: input: policy.input.instances[1].name "uxv9" matches no input device on this host now' "$T/err"
want_said 'warning: input: sources.input.include[1] "kbd-nosuch*" matches no input device' "$T/err"
want_said 'warning: network: policy.network.instances[0].name "nosuch0" matches no interface' "$T/err"
want_said 'warning: network: sources.network.interfaces[1] "veth-nosuch*" matches no interface' "$T/err"
want_said 'warning: network: sources.network.instances[1].name "wl-nosuch" matches no interface' "$T/err"
[ "$(wc -l < "$T/err")" -eq 5 ] || fail "-n: more than the five that match nothing: $(cat "$T/err")"
pass "-n: valid, with a warning for each of 5 names (every kind, two classes) that match nothing here"

# ---- start: the same warnings, once; the start-up line counts what is open ----
start_daemon -v --dry-run -f "$T/e.conf"
wait_for 5 grep -q "input/event0: attached" "$T/log" || fail "FIFO not attached"
for w in 'input: policy.input.instances[1].name "uxv9" matches no input device (yet)' \
	'input: sources.input.include[1] "kbd-nosuch*" matches no input device (yet)' \
	'network: policy.network.instances[0].name "nosuch0" matches no interface (yet)' \
	'network: sources.network.interfaces[1] "veth-nosuch*" matches no interface (yet)' \
	'network: sources.network.instances[1].name "wl-nosuch" matches no interface (yet)'; do
	want_said "warning: $w" "$T/log"
done
[ "$(count 'matches no')" -eq 5 ] || fail "a name that matches something was warned about: $(grep 'matches no' "$T/log")"
line=$(grep "notice: started:" "$T/log" | sed "s/.*notice: //")
n=$(echo "$line" | sed -nE 's/.*started: ([0-9]+) sources? open.*/\1/p')
# event0 and, where capture is allowed, lo; never event1 (waits), event2 (skipped), event7
# (disabled)
if [ "$(id -u)" -eq 0 ]; then want=2; else want=1; fi
[ "$n" = "$want" ] || fail "start-up line: $line (want $want open)"
echo "$line" | grep -qF "could not open" || fail "what could not be opened is not named: $line"
echo "$line" | grep -qF "input/event1 (waiting)" || fail "event1 not named: $line"
echo "$line" | grep -qF "input/event2 (skipped)" || fail "event2 not named: $line"
echo "$line" | grep -q "event7" && fail "a disabled instance named among the failures: $line"
pass "start: each warned about once; $line"

# ---- rescans: a new node makes the input class rescan; nothing is said again ----
mkfifo "$T/input/event3"
wait_for 5 grep -q "input/event3: attached" "$T/log" || fail "event3 not attached"
sleep 0.5
[ "$(count 'matches no')" -eq 5 ] || fail "a rescan said it again: $(grep 'matches no' "$T/log")"
pass "a rescan does not repeat the warnings"

# ---- status, sources, --json, metrics: disabled instances and classes are there ----
ctl status > "$T/status" || fail "status"
grep -qE '^input +event7 +disabled +0 +- +0.0 +disabled +-$' "$T/status" ||
	fail "the disabled instance is not in status: $(cat "$T/status")"
grep -qE '^block +\* +disabled +0 +- +0.0 +disabled +-$' "$T/status" ||
	fail "the disabled class is not in status: $(cat "$T/status")"
ctl sources > "$T/sources" || fail "sources"
grep -A3 '^input/event7$' "$T/sources" | grep -q "state       disabled by policy$" ||
	fail "sources: event7: $(cat "$T/sources")"
grep -A3 '^block/\*$' "$T/sources" | grep -q "why not     disabled: policy: disabled" ||
	fail "sources: block: $(cat "$T/sources")"
ctl --json sources > "$T/json" || fail "--json sources"
jq -e '[.sources[] | select(.policy.mode == "disabled")] |
	(map(.class + "/" + .name) | sort) == ["block/*", "input/event7"] and
	all(.state == "disabled" and .detail == "disabled by policy" and .up == false and .credit.reason == "disabled" and .events == 0 and
	    .estimate_bits == null and .credit.weight == 0)' "$T/json" > /dev/null ||
	fail "--json: $(jq -c '.sources[] | {class, name, state, policy, credit}' "$T/json")"
ctl metrics > "$T/metrics" || fail "metrics"
grep -qF 'entropyd_source_credit_reason{class="block",name="*",reason="disabled"} 1' "$T/metrics" ||
	fail "metrics: the disabled class: $(grep reason "$T/metrics")"
grep -qF 'entropyd_source_credit_reason{class="input",name="event7",reason="disabled"} 1' "$T/metrics" ||
	fail "metrics: the disabled instance"
grep -E '^entropyd_source_' "$T/metrics" | grep -v '^entropyd_source_credit_reason' |
	grep -E 'name="(\*|event7)"' && fail "metrics: a disabled row has more than its reason"
pass "disabled classes and instances are in status, sources, --json and metrics"

# ---- a name that chooses what is read and matches nothing is a row: not-open, what to
# check, up 0; in status, sources, --json, watch and metrics. Overrides (which say how an
# instance is read, not which) are not rows. ----
for r in "input/kbd-nosuch*/sources.input.include[1]" "network/veth-nosuch*/sources.network.interfaces[1]"; do
	c=${r%%/*} rest=${r#*/} n=${rest%%/*} key=${rest#*/}
	jq -e --arg c "$c" --arg n "$n" --arg k "$key" '[.sources[] | select(.class == $c and .name == $n)] |
		length == 1 and (.[0] | .state == "not-open" and .up == false and .events == 0 and
		.credit.reason == "not-open" and .retry == "when one appears" and
		(.detail | startswith("matches nothing on this host: check " + $k + " \"" + $n + "\" (")))' \
		"$T/json" > /dev/null || fail "--json: no row for $c/$n: $(jq -c '.sources[] | {class, name, state, detail}' "$T/json")"
	grep -qE "^$c +$(printf '%s' "$n" | sed 's/\*/\\*/g') +[a-z.0-9 -]+ +0 +- +0\.0 +not-open +-$" "$T/status" ||
		fail "status: no row for $c/$n: $(cat "$T/status")"
	grep -A3 "^$c/$(printf '%s' "$n" | sed 's/\*/\\*/g')\$" "$T/sources" | grep -qF "state       not-open: matches nothing on this host: check $key \"$n\"" ||
		fail "sources: $c/$n: $(cat "$T/sources")"
	grep -qxF "entropyd_source_up{class=\"$c\",name=\"$n\"} 0" "$T/metrics" ||
		fail "metrics: entropyd_source_up of $c/$n: $(grep source_up "$T/metrics")"
done
for n in uxv9 nosuch0 wl-nosuch; do
	jq -e --arg n "$n" '[.sources[] | select(.name == $n)] | length == 0' "$T/json" > /dev/null ||
		fail "an override that matches nothing became a row: $n"
done
echo q | ctl watch -i 0.2 > "$T/watch" || fail "watch"
grep -qE '^network +veth-nosuch\* +not-open +0 ' "$T/watch" || fail "watch: no row: $(cat "$T/watch")"
pass "names that choose and match nothing: rows, not-open, what to check, up 0, everywhere"

# ---- reload: said again, once; a name that now matches is not ----
conf 'feed = { mode = "always"; };' \
	'policy = { input = { instances = ( { name = "event7"; mode = "trusted"; },
	                                      { name = "uxv9"; mode = "trusted"; } ); };
	            network = { mode = "disabled"; }; };' \
	"sources = { input = { watch = \"$T/input\"; include = [ \"event*\" ]; }; };"
kill -HUP "$DAEMON_PID"
wait_for 5 grep -q "configuration reloaded" "$T/log" || fail "reload not applied"
wait_for 5 grep -q "input/event7: attached" "$T/log" || fail "event7, enabled again, not attached"
[ "$(count 'input: policy.input.instances\[1\].name "uxv9" matches no input device (yet)')" -eq 2 ] ||
	fail "a reload does not say again what still matches nothing"
[ "$(count 'matches no')" -eq 6 ] || fail "after the reload: $(grep 'matches no' "$T/log")"
ctl status > "$T/status"
grep -qE '^input +event7 +trusted ' "$T/status" || fail "event7 enabled: $(cat "$T/status")"
grep -qE '^network +\* +disabled ' "$T/status" || fail "network now disabled: $(cat "$T/status")"
grep -qE '^block +\* +disabled' "$T/status" && fail "block enabled again, still shown disabled"
stop_daemon
pass "reload: what still matches nothing is said once more; the disabled rows follow the policy"
