#!/bin/bash
# t_conf_edits: the shipped configuration edits cleanly. Each common change an administrator
# makes to conf/entropyd.conf is one line, and the file so edited passes "entropyd -n" with
# "configuration OK" and takes effect (entropyd -p shows it).
. "$(dirname "$0")/lib.sh"

SHIPPED=$top_srcdir/conf/entropyd.conf
# edit NAME GROUP-PATH KEY VALUE: in a copy of the shipped file, the line "KEY = ...;" first
# found inside the group GROUP-PATH (e.g. policy.network) gets VALUE; exactly one line
# changes.
edit() {
	local name=$1 path=$2 key=$3 value=$4
	awk -v path="$path" -v key="$key" -v value="$value" '
		BEGIN { n = split(path, want, ".") }
		{
			line = $0
			if (match(line, /^[ \t]*[a-z_]+ = \{/)) {
				g = line; sub(/^[ \t]*/, "", g); sub(/ .*/, "", g)
				stack[++depth] = g
			}
			cur = ""
			for (i = 1; i <= depth; i++) cur = cur (i > 1 ? "." : "") stack[i]
			if (!done && cur == path && match(line, "^[ \t]*" key " = ")) {
				indent = line; sub(/[^ \t].*/, "", indent)
				print indent key " = " value ";"
				done = 1
				next
			}
			if (line ~ /^[ \t]*\};/) depth--
			print line
		}
		END { if (!done) exit 1 }' "$SHIPPED" > "$T/$name.conf" ||
		fail "$name: no line $key in $path of the shipped file"
	[ "$(diff "$SHIPPED" "$T/$name.conf" | grep -c '^>')" -eq 1 ] ||
		fail "$name: not a one-line edit: $(diff "$SHIPPED" "$T/$name.conf")"
}
# check NAME PATTERN: the edited file passes -n, and -p shows PATTERN (an extended regex).
check() {
	local out
	out=$("$ENTROPYD" -n -f "$T/$1.conf" 2>&1) || fail "$1: refused: $out"
	[ "$out" = "configuration OK" ] || fail "$1: -n printed: $out"
	"$ENTROPYD" -p -f "$T/$1.conf" > "$T/$1.p" 2>&1 || fail "$1: -p: $(cat "$T/$1.p")"
	sed 's/ *#.*//' "$T/$1.p" | tr -d '\n' | grep -qE -- "$2" || fail "$1: not in effect: $(cat "$T/$1.p")"
	pass "$1: one line, configuration OK, in effect"
}

out=$("$ENTROPYD" -n -f "$SHIPPED" 2>&1) || fail "the shipped file is refused: $out"

edit network-disabled policy.network mode '"disabled"'
check network-disabled 'network = \{ *mode = "disabled";'
edit network-mix-only policy.network mode '"mix-only"'
check network-mix-only 'network = \{ *mode = "mix-only";'
edit network-trusted policy.network mode '"trusted"'
check network-trusted 'network = \{ *mode = "trusted";'
edit input-mix-only policy.input mode '"mix-only"'
check input-mix-only 'input = \{ *mode = "mix-only";'
edit block-disabled policy.block mode '"disabled"'
check block-disabled 'block = \{ *mode = "disabled";'
edit trust-interface policy.network instances '( { name = "lo"; mode = "trusted"; } )'
check trust-interface 'name = "lo"; *mode = "trusted";'
edit reduce-interface policy.network instances '( { name = "lo"; mode = "reduced"; scale = 0.5; } )'
check reduce-interface 'name = "lo"; *mode = "reduced"; *scale = 0.5;'
edit network-scale policy.network '#scale' '0.1'
sed -i 's/#scale = 0.1;/scale = 0.1;/' "$T/network-scale.conf"
check network-scale 'network = \{ *mode = "reduced"; *scale = 0.1;'
edit block-cap policy.block cap_bits_per_second 64.0
check block-cap 'block = \{[^}]*cap_bits_per_second = 64(\.0)?;'
edit input-cap policy.input cap_bits_per_event 1.0
check input-cap 'input = \{[^}]*cap_bits_per_event = 1(\.0)?;'
edit block-tracepoint sources.block backend '"tracepoint"'
check block-tracepoint 'backend = "tracepoint";'
edit block-blktrace sources.block backend '"blktrace"'
check block-blktrace 'backend = "blktrace";'
edit no-virtual-input sources.input exclude_virtual false
check no-virtual-input 'exclude_virtual = false;'
edit one-interface sources.network interfaces '[ "lo" ]'
check one-interface 'interfaces = \[ *"lo" *\];'
edit feed-boot feed mode '"boot"'
check feed-boot 'feed = \{ *mode = "boot";'

# The common edit beside a scale left from before (network-scale above): network turned off
# in one line. The scale no longer applies; -n names it in a notice and the file is valid,
# and -p, what is in effect, has no scale for network.
cp "$T/network-scale.conf" "$T/disabled-scale-left.conf"
sed -i 's/^\( *\)mode = "reduced";$/\1mode = "disabled";/' "$T/disabled-scale-left.conf"
[ "$(diff "$T/network-scale.conf" "$T/disabled-scale-left.conf" | grep -c '^>')" -eq 1 ] ||
	fail "disabled-scale-left: not a one-line edit"
line=$(grep -n '^ *scale = 0.1;$' "$T/disabled-scale-left.conf" | cut -d: -f1)
out=$("$ENTROPYD" -n -f "$T/disabled-scale-left.conf" 2>&1) || fail "disabled-scale-left: refused: $out"
want="$T/disabled-scale-left.conf:$line: notice: policy.network.scale: scale applies only to mode \"reduced\" (the mode here is \"disabled\"); ignored"
[ "$out" = "$want"$'\n'"configuration OK" ] || fail "disabled-scale-left: -n printed: $out"
"$ENTROPYD" -p -f "$T/disabled-scale-left.conf" 2> /dev/null | sed 's/ *#.*//' | tr -d '\n' |
	grep -qE 'network = \{ *mode = "disabled"; *cap_bits_per_event' ||
	fail "disabled-scale-left: not in effect: $("$ENTROPYD" -p -f "$T/disabled-scale-left.conf" 2>&1)"
pass "disabled-scale-left: one line, a notice naming line $line and the key, configuration OK"
