#!/bin/bash
# run.sh: "make fuzz". Builds the library and each harness named with clang, libFuzzer, ASan
# and UBSan (no recovery), then runs each for FUZZ_SECONDS from its seed corpus. Any crash,
# leak, sanitizer report or broken property fails the run; the input that caused it is left
# in tests/fuzz/crashes/ (under the build directory), and the harness's output beside it.
# What each run found new is kept in tests/fuzz/work/NAME for the next run (not in the tree).
set -u
: "${CLANG:?configure found no clang (apt-get install clang)}" "${FUZZ_SECONDS:=60}"
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$PWD/tests/fuzz
mkdir -p "$out/obj" "$out/bin" "$out/crashes" "$out/work" || exit 1

# The sanitizers stop at the first report; LeakSanitizer runs after every input.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export LSAN_OPTIONS="suppressions=$src/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CFLAGS="-std=gnu11 -g -O1 $SAN -Wall -Wno-unused-parameter $FUZZ_CFLAGS"

echo "fuzz: building with $($CLANG --version | head -1)"
objs=()
for s in $FUZZ_SOURCES; do
	objs+=("$out/obj/$(basename "${s%.c}").o")
done
for s in $FUZZ_SOURCES; do
	o=$out/obj/$(basename "${s%.c}").o
	# Rebuilt when the source or any header changed since the object was made.
	if [ ! -e "$o" ] || [ -n "$(find "$src/$s" "$src/src" -name '*.[ch]' -newer "$o" | head -1)" ]; then
		echo "$src/$s $o"
	fi
done | xargs -r -P2 -n2 sh -c "$CLANG $CFLAGS -fsanitize=fuzzer-no-link -c \"\$0\" -o \"\$1\"" ||
	{ echo "fuzz: building the library failed" >&2; exit 1; }
rm -f "$out/obj/libfuzz.a"
ar cr "$out/obj/libfuzz.a" "${objs[@]}" || exit 1

rc=0
for name in "$@"; do
	bin=$out/bin/$name
	# shellcheck disable=SC2086 # flags are word lists
	$CLANG $CFLAGS -fsanitize=fuzzer -o "$bin" "$src/tests/fuzz/fuzz_$name.c" \
		"$out/obj/libfuzz.a" $FUZZ_LIBS -lm ||
		{ echo "fuzz: $name: build failed" >&2; rc=1; continue; }
	mkdir -p "$out/work/$name"
	log=$out/crashes/$name.log
	# New inputs go to the work directory, the seeds in the tree are only read.
	"$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 -print_final_stats=1 -max_len=65536 \
		-artifact_prefix="$out/crashes/$name-" "$out/work/$name" "$src/tests/fuzz/corpus/$name" \
		> "$log" 2>&1
	st=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	if [ "$st" -ne 0 ]; then
		echo "FAIL: fuzz $name: exit $st after ${execs:-?} executions; see $log"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*property broken)' "$log" | head -5
		ls "$out/crashes/$name-"* 2> /dev/null | sed 's/^/  reproducer: /'
		rc=1
	else
		echo "PASS: fuzz $name: ${execs:-?} executions in ${FUZZ_SECONDS} s, $(ls "$out/work/$name" | wc -l) new inputs"
		rm -f "$log"
	fi
done
exit $rc
