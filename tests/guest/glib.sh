# glib.sh: helpers for the guest's tests (busybox sh), sourced by /init and by each test.
# A test is /tests/g_NAME.sh, run in a subshell; fail ends it, and its daemons are killed.

RESULTS=${RESULTS:-/tmp/results}
LOG=${LOG:-/tmp/entropyd.log}
DPID=
TEST=${TEST:-init}

# The control channel to the host: ttyS1, raw, held open on fd 3. One request a line, one
# blocking read of the reply with a long timeout (short ones split lines under emulation).
ctl_open() {
	local dev
	dev=$(sed -n 's/.*guest_ctl=\([^ ]*\).*/\1/p' /proc/cmdline)
	: "${dev:=/dev/ttyS1}"
	# A virtio console (hvc0, -M virt) opens once its driver has probed the device, which
	# loading the module does not wait for: seen failing with ENODEV under a loaded host's
	# emulation. A failed redirection of exec would end the shell: tried in a subshell first.
	wait_for 60 ctl_opens "$dev" || echo "init: the control channel $dev does not open"
	exec 3<>"$dev"
	stty -F "$dev" raw -echo
}
ctl_opens() { (: <> "$1") 2> /dev/null; }
ctl() {
	local reply=
	echo "$*" >&3
	read -t 120 -r reply <&3
	[ "$reply" = ok ] && return 0
	echo "ctl: request '$*' got '${reply:-no reply in 120 s}'"
	return 1
}
say() { ctl "say $*" > /dev/null; }

result() { echo "$*"; echo "$*" >> "$RESULTS"; }
pass() { result "PASS: $TEST: $*"; }
skip() { result "SKIP: $TEST: $*"; exit 0; }
fail() {
	result "FAIL: $TEST: $*"
	[ -f "$LOG" ] && show_log "  log: "
	exit 1
}

# show_log PREFIX: the daemon's log, with the SIGUSR1 summaries that tests ask for again and
# again cut down to the newest line for each instance.
show_log() {
	awk -v p="$1" '
		/^entropyd: notice: [a-z]+\/[^:]*: kind [^,]*, state / { last[$3] = $0; next }
		/^entropyd: notice: (kernel: CRNG|total: )/ { tail[$3] = $0; next }
		{ print p $0 }
		END { for (k in last) print p last[k] " (newest summary)"; for (k in tail) print p tail[k] }
	' "$LOG"
}

# wait_for SECONDS COMMAND...: poll COMMAND every 0.1 s, give up after SECONDS.
wait_for() {
	local n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

logged() { grep -qE "$1" "$LOG"; }

# start_daemon CONFIG [ARGS...]: entropyd in the foreground, dry run, verbose ($VERBOSE:
# -v unless set), logging to $LOG.
start_daemon() {
	local conf=$1
	shift
	: > "$LOG"
	entropyd --foreground --dry-run ${VERBOSE:--v} -f "$conf" "$@" >> "$LOG" 2>&1 &
	DPID=$!
	wait_for 30 logged "started:" || fail "daemon did not start"
}

# stop_daemon: SIGTERM, and it must exit 0 within 30 s.
stop_daemon() {
	local rc=0 n=300
	kill -TERM "$DPID" 2>/dev/null
	while kill -0 "$DPID" 2>/dev/null && [ "$n" -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	kill -0 "$DPID" 2>/dev/null && fail "daemon still running 30 s after SIGTERM"
	wait "$DPID" || rc=$?
	DPID=
	[ "$rc" -eq 0 ] || fail "daemon exited with status $rc after SIGTERM"
}

# kill_daemon: SIGKILL to the main process, then wait until its collector is gone too: it
# dies by its parent-death signal, not at the same instant, and a daemon started before then
# finds its control socket still answered.
kill_daemon() {
	local kids
	kids=$(cat /proc/"$DPID"/task/*/children 2>/dev/null)
	kill -KILL "$DPID"
	wait "$DPID" 2> /dev/null
	DPID=
	# shellcheck disable=SC2086 # a word list
	wait_for 10 gone $kids || fail "the collector ($kids) outlived the main process by 10 s"
}
gone() {
	local p
	for p in "$@"; do
		[ -d "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null && return 1
	done
	return 0
}

# summary PATTERN [SECONDS]: ask for the counters (SIGUSR1) until a summary line matches.
summary() {
	local n=$((${2:-20} * 2))
	while [ "$n" -gt 0 ]; do
		kill -USR1 "$DPID" 2>/dev/null || return 1
		sleep 0.5
		logged "$1" && return 0
		n=$((n - 1))
	done
	return 1
}

# The newest summary line of one instance ("input/event1").
last_summary() { grep -E "$1: kind " "$LOG" | tail -1; }

# The event node (event3) of the input device with this exact name, or nothing.
node_named() {
	local d
	for d in /sys/class/input/event*; do
		[ "$(cat "$d/device/name" 2>/dev/null)" = "$1" ] && { basename "$d"; return 0; }
	done
	return 1
}

cleanup_daemons() {
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null
	DPID=
}
trap cleanup_daemons EXIT
