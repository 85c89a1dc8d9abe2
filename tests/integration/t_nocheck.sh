#!/bin/bash
# t_nocheck: a build configured before Check was installed does not pass "make check" with
# no unit test. Such a build (contrib/dev.sh run, then test, once did it) has no Check
# program to run, and its suite used to pass without one ("100%: Checks: 0"). Here configure
# runs in a scratch directory with a pkg-config that finds every library but Check, and
# "make check" (its build steps switched off: nothing here needs building) must refuse, say
# why, and run no test; this build, which found Check, passes the same guard.
. "$(dirname "$0")/lib.sh"

[ -x "$top_srcdir/configure" ] || skip "no configure in $top_srcdir (autoreconf -fi)"
[ -f "$top_srcdir/config.status" ] &&
	skip "the source tree is configured in place: no second build can be configured from it"
command -v pkg-config > /dev/null || skip "pkg-config not found"

# A pkg-config to which Check is not installed.
cat > "$T/pkg-config" <<'SH'
#!/bin/sh
for a; do
	case $a in check | "check "*) exit 1 ;; esac
done
exec pkg-config "$@"
SH
chmod +x "$T/pkg-config"
"$T/pkg-config" --exists check && fail "the pkg-config wrapper still finds Check"
"$T/pkg-config" --exists libevent || fail "the pkg-config wrapper finds no libevent"

mkdir "$T/b"
(cd "$T/b" && PKG_CONFIG="$T/pkg-config" "$top_srcdir/configure" -q --disable-lto) \
	> "$T/configure.out" 2>&1 || fail "configure: $(tail -20 "$T/configure.out")"
grep -q 'check not found' "$T/configure.out" ||
	fail "configure did not say Check is missing: $(cat "$T/configure.out")"

# "make check", without building what it would build first (all, the check programs): only
# what it does before running any test, and the tests.
rc=0
make -C "$T/b" --no-print-directory -o all-am check check_PROGRAMS= check_LIBRARIES= \
	> "$T/check.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "make check passed in a build without Check: $(cat "$T/check.out")"
grep -q 'configure found no Check, so no unit test would run' "$T/check.out" ||
	fail "make check failed without saying why: $(tail -20 "$T/check.out")"
[ -e "$T/b/test-suite.log" ] && fail "make check ran tests before refusing: $(cat "$T/b/test-suite.log")"
pass "a build configured without Check: make check refuses before any test, and says why"

make -C "$top_builddir" --no-print-directory -s check-have-check > "$T/ours" 2>&1 ||
	fail "this build, which runs its unit tests, fails the guard: $(cat "$T/ours")"
pass "a build configured with Check passes the guard"
