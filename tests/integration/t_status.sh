#!/bin/bash
# t_status: status never calls a source that is not open idle. A disk under the blktrace
# backend the kernel refuses (no debugfs in the daemon's mount namespace: ENOENT) and a named
# interface that does not exist show state not-open, the error and what to do, when they are
# tried again, and entropyd_source_up 0; the interface, made later (a veth in the test's
# network namespace), shows open and up 1; set down, up 0 with state waiting (what the alert
# rules tell from a dead source). An input node that cannot be opened (a dangling link in
# the watched directory) shows not-open and why, not a bare waiting. As root, in namespaces
# and on a loop device this test made.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (loop devices, blktrace ioctls, network namespaces)"
for tool in losetup unshare jq; do
	command -v "$tool" > /dev/null || skip "no $tool"
done
netns_pair
block_lock 300 || fail "another block test held $BLOCK_LOCK for 300 s"
trap 'cleanup; netns_cleanup; loops_cleanup' EXIT
new_loop LOOP
DEV=${LOOP#/dev/}
IF=vst$$ PEER=vsu$$
ctl() { "$ENTROPYCTL" -s "$CTL_SOCKET" "$@"; }
src() { ctl --json sources | jq -c --arg c "$1" --arg n "$2" '.sources[] | select(.class == $c and .name == $n)'; }
metric() { ctl metrics | grep -F "entropyd_source_up{class=\"$1\",name=\"$2\"}" | awk '{print $2}'; }

mkdir -p "$T/input"
ln -s "$T/nosuch" "$T/input/event5"
cat > "$T/e.conf" <<EOF
feed = { mode = "always"; };
policy = { input = { mode = "trusted"; }; block = { mode = "trusted"; };
           network = { mode = "trusted"; }; };
sources = { input = { watch = "$T/input"; };
            block = { backend = "blktrace"; devices = [ "$DEV", "edz$$" ]; };
            network = { interfaces = [ "$IF" ]; }; };
control = { socket = "$CTL_SOCKET"; };
EOF
daemon_in_ns
start_ns 'umount -a -t debugfs 2>/dev/null;' -v --dry-run -f "$T/e.conf"

# ---- the disk blktrace cannot trace ----
wait_for 10 sh -c "\"$ENTROPYCTL\" -s \"$CTL_SOCKET\" --json sources | grep -q '\"not-open\"'" ||
	fail "nothing not-open: $(ctl --json sources)"
b=$(src block "$DEV")
echo "$b" | jq_holds '.state == "not-open" and .up == false and
	(.detail | test("^blktrace: (ENOENT|EPERM): .*sources.block.backend")) and
	.retry_in_s > 0 and .retry_in_s <= 30 and (.retry | test("^in [0-9]+ s$")) and
	.health.retry_in_s > 0 and .health.state == "-" and
	.credit.reason == "not-open" and (.credit.reasons[0].detail | test("tried again in")) and
	(.credit.reasons | map(.reason) | index("idle")) == null' > /dev/null ||
	fail "block/$DEV: $b"
[ "$(metric block "$DEV")" = 0 ] || fail "entropyd_source_up of block/$DEV: $(ctl metrics | grep source_up)"
ctl status > "$T/status" || fail "status"
grep -qE "^block +$DEV +trusted +0 +- +0\.0 +not-open +-$" "$T/status" || fail "status: $(cat "$T/status")"
ctl sources > "$T/sources" || fail "sources"
grep -A2 "^block/$DEV\$" "$T/sources" | grep -qE "^  state       not-open: blktrace: E[A-Z]+: .*; tried again in [0-9]+ s$" ||
	fail "sources: $(cat "$T/sources")"
grep -q "block/$DEV: not open: blktrace: " "$T/log" || fail "the log does not say it"
pass "a disk blktrace cannot trace: not-open, the error and the key to change, retried in $(echo "$b" | jq '.retry_in_s | floor') s, up 0"

# ---- a disk the configuration names that is not on this host ----
z=$(src block "edz$$")
echo "$z" | jq_holds --arg n "edz$$" '.state == "not-open" and .up == false and .credit.reason == "not-open" and
	.detail == "matches nothing on this host: check sources.block.devices[1] \"" + $n + "\" (lsblk lists the disks)" and
	.retry == "when one appears" and .health.state == "-"' > /dev/null || fail "block/edz$$: $z"
[ "$(metric block "edz$$")" = 0 ] || fail "entropyd_source_up of block/edz$$: $(ctl metrics | grep source_up)"
grep -qE "^block +edz$$ +trusted +0 +- +0\.0 +not-open +-$" "$T/status" || fail "status: $(cat "$T/status")"
grep -A2 "^block/edz$$\$" "$T/sources" | grep -qx "  state       not-open: matches nothing on this host: check sources.block.devices\[1\] \"edz$$\" (lsblk lists the disks); tried again when one appears" ||
	fail "sources: $(cat "$T/sources")"
pass "a disk named that is not here: a row, not-open, what to check, up 0"

# ---- an input node that cannot be opened ----
e=$(src input event5)
echo "$e" | jq_holds --arg p "$T/input/event5" '.state == "not-open" and .up == false and
	.detail == "cannot stat " + $p + ": No such file or directory" and
	.retry == "when it changes" and .credit.reason == "not-open"' > /dev/null ||
	fail "input/event5: $e"
ctl sources > "$T/sources" || fail "sources"
grep -A2 "^input/event5\$" "$T/sources" | grep -qxF "  state       not-open: cannot stat $T/input/event5: No such file or directory; tried again when it changes" ||
	fail "sources: $(cat "$T/sources")"
pass "an input node that cannot be opened: not-open, why, tried again when it changes"

# ---- the interface not there yet ----
n=$(src network "$IF")
echo "$n" | jq_holds '.state == "not-open" and .up == false and
	.detail == "ENODEV: no such interface" and .retry == "when it appears or changes" and
	.retry_in_s == null and .credit.reason == "not-open" and .health.state == "-"' > /dev/null ||
	fail "network/$IF: $n"
[ "$(metric network "$IF")" = 0 ] || fail "entropyd_source_up of network/$IF: $(ctl metrics | grep source_up)"
grep -qE "^network +$IF +trusted +0 +- +0\.0 +not-open +-$" "$T/status" || fail "status: $(cat "$T/status")"
grep -A2 "^network/$IF\$" "$T/sources" | grep -qx "  state       not-open: ENODEV: no such interface; tried again when it appears or changes" ||
	fail "sources: $(cat "$T/sources")"
grep -qE "notice: started: 0 sources open; could not open .*network/$IF \(ENODEV: no such interface\)" "$T/log" ||
	fail "the start-up line does not name network/$IF: $(grep started: "$T/log")"
pass "an interface that does not exist: not-open, ENODEV, tried again when it appears, up 0"

ip -n "$NB" link add "$IF" type veth peer name "$PEER" || fail "veth"
ip -n "$NB" link set "$PEER" up
ip -n "$NB" link set "$IF" up
up_now() { [ "$(metric network "$IF")" = 1 ]; }
wait_for 10 up_now || fail "network/$IF not up once it exists: $(src network "$IF")"
src network "$IF" | jq_holds '.state == "open" and .up == true and .retry_in_s == null and
	.retry == null and .credit.reason != "not-open" and .health.state == "startup" and
	(.detail | test("ENODEV") | not)' > /dev/null ||
	fail "network/$IF once open: $(src network "$IF")"
[ "$(metric block "$DEV")" = 0 ] || fail "block/$DEV changed"
pass "the interface made later: open, up 1"

# ---- a link set down: up 0, but state waiting (its own condition), not not-open ----
state_metric() { ctl metrics | grep -F "entropyd_source_state{class=\"$1\",name=\"$2\"," | sed -n 's/.*state="\([a-z-]*\)"} 1$/\1/p'; }
[ "$(state_metric network "$IF")" = open ] || fail "entropyd_source_state of network/$IF: $(ctl metrics | grep source_state)"
[ "$(state_metric block "$DEV")" = not-open ] || fail "entropyd_source_state of block/$DEV: $(ctl metrics | grep source_state)"
ip -n "$NB" link set "$IF" down
down_now() { [ "$(metric network "$IF")" = 0 ] && [ "$(state_metric network "$IF")" = waiting ]; }
wait_for 10 down_now || fail "network/$IF set down: $(ctl metrics | grep -F "name=\"$IF\"")"
src network "$IF" | jq_holds '.state == "waiting" and .detail == "down"' > /dev/null ||
	fail "network/$IF set down: $(src network "$IF")"
ip -n "$NB" link set "$IF" up
wait_for 10 up_now || fail "network/$IF not open again once up: $(src network "$IF")"
pass "a link set down: up 0, state waiting (not-open is for errors), open again once up"

# ---- does this machine need entropyd? the verdict, as this host's kernel gives it ----
ctl --json status | jq_holds '.kernel.seed | (.verdict | IN("old-kernel", "ready-before", "credited",
	"ready-without", "not-ready")) and (.summary | length > 20) and
	(.cpu_rng.trusted | type) == "boolean" and (.ready_at_start | type) == "boolean" and
	.bootloader.seed == "not detectable from user space"' > /dev/null ||
	fail "kernel.seed: $(ctl --json status | jq -c .kernel.seed)"
ctl status > "$T/status" || fail "status"
grep -qE "^seeding: CPU RNG (none|(RDRAND|RDSEED|RDRAND\+RDSEED), (trusted|not trusted) \(.*\)); hardware RNG [^;]+; bootloader seed " "$T/status" ||
	fail "no seeding line: $(cat "$T/status")"
grep -qE "^verdict: .{20,}" "$T/status" || fail "no verdict line: $(cat "$T/status")"
pass "$(grep '^verdict:' "$T/status")"

# ---- at stop: the account never prints NaN (an interface whose rate is not measured) ----
stop_daemon
grep -q "network/$IF: kind " "$T/log" || fail "no summary of network/$IF at stop"
# The test's directory is taken out first: its random name may end in "nan".
sed "s|$T|T|g" "$T/log" | grep -qiE "nan(/s)?\b" && fail "NaN in the log: $(grep -iE 'nan' "$T/log")"
pass "the account at stop has no NaN"
