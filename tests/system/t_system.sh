#!/bin/bash
# t_system: the installed unit under a real systemd (TESTING.md tier 3). A Debian tree made
# with debootstrap (cached between runs), the built entropyd installed into an overlay of it
# with "make install DESTDIR=", booted with systemd-nspawn; then, from the host through
# nsenter: the unit is active (running) after READY=1, "systemctl status" shows STATUS=, the
# main process holds the two capabilities and the collector none, under seccomp,
# "systemctl reload" applies a changed configuration and keeps the old one on an invalid
# one, the watchdog is fed, entropyctl answers, and "systemctl stop" is clean.
#
# Run it with "make check-system". Needs root, systemd-nspawn (systemd-container),
# debootstrap, and Debian's archive (see lib.sh for the environment it reads).
set -u

. "$(dirname "$0")/lib.sh"

# ---- entropyd installed the way a user would ----

timeout -k 10 "$INSTALL_LIMIT" make -C "$top_builddir" --no-print-directory -s install \
	DESTDIR="$ROOT" > "$W/install.log" 2>&1 || { cat "$W/install.log" >&2; fail "make install failed"; }
missing=$(chroot "$ROOT" sh -c 'for p in "$@"; do ldd "$p"; done' sh \
	$(cd "$ROOT" && find usr/local/sbin usr/local/bin usr/sbin usr/bin -maxdepth 1 \
		-name 'entropy*' -printf '/%p\n' 2> /dev/null) | grep 'not found')
[ -z "$missing" ] || fail "libraries missing in the tree: $missing"
UNIT=$(cd "$ROOT" && find . -path '*/systemd/system/entropyd.service' -newer "$TREE/.complete" |
	head -1)
[ -n "$UNIT" ] || fail "make install did not install entropyd.service"
say "installed: ${UNIT#.}"
systemd-sysusers --root="$ROOT" > "$W/sysusers.log" 2>&1 || { cat "$W/sysusers.log"; fail "systemd-sysusers"; }
grep -q '^entropyd:' "$ROOT/etc/group" || fail "sysusers.d made no entropyd group"
grep -q '^entropyd:' "$ROOT/etc/passwd" || fail "sysusers.d made no entropyd user"
systemctl --root="$ROOT" enable entropyd.service > /dev/null 2>&1 ||
	fail "systemctl enable entropyd.service (is the unit where systemd looks?)"
# A short watchdog, so that a run of a few seconds shows WATCHDOG=1 is sent in time.
WATCHDOG_S=2
mkdir -p "$ROOT/etc/systemd/system/entropyd.service.d"
printf '[Service]\nWatchdogSec=%s\n' "$WATCHDOG_S" > "$ROOT/etc/systemd/system/entropyd.service.d/test.conf"
# No login prompt on the console.
ln -sf /dev/null "$ROOT/etc/systemd/system/console-getty.service"
# The block source's tracepoint, as on a real host: tracefs mounted by
# sys-kernel-tracing.mount before the unit starts (in a container its conditions say no:
# it wants CAP_SYS_RAWIO), and perf_event_open, which nspawn's own filter refuses unless
# told (--system-call-filter below).
mkdir -p "$ROOT/etc/systemd/system/sys-kernel-tracing.mount.d"
printf '[Unit]\nConditionCapability=\nConditionPathExists=/sys/kernel/tracing\n' \
	> "$ROOT/etc/systemd/system/sys-kernel-tracing.mount.d/test.conf"

boot

# ---- the unit reached active (running) through READY=1 ----
[ "$(prop Type)" = notify ] || fail "Type is $(prop Type), not notify"
[ "$(prop ActiveState)/$(prop SubState)" = active/running ] ||
	fail "entropyd.service is $(prop ActiveState)/$(prop SubState) after boot"
# A Type=notify unit leaves "activating" only on READY=1; the daemon logs "started:" just
# before it sends it.
inside journalctl -b -u entropyd.service --no-pager -o cat | grep -q '^started: ' ||
	fail "no \"started:\" from entropyd in the journal"
# The socket's group comes from Group=; the sandbox forbids chown, so none may be tried.
inside journalctl -b -u entropyd.service --no-pager -o cat | grep -q 'control.group .*cannot give' &&
	fail "the daemon tried to chown its socket under the unit's system call filter"
pass "active (running) after READY=1, no warning at start"
inside systemctl is-enabled entropyd.service | grep -qx enabled || fail "not enabled"
inside systemctl list-dependencies --reverse --plain entropyd.service | grep -q sysinit.target ||
	fail "entropyd.service is not wanted by sysinit.target"

status=$(inside systemctl status entropyd.service --no-pager --lines=0)
echo "$status" | sed 's/^/  | /'
echo "$status" | grep -qE '^ *Status: "[a-z]+: [0-9]+ of [0-9]+ sources? open, ' ||
	fail "systemctl status shows no STATUS= line"
pass "systemctl status shows STATUS="

# ---- the two processes under the unit ----
main=$(prop MainPID)
coll=$(inside cat "/proc/$main/task/$main/children" | tr -d ' ')
[ -n "$coll" ] || fail "the main process $main has no child (the collector)"
pfield() { inside awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; } # pfield PID NAME
for f in CapEff CapPrm; do
	[ "$(pfield "$main" $f)" = 0000000000202020 ] ||
		fail "the main process's $f is $(pfield "$main" $f), want CAP_SYS_ADMIN, CAP_NET_RAW and CAP_KILL"
	[ "$(pfield "$coll" $f)" = 0000000000000000 ] || fail "the collector's $f is $(pfield "$coll" $f)"
done
for f in CapInh CapAmb; do
	[ "$(pfield "$coll" $f)" = 0000000000000000 ] || fail "the collector's $f is $(pfield "$coll" $f)"
done
[ "$(pfield "$coll" Seccomp)" = 2 ] && [ "$(pfield "$coll" NoNewPrivs)" = 1 ] ||
	fail "the collector: Seccomp $(pfield "$coll" Seccomp), NoNewPrivs $(pfield "$coll" NoNewPrivs)"
# The collector runs as the user sysusers.d made, with no supplementary group.
cuid=$(inside awk -F: '$1 == "entropyd" { print $3 }' /etc/passwd)
[ -n "$cuid" ] || fail "sysusers.d made no user entropyd"
[ "$(pfield "$coll" Uid)" = "$cuid" ] || fail "the collector's uid is $(pfield "$coll" Uid), want $cuid (entropyd)"
[ -z "$(pfield "$coll" Groups)" ] || fail "the collector has supplementary groups: $(pfield "$coll" Groups)"
pass "main process: CAP_SYS_ADMIN, CAP_NET_RAW and CAP_KILL; collector: user entropyd ($cuid), no capability, seccomp, no_new_privs (bounding set $(pfield "$coll" CapBnd), as the unit gives it)"

# ---- the control socket ----
CTL=
[ -x "$top_builddir/src/entropyctl" ] && CTL=yes
if [ -n "$CTL" ]; then
	sock=$(inside stat -c '%a %U:%G' /run/entropyd /run/entropyd/io.entropyd | tr '\n' ' ')
	[ "$sock" = "750 root:entropyd 660 root:entropyd " ] ||
		fail "control socket directory and socket are \"$sock\", not 750/660 root:entropyd"
	out=$(inside entropyctl status 2>&1) || fail "entropyctl status failed: $out"
	echo "$out" | sed 's/^/  | /'
	pass "entropyctl status answers; the socket is root:entropyd 0660"
	# The disks of the host show in the container's /sys/block: where the block source is
	# built in, its tracepoint must work under the unit's filters and read-only tracefs.
	if inside entropyctl sources | grep -q '^block/'; then
		block_tp() {
			local blk
			blk=$(inside entropyctl sources | grep -A3 '^block/') &&
				grep -q '^ *state *open$' <<< "$blk" &&
				grep -q '^ *backend *tracepoint$' <<< "$blk"
		}
		wait_for 10 block_tp || fail "block source not on the tracepoint: $(inside entropyctl sources)"
		pass "block tracepoint works under the unit's sandbox ($(inside entropyctl sources |
			grep -m1 '^block/'))"
	else
		say "no block instance (block source not built in): tracepoint not checked"
	fi
else
	say "entropyctl not built yet: not checked"
fi

# ---- reload: a changed configuration applies; an invalid one is refused ----
CONF=$(inside entropyd -p 2> /dev/null | sed -n 's/^# entropyd configuration in effect.*; from //p')
case "$CONF" in /*) ;; *) fail "cannot tell the configuration file (entropyd -p): $CONF" ;; esac
inside test -f "$CONF" || fail "make install did not install $CONF"
inside cp "$CONF" /root/entropyd.conf.orig
reloaded_lines() { inside journalctl -b -u entropyd.service --no-pager -o cat | grep -c "$1"; }
before=$(reloaded_lines '^configuration reloaded')
# The feed mode shows in STATUS=; capture on lo (the only interface here, which "auto"
# leaves out) shows that packet sockets work under the unit's restrictions.
inside sed -i -e '0,/mode = "auto";/s//mode = "always";/' \
	-e 's/interfaces = \[ "auto" \];/interfaces = [ "lo" ];/' "$CONF"
inside grep -q 'mode = "always";' "$CONF" || fail "could not edit $CONF"
inside systemctl reload entropyd.service || fail "systemctl reload failed"
status_always() { prop StatusText | grep -q '^always: '; }
wait_for 10 status_always || fail "STATUS= does not show feed mode always after reload: $(prop StatusText)"
[ "$(reloaded_lines '^configuration reloaded')" -gt "$before" ] ||
	fail "no \"configuration reloaded\" in the journal"
pass "systemctl reload applies a changed configuration ($(prop StatusText | cut -d: -f1))"
if [ -n "$CTL" ] && inside grep -q 'interfaces = \[ "lo" \];' "$CONF"; then
	lo_open() { inside entropyctl sources | grep -A3 '^network/lo$' | grep -q 'state *open'; }
	wait_for 10 lo_open || fail "no packet capture on lo under the unit: $(inside entropyctl sources 2>&1)"
	pass "packet capture works under the unit's sandbox (network/lo open)"
fi

inside sh -c "echo 'feed = { mode = \"sometimes\"; };' > '$CONF'"
before=$(reloaded_lines 'reload rejected')
rc=0
inside systemctl reload entropyd.service > /dev/null 2>&1 || rc=$?
# ExecReload= is entropyctl reload, which waits for the verdict: the reload job fails.
[ -z "$CTL" ] || [ "$rc" -ne 0 ] || fail "systemctl reload succeeded with an invalid configuration"
wait_for 10 test "$(reloaded_lines 'reload rejected')" -gt "$before" ||
	fail "an invalid configuration was not rejected on reload"
[ "$(prop ActiveState)" = active ] || fail "entropyd.service is $(prop ActiveState) after a bad reload"
# The daemon logs each error, and entropyctl (ExecReload=, its stderr the same journal) only
# its one line: each error once.
n=$(inside journalctl -b -u entropyd.service --no-pager -o cat | grep -c 'feed.mode: unknown value "sometimes"')
[ "$n" -eq 1 ] || fail "the journal has the reload's error $n times, not once"
status_always || fail "the running configuration changed on a bad reload: $(prop StatusText)"
inside cp /root/entropyd.conf.orig "$CONF"
inside systemctl reload entropyd.service || fail "reload of the original configuration failed"
pass "an invalid configuration is refused on reload; the running one stays"

# ---- the watchdog was fed ----
left=$((BOOTED_AT + 3 * WATCHDOG_S - $(date +%s)))
[ "$left" -gt 0 ] && sleep "$left"
[ "$(prop WatchdogUSec)" = "${WATCHDOG_S}s" ] || fail "WatchdogUSec is $(prop WatchdogUSec)"
[ "$(prop NRestarts)" = 0 ] || fail "entropyd.service restarted $(prop NRestarts) times"
[ "$(prop ActiveState)/$(prop SubState)" = active/running ] || fail "not running after $((3 * WATCHDOG_S))s"
inside journalctl -b -u entropyd.service --no-pager -o cat | grep -qi 'watchdog timeout' &&
	fail "watchdog timeout"
pass "WATCHDOG=1 within WatchdogSec=${WATCHDOG_S}s"

# ---- restart on an invalid configuration: the unit fails and says why, start after a fix ----
# A restart stops the running daemon before the new one reads the file: it cannot keep the
# old one as a reload does, so it must fail at once, be left alone by Restart=, and say in
# "systemctl status" what is wrong, where, and what to do.
OLD_PID=$(prop MainPID)
inside sh -c "printf 'feed = {\n  mode = \"sometimes\";\n};\n' > '$CONF'"
rc=0
inside systemctl restart entropyd.service > /dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "systemctl restart succeeded with an invalid configuration"
inside test -e "/proc/$OLD_PID" && fail "the daemon before the restart still runs"
[ "$(prop ActiveState)/$(prop Result)" = failed/exit-code ] ||
	fail "after a restart on an invalid file: $(prop ActiveState)/$(prop Result)"
[ "$(prop ExecMainStatus)" = 1 ] || fail "entropyd exited $(prop ExecMainStatus), want 1"
[ "$(prop NRestarts)" = 0 ] || fail "Restart= tried again $(prop NRestarts) times on an invalid file"
status_says() {
	local out
	out=$(inside systemctl status --no-pager -l -n 20 entropyd.service 2>&1)
	grep -qF "$CONF:2: feed.mode: unknown value \"sometimes\"" <<< "$out" &&
		grep -qF "entropyd: not started: $CONF was refused (above); any previous daemon was stopped; fix the file and start again" <<< "$out" &&
		grep -qF 'Status: "not started (any previous daemon was stopped)' <<< "$out"
}
# and the first error is the unit's Status:, which systemd keeps for the failed unit
prop StatusText | grep -qF "not started (any previous daemon was stopped); fix the file and start again: $CONF:2: feed.mode: unknown value \"sometimes\"" ||
	fail "the failed unit's Status: is not the first error: $(prop StatusText)"
wait_for 10 status_says ||
	fail "systemctl status does not name the error and what to do: $(inside systemctl status --no-pager -l -n 20 entropyd.service 2>&1)"
inside systemctl status --no-pager -l -n 4 entropyd.service 2>&1 | grep -E '^ *(Active|Status):|not started' |
	sed 's/^/  | /'
inside cp /root/entropyd.conf.orig "$CONF"
inside systemctl start entropyd.service || fail "systemctl start after fixing the file failed"
[ "$(prop ActiveState)/$(prop SubState)" = active/running ] ||
	fail "entropyd.service is $(prop ActiveState)/$(prop SubState) after the fix"
pass "a restart on an invalid file fails at once, says where and what to do; start works after a fix"

# ---- a compromised collector, inside the real one under the unit ----
# The list of tests/helpers/intrusions.sh (as t_privsep makes it by hand): calls made inside
# the service's collector by tests/helpers/intrude from the host, so that the collector's
# user, filters and namespaces and the unit's own sandbox all apply. A disk of the host's
# (a loop device) gets a node in the container's /dev, as a real disk has on a host.
INTRUDE=$top_builddir/tests/helpers/intrude
[ -x "$INTRUDE" ] || fail "build tests/helpers/intrude first (make check-system does)"
. "$top_srcdir/tests/helpers/intrusions.sh"
if why=$(intrude_unknown); then
	echo "SKIP: a compromised collector's attempts from inside: $why"
else
	truncate -s 16M "$W/disk" && LOOP=$(losetup -f --show "$W/disk") || fail "no loop device"
	inside mknod -m 0660 /dev/entropyd-test-disk b "$(stat -c '0x%t' "$LOOP")" "$(stat -c '0x%T' "$LOOP")" ||
		fail "cannot make the disk's node in the container"
	inside chgrp disk /dev/entropyd-test-disk
	# host_pid CONTAINER_PID: the same process's pid on the host
	host_pid() {
		local p
		for p in $(pgrep -x entropyd); do
			[ "$(readlink "/proc/$p/ns/pid")" = "$(readlink "/proc/$LEADER/ns/pid")" ] &&
				awk -v c="$1" '$1 == "NSpid:" && $3 == c { found = 1 } END { exit !found }' \
					"/proc/$p/status" && echo "$p" && return 0
		done
		return 1
	}
	hmain=$(host_pid "$(prop MainPID)") || fail "cannot find the main process on the host"
	hcoll=$(tr -d ' ' < "/proc/$hmain/task/$hmain/children")
	[ -n "$hcoll" ] || fail "no collector under the main process $hmain"
	intrusions "$hcoll" "$cuid" "$CONF" /etc/shadow /run/systemd/private \
		/dev/entropyd-test-disk > "$W/intrusions"
	attempt "$hcoll" "reading the disk" open /dev/entropyd-test-disk r >> "$W/intrusions"
	sed 's/^/  | /' "$W/intrusions"
	inside test -e /etc/entropyd-intruder && fail "the collector made a file in /etc"
	grep -q '^ok: the calls run in the collector' "$W/intrusions" || fail "the calls did not run in the collector"
	[ "$INTRUSIONS_BAD" -eq 0 ] || fail "under the unit, from inside the collector: $(grep '^BAD' "$W/intrusions" | tr '\n' ' ')"
	# Last, as it ends the collector: the main process exits 4 and Restart= brings it back.
	restarts=$(prop NRestarts)
	last=$(attempt_last "$hcoll" "$hmain")
	echo "  | $last"
	case $last in ok:*) ;; *) false ;; esac || fail "under the unit, the collector survived prlimit64 on the main process: $last"
	killed() { inside journalctl -b -u entropyd.service --no-pager -o cat | grep -q 'the collector was killed by signal 31'; }
	wait_for 10 killed || fail "no \"the collector was killed by signal 31\" in the journal"
	restarted() { [ "$(prop NRestarts)" -gt "$restarts" ] && [ "$(prop ActiveState)/$(prop SubState)" = active/running ]; }
	wait_for 30 restarted ||
		fail "after the collector was killed: $(prop ActiveState)/$(prop SubState), $(prop NRestarts) restarts"
	losetup -d "$LOOP" && LOOP=
	# The walls, as status shows them under the unit.
	walls=$(inside entropyctl status | grep '^collector:')
	echo "$walls" | sed 's/^/  | /'
	case $walls in "collector: user entropyd ($cuid:"*", system call filter"*) ;; *) false ;; esac ||
		fail "status under the unit shows no walls of user entropyd: $walls"
	# A collector that sends a request and never reads the reply, held stopped (deaf to
	# SIGTERM): systemctl stop still ends the service within its 2 s grace, not at
	# TimeoutStopSec=, and the teardown runs.
	hmain=$(host_pid "$(prop MainPID)") || fail "cannot find the main process on the host"
	hcoll=$(tr -d ' ' < "/proc/$hmain/task/$hmain/children")
	t0=$(date +%s%N)
	stall=$(attempt_stall "$hcoll" "$hmain" 1 "inside systemctl stop entropyd.service")
	echo "  | $stall"
	stopped() { [ "$(prop ActiveState)" != active ] && [ "$(prop ActiveState)" != deactivating ]; }
	wait_for 30 stopped || fail "systemctl stop with a stalled collector: $(prop ActiveState)"
	ms=$((($(date +%s%N) - t0) / 1000000))
	case $stall in ok:*) ;; *) false ;; esac || fail "under the unit: $stall"
	inside journalctl -b -u entropyd.service --no-pager -o cat |
		grep -q 'the collector did not end within 2 s of the signal to stop' ||
		fail "the stalled collector's end is not in the journal"
	# The main process exited by itself, after its teardown (status 4: the collector was
	# killed), not killed by systemd at the end of TimeoutStopSec= (code 2, signal 9).
	[ "$(prop ExecMainCode)/$(prop ExecMainStatus)" = 1/4 ] ||
		fail "with a stalled collector the main process ended with code $(prop ExecMainCode), status $(prop ExecMainStatus)"
	[ "$ms" -lt 10000 ] || fail "systemctl stop with a stalled collector took $ms ms"
	inside systemctl start entropyd.service || fail "systemctl start after the stalled collector failed"
	[ "$(prop ActiveState)/$(prop SubState)" = active/running ] ||
		fail "entropyd.service is $(prop ActiveState)/$(prop SubState) after a start"
	pass "under the unit, a collector that stops reading: systemctl stop ended the service in $ms ms (grace 2 s), the main process exiting 4 by itself"
	pass "under the unit, from inside the collector, each failed: $(sed -n 's/^ok: \([^:]*\):.*/\1/p' "$W/intrusions" | paste -sd, | sed 's/,/, /g'); prlimit64 on the main process killed it (SIGSYS) and Restart= brought the service back"
fi

# ---- stop ----
inside systemctl stop entropyd.service || fail "systemctl stop failed"
[ "$(prop ActiveState)" = inactive ] || fail "entropyd.service is $(prop ActiveState) after stop"
[ "$(prop Result)" = success ] || fail "Result=$(prop Result) after stop"
[ "$(prop ExecMainCode)/$(prop ExecMainStatus)" = 1/0 ] ||
	fail "entropyd exited with code $(prop ExecMainCode), status $(prop ExecMainStatus)"
inside test -e /run/entropyd && fail "/run/entropyd is left after stop"
inside journalctl -b -u entropyd.service --no-pager -o cat | grep -q 'flushing and exiting' ||
	fail "entropyd did not log its exit"
pass "systemctl stop is clean (exit 0, runtime directory removed)"

echo "--- journal of entropyd.service ---"
inside journalctl -b -u entropyd.service --no-pager -o short-monotonic | sed 's/^/  | /'

inside systemctl poweroff > /dev/null 2>&1
wait_for 30 eval '! kill -0 "$NSPAWN_PID" 2> /dev/null' || say "the container did not power off: killing it"
LEADER=
say "total $(($(date +%s) - T0)) s"
pass "entropyd.service under systemd"
