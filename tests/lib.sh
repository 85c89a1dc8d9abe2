# lib.sh: shared helpers for entropyd's shell tests; each test runs a private daemon with its
# own config and directories, and removes everything it made.
set -u

: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
: "${ENTROPYD:=$top_builddir/src/entropyd}"
EVGEN=$top_builddir/tests/evgen
NOTIFY_SINK=$top_builddir/tests/notify_sink
: "${ENTROPYCTL:=$top_builddir/src/entropyctl}"

T=$(mktemp -d "${TMPDIR:-/tmp}/entropyd-test.XXXXXX")
CTL_SOCKET=$T/run/io.entropyd # every test daemon has its own control socket
DAEMON_PID=
cleanup() {
	if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -KILL "$DAEMON_PID" 2>/dev/null
	fi
	exec 9>&- 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; [ -f "$T/log" ] && sed 's/^/  log: /' "$T/log" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
pass() { echo "PASS: $*"; }

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
# command and its options, e.g. "setpriv --bounding-set=-setpcap") if set.
start_daemon() {
	: > "$T/log" # emptied before the daemon starts, so no earlier "started:" is read
	${WRAP:-} "$ENTROPYD" --foreground "$@" >> "$T/log" 2>&1 &
	DAEMON_PID=$!
	wait_for 10 grep -q "started:" "$T/log" || fail "daemon did not start"
}

# stop_daemon: SIGTERM, wait, and check it exited 0.
stop_daemon() {
	local rc=0
	kill -TERM "$DAEMON_PID"
	wait "$DAEMON_PID" || rc=$?
	DAEMON_PID=
	[ "$rc" -eq 0 ] || fail "daemon exited with status $rc after SIGTERM"
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
