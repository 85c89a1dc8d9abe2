#!/bin/bash
# t_record: --record writes the exact symbols the estimator sees, one byte per symbol: for
# input at 1 us, the low 8 bits of each interval in microseconds.
. "$(dirname "$0")/lib.sh"

write_config "$T/e.conf" 'policy = { block = { mode = "disabled"; }; network = { mode = "disabled"; }; };'
mkfifo "$T/input/event0"
start_daemon -v --dry-run --record "$T/rec" -f "$T/e.conf"
open_fifo "$T/input/event0"
# Intervals of 1000 and 1100 us in turn; the first symbol is the second interval:
# 0x4c (1100 & 255), then 0xe8 (1000 & 255), and so on.
"$EVGEN" -n 501 -p alt -k 0x2a7 -x 77777 >&9 2>/dev/null
wait_summary "input/event0: .* 501 events" || fail "events not counted"
exec 9>&-
stop_daemon
f=$T/rec/input-event0.bin
[ -f "$f" ] || fail "no record file"
[ "$(stat -c %a "$f")" = 600 ] || fail "record file mode $(stat -c %a "$f"), want 600"
# The first event has no interval: 500 symbols.
[ "$(stat -c %s "$f")" -eq 500 ] || fail "record holds $(stat -c %s "$f") symbols, want 500"
want=$(for _ in $(seq 250); do printf '4c\ne8\n'; done)
got=$(od -A n -v -t x1 "$f" | tr -s ' ' '\n' | grep -v '^$')
[ "$got" = "$want" ] || fail "recorded symbols are not the intervals' low bytes"
pass "--record: 500 symbols, exactly the intervals' low bytes, mode 0600"

# ---- record.dir: root makes it for the collector through descriptors, and refuses one that
# anyone but root could replace (entropyd.conf(5)). A local user races the starts, swapping
# the directory for a link to a file only root may touch; that file is never given away. ----
[ "$(id -u)" -eq 0 ] || skip "needs root (root makes record.dir and gives it to the collector)"
id entropyd > /dev/null 2>&1 || skip "needs the user entropyd (the collector's)"
DIRRACER=$top_builddir/tests/helpers/dirracer
SECRET=$T/secret
echo root-only > "$SECRET"
chmod 0600 "$SECRET"
# racer DIR: tests/helpers/dirracer as uid 65534, in the background (its pid in RACER): it
# swaps DIR/rec, a directory root just made, for a link to $SECRET, or makes the link first;
# 10,000,000 rounds at most, more than the starts take. racer_done: stop it, its account in
# RACED ("rounds R, directories taken D, links made L"), which must show links made.
racer() {
	rm -f "$T/stop"
	"$DIRRACER" 65534 "$1" rec "$SECRET" 10000000 "$T/stop" > "$T/racer.out" &
	RACER=$!
}
racer_done() {
	touch "$T/stop"
	wait "$RACER" || fail "the racer failed: $(cat "$T/racer.out")"
	RACED=$(cat "$T/racer.out")
	case $RACED in *", links made 0") fail "the racer made no link: $RACED" ;; esac
}
# starts N: start the daemon N times with $T/r.conf; each either starts (and is stopped) or
# is refused; the counts in STARTED and REFUSED, the refusals' logs in $T/refused.
starts() {
	STARTED=0 REFUSED=0
	: > "$T/refused"
	for _ in $(seq "$1"); do
		: > "$T/log"
		"$ENTROPYD" --foreground --dry-run -f "$T/r.conf" >> "$T/log" 2>&1 &
		DAEMON_PID=$!
		wait_for 10 grep -qE "started:|only root may be able to replace" "$T/log" ||
			fail "the daemon neither started nor was refused"
		if grep -q "started:" "$T/log"; then
			STARTED=$((STARTED + 1))
			kill_daemon TERM
		else
			REFUSED=$((REFUSED + 1))
			cat "$T/log" >> "$T/refused"
			kill_daemon TERM
			[ "$DAEMON_STATUS" -ne 0 ] || fail "a refused start exited 0"
		fi
	done
}
secret_intact() {
	[ "$(stat -c %U:%G:%a "$SECRET")" = root:root:600 ] ||
		fail "$1: root gave its file away: $(stat -c %U:%G:%a "$SECRET")"
}

# A directory a local user owns above record.dir: refused at every start, naming it.
mkdir -m 0755 "$T/home"
chown 65534:65534 "$T/home"
write_config "$T/r.conf" "record = { dir = \"$T/home/rec\"; };"
racer "$T/home"
starts 30
racer_done
secret_intact "a user's directory above record.dir"
[ "$REFUSED" -eq 30 ] || fail "$STARTED of 30 starts with record.dir below a user's directory were not refused"
grep -qF "record.dir $T/home/rec: its directory $T/home is owned by uid 65534, not root: chown root $T/home" "$T/log" ||
	fail "the refusal does not name the directory and the fix: $(cat "$T/log")"
pass "record.dir below a user's directory: 30 starts refused, naming it, under a racer ($RACED); nothing given away"

# In a sticky directory anyone may write (as /tmp) the user can race but not win: each start
# makes its own directory and gives that away, or finds the link and refuses it.
mkdir -m 1777 "$T/sticky"
write_config "$T/r.conf" "record = { dir = \"$T/sticky/rec\"; };"
racer "$T/sticky"
total_started=0 total_refused=0
for _ in $(seq 10); do
	starts 3
	total_started=$((total_started + STARTED)) total_refused=$((total_refused + REFUSED))
	# The link is there when the daemon looks, or was when it opened and is gone again.
	[ "$REFUSED" -eq "$(grep -cE "record.dir $T/sticky/rec: (a symbolic link|replaced while it was opened \(a symbolic link\?\))" "$T/refused")" ] ||
		fail "a refusal does not say record.dir is a link: $(cat "$T/refused")"
	if [ -d "$T/sticky/rec" ] && [ ! -L "$T/sticky/rec" ]; then
		[ "$(stat -c %U:%a "$T/sticky/rec")" = entropyd:700 ] ||
			fail "record.dir is $(stat -c %U:%a "$T/sticky/rec"), want entropyd:700"
		rm -rf -- "$T/sticky/rec" # with what the start recorded
	fi
done
racer_done
secret_intact "a racer in a sticky directory"
pass "record.dir in a sticky directory under a racer ($RACED): $total_started starts, $total_refused refused as a link; nothing given away"

# A link put there by root is refused too; so is a directory anyone may write.
ln -s "$SECRET" "$T/link"
write_config "$T/r.conf" "record = { dir = \"$T/link\"; };"
starts 1
[ "$REFUSED" -eq 1 ] && grep -qF "record.dir $T/link: a symbolic link" "$T/log" ||
	fail "record.dir as a link was not refused: $(cat "$T/log")"
secret_intact "record.dir a link"
mkdir -m 0777 "$T/open"
write_config "$T/r.conf" "record = { dir = \"$T/open\"; };"
starts 1
[ "$REFUSED" -eq 1 ] && grep -qF "record.dir $T/open: writable by anyone (mode 0777): chmod o-w $T/open" "$T/log" ||
	fail "a world-writable record.dir was not refused: $(cat "$T/log")"
pass "record.dir: a link, or a directory anyone may write, is refused with the fix"
