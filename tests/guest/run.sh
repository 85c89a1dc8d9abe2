#!/bin/bash
# run.sh: the guest tests. Boots Debian's own kernel under qemu (software emulation) with a
# virtio keyboard and mouse, runs the guest's tests (tests/guest/g_*.sh) against the entropyd
# that "make" built, injects input from here when the guest asks, and checks the results.
#
#   tests/guest/run.sh [TEST...]     (TEST: kernel, evdev, block, intrude; default: all of them)
#
# The guest boots with random.trust_cpu=off and random.trust_bootloader=off and no
# virtio-rng, so that its CRNG is not ready when the kernel test starts (it runs first).
#
# Environment: top_srcdir, top_builddir (default: this tree), ENTROPYD (the binary under
# test), ENTROPYD_GUEST_SUITE (the Debian release whose kernel boots: bullseye, bookworm --
# the default -- or trixie; see kernel.sh), ENTROPYD_GUEST_CACHE (where the kernel is kept between runs; default
# /var/cache/entropyd-test/guest, or ~/.cache/entropyd-test/guest if that is not writable),
# ENTROPYD_GUEST_TIMEOUT (hard limit for the qemu run, seconds; default 270),
# ENTROPYD_GUEST_QEMU (the qemu binary; default qemu-system-x86_64),
# ENTROPYD_GUEST_KEEP=1 (keep the work directory: console log, initramfs).
#
# Exit status: 0 all passed, 1 a test failed or the run broke, 77 a prerequisite is missing
# (the reason is printed; tests/guest/t_guest.sh decides whether that is a skip or a failure).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
: "${ENTROPYD_GUEST_TIMEOUT:=270}"
. "$here/hostlib.sh"
guest_prerequisites

T=$(mktemp -d "${TMPDIR:-/tmp}/entropyd-guest.XXXXXX")
cleanup() {
	# qemu_run.py kills qemu itself; this is for when it was killed first.
	if [ -f "$T/qemu.pid" ]; then
		kill -KILL "$(cat "$T/qemu.pid")" 2>/dev/null
	fi
	if [ "${ENTROPYD_GUEST_KEEP:-0}" = 1 ]; then
		echo "guest: work directory kept: $T"
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
# qemu_run.py kills qemu when it gets SIGTERM; it runs in the background so that a signal
# here is acted on at once, not when it has finished.
PYPID=
trap 'echo "guest: interrupted"; [ -n "$PYPID" ] && kill -TERM "$PYPID" 2>/dev/null; wait; exit 1' INT TERM HUP

t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }'; }

kdir=$(ENTROPYD_GUEST_ARCH=$GUEST_KERNEL_ARCH "$here/kernel.sh" "$ENTROPYD_GUEST_CACHE") ||
	missing "no guest kernel (see above)"
echo "guest: kernel $(basename "$kdir") from $ENTROPYD_GUEST_CACHE ($(elapsed))"

# The guest's helpers are static: they need nothing from the initramfs. intrude and
# intrusions.sh are the attempts from inside the collector (g_intrude.sh).
for helper in uinput_dev blk_io unix_listen; do
	static_helper "$here/$helper.c" "$T/$helper"
done
static_helper "$top_srcdir/tests/helpers/intrude.c" "$T/intrude"
bins=("$ENTROPYD" "$T/uinput_dev" "$T/blk_io" "$T/unix_listen" "$T/intrude")
[ -x "$ENTROPYCTL" ] && bins+=("$ENTROPYCTL")
INITRAMFS_FILES="$top_srcdir/tests/helpers/intrusions.sh /tests/intrusions.sh" \
	"$here/mkinitramfs.sh" "$T/test.cpio.gz" "$kdir" "$here" "${bins[@]}" ||
	{ echo "guest: cannot build the initramfs"; exit 1; }
echo "guest: initramfs $(du -k "$T/test.cpio.gz" | cut -f1) KiB ($(elapsed))"

tests=$(IFS=,; echo "$*")
rc=0
python3 "$here/qemu_run.py" --kernel "$kdir/vmlinuz" --initrd "$T/test.cpio.gz" --dir "$T" \
	--console "$T/console.log" --timeout "$ENTROPYD_GUEST_TIMEOUT" --qemu "$QEMU" \
	--arch "$GUEST_KERNEL_ARCH" \
	--append "quiet random.trust_cpu=off random.trust_bootloader=off${tests:+ guest_tests=$tests}" &
PYPID=$!
wait "$PYPID" || rc=1
PYPID=
echo "guest: qemu run done ($(elapsed))"

# The serial console ends its lines with CR LF.
: > "$T/console.txt"
[ -f "$T/console.log" ] && tr -d '\r' < "$T/console.log" > "$T/console.txt"
echo "----- guest console"
cat "$T/console.txt"
echo "----- end of guest console"
[ -s "$T/qemu.err" ] && { echo "----- qemu stderr"; cat "$T/qemu.err"; }

grep -E '^(PASS|FAIL|SKIP): ' "$T/console.txt" > "$T/results"
npass=$(grep -c '^PASS: ' "$T/results")
nfail=$(grep -c '^FAIL: ' "$T/results")
nskip=$(grep -c '^SKIP: ' "$T/results")
grep -q '^GUEST-RESULT: ' "$T/console.txt" || { echo "FAIL: guest: the guest did not finish its tests"; nfail=$((nfail + 1)); }
[ "$rc" -eq 0 ] || { echo "FAIL: guest: the qemu run failed (see above)"; nfail=$((nfail + 1)); }

# Not a keylogger: the codes of the keys pressed from here appear nowhere in what the evdev
# test put on the guest's console -- entropyd's logs, its summaries, its -p output, the
# control socket's status, everything the test printed (keys are pressed during that test
# only, and its daemons are gone at its end). Decimal as a number of its own (not part of a
# longer number or a decimal fraction), hex with or without 0x and leading zeros as a word of
# its own, and the keys' names. Process ids are left out: small numbers in the guest, they
# can equal a key code by chance.
sed -n '/^=== guest test evdev$/,/^=== end evdev /p' "$T/console.txt" |
	sed -E 's/(pid"?:? *)[0-9]+/\1<pid>/g' > "$T/evdev.log"
leaks=
for code in $(python3 "$here/qemu_run.py" --print-keys); do
	hex=$(printf '%x' "$code")
	pat="(^|[^0-9.])$code(\$|[^0-9.]|\\.(\$|[^0-9]))|(^|[^[:alnum:]_])(0x)?0*$hex(\$|[^[:alnum:]_])"
	hits=$(grep -inE "$pat" "$T/evdev.log")
	[ -n "$hits" ] && leaks="$leaks$hits"$'\n'
done
hits=$(grep -inE 'KEY_CALC|KEY_BOOKMARKS|calculator|bookmarks' "$T/evdev.log")
[ -n "$hits" ] && leaks="$leaks$hits"$'\n'
if ! grep -q '^=== guest test evdev' "$T/console.txt"; then
	: # the evdev test did not run
elif [ ! -s "$T/evdev.log" ]; then
	echo "FAIL: guest: cannot find the evdev test's output on the console"
	nfail=$((nfail + 1))
elif [ -n "$leaks" ]; then
	echo "FAIL: guest: the injected keys' codes or names appear in the evdev test's output:"
	printf '%s' "$leaks" | sed 's/^/  /'
	nfail=$((nfail + 1))
elif [ "$npass" -gt 0 ]; then
	echo "PASS: guest: no code or name of the injected keys in the evdev test's output ($(wc -l < "$T/evdev.log") lines)"
	npass=$((npass + 1))
fi

echo "----- guest results ($(elapsed))"
cat "$T/results"
echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ] && [ "$npass" -gt 0 ]
