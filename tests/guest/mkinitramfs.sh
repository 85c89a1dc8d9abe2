#!/bin/bash
# mkinitramfs.sh OUT KERNEL_DIR GUEST_DIR BINARY...: the guest's initramfs (gzipped newc cpio).
#
#   /init, /tests/*        GUEST_DIR/init and GUEST_DIR/g_*.sh, glib.sh (the guest's tests)
#   /bin/busybox           busybox-static; /init makes the applet links
#   /modules/*.ko, order   from KERNEL_DIR, loaded by /init with insmod in that order
#   /bin/NAME              each BINARY (BINARY=/DEST: at /DEST); a dynamically linked one
#                          brings the shared libraries ldd lists for it (and the loader) at
#                          the same paths
#
# Environment: INITRAMFS_INIT, another /init (make bench-boot's); INITRAMFS_FILES, more files
# or directories, one "SOURCE DEST" pair a line (DEST an absolute path in the initramfs;
# modes are kept);
# INITRAMFS_SYSROOT, the root of another architecture's packages (tests/cross/sysroot.sh)
# that the binaries were built against: busybox and the libraries come from there, found
# by the binaries' own lists (readelf), since ldd cannot run them.
#
# Binaries are copied with their libraries rather than linked statically: the entropyd under
# test is then the very one "make" built (libsystemd has no static archive, and one more
# configure and build per run would cost more than the copy), and a library another source
# adds later comes along by itself.
set -euo pipefail

out=$1 kdir=$2 gdir=$3
shift 3
sysroot=${INITRAMFS_SYSROOT:-}
if [ -n "$sysroot" ]; then
	busybox=$sysroot/bin/busybox
	static() { ! LC_ALL=C readelf -d "$1" | grep -q '(NEEDED)'; }
else
	busybox=$(command -v busybox || true)
	[ -n "$busybox" ] || busybox=/bin/busybox
	static() { case $(LC_ALL=C ldd "$1" 2>&1) in *"not a dynamic"*) return 0 ;; esac; return 1; }
fi
if ! static "$busybox"; then
	echo "mkinitramfs.sh: $busybox is not the static busybox (apt-get install busybox-static)" >&2
	exit 1
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/entropyd-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
# The guest's / as a Debian machine's: mktemp's 0700 would keep every user but root out of
# the whole tree (the unit tests that drop to nobody reach nothing).
chmod 0755 "$root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,var/run,etc,modules,tests,lib,lib64}
cp "$busybox" "$root/bin/busybox"
cp "$kdir"/modules/*.ko "$kdir/modules/order" "$root/modules/"
install -m 755 "${INITRAMFS_INIT:-$gdir/init}" "$root/init"
while read -r src dest; do
	[ -n "$src" ] || continue
	mkdir -p "$root$(dirname "$dest")"
	cp -pR "$src" "$root$dest"
done <<< "${INITRAMFS_FILES:-}"
cp "$gdir"/glib.sh "$gdir"/g_*.sh "$root/tests/"
# The collector's system user, as the package makes it: entropyd never runs its collector as
# root, and does not start without it. nobody, as Debian has it, for the unit tests that
# drop to it (g_unit.sh).
printf 'root:x:0:0:root:/:/bin/sh\nentropyd:x:101:101::/nonexistent:/bin/false\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$root/etc/passwd"
printf 'root:x:0:\nentropyd:x:101:\nnogroup:x:65534:\n' > "$root/etc/group"

copy_lib() {
	local dest=$root$1
	[ -e "$dest" ] && return 0
	mkdir -p "$(dirname "$dest")"
	cp -L "$1" "$dest"
}

# cross_libs FILE: the loader and every library FILE needs, and theirs, as paths in the
# sysroot's file system (/lib/TRIPLET/libc.so.6), each once.
cross_libs() {
	local f=$1 interp lib dir
	interp=$(LC_ALL=C readelf -l "$f" | sed -n 's|.*interpreter: \(/[^]]*\)\].*|\1|p')
	[ -n "$interp" ] && echo "$interp"
	for lib in $(LC_ALL=C readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		for dir in $(cd "$sysroot" && ls -d lib/*-linux-gnu* usr/lib/*-linux-gnu* 2>/dev/null); do
			if [ -e "$sysroot/$dir/$lib" ]; then
				if ! grep -qx "/$dir/$lib" "$root/.libs" 2>/dev/null; then
					echo "/$dir/$lib" >> "$root/.libs"
					echo "/$dir/$lib"
					cross_libs "$sysroot/$dir/$lib"
				fi
				break
			fi
		done
	done
}

for bin in "$@"; do
	# SOURCE=DEST puts a binary elsewhere than /bin (where busybox's links would replace it).
	case $bin in
	*=/*) dest=${bin#*=} bin=${bin%%=*} ;;
	*) dest=/bin/$(basename "$bin") ;;
	esac
	mkdir -p "$root$(dirname "$dest")"
	cp -L "$bin" "$root$dest"
	# "not a dynamic executable": a static binary needs nothing more.
	static "$bin" && continue
	if [ -n "$sysroot" ]; then
		while read -r lib; do
			[ -e "$root$lib" ] && continue
			mkdir -p "$(dirname "$root$lib")"
			cp -L "$sysroot$lib" "$root$lib"
		done < <(cross_libs "$bin")
		continue
	fi
	while read -r lib; do
		copy_lib "$lib"
	done < <(LC_ALL=C ldd "$bin" | sed -n 's|.*=> \(/[^ ]*\) .*|\1|p; s|^[[:space:]]*\(/[^ ]*\) (.*|\1|p')
done
rm -f "$root/.libs"

(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) |
	gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
