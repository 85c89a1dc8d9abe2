#!/usr/bin/env python3
"""qemu_run: boot the test guest under qemu (TCG) and serve its requests for input.

The guest's console (ttyS0; ttyAMA0 under -M virt) goes to --console. Its second serial port
(ttyS1; under -M virt, which has one UART, a virtio console, hvc0) is a control channel:
the guest writes one request a line and blocks reading the one-line reply.
Requests:
  keys N     press and release N keys on the virtio keyboard (QMP input-send-event, the
             press and the release as two separate commands, so two reports a key)
  mouse N    N relative motions of the virtio mouse, one command (one report) each
  type RATE  press and release keys at RATE a second, from now until "stop" (bench-boot's
             typing), on a thread of its own; replied to at once
  stop       stop typing; the reply says how many keys were pressed ("ok N")
  say TEXT   progress for the host's output
  done       the guest has finished; the host waits for qemu to exit
Replies are "ok" or "err TEXT". The keys pressed are chosen here and never named to the
guest, so the guest cannot print them by mistake: the host greps the console for them.

Whatever happens -- a hung guest, an error here, a signal -- qemu is killed by its PID
before this exits, and the whole run ends within --timeout seconds.
Exit status: 0 the guest said done and qemu exited; 1 otherwise.
"""
import argparse
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time

# Keys the host presses, by QMP qcode, with their Linux key codes (for the leak check in
# run.sh, which reads them from --print-keys). Unusual keys, whose codes are not numbers
# that show up in a log by chance.
KEYS = [("ac_bookmarks", 156), ("calculator", 140)]

PACE = 0.015  # seconds between injected commands: the virtio event queue must not fill


class Failure(Exception):
    pass


class Qmp:
    def __init__(self, path, deadline, qemu):
        self.sock = connect_unix(path, deadline, qemu)
        self.lock = threading.Lock()  # the typing thread shares the socket
        self.buf = b""
        self.deadline = deadline
        self.read_msg(lambda m: "QMP" in m)
        self.cmd("qmp_capabilities")

    def read_msg(self, want):
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                if not line.strip():
                    continue
                msg = json.loads(line)
                if want(msg):
                    return msg
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise Failure("timed out waiting for QMP")
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                continue
            data = self.sock.recv(65536)
            if not data:
                raise Failure("QMP connection closed")
            self.buf += data

    def cmd(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        with self.lock:
            self.sock.sendall(json.dumps(msg).encode() + b"\n")
            reply = self.read_msg(lambda m: "return" in m or "error" in m)
        if "error" in reply:
            raise Failure("QMP %s: %s" % (name, reply["error"].get("desc", reply["error"])))
        return reply["return"]


def connect_unix(path, deadline, qemu):
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            if qemu.poll() is not None:
                raise Failure("qemu exited (status %s) at start" % qemu.returncode)
            if time.monotonic() > deadline:
                raise Failure("cannot connect to " + path)
            time.sleep(0.05)


def inject_keys(qmp, n, first=0):
    for i in range(first, first + n):
        qcode = KEYS[i % len(KEYS)][0]
        for down in (True, False):
            qmp.cmd("input-send-event", events=[
                {"type": "key", "data": {"down": down, "key": {"type": "qcode", "data": qcode}}}])
            time.sleep(PACE)


def inject_mouse(qmp, n):
    for i in range(n):
        dx = 3 + i % 5
        dy = -2 - i % 3
        qmp.cmd("input-send-event", events=[
            {"type": "rel", "data": {"axis": "x", "value": dx}},
            {"type": "rel", "data": {"axis": "y", "value": dy}}])
        time.sleep(PACE)


class Typist:
    """Presses keys at a steady rate on a thread of its own, until stopped."""

    def __init__(self, qmp, rate):
        self.qmp = qmp
        self.period = 1.0 / rate
        self.pressed = 0
        self.error = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        nxt = time.monotonic()
        try:
            while not self.done.is_set():
                inject_keys(self.qmp, 1, self.pressed)
                self.pressed += 1
                nxt += self.period
                self.done.wait(max(0, nxt - time.monotonic()))
        except (Failure, OSError, ValueError) as e:
            self.error = str(e)

    def stop(self):
        self.done.set()
        self.thread.join(timeout=10)
        return self.pressed


def serve(args, qemu, qmp, ctl, deadline):
    buf = b""
    typist = None
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            req = line.decode("ascii", "replace").strip()
            if not req:
                continue
            words = req.split()
            reply = "ok"
            try:
                if words[0] == "keys" and len(words) == 2:
                    inject_keys(qmp, int(words[1]))
                elif words[0] == "mouse" and len(words) == 2:
                    inject_mouse(qmp, int(words[1]))
                elif words[0] == "type" and len(words) == 2 and not typist:
                    rate = float(words[1])
                    if not 0 < rate <= 50:
                        raise ValueError("type: a rate from 0 to 50 keys a second")
                    typist = Typist(qmp, rate)
                elif words[0] == "stop" and typist:
                    n = typist.stop()
                    reply = ("err typing failed: " + typist.error) if typist.error \
                        else "ok %d" % n
                    typist = None
                elif words[0] == "say":
                    print("guest: " + req[4:], flush=True)
                elif words[0] == "done":
                    if typist:
                        typist.stop()
                    ctl.sendall(b"ok\n")
                    return True
                else:
                    reply = "err unknown request"
            except (ValueError, Failure) as e:
                reply = "err " + str(e).replace("\n", " ")
            ctl.sendall(reply.encode() + b"\n")
        left = deadline - time.monotonic()
        if left <= 0:
            print("qemu_run: hard timeout (%d s) reached; killing qemu" % args.timeout,
                  flush=True)
            return False
        if qemu.poll() is not None:
            print("qemu_run: qemu exited (status %s) before the guest said done"
                  % qemu.returncode, flush=True)
            return False
        r, _, _ = select.select([ctl], [], [], min(left, 1.0))
        if r:
            data = ctl.recv(4096)
            if not data:
                print("qemu_run: control channel closed", flush=True)
                return False
            buf += data


# Per architecture: the machine, the console, and the control channel. -M virt (arm64,
# armhf) has one UART: the control channel is a virtio console there (hvc0), on
# virtio-mmio as the other devices. Its DTB seed and the emulated CPU's RNDR would make
# the CRNG ready at once: dtb-randomness=off, and the command line's
# random.trust_cpu=off. The machine's own keyboard (not virtual: entropyd's default uses
# it) is the PC's AT keyboard, and under -M virt, which has none, a USB keyboard on xhci.
# qemu's virtio-mmio is legacy (virtio 0.9) unless told otherwise, and Linux's virtio_input
# binds only to a virtio 1 device: without force-legacy=false the guest has no virtio
# keyboard or mouse.
VIRT_KEYBOARD = ["-global", "virtio-mmio.force-legacy=false",
                 "-device", "qemu-xhci,id=xhci", "-device", "usb-kbd,bus=xhci.0"]
MACHINES = {
    "amd64": {"machine": [], "console": "ttyS0", "ctl": None, "bus": "pci",
              "ctl_device": ["-serial", "chardev:ctl"]},
    "arm64": {"machine": ["-M", "virt,dtb-randomness=off", "-cpu", "max,pauth-impdef=on"]
              + VIRT_KEYBOARD,
              "console": "ttyAMA0", "ctl": "/dev/hvc0", "bus": "device",
              "ctl_device": ["-device", "virtio-serial-device",
                             "-device", "virtconsole,chardev=ctl"]},
    "armhf": {"machine": ["-M", "virt,dtb-randomness=off", "-cpu", "cortex-a15"]
              + VIRT_KEYBOARD,
              "console": "ttyAMA0", "ctl": "/dev/hvc0", "bus": "device",
              "ctl_device": ["-device", "virtio-serial-device",
                             "-device", "virtconsole,chardev=ctl"]},
}


def kill_qemu(qemu):
    if qemu.poll() is not None:
        return
    try:
        os.kill(qemu.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        qemu.wait(timeout=10)
    except subprocess.TimeoutExpired:
        print("qemu_run: qemu (pid %d) did not die" % qemu.pid, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--print-keys", action="store_true",
                    help="print the Linux codes of the injected keys and exit")
    ap.add_argument("--kernel")
    ap.add_argument("--initrd")
    ap.add_argument("--dir", help="working directory for sockets")
    ap.add_argument("--console", help="file for the guest's console")
    ap.add_argument("--timeout", type=int, default=270)
    ap.add_argument("--append", default="")
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--arch", default="amd64", choices=sorted(MACHINES),
                    help="the guest's architecture: its machine, console and devices")
    ap.add_argument("--disk", help="a raw image, attached as a virtio disk")
    ap.add_argument("--no-virtio-input", action="store_true",
                    help="no virtio keyboard and mouse: keys go to the machine's own keyboard")
    args = ap.parse_args()
    if args.print_keys:
        print(" ".join(str(code) for _, code in KEYS))
        return 0

    start = time.monotonic()
    deadline = start + args.timeout
    qmp_path = os.path.join(args.dir, "qmp.sock")
    ctl_path = os.path.join(args.dir, "ctl.sock")
    m = MACHINES[args.arch]
    cmd = [args.qemu] + m["machine"] + ["-accel", "tcg", "-smp", "2", "-m", "512",
           "-display", "none", "-nodefaults", "-no-reboot",
           "-kernel", args.kernel, "-initrd", args.initrd,
           "-append", "console=%s%s panic=-1 rdinit=/init %s"
           % (m["console"], " guest_ctl=" + m["ctl"] if m["ctl"] else "", args.append),
           "-serial", "file:" + args.console,
           "-chardev", "socket,id=ctl,path=%s,server=on,wait=off" % ctl_path]
    cmd += m["ctl_device"]
    cmd += ["-qmp", "unix:%s,server=on,wait=off" % qmp_path]
    if not args.no_virtio_input:
        cmd += ["-device", "virtio-keyboard-%s,id=kbd0" % m["bus"],
                "-device", "virtio-mouse-%s,id=mouse0" % m["bus"]]
    if args.disk and m["bus"] == "pci":
        cmd += ["-drive", "file=%s,if=virtio,format=raw" % args.disk]
    elif args.disk:
        cmd += ["-drive", "file=%s,if=none,id=d0,format=raw" % args.disk,
                "-device", "virtio-blk-%s,drive=d0" % m["bus"]]
    with open(os.path.join(args.dir, "qemu.err"), "wb") as err:
        qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
    with open(os.path.join(args.dir, "qemu.pid"), "w") as f:
        f.write("%d\n" % qemu.pid)
    ok = False
    try:
        qmp = Qmp(qmp_path, min(deadline, time.monotonic() + 30), qemu)
        qmp.deadline = deadline
        ctl = connect_unix(ctl_path, min(deadline, time.monotonic() + 30), qemu)
        ok = serve(args, qemu, qmp, ctl, deadline)
        if ok:
            # The guest powers off after "done"; give it a moment, then make sure.
            try:
                qemu.wait(timeout=max(1, min(15, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                print("qemu_run: guest did not power off; killing qemu", flush=True)
    except (Failure, OSError, ValueError) as e:
        print("qemu_run: " + str(e), flush=True)
        ok = False
    finally:
        kill_qemu(qemu)
        try:
            os.unlink(os.path.join(args.dir, "qemu.pid"))
        except OSError:
            pass
    print("qemu_run: %.1f s, guest %s" % (time.monotonic() - start,
                                          "finished" if ok else "did not finish"), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main())
