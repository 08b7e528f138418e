"""Where the noise of a --workload sql run comes from: per statement, how much its visits vary within a block and
how much its blocks vary, against each config's plain twin.

Reads RUN_DIR/measurements.csv of a run under the interleaved schedule (one connection: each visit's mean time is
recorded as ``visit_elapsed`` with its round). For every compared config and statement it prints the sd of the log
ratio of a visit to the plain twin's visit of the same round, after each block's mean is taken out (the noise within
a block), the sd of the block means (what the interval of the block-paired overhead sees), and the sd the block
means would have if the visits were all there is (round sd / √visits per block). A block sd well above that is a
block effect (each block's servers, restarts, the machine's state then); one near it says more or longer visits per
block, or quieter visits, are what would narrow the interval.

    python benchmarks/visit_noise.py RUN_DIR
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np


def visits(path: Path) -> dict[str, dict[str, dict[tuple[int, int], float]]]:
    """statement -> config -> (block, round) -> mean time of that visit."""
    out: dict[str, dict[str, dict[tuple[int, int], float]]] = defaultdict(lambda: defaultdict(dict))
    with open(path, newline="") as handle:
        for r in csv.DictReader(handle):
            if r["test"] == "sql" and r["metric"] == "visit_elapsed" and r["status"] == "ok" and r["round"]:
                out[r["step"]][r["config"]][(int(r["block"]), int(r["round"]))] = float(r["value"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    args = parser.parse_args()
    data = visits(args.run / "measurements.csv")
    if not data:
        parser.error(f"{args.run} has no visit_elapsed rows (a --workload sql run under --schedule query)")
    plan = json.loads((args.run / "manifest.json").read_text())["plan"]["configs"]
    configs = [c["label"] for c in plan]
    plain = next(c["label"] for c in plan if c["encryption"] == "none")
    configs.remove(plain)
    print(f"{args.run}: against {plain}; log ratios in %")
    print(f"{'statement':<24}{'config':<32}{'visits/block':>13}{'round sd':>10}{'block sd':>10}{'from rounds':>12}"
          f"{'mean':>8}")
    for step, by in data.items():
        for config in configs:
            keys = sorted(set(by[plain]) & set(by.get(config, {})))
            if not keys:
                continue
            d = {k: math.log(by[config][k] / by[plain][k]) for k in keys}
            blocks = sorted({b for b, _ in keys})
            means = {b: float(np.mean([v for (bb, _), v in d.items() if bb == b])) for b in blocks}
            within = np.array([v - means[b] for (b, _), v in d.items()])
            per = len(keys) / len(blocks)
            round_sd = float(within.std(ddof=1)) if within.size > 1 else math.nan
            block_sd = float(np.std(list(means.values()), ddof=1)) if len(blocks) > 1 else math.nan
            print(f"{step:<24}{config:<32}{per:>13.1f}{100 * round_sd:>9.2f}%{100 * block_sd:>9.2f}%"
                  f"{100 * round_sd / math.sqrt(per):>11.2f}%{100 * float(np.mean(list(d.values()))):>+7.2f}%")


if __name__ == "__main__":
    main()
