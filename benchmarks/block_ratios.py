"""Per step, how a config's blocks compare with its plain twin's: the per-block log ratio's mean, sd and lag-1
autocorrelation (blocks that follow each other, which the stopping rule's AR(1) bound widens the interval for), and
in how many blocks the config was the faster. For an A/A test (``--encryption none,none``) whose interval leaves out 0,
this says whether one query carries the difference or every query leans the same way.

Reads RUN_DIR/measurements.csv (ok values of measured blocks; round values are averaged per block as logs).

    python benchmarks/block_ratios.py RUN_DIR [--test power] [--metric elapsed]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tdebench.api.regime import split_label  # noqa: E402
from tdebench.stats.sequential import lag1  # noqa: E402


def block_values(path: Path, test: str, metric: str) -> dict[str, dict[str, dict[int, float]]]:
    """step -> config -> block -> the block's value (the geometric mean of its rounds when it has several)."""
    logs: dict[str, dict[str, dict[int, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    with open(path, newline="") as handle:
        for r in csv.DictReader(handle):
            if r["test"] == test and r["metric"] == metric and r["status"] == "ok" and r["block"] not in ("", "0"):
                value = float(r["value"])
                if value > 0:
                    logs[r["step"]][r["config"]][int(r["block"])].append(math.log(value))
    return {step: {config: {b: math.exp(float(np.mean(v))) for b, v in blocks.items()}
                   for config, blocks in by.items()} for step, by in logs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--test", default="power", help="the test of the steps (power, sql, tpcc, ...)")
    parser.add_argument("--metric", default="elapsed")
    args = parser.parse_args()
    data = block_values(args.run / "measurements.csv", args.test, args.metric)
    if not data:
        parser.error(f"{args.run} has no ok {args.test}/{args.metric} values in measured blocks")
    plan = json.loads((args.run / "manifest.json").read_text())["plan"]["configs"]
    found = {c for by in data.values() for c in by}
    # the plan's first plain config; its label carries the memory ratio ("…@mem0.3") when the run swept one
    plain = next((c for p in plan if p["encryption"] == "none" for c in sorted(found)
                  if split_label(c)[0] == p["label"]), None)
    if plain is None:
        parser.error(f"{args.run} has no plain twin (encryption none) with {args.test}/{args.metric} values")
    print(f"{args.run}: {args.test}/{args.metric} against {plain}; log ratios in %")
    print(f"{'step':<20}{'config':<34}{'blocks':>7}{'mean':>8}{'sd':>7}{'lag-1':>7}{'faster in':>11}")
    for step in sorted(data, key=lambda s: (s == "total", s)):
        for config in sorted(c for c in data[step] if c != plain):
            blocks = sorted(set(data[step].get(plain, {})) & set(data[step][config]))
            if len(blocks) < 2:
                continue
            d = 100 * np.log([data[step][config][b] / data[step][plain][b] for b in blocks])
            faster = int((d < 0).sum())
            print(f"{step:<20}{config:<34}{len(blocks):>7}{d.mean():>+8.2f}{d.std(ddof=1):>7.2f}{lag1(d):>+7.2f}"
                  f"{f'{faster} of {len(blocks)}':>11}")


if __name__ == "__main__":
    main()
