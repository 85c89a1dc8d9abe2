#!/bin/bash
# t_names: every symbol a file of src/ exports names that file (tests/check-names.sh,
# HACKING.md "Names"): the tree as built passes, and each rule, broken on purpose in objects
# made for it, fails naming the file, the symbol and the rule.
. "$(dirname "$0")/lib.sh"

CHECK=$top_srcdir/tests/check-names.sh
objs=()
for c in "$top_srcdir"/src/*.c; do
	o=$top_builddir/src/$(basename "$c" .c).o
	[ -r "$o" ] || fail "no object $o for $c: build first"
	objs+=("$o")
done
"$CHECK" "$top_srcdir/HACKING.md" "${objs[@]}" > "$T/out" 2>&1 ||
	fail "the tree breaks its names: $(cat "$T/out")"
n=$(for o in "${objs[@]}"; do ${NM:-nm} -g --defined-only "$o"; done | grep ' [TDRBV] ' | grep -vc ' __')
[ "$n" -ge 100 ] || fail "only $n symbols read from ${#objs[@]} objects: nm cannot read them"
pass "the $n symbols of ${#objs[@]} files of src/ name their files"

# object FILE C: $T/obj/FILE.o compiled from the C text.
object() {
	mkdir -p "$T/obj" && printf '%s\n' "$2" > "$T/obj/$1.c" &&
		${CC:-cc} -c -o "$T/obj/$1.o" "$T/obj/$1.c" || fail "cannot compile $1.c"
}
# verdict WANT: the objects made so far fail the check, saying exactly WANT.
verdict() {
	if "$CHECK" "$top_srcdir/HACKING.md" "$T"/obj/*.o > "$T/out" 2>&1; then
		fail "passed the name check, want: $1"
	fi
	[ "$(cat "$T/out")" = "$1" ] || fail "want \"$1\", got: $(cat "$T/out")"
	rm -rf "$T/obj"
}
object est_health 'int health_feed(void) { return 0; }'
verdict 'est_health: health_feed: does not begin with "est_health_" nor with an alias of HACKING.md for it'
object config_policy 'int config_policy_credit(void) { return 0; }'
object config 'int config_policy_mode_name(void) { return 0; }'
verdict 'config: config_policy_mode_name: reads as a name of config_policy.c'
object est_90b_bits 'int sp90b_markov(void) { return 0; }'
object util 'int xmalloc(void) { return 0; }'
object est 'int sp90b_lag(void) { return 0; }'
verdict 'est: sp90b_lag: does not begin with "est_" nor with an alias of HACKING.md for it'
# What a sanitizer build adds beside each global (ASan's "__odr_asan.NAME") is not ours.
object est_health 'int est_health_feed(void) { return 0; }
char odr_indicator __asm__("__odr_asan.est_health_table");'
"$CHECK" "$top_srcdir/HACKING.md" "$T"/obj/*.o > "$T/out" 2>&1 ||
	fail "a sanitizer's __odr_asan. name is taken for ours: $(cat "$T/out")"
rm -rf "$T/obj"
pass "a name without its file's prefix, one that reads as another file's, and an alias used outside its files fail, naming file, symbol and rule; a sanitizer's own names pass"
