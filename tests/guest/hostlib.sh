# hostlib.sh: what the host side of the guest runs shares (tests/guest/run.sh,
# tests/guest/initramfs.sh, bench/boot.sh): the trees and programs under test, where the
# kernel is cached, the prerequisites, the static helpers. Sourced, with bash.

# The trees and the programs under test, unless the caller gave them (make does).
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"

# ENTROPYD_GUEST_ARCH: the architecture of the guest's programs, amd64 (the default: those
# "make" built), arm64 or armhf (built here with a cross compiler, tests/cross/build.sh, in
# BUILDDIR/cross-ARCH). ENTROPYD_GUEST_KERNEL_ARCH: the kernel's, the same by default;
# arm64 runs armhf programs too (its 32-bit compat mode, the EABI's call numbers).
GUEST_ARCH=${ENTROPYD_GUEST_ARCH:-amd64}
GUEST_KERNEL_ARCH=${ENTROPYD_GUEST_KERNEL_ARCH:-$GUEST_ARCH}
GUEST_SYSROOT=
: "${CC:=cc}"
case $GUEST_ARCH in
amd64) ;;
arm64) GUEST_CC=aarch64-linux-gnu-gcc ;;
armhf) GUEST_CC=arm-linux-gnueabihf-gcc ;;
*) echo "guest: unknown architecture $GUEST_ARCH (amd64, arm64 or armhf)"; exit 1 ;;
esac
if [ "$GUEST_ARCH" != amd64 ]; then
	GUEST_SYSROOT=$("$top_srcdir/tests/cross/build.sh" "$GUEST_ARCH" \
		"$top_builddir/cross-$GUEST_ARCH" all | tail -1) ||
		{ echo "guest: cannot build entropyd for $GUEST_ARCH (see above)"; exit 77; }
	ENTROPYD=$top_builddir/cross-$GUEST_ARCH/src/entropyd
	ENTROPYCTL=$top_builddir/cross-$GUEST_ARCH/src/entropyctl
	CC="$GUEST_CC --sysroot=$GUEST_SYSROOT"
	export INITRAMFS_SYSROOT=$GUEST_SYSROOT
fi
: "${ENTROPYD:=$top_builddir/src/entropyd}"
: "${ENTROPYCTL:=$top_builddir/src/entropyctl}"

# ENTROPYD_GUEST_CACHE: where kernel.sh keeps the kernel between runs.
if [ -z "${ENTROPYD_GUEST_CACHE:-}" ]; then
	ENTROPYD_GUEST_CACHE=/var/cache/entropyd-test/guest
	if ! mkdir -p "$ENTROPYD_GUEST_CACHE" 2>/dev/null || [ ! -w "$ENTROPYD_GUEST_CACHE" ]; then
		ENTROPYD_GUEST_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/entropyd-test/guest
	fi
fi
case $GUEST_KERNEL_ARCH in
arm64) QEMU=${ENTROPYD_GUEST_QEMU:-qemu-system-aarch64} ;;
armhf) QEMU=${ENTROPYD_GUEST_QEMU:-qemu-system-arm} ;;
*) QEMU=${ENTROPYD_GUEST_QEMU:-qemu-system-x86_64} ;;
esac

# missing WHAT: a prerequisite is missing: say so, exit 77.
missing() { echo "guest: cannot run: $*"; exit 77; }

# guest_prerequisites: qemu, python3, cpio, a C compiler, the static busybox, and $ENTROPYD.
guest_prerequisites() {
	command -v "$QEMU" > /dev/null || missing "no $QEMU (apt-get install qemu-system-x86 qemu-system-arm)"
	command -v python3 > /dev/null || missing "no python3 (apt-get install python3)"
	command -v cpio > /dev/null || missing "no cpio (apt-get install cpio)"
	command -v "${CC%% *}" > /dev/null || missing "no C compiler ${CC%% *}"
	[ -n "$GUEST_SYSROOT" ] || case $(LC_ALL=C ldd "$(command -v busybox || echo /bin/busybox)" 2>&1) in
	*"not a dynamic"*) ;;
	*) missing "no static busybox (apt-get install busybox-static)" ;;
	esac
	[ -x "$ENTROPYD" ] || missing "$ENTROPYD is not built"
}

# static_helper SOURCE OUT: a helper for the guest, linked statically (it needs nothing
# from the initramfs).
static_helper() {
	${CC:-cc} -static -O2 -Wall -Wextra -Werror -o "$2" "$1" ||
		{ echo "guest: cannot build $(basename "$1") statically (glibc's static libc: libc6-dev)"; exit 1; }
}
