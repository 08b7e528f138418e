#!/usr/bin/env python3
"""Does one config's slice leave work that slows the next? The carry-over of the interleaved schedule.

    python benchmarks/carryover.py RUN_DIR [--metric tpm] [--step vu4]

Reads measurements.csv of a run made with the interleaved schedule (TPC-C or sysbench, ``--schedule query``) and
prints, for the measured slices in the order they ran within each block:

* the mean log of the metric for every pair (config, config of the slice just before it), with its standard
  error: a config whose slices are slower after another config's slice than after its own pays for the other's
  leftover work (InnoDB's page cleaner flushing, and with TDE encrypting, the other's dirty pages);
* the per-round log ratio of every config against the first, split by which of the two ran first in the round.

With a random order every round, a slice follows the other config 3 times in 4, and the estimate moves by half the
difference between the two configs' carry-overs (towards 0 when the encrypted config leaves the dearer work). An
A/A run should show no carry-over; a TDE run shows how much of its write cost lands in the plain twin's slices.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
from collections import defaultdict
from pathlib import Path


def slices(run_dir: Path, metric: str, step: str) -> list[dict[str, str]]:
    with open(run_dir / "measurements.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["status"] not in ("warmup", "failed") and r["metric"] == metric
                and r["step"] == step and r.get("round") and float(r["value"]) > 0]
    return sorted(rows, key=lambda r: (int(r["block"]), r["started_at"]))


def mean_se(values: list[float]) -> str:
    if len(values) < 2:
        return f"n {len(values)}"
    se = statistics.stdev(values) / math.sqrt(len(values))
    return f"n {len(values):>4}  mean log {statistics.fmean(values):.4f} ± {se:.4f}"


def carryover(rows: list[dict[str, str]]) -> None:
    groups: dict[tuple[str, str], list[float]] = defaultdict(list)
    for before, row in zip(rows, rows[1:]):
        if before["block"] == row["block"]:
            groups[(row["config"], before["config"])].append(math.log(float(row["value"])))
    print("slice of        after a slice of")
    for (config, before), values in sorted(groups.items()):
        print(f"  {config:<28} {before:<28} {mean_se(values)}")
    for config in sorted({c for c, _ in groups}):
        own, other = groups.get((config, config), []), [v for (c, b), vs in groups.items()
                                                         if c == config and b != config for v in vs]
        if len(own) > 1 and len(other) > 1:
            diff = statistics.fmean(other) - statistics.fmean(own)
            se = math.hypot(statistics.stdev(own) / math.sqrt(len(own)), statistics.stdev(other) / math.sqrt(len(other)))
            print(f"{config}: after another config {100 * math.expm1(diff):+.1f}% (± {196 * se:.1f} points, 95%) "
                  "against after its own")


def order_split(rows: list[dict[str, str]]) -> None:
    by_round: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        by_round[(row["block"], row["round"])].append(row)
    configs = sorted({r["config"] for r in rows}, key=lambda c: min(r["started_at"] for r in rows if r["config"] == c))
    base = configs[0]
    for config in configs[1:]:
        split: dict[str, list[float]] = defaultdict(list)
        for pair in by_round.values():
            values = {r["config"]: r for r in pair}
            if base in values and config in values:
                first = min((values[base], values[config]), key=lambda r: r["started_at"])["config"]
                split[first].append(math.log(float(values[config]["value"]) / float(values[base]["value"])))
        every = [v for vs in split.values() for v in vs]
        print(f"{config} against {base}: {100 * math.expm1(statistics.fmean(every)):+.2f}% over {len(every)} rounds; "
              + "; ".join(f"{first} first: {100 * math.expm1(statistics.fmean(vs)):+.2f}% (n {len(vs)})"
                          for first, vs in sorted(split.items())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--metric", default="tpm")
    ap.add_argument("--step", default="vu4")
    args = ap.parse_args()
    rows = slices(args.run_dir, args.metric, args.step)
    if not rows:
        raise SystemExit(f"no measured slices of {args.metric} at step {args.step} in {args.run_dir}")
    carryover(rows)
    order_split(rows)


if __name__ == "__main__":
    main()
