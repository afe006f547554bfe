#!/usr/bin/env python3
"""The tables of perf/vs-spdk.sh, from the outputs of its runs.

    vs-spdk-table.py round DIR           one round's figures, and its ratios to SPDK->SPDK if SPDK ran
    vs-spdk-table.py summary DIR...      each ratio to SPDK->SPDK round by round, and the median over the rounds

CELLS and MODES come from the environment, as the script ran them. A round's DIR holds each run's output: our perf's
JSON (NAME.json), spdk_nvme_perf's text (NAME.txt), the CPU samples (NAME.cpu), the TCP segments retransmitted during
the run (NAME.retrans), the floor and the load average.
"""
import json
import os
import re
import statistics
import sys

CELL_NAMES = {"qd1": "4k randread QD1 p50", "qd32": "4k randread QD32 IOPS", "qd128": "4k randread QD128 IOPS",
              "read128k": "128k read QD8 IOPS", "randwrite": "4k randwrite QD32 IOPS"}


def with_cpu(out, name, r):
    """CPU per I/O (µs) of each side, from the /proc samples taken inside the window (cpu_probe)."""
    try:
        t, i = (float(x) for x in open(os.path.join(out, name + ".cpu")).read().split())
    except Exception:
        return r
    if r["iops"] and t > 0 and i > 0:  # 0: a process starved for the whole sub-window (or a failed run)
        r["cpu_t"], r["cpu_i"] = t * 1e6 / r["iops"], i * 1e6 / r["iops"]
    return r


def with_retrans(out, name, r):
    """The TCP segments the machine retransmitted during the run (vs-spdk.sh's run_measured), if recorded."""
    try:
        r["retrans"] = int(open(os.path.join(out, name + ".retrans")).read())
    except Exception:
        pass
    return r


def ours(out, name):
    try:
        j = json.load(open(os.path.join(out, name + ".json")))
    except Exception:
        return None
    job = j["jobs"][0]
    d = job["write"] if job["write"]["total_ios"] > job["read"]["total_ios"] else job["read"]
    p = d["clat_ns"]["percentile"]
    jit = j.get("nvmeof", {}).get("cpu", {}).get("initiator", {}).get("jit_ms", -1)
    return with_retrans(out, name, with_cpu(out, name, {"iops": d["iops"], "p50": p.get("50.000000", 0) / 1e3,
                                                        "p99": p.get("99.000000", 0) / 1e3,
                                                        "p9999": p.get("99.990000", 0) / 1e3, "jit": jit}))


def spdk(out, name):
    try:
        text = open(os.path.join(out, name + ".txt")).read()
    except Exception:
        return None
    m = re.search(r"^\s*Total\s*:\s*([\d.]+)", text, re.M)
    if not m:
        return None
    r = {"iops": float(m.group(1))}
    for key, pct in (("p50", "50.00000"), ("p99", "99.00000"), ("p9999", "99.99000")):
        pm = re.search(r"^\s*" + re.escape(pct) + r"%\s*:\s*([\d.]+)us", text, re.M)
        r[key] = float(pm.group(1)) if pm else 0
    return with_retrans(out, name, with_cpu(out, name, r))


def columns(out, modes):
    """(title, CELL -> result or None) for each column the round ran; SPDK->SPDK first if SPDK ran."""
    cols = []
    if os.path.exists(os.path.join(out, "target-spdk.log")):
        cols.append(("SPDK→SPDK", lambda c: spdk(out, f"spdk-spdk-{c}")))
        for m in modes:
            cols.append((f"our perf ({m})→SPDK", lambda c, m=m: ours(out, f"ours{m}-spdk-{c}")))
        for m in modes:
            cols.append((f"SPDK perf→ours ({m})", lambda c, m=m: spdk(out, f"spdkperf-ours{m}-{c}")))
    for m in modes:
        cols.append((f"ours→ours {m}", lambda c, m=m: ours(out, f"ours-{m}-{c}")))
    return cols


def us(x):
    return f"{x:.1f} µs" if x < 100 else f"{x:.0f} µs" if x < 10000 else f"{x / 1e3:.1f} ms"


def fmt(cell, r):
    if r is None:
        return "—"
    if not r["iops"]:
        return "no I/O completed (see the run's log)"
    tail = f"p99 {us(r['p99'])}" + (f", p99.99 {us(r['p9999'])}" if r["p9999"] else "")
    text = f"**{r['p50']:.1f} µs** ({tail})" if cell == "qd1" else f"**{r['iops'] / 1e3:.1f}K** ({tail})"
    if "cpu_t" in r:
        text += f"; CPU/IO i {r['cpu_i']:.2f} t {r['cpu_t']:.2f} µs"
    if r.get("jit", 0) > 0:  # our initiator's JIT still compiling inside the window
        text += f"; JIT {r['jit']} ms"
    if r.get("retrans", 0) > 0:  # spurious on loopback: reordering (perf/README.md)
        text += f"; retrans {r['retrans']}"
    return text


def ratio(a, b):
    return a / b if a and b else None


def main_ratio(cell, r, base):
    """ours/SPDK: QD1 p50 (lower is better), else IOPS (higher is better)."""
    return ratio(r["p50"], base["p50"]) if cell == "qd1" else ratio(r["iops"], base["iops"])


def text_file(out, name, default="?"):
    try:
        return open(os.path.join(out, name)).read().strip()
    except Exception:
        return default


def round_tables(out, cells, modes):
    cols = columns(out, modes)
    fp = text_file(out, "floor-poll.txt", "? ? ?").split()
    fb = text_file(out, "floor-block.txt", "? ? ?").split()
    print(f"Load average (1, 5, 15 min) at the start {text_file(out, 'load-start.txt')}, at the end "
          f"{text_file(out, 'load-end.txt')}; {os.cpu_count()} CPUs.\n")
    print(f"Floor (loopback TCP ping-pong, 4 KiB read exchange, same cores): poll p50 {fp[0]} µs p99 {fp[1]} µs "
          f"({fp[2]} rt/s), block p50 {fb[0]} µs p99 {fb[1]} µs ({fb[2]} rt/s)\n")
    print("Each figure: IOPS (QD1: p50 completion latency) with p99 and p99.99, and the CPU per I/O of the initiator "
          "(i) and the target (t) process: utime+stime from /proc/PID/stat inside the window, divided by the I/Os; "
          "for our initiator, the time its JIT still compiled inside the window, if any (JIT); the TCP segments the "
          "machine retransmitted during the run, ramp included, if any (retrans).\n")
    print("| 4 KiB unless noted | " + " | ".join(c[0] for c in cols) + " | floor |")
    print("|---|" + "---|" * (len(cols) + 1))
    for cell in cells:
        fl = f"poll p50 {fp[0]} µs, block p50 {fb[0]} µs" if cell == "qd1" else "—"
        print(f"| {CELL_NAMES[cell]} | " + " | ".join(fmt(cell, f(cell)) for _, f in cols) + f" | {fl} |")
    if not cols or cols[0][0] != "SPDK→SPDK":
        return
    print("\nRatios to SPDK→SPDK in the same round. Bold: IOPS ours/SPDK (higher is better), QD1 p50 ours/SPDK "
          "(lower is better); p99 ours/SPDK; CPU per I/O ours/SPDK, initiator (i) and target (t) (lower is better).\n")
    print("| cell | " + " | ".join(c[0] for c in cols[1:]) + " |")
    print("|---|" + "---|" * (len(cols) - 1))

    def two(x):
        return "—" if x is None else f"{x:.2f}"
    for cell in cells:
        base = cols[0][1](cell)
        row = []
        for _, f in cols[1:]:
            r = f(cell)
            if base is None or r is None:
                row.append("—")
                continue
            text = f"**{two(main_ratio(cell, r, base))}** (p99 {two(ratio(r['p99'], base['p99']))}"
            if "cpu_t" in r and "cpu_t" in base:
                text += (f"; CPU i {two(ratio(r['cpu_i'], base['cpu_i']))} "
                         f"t {two(ratio(r['cpu_t'], base['cpu_t']))}")
            row.append(text + ")")
        print(f"| {CELL_NAMES[cell]} | " + " | ".join(row) + " |")


def summary(dirs, cells, modes):
    """Per cell and column: the ratio to SPDK->SPDK of each round (each against its own round's SPDK), then the
    median over the rounds."""
    rounds = [columns(d, modes) for d in dirs]
    rounds = [cols for cols in rounds if cols and cols[0][0] == "SPDK→SPDK"]
    if not rounds:
        print("No round ran SPDK: no ratios.")
        return
    titles = [t for t, _ in rounds[0][1:]]
    print(f"Ratios to SPDK→SPDK, each against SPDK→SPDK of its own round ({len(rounds)} rounds): round 1, round 2, "
          "... and the **median**. IOPS ours/SPDK (higher is better); QD1 p50 ours/SPDK (lower is better).\n")
    print("| cell | " + " | ".join(titles) + " |")
    print("|---|" + "---|" * len(titles))
    for cell in cells:
        row = []
        for k in range(len(titles)):
            values = []
            for cols in rounds:
                base, r = cols[0][1](cell), cols[k + 1][1](cell)
                values.append(main_ratio(cell, r, base) if base and r else None)
            seen = [v for v in values if v is not None]
            listed = ", ".join("—" if v is None else f"{v:.2f}" for v in values)
            row.append(f"{listed} (**{statistics.median(seen):.2f}**)" if seen else listed)
        print(f"| {CELL_NAMES[cell]} | " + " | ".join(row) + " |")


def main(argv):
    if len(argv) < 3 or argv[1] not in ("round", "summary"):
        print(__doc__, file=sys.stderr)
        return 2
    cells = os.environ.get("CELLS", "qd1 qd32 qd128 read128k randwrite").split()
    modes = os.environ.get("MODES", "busy default").split()
    unknown = [c for c in cells if c not in CELL_NAMES]
    if unknown:
        print(f"vs-spdk-table.py: unknown cell(s) {' '.join(unknown)}", file=sys.stderr)
        return 2
    if argv[1] == "round":
        round_tables(argv[2], cells, modes)
    else:
        summary(argv[2:], cells, modes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
