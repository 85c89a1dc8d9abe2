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
# The ways alternate (odd runs without first, even runs with first), so that drift of a
# shared machine falls on both. Each boot waits BOOT_WAIT seconds (60) for the CRNG.
# Prints every boot, then per workload the median seconds from init to "crng init done"
# each way, the median from entropyd's start to it, and the bits entropyd credited before
# it, with the kernel's version and command line. A boot that was not ready in time counts
# as later than any that was.
#
# Kernel command line: random.trust_cpu=off random.trust_bootloader=off (neither the CPU's
# RNG nor a boot loader's seed is credited) and no virtio-rng device.
#
# Environment: BOOT_RUNS, BOOT_WAIT, BOOT_WORKLOADS (a list), top_srcdir, top_builddir,
# ENTROPYD, ENTROPYCTL, ENTROPYD_GUEST_SUITE (the Debian release whose kernel boots:
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
files="$T/config-hz /boot/config-${version#linux-image-}
$top_srcdir/contrib/initramfs-tools/scripts/init-premount/entropyd /scripts/init-premount/entropyd
$top_srcdir/contrib/initramfs-tools/scripts/init-bottom/entropyd /scripts/init-bottom/entropyd
$top_srcdir/conf/entropyd.conf /etc/entropyd.conf"
INITRAMFS_INIT=$here/boot_init INITRAMFS_FILES=$files \
	"$guest/mkinitramfs.sh" "$T/boot.cpio.gz" "$kdir" "$guest" "$ENTROPYD" "$ENTROPYCTL" \
	"$T/boot_guest" || { echo "bench-boot: cannot build the initramfs"; exit 1; }
# The disk: 256 MiB written once, so that every read reaches the file.
dd if=/dev/zero of="$T/disk.img" bs=1M count=256 status=none || exit 1

# boot WORKLOAD WITH RUN: one boot; its result line goes to $T/results.
boot() {
	local con=$T/console-$1-$2-$3 input=--no-virtio-input
	[ "$1" = typing-virtio ] && input=
	mkdir -p "$T/q"
	python3 "$guest/qemu_run.py" --kernel "$kdir/vmlinuz" --initrd "$T/boot.cpio.gz" \
		--dir "$T/q" --console "$con.log" --timeout $((WAIT + 150)) --qemu "$QEMU" \
		--arch "$GUEST_KERNEL_ARCH" \
		--disk "$T/disk.img" $input \
		--append "quiet $RANDOM_ARGS bench_workload=$1 bench_entropyd=$2 bench_wait=$WAIT" \
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
		if [ $((run % 2)) -eq 1 ]; then ways="0 1"; else ways="1 0"; fi
		for with in $ways; do
			boot "$w" "$with" "$run"
		done
	done
done
echo
python3 "$here/boot_report.py" table "$T/results" "$WAIT"
