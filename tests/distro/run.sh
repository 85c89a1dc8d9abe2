#!/bin/bash
# tests/distro/run.sh SUITE: "make check-distro SUITE=...": make check on another release of
# Debian than the host's (trixie on a Debian 12 host, bookworm on a Debian 13 one), in a tree
# made with debootstrap --variant=minbase from the mirror apt uses here, as its root.
# The tree is cached between runs in $ENTROPYD_TEST_CACHE/distro-SUITE (default
# /var/cache/entropyd-test; made again when a month old); contrib/dev.sh check runs in it:
# it installs the test dependencies from its own lists, builds a copy of this source tree
# (autoreconf with that release's autotools) and runs make check, then each fuzz harness
# briefly. The qemu guests (t_guest) and the containers of check-system do not run there:
# they say so, and run on the host's stage. Needs root and Debian's archive.
#
# The tree as a root: bound onto itself (ip netns, unshare -m and nspawn need / to be a mount
# point), proc, /sys and /dev bound recursively as slaves, a tmpfs on /run with the host's
# /run/lock in it (the block tests' lock is the host's: loop devices and perf are shared),
# the host's resolv.conf; then pivot_root into it. All of it in mount namespaces of its own,
# unmounted on exit whatever the outcome, and what the run left running killed. Environment:
#   DISTRO_BUILDDIR       a build directory of the tree (make check-distro gives its own): where
#                         the tree is no git checkout, its make distdir gives the sources
#   ENTROPYD_TEST_CACHE   where the tree is kept (default /var/cache/entropyd-test)
#   ENTROPYD_TEST_MIRROR  the Debian mirror (default: the first one apt uses here)
#   FUZZ_SECONDS          each fuzz harness's run in the tree (default 2)
set -euo pipefail

SUITE=${1:?usage: run.sh SUITE (e.g. trixie, bookworm)}
src=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${ENTROPYD_TEST_CACHE:-/var/cache/entropyd-test}
TREE=$CACHE/distro-$SUITE
WORK=/var/tmp/entropyd-distro
MAX_AGE_DAYS=30
T0=$(date +%s)
say() { printf 'distro: [%4ds] %s\n' "$(($(date +%s) - T0))" "$*"; }
die() { echo "distro: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, mounts, pivot_root)"
for tool in debootstrap unshare pivot_root flock mount; do
	command -v "$tool" > /dev/null || die "$tool not found (apt-get install debootstrap util-linux)"
done

if [ -z "${ENTROPYD_DISTRO_NS:-}" ]; then
	# One run a tree at a time; then the rest in a mount namespace of its own, whose mounts
	# go with it however the run ends.
	mkdir -p "$CACHE"
	exec 8> "$TREE.lock"
	flock -w 3600 8 || die "$TREE.lock held for an hour"
	ENTROPYD_DISTRO_NS=1 exec unshare --mount --propagation private -- "$0" "$@"
fi

# shellcheck source=tests/system/mirror.sh
. "$src/tests/system/mirror.sh"

# ---- the tree, cached ----
if [ -f "$TREE/.complete" ] && [ -n "$(find "$TREE/.complete" -mtime +"$MAX_AGE_DAYS")" ]; then
	say "$TREE is older than $MAX_AGE_DAYS days: making it again"
	rm -rf "$TREE"
fi
if [ ! -f "$TREE/.complete" ]; then
	# shellcheck disable=SC1091
	host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	mirror=${ENTROPYD_TEST_MIRROR:-$(find_mirror "$SUITE" || find_mirror "$host")} ||
		die "no Debian mirror in /etc/apt/sources.list(.d) (set ENTROPYD_TEST_MIRROR)"
	say "debootstrap --variant=minbase $SUITE from $mirror"
	rm -rf "$TREE.tmp"
	t=$(date +%s)
	timeout -k 10 1800 debootstrap --variant=minbase "$SUITE" "$TREE.tmp" "$mirror" \
		> "$CACHE/distro-$SUITE.log" 2>&1 ||
		{ tail -20 "$CACHE/distro-$SUITE.log" >&2; rm -rf "$TREE.tmp"; die "debootstrap failed"; }
	# No service starts in the tree when a package is installed.
	printf '#!/bin/sh\nexit 101\n' > "$TREE.tmp/usr/sbin/policy-rc.d"
	chmod 755 "$TREE.tmp/usr/sbin/policy-rc.d"
	touch "$TREE.tmp/.complete"
	mv "$TREE.tmp" "$TREE"
	say "debootstrap took $(($(date +%s) - t)) s"
else
	say "cached tree $TREE"
fi

# ---- the tree as a root, unmounted on exit ----
# Every process in this mount namespace but this shell, or in the run's own (below), is the
# run's: a test's daemon left behind would keep the mounts busy.
NS=$(readlink /proc/$$/ns/mnt)
RUN_NS=$NS
cleanup() {
	local rc=$? p ns left=
	trap - EXIT
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		ns=$(readlink "/proc/$p/ns/mnt" 2> /dev/null) || continue
		[ "$p" != $$ ] && { [ "$ns" = "$NS" ] || [ "$ns" = "$RUN_NS" ]; } && left="$left $p"
	done
	if [ -n "$left" ]; then
		echo "distro: killing what the run left in the tree:$left" >&2
		# shellcheck disable=SC2086 # a list of pids
		kill -KILL $left 2> /dev/null
	fi
	if mountpoint -q "$TREE"; then
		umount -R "$TREE" 2> /dev/null || umount -R -l "$TREE" || echo "distro: cannot unmount $TREE" >&2
	fi
	rm -rf "${TREE:?}$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

mount --bind "$TREE" "$TREE"
mount --make-private "$TREE"
mount -t proc proc "$TREE/proc"
mount --rbind /sys "$TREE/sys"
mount --make-rslave "$TREE/sys"
mount --rbind /dev "$TREE/dev"
mount --make-rslave "$TREE/dev"
mount -t tmpfs -o mode=755 tmpfs "$TREE/run"
mkdir -p "$TREE/run/lock"
mount --bind /run/lock "$TREE/run/lock"
cp -L /etc/resolv.conf "$TREE/etc/resolv.conf"

# ---- a copy of the sources, never what a build made: what git tracks and would track; in
# another tree (a release's, perhaps built in place) what make distdir puts in a release ----
rm -rf "${TREE:?}$WORK"
mkdir -p "$TREE$WORK/src"
if git -C "$src" rev-parse --show-toplevel > /dev/null 2>&1; then
	git -C "$src" ls-files -z --cached --others --exclude-standard |
		(cd "$src" && tar --null -T - --ignore-failed-read -cf - 2> /dev/null) | tar -C "$TREE$WORK/src" -xf -
elif [ -f "${DISTRO_BUILDDIR:-}/Makefile" ]; then
	${MAKE:-make} -s -C "$DISTRO_BUILDDIR" distdir distdir="$TREE$WORK/src" > /dev/null ||
		die "make distdir in $DISTRO_BUILDDIR failed"
else
	die "$src is not a git checkout: run this as make check-distro, which copies what make dist would"
fi
# Generated files from the host's autotools would not be made again: the tree's make them.
rm -f "$TREE$WORK/src/configure" "$TREE$WORK/src/config.status"
say "source copied; contrib/dev.sh check in the $SUITE tree"

# The run: in a mount namespace of its own whose root is the tree (pivot_root, more than a
# chroot): a path the kernel gives back (a loop device's backing file, read by a daemon that
# unshared its mounts again) is then one the process can open. Without the tree's lock.
rc=0
unshare --mount --propagation private -- /bin/sh -c '
	cd "$1" && mkdir -p .oldroot && pivot_root . .oldroot || exit 1
	umount -l /.oldroot && rmdir /.oldroot || exit 1
	shift
	cd / && exec "$@"' sh "$TREE" \
	/usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root LANG=C.UTF-8 TERM=dumb CI="${CI:-}" FUZZ_SECONDS="${FUZZ_SECONDS:-2}" \
	BUILD_DIR="$WORK/build" \
	/bin/bash -c "cd $WORK/src && exec contrib/dev.sh check" 8>&- &
run=$!
for _ in $(seq 50); do
	RUN_NS=$(readlink "/proc/$run/ns/mnt" 2> /dev/null) || break
	[ "$RUN_NS" = "$NS" ] || break
	sleep 0.1
done
wait "$run" || rc=$?
# What the run left, for reading after it: in distro-SUITE/ of the directory it ran from.
out=$PWD/distro-$SUITE
rm -rf "$out"
mkdir -p "$out"
b=$TREE$WORK/build
cp "$b"/make-check.out "$b"/fuzz.out "$b"/test-suite.log "$b"/config.log "$out/" 2> /dev/null || true
for d in unit integration; do
	mkdir -p "$out/tests/$d"
	cp "$b/tests/$d"/*.log "$out/tests/$d/" 2> /dev/null || true
done
cp -r "$b"/tests/fuzz/crashes "$out/fuzz-crashes" 2> /dev/null || true
# shellcheck disable=SC1091
say "$(. "$TREE/etc/os-release" && echo "$PRETTY_NAME"): contrib/dev.sh check exited $rc; its logs are in $out"
exit "$rc"
