#!/bin/sh
# check-layers.sh [SRCDIR]: the layers of src/, checked over its #include lines (make
# check-layers; make check runs it as tests/integration/t_layers.sh). A file may include headers of its
# own layer and of the layers below it, never above; the drivers never include another
# class's files; entropyctl includes only the protocol and the utilities; the privileged
# steps (priv_ops) only the utilities and the wire format. Each broken rule is printed as
# FILE:LINE: what it includes, and the rule; the exit status is 1 if there is any.
#
# The layers, from the bottom (HACKING.md explains them); a file's layer is found by its
# name, the first pattern that matches:
#   0 base      util log kernel kernel_seed kernel_boot ctl_proto block_blktrace_parse est_90b_num
#   1 config    config config_* source_class source_classes block_disks
#   2 priv      priv priv_*
#   3 est       est est_*
#   4 feed      feed feed_*
#   5 source    source source_*
#   6 driver    block block_* input input_* net net_*   (a class never includes another's)
#   7 control   ctl
#   8 program   daemon entropyd entropyctl entropyctl_*
set -u
src=${1:-$(dirname "$0")/../src}
[ -d "$src" ] || { echo "check-layers: no directory $src" >&2; exit 2; }

# shellcheck disable=SC2046
awk '
function layer(s) {
	if (s ~ /^(util|log|kernel|kernel_seed|kernel_boot|ctl_proto|block_blktrace_parse|est_90b_num)$/) return 0
	if (s ~ /^(config|config_.*|source_class|source_classes|block_disks)$/) return 1
	if (s ~ /^priv(_.*)?$/) return 2
	if (s ~ /^est(_.*)?$/) return 3
	if (s ~ /^feed(_.*)?$/) return 4
	if (s ~ /^source(_.*)?$/) return 5
	if (s ~ /^(block|input|net)(_.*)?$/) return 6
	if (s ~ /^ctl$/) return 7
	if (s ~ /^(daemon|entropyd|entropyctl(_.*)?)$/) return 8
	return -1
}
function class(s) { sub(/_.*/, "", s); return s }
function stem(path) { sub(/.*\//, "", path); sub(/\.[ch]$/, "", path); return path }
function bad(rule) {
	printf "%s:%d: includes \"%s.h\": %s\n", FILENAME, FNR, inc, rule
	errors++
}
BEGIN {
	split("base config priv est feed source driver control program", NAME, " ")
}
FNR == 1 {
	me = stem(FILENAME)
	if (layer(me) < 0) {
		printf "%s:1: no layer for \"%s\": add it to the table in tests/check-layers.sh\n",
		       FILENAME, me
		errors++
	}
}
/^#include "/ {
	inc = $0
	sub(/^#include "/, "", inc)
	sub(/".*/, "", inc)
	sub(/\.h$/, "", inc)
	if (inc == "autoconf" || inc == me || layer(me) < 0)
		next
	l = layer(inc); m = layer(me)
	if (l < 0)
		bad("no layer for it: add it to the table in tests/check-layers.sh")
	else if (l > m)
		bad(sprintf("layer %s includes only its own and the layers below, not %s",
			    NAME[m + 1], NAME[l + 1]))
	else if (l == 6 && m == 6 && class(inc) != class(me))
		bad(sprintf("a driver (%s) never includes another class'"'"'s files (%s)",
			    class(me), class(inc)))
	else if (me ~ /^entropyctl/ && inc !~ /^(ctl_proto|util|entropyctl(_.*)?)$/)
		bad("entropyctl includes only the protocol (ctl_proto) and the utilities")
	else if (me ~ /^priv_(ops|wire)$/ && l != 0 && inc !~ /^priv_(ops|wire)$/)
		bad("the privileged steps include only the utilities and the wire format")
}
END { exit errors > 0 }
' $(ls "$src"/*.c "$src"/*.h)
