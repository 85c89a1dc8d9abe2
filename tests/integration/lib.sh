# lib.sh: shared helpers for entropyd's shell tests; each test runs a private daemon with its
# own config and directories, and removes everything it made.
set -u

: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
: "${ENTROPYD:=$top_builddir/src/entropyd}"
EVGEN=$top_builddir/tests/helpers/evgen
NOTIFY_SINK=$top_builddir/tests/helpers/notify_sink
: "${ENTROPYCTL:=$top_builddir/src/entropyctl}"

T=$(mktemp -d "${TMPDIR:-/tmp}/entropyd-test.XXXXXX")
# The collector runs as its own user (entropyd(8)): it reads the configuration, the
# watched directory and the files the tests make here.
chmod 0755 "$T"
CTL_SOCKET=$T/run/io.entropyd # every test daemon has its own control socket
DAEMON_PID=
cleanup() {
	IN_CLEANUP=1
	[ -n "$DAEMON_PID" ] && kill_daemon KILL
	exec 9>&- 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; [ -f "$T/log" ] && sed 's/^/  log: /' "$T/log" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
pass() { echo "PASS: $*"; }

# ---- the daemon is two processes: the main (privileged) one this shell started, and the
# collector, its child. A test that ends "the daemon" waits for both: the collector dies of
# its parent's death (PR_SET_PDEATHSIG), but only when the scheduler next runs it, and until
# then its listening socket still queues connections that its death then resets. ----
# proc_id PID: PID and its start time (so a PID used again is not taken for it), or nothing.
proc_id() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	set -- "$1" ${stat##*) } # the fields after the command name, which may hold spaces
	case $2 in Z | X) return 1 ;; esac # a zombie has let go of its descriptors
	echo "$1:${21}"
}
# daemon_procs: the daemon's processes, $DAEMON_PID and every descendant (the collector; a
# launcher's child where a launcher does not exec), one proc_id a line.
daemon_procs() {
	local todo=("$DAEMON_PID") p
	while [ "${#todo[@]}" -gt 0 ]; do
		p=${todo[0]}; todo=("${todo[@]:1}")
		proc_id "$p" || continue
		# shellcheck disable=SC2207 # a list of numbers
		todo+=($(cat /proc/"$p"/task/*/children 2>/dev/null || pgrep -P "$p"))
	done
}
procs_gone() { # procs_gone PROC_ID...: none of them is still running
	local id
	for id in "$@"; do [ "$(proc_id "${id%%:*}")" = "$id" ] && return 1; done
	return 0
}
# kill_daemon [SIGNAL]: send SIGNAL (default KILL) to the daemon's main process and wait
# until every process of the daemon, the collector too, is gone (10 s at most: fails naming
# what still runs); DAEMON_PID is cleared. The main process's status is in DAEMON_STATUS.
kill_daemon() {
	local procs p
	procs=$(daemon_procs)
	kill -"${1:-KILL}" "$DAEMON_PID" 2>/dev/null
	DAEMON_STATUS=0
	wait "$DAEMON_PID" 2>/dev/null || DAEMON_STATUS=$?
	DAEMON_PID=
	# shellcheck disable=SC2086 # a word list
	wait_for 10 procs_gone $procs && return 0
	for p in $procs; do procs_gone "$p" || break; done
	p=${p%%:*}
	p="process $p ($(cat "/proc/$p/comm" 2>/dev/null)) of the daemon still runs 10 s after the main one ended on SIG${1:-KILL}"
	[ -z "${IN_CLEANUP:-}" ] || { echo "cleanup: $p" >&2; return 1; }
	fail "$p"
}

# jq_holds ARGS...: jq -e ARGS (a filter, over stdin or the files named), failing also when
# there was no JSON to judge: jq 1.6 exits 0 on empty input, so a row that went missing, read
# as "", would pass whatever the filter says.
jq_holds() {
	local out
	out=$(jq -e "$@") || return
	[ -n "$out" ] || { echo "jq_holds: no JSON to judge" >&2; return 1; }
	printf '%s\n' "$out"
}

# wait_for SECONDS COMMAND...: poll COMMAND every 0.1 s, give up after SECONDS.
wait_for() {
	local limit=$(($1 * 10)); shift
	for _ in $(seq "$limit"); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# A config with a private watch directory and control socket ($CTL_SOCKET); only the input
# class runs. Extra lines (libconfig groups) may follow as arguments, e.g.
# 'feed = { mode = "always"; };'; a "control = ..." line replaces the default one.
write_config() {
	local file=$1 line control="control = { socket = \"$CTL_SOCKET\"; };"; shift
	mkdir -p "$T/input"
	for line in "$@"; do case $line in control*) control=;; esac; done
	{
		echo "sources = { input = { watch = \"$T/input\"; }; };"
		for line in "$@"; do echo "$line"; done
		echo "$control"
	} > "$file"
}

# start_daemon ARGS...: entropyd in the foreground, logging to $T/log; under $WRAP (a
# command and its options, e.g. "setpriv --bounding-set=-setpcap") if set; it has
# START_WAIT seconds (10) to say it started.
start_daemon() {
	: > "$T/log" # emptied before the daemon starts, so no earlier "started:" is read
	${WRAP:-} "$ENTROPYD" --foreground "$@" >> "$T/log" 2>&1 &
	DAEMON_PID=$!
	wait_for "${START_WAIT:-10}" grep -q "started:" "$T/log" || fail "daemon did not start"
}

# stop_daemon: SIGTERM, wait for both processes, and check it exited 0.
stop_daemon() {
	kill_daemon TERM
	[ "$DAEMON_STATUS" -eq 0 ] || fail "daemon exited with status $DAEMON_STATUS after SIGTERM"
}

# traced PID...: wait (10 s at most) until a tracer (strace -p, started just before) has
# attached to each PID; what the process does before that would not be seen.
traced() {
	local p
	for p in "$@"; do
		wait_for 10 sh -c '! grep -qE "^TracerPid:[[:space:]]+0$" "/proc/$1/status"' _ "$p" ||
			fail "no tracer attached to process $p within 10 s"
	done
}

# Ask the daemon for its counters and wait until PATTERN shows in the log.
wait_summary() {
	local pattern=$1
	for _ in $(seq 50); do
		kill -USR1 "$DAEMON_PID"
		sleep 0.1
		grep -qE "$pattern" "$T/log" && return 0
	done
	return 1
}

# Open FIFO for writing on fd 9 and keep it open, so the reader never sees EOF mid-test.
open_fifo() { exec 9>"$1"; }

# start_fifo_daemon ARGS...: the daemon started with ARGS on a FIFO made as $T/input/event0,
# once it has attached it, with the FIFO open on fd 9 (open_fifo).
start_fifo_daemon() {
	mkfifo "$T/input/event0"
	start_daemon "$@"
	wait_for 5 grep -q "input/event0: attached" "$T/log" || fail "FIFO not attached"
	open_fifo "$T/input/event0"
}

# ---- the packet source (t_pcap*.sh): two network namespaces made here, $NA where tests/helpers/udpgen
# sends and $NB where the daemon captures, joined by veth pairs; no traffic leaves them ----
UDPGEN=$top_builddir/tests/helpers/udpgen
SOURCES=10.77.0.11,10.77.0.12,10.77.0.13,10.77.0.14 # udpgen's source addresses on $VA

# netns_pair: the namespaces (removed by name at exit) and the names of the first veth pair,
# $VA in $NA and $VB in $NB; skips without root or ip.
netns_pair() {
	local ns
	[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, packet capture)"
	command -v ip > /dev/null || skip "needs ip (iproute2)"
	NA=edpA$$ NB=edpB$$ VA=edpa$$ VB=edpb$$
	trap 'cleanup; netns_cleanup' EXIT
	ip netns add "$NA" 2> /dev/null && ip netns add "$NB" || skip "cannot make network namespaces"
	for ns in "$NA" "$NB"; do ip -n "$ns" link set lo up; done
}
netns_cleanup() {
	ip netns del "$NA" 2> /dev/null
	ip netns del "$NB" 2> /dev/null
}

mac() { ip -n "$1" -br link show "$2" | awk '{print $3}'; } # mac NETNS DEV

# make_link [A B NET]: a veth pair, addressed: A in $NA as NET.1, B in $NB as NET.2; by default
# $VA and $VB on 10.77.0, $VA with $SOURCES too. Static neighbour entries, so no ARP, and no
# IPv6 chatter.
make_link() {
	local a=${1:-$VA} b=${2:-$VB} net=${3:-10.77.0} s
	ip link add "$a" netns "$NA" type veth peer name "$b" netns "$NB" || fail "veth $a-$b"
	ip netns exec "$NA" sysctl -qw "net.ipv6.conf.$a.disable_ipv6=1"
	ip netns exec "$NB" sysctl -qw "net.ipv6.conf.$b.disable_ipv6=1"
	ip -n "$NA" addr add "$net.1/24" dev "$a"
	if [ "$a" = "$VA" ]; then
		for s in ${SOURCES//,/ }; do ip -n "$NA" addr add "$s/24" dev "$a"; done
	fi
	ip -n "$NB" addr add "$net.2/24" dev "$b"
	ip -n "$NA" link set "$a" up
	ip -n "$NB" link set "$b" up
	ip -n "$NA" neigh replace "$net.2" lladdr "$(mac "$NB" "$b")" dev "$a" nud permanent
	ip -n "$NB" neigh replace "$net.1" lladdr "$(mac "$NA" "$a")" dev "$b" nud permanent
}

# make_macvlan NAME: a macvlan on $VB, 10.79.0.2, reached from 10.79.0.1 on $VA.
make_macvlan() {
	ip -n "$NB" link add link "$VB" name "$1" type macvlan mode bridge || fail "macvlan"
	ip -n "$NB" addr add 10.79.0.2/24 dev "$1"
	ip -n "$NB" link set "$1" up
	ip -n "$NA" addr replace 10.79.0.1/24 dev "$VA"
	ip -n "$NA" neigh replace 10.79.0.2 lladdr "$(mac "$NB" "$1")" dev "$VA" nud permanent
}

# make_vxlan NAME: a VXLAN tunnel over the veth, 10.76.0.1 in $NA to 10.76.0.2 in $NB; what
# it carries arrives, encapsulated, on $VB first. unmake_vxlan NAME removes both ends.
make_vxlan() {
	local ns
	ip -n "$NA" link add "$1" type vxlan id 42 dstport 4789 local 10.77.0.1 remote 10.77.0.2 ||
		fail "vxlan"
	ip -n "$NB" link add "$1" type vxlan id 42 dstport 4789 local 10.77.0.2 remote 10.77.0.1 ||
		fail "vxlan"
	for ns in "$NA" "$NB"; do
		ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1"
		ip -n "$ns" link set "$1" up
	done
	ip -n "$NA" addr add 10.76.0.1/24 dev "$1"
	ip -n "$NB" addr add 10.76.0.2/24 dev "$1"
	ip -n "$NA" neigh replace 10.76.0.2 lladdr "$(mac "$NB" "$1")" dev "$1" nud permanent
	ip -n "$NB" neigh replace 10.76.0.1 lladdr "$(mac "$NA" "$1")" dev "$1" nud permanent
}
unmake_vxlan() { ip -n "$NA" link del "$1"; ip -n "$NB" link del "$1"; }
# auto_counts_vxlan_once SKIPPED: a daemon on auto (filter "udp", which takes the outer
# packet on the veth and the inner one on the tunnel) counts 400 arrivals through the VXLAN
# of make_vxlan once, on $VB, and captures none of the interfaces SKIPPED (an extended regex)
# matches. The daemon is left running, logging at debug level (what auto leaves out).
auto_counts_vxlan_once() {
	conf "interfaces = [ \"auto\" ]; filter = \"udp\";"
	start_daemon -vv --dry-run -f "$T/e.conf"
	started_capturing "$VB"
	send 400 50-500 10.76.0.1 9999 10.76.0.2
	events "$VB" 400
	[ "$(total)" -eq 400 ] || fail "auto with a VXLAN: $(total) events in all for 400 arrivals"
	grep -qE "network/($1): (attached|capturing)" "$T/log" && fail "auto captured $1"
}

# make_ifb NAME: an ifb device that every packet arriving on $VB is redirected to (tc
# mirred), where it is seen again, leaving. unmake_ifb NAME undoes it.
make_ifb() {
	ip -n "$NB" link add "$1" type ifb || fail "ifb"
	ip -n "$NB" link set "$1" up
	tc -n "$NB" qdisc add dev "$VB" ingress || fail "ingress qdisc"
	tc -n "$NB" filter add dev "$VB" parent ffff: protocol all u32 match u32 0 0 \
		action mirred egress redirect dev "$1" || fail "tc mirred"
}
unmake_ifb() { tc -n "$NB" qdisc del dev "$VB" ingress; ip -n "$NB" link del "$1"; }
# auto_counts_ifb_once NAME: a daemon on auto, timing both directions, counts 300 arrivals
# on $VB once, and does not capture the ifb of make_ifb NAME. The daemon is stopped.
auto_counts_ifb_once() {
	conf "interfaces = [ \"auto\" ]; filter = \"udp dst port 9999\"; direction = \"both\";"
	start_daemon -v --dry-run -f "$T/e.conf"
	started_capturing "$VB"
	send 300 50-500
	events "$VB" 300
	[ "$(total)" -eq 300 ] || fail "auto with an ifb: $(total) events in all for 300 arrivals"
	grep -qE "network/$1: (attached|capturing)" "$T/log" && fail "auto captured the ifb"
	stop_daemon
}

# make_bridge NAME: a bridge over $VB, with $VB's address; unmake_bridge NAME undoes it.
make_bridge() {
	ip -n "$NB" link add "$1" type bridge forward_delay 0 || fail "bridge"
	ip -n "$NB" addr del 10.77.0.2/24 dev "$VB"
	ip -n "$NB" link set "$VB" master "$1"
	ip -n "$NB" addr add 10.77.0.2/24 dev "$1"
	ip -n "$NB" link set "$1" up
}
unmake_bridge() {
	ip -n "$NB" link del "$1"
	ip -n "$NB" addr add 10.77.0.2/24 dev "$VB"
}

# daemon_in_ns [LAUNCHER]: start_daemon runs entropyd in $NB from now on, through LAUNCHER (a
# program that execs its arguments) if given, and without CAP_NET_RAW where SETPRIV is set.
daemon_in_ns() {
	local launcher=${1:+"\"$1\""}
	: "${REAL_ENTROPYD:=$ENTROPYD}"
	cat > "$T/in-ns" <<-EOF
	#!/bin/sh
	exec ip netns exec "$NB" \${SETPRIV:+setpriv --inh-caps=-net_raw --bounding-set=-net_raw --} $launcher "$REAL_ENTROPYD" "\$@"
	EOF
	chmod +x "$T/in-ns"
	ENTROPYD=$T/in-ns
}

# conf NETWORK-SOURCE-KEYS [POLICY-NETWORK-KEYS]: a private config, $T/e.conf.
conf() {
	mkdir -p "$T/input"
	cat > "$T/e.conf" <<-EOF
	feed = { mode = "always"; };
	sources = { input = { watch = "$T/input"; }; network = { $1 }; };
	policy = { block = { mode = "disabled"; }; network = { ${2:-cap_bits_per_second = 100000.0;} }; };
	control = { socket = "$CTL_SOCKET"; };
	EOF
}
send() { # send COUNT GAP [SOURCES] [PORT] [DEST] [NETNS]: bounded, from namespace A by default
	ip netns exec "${6:-$NA}" "$UDPGEN" -d "${5:-10.77.0.2}" -p "${4:-9999}" -n "$1" -g "$2" \
		-s "${3:-$SOURCES}" -r "$RANDOM" 2> "$T/gen" || fail "udpgen: $(cat "$T/gen")"
}
line() { grep -E "notice: network/$1: kind" "$T/log" | tail -1; } # line NAME: its last summary
started_capturing() { wait_for 5 grep -q "network/$1: capturing" "$T/log" || fail "$1 not captured"; }
captures() { [ "$(grep -c "network/$1: capturing" "$T/log")" -ge "$2" ]; } # captures NAME N: N times
# events NAME COUNT: the instance reaches exactly COUNT events, and is still at COUNT once
# what the kernel holds (at most a second's buffer) has been handed over.
events() {
	wait_summary "network/$1: kind [^,]*, state open[^,]*, .* $2 events, 0 skipped" ||
		fail "$1: want $2 events: $(line "$1")"
	sleep 1.2
	kill -USR1 "$DAEMON_PID"
	sleep 0.3
	line "$1" | grep -qE " $2 events, 0 skipped" || fail "$1: more than $2 events: $(line "$1")"
}
# total: the events of every network instance, each from its last summary line.
total() {
	grep -E "notice: network/[^:]*: kind" "$T/log" | awk '{
		for (i = 1; i < NF; i++) if ($(i + 1) ~ /^events,?$/) ev[$3] = $i
	} END { for (k in ev) n += ev[k]; print n + 0 }'
}

# ---- the block source (t_block*.sh): loop devices with direct I/O on files in /dev/shm, the
# daemon in a private mount namespace, per-disk counts checked against the kernel's own ----
DIO=$top_builddir/tests/helpers/dio
BLKT=$top_builddir/tests/helpers/blkt
LOOPS=() # loop devices the test attached: detached by loops_cleanup
IMGS=()  # their backing files: removed by loops_cleanup

new_image() { # new_image VAR [DIR]: a 64 MiB file in DIR (default /dev/shm), its path in VAR
	local _f # not a name the caller's VAR may be
	_f=$(mktemp "${2:-/dev/shm}/entropyd-$(basename "$0" .sh).XXXXXX") || fail "mktemp in ${2:-/dev/shm}"
	IMGS+=("$_f")
	truncate -s 64M "$_f"
	printf -v "$1" '%s' "$_f"
}
new_loop() { # new_loop VAR [DIR]: a loop device with direct I/O on a new_image, its path in VAR
	local img l
	new_image img "${2:-}"
	l=$(losetup --find --show --direct-io=on "$img") || fail "losetup on $img"
	LOOPS+=("$l")
	printf -v "$1" '%s' "$l"
}
loops_cleanup() { # any blktrace taken down, the loop devices detached, their files removed
	local l
	for l in "${LOOPS[@]}"; do
		"$BLKT" teardown "$l" > /dev/null 2>&1
		losetup -d "$l" 2>/dev/null
	done
	rm -f "${IMGS[@]}"
}

# block_conf FILE BACKEND DEVICE...: a private config where only the block class runs.
block_conf() {
	local file=$1 backend=$2 list="" d; shift 2
	for d in "$@"; do list="$list${list:+, }\"$d\""; done
	cat > "$file" <<-EOF2
	feed = { mode = "always"; };
	policy = { input = { mode = "disabled"; }; network = { mode = "disabled"; };
	           block = { mode = "trusted"; }; };
	sources = { block = { backend = "$backend"; devices = [ $list ]; }; };
	control = { socket = "$T/run/io.entropyd"; };
	EOF2
}

# start_ns SETUP ARGS...: entropyd in a private mount namespace (whatever it or SETUP mounts,
# tracefs or debugfs, stays there), after the shell commands SETUP there, under $WRAP (a
# launcher that execs its arguments) if set; its runtime directory (state file) is $T/run.
# Same PID as the daemon.
start_ns() {
	local setup=$1; shift
	mkdir -p "$T/run"
	: > "$T/log" # now, not when the shell gets round to the redirection below
	MISS=()
	RUNTIME_DIRECTORY=$T/run unshare -m sh -c "$setup"'
		exec "$@"' start_ns ${WRAP:-} "$ENTROPYD" --foreground "$@" > "$T/log" 2>&1 8>&- &
	DAEMON_PID=$!
	wait_for 10 grep -q "started:" "$T/log" || fail "daemon did not start"
}

# wait_line TEXT: ask for the summary until a line holding TEXT (fixed string) shows.
wait_line() {
	for _ in $(seq 50); do
		kill -USR1 "$DAEMON_PID"
		sleep 0.1
		grep -qF -- "$1" "$T/log" && return 0
	done
	return 1
}
# summary NAME: the last summary line of block/NAME.
summary() { grep -F "block/$1: kind " "$T/log" | tail -1; }
# wait_last NAME REGEX: ask for the summary until the last line of block/NAME matches.
wait_last() {
	for _ in $(seq 50); do
		kill -USR1 "$DAEMON_PID"
		sleep 0.1
		summary "$1" | grep -qE -- "$2" && return 0
	done
	return 1
}
# expect_events NAME TOTAL: wait until block/NAME has one sample per completion, TOTAL in
# all (since this daemon started). Never more: a completion counted twice fails. Fewer only
# by what the daemon's own account (asked for with SIGUSR1, which reads nothing from the
# rings) says perf counted and did not hand over: dropped with a ring full (a loaded machine
# can keep the reader away longer than a ring's 6,400 completions last; counted and said),
# now and then a tracepoint hit that perf counts and writes no record for (seen on a loaded
# VM, a third of a burst once in the sanitizer build), or still in a ring. The missing ones
# of all disks together must be no more than that, and no more than half of what was asked
# for; they are said. MISS[NAME] holds how many so far. What the daemon itself does is held
# exactly by tp_account_check, when it has stopped (its rings drained): a record it dropped
# after reading shows here (more missing than perf kept back), one left unread in a ring
# there (taken at the end, never counted by an instance).
declare -A MISS
expect_events() {
	local name=$1 total=$2 want got d n missing=0 held lost
	want=$((total - ${MISS[$name]:-0}))
	wait_last "$name" " $want events, " && return 0
	got=$(summary "$name" | grep -oE '[0-9]+ events' | cut -d' ' -f1)
	[ -n "$got" ] || fail "$name: no summary"
	[ "$got" -le "$want" ] || fail "$name: $got samples for $want completions: some counted twice"
	d=$((want - got))
	MISS[$name]=$((${MISS[$name]:-0} + d))
	for n in "${!MISS[@]}"; do
		missing=$((missing + MISS[$n]))
	done
	read -r held lost <<< "$(tp_not_handed_over)" ||
		fail "$name: $d completions missing, and no tracepoint account to explain them"
	[ -n "$lost" ] || fail "$name: $d completions missing, and no tracepoint account to explain them"
	[ "$missing" -le "$held" ] ||
		fail "$name: $missing completions missing, but perf kept back only $held: the daemon lost some"
	[ $((MISS[$name] * 2)) -le "$total" ] ||
		fail "$name: ${MISS[$name]} of $total completions not handed over by perf: $(tp_account)"
	echo "  note: $d completion(s) of $name not handed over by perf ($lost in all dropped with a ring full); ${MISS[$name]} of $total so far"
}
# The daemon's last account of the tracepoint; the last one it gave when it stopped.
tp_account() { grep -o "block: tracepoint: .*" "$T/log" | tail -1; }
tp_account_final() { grep -o "block: tracepoint: .*, of which it never wrote .*" "$T/log" | tail -1; }
# How many completions perf counted and did not hand over, and how many of them it dropped
# with a ring full: a fresh account (SIGUSR1).
tp_not_handed_over() {
	local before
	before=$(grep -c "block: tracepoint: " "$T/log")
	kill -USR1 "$DAEMON_PID"
	wait_for 5 sh -c '[ "$(grep -c "block: tracepoint: " "$1")" -gt "$2" ]' _ "$T/log" "$before" ||
		return 1
	tp_account | grep -oE '[0-9]+' | sed -n '6p;3p' | tac | paste -sd' '
}
# tp_account_check COMPLETED [EVENTS]: after the daemon stopped, its last account (logged at
# -v): perf counted exactly what the kernel COMPLETED on the traced disks, EVENTS (what the
# instances counted, if given) were taken from the rings, and every other completion perf
# counted it never wrote (with a ring full, or lost inside the kernel), at most half; no
# record malformed or of another disk. Sets TP_TAKEN and TP_NEVER.
tp_account_check() {
	local done_all=$1 final=${2:-} stats taken other lost bad counted
	stats=$(tp_account_final)
	[ -n "$stats" ] || fail "no tracepoint account at stop"
	echo "  $stats"
	set -- $(echo "$stats" | grep -oE '[0-9]+')
	taken=$1 other=$2 lost=$3 bad=$4 counted=$5 TP_NEVER=$6
	TP_TAKEN=$taken
	[ "$bad" -eq 0 ] && [ "$other" -eq 0 ] || fail "bad records or other disks': $stats"
	[ "$lost" -le "$TP_NEVER" ] || fail "more lost with the ring full than never written: $stats"
	[ -z "$final" ] || [ "$taken" -eq "$final" ] || fail "$taken taken, but the instances counted $final"
	[ "$counted" -eq "$done_all" ] || fail "perf counted $counted, the kernel completed $done_all"
	[ $((taken + TP_NEVER)) -eq "$done_all" ] ||
		fail "$taken taken + $TP_NEVER never written != $done_all completed: the daemon lost or doubled some"
	[ $((TP_NEVER * 2)) -le "$done_all" ] || fail "more than half never written: $stats"
}
# The block tests (t_block, t_block_nouevent) run one at a time, whatever runs them (make -j,
# another build tree): each attaches and detaches loop devices whose numbers the other would
# take over, and t_block takes a CPU offline, which every perf event on it dies with.
BLOCK_LOCK=/run/lock/entropyd-tests-block
[ -d /run/lock ] || BLOCK_LOCK=/tmp/entropyd-tests-block
# block_lock SECONDS: hold it (fd 7) until the test exits, waiting up to SECONDS for it. The
# wait is in a queue behind every block test of every suite running on the machine (a few
# minutes each on a loaded one); the bound is for a holder that hangs, which lock_users names.
block_lock() {
	exec 7>> "$BLOCK_LOCK" || return 1
	flock -x -w "$1" 7
}
# lock_users FILE: the processes that have FILE open (its holder, and those waiting for it).
lock_users() {
	local fd p
	for fd in /proc/[0-9]*/fd/*; do
		[ "$(readlink "$fd" 2> /dev/null)" = "$1" ] || continue
		p=${fd#/proc/}; p=${p%%/*}
		[ "$p" = "$$" ] || printf '%s (%s); ' "$p" "$(tr '\0' ' ' < "/proc/$p/cmdline" 2> /dev/null | cut -c1-80)"
	done
}
# requests DEV: the requests the kernel completed on DEV (reads, writes, discards, flushes).
requests() { awk '{ print $1 + $5 + $12 + $16 }' "/sys/block/${1#/dev/}/stat"; }
# quiet DEV: no request completes on DEV for half a second (within 10 s); udev may still be
# probing a device just attached, and every completion after a count starts must be ours.
quiet() {
	local a b n=0
	command -v udevadm > /dev/null && udevadm settle --timeout=5 2>/dev/null
	a=$(requests "$1")
	for _ in $(seq 100); do
		sleep 0.1
		b=$(requests "$1")
		if [ "$a" = "$b" ]; then n=$((n + 1)); [ "$n" -ge 5 ] && return 0; else n=0; a=$b; fi
	done
	return 1
}
