#!/bin/bash
# repeat.sh: run tests N times in a row beside a CPU hog, to find the ones that fail by chance
# on a busy machine (a test that passes alone and fails beside a second job is broken).
#   tests/repeat.sh [TEST...]      from a build directory (make check-repeat N=10 LOAD=2)
# N runs (default 10) of "make check TESTS=..." (default: what make check runs, without the
# emulated guest, as contrib/dev.sh runs the host suite), with LOAD processes (default: one a
# core; 0 for none) spinning on the CPUs the whole time: stress-ng --cpu LOAD where it is
# installed, shell loops otherwise. JOBS (default: one a core) is make's -j. Each run prints
# its counts and the tests that failed, whose logs are kept (repeat-logs/RUN.test-suite.log).
# Exits 1 if any run had a failure.
set -u

N=${N:-10}
LOAD=${LOAD:-$(nproc)}
JOBS=${JOBS:-$(nproc)}
[ -f Makefile ] || { echo "repeat.sh: run it from a configured build directory" >&2; exit 2; }
case $N$LOAD$JOBS in *[!0-9]*) echo "repeat.sh: N, LOAD and JOBS are numbers" >&2; exit 2 ;; esac
if [ $# -gt 0 ]; then
	tests="$*"
else
	tests=$(make -s --no-print-directory print-tests | tr ' ' '\n' | grep -vx 'tests/guest/t_guest.sh' |
		paste -sd' ')
fi

HOG=()
stop_hog() {
	local p
	for p in "${HOG[@]}"; do kill "$p" 2> /dev/null; done
	for p in "${HOG[@]}"; do wait "$p" 2> /dev/null; done
	HOG=()
}
trap 'stop_hog; exit 130' INT TERM
trap stop_hog EXIT
if [ "$LOAD" -gt 0 ]; then
	if command -v stress-ng > /dev/null; then
		stress-ng --cpu "$LOAD" --quiet > /dev/null 2>&1 &
		HOG+=($!)
		hog="stress-ng --cpu $LOAD"
	else
		for _ in $(seq "$LOAD"); do
			sh -c 'while :; do :; done' &
			HOG+=($!)
		done
		hog="$LOAD shell loops"
	fi
else
	hog="no load"
fi

rm -rf repeat-logs
mkdir -p repeat-logs
echo "repeat: $N runs of $(echo "$tests" | wc -w) tests (make -j$JOBS check) beside $hog"
declare -A FAILS
bad_runs=0
for run in $(seq "$N"); do
	t0=$(date +%s)
	make -j"$JOBS" --no-print-directory check TESTS="$tests" > "repeat-logs/$run.out" 2>&1
	rc=$?
	pass=$(grep -c '^PASS:' "repeat-logs/$run.out")
	skip=$(grep -c '^SKIP:' "repeat-logs/$run.out")
	failed=$(grep -E '^(FAIL|ERROR|XPASS):' "repeat-logs/$run.out" | awk '{ print $2 }' | paste -sd' ')
	nfail=$(echo "$failed" | wc -w)
	# make itself failing with no test failing (a build error) counts as a failure too
	[ "$rc" -ne 0 ] && [ "$nfail" -eq 0 ] && failed="(make check exited $rc)" && nfail=1
	for t in $failed; do
		FAILS[$t]=$((${FAILS[$t]:-0} + 1))
	done
	# the suite's log holds every failed test's own
	[ "$nfail" -eq 0 ] || cp test-suite.log "repeat-logs/$run.test-suite.log" 2> /dev/null
	[ "$nfail" -eq 0 ] || bad_runs=$((bad_runs + 1))
	echo "run $run/$N: $pass pass, $nfail fail, $skip skip in $(($(date +%s) - t0)) s${failed:+: $failed}"
done
stop_hog
echo "repeat: $((N - bad_runs)) of $N runs without a failure, beside $hog"
for t in "${!FAILS[@]}"; do
	echo "  $t failed in ${FAILS[$t]} of $N runs (logs in repeat-logs/)"
done
[ "$bad_runs" -eq 0 ]
