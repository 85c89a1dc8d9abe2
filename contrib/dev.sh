#!/bin/bash
# dev.sh: set up a Debian 13 or Debian 12 machine (as root) for entropyd, build it, and run it
# or its tests.
#   contrib/dev.sh run    install build dependencies, build, run entropyd in the foreground
#                         with the shipped conf/entropyd.conf against the real kernel
#   contrib/dev.sh test   install build and test dependencies, build, run the whole test suite:
#                         the plain build's (in build/: make check, the qemu guests, make
#                         check-system), the arm64 and armhf guests (make check-guest
#                         GUEST_ARCH=...), src/ compiled against musl (make check-musl),
#                         the same under ASan and UBSan (in build-san/,
#                         configure --enable-sanitizers), every fuzz harness for FUZZ_SECONDS
#                         (default 30) each, then make check again on the other Debian release
#                         in a debootstrap'ed tree (make check-distro SUITE=trixie on Debian 12,
#                         SUITE=bookworm on Debian 13; DISTRO_SUITE= to choose, "none" to skip);
#                         what CI runs (.ci/run). A stage fails if it ran no Check test or a
#                         fuzz harness did not build.
#   contrib/dev.sh check  install build and test dependencies, build in build/ (or $BUILD_DIR),
#                         run make check without the qemu guests and fuzz every harness briefly
#                         (FUZZ_SECONDS, default 2): what check-distro runs inside its tree
#   contrib/dev.sh deb    install build and packaging dependencies, build the Debian package
#                         (make deb: build/deb/entropyd_VERSION_ARCH.deb)
# Every dependency is installed before the first configure. A build directory configured when
# other packages were installed (e.g. by "run" before "test": no Check, no valgrind.h) is
# configured again. Builds are made outside the source tree, so that the plain and the
# sanitizer build can live side by side (a tree configured in place must be "make distclean"ed
# first).
set -euo pipefail

cd "$(dirname "$0")/.."

BUILD_DEPS="build-essential autoconf automake pkg-config libevent-dev libconfig-dev
	libpcap-dev libsystemd-dev libjansson-dev zlib1g-dev libcap-ng-dev libseccomp-dev"
# The Debian package (contrib/debian, make deb): debhelper (with dh-autoreconf and the
# sysusers sequence), and check for the unit tests its build runs.
DEB_DEPS="debhelper dpkg-dev check"
# What "make check" needs (tests/distro/run.sh installs these in its tree too): Check for the
# unit tests, and the tools of the shell suites: procps (pgrep, sysctl) and e2fsprogs (the
# stacked disks' file systems, tests/integration/t_block.sh) too, which a minimal Debian lacks.
TEST_DEPS="check strace util-linux procps e2fsprogs mandoc jq"
# The fuzz harnesses (make fuzz): clang's libFuzzer, ASan and UBSan; libFuzzer's runtime
# (libclang-rt-N-dev, for clang's N) is added by fuzz_runtime. llvm for llvm-symbolizer:
# without it a sanitizer's report has no function names, and tests/lsan.supp, which names
# functions, suppresses nothing (a fresh Debian 12's fuzz_config failed on libconfig 1.5's
# known leak so).
TEST_DEPS="$TEST_DEPS clang llvm"
# The packet source: network namespaces (tests/integration/t_pcap.sh), and tcpdump to compare its cost
# with (bench/pcap.sh).
TEST_DEPS="$TEST_DEPS iproute2 tcpdump"
# The block source's stacked disks (tests/integration/t_block.sh): a device-mapper device on a loop device.
TEST_DEPS="$TEST_DEPS dmsetup"
# The control-socket test (tests/integration/t_ctl.sh): python3 for an independent Varlink client,
# prometheus_client's parser for the metrics, valgrind for the daemon's memory (and its
# valgrind.h for the collector, which configure looks for).
TEST_DEPS="$TEST_DEPS python3 python3-prometheus-client valgrind"
# The alert rules (contrib/metrics, tests/integration/t_metrics_rules.sh): promtool.
TEST_DEPS="$TEST_DEPS prometheus"
# The systemd unit and contrib/ (tests/integration/t_unit.sh, tests/integration/t_contrib.sh): systemd-analyze, and
# man, which its verify runs for each Documentation= page.
TEST_DEPS="$TEST_DEPS systemd man-db bash-completion shellcheck"
# The host's stages only. The guest tests (tests/guest/): qemu's software emulation, a static
# busybox for the guest, cpio for its initramfs, python3 for the QMP input injector. The
# system test (tests/system/: a real systemd booted in a container from a debootstrap'ed
# tree) and the package's (tests/system/t_deb.sh: it builds it, and lintian checks it); the
# Debian tree of check-distro (debootstrap).
HOST_DEPS="qemu-system-x86 busybox-static cpio python3"
HOST_DEPS="$HOST_DEPS systemd-container debootstrap $DEB_DEPS lintian"
# A CPU hog to run the suite beside (make check-repeat, tests/repeat.sh).
HOST_DEPS="$HOST_DEPS stress-ng"
# musl-gcc, for the compile-only check of src/ against musl (make check-musl).
HOST_DEPS="$HOST_DEPS musl-tools"
# The arm64 and armhf guests (make check-guest GUEST_ARCH=...): Debian's cross compilers
# (their C library comes with them; the target's -dev packages are fetched into a root of
# their own by tests/cross/sysroot.sh, never installed here) and qemu for -M virt; for their
# initramfs (tests/guest/initramfs.sh), qemu-user, which runs the Debian tree's own programs
# there (registered with binfmt_misc in the test's user namespace only).
HOST_DEPS="$HOST_DEPS gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf qemu-system-arm"
HOST_DEPS="$HOST_DEPS qemu-user-static"
# Every package any command here installs: a build is configured again when one of them
# was installed, removed or upgraded since it was configured.
ALL_DEPS="$BUILD_DEPS $TEST_DEPS $HOST_DEPS"

top=$PWD

apt_get() {
	apt-get -o DPkg::Lock::Timeout=600 "$@"
}

install_deps() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "dev.sh: run as root to install packages (apt-get)" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt_get update -qq
	# shellcheck disable=SC2086 # the lists are word lists
	apt_get install -y -qq --no-install-recommends $BUILD_DEPS "$@" > /dev/null
	# The collector's system user, as the package makes it (sysusers.d): the suites check
	# that the collector runs as it.
	getent passwd entropyd > /dev/null ||
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin entropyd
}

# fuzz_runtime: libFuzzer's runtime for the clang installed (libclang_rt.fuzzer*.a), which
# Debian ships in libclang-rt-N-dev for clang N: clang-14 (Debian 12) depends on it, clang-19
# (Debian 13) only recommends it, and recommendations are not installed here.
fuzz_runtime() {
	local n
	n=$(clang -dumpversion 2> /dev/null | cut -d. -f1)
	[ -n "$n" ] || { echo "dev.sh: clang is not installed" >&2; exit 1; }
	if apt-cache show "libclang-rt-$n-dev" > /dev/null 2>&1; then
		apt_get install -y -qq --no-install-recommends "libclang-rt-$n-dev" > /dev/null
	fi
}

# deps_state: what every package in ALL_DEPS is, installed or not, and its version.
deps_state() {
	# shellcheck disable=SC2086
	dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\n' $ALL_DEPS 2> /dev/null | sort
	true
}

# build DIR [CONFIGURE-ARGS]: configure and build in DIR, which is left current. DIR is
# configured again when the packages installed differ from those it was configured with.
build() {
	local dir=$1 state
	shift
	[ -x configure ] || autoreconf -fi
	if [ -f config.status ]; then
		echo "dev.sh: the source tree is configured in place: run \"make distclean\" first" >&2
		exit 1
	fi
	state=$(deps_state | sha256sum | cut -c1-16)
	mkdir -p "$dir"
	cd "$dir"
	if [ -f Makefile ] && [ "$(cat dev-deps.stamp 2> /dev/null)" != "$state" ]; then
		echo "dev.sh: $dir was configured with other packages installed: configuring it again"
		rm -f Makefile
	fi
	if [ ! -f Makefile ]; then
		"$top/configure" -q "$@"
		echo "$state" > dev-deps.stamp
	fi
	make -j"$(nproc)" --no-print-directory
}

# failed STAGE OUTPUT [LOGDIR]: keep the FAIL, ERROR and XPASS lines of a stage's OUTPUT, each
# with the end of its test's log under LOGDIR, for the run's last words (see "test"): CI's
# output is read from its end, and a failure said only in the middle of a stage is lost there.
failed() {
	local stage=$1 out=$2 dir=${3:-} line t
	{ grep -E '^(FAIL|ERROR|XPASS):' "$out" 2> /dev/null || true; } | sort -u | while IFS= read -r line; do
		echo "$stage: $line"
		t=${line#*: }
		t=${t%% *}
		if [ -n "$dir" ] && [ -f "$dir/$t.log" ]; then
			tail -n 25 "$dir/$t.log" | sed 's/^/  | /'
		fi
	done >> "$failures"
}

# A stage's time, said when it ends.
stage_start() { stage_t0=$(date +%s); echo "=== $1"; }
stage_end() { echo "=== $1: $(($(date +%s) - stage_t0)) s"; }

# Check writes its own summary only to tests/*.log under automake's driver: show it for each
# Check program this build runs (make print-tests), then the suite's total, and end on one line
# that adds up every Check run. Fails, saying why, when a Check program left no summary or no
# Check test ran at all (a build configured without Check runs none: that is no pass).
show_results() {
	local checks=0 failures=0 errors=0 line log t missing=0
	for t in $(make -s --no-print-directory print-tests | tr ' ' '\n' | grep '/check_'); do
		log=$t.log
		line=$(grep -sE '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" | tail -1)
		echo "$t: ${line:-no Check summary}"
		[ -n "$line" ] || missing=$((missing + 1))
		# shellcheck disable=SC2046 # three numbers
		set -- $(echo "$line" | grep -oE '[0-9]+' | tail -3)
		checks=$((checks + ${1:-0})); failures=$((failures + ${2:-0})); errors=$((errors + ${3:-0}))
	done
	for log in tests/integration/t_*.log; do
		[ -f "$log" ] && grep -E '^(PASS|FAIL|SKIP):' "$log" | sed "s|^|${log%.log}: |"
	done
	for suite in test-suite.log test-suite-guest.log; do
		[ -f "$suite" ] && grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$suite"
	done
	grep -sh '^unit tests: ' make-check.out | tail -1 || true
	local pct=100
	[ "$checks" -gt 0 ] && pct=$(( (checks - failures - errors) * 100 / checks ))
	echo "${pct}%: Checks: $checks, Failures: $failures, Errors: $errors"
	if [ "$checks" -eq 0 ]; then
		echo "FAIL: no Check test ran (is Check installed, and was this build configured since?)"
		return 1
	fi
	if [ "$missing" -gt 0 ]; then
		echo "FAIL: $missing Check programs left no summary"
		return 1
	fi
	[ "$failures" -eq 0 ] && [ "$errors" -eq 0 ]
}

# host_tests: what "make check" runs but the emulated guest, which keeps a core busy for
# minutes: it runs after the rest, alone, so that the host's block tracepoint suites (which
# count every completion a starved reader loses to a full perf ring) never run beside it.
host_tests() {
	make -s --no-print-directory print-tests | tr ' ' '\n' | grep -vx 'tests/guest/t_guest.sh' | tr '\n' ' '
}

# fuzz SECONDS: make fuzz, and a line that counts the harnesses that ran clean, found
# something, or did not build (then the stage fails and says so).
fuzz() {
	local fz=0 want ran failed broken
	make --no-print-directory fuzz FUZZ_SECONDS="$1" 2>&1 | tee fuzz.out || fz=$?
	want=$(make -s --no-print-directory print-fuzz-harnesses | wc -w)
	ran=$(grep -c '^PASS: fuzz ' fuzz.out || true)
	failed=$(grep -c '^FAIL: fuzz ' fuzz.out || true)
	broken=$(grep -c '^fuzz: .*: build failed' fuzz.out || true)
	echo "fuzz: $want harnesses: $ran ran clean, $failed failed, $broken did not build"
	if [ "$broken" -gt 0 ] || grep -q '^fuzz: building the library failed' fuzz.out; then
		echo "FAIL: fuzz: a harness did not build or link (libFuzzer's runtime is in libclang-rt-N-dev for clang N)"
		fz=1
	elif [ "$ran" -ne "$want" ]; then
		echo "FAIL: fuzz: $ran of $want harnesses ran clean"
		fz=1
	fi
	return "$fz"
}

case "${1:-}" in
run)
	install_deps
	build build
	exec src/entropyd --foreground -f ../conf/entropyd.conf
	;;
check)
	# make check in a tree of its own (tests/distro/run.sh): what the host's plain stage runs
	# but the qemu guests and check-system, and a short run of each fuzz harness.
	# shellcheck disable=SC2086
	install_deps $TEST_DEPS
	fuzz_runtime
	stage_start "make check"
	build "${BUILD_DIR:-build}"
	rc=0
	make -j"$(nproc)" --no-print-directory check TESTS="$(host_tests)" > make-check.out 2>&1 || rc=$?
	grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):' make-check.out || true
	[ "$rc" -eq 0 ] || { tail -40 make-check.out; tail -80 test-suite.log 2>/dev/null || true; }
	echo "SKIP: tests/guest/t_guest.sh: the qemu guests run in the host's stage, not here"
	echo "SKIP: make check-system: its containers run in the host's stage, not here"
	res=0
	show_results || res=$?
	[ "$rc" -ne 0 ] || rc=$res
	stage_end "make check"
	stage_start "fuzzing: make fuzz FUZZ_SECONDS=${FUZZ_SECONDS:-2}"
	fz=0
	fuzz "${FUZZ_SECONDS:-2}" || fz=$?
	[ "$rc" -ne 0 ] || rc=$fz
	stage_end "fuzzing"
	exit "$rc"
	;;
test)
	# shellcheck disable=SC2086
	install_deps $TEST_DEPS $HOST_DEPS
	fuzz_runtime
	# The commits this submission adds keep HACKING.md's rules (contrib/check-commits.sh).
	commits=0
	stage_start "commit messages: contrib/check-commits.sh"
	contrib/check-commits.sh || commits=$?
	stage_end "commit messages"
	stage_start "plain build: make check, make check-system"
	build build
	failures=$top/build/ci-failures.txt
	: > "$failures"
	rc=0
	make -j"$(nproc)" --no-print-directory check TESTS="$(host_tests)" > make-check.out 2>&1 || rc=$?
	guest=0
	ENTROPYD_GUEST_ALSO='bullseye trixie' make --no-print-directory check TESTS=tests/guest/t_guest.sh TEST_SUITE_LOG=test-suite-guest.log \
		>> make-check.out 2>&1 || guest=$?
	[ "$rc" -ne 0 ] || rc=$guest
	grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):' make-check.out || true
	[ "$rc" -eq 0 ] || { tail -40 make-check.out; cat test-suite.log test-suite-guest.log 2>/dev/null | tail -80 || true; }
	failed plain make-check.out .
	# The unit under a real systemd (make check-system), after the suite and on its own.
	src=0
	make --no-print-directory check-system > make-check-system.out 2>&1 || src=$?
	grep -E '^(PASS|FAIL|SKIP)|^t_(system|deb):|check-system' make-check-system.out | sed 's/^/system: /' || true
	[ "$src" -eq 0 ] || { tail -60 make-check-system.out; [ "$rc" -ne 0 ] || rc=$src; }
	failed check-system make-check-system.out
	res=0
	show_results || res=$?
	[ "$rc" -ne 0 ] || rc=$res
	stage_end "plain build"

	# The arm64 and armhf guests (make check-guest GUEST_ARCH=...): entropyd cross-built
	# against Debian's packages of that architecture (tests/cross/), booted on Debian's own
	# kernel of it under qemu's -M virt; every guest test that applies there, the attempts
	# from inside the collector among them; then, as on amd64, the kernel test on the older
	# and the newer release's kernel; then the initramfs with the real hooks, in a Debian tree
	# of that architecture (tests/guest/initramfs.sh).
	for arch in arm64 armhf; do
		stage_start "$arch guest: make check-guest GUEST_ARCH=$arch GUEST_ALSO='bullseye trixie'"
		ga=0
		make --no-print-directory check-guest GUEST_ARCH="$arch" GUEST_ALSO='bullseye trixie' \
			> "make-check-guest-$arch.out" 2>&1 || ga=$?
		# Each result once: the guests' console transcripts (and the qemu-user programs'
		# output) repeat the results that follow them; the initramfs's checks are theirs.
		awk '/^----- guest console$|^----- unit programs under /{ t = 1 }
			!t && /^(PASS|FAIL|SKIP):|^check-guest: / { print }
			/^----- end of (guest console|unit programs)/{ t = 0 }' "make-check-guest-$arch.out" |
			sed "s/^/$arch: /" || true
		[ "$ga" -eq 0 ] || tail -60 "make-check-guest-$arch.out"
		failed "$arch" "make-check-guest-$arch.out"
		[ "$rc" -ne 0 ] || rc=$ga
		stage_end "$arch guest"
	done

	# src/ against musl's C library, compiled only (tests/cross/musl.sh): Alpine, OpenWrt.
	stage_start "musl: make check-musl"
	msl=0
	make --no-print-directory check-musl || msl=$?
	[ "$rc" -ne 0 ] || rc=$msl
	stage_end "musl"

	# The same suite under ASan and UBSan (tests/sanitizers.env: its options, and why each
	# shell suite that cannot run something under them skips it).
	cd "$top"
	stage_start "sanitizer build (ASan, UBSan): make check"
	build build-san --enable-sanitizers
	san=0
	make -j"$(nproc)" --no-print-directory check > make-check.out 2>&1 || san=$?
	grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):' make-check.out | sed 's/^/san: /' || true
	[ "$san" -eq 0 ] || { tail -40 make-check.out; tail -80 test-suite.log 2>/dev/null || true; }
	failed sanitizer make-check.out .
	res=0
	show_results | sed 's/^/san: /' || res=$?
	[ "$san" -ne 0 ] || san=$res
	[ "$rc" -ne 0 ] || rc=$san
	stage_end "sanitizer build"

	# Every fuzz harness (tests/fuzz/run.sh), from the sanitizer build's directory.
	stage_start "fuzzing: make fuzz FUZZ_SECONDS=${FUZZ_SECONDS:-30}"
	fz=0
	fuzz "${FUZZ_SECONDS:-30}" || fz=$?
	failed fuzzing fuzz.out
	[ "$rc" -ne 0 ] || rc=$fz
	stage_end "fuzzing"

	# make check on the other Debian release (tests/distro/run.sh), in a tree cached under
	# /var/cache/entropyd-test: Debian 13 from a Debian 12 host, and the other way round.
	# shellcheck disable=SC1091
	. /etc/os-release
	suite=${DISTRO_SUITE:-}
	if [ -z "$suite" ]; then
		case "${VERSION_CODENAME:-}" in
		bookworm) suite=trixie ;;
		trixie) suite=bookworm ;;
		*) suite=none ;;
		esac
	fi
	if [ "$suite" = none ]; then
		echo "=== make check-distro: not run (DISTRO_SUITE=none, or no other release known for ${VERSION_CODENAME:-this host})"
	else
		stage_start "Debian $suite tree: make check-distro SUITE=$suite"
		cd "$top/build"
		dst=0
		make --no-print-directory check-distro SUITE="$suite" > make-check-distro.out 2>&1 || dst=$?
		grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):|^tests/unit/check_|Checks: |^fuzz: |^distro:|^===' \
			make-check-distro.out | sed "s/^/$suite: /" || true
		[ "$dst" -eq 0 ] || tail -60 make-check-distro.out
		failed "$suite" make-check-distro.out "distro-$suite"
		[ "$rc" -ne 0 ] || rc=$dst
		stage_end "Debian $suite tree"
	fi
	[ "$rc" -ne 0 ] || rc=$commits
	if [ -s "$failures" ]; then
		echo "=== what failed, stage by stage, each test with the end of its log"
		cat "$failures"
	fi
	exit "$rc"
	;;
deb)
	# shellcheck disable=SC2086
	install_deps $DEB_DEPS
	build build
	make --no-print-directory deb DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-parallel=$(nproc)}"
	;;
*)
	echo "usage: contrib/dev.sh run|test|check|deb" >&2
	exit 2
	;;
esac
