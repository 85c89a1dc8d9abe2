#!/bin/bash
# t_check: entropyctl check against private daemons, each status for real: CRITICAL with no
# daemon (no socket, or a socket nothing answers on); OK with every source open; UNKNOWN for
# a user the socket is not open to, a path that is not a socket and a usage error; WARNING
# for a configured interface that is not there and for a source that failed its health tests
# for good where the kernel no longer counts credit; CRITICAL for the same where credit
# counts (the old semantics, read from a recorded /proc/sys/kernel/random bound over the
# real one in the daemon's own mount namespace) and when no source is open there. As root.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (a mount namespace with the old kernel semantics, another user)"
for tool in unshare setpriv jq; do
	command -v "$tool" > /dev/null || skip "no $tool"
done
IF=ckx$$ # an interface no one made

# check [OPTION...]: entropyctl check; its line in $out, its exit status in $rc.
check() {
	rc=0
	out=$("$ENTROPYCTL" -s "$CTL_SOCKET" "$@" check 2> "$T/err") || rc=$?
	[ ! -s "$T/err" ] || fail "check wrote to stderr: $(cat "$T/err")"
	[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "check printed more than one line: $out"
}
# expect STATUS CODE REGEX: the line is "ENTROPYD STATUS: ..." matching REGEX, the status CODE.
expect() {
	[ "$rc" -eq "$2" ] && printf '%s\n' "$out" | grep -qE "^ENTROPYD $1: $3" ||
		fail "want $1 ($2) and /$3/, got $rc: $out"
}
# The kernel's state as this daemon reads it, in the words check uses.
crng() {
	"$ENTROPYCTL" -s "$CTL_SOCKET" --json status | jq -r '.kernel |
		(if .crng_ready then "CRNG ready" else "CRNG not ready yet \\([0-9]+ s\\)" end) +
		", credit " + (if .credit_counts then "counts" else "no longer counts" end)'
}
counts() { "$ENTROPYCTL" -s "$CTL_SOCKET" --json status | jq_holds .kernel.credit_counts > /dev/null; }

# ---- no daemon ----
check
expect CRITICAL 2 "entropyd is not running: no control socket at $CTL_SOCKET$"
pass "no daemon: $out"

# ---- every source open ----
write_config "$T/e.conf" 'feed = { mode = "always"; };' \
	'policy = { block = { mode = "disabled"; }; network = { mode = "disabled"; }; };'
start_fifo_daemon -v --dry-run -f "$T/e.conf"
check
expect OK 0 "1 of 1 source open; $(crng) \| open=1;;;0;1 not_open=0 failed_for_good=0 crng_ready=[01]$"
pass "every source open: $out"

# ---- no answer that can be judged ----
rc=0
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$ENTROPYCTL" -s "$CTL_SOCKET" check) || rc=$?
expect UNKNOWN 3 "permission denied on $CTL_SOCKET: run as root or join group "
pass "a user the socket is not open to: $out"
: > "$T/plain"
rc=0; out=$("$ENTROPYCTL" -s "$T/plain" check) || rc=$?
expect UNKNOWN 3 "$T/plain is a regular file, not a socket"
pass "a path that is not a socket: $out"
rc=0; "$ENTROPYCTL" -s "$CTL_SOCKET" --json check > /dev/null 2> "$T/err" || rc=$?
[ "$rc" -eq 3 ] && grep -q -- "--json: check answers with its exit status" "$T/err" ||
	fail "--json check: status $rc, $(cat "$T/err")"
rc=0; "$ENTROPYCTL" -s "$CTL_SOCKET" -w 60 -c 30 check > /dev/null 2> "$T/err" || rc=$?
[ "$rc" -eq 3 ] && grep -q -- "--warning 60 is above --critical 30" "$T/err" ||
	fail "-w 60 -c 30: status $rc, $(cat "$T/err")"
pass "usage errors: UNKNOWN (3), not CRITICAL"

# ---- the daemon gone, its socket left: nothing answers ----
kill_daemon KILL
check
expect CRITICAL 2 "entropyd is not running: nothing answers on $CTL_SOCKET$"
pass "a socket nothing answers on: $out"
exec 9>&-
rm -f "$T/input/event0" "$CTL_SOCKET"

# ---- a configured interface that is not there; a source that fails for good ----
# periodic: events exactly 1 ms apart into the FIFO, which fail the health tests for good.
periodic() { "$EVGEN" -n 3000 -s 10 -p periodic >&9 2> /dev/null; }
failed_for_good() { check; [ "$rc" -ne 0 ] && printf '%s\n' "$out" | grep -q "failed its health"; }
# net_conf INPUT-MODE: the FIFO's directory and the interface no one made, both trusted
# unless INPUT-MODE says otherwise.
net_conf() {
	cat > "$T/e.conf" <<-EOF
	feed = { mode = "always"; };
	policy = { input = { mode = "$1"; }; block = { mode = "disabled"; }; network = { mode = "trusted"; }; };
	sources = { input = { watch = "$T/input"; }; network = { interfaces = [ "$IF" ]; }; };
	control = { socket = "$CTL_SOCKET"; };
	EOF
}
net_conf trusted
start_fifo_daemon -v --dry-run -f "$T/e.conf"
wait_for 10 sh -c '"$1" -s "$2" --json sources | grep -q "\"not-open\""' _ "$ENTROPYCTL" "$CTL_SOCKET" ||
	fail "network/$IF never not-open: $("$ENTROPYCTL" -s "$CTL_SOCKET" sources)"
check
expect WARNING 1 "network/$IF not open; 1 of 2 sources open; $(crng) \| open=1;;;0;2 not_open=1 "
pass "a configured interface that is not there: $out"
periodic
wait_for 20 failed_for_good || fail "the periodic source never failed for good: $out"
if counts; then want=CRITICAL code=2; else want=WARNING code=1; fi
expect $want $code "input/event0 failed its health tests for good; network/$IF not open; 1 of 2 sources open; $(crng) "
pass "a source failed for good where credit $(counts && echo counts || echo "no longer counts"): $out"
stop_daemon
exec 9>&-
rm -f "$T/input/event0"

# ---- where credit counts: the old semantics, in the daemon's own mount namespace ----
mkdir -p "$T/random"
echo 4096 > "$T/random/poolsize"
echo 3000 > "$T/random/entropy_avail"
echo 3072 > "$T/random/write_wakeup_threshold"
echo 64 > "$T/random/read_wakeup_threshold"
start_old() { start_ns "mount --bind '$T/random' /proc/sys/kernel/random" -v --dry-run -f "$T/e.conf"; }
mkfifo "$T/input/event0"
start_old
wait_for 5 grep -q "input/event0: attached" "$T/log" || fail "FIFO not attached"
open_fifo "$T/input/event0"
grep -q "poolsize 4096: a pool that reads deplete, credit counts always" "$T/log" ||
	fail "the daemon did not read the recorded tree: $(grep kernel "$T/log")"
counts || fail "credit does not count with the recorded tree"
periodic
wait_for 20 failed_for_good || fail "the periodic source never failed for good: $out"
expect CRITICAL 2 "input/event0 failed its health tests for good; network/$IF not open; 1 of 2 sources open; $(crng) "
pass "where credit counts, a source failed for good: $out"
stop_daemon
exec 9>&-

net_conf disabled
start_old
wait_for 10 sh -c '"$1" -s "$2" --json sources | grep -q "\"not-open\""' _ "$ENTROPYCTL" "$CTL_SOCKET" ||
	fail "network/$IF never not-open"
check
expect CRITICAL 2 "no source open, and credit counts: nothing can credit; network/$IF not open; 0 of 1 source open; $(crng) "
pass "where credit counts, no source open: $out"
stop_daemon
