"""Where the noise of a --workload sql run comes from: per statement, how much its visits vary within a block and
how much its blocks vary, against each config's plain twin.

Reads RUN_DIR/measurements.csv of a run under the interleaved schedule (one connection: each visit's mean time is
recorded as ``visit_elapsed`` with its round). For every compared config and statement it prints the sd of the log
ratio of a visit to the plain twin's visit of the same round, after each block's mean is taken out (the noise within
a block), the sd of the block means (what the interval of the block-paired overhead sees), and the sd the block
means would have if the visits were all there is (round sd / √visits per block). A block sd well above that is a
block effect (each block's servers, restarts, the machine's state then); one near it says more or longer visits per
block, or quieter visits, are what would narrow the interval. ``stalls``: the visits more than 3 times the
statement's median visit on that config, and on the plain twin (a few of them move a block's arithmetic mean far
more than its geometric mean).

Then, per headline (``reads``, ``writes``) and compared config, the block values two ways: the percentage (the
per-block log ratio, mean and sd) and the time added (config − plain per block, mean and sd, in ms), with each
one's correlation with the plain twin's own time in that block and its lag-1 autocorrelation from block to block.
A ratio that falls as the plain twin gets slower says the mechanism adds a fixed time rather than a fixed share;
block values that follow each other (lag-1 well above 0) widen the interval of ``--precision``, whose rule
allows for such a correlation (docs/precision-statistics.md).

Then, per statement and config, what a block's value would vary by (sd of the block log ratios) and come to (their
mean) if it were taken from the block's visits as their arithmetic mean, geometric mean, median or trimmed geometric
mean (20% of the visits left out at each end: the sql workload's ``elapsed``).

Last, where the measured blocks' wall time went: per statement, its share of the time from each visit's start to
the next visit's start in the same block (a write's untimed undo and wait included), summed over the blocks.

    python benchmarks/visit_noise.py RUN_DIR
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from block_ratios import block_values  # noqa: E402  (a sibling script)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from tdebench.stats.prefix import lag1  # noqa: E402
from tdebench.workloads.sql.stepped import TRIM, trimmed_geometric_mean  # noqa: E402


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
          f"{'mean':>8}{'stalls':>12}")
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
                  f"{100 * round_sd / math.sqrt(per):>11.2f}%{100 * float(np.mean(list(d.values()))):>+7.2f}%"
                  f"{f'{stalls(by[config])}/{stalls(by[plain])}':>12}")
    estimators(data, plain, configs)
    headlines(headline_blocks(args.run / "measurements.csv"), plain, configs)
    shares = wall_shares(args.run / "measurements.csv")
    print(f"\n{'statement':<24}{'share of the blocks wall time':>31}")
    for step, share in shares.items():
        print(f"{step:<24}{100 * share:>30.1f}%")


#: a block's value of a statement from its visits' mean times: what a stalled visit does to each
ESTIMATORS = {
    "arithmetic": lambda logs: math.log(float(np.mean(np.exp(logs)))),
    "geometric": lambda logs: float(np.mean(logs)),
    "median": lambda logs: float(np.median(logs)),
    f"trimmed {TRIM:.0%}": lambda logs: math.log(trimmed_geometric_mean(np.exp(logs))),  # the workload's own
}


def estimators(data: dict[str, dict[str, dict[tuple[int, int], float]]], plain: str, configs: list[str]) -> None:
    """Per statement and config: the sd and mean over blocks of the log ratio of the block values, each block value
    taken from the visits by each of :data:`ESTIMATORS` (the sql workload's ``elapsed`` is the trimmed one)."""
    print(f"\n{'statement':<24}{'config':<32}" + "".join(f"{name + ' sd':>17}{'mean':>8}" for name in ESTIMATORS))
    for step, by in data.items():
        for config in configs:
            if config not in by or plain not in by:
                continue
            cells = []
            for estimate in ESTIMATORS.values():
                ratios = block_log_ratios(by[plain], by[config], estimate)
                cells.append(f"{100 * np.std(ratios, ddof=1):>16.2f}%{100 * np.mean(ratios):>+7.2f}%"
                             if len(ratios) > 1 else f"{'—':>17}{'':>8}")
            print(f"{step:<24}{config:<32}" + "".join(cells))


def block_log_ratios(plain: dict[tuple[int, int], float], other: dict[tuple[int, int], float],
                     estimate: Callable[[np.ndarray], float]) -> list[float]:
    """Per block both twins have: ``estimate`` (of the log visit times) of the other less the plain twin's."""
    def per_block(visit_means: dict[tuple[int, int], float]) -> dict[int, float]:
        logs: dict[int, list[float]] = defaultdict(list)
        for (block, _), value in visit_means.items():
            logs[block].append(math.log(value))
        return {block: estimate(np.array(values)) for block, values in logs.items()}
    mine, theirs = per_block(other), per_block(plain)
    return [mine[b] - theirs[b] for b in sorted(set(mine) & set(theirs))]


def stalls(visit_means: dict[tuple[int, int], float], factor: float = 3.0) -> int:
    """How many visits took more than ``factor`` times the median visit."""
    values = np.array(list(visit_means.values()))
    return int((values > factor * np.median(values)).sum()) if values.size else 0


def wall_shares(path: Path) -> dict[str, float]:
    """statement -> its share of the measured blocks' wall time, visit start to the next visit's start."""
    starts: dict[int, list[tuple[datetime, str]]] = defaultdict(list)
    with open(path, newline="") as handle:
        for r in csv.DictReader(handle):
            if r["test"] == "sql" and r["metric"] == "visit_elapsed" and r["status"] == "ok" and r["round"]:
                when = datetime.fromisoformat(r["started_at"].replace("Z", "+00:00"))
                starts[int(r["block"])].append((when, r["step"]))
    spent: dict[str, float] = defaultdict(float)
    for visits_of_block in starts.values():
        visits_of_block.sort()
        for (when, step), (after, _) in zip(visits_of_block, visits_of_block[1:]):
            spent[step] += (after - when).total_seconds()
    total = sum(spent.values())
    return {step: spent[step] / total for step in sorted(spent)} if total > 0 else {}


def headline_blocks(path: Path) -> dict[str, dict[str, dict[int, float]]]:
    """headline (reads, writes) -> config -> block -> its weighted total time (s)."""
    data = block_values(path, "sql", "elapsed")
    return {step: by for step, by in data.items() if step in ("reads", "writes")}


def headlines(data: dict[str, dict[str, dict[int, float]]], plain: str, configs: list[str]) -> None:
    """The headlines' block values as a percentage and as time added, each against the plain twin's time."""
    print(f"\n{'headline':<10}{'config':<32}{'blocks':>7}{'ratio %':>9}{'sd':>7}{'corr':>7}{'lag1':>7}"
          f"{'added ms':>13}{'sd':>11}{'corr':>7}{'lag1':>7}")
    for step, by in data.items():
        for config in configs:
            blocks = sorted(set(by.get(plain, {})) & set(by.get(config, {})))
            if len(blocks) < 3:
                continue
            base = np.array([by[plain][b] for b in blocks])
            other = np.array([by[config][b] for b in blocks])
            ratio = 100 * np.log(other / base)
            added = 1000 * (other - base)
            print(f"{step:<10}{config:<32}{len(blocks):>7}{ratio.mean():>+9.2f}{ratio.std(ddof=1):>7.2f}"
                  f"{np.corrcoef(ratio, base)[0, 1]:>+7.2f}{lag1(ratio):>+7.2f}{added.mean():>+13.3f}"
                  f"{added.std(ddof=1):>11.3f}{np.corrcoef(added, base)[0, 1]:>+7.2f}{lag1(added):>+7.2f}")


if __name__ == "__main__":
    main()
