#!/bin/bash
# t_guest: the tests that need a real kernel with real devices -- evdev on virtio and uinput
# input devices, the blktrace relay path on a loop device -- in a qemu guest booted from
# Debian's own kernel (tests/guest/run.sh does the work; see tests/guest/README).
#
# Runs when qemu and the rest are usable, and says why it skips when they are not. Where the
# guest tests must run -- in CI (CI=true), under "make check-guest", or with
# ENTROPYD_GUEST=require -- a missing prerequisite fails instead of skipping.
# ENTROPYD_GUEST=skip skips them.
#
# ENTROPYD_GUEST_SUITE: the Debian release whose kernel the guest boots (bullseye, bookworm
# -- the default -- or trixie); every guest test runs on it. ENTROPYD_GUEST_ALSO: more
# releases, on whose kernels only the short test of the kernel's semantics runs (CI: the
# older and the newer release beside the default).
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
export top_builddir top_srcdir

mode=${ENTROPYD_GUEST:-} why="ENTROPYD_GUEST=${ENTROPYD_GUEST:-}"
if [ -z "$mode" ]; then
	if [ "${CI:-}" = true ]; then mode=require why="CI=true"; else mode=auto; fi
fi
# A sanitizer build is not taken into the guest: the guest tests' time limits are set for
# the plain daemon under qemu's software emulation, several times faster than an ASan one.
# The plain build's run of them (contrib/dev.sh test's first stage) covers the same paths.
if [ -n "${ENTROPYD_SANITIZERS:-}" ]; then
	echo "SKIP: guest tests: a sanitizer build (their time limits are the plain build's under emulation; the plain stage runs them)"
	exit 77
fi
if [ "$mode" = skip ]; then
	echo "SKIP: guest tests: ENTROPYD_GUEST=skip"
	exit 77
fi
# guest_run [TEST...]: run.sh, once more if the guest's kernel itself crashed (an Oops or a
# panic on its console: seen once under qemu's emulation, an int3 left in a tracepoint's code
# being patched on the other CPU, while a run beside it passed 3 times of 3). The crash is
# printed, and a second crash is a failure: a kernel that entropyd makes crash every time
# fails the suite.
guest_run() {
	local out r crash
	out=$(mktemp) || return 1
	"$top_srcdir/tests/guest/run.sh" "$@" | tee "$out"
	r=${PIPESTATUS[0]}
	crash=$(grep -m1 -E '^\[ *[0-9]+\.[0-9]+\] (Oops|Kernel panic|BUG:)' "$out")
	rm -f "$out"
	if [ "$r" -eq 1 ] && [ -n "$crash" ]; then
		echo "guest: the guest's kernel crashed ($crash): running the guest once more"
		"$top_srcdir/tests/guest/run.sh" "$@"
		r=$?
	fi
	return "$r"
}
guest_run
rc=$?
for suite in ${ENTROPYD_GUEST_ALSO:-}; do
	[ "$rc" -eq 77 ] && break
	echo "===== guest: the kernel test on $suite's kernel"
	ENTROPYD_GUEST_SUITE=$suite guest_run kernel
	r=$?
	# One that cannot run where the default one could (no kernel for it): a failure too
	# where the guest tests are required.
	[ "$r" -eq 77 ] && [ "$mode" != require ] && continue
	[ "$r" -eq 0 ] || rc=1
done
# On arm64 and armhf, Check's unit programs too, a boot of their own (g_unit.sh): those that
# need the kernel on the guest's, the ones that only compute under qemu-user beside it. On
# amd64 "make check" runs them on the machine's own kernel.
case ${ENTROPYD_GUEST_ARCH:-amd64} in
arm64 | armhf)
	if [ "$rc" -ne 77 ]; then
		echo "===== guest: the unit programs (${ENTROPYD_GUEST_ARCH})"
		ENTROPYD_GUEST_TIMEOUT=${ENTROPYD_GUEST_UNIT_TIMEOUT:-480} guest_run unit
		r=$?
		[ "$r" -eq 77 ] && [ "$mode" != require ] && r=0
		[ "$r" -eq 0 ] || rc=1
	fi
	;;
esac
if [ "$rc" -eq 77 ]; then
	if [ "$mode" = require ]; then
		echo "FAIL: guest tests required ($why) but cannot run (see above)"
		exit 1
	fi
	echo "SKIP: guest tests: a prerequisite is missing (see above); contrib/dev.sh test installs them"
	exit 77
fi
exit "$rc"
