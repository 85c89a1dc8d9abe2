#!/bin/bash
# sysroot.sh CACHE ARCH [SUITE]: print a directory holding Debian's packages for ARCH (arm64,
# armhf) that entropyd builds and runs against -- the C library and the -dev packages of its
# dependencies with all they depend on -- fetched into CACHE if needed: the root that a
# cross compiler builds against (--sysroot) and that a guest of that architecture runs from.
# SUITE: bookworm (the default) or trixie.
#
# The packages are fetched under a private apt state (tests/guest/aptlib.sh) and unpacked
# with "dpkg -x", never installed: the machine needs no foreign architecture. The list of
# what was unpacked is kept; a changed list, or lists a day old, unpack again.
set -euo pipefail

cache=$1
arch=$2
suite=${3:-bookworm}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../guest/aptlib.sh"
# What configure needs (contrib/dev.sh's BUILD_DEPS) and Check for the unit tests; for the
# unit tests in the guest (tests/guest/g_unit.sh), iproute2 (busybox's ip makes no veth pair,
# macvlan, ifb or bridge) and dash, Debian's /bin/sh (busybox's runs its own ip whatever
# PATH says).
PKGS="libc6-dev libevent-dev libconfig-dev libpcap-dev libsystemd-dev libjansson-dev
zlib1g-dev libcap-ng-dev libseccomp-dev check busybox-static iproute2 dash"

mkdir -p "$cache"
exec 8> "$cache/.lock-sysroot-$arch"
flock -w 600 8 || { echo "sysroot.sh: $cache is locked by another run" >&2; exit 1; }
apt_private "$cache/apt/$suite-$arch" "$suite" "$arch"
root=$cache/sysroot-$suite-$arch
# shellcheck disable=SC2086 # a word list
papt apt-get install -y -d --no-install-recommends $PKGS > "$A/download.log" 2>&1 || {
	tail -5 "$A/download.log" >&2; echo "sysroot.sh: cannot fetch the $arch packages" >&2; exit 1; }
# The newest of each package (the cache keeps those of earlier point releases).
ls "$A/cache/archives/"*.deb | sort -V |
	awk '{ n = $0; sub(/.*\//, "", n); sub(/_.*/, "", n); last[n] = $0 } END { for (n in last) print last[n] }' |
	sort > "$A/wanted"
if [ -f "$root/.debs" ] && cmp -s "$A/wanted" "$root/.debs"; then
	echo "$root"
	exit 0
fi
rm -rf "$root.new"
mkdir -p "$root.new"
while read -r deb; do
	dpkg -x "$deb" "$root.new"
done < "$A/wanted"
# Old packages of the cache are not wanted again.
find "$A/cache/archives" -name '*.deb' | sort | comm -23 - "$A/wanted" | xargs -r rm -f
# Links to absolute paths (libm.so -> /lib/TRIPLET/libm.so.6) point into the root instead
# of at this machine's files: the linker would otherwise find nothing there, or the wrong
# architecture's.
find "$root.new" -type l -lname '/*' | while read -r l; do
	ln -sfn "$root$(readlink "$l")" "$l"
done
cp "$A/wanted" "$root.new/.debs"
rm -rf "$root"
mv "$root.new" "$root"
echo "sysroot.sh: unpacked $(wc -l < "$A/wanted") $arch packages of $suite into $root" >&2
echo "$root"
