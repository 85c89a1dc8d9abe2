# g_unit: Check's unit programs (tests/unit/check_*), built for this guest's architecture,
# run as root on its real kernel: RNDADDENTROPY, evdev and uinput, loop devices with blktrace
# and the block tracepoints, network namespaces with veth, macvlan, ifb and bridge links,
# packet sockets and their filters, seccomp, Landlock and the other namespaces. Each program
# is a result of its own: PASS with its count of checks (and each case that skipped, with
# why, as on amd64), FAIL with its output. Run only when named (run.sh unit): run.sh puts
# the programs in /bin, iproute2's ip in /usr/local/sbin (busybox's makes no veth pair) and
# dash in /usr/local/bin (made /bin/sh), the kernel's configuration in /boot, and the files they read where their build said the
# source tree is.
#
# run.sh also runs this script on the host, beside the guest, for the programs that only
# compute (UNIT_RUN, the qemu-user command that runs them; UNIT_PROGS, their paths; OUT,
# RESULTS, GLIB: where the output, the results and glib.sh are). POSIX sh: busybox's in the
# guest, the host's /bin/sh there.
TEST=unit
: "${GLIB:=/tests/glib.sh}"
# shellcheck source=tests/guest/glib.sh
. "$GLIB"

# Under qemu's emulation the code runs 10 to 40 times slower than on the machine it
# emulates: Check's per-test time limits (4 s unless a test sets its own) are multiplied,
# as tests/sanitizers.env does for ASan.
: "${UNIT_TIMEOUT_MULTIPLIER:=20}"
# Two programs at a time: the guest has two CPUs, as the host.
: "${UNIT_JOBS:=2}"
: "${UNIT_RUN:=}"
: "${UNIT_SELF:=/tests/g_unit.sh}"
: "${OUT:=/tmp/unit}"

# One program: its output, its exit status and its time in whole seconds, in $OUT. Run from
# a directory of its own, without the guest's control channel (fd 3).
run_one() {
	name=${1##*/}
	mkdir -p "$OUT/$name.d"
	t0=$(date +%s)
	# shellcheck disable=SC2086 # UNIT_RUN is a command and its arguments
	(cd "$OUT/$name.d" && CK_TIMEOUT_MULTIPLIER=$UNIT_TIMEOUT_MULTIPLIER exec $UNIT_RUN "$1") \
		> "$OUT/$name.log" 2>&1 3>&-
	rc=$?
	echo "$rc $(($(date +%s) - t0))" > "$OUT/$name.rc"
	echo "unit: $name done (status $rc)"
}
if [ "${1:-}" = --one ]; then
	run_one "$2"
	exit 0
fi

if [ -z "$UNIT_RUN" ]; then
	where="this guest's kernel ($(uname -r))"
	UNIT_PROGS=$(ls /bin/check_* 2> /dev/null)
	[ -n "$UNIT_PROGS" ] || fail "no unit programs in /bin (tests/guest/run.sh unit puts them there)"
	# iproute2's ip before busybox's, and Debian's /bin/sh, dash: busybox's sh runs its own
	# applets whatever PATH says (the tests' "ip link add ... type veth" among them).
	export PATH="/usr/local/sbin:$PATH"
	ln -sf /usr/local/bin/dash /bin/sh || fail "cannot make dash /bin/sh"
	# As on any machine: lo up, the kernel's configuration in /boot (kernel_hz reads
	# CONFIG_HZ there: these kernels have no /proc/config.gz).
	ip link set lo up || fail "cannot bring lo up"
	[ -f /boot/config-"$(uname -r)" ] || fail "no /boot/config-$(uname -r) in the initramfs"
	# And the CRNG ready, as where the unit tests run (TESTING.md): this guest boots trusting
	# neither the CPU's seed nor the boot loader's, and /dev/random's first read waits for
	# the kernel's own (jitter) entropy.
	t0=$(date +%s)
	timeout 120 head -c 1 /dev/random > /dev/null || fail "the CRNG is not ready after 120 s"
	echo "unit: the CRNG is ready ($(($(date +%s) - t0)) s)"
else
	where="qemu-user ($UNIT_RUN)"
fi
mkdir -p "$OUT"
n=$(echo "$UNIT_PROGS" | wc -w)
echo "unit: $n programs on $where, $UNIT_JOBS at a time, Check's time limits x$UNIT_TIMEOUT_MULTIPLIER"
t0=$(date +%s)
echo "$UNIT_PROGS" | tr ' ' '\n' | grep . | xargs -n 1 -P "$UNIT_JOBS" sh "$UNIT_SELF" --one
echo "unit: the $n programs ran in $(($(date +%s) - t0)) s"

failed=0 checks=0 skipped=0
for p in $UNIT_PROGS; do
	name=${p##*/}
	log=$OUT/$name.log
	read -r rc secs < "$OUT/$name.rc" 2> /dev/null || { rc=none secs='?'; }
	# Check's last line: "100%: Checks: 12, Failures: 0, Errors: 0".
	line=$(grep -E '^[0-9]+%: Checks: [0-9]+' "$log" | tail -1)
	c=$(echo "$line" | sed -n 's/.*Checks: \([0-9]*\).*/\1/p')
	# A case that cannot run here says why: "test_x: skipped: why" (TU_SKIP and the like)
	# or "SKIP: why".
	s=$(grep -cE '^[a-z_0-9]+: skipped: |^SKIP: ' "$log")
	if [ "$rc" = 0 ] && [ -n "$c" ] && [ "$c" -gt 0 ]; then
		checks=$((checks + c))
		skipped=$((skipped + s))
		if [ "$s" -gt 0 ]; then
			pass "$name: $c checks, $s skipped ($secs s)"
		else
			pass "$name: $c checks ($secs s)"
		fi
		grep -E '^[a-z_0-9]+: skipped: |^SKIP: ' "$log" | sed "s/^/  $name: /"
	else
		failed=$((failed + 1))
		result "FAIL: $TEST: $name: exit status $rc${line:+, $line} ($secs s)"
		sed "s/^/  $name: /" "$log"
	fi
done
echo "unit: on $where: $n programs, $((n - failed)) passed, $failed failed; $checks checks, $skipped cases skipped"
[ "$failed" -eq 0 ]
