#!/bin/bash
# initramfs.sh: the initramfs path, booted. A Debian tree (debootstrap: systemd,
# initramfs-tools, busybox, the libraries entropyd links, and the guest kernel's modules,
# cached) gets entropyd as a package would install it: the programs, the unit (enabled), the
# configuration, and contrib/initramfs-tools' hook and scripts where initramfs-tools looks.
# mkinitramfs (in the tree, MODULES=list) builds the initramfs with the shipped hook; the
# tree becomes an ext4 root file system on a virtio disk; qemu boots the kernel with that
# initramfs and root=/dev/vda under systemd. In the initramfs, a test-only init-premount
# script reads the disk (3000 O_DIRECT reads, as finding and checking a root would, only
# more) after entropyd has started. On the root, a test unit ordered after entropyd.service
# (tests/guest/initramfs_check.sh) checks:
#   - entropyd started in the initramfs before the root was mounted (kernel log);
#   - it credited from the disk there (its log, kept in /run/initramfs);
#   - it was stopped before the switch to the root, and entropyd.service started after that:
#     never two instances, nor two tracing at once (kernel log and journal, one clock);
#   - the service's daemon remembers the boot: the initramfs's left its boot record in
#     /run/initramfs, and the verdict, status and metrics after the switch are what the
#     initramfs's did (entropyd_kernel_crng_ready_after_seconds as its log says);
#   - nothing of the initramfs's daemon is left: no perf event open outside the service, no
#     blktrace set up on the disk;
#   - and, from here, that the initramfs carries the kernel's CONFIG_HZ (the hook's doing).
#
#   tests/guest/initramfs.sh        (root; from the build tree, after make)
#
# Exit status 0 passed, 1 failed, 77 cannot run here (the reason is printed). Environment as
# run.sh's, and ENTROPYD_TEST_CACHE (the tree, default /var/cache/entropyd-test),
# ENTROPYD_TEST_MIRROR (default: the mirror apt uses), ENTROPYD_GUEST_KEEP=1.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
CACHE=${ENTROPYD_TEST_CACHE:-/var/cache/entropyd-test}
. "$here/hostlib.sh"
guest_prerequisites
[ "$(id -u)" -eq 0 ] || missing "needs root (debootstrap, chroot)"
for tool in debootstrap chroot mkfs.ext4 dpkg; do
	command -v "$tool" > /dev/null || missing "no $tool (apt-get install debootstrap e2fsprogs)"
done
[ -x "$ENTROPYCTL" ] || missing "$ENTROPYCTL is not built"
[ -f "$top_builddir/systemd/entropyd.service" ] || missing "no built unit (make)"

T0=$(date +%s)
say() { printf 'initramfs: [%3ds] %s\n' "$(($(date +%s) - T0))" "$*"; }
fail() { echo "FAIL: initramfs: $*"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/var/tmp}/entropyd-initramfs.XXXXXX")
cleanup() {
	for m in "$W/root/proc" "$W/root/sys" "$W/root/dev"; do
		mountpoint -q "$m" 2>/dev/null && umount -l "$m"
	done
	if [ "${ENTROPYD_GUEST_KEEP:-0}" = 1 ]; then echo "initramfs: kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

kdir=$("$here/kernel.sh" "$ENTROPYD_GUEST_CACHE") || missing "no guest kernel (see above)"
pkg=$(basename "$kdir")
version=${pkg#linux-image-}

# ---- the tree, cached per kernel and package list ----
. /etc/os-release
codename=${VERSION_CODENAME:-}
[ -n "$codename" ] || missing "cannot tell this host's Debian release"
mirror=${ENTROPYD_TEST_MIRROR:-$(sed -n 's/^URIs: \(http[^ ]*debian\/*\)$/\1/p; s/^deb \[*[^]]*\]* *\(http[^ ]*debian\/*\) '"$codename"' .*/\1/p' \
	/etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -1)}
[ -n "$mirror" ] || missing "no Debian mirror for $codename in apt's sources"
libs=$(for p in "$ENTROPYD" "$ENTROPYCTL"; do
	for lib in $(ldd "$p" | awk '/=> \// { print $3 }'); do
		pkgof=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "/usr$lib" 2>/dev/null ||
			dpkg -S "${lib#/usr}" 2>/dev/null) || { echo "?$lib"; continue; }
		echo "${pkgof%%:*}"
	done
done | sort -u | tr '\n' ' ')
case $libs in *'?'*) fail "no Debian package holds: $libs" ;; esac
packages="systemd systemd-sysv initramfs-tools busybox udev kmod $libs"
key=$(printf '%s %s %s\n' "$codename" "$pkg" "$packages" | sha256sum | cut -c1-12)
tree=$CACHE/initramfs-$codename-$key
mkdir -p "$CACHE" || fail "cannot create $CACHE"
exec 8> "$CACHE/initramfs.lock"
flock -w 900 8 || fail "$CACHE/initramfs.lock is held"
if [ ! -f "$tree/.complete" ]; then
	say "debootstrap $codename from $mirror with $packages (once; a few minutes)"
	rm -rf "$tree.tmp"
	timeout -k 10 900 debootstrap --variant=minbase --include="$(echo $packages | tr ' ' ',')" \
		"$codename" "$tree.tmp" "$mirror" > "$CACHE/initramfs-debootstrap.log" 2>&1 ||
		{ tail -20 "$CACHE/initramfs-debootstrap.log"; rm -rf "$tree.tmp"; fail "debootstrap failed"; }
	# The guest's kernel: its modules for mkinitramfs, its config for the hook; unpacked,
	# as kernel.sh does, not installed (no postinst runs).
	d=$(mktemp -d "$W/deb.XXXXXX")
	(cd "$d" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "$pkg" > /dev/null) ||
		fail "cannot download $pkg"
	# Unpacked beside the tree, then moved in: dpkg -x over the tree would replace its
	# merged-/usr symlinks (/lib) with directories.
	dpkg -x "$d"/"$pkg"_*.deb "$d/x" || fail "cannot unpack $pkg"
	mkdir -p "$tree.tmp/usr/lib/modules" &&
		mv "$d/x/lib/modules/$version" "$tree.tmp/usr/lib/modules/" &&
		cp -a "$d"/x/boot/. "$tree.tmp/boot/" || fail "cannot move $pkg into the tree"
	rm -rf "$d"
	chroot "$tree.tmp" /sbin/depmod "$version" || fail "depmod in the tree"
	for old in "$CACHE"/initramfs-"$codename"-*; do
		[ "$old" != "$tree.tmp" ] && [ -d "$old" ] && rm -rf "$old"
	done
	touch "$tree.tmp/.complete" && mv "$tree.tmp" "$tree" || fail "cannot store $tree"
	say "tree ready"
fi
exec 8>&-

# ---- a copy, with entropyd installed as the package installs it ----
root=$W/root
say "copying the tree"
cp -a "$tree" "$root" || fail "cannot copy $tree"
# Where the built unit says they are: the paths configure chose (the hook finds either).
sbin=$(sed -n 's|^ExecStart=\(/[^ ]*\)/entropyd .*|\1|p' "$top_builddir/systemd/entropyd.service")
bin=$(sed -n 's|^ExecReload=\(/[^ ]*\)/entropyctl .*|\1|p' "$top_builddir/systemd/entropyd.service")
conf=$("$ENTROPYD" -p 2>/dev/null | sed -n 's/^# entropyd configuration in effect.*; from //p')
[ -n "$sbin" ] && [ -n "$bin" ] || fail "cannot read the programs' paths from the built unit"
case $conf in
/*) ;;
*) conf=$(dirname "$sbin")/etc/entropyd.conf ;; # -p said "built-in defaults": none here
esac
[ "$conf" = /usr/etc/entropyd.conf ] && conf=/etc/entropyd.conf
install -D -m 755 "$ENTROPYD" "$root$sbin/entropyd"
install -D -m 755 "$ENTROPYCTL" "$root$bin/entropyctl"
install -D -m 644 "$top_srcdir/conf/entropyd.conf" "$root$conf"
install -m 644 "$top_builddir/systemd/entropyd.service" "$root/lib/systemd/system/entropyd.service"
install -D -m 644 "$top_srcdir/systemd/sysusers.d/entropyd.conf" "$root/usr/lib/sysusers.d/entropyd.conf"
# The collector's user, made before the initramfs is, as the package's postinst does
# (dh_installsysusers): the hook copies it into the initramfs.
systemd-sysusers --root="$root" "$root/usr/lib/sysusers.d/entropyd.conf" ||
	fail "systemd-sysusers cannot make the user entropyd in the tree"
install -D -m 644 "$top_srcdir/systemd/tmpfiles.d/entropyd.conf" "$root/usr/lib/tmpfiles.d/entropyd.conf"
it=$top_srcdir/contrib/initramfs-tools
install -D -m 755 "$it/hooks/entropyd" "$root/usr/share/initramfs-tools/hooks/entropyd"
for s in init-premount init-bottom; do
	install -D -m 755 "$it/scripts/$s/entropyd" "$root/usr/share/initramfs-tools/scripts/$s/entropyd"
done
systemctl --root="$root" -q enable entropyd.service || fail "cannot enable the unit in the tree"

# The test's own parts: the disk reader for the initramfs (a hook and a script of the test's,
# beside the shipped ones), and the check on the root.
static_helper "$here/blk_io.c" "$root/usr/local/bin/blk_io"
# The attempts of a compromised collector (as t_privsep and t_system make them), in the
# initramfs and under the unit.
static_helper "$top_srcdir/tests/helpers/intrude.c" "$root/usr/local/bin/intrude"
install -D -m 644 "$top_srcdir/tests/helpers/intrusions.sh" "$root/usr/local/lib/entropyd-test/intrusions.sh"
cat > "$root/etc/initramfs-tools/hooks/zz-entropyd-test" <<'EOF'
#!/bin/sh
[ "$1" = prereqs ] && exit 0
. /usr/share/initramfs-tools/hook-functions
copy_exec /usr/local/bin/blk_io /bin/blk_io
copy_exec /usr/local/bin/intrude /bin/intrude
copy_file script /usr/local/lib/entropyd-test/intrusions.sh /lib/entropyd-test/intrusions.sh
EOF
cat > "$root/etc/initramfs-tools/scripts/init-premount/zz-entropyd-test" <<'EOF'
#!/bin/sh
# The test's disk I/O in the initramfs, after entropyd has started (init-premount/entropyd).
PREREQ="entropyd"
prereqs() { echo "$PREREQ"; }
[ "$1" = prereqs ] && { prereqs; exit 0; }
# The disk's node comes from udev, which runs before init-premount.
i=0
while [ ! -b /dev/vda ] && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
echo "entropyd-test: reading the disk" > /dev/kmsg
/bin/blk_io read /dev/vda 3000 4096 > /dev/null 2>&1 || echo "entropyd-test: blk_io failed" > /dev/kmsg
# A compromised collector's attempts, inside the initramfs's collector once its sandbox is
# in place (its log says so before "started:") and once it has seen the CRNG ready (the
# disk's credit is what initramfs_check looks at first: the attempts' perf flood spends the
# privileged process's budget, and come before the end of the initramfs); initramfs_check
# reports them. A root file it must not read, and udev's control socket (root's alone).
log=/run/initramfs/entropyd.log
i=0
while ! grep -q '^entropyd: notice: started: ' "$log" 2> /dev/null && [ "$i" -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
i=0
while ! grep -q 'CRNG is ready' "$log" 2> /dev/null && [ "$i" -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
main=$(cat /run/initramfs/entropyd.pid)
collector=$(tr -d ' ' < "/proc/$main/task/$main/children")
: > /run/initramfs/entropyd-test-secret && chmod 0000 /run/initramfs/entropyd-test-secret
INTRUDE=/bin/intrude
. /lib/entropyd-test/intrusions.sh
uid=$(sed -n 's/^entropyd:[^:]*:\([0-9]*\):.*/\1/p' /etc/passwd)
intrusions "$collector" "$uid" /etc/entropyd.conf /run/initramfs/entropyd-test-secret \
	/run/udev/control /dev/vda > /run/initramfs/intrusions.txt 2>&1
[ -e /etc/entropyd-intruder ] && echo "BAD: a file was made in /etc" >> /run/initramfs/intrusions.txt
# A collector that stops reading ends its daemon: that attempt is made on a second,
# throw-away instance (its own configuration, control socket, boot record and directory;
# no source), so that the real one keeps running to hand over its boot record.
s=/run/initramfs/entropyd-stall
mkdir -p "$s/no-input"
cat > "$s/entropyd.conf" <<CONF
sources = { input = { watch = "$s/no-input"; }; };
policy = { input = { mode = "mix-only"; }; block = { mode = "disabled"; };
           network = { mode = "disabled"; }; };
control = { socket = "$s/io.entropyd"; };
CONF
chmod 644 "$s/entropyd.conf"
/sbin/entropyd --foreground -f "$s/entropyd.conf" --boot-record "$s/boot.json" > "$s/log" 2>&1 &
spid=$!
i=0
while ! grep -q '^entropyd: notice: started: ' "$s/log" 2> /dev/null && [ "$i" -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
scoll=$(tr -d ' ' < "/proc/$spid/task/$spid/children" 2> /dev/null)
if [ -n "$scoll" ] && grep -q '^entropyd: notice: started: ' "$s/log"; then
	TMPDIR=$s attempt_stall "$scoll" "$spid" 1 TERM >> /run/initramfs/intrusions.txt 2>&1
else
	echo "BAD: the throw-away instance did not start: $(tail -3 "$s/log" | tr '\n' ' ')" >> /run/initramfs/intrusions.txt
	INTRUSIONS_BAD=$((INTRUSIONS_BAD + 1))
	kill "$spid" 2> /dev/null
fi
wait "$spid" 2> /dev/null
echo "entropyd-test: the attempts from inside the collector made ($INTRUSIONS_BAD not refused)" > /dev/kmsg
exit 0
EOF
chmod 755 "$root/etc/initramfs-tools/hooks/zz-entropyd-test" \
	"$root/etc/initramfs-tools/scripts/init-premount/zz-entropyd-test"
printf 'virtio_pci\nvirtio_blk\ncrc32c_generic\next4\n' >> "$root/etc/initramfs-tools/modules"
sed -i 's/^MODULES=.*/MODULES=list/' "$root/etc/initramfs-tools/initramfs.conf"
install -m 755 "$here/initramfs_check.sh" "$root/usr/local/bin/initramfs_check"
cat > "$root/etc/systemd/system/entropyd-initramfs-check.service" <<'EOF'
[Unit]
Description=entropyd's initramfs test: the checks
After=entropyd.service
Wants=entropyd.service
[Service]
Type=oneshot
ExecStart=/usr/local/bin/initramfs_check
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
EOF
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/entropyd-initramfs-check.service \
	"$root/etc/systemd/system/multi-user.target.wants/entropyd-initramfs-check.service"
# The console is the checks': no getty there to hang it up under them.
systemctl --root="$root" -q mask serial-getty@ttyS0.service getty@tty1.service ||
	fail "cannot mask the gettys in the tree"
echo "entropyd-guest" > "$root/etc/hostname"
: > "$root/etc/machine-id"
printf '/dev/vda / ext4 rw 0 1\n' > "$root/etc/fstab"

# ---- the initramfs, by initramfs-tools with the shipped hook ----
say "mkinitramfs $version"
mount -t proc proc "$root/proc" && mount -t sysfs sys "$root/sys" && mount --bind /dev "$root/dev" ||
	fail "cannot mount in the tree"
PATH=/usr/sbin:/usr/bin:/sbin:/bin chroot "$root" mkinitramfs -o "/boot/initrd.img-$version" "$version" > "$W/mkinitramfs.log" 2>&1 ||
	{ cat "$W/mkinitramfs.log"; fail "mkinitramfs failed"; }
PATH=/usr/sbin:/usr/bin:/sbin:/bin chroot "$root" lsinitramfs "/boot/initrd.img-$version" > "$W/initrd.list" 2>/dev/null ||
	fail "lsinitramfs failed"
umount "$root/proc" "$root/sys" "$root/dev"
cp "$root/boot/initrd.img-$version" "$W/initrd.img"
for f in sbin/entropyd etc/entropyd.conf scripts/init-premount/entropyd \
	scripts/init-bottom/entropyd "boot/config-$version"; do
	grep -qx "$f\|usr/$f" "$W/initrd.list" || fail "the initramfs has no $f (the hook's doing)"
done
pass_hz=$(grep -c '^CONFIG_HZ=' "$root/boot/config-$version")
[ "$pass_hz" -ge 1 ] || fail "the kernel's config has no CONFIG_HZ"
echo "PASS: initramfs: the shipped hook put entropyd, its configuration, its scripts and the kernel's CONFIG_HZ into the initramfs"

# ---- the root file system, and the boot ----
say "making the root file system"
rm -f "$root/boot/initrd.img-$version"
mkfs.ext4 -q -F -L root -d "$root" "$W/disk.img" 1536M > /dev/null || fail "mkfs.ext4 -d"
say "booting"
mkdir -p "$W/q"
python3 "$here/qemu_run.py" --kernel "$kdir/vmlinuz" --initrd "$W/initrd.img" --dir "$W/q" \
	--console "$W/console.log" --timeout "${ENTROPYD_GUEST_TIMEOUT:-400}" --qemu "$QEMU" \
	--disk "$W/disk.img" --no-virtio-input \
	--append "root=/dev/vda rw quiet random.trust_cpu=off random.trust_bootloader=off" &
PYPID=$!
wait "$PYPID"
rc=$?
say "qemu run done (status $rc)"
tr -d '\r' < "$W/console.log" > "$W/console.txt"
echo "----- guest console (the checks)"
sed -n '/^=== initramfs check/,/^=== end/p' "$W/console.txt"
echo "----- end"
grep -q '^=== end' "$W/console.txt" || { tail -40 "$W/console.txt"; fail "the checks did not run to the end"; }
grep -E '^(PASS|FAIL): ' "$W/console.txt" | sed -n '/initramfs/p' > "$W/results"
nfail=$(grep -c '^FAIL: ' "$W/results")
npass=$(grep -c '^PASS: ' "$W/results")
echo "$npass passed, $nfail failed in the guest"
[ "$nfail" -eq 0 ] && [ "$npass" -gt 0 ]
