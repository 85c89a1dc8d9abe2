#!/bin/bash
# build.sh ARCH BUILDDIR [MAKE-TARGETS...]: configure and build entropyd for ARCH (arm64,
# armhf) in BUILDDIR with Debian's cross compiler (gcc-aarch64-linux-gnu,
# gcc-arm-linux-gnueabihf) against a root of that architecture's packages (sysroot.sh),
# warnings as errors. Prints the root's path last.
#
# Environment: ENTROPYD_CROSS_CACHE (where the roots are kept; default
# /var/cache/entropyd-test/cross, or ~/.cache/entropyd-test/cross if not writable),
# ENTROPYD_CROSS_SUITE (bookworm, the default, or trixie).
# Exit status: 0 built, 1 it failed, 77 no cross compiler for ARCH.
set -euo pipefail

arch=${1:?usage: build.sh ARCH BUILDDIR [TARGETS...]}
out=${2:?usage: build.sh ARCH BUILDDIR [TARGETS...]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=$(cd "$here/../.." && pwd)
case $arch in
arm64) triplet=aarch64-linux-gnu ;;
armhf) triplet=arm-linux-gnueabihf ;;
amd64) triplet=x86_64-linux-gnu ;;
*) echo "build.sh: unknown architecture $arch (arm64, armhf)" >&2; exit 1 ;;
esac
command -v "$triplet-gcc" > /dev/null ||
	{ echo "build.sh: no $triplet-gcc (apt-get install gcc-$triplet)"; exit 77; }
if [ -z "${ENTROPYD_CROSS_CACHE:-}" ]; then
	ENTROPYD_CROSS_CACHE=/var/cache/entropyd-test/cross
	if ! mkdir -p "$ENTROPYD_CROSS_CACHE" 2>/dev/null || [ ! -w "$ENTROPYD_CROSS_CACHE" ]; then
		ENTROPYD_CROSS_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/entropyd-test/cross
	fi
fi
root=$("$here/sysroot.sh" "$ENTROPYD_CROSS_CACHE" "$arch" "${ENTROPYD_CROSS_SUITE:-bookworm}")

[ -x "$top_srcdir/configure" ] || (cd "$top_srcdir" && autoreconf -fi)
mkdir -p "$out"
cd "$out"
if [ ! -f Makefile ] || [ "$(cat cross-root.stamp 2>/dev/null)" != "$root" ]; then
	rm -f Makefile
	PKG_CONFIG_LIBDIR="$root/usr/lib/$triplet/pkgconfig:$root/usr/share/pkgconfig" \
	PKG_CONFIG_SYSROOT_DIR="$root" \
		"$top_srcdir/configure" -q --host="$triplet" CC="$triplet-gcc --sysroot=$root" \
		CFLAGS="-O2 -Werror" > configure.log 2>&1 ||
		{ cat configure.log; echo "build.sh: configure for $arch failed" >&2; exit 1; }
	echo "$root" > cross-root.stamp
fi
PKG_CONFIG_LIBDIR="$root/usr/lib/$triplet/pkgconfig:$root/usr/share/pkgconfig" \
PKG_CONFIG_SYSROOT_DIR="$root" make -j"$(nproc)" --no-print-directory "$@" >&2
echo "$root"
