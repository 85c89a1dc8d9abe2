#!/bin/bash
# t_watch: entropyctl watch in a pseudo-terminal (python3's pty) against a private daemon fed
# through a FIFO: the table refreshes (an instance's event counter and its rate change from
# one frame to a later one), no line is wider than the terminal (80 columns, then 40 when it
# is resized), q quits with status 0 and the terminal's mode is as it was before; a SIGTERM
# puts it back too. Without a terminal: no escape sequences, frames apart, q on stdin quits;
# when the daemon stops, one line says it is not running and watch waits, and when it is
# back, the frames go on.
. "$(dirname "$0")/lib.sh"

command -v python3 > /dev/null || skip "needs python3 (its pty module)"
write_config "$T/e.conf" 'feed = { mode = "always"; };' \
	'policy = { block = { mode = "disabled"; }; network = { mode = "disabled"; }; };'
start_fifo_daemon -v --dry-run -f "$T/e.conf"

cat > "$T/watchpty.py" <<'EOF'
import fcntl, os, pty, re, select, signal, struct, subprocess, sys, termios, time

ctl, sock, fifo, evgen, mode = sys.argv[1:6]

def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)

master, slave = pty.openpty()

def columns(n):
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, n, 0, 0))

columns(80)
before = termios.tcgetattr(slave)
p = subprocess.Popen([ctl, "-s", sock, "watch", "--interval", "0.2"], stdin=slave,
                     stdout=slave, stderr=slave, start_new_session=True)
out = b""

def read_for(seconds, until=None):
    global out
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                out += os.read(master, 65536)
            except OSError:
                return False
        if until and until(out):
            return True
    return False

def frames():
    return [f for f in out.split(b"\x1b[H\x1b[2J") if b"\nCLASS " in f and f.endswith(b"\n")]

ROW = re.compile(rb"^input +event0 +open +(\d+) +(\S+) +\S+ +\S+ ", re.M)

def events(f):
    m = ROW.search(f)
    return (int(m.group(1)), m.group(2)) if m else None

if not read_for(20, lambda o: any(events(f) for f in frames())):
    fail("no frame with input/event0: %r" % out[-2000:])
first = events(frames()[-1])[0]
time.sleep(0.3)
# raw mode while it runs: no echo, no line buffering
now = termios.tcgetattr(slave)
if now[3] & (termios.ICANON | termios.ECHO):
    fail("the terminal is not in raw mode while watch runs")
with open(fifo, "wb") as w:
    subprocess.run([evgen, "-n", "500", "-s", "20", "-p", "random", "-r", "3"], stdout=w,
                   stderr=subprocess.DEVNULL, check=True)

def moved(o):
    for f in frames():
        e = events(f)
        if e and e[0] >= first + 500 and e[1] not in (b"-", b"0.0"):
            return True
    return False

if not read_for(20, moved):
    fail("the table did not refresh to %d events with a rate: %r" % (first + 500, frames()[-1][-600:]))
n = len(frames())

def widest(fs):
    return max(len(l) for f in fs for l in f.split(b"\r\n"))

if widest(frames()) > 80:
    fail("a line wider than the terminal's 80 columns: %r" % frames()[-1])
# Narrower: the frames are cut to the new width (the header, longer, exactly to it) from the
# first one drawn after the resize. Frames drawn before it may still be unread in the pty, so
# the test waits for the first one 40 wide, and then every frame from it must be 40 wide.
last = events(frames()[-1])[0]
columns(40)
seen = len(frames())

def narrowed():
    fs = frames()[seen:]
    for i, f in enumerate(fs):
        if widest([f]) == 40:
            return fs[i:] if len(fs) >= i + 3 else None
    return None

if not read_for(20, lambda o: narrowed() is not None):
    fail("no three frames 40 columns wide after a resize to 40: %r" % frames()[-1])
if widest(narrowed()) != 40:
    fail("after a resize to 40 columns, the widest line is %d: %r" %
         (widest(narrowed()), frames()[-1]))
if mode == "quit":
    os.write(master, b"q")
    try:
        rc = p.wait(10)
    except subprocess.TimeoutExpired:
        fail("q did not quit")
    if rc != 0:
        fail("q: exit status %d" % rc)
else:
    p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(10)
    except subprocess.TimeoutExpired:
        fail("SIGTERM did not end it")
    if rc != -signal.SIGTERM:
        fail("SIGTERM: exit status %d" % rc)
after = termios.tcgetattr(slave)
if after != before:
    fail("the terminal's mode was not restored: %r, was %r" % (after, before))
print("frames %d, events %d -> %d" % (n, first, last))
EOF

out=$(python3 "$T/watchpty.py" "$ENTROPYCTL" "$CTL_SOCKET" "$T/input/event0" "$EVGEN" quit) ||
	fail "in a pty: $out"
pass "in a pty: the table refreshes ($out), q quits with 0, the terminal is as before"
out=$(python3 "$T/watchpty.py" "$ENTROPYCTL" "$CTL_SOCKET" "$T/input/event0" "$EVGEN" term) ||
	fail "in a pty, SIGTERM: $out"
pass "in a pty: SIGTERM ends it with the terminal as before"

# ---- not a terminal ----
mkfifo "$T/keys"
"$ENTROPYCTL" -s "$CTL_SOCKET" watch -i 0.2 < "$T/keys" > "$T/plain" 2>&1 &
W=$!
exec 6> "$T/keys"
two_frames() { [ "$(grep -c '^CLASS ' "$T/plain")" -ge 2 ]; }
wait_for 10 two_frames || fail "no two frames without a terminal: $(cat "$T/plain")"
echo q >&6
rc=0; wait "$W" || rc=$?
exec 6>&-
[ "$rc" -eq 0 ] || fail "q on a pipe: exit status $rc"
grep -q $'\033' "$T/plain" && fail "escape sequences without a terminal: $(cat -v "$T/plain" | head)"
grep -qE '^input +event0 +open +[0-9]+ ' "$T/plain" || fail "no row: $(cat "$T/plain")"
pass "without a terminal: plain frames, no escape sequences, q on stdin quits"

"$ENTROPYCTL" -s "$CTL_SOCKET" watch -i 0 > "$T/out" 2>&1 && fail "--interval 0 accepted"
grep -q "interval" "$T/out" || fail "--interval 0: $(cat "$T/out")"

# ---- the daemon stops, and comes back ----
"$ENTROPYCTL" -s "$CTL_SOCKET" watch -i 0.2 < /dev/null > "$T/restart" 2>&1 &
W=$!
wait_for 10 grep -qE '^input +event0 +open ' "$T/restart" || fail "no frame: $(cat "$T/restart")"
exec 9>&-
stop_daemon
wait_for 10 grep -qx "entropyd not running, waiting; [0-9:]* every 0.2 s, q quits" "$T/restart" ||
	fail "watch did not say the daemon is not running: $(tail -5 "$T/restart")"
# Why, said once without a terminal: the first poll that failed may have met the socket gone,
# there with no one listening, or taken by a daemon on its way out and closed unanswered.
why=$(grep -B1 -E '^entropyd not running, waiting' "$T/restart" | head -1)
case $why in
"entropyd is not running: no control socket at $CTL_SOCKET" | \
	"entropyd is not running: nothing answers on $CTL_SOCKET" | \
	"$CTL_SOCKET: entropyd closed the connection without replying to io.entropyd."*) ;;
*) fail "watch did not say why: $(tail -5 "$T/restart")" ;;
esac
kill -0 "$W" 2> /dev/null || fail "watch ended when the daemon stopped: $(tail -5 "$T/restart")"
rm -f "$T/input/event0"
start_fifo_daemon -v --dry-run -f "$T/e.conf"
back() { sed -n '/not running, waiting/,$p' "$T/restart" | grep -qE '^input +event0 +open '; }
wait_for 10 back || fail "no frame once the daemon was back: $(tail -8 "$T/restart")"
kill "$W"
wait "$W" 2> /dev/null
[ "$(grep -c "not running, waiting" "$T/restart")" -eq 1 ] ||
	fail "without a terminal, not running was said more than once: $(grep -c "not running" "$T/restart")"
pass "the daemon stopped: watch said it is not running and waited; back: the frames go on"
stop_daemon
