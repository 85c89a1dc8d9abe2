#!/bin/bash
# t_unit: the systemd unit as built. "systemd-analyze verify" must print nothing (it exits 0
# even on unknown keys and bad values), and the exposure "systemd-analyze security" gives it
# must stay at or under THRESHOLD; the score and every item that counts are logged.
. "$(dirname "$0")/lib.sh"

# The exposure the unit has now (systemd 252), x10: each point above it needs a reason in
# systemd/entropyd.service.in.
THRESHOLD=30

command -v systemd-analyze > /dev/null || skip "systemd-analyze not found"
UNIT=$top_builddir/systemd/entropyd.service
[ -f "$UNIT" ] || skip "$UNIT not built"
grep -q '@[a-z]*dir@' "$UNIT" && fail "unsubstituted directory left in $UNIT"

# verify looks for the programs of Exec*= and the man pages of Documentation=: give it a
# root with the built programs where the unit says they are, and the built pages.
R=$T/root
mkdir -p "$R/etc/systemd/system" "$T/man/man5" "$T/man/man8"
cp "$UNIT" "$R/etc/systemd/system/entropyd.service"
for prog in $(sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\([^ ]*\).*/\1/p' "$UNIT" | sort -u); do
	built=$top_builddir/src/$(basename "$prog")
	[ -x "$built" ] || fail "the unit runs $prog, which this build does not make"
	mkdir -p "$R$(dirname "$prog")"
	cp "$built" "$R$prog"
done
for page in "$top_builddir"/man/*.[0-9]; do
	cp "$page" "$T/man/man${page##*.}/"
done
out=$(cd "$T" && MANPATH=$T/man SYSTEMD_LOG_COLOR=0 \
	systemd-analyze verify --root="$R" entropyd.service 2>&1)
rc=$?
[ -z "$out" ] && [ "$rc" -eq 0 ] || fail "systemd-analyze verify (status $rc): $out"
pass "systemd-analyze verify prints nothing"

out=$(cd "$T" && systemd-analyze security --offline=true --no-pager "$R/etc/systemd/system/entropyd.service" 2>&1)
echo "$out" | grep -E '^✗|Overall exposure' | sed 's/^/  /'
score=$(echo "$out" | sed -n 's/.*Overall exposure level for entropyd.service: \([0-9.]*\).*/\1/p')
[ -n "$score" ] || fail "no exposure level in: $out"
tenths=$(echo "$score" | awk '{ printf "%d", $1 * 10 + 0.5 }')
[ "$tenths" -le "$THRESHOLD" ] ||
	fail "exposure $score is above $((THRESHOLD / 10)).$((THRESHOLD % 10)): justify it or remove it"
(cd "$T" && systemd-analyze security --offline=true --threshold="$THRESHOLD" --no-pager \
	"$R/etc/systemd/system/entropyd.service" > /dev/null 2>&1) ||
	fail "systemd-analyze security --threshold=$THRESHOLD failed"
pass "exposure $score (threshold $((THRESHOLD / 10)).$((THRESHOLD % 10)))"

# The sysusers.d and tmpfiles.d files parse.
if command -v systemd-sysusers > /dev/null; then
	out=$(systemd-sysusers --dry-run --root="$T/sysroot" \
		"$top_srcdir/systemd/sysusers.d/entropyd.conf" 2>&1) || fail "sysusers.d: $out"
	echo "$out" | grep -q "entropyd" || fail "sysusers.d makes no entropyd group: $out"
fi
if command -v systemd-tmpfiles > /dev/null; then
	mkdir -p "$T/sysroot/etc"
	echo 'entropyd:x:900:' > "$T/sysroot/etc/group"
	out=$(systemd-tmpfiles --create --root="$T/sysroot" \
		"$top_srcdir/systemd/tmpfiles.d/entropyd.conf" 2>&1) || fail "tmpfiles.d: $out"
	[ -z "$out" ] || fail "tmpfiles.d: $out"
	[ "$(stat -c '%a %g' "$T/sysroot/run/entropyd")" = "750 900" ] ||
		fail "tmpfiles.d made $(stat -c '%a %g' "$T/sysroot/run/entropyd")"
fi
pass "sysusers.d and tmpfiles.d"
