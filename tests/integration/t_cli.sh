#!/bin/bash
# t_cli: entropyd's command line — -n, -p, --version, --help, usage errors, file:line errors.
. "$(dirname "$0")/lib.sh"

out=$("$ENTROPYD" -n -f "$top_srcdir/conf/entropyd.conf") || fail "shipped config refused: $out"
[ "$out" = "configuration OK" ] || fail "-n on the shipped config printed: $out"

# -p prints the effective config, which is itself valid and complete.
"$ENTROPYD" -p -f "$top_srcdir/conf/entropyd.conf" > "$T/effective.conf" || fail "-p failed"
grep -q 'mode = "reduced"' "$T/effective.conf" || fail "-p lacks the network policy"
grep -q 'batch_bits' "$T/effective.conf" || fail "-p lacks defaults (feed.batch_bits)"
out=$("$ENTROPYD" -n -f "$T/effective.conf") || fail "-p output does not re-parse: $out"

# A broken config: every error with file:line, status 1.
cat > "$T/bad.conf" <<'CONF'
feed = {
  mode = "sometimes";
};
policy = {
  network = { mode = "reduced"; scale = 1.5; };
  input = { mode = "trusted"; colour = "blue"; };
};
CONF
rc=0; "$ENTROPYD" -n -f "$T/bad.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "-n on a bad config exited $rc, want 1"
grep -q "^$T/bad.conf:2: feed.mode: " "$T/out" || fail "no file:line error for feed.mode: $(cat "$T/out")"
grep -q "^$T/bad.conf:5: policy.network.scale: " "$T/out" || fail "no error for scale: $(cat "$T/out")"
grep -q "^$T/bad.conf:6: policy.input.colour: " "$T/out" || fail "no error for unknown key: $(cat "$T/out")"
grep -q "configuration OK" "$T/out" && fail "bad config said OK"
grep -q "not started" "$T/out" && fail "-n said a daemon was not started: $(cat "$T/out")"
# The daemon itself, as the unit starts it (a restart has stopped the one running): the same
# errors, then one line that says it did not start and what to do, status 1.
rc=0; timeout -k 5 30 "$ENTROPYD" -F -d -f "$T/bad.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "the daemon on a bad config exited $rc, want 1: $(cat "$T/out")"
grep -q "^$T/bad.conf:2: feed.mode: unknown value \"sometimes\"; allowed: " "$T/out" ||
	fail "the daemon did not name file, line and key: $(cat "$T/out")"
[ "$(tail -n 1 "$T/out")" = "entropyd: not started: $T/bad.conf was refused (above); any previous daemon was stopped; fix the file and start again (check it with \"entropyd -n\" before a restart; a reload keeps the running daemon on an invalid file)" ] ||
	fail "the daemon's last line on a bad config: $(tail -n 1 "$T/out")"

# A control.group that does not exist here: said, with how to make it; valid all the same.
printf 'control = { group = "nogrp%s"; };\n' $$ > "$T/group.conf"
getent group "nogrp$$" > /dev/null && fail "a group nogrp$$ exists"
out=$("$ENTROPYD" -n -f "$T/group.conf" 2> "$T/err") || fail "-n refused a missing group: $(cat "$T/err")"
[ "$out" = "configuration OK" ] || fail "-n with a missing group printed: $out"
grep -qx "warning: control.group \"nogrp$$\" does not exist on this host: the control socket would keep the group it is made with (root's, or the unit's Group=), not this one (create it: groupadd --system nogrp$$)" "$T/err" ||
	fail "-n did not say the group is missing: $(cat "$T/err")"

rc=0; "$ENTROPYD" -n -f "$T/does-not-exist.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "missing -f file exited $rc, want 1"
grep -q "does-not-exist.conf" "$T/out" || fail "missing file not named"

"$ENTROPYD" --version | grep -qE '^entropyd [0-9]+\.[0-9]+' || fail "--version"
"$ENTROPYD" --help | grep -q -- '--dry-run' || fail "--help lacks --dry-run"
rc=0; "$ENTROPYD" --no-such-option > /dev/null 2> "$T/err" || rc=$?
[ "$rc" -eq 2 ] || fail "unknown option exited $rc, want 2"
[ "$(wc -l < "$T/err")" -eq 2 ] && grep -q 'no-such-option' "$T/err" &&
	grep -qx 'Try "entropyd --help" for more information.' "$T/err" ||
	fail "an unknown option is not getopt's line and a pointer to --help: $(cat "$T/err")"
pass "command line"

# The example policies in contrib/ are valid.
for f in "$top_srcdir"/contrib/policies/*.conf; do
	out=$("$ENTROPYD" -n -f "$f" 2>&1) || fail "$f is not valid: $out"
done
pass "example policies are valid"

# An unclosed quote is reported at its own line, not where libconfig gave up.
printf 'feed = {\n  mode = "auto;\n  reseed = true;\n};\npolicy = {\n  input = { mode = "trusted"; };\n};\n' > "$T/quote.conf"
rc=0; "$ENTROPYD" -n -f "$T/quote.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "-n on an unclosed quote exited $rc, want 1"
grep -q "^$T/quote.conf:2: syntax error: a quote opened on this line is not closed" "$T/out" ||
	fail "the unclosed quote is not reported at its line: $(cat "$T/out")"
pass "an unclosed quote: reported at its line"
