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
