# shellcheck shell=bash disable=SC2034 # sourced: the tests use what is set here
# tests/system/lib.sh: what the system tests share, sourced by each: the checks that they can
# run here, the cached Debian tree (debootstrap, with systemd, the libraries entropyd links,
# and Debian's prometheus and prometheus-node-exporter), an overlay of it in $ROOT for the
# test to install into (Prometheus, node_exporter and the image's own timers off), and boot,
# which boots it with systemd-nspawn (the container's init is then $LEADER, and "inside" runs
# a command there). Environment:
#   ENTROPYD_TEST_CACHE   where the tree is cached (default /var/cache/entropyd-test)
#   ENTROPYD_TEST_MIRROR  the Debian mirror (default: the first one apt uses on this host)
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

say() { printf '%s [%3ds] %s\n' "$(basename "$0" .sh):" "$(($(date +%s) - T0))" "$*"; }
fail() {
	echo "FAIL: $*" >&2
	if [ -n "$LEADER" ]; then
		echo "--- journal of entropyd.service ---" >&2
		inside journalctl -b -u entropyd.service --no-pager -o short-monotonic 2>&1 | tail -60 >&2
	fi
	if [ -n "$W" ] && [ -s "$W/console.log" ]; then
		# The whole console, and a copy that outlives the run's directory.
		echo "--- console ---" >&2
		cat "$W/console.log" >&2
		cp "$W/console.log" "$CACHE/$(basename "$0" .sh)-console.log" 2> /dev/null &&
			echo "--- kept in $CACHE/$(basename "$0" .sh)-console.log ---" >&2
	fi
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
	[ -n "${LOOP:-}" ] && losetup -d "$LOOP"
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

. "$(dirname "${BASH_SOURCE[0]}")/mirror.sh"

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
# In a chroot (make check-distro's tree), systemd-nspawn's container is nested in another
# root without a systemd of its own: it was seen never to finish booting there. The host's
# stage runs check-system.
if command -v systemd-detect-virt > /dev/null && systemd-detect-virt -q --chroot; then
	skip "in a chroot: the container would be nested in it (run make check-system on the host)"
fi
. /etc/os-release
CODENAME=${VERSION_CODENAME:-}
[ -n "$CODENAME" ] || skip "cannot tell this host's Debian release (/etc/os-release)"
MIRROR=${ENTROPYD_TEST_MIRROR:-$(find_mirror "$CODENAME")} ||
	skip "no Debian mirror for $CODENAME in /etc/apt/sources.list(.d)"

# ---- the cached tree: systemd, plus the libraries the built programs link ----
PROGRAMS="$top_builddir/src/entropyd"
[ -x "$top_builddir/src/entropyctl" ] && PROGRAMS="$PROGRAMS $top_builddir/src/entropyctl"
# Debian's Prometheus server and node_exporter, for t_metrics (disabled in the other tests'
# containers: see below).
PACKAGES=$({
	echo systemd systemd-sysv prometheus prometheus-node-exporter
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

# ---- an overlay of it, for the test to install into ----
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
# Prometheus and node_exporter run only where a test enables them ("monitoring enable"): they
# would otherwise load every container and write into /var while t_deb compares it.
monitoring() {
	systemctl --root="$ROOT" "$1" prometheus.service prometheus-node-exporter.service \
		> /dev/null 2>&1 || fail "systemctl $1 prometheus prometheus-node-exporter"
}
monitoring disable
# The image's own timers (dpkg's daily backup of its database, apt's, man-db's, systemd's
# cleanup of /tmp) are masked. dpkg's fires at midnight, and once did so in the middle of
# t_deb: the files it wrote to /var/backups were taken for files the package had left. A
# test's own timer (t_metrics) lives in /etc/systemd/system and is not among them.
for unit in "$ROOT"/usr/lib/systemd/system/*.timer; do
	[ -e "$unit" ] || continue
	ln -sfn /dev/null "$ROOT/etc/systemd/system/${unit##*/}" || fail "cannot mask ${unit##*/}"
done

# boot: boot $ROOT with systemd-nspawn, and wait until its systemd has finished booting.
boot() {
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
		SYSTEM_STATE=$(inside systemctl is-system-running 2> /dev/null)
		[ "$SYSTEM_STATE" = running ] || [ "$SYSTEM_STATE" = degraded ]
	}
	SYSTEM_STATE=
	if ! wait_for "$READY_LIMIT" booted; then
		inside systemctl list-jobs --no-pager 2>&1 | head -20 >&2
		fail "the container did not finish booting in ${READY_LIMIT}s (systemctl is-system-running: ${SYSTEM_STATE:-no answer})"
	fi
	say "booted in $(($(date +%s) - t)) s"
	BOOTED_AT=$(date +%s)
}
