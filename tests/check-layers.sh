#!/bin/sh
# check-layers.sh [SRCDIR]: the layers of src/, checked over its #include lines (make
# check-layers; make check runs it as tests/integration/t_layers.sh). A file may include headers of its
# own layer and of the layers below it, never above; the drivers never include another
# class's files; entropyctl includes only the protocol and the utilities; the privileged
# steps (priv_ops) only the utilities and the wire format. Every privileged system call is
# priv_ops.c's: only it includes the headers of the privileged interfaces (but for the
# readers of what those interfaces hand over, named below) and only it names their requests
# in code. Each broken rule is printed as FILE:LINE: what it includes or names, and the
# rule; the exit status is 1 if there is any.
#
# check-layers.sh --linked MAP: the link map (ld -Map) of what the privileged process runs
# after the fork (tests/helpers/privlinked): every file of src/ linked into it is one of the
# privileged side's, a utility or the configuration's. Each other is printed as
# MAP: FILE.o, linked for SYMBOL of FILE.o, and the rule.
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
#   7 control   ctl ctl_reply
#   8 program   daemon entropyd entropyctl entropyctl_*
set -u

# The privileged process's own files: its start (priv_drop drops what it does not keep), its
# loop, dispatch, policy and system calls, the socket filter it sets (and its eBPF form) and
# the trust check of the files it reads.
PRIVILEGED='priv_drop|priv_serve|priv_dispatch|priv_policy|priv_ops|priv_filter|priv_filter_bpf|priv_trust|priv_wire'

if [ "${1:-}" = --linked ]; then
	map=${2:?usage: check-layers.sh --linked MAP}
	[ -r "$map" ] || { echo "check-layers: no link map $map" >&2; exit 2; }
	awk -v privileged="^($PRIVILEGED)\$" -v map="$map" '
	function layer_ok(s) {
		return s ~ privileged ||
		       s ~ /^(util|log|kernel|kernel_seed|kernel_boot|ctl_proto|block_blktrace_parse|est_90b_num)$/ ||
		       s ~ /^(config|config_.*|source_class|source_class_all|block_disks)$/ ||
		       s ~ /^(block|input|net)_class$/
	}
	function judge(member, why) {
		n++
		if (!layer_ok(member)) {
			sub(/^[ \t]+/, "", why)
			printf "%s: %s.o, linked for %s: the privileged process links only its own files, the utilities and the configuration\n", map, member, why
			errors++
		}
	}
	/^Archive member included/ { in_list = 1; next }
	in_list && /^(Discarded input sections|Allocating common symbols|Memory Configuration)/ {
		in_list = 0
	}
	!in_list { next }
	pending != "" { judge(pending, $0); pending = ""; next }
	/^[^ \t].*libentropyd\.a\([^)]*\.o\)/ {
		m = $0
		sub(/^.*libentropyd\.a\(/, "", m)
		rest = m
		sub(/\.o\).*/, "", m)
		sub(/^[^)]*\)/, "", rest)
		if (rest ~ /[^ \t]/)
			judge(m, rest)
		else
			pending = m
	}
	END {
		if (!n) {
			printf "%s: no member of libentropyd.a listed: not the link map of tests/helpers/privlinked\n", map
			exit 1
		}
		exit errors > 0
	}' "$map"
	exit
fi

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
	if (s ~ /^ctl(_reply)?$/) return 7
	if (s ~ /^(daemon|entropyd|entropyctl(_.*)?)$/) return 8
	return -1
}
function class(s) { sub(/_.*/, "", s); return s }
# The headers of the privileged interfaces: priv_ops alone, but for the files named, which
# read what the interface hands over or name its calls to the filter of the collector.
function privileged_header(h) {
	return h ~ /^(linux\/random|linux\/blktrace_api|linux\/perf_event|linux\/bpf|linux\/if_packet|netpacket\/packet)\.h$/
}
function header_reader(h, s) {
	if (h == "linux/blktrace_api.h")
		return s == "block_blktrace_parse" # the records a trace writes
	if (h == "linux/perf_event.h")
		return s ~ /^block_tp(_.*)?$/ || s == "priv_sandbox" # the ring; the ioctls the filter allows
	if (h == "linux/bpf.h")
		return s == "priv_filter_bpf" # the instructions of the program it builds
	if (h == "linux/if_packet.h" || h == "netpacket/packet.h")
		return s == "priv_filter" || s == "priv_sandbox" # packet types in its program; the options allowed
	return 0
}
# The line without its comments and string literals (incomment carries a /* */ across lines).
function code(line,    out, c, i, n, q) {
	out = ""
	n = length(line)
	for (i = 1; i <= n; i++) {
		c = substr(line, i, 1)
		if (incomment) {
			if (c == "*" && substr(line, i + 1, 1) == "/") { incomment = 0; i++ }
			continue
		}
		if (c == "/" && substr(line, i + 1, 1) == "*") { incomment = 1; i++; continue }
		if (c == "/" && substr(line, i + 1, 1) == "/") break
		if (c == "\"" || c == "'"'"'") {
			q = c
			for (i++; i <= n && substr(line, i, 1) != q; i++)
				if (substr(line, i, 1) == "\\") i++
			out = out " "
			continue
		}
		out = out c
	}
	return out
}
function bad_call(what) {
	printf "%s:%d: names %s: only priv_ops makes the privileged system calls\n", FILENAME, FNR, what
	errors++
}
function stem(path) { sub(/.*\//, "", path); sub(/\.[ch]$/, "", path); return path }
function bad(rule) {
	printf "%s:%d: includes \"%s.h\": %s\n", FILENAME, FNR, inc, rule
	errors++
}
BEGIN {
	split("base config priv est feed source driver control program", NAME, " ")
	# The requests of the privileged interfaces: /dev/random, blktrace, perf events, bpf(),
	# the filters and the address of a packet socket; and a packet socket made.
	REQUESTS = "(^|[^A-Za-z0-9_])(RND(ADDENTROPY|RESEEDCRNG|ADDTOENTCNT|CLEARPOOL|ZAPENTCNT)|" \
		   "BLKTRACE(SETUP|START|STOP|TEARDOWN)|(SYS|__NR)_(perf_event_open|bpf)|" \
		   "SO_(ATTACH_FILTER|ATTACH_BPF|DETACH_FILTER|LOCK_FILTER)|sockaddr_ll)([^A-Za-z0-9_]|$)"
	PACKET_SOCKET = "(^|[^A-Za-z0-9_])(socket[ \t]*\\(|SYS_socket[ \t]*,)[ \t]*(AF|PF)_PACKET"
}
FNR == 1 {
	incomment = 0
	me = stem(FILENAME)
	if (layer(me) < 0) {
		printf "%s:1: no layer for \"%s\": add it to the table in tests/check-layers.sh\n",
		       FILENAME, me
		errors++
	}
}
/^#include </ {
	h = $0
	sub(/^#include </, "", h)
	sub(/>.*/, "", h)
	if (privileged_header(h) && me != "priv_ops" && !header_reader(h, me)) {
		printf "%s:%d: includes <%s>: only priv_ops includes the headers of the privileged interfaces\n", FILENAME, FNR, h
		errors++
	}
}
me != "priv_ops" && me != "priv_sandbox" {
	# The requests of the privileged interfaces, in code (priv_sandbox names some to refuse
	# them in the collector).
	c = code($0)
	if (match(c, REQUESTS)) {
		w = substr(c, RSTART, RLENGTH)
		gsub(/^[^A-Za-z0-9_]+|[^A-Za-z0-9_]+$/, "", w)
		bad_call(w)
	} else if (match(c, PACKET_SOCKET))
		bad_call("socket(AF_PACKET)")
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
