#!/bin/bash
# kernel.sh CACHE: print the directory holding Debian's generic amd64 kernel (vmlinuz) and the
# modules the guest needs (modules/*.ko, modules/order), fetching them into CACHE if needed.
#
# The package is the one Debian's linux-image-amd64 depends on now; it is fetched with
# "apt-get download" and unpacked with "dpkg -x" -- never installed on this machine. Only the
# kernel and the few modules are kept (CACHE/linux-image-VERSION-amd64/), so later runs on
# the same machine download nothing. Without apt's package lists (or offline), the newest
# kernel already in CACHE is used. Exit status 1, with the reason on stderr, if there is none.
set -euo pipefail

cache=$1
# Load order: no modules.dep is used, so dependencies come first. virtio_blk and the ext4
# stack (crc16, mbcache, jbd2, crc32c_generic for its checksums) are for guests with a disk
# (make bench-boot).
MODULES="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_input
evdev uinput loop virtio_blk crc16 mbcache jbd2 crc32c_generic ext4"

mkdir -p "$cache"
exec 8> "$cache/.lock"
flock -w 300 8 || { echo "kernel.sh: $cache is locked by another run" >&2; exit 1; }

pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -1) || true
# A kernel cached with every module of the list (a list that grew means fetching again).
complete() {
	local m
	[ -f "$1/vmlinuz" ] && [ -f "$1/modules/order" ] || return 1
	for m in $MODULES; do
		grep -qx "$m" "$1/modules/order" || return 1
	done
}
if [ -n "$pkg" ] && complete "$cache/$pkg"; then
	echo "$cache/$pkg"
	exit 0
fi

fetch() (
	tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# apt drops root to _apt for downloads, which cannot write here: download as we are.
	(cd "$tmp" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "$pkg") >&2 ||
		exit 1
	# (set -e does not hold in a function called from "if": every step says || exit 1)
	dpkg -x "$tmp"/"$pkg"_*.deb "$tmp/x" || exit 1
	mkdir -p "$tmp/k/modules" || exit 1
	cp "$tmp"/x/boot/vmlinuz-* "$tmp/k/vmlinuz" || exit 1
	for m in $MODULES; do
		f=$(find "$tmp"/x/lib/modules -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" |
			head -1)
		[ -n "$f" ] || { echo "kernel.sh: $pkg has no module $m" >&2; exit 1; }
		case $f in
		*.xz) xz -dc "$f" > "$tmp/k/modules/$m.ko" ;;
		*.zst) zstd -qdc "$f" > "$tmp/k/modules/$m.ko" ;;
		*) cp "$f" "$tmp/k/modules/$m.ko" ;;
		esac || exit 1
		echo "$m" >> "$tmp/k/modules/order"
	done
	cp "$tmp"/x/boot/config-* "$tmp/k/config" || exit 1
	rm -rf "${cache:?}/$pkg"
	mv "$tmp/k" "$cache/$pkg" || exit 1
	echo "kernel.sh: fetched $pkg into $cache/$pkg" >&2
	# Keep the cache to the current kernel: older ones are not used while apt knows this one.
	for old in "$cache"/linux-image-*-amd64; do
		[ "$old" = "$cache/$pkg" ] || rm -rf "$old"
	done
)

if [ -n "$pkg" ] && fetch; then
	echo "$cache/$pkg"
	exit 0
fi
# Offline, or no package lists: fall back on the newest kernel fetched before.
have=$(ls -d "$cache"/linux-image-*-amd64 2>/dev/null | sort -V | tail -1) || true
if [ -n "$have" ] && [ -f "$have/modules/order" ]; then
	[ -n "$pkg" ] && echo "kernel.sh: cannot fetch $pkg; using the cached $(basename "$have")" >&2
	echo "$have"
	exit 0
fi
if [ -z "$pkg" ]; then
	echo "kernel.sh: apt knows no linux-image-amd64 (run apt-get update) and $cache has no kernel" >&2
else
	echo "kernel.sh: cannot download $pkg and $cache has no kernel" >&2
fi
exit 1
