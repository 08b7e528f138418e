#!/usr/bin/env python3
"""Which slice length resolves an OLTP overhead fastest on this machine.

    python benchmarks/slice_length.py [--workload tpcc|sysbench] [--seconds 240] [--out DIR] [--run DIR]

Runs ONE config (``--encryption none``) of the interleaved schedule with 1-s slices back to back for ``--seconds``
(TPC-C on MariaDB, 2 warehouses, 4 virtual users; or sysbench oltp_read_write, 2 threads), so measurements.csv
holds one throughput figure per second and, per slice, the CPUs the machine's other tenants kept busy
(``foreign_cores``). Then it replays the schedule on that series: for each slice length S it cuts the series into
rounds of two slices of S seconds, assigns the two arms in a random order (as the schedule does), and takes the
log ratio of their throughputs. The two arms are the same server, so every ratio is noise. It prints, per S:

* ``sd``: the standard deviation of one round's log ratio;
* ``sd·√(s/round)``: the same noise per second of measured time, with each slice's measured cost (slice plus its
  switching overhead, taken from the run's own timestamps). The 95% half-width after T seconds of rounds is about
  1.96 · this / √T, so the smallest figure is the most efficient slice length;
* the autocorrelation of the per-second series (how long the machine's noise lasts), and how much of the
  per-second variance the other tenants' CPU explains.

``--run DIR`` analyses a run directory made before (e.g. by this script) without running anything. Heavy: one
benchmark at a time.
"""

from __future__ import annotations

import argparse
import csv
import math
import random
import statistics
import subprocess
import sys
from datetime import datetime
from pathlib import Path

SLICES = (1, 2, 3, 5, 10, 15)
WORKLOADS = {
    "tpcc": ["--workload", "tpcc", "--warehouses", "2", "--vus", "4"],
    "sysbench": ["--workload", "sysbench", "--vus", "2", "--workload-option", "tests=oltp_read_write",
                 "--workload-option", "table_size=100000"],
}
THROUGHPUT = {"tpcc": "tpm", "sysbench": "tps"}


def run(workload: str, seconds: int, out: Path) -> None:
    """One config, 1-s slices, ``seconds`` of them, no warm-up block (the ramp-up warms)."""
    cmd = [sys.executable, "-m", "tdebench", "run", "--engine", "mariadb", *WORKLOADS[workload],
           "--encryption", "none", "--slice", "1s", "--duration", f"{seconds}s", "--trials", "1",
           "--warmup", "0", "--out", str(out)]
    print("$", " ".join(cmd[1:]), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def series(run_dir: Path, metric: str) -> tuple[list[float], list[float], float]:
    """(throughput per slice, foreign cores per slice, mean seconds from one slice's start to the next)."""
    by_round: dict[int, dict[str, float]] = {}
    starts: list[datetime] = []
    with open(run_dir / "measurements.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            if row["status"] == "warmup" or not row.get("round"):
                continue
            if row["metric"] == metric and "." not in row["step"]:
                by_round.setdefault(int(row["round"]), {})["x"] = float(row["value"])
                starts.append(datetime.fromisoformat(row["started_at"].replace("Z", "+00:00")))
            elif row["metric"] == "foreign_cores":
                by_round.setdefault(int(row["round"]), {})["f"] = float(row["value"])
    rounds = [by_round[k] for k in sorted(by_round) if "x" in by_round[k]]
    starts.sort()
    pitch = (starts[-1] - starts[0]).total_seconds() / max(1, len(starts) - 1)
    return [r["x"] for r in rounds], [r.get("f", math.nan) for r in rounds], pitch


def autocorrelation(x: list[float], lag: int) -> float:
    m = statistics.fmean(x)
    den = sum((v - m) ** 2 for v in x)
    return sum((x[i] - m) * (x[i + lag] - m) for i in range(len(x) - lag)) / den if den else math.nan


def round_sd(x: list[float], s: int, rng: random.Random) -> tuple[float, int]:
    """sd of log(B/A) over rounds of two s-second slices in a random order, averaged over 200 draws."""
    sds, n = [], 0
    for _ in range(200):
        ratios = []
        for i in range(0, len(x) - 2 * s + 1, 2 * s):
            a, b = sum(x[i:i + s]), sum(x[i + s:i + 2 * s])
            if rng.random() < 0.5:
                a, b = b, a
            ratios.append(math.log(b / a))
        if len(ratios) > 2:
            sds.append(statistics.pstdev(ratios))
            n = len(ratios)
    return (statistics.fmean(sds) if sds else math.nan), n


def analyse(run_dir: Path, metric: str) -> None:
    x, foreign, pitch = series(run_dir, metric)
    x = [v for v in x if v > 0]
    logs = [math.log(v) for v in x]
    overhead = max(0.0, pitch - 1.0)
    print(f"{len(x)} one-second slices, one every {pitch:.3f} s; throughput CV "
          f"{100 * statistics.stdev(x) / statistics.fmean(x):.1f}%")
    print("autocorrelation of log throughput: " + ", ".join(
        f"lag {k} s {autocorrelation(logs, k):+.2f}" for k in (1, 2, 3, 5, 10, 20) if k < len(x) - 2))
    # the run has no warm-up block: a transient after the ramp-up would show in the first windows
    print("mean throughput per 15 s from the first slice: " + ", ".join(
        f"{statistics.fmean(x[i:i + 15]):,.0f}" for i in range(0, len(x) - 14, 15)))
    pairs = [(f, v) for f, v in zip(foreign, logs) if not math.isnan(f)]
    if len(pairs) > 2:
        r = statistics.correlation([p[0] for p in pairs], [p[1] for p in pairs])
        print(f"other tenants: mean {statistics.fmean(p[0] for p in pairs):.2f} cores; correlation with log "
              f"throughput {r:+.2f} (explains {100 * r * r:.0f}% of its variance)")
    rng = random.Random(1)
    print(f"{'slice':>6} {'rounds':>7} {'sd':>7} {'sd·√(s/round)':>14}")
    for s in SLICES:
        sd, n = round_sd(x, s, rng)
        per_round = 2 * (s + overhead)
        print(f"{s:>5}s {n:>7} {100 * sd:>6.1f}% {100 * sd * math.sqrt(per_round):>14.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="tpcc")
    ap.add_argument("--seconds", type=int, default=240)
    ap.add_argument("--out", type=Path, default=Path("slice-length-bench"))
    ap.add_argument("--run", type=Path, help="analyse this run directory instead of running")
    args = ap.parse_args()
    run_dir = args.run
    if run_dir is None:
        run_dir = args.out / f"{args.workload}-{datetime.now():%Y%m%d-%H%M%S}"
        run(args.workload, args.seconds, run_dir)
    analyse(run_dir, THROUGHPUT[args.workload])


if __name__ == "__main__":
    main()
