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
broken priv_dispatch.c '#include <linux/random.h>' \
	'includes <linux/random.h>: only priv_ops includes the headers of the privileged interfaces'
broken block_tp.c '#include <linux/if_packet.h>' \
	'includes <linux/if_packet.h>: only priv_ops includes the headers of the privileged interfaces'
broken priv.c 'static int reseed(int fd) { return ioctl(fd, RNDRESEEDCRNG); }' \
	'names RNDRESEEDCRNG: only priv_ops makes the privileged system calls'
broken priv_dispatch.c 'static int s(void) { return (int)syscall(SYS_socket, AF_PACKET, SOCK_RAW, 0); }' \
	'names socket(AF_PACKET): only priv_ops makes the privileged system calls'
broken net.c '	setsockopt(fd, SOL_SOCKET, SO_LOCK_FILTER, &one, sizeof(one));' \
	'names SO_LOCK_FILTER: only priv_ops makes the privileged system calls'
broken priv_dispatch.c '#include <linux/bpf.h>' \
	'includes <linux/bpf.h>: only priv_ops includes the headers of the privileged interfaces'
broken priv_filter_bpf.c 'static long map(void *a) { return syscall(SYS_bpf, 0, a, 72); }' \
	'names SYS_bpf: only priv_ops makes the privileged system calls'
pass "an include that runs up a layer, across drivers, into entropyctl or into the privileged steps fails, naming file, line and rule"
pass "a privileged interface's header or request outside priv_ops fails, naming file, line and rule"

# Named in a comment or a message, a request is not a call.
rm -rf "$T/src" && cp -r "$top_srcdir/src" "$T/src" || fail "cannot copy src/"
printf '%s\n' '/* RNDRESEEDCRNG, as the sink says */' 'static const char *m = "BLKTRACESETUP failed";' >> "$T/src/feed_sink.c"
"$CHECK" "$T/src" > "$T/out" 2>&1 || fail "a request named in a comment or a string failed: $(cat "$T/out")"
pass "a request named in a comment or a string passes"

# What the privileged process runs after the fork links only the privileged side's files, the
# utilities and the configuration: the link map of tests/helpers/privlinked says.
MAP=$top_builddir/tests/helpers/privlinked.map
[ -s "$MAP" ] || fail "no link map $MAP: tests/helpers/privlinked was not built"
"$CHECK" --linked "$MAP" > "$T/out" 2>&1 || fail "the privileged process links more: $(cat "$T/out")"
pass "the privileged process links only its own files, the utilities and the configuration"
# A copy of the map in which its dispatch needed the collector's pipeline.
awk '{ print } /^Archive member included/ {
	print "src/libentropyd.a(feed_pipeline.o)"
	print "                              priv_dispatch.o (feed_pipeline_sample)" }' "$MAP" > "$T/map"
if "$CHECK" --linked "$T/map" > "$T/out" 2>&1; then
	fail "a map with feed_pipeline.o linked into the privileged process passed"
fi
want="$T/map: feed_pipeline.o, linked for priv_dispatch.o (feed_pipeline_sample): the privileged process links only its own files, the utilities and the configuration"
grep -qxF "$want" "$T/out" || fail "want \"$want\", got: $(cat "$T/out")"
[ "$(wc -l < "$T/out")" = 1 ] || fail "more than the one file: $(cat "$T/out")"
pass "a file of the collector linked into the privileged process fails, naming it and why it was linked"
