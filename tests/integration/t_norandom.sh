#!/bin/bash
# t_norandom: neither entropyd's start-up and control socket nor entropyctl asks the kernel
# for randomness in a way that could start its jitter entropy loop: no open of /dev/urandom
# or /dev/random for reading, no getrandom() that may wait (without GRND_NONBLOCK or
# GRND_INSECURE). Before the CRNG is ready either one makes the kernel generate entropy
# itself (Linux 5.18 and later: urandom_read_iter() and wait_for_random_bytes() call
# try_to_generate_entropy()), which changes the moment it becomes ready: the moment entropyd
# is there to bring forward, and that entropyctl reports on. A getrandom() with
# GRND_NONBLOCK returns EAGAIN at once then (glibc's malloc makes one at its first
# allocation, and the daemon asks whether the CRNG is ready so), and GRND_INSECURE never
# waits: neither starts the loop. The daemon's RNDADDENTROPY descriptor on /dev/random is
# opened for writing, which is fine. The whole run is traced from exec.
. "$(dirname "$0")/lib.sh"

command -v strace > /dev/null || skip "needs strace (apt-get install strace)"
# Programs under ptrace, as in t_ioctl: LeakSanitizer cannot run there.
traced_env=
[ -n "${ENTROPYD_SANITIZERS:-}" ] && traced_env="ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0"
TRACE='trace=open,openat,getrandom'

# reads_random FILE: the lines of an strace log that ask for randomness in a way that can
# start the kernel's jitter loop. A getrandom() that another process's line interrupted
# ("getrandom( <unfinished ...>") has its flags on its "<... getrandom resumed>" line, of
# the same pid: the two are joined.
reads_random() {
	grep -E '"/dev/u?random", O_(RDONLY|RDWR)' "$1"
	awk '/getrandom\(.*<unfinished \.\.\.>/ { held[$1] = $0; next }
	     /<\.\.\. getrandom resumed>/ { print held[$1] " " $0; delete held[$1]; next }
	     /getrandom\(/ { print }
	     END { for (p in held) print held[p] }' "$1" | grep -vE 'GRND_NONBLOCK|GRND_INSECURE'
}

# The check itself must see what it looks for: a read of /dev/urandom, and a getrandom()
# that may wait (Python's os.getrandom() passes no flags).
strace -f -qq -e "$TRACE" -o "$T/control1" head -c 1 /dev/urandom > /dev/null ||
	fail "strace cannot trace here"
[ -n "$(reads_random "$T/control1")" ] || fail "the check misses a read of /dev/urandom"
if command -v python3 > /dev/null; then
	strace -f -qq -e "$TRACE" -o "$T/control2" python3 -c 'import os; os.getrandom(1)' ||
		fail "python3 under strace"
	[ -n "$(reads_random "$T/control2")" ] || fail "the check misses a getrandom() without flags"
fi

# The real sink as root (its descriptor on /dev/random shows in the trace), dry run otherwise.
sink=--dry-run
[ "$(id -u)" -eq 0 ] && sink=
policy='policy = { input = { cap_bits_per_second = 1000000.0; }; block = { mode = "disabled"; }; network = { mode = "disabled"; }; };'
write_config "$T/e.conf" 'feed = { mode = "always"; batch_bits = 64; };' "$policy"
mkfifo "$T/input/event0"
: > "$T/log"
env $traced_env strace -f -qq -e "$TRACE" -o "$T/daemon" \
	"$ENTROPYD" --foreground $sink -f "$T/e.conf" >> "$T/log" 2>&1 &
STRACE_PID=$!
wait_for 20 grep -q "started:" "$T/log" || fail "daemon did not start under strace"
# strace does not pass SIGTERM on (TESTING.md): the daemon itself is signalled.
DAEMON_PID=$(pgrep -P "$STRACE_PID" -x entropyd) || DAEMON_PID=$(pgrep -P "$STRACE_PID")
[ -n "$DAEMON_PID" ] || fail "cannot find the traced daemon"
open_fifo "$T/input/event0"
"$EVGEN" -n 3000 -p random >&9 2>/dev/null || fail "evgen"
wait_summary "input/event0: .* 3000 events" || fail "events not counted"
exec 9>&-

# entropyctl, every command that parses a reply, traced; the daemon parses each request.
for cmd in status sources "--json status" metrics; do
	# shellcheck disable=SC2086
	env $traced_env strace -f -qq -e "$TRACE" -o "$T/ctl" "$ENTROPYCTL" -s "$CTL_SOCKET" $cmd \
		> "$T/out" 2>&1 ||
		fail "entropyctl $cmd: $(cat "$T/out")"
	grep -q "input" "$T/out" || fail "entropyctl $cmd shows no input source: $(cat "$T/out")"
	grep -q 'getrandom\|open' "$T/ctl" || fail "entropyctl $cmd: strace saw nothing"
	bad=$(reads_random "$T/ctl")
	[ -z "$bad" ] || fail "entropyctl $cmd asks for randomness: $bad"
done
pass "entropyctl status, sources, --json and metrics read no randomness"

# strace exits with the traced program's status.
kill -TERM "$DAEMON_PID"
rc=0
wait "$STRACE_PID" || rc=$?
DAEMON_PID=
[ "$rc" -eq 0 ] || fail "daemon exited with status $rc after SIGTERM"
grep -q 'e.conf' "$T/daemon" || fail "strace did not see the daemon's start-up"
bad=$(reads_random "$T/daemon")
[ -z "$bad" ] || fail "the daemon asks for randomness: $bad"
if [ -z "$sink" ]; then
	grep -qE '"/dev/random", O_WRONLY' "$T/daemon" || fail "the real sink did not open /dev/random"
	pass "entropyd's start-up, 4 control requests and 3000 events read no randomness; /dev/random opened for writing only"
else
	pass "entropyd's start-up, 4 control requests and 3000 events read no randomness (dry run: not root)"
fi
