#!/bin/bash
# bench/boot.sh (make bench-boot): what entropyd does for the kernel's readiness at boot.
# Boots a qemu guest (Debian's own kernel, TCG, as tests/guest does) BOOT_RUNS times (3)
# each way -- without entropyd, and with it started as contrib/initramfs-tools'
# init-premount script starts it, with the shipped configuration -- under each workload:
#   idle       nothing
#   disk       random 4 KiB O_DIRECT reads of the virtio disk from init until ready
#   typing     10 key presses a second on the PC's AT keyboard, through QMP
#   getrandom  a program blocked in getrandom() from init
# and, when named in BOOT_WORKLOADS, typing-virtio: the same typing on a virtio keyboard
# (which entropyd's default configuration leaves out, as a virtual device).
# With BOOT_BASELINE=DIR (the build directory of another tree, configured from its own
# source, e.g. an older commit's), each run boots a third way: with that tree's entropyd,
# its initramfs scripts and its configuration, and the table compares the two.
# The ways alternate (each run starts one way later than the one before), so that drift of
# a shared machine falls on all of them. Each boot waits BOOT_WAIT seconds (60) for the CRNG.
# Prints every boot, then per workload the median seconds from init to "crng init done"
# each way, the median from entropyd's start to it, and the bits entropyd credited before
# it, with the kernel's version and command line. A boot that was not ready in time counts
# as later than any that was.
#
# Kernel command line: random.trust_cpu=off random.trust_bootloader=off (neither the CPU's
# RNG nor a boot loader's seed is credited) and no virtio-rng device.
#
# Environment: BOOT_RUNS, BOOT_WAIT, BOOT_WORKLOADS (a list), top_srcdir, top_builddir,
# ENTROPYD, ENTROPYCTL, BOOT_BASELINE, ENTROPYD_GUEST_SUITE (the Debian release whose kernel boots:
# bullseye, bookworm or trixie; make bench-boot GUEST_SUITE=...), ENTROPYD_GUEST_ARCH and
# ENTROPYD_GUEST_KERNEL_ARCH (arm64, armhf: make bench-boot GUEST_ARCH=..., as for the guest
# tests; -M virt has no PC keyboard, so there the workloads are idle, disk and getrandom,
# and typing-virtio on request), ENTROPYD_GUEST_CACHE and
# ENTROPYD_GUEST_QEMU (as for the guest tests), BOOT_KEEP=1 (keep the work directory: every
# console log).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/guest/hostlib.sh"
RUNS=${BOOT_RUNS:-3}
WAIT=${BOOT_WAIT:-60}
if [ "$GUEST_KERNEL_ARCH" = amd64 ]; then
	WORKLOADS=${BOOT_WORKLOADS:-idle disk typing getrandom}
else
	WORKLOADS=${BOOT_WORKLOADS:-idle disk getrandom}
	case " $WORKLOADS " in
	*" typing "*) echo "bench-boot: no typing on $GUEST_KERNEL_ARCH (-M virt has no PC keyboard; typing-virtio types on a virtio one)" >&2; exit 2 ;;
	esac
fi
RANDOM_ARGS="random.trust_cpu=off random.trust_bootloader=off"
guest=$top_srcdir/tests/guest
guest_prerequisites
[ -x "$ENTROPYCTL" ] || missing "$ENTROPYCTL is not built"
case $RUNS in '' | *[!0-9]* | 0) echo "bench-boot: BOOT_RUNS=$RUNS: give a count" >&2; exit 2 ;; esac
case $WAIT in '' | *[!0-9]* | 0) echo "bench-boot: BOOT_WAIT=$WAIT: give seconds" >&2; exit 2 ;; esac

T=$(mktemp -d "${TMPDIR:-/tmp}/entropyd-bench-boot.XXXXXX")
PYPID=
cleanup() {
	[ -n "$PYPID" ] && kill -TERM "$PYPID" 2>/dev/null
	if [ "${BOOT_KEEP:-0}" = 1 ]; then echo "bench-boot: work directory kept: $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'echo "bench-boot: interrupted"; exit 1' INT TERM HUP

kdir=$(ENTROPYD_GUEST_ARCH=$GUEST_KERNEL_ARCH "$guest/kernel.sh" "$ENTROPYD_GUEST_CACHE") ||
	missing "no guest kernel (see above)"
static_helper "$here/boot_guest.c" "$T/boot_guest"
# As the shipped hook does: the kernel's CONFIG_HZ line, for the sub-jiffy rule.
grep '^CONFIG_HZ=' "$kdir/config" > "$T/config-hz" || { echo "bench-boot: $kdir/config has no CONFIG_HZ"; exit 1; }
version=$(basename "$kdir")
# initramfs OUT SRCDIR ENTROPYD ENTROPYCTL: the guest's initramfs with that tree's entropyd,
# its scripts and its configuration. The configuration goes in with mode 0644, as the
# package installs it, whatever the checkout's umask gave it: entropyd refuses a
# configuration that others than root can write, and would not start at all.
initramfs() {
	local conf=$T/entropyd.conf.$(basename "$1")
	install -m 644 "$2/conf/entropyd.conf" "$conf" || return 1
	INITRAMFS_INIT=$here/boot_init INITRAMFS_FILES="$T/config-hz /boot/config-${version#linux-image-}
$2/contrib/initramfs-tools/scripts/init-premount/entropyd /scripts/init-premount/entropyd
$2/contrib/initramfs-tools/scripts/init-bottom/entropyd /scripts/init-bottom/entropyd
$conf /etc/entropyd.conf" "$guest/mkinitramfs.sh" "$1" "$kdir" "$guest" "$3" "$4" "$T/boot_guest"
}
initramfs "$T/boot.cpio.gz" "$top_srcdir" "$ENTROPYD" "$ENTROPYCTL" ||
	{ echo "bench-boot: cannot build the initramfs"; exit 1; }
WAYS="0 1"
if [ -n "${BOOT_BASELINE:-}" ]; then
	base_src=$(sed -n "s/^abs_top_srcdir = //p" "$BOOT_BASELINE/Makefile" 2>/dev/null)
	if [ -z "$base_src" ] || [ ! -x "$BOOT_BASELINE/src/entropyd" ] || [ ! -x "$BOOT_BASELINE/src/entropyctl" ]; then
		echo "bench-boot: BOOT_BASELINE=$BOOT_BASELINE: not a configured build directory with src/entropyd and src/entropyctl built" >&2
		exit 2
	fi
	initramfs "$T/base.cpio.gz" "$base_src" "$BOOT_BASELINE/src/entropyd" "$BOOT_BASELINE/src/entropyctl" ||
		{ echo "bench-boot: cannot build the baseline's initramfs"; exit 1; }
	WAYS="0 1 base"
	echo "bench-boot: baseline: $base_src ($(git -C "$base_src" describe --always --dirty 2>/dev/null || echo "not a git tree"))"
fi
# The disk: 256 MiB written once, so that every read reaches the file.
dd if=/dev/zero of="$T/disk.img" bs=1M count=256 status=none || exit 1

# boot WORKLOAD WAY RUN: one boot (WAY: 0 without entropyd, 1 with this tree's, base with the
# baseline's); its result line goes to $T/results.
boot() {
	local con=$T/console-$1-$2-$3 input=--no-virtio-input initrd=$T/boot.cpio.gz with=$2
	[ "$1" = typing-virtio ] && input=
	[ "$2" = base ] && initrd=$T/base.cpio.gz with=1
	mkdir -p "$T/q"
	python3 "$guest/qemu_run.py" --kernel "$kdir/vmlinuz" --initrd "$initrd" \
		--dir "$T/q" --console "$con.log" --timeout $((WAIT + 150)) --qemu "$QEMU" \
		--arch "$GUEST_KERNEL_ARCH" \
		--disk "$T/disk.img" $input \
		--append "quiet $RANDOM_ARGS bench_workload=$1 bench_entropyd=$with bench_wait=$WAIT" \
		> "$con.host" 2>&1 &
	PYPID=$!
	wait "$PYPID" || echo "bench-boot: $1 (entropyd $2, run $3): the qemu run failed: $(tail -1 "$con.host")"
	PYPID=
	tr -d '\r' < "$con.log" > "$con.txt" 2>/dev/null
	python3 "$here/boot_report.py" parse "$con.txt" "$1" "$2" "$3" | tee -a "$T/results"
}

echo "bench-boot: kernel $(basename "$kdir"), $RUNS runs each way, up to $WAIT s each, workloads: $WORKLOADS"
for run in $(seq "$RUNS"); do
	for w in $WORKLOADS; do
		# Rotated by one each run: 0 1, 1 0, ... (0 1 base, 1 base 0, base 0 1, ...).
		set -- $WAYS
		for _ in $(seq $(((run - 1) % $#))); do set -- "${@:2}" "$1"; done
		for way in "$@"; do
			boot "$w" "$way" "$run"
		done
	done
done
echo
python3 "$here/boot_report.py" table "$T/results" "$WAIT"
