#!/bin/bash
# t_manoutput: what the programs print is what their pages say, both ways — the JSON keys of
# entropyctl --json (status, sources, reload) against entropyctl(8), every metric family and
# its HELP text against entropyctl(8)'s list, and the keys of entropyd --assess --json against
# entropyd(8). (t_manpages does the same for the configuration's keys.)
. "$(dirname "$0")/lib.sh"

command -v jq > /dev/null || skip "jq is not installed (it reads the JSON; apt-get install jq)"
MAN=$top_builddir/man
ctl() { "$ENTROPYCTL" -s "$CTL_SOCKET" "$@"; }

# same WHAT PRODUCED-FILE DOCUMENTED-FILE: the two sorted lists are equal, or say how not
same() {
	local extra
	extra=$(comm -23 "$2" "$3" | tr '\n' ' ')
	[ -z "$extra" ] || fail "$1: produced but not documented: $extra"
	extra=$(comm -13 "$2" "$3" | tr '\n' ' ')
	[ -z "$extra" ] || fail "$1: documented but not produced: $extra"
}
# keys FILE...: every object key in the JSON files, once
keys() { jq -r '[paths | map(select(type == "string")) | last | select(. != null)] | .[]' "$@" | sort -u; }
# bold PAGE START: the words set in bold (.B, .BR, .RB) from the line matching START to the
# next .TP or .SH, that look like keys
bold() {
	sed -n "/$2/,/^\\.\\(TP\\|SH\\)/p" "$1" | sed 1d | grep -E '^\.(B|BR|RB) ' |
		sed -E 's/^\.[A-Z]+ //; s/\\\(dq//g' | tr ' ' '\n' | sed -E 's/[(),;:."]//g' |
		grep -E '^[a-z_][a-z0-9_]*$' | sort -u
}

# ---- a daemon with an instance that has seen events, and one class disabled ----
write_config "$T/e.conf" 'feed = { mode = "always"; };' \
	'policy = { block = { mode = "disabled"; }; network = { mode = "disabled"; }; };'
# What entropyd in the initramfs did (Seed.initramfs) comes from a boot record of root's.
REC=$T/boot.json
[ "$(id -u)" -eq 0 ] && printf '{"version":1,"boot_id":"%s","started_s":1.5,"ran_s":4,"ended":true,"ready_at_start":false,"needed_bits_at_start":256,"ready_after_s":1.2,"credited_bits":256,"credited_before_ready_bits":256,"sources":[{"class":"block","name":"vda","events":10,"credited_bits":256}]}' \
	"$(cat /proc/sys/kernel/random/boot_id)" > "$REC"
start_fifo_daemon -v --dry-run --boot-record "$REC" -f "$T/e.conf"
"$EVGEN" -n 2000 -s 10 -p random -r 1 >&9 2> /dev/null
arrived() { ctl --json sources | jq_holds '.sources[0].events == 2000' > /dev/null; }
wait_for 10 arrived || fail "the events did not arrive"

# ---- entropyctl --json against entropyctl(8) ----
ctl --json status > "$T/status.json" || fail "--json status"
ctl --json sources > "$T/sources.json" || fail "--json sources"
ctl --json reload > "$T/reload.json" || fail "--json reload"
echo 'policy = { input = { mode = "sometimes"; }; };' >> "$T/e.conf"
ctl --json reload > "$T/refused.json" 2> /dev/null && fail "a bad reload was not refused"
jq_holds '.reloaded == false and (.errors | length) == 1' "$T/refused.json" > /dev/null ||
	fail "the refused reload: $(cat "$T/refused.json")"
keys "$T/status.json" "$T/sources.json" "$T/reload.json" "$T/refused.json" > "$T/produced"
# the commands named in the paragraph are not keys; a sampling object's members come only
# from a network interface, which this daemon has not (t_pcap reads them from a live one)
bold "$MAN/entropyctl.8" '^\.BR \\-j ", " \\-\\-json' | grep -vxE 'status|reload|metrics' |
	grep -vxE 'ratio|arrival_rate' |
	if [ "$(id -u)" -eq 0 ]; then cat; else grep -vxE 'started_s|ran_s|ended'; fi > "$T/documented"
same "entropyctl --json and entropyctl(8)" "$T/produced" "$T/documented"
pass "entropyctl --json: the $(wc -l < "$T/produced") keys of status, sources and reload are those entropyctl(8) documents"

# ---- metrics against entropyctl(8)'s list of families ----
ctl metrics > "$T/metrics" || fail "metrics"
sed -n 's/^# HELP \([a-z_]*\) \(.*\)$/\1\t\2/p' "$T/metrics" | sort > "$T/help.produced"
# the list: ".B name" after ".TP", then its text up to the next .TP or .RE, joined, unescaped
sed -n '/^\.B metrics$/,/^\.SH/p' "$MAN/entropyctl.8" | awk '
	prev == ".TP" && $1 == ".B" && $2 ~ /^entropyd_/ { if (name) print name "\t" text; name = $2; text = ""; prev = $0; next }
	name && ($0 == ".TP" || $0 == ".RE") { print name "\t" text; name = "" }
	name && $0 !~ /^\./ { text = text (text == "" ? "" : " ") $0 }
	{ prev = $0 }' | sed 's/\\-/-/g; s/\\e/\\/g' | sort > "$T/help.documented"
# present only once the CRNG became ready while the daemon ran, for a network interface
# (which this daemon has not), or with the block tracepoint (t_block reads it): their HELP is
# checked in the program's text instead
for fam in entropyd_kernel_crng_ready_after_seconds entropyd_source_sample_ratio \
	entropyd_source_arrival_rate_per_second entropyd_block_unsampled_completions_total; do
	grep -q "^$fam" "$T/help.produced" && continue
	line=$(grep "^$fam	" "$T/help.documented")
	[ -n "$line" ] || fail "entropyctl(8) does not list $fam"
	grep -qaF "$(echo "$line" | cut -f2)" "$ENTROPYCTL" ||
		fail "$fam: entropyctl(8)'s text is not the program's"
	grep -v "^$fam	" "$T/help.documented" > "$T/h" && mv "$T/h" "$T/help.documented"
done
cut -f1 "$T/help.produced" > "$T/fam.produced"
cut -f1 "$T/help.documented" > "$T/fam.documented"
same "metric families and entropyctl(8)" "$T/fam.produced" "$T/fam.documented"
diff "$T/help.produced" "$T/help.documented" > "$T/help.diff" ||
	fail "HELP texts differ (< produced, > entropyctl(8)): $(cat "$T/help.diff")"
pass "metrics: $(wc -l < "$T/fam.produced") families, each with the HELP text entropyctl(8) gives"
exec 9>&-
stop_daemon

# ---- entropyd --assess --json against entropyd(8) ----
DATA=$top_srcdir/tests/data/sp80090b
: > "$T/empty.conf"
"$ENTROPYD" --assess "$DATA/rand8_short.bin" --bits 8 --json -f "$T/empty.conf" 2> /dev/null \
	> "$T/assess.json" || fail "--assess --json"
"$ENTROPYD" --assess "$DATA/rand8_short.bin" --bits 8 --class network --instance eth0 --json \
	-f "$T/empty.conf" 2> /dev/null > "$T/assess-i.json" || fail "--assess --instance --json"
# the members of details are "named as in ea_non_iid -v": not listed one by one
jq -r '[paths | map(select(type == "string")) | select(length > 0) |
	select(.[0] != "details" or length <= 2) | last] | unique | .[]' "$T/assess.json" "$T/assess-i.json" | sort -u > "$T/produced"
# the program whose names details follows is no key
bold "$MAN/entropyd.8" '^\.B \\-\\-json$' | grep -vx ea_non_iid > "$T/documented"
same "entropyd --assess --json and entropyd(8)" "$T/produced" "$T/documented"
pass "entropyd --assess --json: the $(wc -l < "$T/produced") keys are those entropyd(8) documents"
