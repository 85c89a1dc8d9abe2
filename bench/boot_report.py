#!/usr/bin/env python3
"""boot_report: make bench-boot's figures from the guests' consoles (bench/boot.sh).

  boot_report.py parse CONSOLE WORKLOAD WITH RUN   one boot's result, one line of key=value
  boot_report.py table RESULTS WAIT                the per-workload table

Times are the kernel's own log timestamps: "bench: init" (written to /dev/kmsg by the guest's
/init as it starts), "bench: entropyd starting" (just before the init-premount script runs)
and "random: crng init done". Bits credited before ready: entropyd's own notice ("CRNG is
ready, ... with N bits credited by entropyd before"); if it never saw the CRNG get ready,
every bit its sink credited (its summary at exit) was credited before.
"""
import glob
import os
import re
import statistics
import sys

NONE = "-"


def parse(path, workload, with_, run):
    stamps = {}
    log = []
    kernel = cmdline = keys = NONE
    errors = []
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError as e:
        lines = []
        errors.append(str(e))
    for line in lines:
        m = re.match(r"BENCH-DMESG \[\s*([0-9.]+)\] (.*)$", line)
        if m:
            t, what = float(m.group(1)), m.group(2)
            if what.endswith("crng init done"):
                stamps.setdefault("ready", t)
            elif what.startswith("bench: "):
                stamps.setdefault(what[7:], t)
        elif line.startswith("BENCH-LOG "):
            log.append(line[10:])
        elif line.startswith("BENCH-KERNEL "):
            kernel = line[13:].strip()
        elif line.startswith("BENCH-CMDLINE "):
            cmdline = line[14:].strip()
        elif line.startswith("BENCH-KEYS "):
            keys = line[11:].replace("ok ", "").strip() or NONE
        elif line.startswith("BENCH-ERROR "):
            errors.append(line[12:])
    done = any(l == "BENCH-DONE" for l in lines)
    init = stamps.get("init")
    ready = stamps.get("ready")
    start = stamps.get("entropyd starting")
    r = {"workload": workload, "entropyd": with_, "run": run,
         "ok": "1" if done and init is not None and not errors else "0",
         "ready": "%.2f" % (ready - init) if ready is not None and init is not None else NONE,
         "from_start": "%.2f" % (ready - start) if ready is not None and start is not None
         else NONE,
         "credited": NONE, "keys": keys, "kernel": kernel}
    if with_ != "0":
        for l in log:
            m = re.search(r"CRNG is ready, [0-9.]+ s after start, with ([0-9]+) bits credited", l)
            if m:
                r["credited"] = m.group(1)
                break
        else:
            for l in log:
                m = re.search(r"sink: [0-9]+ batches, [0-9]+ bytes, ([0-9]+) bits credited", l)
                if m:
                    r["credited"] = m.group(1)  # the last summary: the one at exit
        if r["credited"] == NONE:
            # Neither line: entropyd did not run (its log says why), and the boot measured
            # the kernel alone. Not a figure for "with".
            errors.append("entropyd gave no credit figure: " +
                          (log[-1] if log else "no log"))
    if errors:
        r["ok"] = "0"
    if errors:
        r["errors"] = "; ".join(errors).replace(" ", "_")
    print(" ".join("%s=%s" % kv for kv in r.items()))
    # The command line goes to a file of its own: it has spaces.
    if cmdline != NONE:
        with open(path + ".cmdline", "w") as f:
            f.write(cmdline + "\n")


def median_text(values, wait):
    """Median of seconds, where None is 'not ready within wait' (later than any)."""
    if not values:
        return NONE
    m = statistics.median_low([v if v is not None else float("inf") for v in values])
    return ">%d" % wait if m == float("inf") else "%.2f" % m


def table(path, wait):
    rows = []
    for line in open(path):
        rows.append(dict(kv.split("=", 1) for kv in line.split()))
    kernels = sorted({r["kernel"] for r in rows if r["kernel"] != NONE})
    order = []
    for r in rows:
        if r["workload"] not in order:
            order.append(r["workload"])
    print("kernel %s" % ", ".join(kernels or [NONE]))
    cmdlines = set()
    for f in glob.glob(os.path.join(os.path.dirname(os.path.abspath(path)), "*.cmdline")):
        c = open(f).read().strip()
        cmdlines.add(re.sub(r" bench_[a-z]+=[^ ]*", "", c))
    for c in sorted(cmdlines):
        print("command line: %s (bench_* words aside)" % c)
    print("seconds from init to \"crng init done\", median of the runs (>%d: not ready within "
          "%d s); bits: entropyd's credit before ready, median" % (wait, wait))
    print("%-13s %5s %9s %9s %14s %6s  %s" % ("workload", "runs", "without", "with",
                                               "start->ready", "bits", "each run: without | with"))
    bad = 0
    ratios = []

    def secs(rs, key):
        return [float(r[key]) if r[key] != NONE else None for r in rs]
    for w in order:
        mine = [r for r in rows if r["workload"] == w]
        for r in mine:
            bad += r["ok"] != "1"
        wo = [r for r in mine if r["entropyd"] == "0"]
        for way, name in (("1", w), ("base", w + " (base)")):
            wi = [r for r in mine if r["entropyd"] == way]
            if way == "base" and not wi:
                continue
            bits = [int(r["credited"]) for r in wi if r["credited"] != NONE]
            each = " ".join(r["ready"] for r in wo) + " | " + " ".join(r["ready"] for r in wi)
            print("%-13s %5d %9s %9s %14s %6s  %s" % (
                name, max(len(wo), len(wi)), median_text(secs(wo, "ready"), wait),
                median_text(secs(wi, "ready"), wait), median_text(secs(wi, "from_start"), wait),
                "%d" % statistics.median_low(bits) if bits else NONE, each))
        # Against the baseline: this tree's start->ready over the baseline's, run by run
        # (the boots of one run were side by side), and of the medians.
        by_run = {}
        for r in mine:
            if r["entropyd"] in ("1", "base") and r["from_start"] != NONE:
                by_run.setdefault(r["run"], {})[r["entropyd"]] = float(r["from_start"])
        pairs = [(p["1"], p["base"]) for _, p in sorted(by_run.items(), key=lambda kv: int(kv[0]))
                 if "1" in p and "base" in p and p["base"] > 0]
        if pairs:
            ratios.append("%s: start->ready, this tree / base: median %.2f / %.2f = %.2f; "
                          "each run: %s" % (
                              w, statistics.median_low([a for a, _ in pairs]),
                              statistics.median_low([b for _, b in pairs]),
                              statistics.median_low([a for a, _ in pairs]) /
                              statistics.median_low([b for _, b in pairs]),
                              " ".join("%.2f" % (a / b) for a, b in pairs)))
    for line in ratios:
        print(line)
    if bad:
        print("%d boot(s) did not run to the end or reported an error: see the lines above" % bad)
    return 1 if bad else 0


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "parse":
        parse(*sys.argv[2:])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "table":
        return table(sys.argv[2], int(sys.argv[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
