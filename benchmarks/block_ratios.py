"""Per step, how a config's blocks compare with its plain twin's: the per-block log ratio's mean, sd and lag-1
autocorrelation (blocks that follow each other, which the stopping rule's AR(1) bound widens the interval for), and
in how many blocks the config was the faster (a shorter time, a higher throughput). For an A/A test (``--encryption
none,none``) whose interval leaves out 0, this says whether one query carries the difference or every query leans
the same way.

Reads RUN_DIR/measurements.csv (ok values of measured blocks; round values are averaged per block as logs).

    python benchmarks/block_ratios.py RUN_DIR [--test power] [--metric elapsed] [--with server_cpu_per_txn]

For a step measured in rounds (TPC-C's and sysbench's slices, repeated queries), it then splits the variance of a
round's log ratio into the part inside a block and the part the blocks add of their own (one-way ANOVA by block):
a between-block sd well above 0 is noise shared by the rounds of one block (its server processes, restarted before
every block, and its clients), which more rounds per block cannot average out; only more blocks can.

``--with METRIC`` adds, per step and config, the correlation of the per-block log ratios of ``--metric`` with those of
METRIC of the same step (e.g. TPC-C's TPM with the server's CPU per transaction: a block whose twin served fewer
transactions because its server spent more CPU on each).
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
from tdebench.stats.metrics import higher_is_better  # noqa: E402
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


def round_logs(path: Path, test: str, metric: str) -> dict[str, dict[str, dict[int, dict[int, float]]]]:
    """step -> config -> block -> round -> log value, for the values measured in rounds."""
    logs: dict[str, dict[str, dict[int, dict[int, float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(dict)))
    with open(path, newline="") as handle:
        for r in csv.DictReader(handle):
            if (r["test"] == test and r["metric"] == metric and r["status"] == "ok" and r["round"]
                    and r["block"] not in ("", "0") and float(r["value"]) > 0):
                logs[r["step"]][r["config"]][int(r["block"])][int(r["round"])] = math.log(float(r["value"]))
    return logs


def block_effect(groups: list[np.ndarray]) -> dict[str, float] | None:
    """One-way ANOVA of per-round log ratios grouped by block: the mean rounds per block ``k``, the within- and
    between-block sd (in the groups' unit), F, p and the design effect of a block mean (1 + k·σ_b²/σ_w²)."""
    from scipy import stats  # noqa: PLC0415 - only this part needs it

    groups = [g for g in groups if g.size > 1]
    if len(groups) < 2:
        return None
    f, p = stats.f_oneway(*groups)
    k = float(np.mean([g.size for g in groups]))
    within = float(np.mean([g.var(ddof=1) for g in groups]))
    between = max(0.0, (k * float(np.var([g.mean() for g in groups], ddof=1)) - within) / k)
    return {"blocks": len(groups), "k": k, "within_sd": math.sqrt(within), "between_sd": math.sqrt(between),
            "f": float(f), "p": float(p), "design_effect": 1 + k * between / within if within else math.inf}


def round_log_ratios(by: dict[str, dict[int, dict[int, float]]], config: str, plain: str) -> dict[int, list[float]]:
    """block -> the log ratios (config / plain) of the rounds both have, in order (blocks with none left out)."""
    base = by.get(plain, {})
    blocks = {b: [by[config][b][r] - base[b][r] for r in sorted(by[config][b]) if r in base.get(b, {})]
              for b in sorted(by[config])}
    return {b: ratios for b, ratios in blocks.items() if ratios}


def print_block_effects(path: Path, test: str, metric: str, plain: str) -> None:
    """Per step measured in rounds and per config, the block effect of its round-paired log ratios against ``plain``."""
    for step, by in sorted(round_logs(path, test, metric).items()):
        for config in sorted(c for c in by if c != plain):
            e = block_effect([100 * np.array(x) for x in round_log_ratios(by, config, plain).values()])
            if e:
                print(f"{step} {config}: block effect over {e['blocks']} blocks of about {e['k']:.0f} rounds: "
                      f"within-block sd of a round's log ratio {e['within_sd']:.2f}%, between-block sd "
                      f"{e['between_sd']:.2f}% (F = {e['f']:.2f}, p = {e['p']:.3f}); design effect of a block mean "
                      f"{e['design_effect']:.2f}")


def block_log_ratios(by: dict[str, dict[int, float]], config: str, plain: str) -> dict[int, float]:
    """block -> 100·log(config / plain) over the blocks both have."""
    return {b: 100 * math.log(by[config][b] / by[plain][b]) for b in sorted(set(by.get(plain, {})) & set(by[config]))}


def print_correlations(path: Path, test: str, metric: str, other: str, plain: str) -> None:
    """Per step and config, how the per-block log ratios of ``metric`` and ``other`` move together."""
    first, second = block_values(path, test, metric), block_values(path, test, other)
    for step in sorted(set(first) & set(second)):
        for config in sorted(c for c in first[step] if c != plain and c in second[step]):
            x, y = block_log_ratios(first[step], config, plain), block_log_ratios(second[step], config, plain)
            blocks = sorted(set(x) & set(y))
            if len(blocks) > 2:
                r = float(np.corrcoef([x[b] for b in blocks], [y[b] for b in blocks])[0, 1])
                print(f"{step} {config}: per-block log ratios of {metric} and {other} correlate at {r:+.2f} over "
                      f"{len(blocks)} blocks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--test", default="power", help="the test of the steps (power, sql, tpcc, ...)")
    parser.add_argument("--metric", default="elapsed")
    parser.add_argument("--with", dest="other", help="another metric of the same steps to correlate with --metric")
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
            ratios = block_log_ratios(data[step], config, plain)
            if len(ratios) < 2:
                continue
            d, blocks = np.array(list(ratios.values())), list(ratios)
            faster = int((d > 0).sum() if higher_is_better(args.metric) else (d < 0).sum())
            print(f"{step:<20}{config:<34}{len(blocks):>7}{d.mean():>+8.2f}{d.std(ddof=1):>7.2f}{lag1(d):>+7.2f}"
                  f"{f'{faster} of {len(blocks)}':>11}")
    print_block_effects(args.run / "measurements.csv", args.test, args.metric, plain)
    if args.other:
        print_correlations(args.run / "measurements.csv", args.test, args.metric, args.other, plain)


if __name__ == "__main__":
    main()
