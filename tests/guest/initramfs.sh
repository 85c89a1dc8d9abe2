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
# ENTROPYD_GUEST_ARCH=arm64|armhf (as run.sh's): the tree is Debian's of that architecture
# (the release the cross build's root is of, ENTROPYD_CROSS_SUITE, bookworm by default),
# with the cross-built programs, booted under -M virt. Its programs (debootstrap's second
# stage, depmod, mkinitramfs and what it runs) run under qemu-user (qemu-user-static),
# registered with binfmt_misc in a user namespace of the test's own (Linux 6.7; every uid
# below 65536 mapped to itself, so that dpkg can give files to other users): nothing is
# registered for the machine as a whole. A kernel without binfmt_misc per user namespace
# cannot run them: exit 77. The kernel (bookworm's by default, ENTROPYD_GUEST_SUITE) is
# fetched with kernel.sh's apt state of that architecture.
#
# Exit status 0 passed, 1 failed, 77 cannot run here (the reason is printed). Environment as
# run.sh's, and ENTROPYD_TEST_CACHE (the trees, default /var/cache/entropyd-test; one per
# release, architecture and package list), ENTROPYD_TEST_MIRROR (default: the mirror apt
# uses), ENTROPYD_GUEST_KEEP=1.
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

# Another architecture's programs run under qemu-user, in namespaces of the test's own.
qcpu=
case $GUEST_ARCH in
arm64) qcpu=aarch64 ;;
armhf) qcpu=arm ;;
esac
if [ -n "$qcpu" ]; then
	if ! command -v "qemu-$qcpu-static" > /dev/null || [ ! -r "/usr/share/binfmts/qemu-$qcpu" ]; then
		missing "no qemu-$qcpu-static (apt-get install qemu-user-static)"
	fi
	command -v unshare > /dev/null || missing "no unshare (apt-get install util-linux)"
	# binfmt_misc's registration, from the package's own description of the format.
	binfmt=":qemu-$qcpu:M::$(sed -n 's/^magic //p' "/usr/share/binfmts/qemu-$qcpu"):$(sed -n 's/^mask //p' "/usr/share/binfmts/qemu-$qcpu"):$(command -v "qemu-$qcpu-static"):F"
fi

T0=$(date +%s)
say() { printf 'initramfs: [%3ds] %s\n' "$(($(date +%s) - T0))" "$*"; }
fail() { echo "FAIL: initramfs: $*"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/var/tmp}/entropyd-initramfs.XXXXXX")
cleanup() {
	if [ "${ENTROPYD_GUEST_KEEP:-0}" = 1 ]; then echo "initramfs: kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# in_tree CMD...: CMD, in a mount namespace of its own (what it mounts goes with it). For
# another architecture's tree, in a user namespace too, every uid and gid below 65536 mapped
# to itself (written here, as root: unshare's --map-users needs newuidmap), with a PID and a
# network namespace (proc and sysfs can be mounted there) and binfmt_misc mounted with
# qemu-user registered: only in that namespace. CMD starts once the maps are written.
in_tree() {
	[ -n "$qcpu" ] || { unshare --mount "$@"; return; }
	local fifo=$W/ns.fifo pid me i=0 rc
	rm -f "$fifo" && mkfifo "$fifo" || return 1
	unshare --user --mount --pid --net --fork --kill-child bash -c '
		read -r _ < "$0" || exit 1
		mount -t proc proc /proc || exit 1
		if ! mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2> /dev/null; then
			echo "this kernel ($(uname -r)) has no binfmt_misc per user namespace (Linux 6.7)"
			exit 125
		fi
		printf "%s" "$1" > /proc/sys/fs/binfmt_misc/register || exit 1
		shift
		exec "$@"' "$fifo" "$binfmt" "$@" &
	pid=$!
	me=$(readlink /proc/self/ns/user)
	while [ "$(readlink "/proc/$pid/ns/user" 2>/dev/null)" = "$me" ] && [ "$i" -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	if [ "$(readlink "/proc/$pid/ns/user" 2>/dev/null)" = "$me" ] ||
		! echo "0 0 65536" > "/proc/$pid/uid_map" || ! echo "0 0 65536" > "/proc/$pid/gid_map"; then
		kill "$pid" 2> /dev/null
		wait "$pid"
		echo "cannot make a user namespace with uids 0-65535 mapped"
		return 125
	fi
	echo go > "$fifo"
	wait "$pid"
	rc=$?
	rm -f "$fifo"
	return "$rc"
}
if [ -n "$qcpu" ]; then
	why=$(in_tree true 2>&1) || missing "the $GUEST_ARCH tree's programs need qemu-user registered with binfmt_misc in a user namespace, never for the whole machine: ${why:-unshare failed}"
fi

kdir=$(ENTROPYD_GUEST_ARCH=$GUEST_KERNEL_ARCH "$here/kernel.sh" "$ENTROPYD_GUEST_CACHE") ||
	missing "no guest kernel (see above)"
pkg=$(basename "$kdir")
version=${pkg#linux-image-}

# ---- the tree, cached per release, architecture, kernel and package list ----
. /etc/os-release
codename=${VERSION_CODENAME:-}
[ -n "$codename" ] || missing "cannot tell this host's Debian release"
# Another architecture's: the release its programs were built against.
[ -z "$qcpu" ] || codename=${ENTROPYD_CROSS_SUITE:-bookworm}
mirror=${ENTROPYD_TEST_MIRROR:-$(sed -n 's/^URIs: \(http[^ ]*debian\/*\)$/\1/p; s/^deb \[*[^]]*\]* *\(http[^ ]*debian\/*\) '"$codename"' .*/\1/p' \
	/etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -1)}
[ -n "$mirror" ] || missing "no Debian mirror for $codename in apt's sources"
if [ -z "$qcpu" ]; then
	libs=$(for p in "$ENTROPYD" "$ENTROPYCTL"; do
		for lib in $(ldd "$p" | awk '/=> \// { print $3 }'); do
			pkgof=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "/usr$lib" 2>/dev/null ||
				dpkg -S "${lib#/usr}" 2>/dev/null) || { echo "?$lib"; continue; }
			echo "${pkgof%%:*}"
		done
	done | sort -u | tr '\n' ' ')
else
	# The libraries the programs name (readelf: ldd cannot run them), each the package of
	# the cross build's root that holds it (the package brings what the library needs).
	while read -r deb; do
		p=$(dpkg-deb -f "$deb" Package)
		dpkg-deb -c "$deb" | awk -v p="$p" '{ sub(/^\./, "", $6); print p, $6 }'
	done < "$GUEST_SYSROOT/.debs" > "$W/sysroot.files" || fail "cannot list the packages of $GUEST_SYSROOT"
	libs=$(for p in "$ENTROPYD" "$ENTROPYCTL"; do
		for lib in $(LC_ALL=C readelf -d "$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			awk -v l="$lib" '$2 ~ /^(\/usr)?\/lib\// && substr($2, length($2) - length(l)) == "/" l { print $1; f = 1; exit }
				END { if (!f) print "?" l }' "$W/sysroot.files"
		done
	done | sort -u | tr '\n' ' ')
fi
case $libs in *'?'*) fail "no Debian package holds: $libs" ;; esac
packages="systemd systemd-sysv initramfs-tools busybox udev kmod $libs"
# amd64's as it always was named; another architecture's with its name.
tag=
[ -z "$qcpu" ] || tag=$GUEST_ARCH-
key=$(printf '%s %s %s\n' "$codename" "$pkg" "$packages" | sha256sum | cut -c1-12)
tree=$CACHE/initramfs-$codename-$tag$key
mkdir -p "$CACHE" || fail "cannot create $CACHE"
exec 8> "$CACHE/initramfs.lock"
flock -w 900 8 || fail "$CACHE/initramfs.lock is held"
if [ ! -f "$tree/.complete" ]; then
	say "debootstrap $codename from $mirror with $packages (once; a few minutes)"
	rm -rf "$tree.tmp"
	dlog=$CACHE/initramfs-${tag}debootstrap.log
	if [ -z "$qcpu" ]; then
		timeout -k 10 900 debootstrap --variant=minbase --include="$(echo $packages | tr ' ' ',')" \
			"$codename" "$tree.tmp" "$mirror" > "$dlog" 2>&1
	else
		# The first stage (download, unpack, the device nodes) here; the second (the
		# packages' scripts) under qemu-user in the namespace, where no device node can be
		# made: container=lxc tells debootstrap not to try.
		timeout -k 10 900 debootstrap --foreign --arch="$GUEST_ARCH" --variant=minbase \
			--include="$(echo $packages | tr ' ' ',')" \
			"$codename" "$tree.tmp" "$mirror" > "$dlog" 2>&1 &&
			in_tree timeout -k 10 1800 env container=lxc chroot "$tree.tmp" \
				/debootstrap/debootstrap --second-stage >> "$dlog" 2>&1
	fi || { tail -20 "$dlog"; rm -rf "$tree.tmp"; fail "debootstrap failed"; }
	# The guest's kernel: its modules for mkinitramfs, its config for the hook; unpacked,
	# as kernel.sh does, not installed (no postinst runs).
	d=$(mktemp -d "$W/deb.XXXXXX")
	if [ "$GUEST_KERNEL_ARCH" = amd64 ]; then
		(cd "$d" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "$pkg" > /dev/null)
	else
		# kernel.sh's apt state for the release and architecture (aptlib.sh).
		(. "$here/aptlib.sh" && apt_private "$ENTROPYD_GUEST_CACHE/apt/${ENTROPYD_GUEST_SUITE:-bookworm}-$GUEST_KERNEL_ARCH" \
			"${ENTROPYD_GUEST_SUITE:-bookworm}" "$GUEST_KERNEL_ARCH" &&
			cd "$d" && papt apt-get download "$pkg" > /dev/null)
	fi || fail "cannot download $pkg"
	# Unpacked beside the tree, then moved in: dpkg -x over the tree would replace its
	# merged-/usr symlinks (/lib) with directories.
	dpkg -x "$d"/"$pkg"_*.deb "$d/x" || fail "cannot unpack $pkg"
	mkdir -p "$tree.tmp/usr/lib/modules" &&
		mv "$d/x/lib/modules/$version" "$tree.tmp/usr/lib/modules/" &&
		cp -a "$d"/x/boot/. "$tree.tmp/boot/" || fail "cannot move $pkg into the tree"
	rm -rf "$d"
	in_tree chroot "$tree.tmp" /sbin/depmod "$version" || fail "depmod in the tree"
	# Older trees of this release and architecture go (the other architectures' stay).
	for old in "$CACHE"/initramfs-"$codename"-*; do
		case ${old#"$CACHE/initramfs-$codename-"} in
		arm64-* | armhf-*) [ -n "$tag" ] && [ "${old#"$CACHE/initramfs-$codename-$tag"}" != "$old" ] || continue ;;
		*) [ -z "$tag" ] || continue ;;
		esac
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
# Where the built unit says they are: the paths configure chose (the hook finds either). The
# unit is the build's of the programs under test (the cross build's for another
# architecture, whose program runs here under qemu-user).
gbuild=$(cd "$(dirname "$ENTROPYD")/.." && pwd)
[ -f "$gbuild/systemd/entropyd.service" ] || fail "no built unit in $gbuild (make)"
sbin=$(sed -n 's|^ExecStart=\(/[^ ]*\)/entropyd .*|\1|p' "$gbuild/systemd/entropyd.service")
bin=$(sed -n 's|^ExecReload=\(/[^ ]*\)/entropyctl .*|\1|p' "$gbuild/systemd/entropyd.service")
run=()
[ -z "$qcpu" ] || run=("qemu-$qcpu-static" -L "$GUEST_SYSROOT")
conf=$("${run[@]}" "$ENTROPYD" -p 2>/dev/null | sed -n 's/^# entropyd configuration in effect.*; from //p')
[ -n "$sbin" ] && [ -n "$bin" ] || fail "cannot read the programs' paths from the built unit"
case $conf in
/*) ;;
*) conf=$(dirname "$sbin")/etc/entropyd.conf ;; # -p said "built-in defaults": none here
esac
[ "$conf" = /usr/etc/entropyd.conf ] && conf=/etc/entropyd.conf
install -D -m 755 "$ENTROPYD" "$root$sbin/entropyd"
install -D -m 755 "$ENTROPYCTL" "$root$bin/entropyctl"
install -D -m 644 "$top_srcdir/conf/entropyd.conf" "$root$conf"
install -m 644 "$gbuild/systemd/entropyd.service" "$root/lib/systemd/system/entropyd.service"
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
# The attempts under the unit hold the collector stopped (ptrace) between calls, and its
# loop is what keeps the service's watchdog (WatchdogSec=30) fed: on armhf under emulation
# they took 0.9 to 11.9 s on an idle host, and once the collector was gone in their middle,
# the service restarted. The test's own drop-in gives them room; nothing else changes.
mkdir -p "$root/etc/systemd/system/entropyd.service.d"
printf '[Service]\nWatchdogSec=5min\n' > "$root/etc/systemd/system/entropyd.service.d/zz-entropyd-test.conf"

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
# The disk's bus: PCI on the PC, virtio-mmio under -M virt; the console there.
if [ "$GUEST_KERNEL_ARCH" = amd64 ]; then
	console=ttyS0 bus=virtio_pci
else
	console=ttyAMA0 bus=virtio_mmio
fi
printf '%s\nvirtio_blk\ncrc32c_generic\next4\n' "$bus" >> "$root/etc/initramfs-tools/modules"
sed -i 's/^MODULES=.*/MODULES=list/' "$root/etc/initramfs-tools/initramfs.conf"
install -m 755 "$here/initramfs_check.sh" "$root/usr/local/bin/initramfs_check"
cat > "$root/etc/systemd/system/entropyd-initramfs-check.service" <<EOF
[Unit]
Description=entropyd's initramfs test: the checks
After=entropyd.service
Wants=entropyd.service
[Service]
Type=oneshot
ExecStart=/usr/local/bin/initramfs_check
StandardOutput=tty
StandardError=tty
TTYPath=/dev/$console
EOF
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/entropyd-initramfs-check.service \
	"$root/etc/systemd/system/multi-user.target.wants/entropyd-initramfs-check.service"
# The console is the checks': no getty there to hang it up under them, nor on -M virt's
# control channel (a virtio console, hvc0, which systemd would give a getty).
systemctl --root="$root" -q mask "serial-getty@$console.service" getty@tty1.service \
	serial-getty@hvc0.service ||
	fail "cannot mask the gettys in the tree"
echo "entropyd-guest" > "$root/etc/hostname"
: > "$root/etc/machine-id"
printf '/dev/vda / ext4 rw 0 1\n' > "$root/etc/fstab"

# ---- the initramfs, by initramfs-tools with the shipped hook ----
say "mkinitramfs $version"
# In a mount namespace of its own (in_tree): the mounts go with it.
in_tree bash -c 'mount -t proc proc "$0/proc" && mount -t sysfs sys "$0/sys" &&
	mount --rbind /dev "$0/dev" || { echo "initramfs: cannot mount in the tree"; exit 1; }
	export PATH=/usr/sbin:/usr/bin:/sbin:/bin
	chroot "$0" mkinitramfs -o "/boot/initrd.img-$1" "$1" > "$2/mkinitramfs.log" 2>&1 ||
		{ cat "$2/mkinitramfs.log"; echo "initramfs: mkinitramfs failed"; exit 1; }
	chroot "$0" lsinitramfs "/boot/initrd.img-$1" > "$2/initrd.list" 2> /dev/null ||
		{ echo "initramfs: lsinitramfs failed"; exit 1; }' "$root" "$version" "$W" ||
	fail "cannot build the initramfs in the tree (see above)"
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
	--arch "$GUEST_KERNEL_ARCH" --disk "$W/disk.img" --no-virtio-input \
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
