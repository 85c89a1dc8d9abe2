#!/bin/bash
# dev.sh: set up a Debian 12 machine (as root) for entropyd, build it, and run it or its tests.
#   contrib/dev.sh run    install build dependencies, build, run entropyd in the foreground
#                         with the shipped conf/entropyd.conf against the real kernel
#   contrib/dev.sh test   install build and test dependencies, build, run the whole test suite:
#                         the plain build's (in build/), the same under ASan and UBSan (in
#                         build-san/, configure --enable-sanitizers), then every fuzz harness
#                         for FUZZ_SECONDS (default 30) each; what CI runs (.ci/run)
#   contrib/dev.sh deb    install build and packaging dependencies, build the Debian package
#                         (make deb: build/deb/entropyd_VERSION_ARCH.deb)
# Builds are made outside the source tree, so that the plain and the sanitizer build can live
# side by side (a tree configured in place must be "make distclean"ed first).
set -euo pipefail

cd "$(dirname "$0")/.."

BUILD_DEPS="build-essential autoconf automake pkg-config libevent-dev libconfig-dev
	libpcap-dev libsystemd-dev libjansson-dev zlib1g-dev libcap-ng-dev libseccomp-dev"
# The Debian package (contrib/debian, make deb): debhelper (with dh-autoreconf and the
# sysusers sequence), and check for the unit tests its build runs.
DEB_DEPS="debhelper dpkg-dev check"
TEST_DEPS="check strace util-linux mandoc jq gdb"
# The fuzz harnesses (make fuzz): clang's libFuzzer, ASan and UBSan.
TEST_DEPS="$TEST_DEPS clang"
# The packet source: network namespaces (tests/t_pcap.sh), and tcpdump to compare its cost
# with (bench/pcap.sh).
TEST_DEPS="$TEST_DEPS iproute2 tcpdump"
# The block source's stacked disks (tests/t_block.sh): a device-mapper device on a loop device.
TEST_DEPS="$TEST_DEPS dmsetup"
# The control-socket test (tests/t_ctl.sh): python3 for an independent Varlink client,
# prometheus_client's parser for the metrics, valgrind for the daemon's memory.
TEST_DEPS="$TEST_DEPS python3 python3-prometheus-client valgrind"
# The guest tests (tests/guest/): qemu's software emulation, a static busybox for the guest,
# cpio for its initramfs, python3 for the QMP input injector.
TEST_DEPS="$TEST_DEPS qemu-system-x86 busybox-static cpio python3"
# The systemd unit and contrib/ (tests/t_unit.sh, tests/t_contrib.sh) and the system test
# (tests/system/: a real systemd booted in a container from a debootstrap'ed tree).
TEST_DEPS="$TEST_DEPS systemd-container debootstrap bash-completion shellcheck"
# The package's system test (tests/system/t_deb.sh): it builds it, and lintian checks it.
TEST_DEPS="$TEST_DEPS $DEB_DEPS lintian"

install_deps() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "dev.sh: run as root to install packages (apt-get)" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086 # the lists are word lists
	apt-get install -y -qq --no-install-recommends $BUILD_DEPS "$@" > /dev/null
	# The collector's system user, as the package makes it (sysusers.d): the suites check
	# that the collector runs as it.
	getent passwd entropyd > /dev/null ||
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin entropyd
}

# build DIR [CONFIGURE-ARGS]: configure (once) and build in DIR, which is left current.
build() {
	local dir=$1
	shift
	[ -x configure ] || autoreconf -fi
	if [ -f config.status ]; then
		echo "dev.sh: the source tree is configured in place: run \"make distclean\" first" >&2
		exit 1
	fi
	mkdir -p "$dir"
	cd "$dir"
	[ -f Makefile ] || ../configure -q "$@"
	make -j"$(nproc)" --no-print-directory
}

# A stage's time, said when it ends.
stage_start() { stage_t0=$(date +%s); echo "=== $1"; }
stage_end() { echo "=== $1: $(($(date +%s) - stage_t0)) s"; }

# Check writes its own summary only to tests/*.log under automake's driver: show it, then
# the suite's total, and end on one line that adds up every Check run.
show_results() {
	local checks=0 failures=0 errors=0 line
	for log in tests/check_*.log; do
		[ -f "$log" ] || continue
		line=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" | tail -1)
		echo "${log%.log}: ${line:-no Check summary}"
		set -- $(echo "$line" | grep -oE '[0-9]+' | tail -3)
		checks=$((checks + ${1:-0})); failures=$((failures + ${2:-0})); errors=$((errors + ${3:-0}))
	done
	for log in tests/t_*.log; do
		[ -f "$log" ] && grep -E '^(PASS|FAIL|SKIP):' "$log" | sed "s|^|${log%.log}: |"
	done
	for suite in test-suite.log test-suite-guest.log; do
		[ -f "$suite" ] && grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$suite"
	done
	local pct=100
	[ "$checks" -gt 0 ] && pct=$(( (checks - failures - errors) * 100 / checks ))
	echo "${pct}%: Checks: $checks, Failures: $failures, Errors: $errors"
}

case "${1:-}" in
run)
	install_deps
	build build
	exec src/entropyd --foreground -f ../conf/entropyd.conf
	;;
test)
	# shellcheck disable=SC2086
	install_deps $TEST_DEPS
	top=$PWD
	stage_start "plain build: make check, make check-system"
	build build
	rc=0
	# The emulated guest keeps a core busy for minutes: it runs after the rest, alone, so
	# that the host's block tracepoint suites (which count every completion a starved reader
	# loses to a full perf ring) never run beside it.
	host_tests=$(make -s --no-print-directory print-tests | tr ' ' '\n' | grep -vx 'tests/t_guest.sh' | tr '\n' ' ')
	make -j"$(nproc)" --no-print-directory check TESTS="$host_tests" > make-check.out 2>&1 || rc=$?
	guest=0
	make --no-print-directory check TESTS=tests/t_guest.sh TEST_SUITE_LOG=test-suite-guest.log \
		>> make-check.out 2>&1 || guest=$?
	[ "$rc" -ne 0 ] || rc=$guest
	grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):' make-check.out || true
	[ "$rc" -eq 0 ] || { tail -40 make-check.out; cat test-suite.log test-suite-guest.log 2>/dev/null | tail -80; }
	# The unit under a real systemd (make check-system), after the suite and on its own.
	src=0
	make --no-print-directory check-system > make-check-system.out 2>&1 || src=$?
	grep -E '^(PASS|FAIL|SKIP)|^t_(system|deb):|check-system' make-check-system.out | sed 's/^/system: /' || true
	[ "$src" -eq 0 ] || { tail -60 make-check-system.out; [ "$rc" -ne 0 ] || rc=$src; }
	show_results
	stage_end "plain build"

	# The same suite under ASan and UBSan (tests/sanitizers.env: its options, and why each
	# shell suite that cannot run something under them skips it).
	cd "$top"
	stage_start "sanitizer build (ASan, UBSan): make check"
	build build-san --enable-sanitizers
	san=0
	make -j"$(nproc)" --no-print-directory check > make-check.out 2>&1 || san=$?
	grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):' make-check.out | sed 's/^/san: /' || true
	[ "$san" -eq 0 ] || { tail -40 make-check.out; tail -80 test-suite.log 2>/dev/null; }
	show_results | sed 's/^/san: /'
	[ "$rc" -ne 0 ] || rc=$san
	stage_end "sanitizer build"

	# Every fuzz harness (tests/fuzz/run.sh), from the sanitizer build's directory.
	stage_start "fuzzing: make fuzz FUZZ_SECONDS=${FUZZ_SECONDS:-30}"
	fz=0
	make --no-print-directory fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-30}" || fz=$?
	[ "$rc" -ne 0 ] || rc=$fz
	stage_end "fuzzing"
	exit "$rc"
	;;
deb)
	# shellcheck disable=SC2086
	install_deps $DEB_DEPS
	build build
	make --no-print-directory deb DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-parallel=$(nproc)}"
	;;
*)
	echo "usage: contrib/dev.sh run|test|deb" >&2
	exit 2
	;;
esac
