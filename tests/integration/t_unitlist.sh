#!/bin/bash
# t_unitlist: the unit tests are found by name (tests/unit-list.sh): what make check runs is
# every tests/unit/check_*.c, each under tu_run_suite(); the list of modules without one names
# each of them, says which are programs, and counts both.
. "$(dirname "$0")/lib.sh"

LIST=$top_srcdir/tests/unit-list.sh

# The tree as it is: the build runs every tests/unit/check_*.c, and only those (asked of a
# make of its own: this one's TESTS may name a few).
want=$(for f in "$top_srcdir"/tests/unit/check_*.c; do f=${f#"$top_srcdir"/}; echo "${f%.c}"; done |
	LC_ALL=C sort)
got=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$top_builddir" print-tests | tr ' ' '\n' |
	grep '^tests/unit/' | LC_ALL=C sort)
[ "$want" = "$got" ] || fail "make check runs other unit tests than tests/unit/check_*.c: $(diff <(echo "$want") <(echo "$got"))"
pass "make check runs every tests/unit/check_*.c ($(echo "$want" | wc -l)), found by name"

# Every unit test runs under tu_run_suite, which removes what its tests made whatever became
# of them (HACKING.md).
for f in "$top_srcdir"/tests/unit/check_*.c; do
	grep -q 'tu_run_suite(' "$f" || fail "${f#"$top_srcdir"/} does not run its suite with tu_run_suite(): what its tests make may be left behind"
done
pass "every unit test runs under tu_run_suite()"

# A small tree: two tested modules (one a program), one untested, one program untested, and
# a test named after no module.
mkdir -p "$T/tree/src" "$T/tree/tests/unit"
printf 'int f(void) { return 0; }\n' > "$T/tree/src/alpha.c"
printf 'int g(void) { return 0; }\n' > "$T/tree/src/beta.c"
printf 'int\nmain(int argc, char **argv)\n{ return 0; }\n' > "$T/tree/src/gamma.c"
printf 'int main(int argc, char **argv) { return 0; }\n' > "$T/tree/src/delta.c"
touch "$T/tree/tests/unit/check_alpha.c" "$T/tree/tests/unit/check_delta.c" \
	"$T/tree/tests/unit/check_nomodule.c" "$T/tree/tests/unit/helper.c"

sh "$LIST" untested "$T/tree" > "$T/out" 2>&1 || fail "unit-list.sh untested: $(cat "$T/out")"
cat > "$T/want" << 'EOF'
src/beta.c
src/gamma.c: a program (main()); the integration tests (tests/integration/) cover it
tests/unit/check_nomodule.c: there is no src/nomodule.c (name a unit test after its module)
unit tests: 2 of 4 modules of src/ have tests/unit/check_MODULE.c, 2 have none (1 of them programs the integration tests cover: gamma)
EOF
diff "$T/want" "$T/out" > "$T/diff" || fail "make list-untested: $(cat "$T/diff")"
pass "list-untested names each module without a unit test, says which is a program, and counts them"

sh "$LIST" summary "$T/tree" > "$T/out" 2>&1 || fail "unit-list.sh summary: $(cat "$T/out")"
[ "$(cat "$T/out")" = "unit tests: 2 of 4 modules of src/ have tests/unit/check_MODULE.c, 2 have none (1 of them programs the integration tests cover: gamma); make list-untested names them" ] ||
	fail "the summary line: $(cat "$T/out")"
pass "make check's last line counts the modules with and without a unit test"

# The fragment automake includes names the tests, sorted, and is written only when it changes.
sh "$LIST" update "$T/tree" > "$T/out" 2>&1 || fail "unit-list.sh update: $(cat "$T/out")"
grep -qF "wrote $T/tree/tests/unit-list.am" "$T/out" || fail "update did not say it wrote the list: $(cat "$T/out")"
[ "$(sed -n 's|^\t\(tests/unit/check_[a-z]*\).*|\1|p' "$T/tree/tests/unit-list.am" | tr '\n' ' ')" = \
	"tests/unit/check_alpha tests/unit/check_delta tests/unit/check_nomodule " ] ||
	fail "tests/unit-list.am: $(cat "$T/tree/tests/unit-list.am")"
touch -d '2001-01-01 00:00' "$T/tree/tests/unit-list.am"
sh "$LIST" update "$T/tree" > "$T/out" 2>&1 || fail "unit-list.sh update, unchanged: $(cat "$T/out")"
[ ! -s "$T/out" ] || fail "update of an unchanged list said: $(cat "$T/out")"
[ "$(stat -c %Y "$T/tree/tests/unit-list.am")" = "$(date -d '2001-01-01 00:00' +%s)" ] ||
	fail "update wrote an unchanged list again"
touch "$T/tree/tests/unit/check_beta.c"
sh "$LIST" update "$T/tree" > /dev/null 2>&1 || fail "unit-list.sh update after a new test"
grep -qx $'\ttests/unit/check_beta \\\\' "$T/tree/tests/unit-list.am" ||
	fail "a new test is not in tests/unit-list.am: $(cat "$T/tree/tests/unit-list.am")"
pass "tests/unit-list.am names every test, is left alone when unchanged (a read-only tarball) and takes a new one"

# ---- what a unit test leaves: nothing, however its tests end ----
# tests/helpers/unitleave: every test makes files under tu_tmpdir() and ends without its
# cleanup (a failed assertion, its timeout, a child left running, a read-only directory,
# another user's files); the run fails, and the TMPDIR it was given is as empty as before.
mkdir -m 1777 "$T/tmp"
TMPDIR=$T/tmp "$top_builddir/tests/helpers/unitleave" > "$T/leave.out" 2>&1 &&
	fail "unitleave passed: $(cat "$T/leave.out")"
grep -q '^0%: Checks: 5, Failures: 4, Errors: 1' "$T/leave.out" ||
	fail "unitleave's tests did not all fail as they should: $(cat "$T/leave.out")"
[ -z "$(ls -A "$T/tmp")" ] || fail "failed unit tests left in TMPDIR: $(cd "$T/tmp" && find .)"
# And the unit tests that once left directories in /tmp, passing, in a TMPDIR of their own.
for t in check_priv check_entropyctl_client check_est_assess check_ctl check_entropyctl_watch; do
	TMPDIR=$T/tmp "$top_builddir/tests/unit/$t" > "$T/$t.out" 2>&1 || fail "$t: $(tail -5 "$T/$t.out")"
	[ -z "$(ls -A "$T/tmp")" ] || fail "$t left in TMPDIR: $(cd "$T/tmp" && find .)"
done
pass "unit tests leave nothing in TMPDIR, also after a failure, a timeout or a child left running"
