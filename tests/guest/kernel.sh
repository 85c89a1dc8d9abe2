#!/bin/bash
# kernel.sh CACHE [SUITE]: print the directory holding the generic amd64 kernel (vmlinuz) of a
# Debian release and the modules the guest needs (modules/*.ko, modules/order), fetching
# them into CACHE if needed. SUITE: bullseye (5.10), bookworm (6.1, the default) or trixie
# (6.12); ENTROPYD_GUEST_SUITE when not given.
#
# The package is the one the release's linux-image-amd64 depends on now (or, when the mirror
# lacks that one, the one of the release's point release), looked up in package lists of
# that release kept under CACHE/apt/SUITE (a private apt state: the machine's own
# apt configuration, lists and cache are not touched), fetched with "apt-get download" and
# unpacked with "dpkg -x" -- never installed on this machine. Only the kernel and the few
# modules are kept (CACHE/linux-image-VERSION-amd64/), so later runs on the same machine
# download nothing. Without the release's lists (offline), the newest kernel of its series
# already in CACHE is used. Exit status 1, with the reason on stderr, if there is none.
#
# What differs between the releases' packages: modules under lib/modules (5.10, 6.1) or
# usr/lib/modules (6.12, merged /usr); modules built in (6.12 has the virtio core built in:
# modules.builtin lists them, and they are not loaded); 5.10 has no virtio_pci_modern_dev or
# virtio_pci_legacy_dev (part of virtio_pci there). A module's own dependencies (its .modinfo
# "depends=") are loaded before it, whatever the list says.
set -euo pipefail

cache=$1
suite=${2:-${ENTROPYD_GUEST_SUITE:-bookworm}}
case $suite in
bullseye) series=5.10 ;;
bookworm) series=6.1 ;;
trixie) series=6.12 ;;
*) echo "kernel.sh: unknown suite $suite (bullseye, bookworm or trixie)" >&2; exit 1 ;;
esac
# What the guest loads, in this order. virtio_blk and the ext4 stack (crc16, mbcache, jbd2,
# crc32c_generic for its checksums) are for guests with a disk (make bench-boot).
MODULES="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_input
evdev uinput loop virtio_blk crc16 mbcache jbd2 crc32c_generic ext4"
# Modules some kernels do not have at all, built in or not.
OPTIONAL=" virtio_pci_modern_dev virtio_pci_legacy_dev "
[ "${ENTROPYD_GUEST_ARCH:-amd64}" = amd64 ] || OPTIONAL="$OPTIONAL virtio_pci virtio_input "
# ENTROPYD_GUEST_ARCH: amd64 (the default), arm64, or armhf (Debian's armmp-lpae kernel,
# for qemu-system-arm -M virt). Under -M virt the devices sit on virtio-mmio, and the
# control channel is a virtio console.
arch=${ENTROPYD_GUEST_ARCH:-amd64}
case $arch in
amd64) flavour=amd64 ;;
arm64) flavour=arm64 ;;
armhf) flavour=armmp-lpae ;;
*) echo "kernel.sh: unknown architecture $arch (amd64, arm64 or armhf)" >&2; exit 1 ;;
esac
# -M virt has no PC keyboard: its real (not virtual) keyboard is qemu's USB one, on xhci.
# The links the unit programs make (g_unit.sh, run there only): veth, macvlan, ifb, bridge.
[ "$arch" = amd64 ] || MODULES="virtio_mmio virtio_console $MODULES xhci_pci usbhid hid_generic
veth macvlan ifb bridge"

mkdir -p "$cache"
exec 8> "$cache/.lock"
flock -w 600 8 || { echo "kernel.sh: $cache is locked by another run" >&2; exit 1; }

# apt with a state of its own for the suite and architecture (aptlib.sh).
. "$(dirname "$0")/aptlib.sh"
A=$cache/apt/$suite
[ "$arch" = amd64 ] || A=$cache/apt/$suite-$arch
lists() { apt_private "$A" "$suite" "$arch"; }
# The kernels each version of linux-image-FLAVOUR depends on, the newest first: the
# security update's, then the point release's (tried when the newer one's package is not on
# the mirror).
pkgs=
if lists; then
	pkgs=$(papt apt-cache madison "linux-image-$flavour" 2>/dev/null | awk '{ print $3 }' |
		uniq | while read -r v; do
			papt apt-cache depends "linux-image-$flavour=$v" 2>/dev/null |
				sed -n "s/^ *Depends: \(linux-image-[0-9][^ ]*-$flavour\)\$/\1/p" | head -1
		done | awk '!seen[$0]++') || true
fi
# A kernel cached with every module of the list (a list that grew means fetching again):
# each loaded, built in or, if it may be, absent.
complete() {
	local m
	[ -f "$1/vmlinuz" ] && [ -f "$1/modules/order" ] && [ -f "$1/modules/builtin" ] || return 1
	for m in $MODULES; do
		grep -qx "$m" "$1/modules/order" "$1/modules/builtin" "$1/modules/absent" 2>/dev/null ||
			return 1
	done
}

fetch() (
	tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# (set -e does not hold in a function called from "if": every step says || exit 1)
	(cd "$tmp" && papt apt-get download "$pkg") >&2 || exit 1
	dpkg -x "$tmp"/"$pkg"_*.deb "$tmp/x" || exit 1
	mdir=$(ls -d "$tmp"/x/lib/modules/* "$tmp"/x/usr/lib/modules/* 2>/dev/null | head -1)
	[ -n "$mdir" ] || { echo "kernel.sh: $pkg has no lib/modules or usr/lib/modules" >&2; exit 1; }
	mkdir -p "$tmp/k/modules" || exit 1
	: > "$tmp/k/modules/order"
	: > "$tmp/k/modules/absent"
	# modules.builtin lists paths (kernel/drivers/virtio/virtio.ko): the names, as modules
	# are named (- and _ are one).
	sed 's|.*/||; s|\.ko$||; s|-|_|g' "$mdir/modules.builtin" > "$tmp/k/modules/builtin" ||
		exit 1
	cp "$tmp"/x/boot/vmlinuz-* "$tmp/k/vmlinuz" || exit 1
	cp "$tmp"/x/boot/config-* "$tmp/k/config" || exit 1
	# take MODULE: the module, after its own dependencies, unless built in or taken already.
	take() {
		local m=$1 f d
		grep -qx "$m" "$tmp/k/modules/order" "$tmp/k/modules/builtin" && return 0
		f=$(find "$mdir" \( -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" \
			-o -name "${m//_/-}.ko" -o -name "${m//_/-}.ko.xz" -o -name "${m//_/-}.ko.zst" \) |
			head -1)
		if [ -z "$f" ]; then
			case $OPTIONAL in
			*" $m "*) echo "$m" >> "$tmp/k/modules/absent"; return 0 ;;
			esac
			echo "kernel.sh: $pkg has no module $m, and it is not built in" >&2
			return 1
		fi
		case $f in
		*.xz) xz -dc "$f" > "$tmp/k/modules/$m.ko" ;;
		*.zst) zstd -qdc "$f" > "$tmp/k/modules/$m.ko" ;;
		*) cp "$f" "$tmp/k/modules/$m.ko" ;;
		esac || return 1
		for d in $(tr '\0' '\n' < "$tmp/k/modules/$m.ko" | sed -n 's/^depends=//p' | tr ',' ' '); do
			take "${d//-/_}" || return 1
		done
		grep -qx "$m" "$tmp/k/modules/order" || echo "$m" >> "$tmp/k/modules/order"
	}
	for m in $MODULES; do
		take "$m" || exit 1
	done
	rm -rf "${cache:?}/$pkg"
	mv "$tmp/k" "$cache/$pkg" || exit 1
	echo "kernel.sh: fetched $pkg into $cache/$pkg (modules: $(tr '\n' ' ' < "$cache/$pkg/modules/order"))" >&2
	# Keep the cache to the series' current kernel: older ones of it are not used while apt
	# knows this one (the other releases' kernels stay).
	for old in "$cache"/linux-image-"$series".*-"$flavour" "$cache"/linux-image-"$series"-*-"$flavour"; do
		[ -d "$old" ] && [ "$old" != "$cache/$pkg" ] && rm -rf "$old"
	done
	exit 0
)

for pkg in $pkgs; do
	if complete "$cache/$pkg" || fetch; then
		echo "$cache/$pkg"
		exit 0
	fi
done
pkg=${pkgs%%$'\n'*}
# Offline, or no package lists: fall back on the newest kernel of the series fetched before.
have=$(ls -d "$cache"/linux-image-"$series".*-"$flavour" "$cache"/linux-image-"$series"-*-"$flavour" \
	2>/dev/null | sort -V | tail -1) || true
if [ -n "$have" ] && [ -f "$have/modules/order" ]; then
	[ -n "$pkg" ] && echo "kernel.sh: cannot fetch $pkg; using the cached $(basename "$have")" >&2
	echo "$have"
	exit 0
fi
if [ -z "$pkg" ]; then
	echo "kernel.sh: no package lists for $suite (see above) and $cache has no $series kernel" >&2
else
	echo "kernel.sh: cannot download $pkg and $cache has no kernel" >&2
fi
exit 1
