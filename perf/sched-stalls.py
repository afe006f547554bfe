#!/usr/bin/env python3
"""Stalls of chosen threads in a scheduler trace: when they were runnable but off their CPU, and who ran instead.

    perf record -e sched:sched_switch -e sched:sched_waking -e sched:sched_migrate_task -a -o sched.data -- sleep 5
    perf script -i sched.data -F tid,cpu,time,event,trace | perf/sched-stalls.py --tids 1234,1240 [--names FILE]

Input: `perf script` lines of sched_switch / sched_waking / sched_migrate_task events. For each watched thread it
measures every interval off the CPU while runnable ("stall"): from a switch-out in state R (preempted) to the next
switch-in, or from a wake-up to the switch-in after a sleep (the wake-up delay). For each stall it sums what ran on
the CPU the thread came back on, per thread, during the stall. --names maps tid -> label (lines "TID LABEL") so
that threads of our two JVMs are named by their full Java names and side.

Prints: the stall distribution per watched thread (count per bucket, total, max), the share of the traced time each
watched thread ran, and the TOP longest stalls with who ran instead. Times in microseconds.
"""
import argparse
import bisect
import collections
import re
import sys

LINE = re.compile(r"^\s*(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)$")
SWITCH = re.compile(
    r"prev_comm=(.*?) prev_pid=(\d+) prev_prio=(-?\d+) prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+) next_prio=(-?\d+)"
)
WAKING = re.compile(r"comm=(.*?) pid=(\d+) prio=(-?\d+) target_cpu=(\d+)")
BUCKETS = [(0, 10), (10, 100), (100, 500), (500, 1000), (1000, 2000), (2000, 4000), (4000, 8000), (8000, float("inf"))]


def bucket_name(lo, hi):
    if hi == float("inf"):
        return f">={lo}"
    return f"{lo}-{hi}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tids", required=True, help="comma-separated thread ids to watch")
    ap.add_argument("--names", help="file of 'TID LABEL' lines")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--min-us", type=float, default=500, help="stalls at least this long are listed and summed")
    ap.add_argument("--long-us", type=float, default=1000, help="stalls at least this long are attributed")
    args = ap.parse_args()
    watched = {int(t) for t in args.tids.split(",") if t}
    names = {}  # tid -> "side:thread name" of the processes under test
    if args.names:
        for line in open(args.names):
            parts = line.rstrip("\n").split(" ", 1)
            if len(parts) == 2 and parts[0].isdigit():
                names.setdefault(int(parts[0]), parts[1])
    comm = {}

    def label(tid):
        if tid == 0:
            return "idle"
        return names.get(tid) or f"{comm.get(tid, '?')}[{tid}]"

    # per CPU: the thread on it and since when; the finished run segments (start, end, tid), kept in time order
    on_cpu = {}
    segments = collections.defaultdict(list)
    # per watched thread: state while off CPU
    out_at = {}  # tid -> (time, preempted)
    woken_at = {}
    ran = collections.Counter()
    stalls = collections.defaultdict(list)  # tid -> [(start, end, cpu, kind)]
    first = last = None
    for line in sys.stdin:
        m = LINE.match(line)
        if not m:
            continue
        cpu, t, ev, rest = int(m.group(2)), float(m.group(3)), m.group(4), m.group(5)
        first = t if first is None else first
        last = t
        if ev == "sched_switch":
            s = SWITCH.match(rest)
            if not s:
                continue
            prev, prev_state, nxt = int(s.group(2)), s.group(4), int(s.group(6))
            comm[prev], comm[nxt] = s.group(1), s.group(5)
            # before a CPU's first switch in the trace, the thread it switches away from ran since the trace began
            cur = on_cpu.get(cpu, (prev, first))
            if cur is not None:
                segments[cpu].append((cur[1], t, cur[0]))
                if cur[0] in watched:
                    ran[cur[0]] += t - cur[1]
            on_cpu[cpu] = (nxt, t)
            if prev in watched:
                out_at[prev] = (t, prev_state.startswith("R"))
                woken_at.pop(prev, None)
            if nxt in watched and nxt in out_at:
                t_out, preempted = out_at.pop(nxt)
                if preempted:
                    stalls[nxt].append((t_out, t, cpu, "preempted"))
                elif nxt in woken_at:
                    stalls[nxt].append((woken_at.pop(nxt), t, cpu, "wakeup"))
        elif ev == "sched_waking":
            w = WAKING.match(rest)
            if w:
                tid = int(w.group(2))
                comm[tid] = w.group(1)
                if tid in watched and tid in out_at and not out_at[tid][1]:
                    woken_at.setdefault(tid, t)
    span = (last - first) if first is not None else 0
    for cpu, (tid, since) in on_cpu.items():
        if tid in watched:
            ran[tid] += last - since
        segments[cpu].append((since, last, tid))

    print(f"trace: {span:.3f} s; watched threads: {', '.join(label(t) for t in sorted(watched))}")
    print()
    print("Stalls (runnable but off the CPU), microseconds:")
    hdr = ["thread", "ran %"] + [bucket_name(*b) for b in BUCKETS] + ["max", f">={args.min_us:g} us total ms"]
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for tid in sorted(watched):
        counts = [0] * len(BUCKETS)
        mx = 0.0
        long_total = 0.0
        for a, b, _, _ in stalls[tid]:
            d = (b - a) * 1e6
            mx = max(mx, d)
            if d >= args.min_us:
                long_total += d / 1e3
            for i, (lo, hi) in enumerate(BUCKETS):
                if lo <= d < hi:
                    counts[i] += 1
                    break
        share = 100 * ran[tid] / span if span else 0
        print(f"| {label(tid)} | {share:.1f} | " + " | ".join(str(c) for c in counts) + f" | {mx:.0f} | {long_total:.1f} |")

    ends = {cpu: [s1 for _, s1, _ in segs] for cpu, segs in segments.items()}

    def overlap(cpu, a, b, who, by_tid=False):
        segs = segments[cpu]
        for i in range(bisect.bisect_right(ends[cpu], a), len(segs)):
            s0, s1, t = segs[i]
            if s0 >= b:
                break
            who[t if by_tid else label(t)] += min(s1, b) - max(s0, a)

    def group(tid):
        if tid in names:
            return names[tid].split(":", 1)[0] + " process"
        c = comm.get(tid, "?")
        if tid == 0:
            return "idle"
        if re.match(r"(kworker|ksoftirqd|rcu_|migration|kdamond|irq/|kswapd|khugepaged|watchdog)", c):
            return "kernel threads"
        return "other processes"

    everything = [(b - a, a, b, cpu, kind, tid) for tid in watched for a, b, cpu, kind in stalls[tid]]
    everything.sort(reverse=True)
    print()
    print(f"Top {args.top} stalls, who ran on that CPU instead (us):")
    for d, a, b, cpu, kind, tid in everything[: args.top]:
        who = collections.Counter()
        overlap(cpu, a, b, who)
        top = ", ".join(f"{n} {v * 1e6:.0f}" for n, v in who.most_common(4))
        print(f"- {d * 1e6:7.0f} us at +{a - first:7.3f} s, {label(tid)} ({kind}) on CPU {cpu}: {top}")

    print()
    print(f"Who ran during all stalls >= {args.min_us:g} us of the watched threads (ms, summed):")
    who = collections.Counter()
    for d, a, b, cpu, kind, tid in everything:
        if d * 1e6 < args.min_us:
            continue
        overlap(cpu, a, b, who)
    for n, v in who.most_common(20):
        print(f"- {n}: {v * 1e3:.1f}")

    print()
    print(f"Stalls >= {args.long_us:g} us by who ran most during each (side of the thread that ran longest):")
    groups = collections.Counter()
    culprits = collections.defaultdict(collections.Counter)
    for d, a, b, cpu, kind, tid in everything:
        if d * 1e6 < args.long_us:
            continue
        who = collections.Counter()
        overlap(cpu, a, b, who, by_tid=True)
        if not who:
            continue
        t = who.most_common(1)[0][0]
        g = group(t)
        groups[g] += 1
        culprits[g][label(t).split(":", 1)[-1] if t in names else comm.get(t, "?")] += 1
    for g, n in groups.most_common():
        top = ", ".join(f"{c} {k}" for c, k in culprits[g].most_common(5))
        print(f"- {g}: {n} ({top})")

    print()
    print("Threads of the processes under test other than the watched ones that ran >= 1 ms in the trace (ms on CPU):")
    own = collections.Counter()
    for cpu, segs in segments.items():
        for s0, s1, t in segs:
            if t in names and t not in watched:
                own[(label(t), cpu)] += s1 - s0
    for (n, cpu), v in sorted(own.items(), key=lambda kv: -kv[1]):
        if v >= 1e-3:
            print(f"- {n} on CPU {cpu}: {v * 1e3:.1f}")

    print()
    print(f"Runs >= {args.long_us:g} us of threads outside the processes under test (the machine's noise), by name:")
    runs = collections.defaultdict(list)
    for cpu, segs in segments.items():
        for s0, s1, t in segs:
            if t not in names and t != 0 and (s1 - s0) * 1e6 >= args.long_us:
                runs[re.sub(r"\d+$", "N", comm.get(t, "?"))].append((s1 - s0) * 1e6)
    for n, v in sorted(runs.items(), key=lambda kv: -len(kv[1]))[:10]:
        print(f"- {n}: {len(v)} runs, max {max(v):.0f} us")

    print()
    print("Who used each CPU over the whole trace (% of the trace):")
    for cpu in sorted(segments):
        use = collections.Counter()
        for s0, s1, t in segments[cpu]:
            use[label(t)] += s1 - s0
        top = ", ".join(f"{n} {100 * v / span:.1f}" for n, v in use.most_common(8)) if span else ""
        print(f"- CPU {cpu}: {top}")


if __name__ == "__main__":
    main()
