#!/bin/bash
# t_deb: the Debian package (contrib/debian, "make deb") the way an administrator meets it,
# under a real systemd in the same container as t_system.sh. lintian finds no error or
# warning; installed with apt, the unit is enabled and active, "entropyctl status" works for
# a member of group entropyd and not for others; an edited /etc/entropyd.conf applies on
# "systemctl reload"; a package of a higher version restarts the service and keeps the
# edited conffile; "apt purge" stops the service and leaves no file of the package behind,
# and keeps the entropyd group (as Debian does with system groups: files elsewhere may still
# be owned by it).
#
# Run by "make check-system". Needs what t_system.sh needs, and debhelper and lintian
# (contrib/dev.sh test installs them). ENTROPYD_DEB names a .deb to test instead of building
# one with "make deb".
set -u

. "$(dirname "$0")/lib.sh"

for tool in dpkg-buildpackage dh lintian; do
	command -v "$tool" > /dev/null || skip "$tool not found (apt-get install debhelper lintian)"
done

# ---- the package ----
DEB=${ENTROPYD_DEB:-}
if [ -z "$DEB" ]; then
	t=$(date +%s)
	# nocheck: make check has just run the unit tests the package build would run again.
	make -C "$top_builddir" --no-print-directory -s deb \
		DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" > "$W/deb.log" 2>&1 ||
		{ tail -40 "$W/deb.log" >&2; fail "make deb failed"; }
	DEB=$(ls "$top_builddir"/deb/entropyd_*.deb 2> /dev/null | head -1)
	say "make deb took $(($(date +%s) - t)) s"
fi
[ -f "$DEB" ] || fail "no package built ($DEB)"
say "package $(basename "$DEB")"

t=$(date +%s)
rc=0
lintian --fail-on error,warning "$DEB" > "$W/lintian.log" 2>&1 || rc=$?
# Its only other line says it runs as root.
out=$(grep -v '^running with root privileges' "$W/lintian.log")
[ -n "$out" ] && sed 's/^/  | /' "$W/lintian.log"
if [ "$rc" -ne 0 ] || [ -n "$out" ]; then fail "lintian: errors or warnings (exit $rc)"; fi
pass "lintian: no error, no warning ($(($(date +%s) - t)) s)"

contents=$(dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\.||')
for f in /usr/sbin/entropyd /usr/bin/entropyctl /usr/share/man/man8/entropyd.8.gz \
	/usr/share/man/man8/entropyctl.8.gz /usr/share/man/man5/entropyd.conf.5.gz \
	/lib/systemd/system/entropyd.service /usr/lib/sysusers.d/entropyd.conf \
	/usr/lib/tmpfiles.d/entropyd.conf /usr/share/bash-completion/completions/entropyctl \
	/etc/entropyd.conf /usr/share/initramfs-tools/hooks/entropyd \
	/usr/share/doc/entropyd/examples/paranoid.conf \
	/usr/share/doc/entropyd/examples/entropyd-metrics.timer; do
	echo "$contents" | grep -qx "$f" || fail "the package has no $f"
done
dpkg-deb -f "$DEB" Depends | grep -q 'libevent' || fail "Depends does not come from shlibs"
dpkg-deb -I "$DEB" conffiles | grep -qx /etc/entropyd.conf || fail "/etc/entropyd.conf is no conffile"
dpkg-deb -I "$DEB" triggers | grep -qx 'activate-noawait update-initramfs' ||
	fail "no update-initramfs trigger"
pass "the package holds what it should, /etc/entropyd.conf as a conffile, an update-initramfs trigger"

# The same package at a higher version, for the upgrade.
V1=$(dpkg-deb -f "$DEB" Version)
V2=${V1%-*}-$((${V1##*-} + 1))
dpkg-deb -R "$DEB" "$W/v2" || fail "dpkg-deb -R"
sed -i "s/^Version: .*/Version: $V2/" "$W/v2/DEBIAN/control"
dpkg-deb --root-owner-group -b "$W/v2" "$ROOT/root/entropyd_v2.deb" > /dev/null || fail "dpkg-deb -b"
cp "$DEB" "$ROOT/root/entropyd_v1.deb"
rm -f "$ROOT/etc/systemd/system/console-getty.service"
ln -s /dev/null "$ROOT/etc/systemd/system/console-getty.service"

boot

# Every path of the container but the kernel's, the journal's, apt's own bookkeeping, and the
# backups (/etc/passwd- ...) that making this test's users leaves.
snapshot() {
	inside find /etc /usr /var /run /root /opt /srv /home -xdev \
		\( -path /var/log -o -path /var/cache/apt -o -path /var/lib/apt -o -path /run/systemd \
		-o -path /run/log -o -path /run/udev -o -path /run/user -o -path /var/cache/debconf \
		-o -path /var/cache/ldconfig -o -path /root/entropyd_v1.deb -o -path /root/entropyd_v2.deb \
		-o -path '/etc/*-' \) \
		-prune -o -print 2> /dev/null | sort
}
snapshot > "$W/before"
apt_in() { inside env DEBIAN_FRONTEND=noninteractive apt-get -y -q "$@" > "$W/apt.log" 2>&1 ||
	{ cat "$W/apt.log" >&2; fail "apt-get $*"; }; }

# ---- install ----
t=$(date +%s)
apt_in install /root/entropyd_v1.deb
say "apt-get install took $(($(date +%s) - t)) s"
[ "$(inside dpkg-query -W -f '${Status} ${Version}' entropyd)" = "install ok installed $V1" ] ||
	fail "entropyd $V1 is not installed"
inside systemctl is-enabled entropyd.service | grep -qx enabled || fail "not enabled on install"
running() { [ "$(prop ActiveState)/$(prop SubState)" = active/running ]; }
wait_for 20 running || fail "entropyd.service is $(prop ActiveState)/$(prop SubState) after install"
inside getent group entropyd > /dev/null || fail "no group entropyd after install"
pass "apt install: enabled, active (running), group entropyd made"

inside useradd -M -N -G entropyd ed-member || fail "useradd"
inside useradd -M -N ed-other || fail "useradd"
as() { local u=$1; shift; inside setpriv --reuid "$u" --regid users --init-groups "$@"; }
out=$(as ed-member entropyctl status 2>&1) || fail "entropyctl status as a member of entropyd: $out"
echo "$out" | head -5 | sed 's/^/  | /'
as ed-other entropyctl status > /dev/null 2>&1 && fail "entropyctl status works for a non-member"
pass "entropyctl status works for a member of entropyd, not for others"

# ---- the administrator edits the conffile and reloads ----
pid=$(prop MainPID)
inside sed -i '0,/mode = "auto";/s//mode = "always";/' /etc/entropyd.conf
inside grep -q 'mode = "always";' /etc/entropyd.conf || fail "could not edit /etc/entropyd.conf"
inside systemctl reload entropyd.service || fail "systemctl reload failed"
status_always() { prop StatusText | grep -q '^always: '; }
wait_for 10 status_always || fail "the edit did not apply on reload: $(prop StatusText)"
[ "$(prop MainPID)" = "$pid" ] || fail "reload restarted the daemon"
pass "an edited /etc/entropyd.conf applies on systemctl reload (same process)"

# ---- upgrade ----
inv=$(prop InvocationID)
t=$(date +%s)
apt_in install /root/entropyd_v2.deb
say "apt-get install (upgrade) took $(($(date +%s) - t)) s"
[ "$(inside dpkg-query -W -f '${Version}' entropyd)" = "$V2" ] || fail "not upgraded to $V2"
wait_for 20 running || fail "entropyd.service is $(prop ActiveState)/$(prop SubState) after upgrade"
[ "$(prop InvocationID)" != "$inv" ] || fail "the service was not restarted on upgrade"
inside grep -q 'mode = "always";' /etc/entropyd.conf || fail "the upgrade lost the edited conffile"
inside sh -c 'ls /etc/entropyd.conf.dpkg-* 2> /dev/null' | grep . && fail "the upgrade left conffile copies"
wait_for 10 status_always || fail "the restarted daemon does not run the edited configuration"
pass "upgrade $V1 -> $V2: restarted, the edited conffile kept and in effect"

# ---- purge ----
inside dpkg-query -L entropyd > "$W/files"
apt_in purge entropyd
inside dpkg-query -W -f '${Status}' entropyd 2> /dev/null | grep -q 'installed' &&
	fail "entropyd still installed after purge"
[ "$(prop LoadState)" = not-found ] || fail "the unit is still $(prop LoadState) after purge"
# No procps in the tree: the container's /proc, read inside it.
inside sh -c 'grep -lx entropyd /proc/[0-9]*/comm' 2> /dev/null && fail "entropyd still runs after purge"
left=
while read -r f; do
	inside test -e "$f" || continue
	# Shared directories (/etc, /usr/share/man/man8) stay; the package's own must not.
	if inside test -d "$f" && ! echo "$f" | grep -q entropyd; then continue; fi
	left="$left $f"
done < "$W/files"
[ -z "$left" ] || fail "files of the package left after purge:$left"
snapshot > "$W/after"
new=$(comm -13 "$W/before" "$W/after")
echo "$new" | grep . | sed 's/^/  new since before install: /'
echo "$new" | grep -qi entropy && fail "left after purge: $(echo "$new" | grep -i entropy | tr '\n' ' ')"
[ -z "$new" ] || fail "purge left paths that were not there before install"
inside getent group entropyd > /dev/null || fail "purge removed the group entropyd"
pass "apt purge: service stopped, no file left in /etc, /run, /var, /usr; group entropyd kept"

inside systemctl poweroff > /dev/null 2>&1
wait_for 30 eval '! kill -0 "$NSPAWN_PID" 2> /dev/null' || say "the container did not power off: killing it"
LEADER=
say "total $(($(date +%s) - T0)) s"
pass "the Debian package under systemd"
