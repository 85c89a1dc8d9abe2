#!/bin/bash
# t_layers: src/ keeps its layers (tests/check-layers.sh, HACKING.md): the tree as it is
# passes, and each rule, broken on purpose in a copy, fails naming the file, the line and the
# rule.
. "$(dirname "$0")/lib.sh"

CHECK=$top_srcdir/tests/check-layers.sh
"$CHECK" "$top_srcdir/src" > "$T/out" 2>&1 || fail "the tree breaks its layers: $(cat "$T/out")"
pass "src/ keeps its layers"

# broken FILE LINE WANT: a copy of src/ with LINE appended to FILE fails, saying WANT.
broken() {
	rm -rf "$T/src" && cp -r "$top_srcdir/src" "$T/src" || fail "cannot copy src/"
	echo "$2" >> "$T/src/$1"
	n=$(wc -l < "$T/src/$1")
	if "$CHECK" "$T/src" > "$T/out" 2>&1; then
		fail "$2 in $1 passed the layer check"
	fi
	grep -qxF "$T/src/$1:$n: $3" "$T/out" || fail "$2 in $1: want \"$1:$n: $3\", got: $(cat "$T/out")"
	[ "$(wc -l < "$T/out")" = 1 ] || fail "$2 in $1: more than the one broken rule: $(cat "$T/out")"
}
broken est.c '#include "ctl.h"' \
	'includes "ctl.h": layer est includes only its own and the layers below, not control'
broken block.c '#include "net.h"' \
	"includes \"net.h\": a driver (block) never includes another class's files (net)"
broken entropyctl.c '#include "config.h"' \
	'includes "config.h": entropyctl includes only the protocol (ctl_proto) and the utilities'
broken priv_ops.c '#include "config.h"' \
	'includes "config.h": the privileged steps include only the utilities and the wire format'
broken util.c '#include "nosuch.h"' \
	'includes "nosuch.h": no layer for it: add it to the table in tests/check-layers.sh'
pass "an include that runs up a layer, across drivers, into entropyctl or into the privileged steps fails, naming file, line and rule"
