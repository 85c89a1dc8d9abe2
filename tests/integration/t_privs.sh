#!/bin/bash
# t_privs: once started, the daemon's main process (the privileged one) keeps CAP_SYS_ADMIN,
# CAP_NET_RAW and CAP_KILL and nothing else, in every capability set, bounding set included where it
# may change it; the collector keeps nothing, bounding set included where it may change it.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (the capabilities root has are what is dropped)"
command -v setpriv > /dev/null || skip "needs setpriv (util-linux)"

KEPT=0000000000202020 # CAP_SYS_ADMIN (21), CAP_NET_RAW (13) and CAP_KILL (5)

# caps FIELD [PID]: the capability set FIELD (CapEff, CapPrm, ...) of the daemon's main
# process, or of PID, from /proc.
caps() { awk -v f="$1:" '$1 == f {print $2}' "/proc/${2:-$DAEMON_PID}/status"; }

expect_collector() { # expect_collector WHAT BOUNDING
	local f c
	c=$(pgrep -P "$DAEMON_PID")
	[ -n "$c" ] || fail "$1: no collector"
	for f in CapEff CapPrm CapInh CapAmb; do
		[ "$(caps $f "$c")" = 0000000000000000 ] || fail "$1: the collector's $f is $(caps $f "$c")"
	done
	[ "$(caps CapBnd "$c")" = "$2" ] || fail "$1: the collector's CapBnd is $(caps CapBnd "$c"), want $2"
	grep -q "collector: user .*, every capability dropped" "$T/log" || fail "$1: the collector's drop is not logged"
}

expect_caps() { # expect_caps WHAT BOUNDING
	local f
	for f in CapEff CapPrm; do
		[ "$(caps $f)" = "$KEPT" ] || fail "$1: $f is $(caps $f), want $KEPT"
	done
	for f in CapInh CapAmb; do
		[ "$(caps $f)" = 0000000000000000 ] || fail "$1: $f is $(caps $f), want none"
	done
	[ "$(caps CapBnd)" = "$2" ] || fail "$1: CapBnd is $(caps CapBnd), want $2"
	grep -q "cannot drop capabilities\|cannot read the process" "$T/log" &&
		fail "$1: a warning about capabilities"
	grep -q "capabilities: kept CAP_SYS_ADMIN, CAP_NET_RAW and CAP_KILL, dropped the rest" "$T/log" ||
		fail "$1: the drop is not logged"
}

write_config "$T/e.conf" 'policy = { block = { mode = "disabled"; }; network = { mode = "disabled"; }; };'
[ "$(awk '$1 == "CapEff:" {print $2}' /proc/self/status)" != "$KEPT" ] ||
	skip "this shell already has only those two: nothing would be dropped"

# Root with every capability: the bounding set shrinks too.
start_daemon -v --dry-run -f "$T/e.conf"
expect_caps "as root" "$KEPT"
expect_collector "as root" 0000000000000000
# A reload still works without the dropped ones (the config is root's own file).
kill -HUP "$DAEMON_PID"
wait_for 5 grep -q "configuration reloaded" "$T/log" || fail "no reload after the drop"
"$ENTROPYCTL" --socket "$CTL_SOCKET" status > /dev/null || fail "entropyctl status after the drop"
stop_daemon

# As under systemd, whose bounding set has no CAP_SETPCAP: the bounding set stays as it
# was given, the rest is dropped all the same, and no warning.
bnd=$(setpriv --bounding-set=-setpcap awk '$1 == "CapBnd:" {print $2}' /proc/self/status)
WRAP="setpriv --bounding-set=-setpcap" start_daemon -v --dry-run -f "$T/e.conf"
expect_caps "without CAP_SETPCAP" "$bnd"
expect_collector "without CAP_SETPCAP" "$bnd"
stop_daemon

# Given what the unit's bounding set gives: the three, and CAP_SETUID and CAP_SETGID for the
# collector's change of user, which the privileged process then drops.
unit=$(printf '%016x' $((0x$KEPT | 1 << 6 | 1 << 7))) # and CAP_SETGID, CAP_SETUID
WRAP="setpriv --bounding-set=-all,+sys_admin,+net_raw,+kill,+setuid,+setgid" \
	start_daemon -v --dry-run -f "$T/e.conf"
for f in CapEff CapPrm; do
	[ "$(caps $f)" = "$KEPT" ] || fail "given the unit's: $f is $(caps $f), want $KEPT"
done
[ "$(caps CapBnd)" = "$unit" ] || fail "given the unit's: CapBnd is $(caps CapBnd), want $unit"
expect_collector "given the unit's" "$unit"
stop_daemon
pass "capabilities: CAP_SYS_ADMIN, CAP_NET_RAW and CAP_KILL kept by the privileged process, everything else dropped; the collector keeps none"

# The configuration is trusted only if root alone can write it (and what it includes): -n,
# the start and a reload refuse one that others can write, naming the file and the fix.
write_config "$T/t.conf"
echo '@include "t2.conf"' >> "$T/t.conf"
: > "$T/t2.conf"
"$ENTROPYD" -n -f "$T/t.conf" > /dev/null || fail "a configuration root alone writes was refused"
check_refused() { # check_refused FILE FIX
	local rc=0
	"$ENTROPYD" -n -f "$T/t.conf" > "$T/n.out" 2>&1 || rc=$?
	[ "$rc" -eq 1 ] || fail "-n exited $rc with $1 untrusted, want 1: $(cat "$T/n.out")"
	grep -qF "$1: " "$T/n.out" && grep -qF "$2" "$T/n.out" ||
		fail "-n does not name $1 and the fix ($2): $(cat "$T/n.out")"
}
chmod 0666 "$T/t.conf"
check_refused "$T/t.conf" "chmod go-w $T/t.conf"
chmod 0644 "$T/t.conf"; chown nobody "$T/t.conf"
check_refused "$T/t.conf" "chown root $T/t.conf"
chown root "$T/t.conf"; chmod 0664 "$T/t2.conf"
check_refused "$T/t2.conf" "chmod go-w $T/t2.conf"
chmod 0644 "$T/t2.conf"
# A reload of a file that became writable by others is refused by both processes.
start_daemon -v --dry-run -f "$T/t.conf"
chmod 0646 "$T/t.conf"
kill -HUP "$DAEMON_PID"
wait_for 5 grep -q "reload rejected" "$T/log" || fail "a reload of a world-writable file was not rejected"
grep -qF "$T/t.conf: writable by anyone" "$T/log" || fail "the reload's refusal does not say why"
chmod 0644 "$T/t.conf"
stop_daemon
pass "configuration trust: a file or include others can write, or not root's, is refused by -n, at start and on reload, with the fix named"

# The check sees the files libconfig opens: an @include after 5,000 blanks on its line, and
# one whose name holds glob characters (libconfig opens that name, not what it would match),
# of a file anyone can write, are refused by -n and at the start, naming that file.
check_start_refused() { # check_start_refused FILE
	local rc=0
	"$ENTROPYD" --foreground --dry-run -f "$T/t.conf" > "$T/s.out" 2>&1 || rc=$?
	[ "$rc" -ne 0 ] || fail "the daemon started with $1 untrusted"
	grep -qF "$1: writable by anyone" "$T/s.out" || fail "the start does not name $1: $(cat "$T/s.out")"
}
write_config "$T/t.conf"
printf '%*s@include "long.conf"\n' 5000 '' >> "$T/t.conf"
echo 'feed = { mode = "always"; };' > "$T/long.conf"
"$ENTROPYD" -p -f "$T/t.conf" | grep -q 'mode = "always"' || fail "libconfig did not read the include after 5,000 blanks"
chmod 0666 "$T/long.conf"
check_refused "$T/long.conf" "chmod go-w $T/long.conf"
check_start_refused "$T/long.conf"
write_config "$T/t.conf"
echo '@include "g[l]ob.conf"' >> "$T/t.conf"
echo 'feed = { mode = "always"; };' > "$T/g[l]ob.conf"
: > "$T/glob.conf" # what the pattern would match: root's, 0644
"$ENTROPYD" -p -f "$T/t.conf" | grep -q 'mode = "always"' || fail "libconfig did not read g[l]ob.conf"
chmod 0666 "$T/g[l]ob.conf"
check_refused "$T/g[l]ob.conf" "chmod go-w $T/g[l]ob.conf"
check_start_refused "$T/g[l]ob.conf"
pass "configuration trust: what libconfig includes is checked, after a long line and by a name with glob characters"
