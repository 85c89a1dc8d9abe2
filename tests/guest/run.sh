#!/bin/bash
# run.sh: the guest tests. Boots Debian's own kernel under qemu (software emulation) with a
# virtio keyboard and mouse, runs the guest's tests (tests/guest/g_*.sh) against the entropyd
# that "make" built, injects input from here when the guest asks, and checks the results.
#
#   tests/guest/run.sh [TEST...]     (TEST: kernel, evdev, block, intrude; default: all of them;
#                                     unit, the unit programs, for arm64 and armhf, only when named)
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
# ENTROPYD_GUEST_KEEP=1 (keep the work directory: console log, initramfs),
# ENTROPYD_GUEST_UNIT (the unit test: only these programs, e.g. "check_input check_priv").
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
UPID=
trap 'echo "guest: interrupted"; [ -n "$PYPID" ] && kill -TERM "$PYPID" 2>/dev/null; [ -n "$UPID" ] && kill -TERM "$UPID" 2>/dev/null; wait; exit 1' INT TERM HUP

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
files="$top_srcdir/tests/helpers/intrusions.sh /tests/intrusions.sh"
# The unit test (g_unit.sh): Check's programs, built for the guest's architecture beside
# entropyd, in /bin; iproute2's ip (busybox's makes no veth pair or macvlan) and dash; the kernel's
# configuration in /boot; and the files the programs read, at the source tree's path their
# build compiled in (SRCDIR). The programs that only compute run here under qemu-user
# instead, beside the guest (UNIT_USER): the guest's emulation runs them 2 to 3 times
# slower (check_est_online 272 s there, 92 s under qemu-user, armhf).
UNIT_USER=(check_est_online check_net_flow check_est_90b_bits check_est_90b_noniid
	check_feed_pipeline check_est_90b_tuple check_est_90b_predict check_est_90b check_est_health
	check_block_blktrace_parse)
unit_user=()
case " $* " in
*" unit "*)
	[ -n "$GUEST_SYSROOT" ] ||
		{ echo "guest: the unit test is for arm64 and armhf; make check runs the unit programs on this machine's own kernel"; exit 1; }
	case $GUEST_ARCH in
	arm64) qemu_user=qemu-aarch64-static ;;
	*) qemu_user=qemu-arm-static ;;
	esac
	command -v "$qemu_user" > /dev/null || missing "no $qemu_user (apt-get install qemu-user-static)"
	xb=$top_builddir/cross-$GUEST_ARCH
	"$top_srcdir/tests/cross/build.sh" "$GUEST_ARCH" "$xb" check TESTS= SH_TESTS= > /dev/null ||
		{ echo "guest: cannot build the unit programs for $GUEST_ARCH (see above)"; exit 1; }
	nunit=0
	for p in "$xb"/tests/unit/check_*; do
		case $p in *.o | *.log | *.trs) continue ;; esac
		[ -x "$p" ] || continue
		# ENTROPYD_GUEST_UNIT: these programs only (names, "check_input check_priv").
		[ -z "${ENTROPYD_GUEST_UNIT:-}" ] || case " $ENTROPYD_GUEST_UNIT " in
			*" ${p##*/} "*) ;;
			*) continue ;;
			esac
		nunit=$((nunit + 1))
		if printf '%s\n' "${UNIT_USER[@]}" | grep -qx "${p##*/}"; then
			unit_user+=("$p")
		else
			bins+=("$p")
		fi
	done
	bins+=("$GUEST_SYSROOT/bin/ip=/usr/local/sbin/ip" "$GUEST_SYSROOT/bin/dash=/usr/local/bin/dash")
	src=$(sed -n 's/^abs_top_srcdir = //p' "$xb/Makefile")
	for f in tests/data conf/entropyd.conf man/entropyd.conf.5.in tests/helpers/prom_check.awk \
		tests/fuzz/corpus/priv; do
		files="$files"$'\n'"$top_srcdir/$f $src/$f"
	done
	files="$files"$'\n'"$kdir/config /boot/config-${kdir##*/linux-image-}"
	echo "guest: $nunit unit programs for $GUEST_ARCH, ${#unit_user[@]} of them under $qemu_user ($(elapsed))"
	;;
esac
INITRAMFS_FILES=$files "$here/mkinitramfs.sh" "$T/test.cpio.gz" "$kdir" "$here" "${bins[@]}" ||
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
# The unit programs that only compute, under qemu-user once the guest is done, bounded as the
# guest is. Run beside it, they took the host's cores from its virtual CPUs long enough for
# the perf events' times of one to stand still, and check_block_tp took that CPU for gone.
UPID=
if [ ${#unit_user[@]} -gt 0 ]; then
	mkdir -p "$T/unit-user"
	RESULTS=$T/unit-user/results LOG=$T/unit-user/none GLIB=$here/glib.sh \
		UNIT_SELF=$here/g_unit.sh OUT=$T/unit-user UNIT_PROGS="${unit_user[*]}" \
		UNIT_RUN="$qemu_user -L $GUEST_SYSROOT" \
		timeout -s KILL "$ENTROPYD_GUEST_TIMEOUT" sh "$here/g_unit.sh" > "$T/unit-user.log" 2>&1 &
	UPID=$!
fi
if [ -n "$UPID" ]; then
	wait "$UPID"
	echo "guest: the unit programs under $qemu_user done, status $? ($(elapsed))"
fi

# The serial console ends its lines with CR LF.
: > "$T/console.txt"
[ -f "$T/console.log" ] && tr -d '\r' < "$T/console.log" > "$T/console.txt"
echo "----- guest console"
cat "$T/console.txt"
echo "----- end of guest console"
[ -s "$T/qemu.err" ] && { echo "----- qemu stderr"; cat "$T/qemu.err"; }
if [ -n "$UPID" ]; then
	echo "----- unit programs under $qemu_user"
	cat "$T/unit-user.log"
	echo "----- end of unit programs under $qemu_user"
fi

grep -E '^(PASS|FAIL|SKIP): ' "$T/console.txt" > "$T/results"
if [ -n "$UPID" ]; then
	n=$(grep -c . "$T/unit-user/results" 2> /dev/null)
	[ "${n:-0}" -eq ${#unit_user[@]} ] ||
		echo "FAIL: unit: the programs under $qemu_user gave ${n:-no} results of ${#unit_user[@]}" >> "$T/results"
	cat "$T/unit-user/results" >> "$T/results" 2> /dev/null
fi
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
