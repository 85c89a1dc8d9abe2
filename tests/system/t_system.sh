#!/bin/bash
# t_system: the installed unit under a real systemd (TESTING.md tier 3). A Debian tree made
# with debootstrap (cached between runs), the built entropyd installed into an overlay of it
# with "make install DESTDIR=", booted with systemd-nspawn; then, from the host through
# nsenter: the unit is active (running) after READY=1, "systemctl status" shows STATUS=,
# "systemctl reload" applies a changed configuration and keeps the old one on an invalid
# one, the watchdog is fed, entropyctl answers, and "systemctl stop" is clean.
#
# Run it with "make check-system". Needs root, systemd-nspawn (systemd-container),
# debootstrap, and Debian's archive. Environment:
#   ENTROPYD_TEST_CACHE   where the tree is cached (default /var/cache/entropyd-test)
#   ENTROPYD_TEST_MIRROR  the Debian mirror (default: the first one apt uses on this host)
set -u

: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
CACHE=${ENTROPYD_TEST_CACHE:-/var/cache/entropyd-test}
VARIANT=minbase
# Hard limits, in seconds.
DEBOOTSTRAP_LIMIT=900
INSTALL_LIMIT=300
BOOT_LIMIT=240 # the whole life of the container
READY_LIMIT=60
CMD_LIMIT=30

T0=$(date +%s)
W=
NSPAWN_PID=
LEADER=
MERGED=

say() { printf '%s [%3ds] %s\n' "t_system:" "$(($(date +%s) - T0))" "$*"; }
fail() {
	echo "FAIL: $*" >&2
	if [ -n "$LEADER" ]; then
		echo "--- journal of entropyd.service ---" >&2
		inside journalctl -b -u entropyd.service --no-pager -o short-monotonic 2>&1 | tail -60 >&2
	fi
	[ -n "$W" ] && [ -s "$W/console.log" ] && { echo "--- console ---" >&2; tail -30 "$W/console.log" >&2; }
	exit 1
}
skip() { echo "SKIP: $*"; exit 77; }
pass() { echo "PASS: $*"; }

cleanup() {
	if [ -n "$NSPAWN_PID" ] && kill -0 "$NSPAWN_PID" 2>/dev/null; then
		kill -TERM "$NSPAWN_PID" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$NSPAWN_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$NSPAWN_PID" 2>/dev/null
		wait "$NSPAWN_PID" 2>/dev/null
	fi
	if [ -n "$MERGED" ] && mountpoint -q "$MERGED"; then
		umount "$MERGED" 2>/dev/null || umount -l "$MERGED"
	fi
	[ -n "$W" ] && rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# inside CMD...: run CMD in the booted container (all of its namespaces), with a time limit.
inside() { timeout -k 5 "$CMD_LIMIT" nsenter -t "$LEADER" -a -- "$@"; }
prop() { inside systemctl show -P "$1" entropyd.service; }

# wait_for SECONDS COMMAND...: poll COMMAND every 0.2 s.
wait_for() {
	local limit=$(($1 * 5)); shift
	for _ in $(seq "$limit"); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}

# The first Debian mirror apt uses here for the host's release (deb822 or one-line format).
find_mirror() {
	local codename=$1 f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite="$codename" '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") &&
				    enabled != "no" && uri != "") { print uri; found = 1; exit }
				types = suites = uri = enabled = ""
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			tolower($1) == "types:" { types = substr($0, index($0, ":") + 1) }
			tolower($1) == "suites:" { suites = substr($0, index($0, ":") + 1) }
			tolower($1) == "uris:" { uri = $2 }
			tolower($1) == "enabled:" { enabled = tolower($2) }
			END { if (!found) flush() }' "$f" | head -1 | grep . && return 0
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -e 's/\[[^]]*\]//' "$f" |
			awk -v suite="$codename" '$1 == "deb" && $3 == suite { print $2; exit }' |
			grep . && return 0
	done
	return 1
}

# The Debian packages that hold the shared libraries PROGRAM links.
lib_packages() {
	local lib pkg
	for lib in $(ldd "$1" | awk '/=> \// { print $3 }'); do
		pkg=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "/usr$lib" 2>/dev/null ||
			dpkg -S "${lib#/usr}" 2>/dev/null) || { echo "?$lib"; continue; }
		echo "${pkg%%:*}"
	done
}

# ---- preconditions ----
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, mounts, systemd-nspawn)"
for tool in systemd-nspawn debootstrap nsenter systemd-sysusers dpkg; do
	command -v "$tool" > /dev/null ||
		skip "$tool not found (apt-get install systemd-container debootstrap)"
done
[ -x "$top_builddir/src/entropyd" ] || fail "build entropyd first (make)"
. /etc/os-release
CODENAME=${VERSION_CODENAME:-}
[ -n "$CODENAME" ] || skip "cannot tell this host's Debian release (/etc/os-release)"
MIRROR=${ENTROPYD_TEST_MIRROR:-$(find_mirror "$CODENAME")} ||
	skip "no Debian mirror for $CODENAME in /etc/apt/sources.list(.d)"

# ---- the cached tree: systemd, plus the libraries the built programs link ----
PROGRAMS="$top_builddir/src/entropyd"
[ -x "$top_builddir/src/entropyctl" ] && PROGRAMS="$PROGRAMS $top_builddir/src/entropyctl"
PACKAGES=$({
	echo systemd systemd-sysv
	for p in $PROGRAMS; do lib_packages "$p"; done
} | tr ' ' '\n' | grep . | sort -u | tr '\n' ' ')
case "$PACKAGES" in *'?'*) fail "no Debian package holds: $(echo "$PACKAGES" | tr ' ' '\n' | grep '^?')" ;; esac
KEY=$(printf '%s %s %s\n' "$CODENAME" "$VARIANT" "$PACKAGES" | sha256sum | cut -c1-12)
TREE=$CACHE/$CODENAME-$KEY
say "tree $TREE: $PACKAGES"

mkdir -p "$CACHE" || fail "cannot create $CACHE"
exec 8> "$CACHE/lock"
timeout "$DEBOOTSTRAP_LIMIT" flock 8 || fail "$CACHE/lock held for ${DEBOOTSTRAP_LIMIT}s"
if [ -f "$TREE/.complete" ]; then
	say "cached tree found"
else
	t=$(date +%s)
	rm -rf "$TREE.tmp"
	say "debootstrap $CODENAME from $MIRROR (once per package list; about 80 s)"
	timeout -k 10 "$DEBOOTSTRAP_LIMIT" debootstrap --variant="$VARIANT" \
		--include="$(echo $PACKAGES | tr ' ' ',')" "$CODENAME" "$TREE.tmp" "$MIRROR" \
		> "$CACHE/debootstrap.log" 2>&1 ||
		{ tail -20 "$CACHE/debootstrap.log" >&2; rm -rf "$TREE.tmp"; fail "debootstrap failed"; }
	# Trees for other package lists are out of date: keep only this one.
	for old in "$CACHE/$CODENAME"-*; do
		[ "$old" != "$TREE.tmp" ] && [ -d "$old" ] && rm -rf "$old"
	done
	touch "$TREE.tmp/.complete" && mv "$TREE.tmp" "$TREE" || fail "cannot store $TREE"
	say "debootstrap took $(($(date +%s) - t)) s"
fi
exec 8>&-

# ---- an overlay of it, with entropyd installed the way a user would ----
W=$(mktemp -d "${TMPDIR:-/var/tmp}/entropyd-system.XXXXXX") || fail "mktemp"
MERGED=$W/root
mkdir -p "$W/upper" "$W/work" "$MERGED"
if ! mount -t overlay overlay -o "lowerdir=$TREE,upperdir=$W/upper,workdir=$W/work" "$MERGED" \
	2> /dev/null; then
	say "no overlayfs here: copying the tree"
	rmdir "$MERGED"
	cp -a "$TREE" "$MERGED" || fail "cannot copy $TREE"
	MERGED=
fi
ROOT=$W/root

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

# ---- boot ----
t=$(date +%s)
timeout -k 10 "$BOOT_LIMIT" systemd-nspawn -q -D "$ROOT" -M "entropyd-test-$$" --register=no \
	--keep-unit --private-network --boot --console=pipe --system-call-filter=perf_event_open \
	< /dev/null > "$W/console.log" 2>&1 &
TIMEOUT_PID=$!
wait_for 10 pgrep -P "$TIMEOUT_PID" -x systemd-nspawn > /dev/null || fail "systemd-nspawn did not start"
NSPAWN_PID=$(pgrep -P "$TIMEOUT_PID" -x systemd-nspawn)
# The container's init is a child of systemd-nspawn; so, for a moment, is a helper of
# nspawn's own that exits (taken for init, it left every later command without a
# namespace): wait for the child that runs systemd.
init_pid() { pgrep -P "$NSPAWN_PID" -x systemd | head -1 | grep .; }
wait_for 30 init_pid > /dev/null || fail "no init in the container"
LEADER=$(init_pid) || fail "the container's init is gone"
booted() {
	local s
	s=$(inside systemctl is-system-running 2> /dev/null)
	[ "$s" = running ] || [ "$s" = degraded ]
}
wait_for "$READY_LIMIT" booted || fail "the container did not finish booting in ${READY_LIMIT}s"
say "booted in $(($(date +%s) - t)) s"
BOOTED_AT=$(date +%s)

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
echo "$status" | grep -qE '^ *Status: "[a-z]+: [0-9]+ sources, ' ||
	fail "systemctl status shows no STATUS= line"
pass "systemctl status shows STATUS="

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
		block_tp() { inside entropyctl sources | grep -A3 '^block/' | grep -q '^ *state *tracepoint'; }
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
