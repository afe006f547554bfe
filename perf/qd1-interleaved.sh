#!/usr/bin/env bash
# perf/qd1-interleaved.sh: the QD1 latency cell of issue 13, measured with the setups interleaved round by round.
#
#   SPDK_DIR=/path/to/built/spdk perf/qd1-interleaved.sh [OUTDIR]
#
# Why: on this VM the loopback round trip drifts between a fast and a slow phase, minutes apart, that moves every
# setup's QD1 latency by ~3 µs (perf/README.md, "QD1 measured interleaved"). perf/vs-spdk.sh runs all our cells
# before SPDK's, so a phase change between them decides the QD1 ratio. Here every round runs each setup once, one
# after the other, each against a freshly started target, so that a ratio compares setups measured within about a
# minute of each other.
#
# Setups (VARIANTS, in this order each round):
#   spdk  spdk_nvme_perf -> SPDK's nvmf_tgt (malloc bdev)           (needs SPDK_DIR)
#   os    our perf --hipri -> SPDK's nvmf_tgt                        (needs SPDK_DIR)
#   ours  spdk_nvme_perf -> our target --busy-poll                  (needs SPDK_DIR)
#   oo    our perf --hipri -> our target --busy-poll
# 4 KiB randread at queue depth 1, target on core TARGET_CPU (1), initiator on core PERF_CPU (0), loopback, 1 GiB
# RAM namespace (ours preallocated), digests off, as in vs-spdk.sh. Every target's namespace is written once before it
# is measured (fill_namespace), as in vs-spdk.sh: on this VM a read of SPDK's malloc bdev memory never touched takes a
# page fault, which put SPDK->SPDK's QD1 p50 at 34-40 us against 22 us filled, while our target reads unwritten blocks
# from one shared zero buffer (perf/README.md, "idle turns, one loop thread per core, QD1 against SPDK's untouched
# memory").
#
# Knobs: ROUNDS (4), RUNTIME (6 s), RAMP (2 s for spdk_nvme_perf, OUR_RAMP 10 s for our perf: its JIT), VARIANTS,
# TARGET_CPU, PERF_CPU, PORT (4432, ours), SPDK_PORT (4420), SPDK_TGT_OPTS / SPDK_PERF_OPTS (as in vs-spdk.sh),
# FILL_SECONDS (120: the most a fill may take).
# Prints a Markdown table (OUTDIR/results.md): p50, p99 and mean per setup and round, p50 ratios to spdk and their
# median over the rounds.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bin/lib.sh
. "$ROOT/bin/lib.sh"
OUT=${1:-$ROOT/perf/build/qd1-interleaved-$(date +%Y%m%d-%H%M%S)}
ROUNDS=${ROUNDS:-4}
RUNTIME=${RUNTIME:-6}
RAMP=${RAMP:-2}
OUR_RAMP=${OUR_RAMP:-10}
TARGET_CPU=${TARGET_CPU:-1}
PERF_CPU=${PERF_CPU:-0}
PORT=${PORT:-4432}
SPDK_PORT=${SPDK_PORT:-4420}
FILL_SECONDS=${FILL_SECONDS:-120}
OUR_NQN=nqn.2024-01.io.nvmeof:qd1-interleaved
SPDK_NQN=nqn.2016-06.io.spdk:cnode1
# shellcheck source=perf/bench-lib.sh
. "$ROOT/perf/bench-lib.sh"
if [ -n "${SPDK_DIR:-}" ]; then
  VARIANTS=${VARIANTS:-spdk os ours oo}
  require_spdk_tree qd1-interleaved.sh
else
  VARIANTS=${VARIANTS:-oo}
  case " $VARIANTS " in *" spdk "* | *" ours "* | *" os "*)
    echo "qd1-interleaved.sh: the spdk, os and ours setups need SPDK's tools: set SPDK_DIR to a built SPDK tree" >&2; exit 2 ;;
  esac
fi
command -v python3 >/dev/null || { echo "qd1-interleaved.sh: python3 is needed" >&2; exit 1; }
mkdir -p "$OUT"
"$ROOT/bin/nvmeof-perf" --help > /dev/null # builds on first use, outside the measured runs
JAR=$(ls "$ROOT"/perf/build/nvmeof-perf-*.jar | grep -v -- '-tests.jar' | head -1)
trap stop_target EXIT

start_ours() { # LOG
  rm -f "$1" # wait_listening must not find the line of an earlier start
  # shellcheck disable=SC2046
  taskset -c "$TARGET_CPU" java $(nvmeof_jvm_opts) -cp "$JAR:$ROOT/perf/build/lib/*" \
    io.nvmeof.target.daemon.TargetDaemon --listen "tcp://127.0.0.1:$PORT" --nqn "$OUR_NQN" \
    --namespace size=1g,bs=4096,prealloc --memory-budget 2g --busy-poll > "$1" 2>&1 &
  TPID=$!
  wait_listening "$1" qd1-interleaved.sh
  fill_namespace "nvme+tcp://127.0.0.1:$PORT/$OUR_NQN" "${1%.log}-fill.json" qd1-interleaved.sh
}

start_spdk() { # LOG
  start_spdk_target "$1" "$OUT/spdk.sock" qd1-interleaved.sh
  fill_namespace "nvme+tcp://127.0.0.1:$SPDK_PORT/$SPDK_NQN" "${1%.log}-fill.json" qd1-interleaved.sh
}

spdk_perf() { # PORT NQN OUTFILE
  # shellcheck disable=SC2086
  taskset -c "$PERF_CPU" "$SPDK_DIR/build/bin/spdk_nvme_perf" -c "$(printf '0x%x' $((1 << PERF_CPU)))" -q 1 -o 4096 \
    -w randread -t "$RUNTIME" -a "$RAMP" -L ${SPDK_PERF_OPTS:-} \
    -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$1 subnqn:$2" > "$3" 2>&1 \
    || echo "qd1-interleaved.sh: spdk_nvme_perf failed, see $3" >&2
}

our_perf() { # PORT NQN OUTFILE.json
  taskset -c "$PERF_CPU" "$ROOT/bin/nvmeof-perf" --target "nvme+tcp://127.0.0.1:$1/$2" --hipri \
    --rw=randread --bs=4096 --iodepth=1 --runtime="$RUNTIME" --ramp_time="$OUR_RAMP" \
    --percentile_list=50:99 --output-format=json --output="$3" 2> "${3%.json}.stderr" \
    || echo "qd1-interleaved.sh: our perf failed, see ${3%.json}.stderr" >&2
}

for r in $(seq 1 "$ROUNDS"); do
  for v in $VARIANTS; do
    echo "qd1-interleaved.sh: round $r, $v" >&2
    case $v in
      spdk)
        start_spdk "$OUT/target-spdk-r$r.log"
        spdk_perf "$SPDK_PORT" "$SPDK_NQN" "$OUT/spdk-r$r.txt" ;;
      ours)
        start_ours "$OUT/target-ours-r$r.log"
        spdk_perf "$PORT" "$OUR_NQN" "$OUT/ours-r$r.txt" ;;
      os)
        start_spdk "$OUT/target-os-r$r.log"
        our_perf "$SPDK_PORT" "$SPDK_NQN" "$OUT/os-r$r.json" ;;
      oo)
        start_ours "$OUT/target-oo-r$r.log"
        our_perf "$PORT" "$OUR_NQN" "$OUT/oo-r$r.json" ;;
      *) echo "qd1-interleaved.sh: unknown setup $v (spdk, os, ours, oo)" >&2; exit 2 ;;
    esac
    stop_target
  done
done

ROUNDS="$ROUNDS" VARIANTS="$VARIANTS" python3 - "$OUT" <<'EOF' | tee "$OUT/results.md"
import json, os, re, statistics, sys
out = sys.argv[1]
rounds = int(os.environ["ROUNDS"])
variants = os.environ["VARIANTS"].split()
names = {"spdk": "SPDK perf→SPDK", "os": "our perf (hipri)→SPDK", "ours": "SPDK perf→ours (busy)",
         "oo": "ours→ours (hipri, busy)"}

def spdk_txt(path):  # spdk_nvme_perf -L: "Total" line (mean in us) and the summary percentiles
    try:
        t = open(path).read()
    except OSError:
        return None
    m = re.search(r"^Total\s*:\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)", t, re.M)
    p = {k: re.search(r"^\s*%s%%\s*:\s*([\d.]+)us" % re.escape(k), t, re.M) for k in ("50.00000", "99.00000")}
    if not m or not all(p.values()):
        return None
    return {"mean": float(m.group(3)), "p50": float(p["50.00000"].group(1)), "p99": float(p["99.00000"].group(1))}

def ours_json(path):
    try:
        d = json.load(open(path))["jobs"][0]["read"]
    except Exception:
        return None
    c = d["clat_ns"]
    return {"mean": c["mean"] / 1e3, "p50": c["percentile"]["50.000000"] / 1e3, "p99": c["percentile"]["99.000000"] / 1e3}

def get(v, r):
    if v in ("oo", "os"):
        return ours_json(os.path.join(out, "%s-r%d.json" % (v, r)))
    return spdk_txt(os.path.join(out, "%s-r%d.txt" % (v, r)))

print("4 KiB randread QD1, setups interleaved each round (p50 / p99 / mean, µs); ratio = p50 / SPDK perf→SPDK's "
      "p50 in the same round.\n")
print("| round | " + " | ".join(names[v] for v in variants) + " |")
print("|---|" + "---|" * len(variants))
ratios = {v: [] for v in variants}
for r in range(1, rounds + 1):
    base = get("spdk", r) if "spdk" in variants else None
    cells = []
    for v in variants:
        x = get(v, r)
        if x is None:
            cells.append("failed")
            continue
        s = "%.2f / %.2f / %.2f" % (x["p50"], x["p99"], x["mean"])
        if base and v != "spdk":
            s += " (**%.2f×**)" % (x["p50"] / base["p50"])
            ratios[v].append(x["p50"] / base["p50"])
        cells.append(s)
    print("| %d | %s |" % (r, " | ".join(cells)))
if "spdk" in variants:
    print("| median ratio | " + " | ".join(
        "-" if v == "spdk" else ("**%.2f×**" % statistics.median(ratios[v]) if ratios[v] else "failed")
        for v in variants) + " |")
EOF
