"""With pages read from the disk, what a TPC-H power test's per-block log ratio is made of: the server's CPU time,
the pages it read, and how long it waited for each read; and the ratio of the two twins' times at a common wait per
read.

A twin's power test time E is its server's CPU time C plus what it waited for (W = E − C: mostly its page reads
from the disk, and a little for round trips and locks). W / P, with P the pages it read from the disk (the engine's
counter), is its wait per page read. Two twins of the same data read the same pages in the same number (in an A/A
test the read counts differ by a fraction of a percent), so a difference in W / P is how long the disk (and the
path to it) took for the same requests. The time at the block's common wait per read,

    E* = C + P · w̄,   w̄ = (W_plain + W_config) / (P_plain + P_config),

keeps what each twin's own work adds (its CPU, e.g. decrypting every page, and the reads it makes) and charges both
twins the same wait for each read, that of the same minutes of the same disk. Its log ratio E*_config / E*_plain is
what the twins' time would differ by if each read had waited as long for both. It leaves out any difference the
config makes to the wait for one read, so before it is trusted its estimate must agree with the elapsed time's
over a long run (TDE against plain) and its A/A intervals must exclude 0 no more often than 5%.

Per run: each figure's per-block log ratio (config / plain, percent): mean, sd and lag-1; then the 95% interval of
the elapsed time and of E*: the paired t-interval on the blocks' log ratios (``--interval t``, what the report gives a
run of fixed ``--trials``) or the stopping rule's (``--interval rule``: ``ar1-upper``, as ``--precision`` checks).
With several A/A runs: how many of their intervals exclude 0, for both. Over every block of every run: how the
CPU time's ratio goes with the wait per read's (their correlation), and by how much the twins differed per read in
each (medians of the absolute differences, µs). ``--against q09,q10``: whether a block's ratio of ``--step`` goes
with those of other steps of the same block (a twin drawing its speed once per server start would make them go
together), as correlations over every block.

    python benchmarks/wait_split.py RUN_DIR [RUN_DIR ...] [--step total] [--interval t|rule] [--against q09,q10]
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from block_ratios import block_values  # noqa: E402  (a sibling script)
from tdebench.api.regime import split_label  # noqa: E402
from tdebench.stats.aa import false_positive_rate  # noqa: E402
from tdebench.stats.common_wait import at_common_wait  # noqa: E402
from tdebench.stats.logt import log_t  # noqa: E402
from tdebench.stats.sequential import StoppingRule, lag1  # noqa: E402

#: (test, metric) of the three figures per step: elapsed time, the server's CPU time, pages read from the disk
FIGURES = {"elapsed": ("power", "elapsed"), "cpu": ("power", "server_cpu"), "reads": ("counters", "pages_read")}
RULE = StoppingRule(1.0)


def plan_configs(path: Path) -> list[str]:
    """The run's configs in plan order (the first is the plain twin)."""
    return [c["label"] for c in json.loads((path / "manifest.json").read_text())["plan"]["configs"]]


@functools.lru_cache(maxsize=None)  # the summaries over runs and steps ask for the same pairs again
def block_pairs(path: Path, step: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """figure -> (plain, config) per block, for elapsed, cpu, reads, wait_per_read and at_common_wait; blocks with
    every figure of both twins only."""
    f = {k: {split_label(config)[0]: by for config, by in block_values(path / "measurements.csv", test, metric)
             .get(step, {}).items()} for k, (test, metric) in FIGURES.items()}
    base, config = plan_configs(path)[:2]
    blocks = sorted(set.intersection(*(set(f[k].get(c, {})) for k in FIGURES for c in (base, config))))
    get = {k: (np.array([f[k][base][b] for b in blocks]), np.array([f[k][config][b] for b in blocks]))
           for k in FIGURES}
    (e0, e1), (c0, c1), (p0, p1) = get["elapsed"], get["cpu"], get["reads"]
    both = at_common_wait(np.stack([e0, e1]), np.stack([c0, c1]), np.stack([p0, p1]))
    return {**get, "wait_per_read": ((e0 - c0) / p0, (e1 - c1) / p1), "at_common_wait": (both[0], both[1])}


def describe(name: str, pair: tuple[np.ndarray, np.ndarray]) -> str:
    d = 100 * np.log(pair[1] / pair[0])
    sd = float(d.std(ddof=1)) if d.size > 1 else math.nan
    r1 = lag1(d / 100) if d.size > 2 else math.nan
    return f"  {name:<15} mean {d.mean():+6.2f}%  sd {sd:5.2f}%  lag-1 {r1:+.2f}"


@dataclass(frozen=True)
class Interval:
    """An overhead estimate with its 95% interval, in percent."""

    estimate_pct: float
    ci_low_pct: float
    ci_high_pct: float

    @property
    def half_width_pp(self) -> float:
        """The larger distance from the estimate to an end of the interval, as ``--precision`` measures it."""
        return max(self.estimate_pct - self.ci_low_pct, self.ci_high_pct - self.estimate_pct)


def interval(pair: tuple[np.ndarray, np.ndarray], kind: str) -> Interval:
    """The paired t-interval on the blocks' log ratios (``t``) or the stopping rule's (``rule``)."""
    if kind == "rule":
        d = RULE.check_paired(pair[0], pair[1])
        return Interval(d.estimate_pct, d.ci_low_pct, d.ci_high_pct)
    t = log_t(pair[0], pair[1], paired=True)
    assert t is not None
    return Interval(100 * t.estimate, 100 * t.ci[0], 100 * t.ci[1])


def show_run(path: Path, step: str, kind: str) -> dict[str, Interval] | None:
    pairs = block_pairs(path, step)
    n = pairs["elapsed"][0].size
    if n < 2:
        print(f"{path.name}: {n} measured block(s) with every figure; nothing to compare")
        return None
    share = float(np.mean((pairs["elapsed"][0] - pairs["cpu"][0]) / pairs["elapsed"][0]))
    print(f"{path.name} ({step}, {n} blocks; the plain twin waited {100 * share:.0f}% of its time, "
          f"{1e6 * float(np.mean(pairs['wait_per_read'][0])):.1f} µs per page read):")
    for name in ("elapsed", "cpu", "reads", "wait_per_read", "at_common_wait"):
        print(describe(name, pairs[name]))
    out = {name: interval(pairs[name], kind) for name in ("elapsed", "at_common_wait")}
    for name, d in out.items():
        print(f"  {name}: {d.estimate_pct:+.2f}% (95% CI {d.ci_low_pct:+.2f}% to {d.ci_high_pct:+.2f}%), "
              f"±{d.half_width_pp:.2f} points")
    return out


def per_read_differences(runs: list[Path], step: str) -> str:
    """Over every block: the correlation of the CPU's and the wait per read's log ratios, and the median absolute
    difference between the twins per page read, of wait and of CPU (µs)."""
    cpu, wait, cpu_us, wait_us = [], [], [], []
    for path in runs:
        pairs = block_pairs(path, step)
        (c0, c1), (p0, _), (w0, w1) = pairs["cpu"], pairs["reads"], pairs["wait_per_read"]
        cpu += list(np.log(c1 / c0))
        wait += list(np.log(w1 / w0))
        cpu_us += list(np.abs(c1 - c0) / p0 * 1e6)
        wait_us += list(np.abs(w1 - w0) * 1e6)
    r = correlation(np.array(cpu), np.array(wait))
    if r == "n/a":
        return "too few blocks, or ratios that do not vary, for a correlation"
    return (f"over {len(cpu)} blocks: correlation of the CPU's and the wait per read's ratios {r}; the twins "
            f"differed by a median {np.median(wait_us):.1f} µs of wait and {np.median(cpu_us):.1f} µs of CPU per page "
            "read")


def correlation(a: np.ndarray, b: np.ndarray) -> str:
    """Their correlation, or "n/a" when either does not vary."""
    if a.size < 3 or not np.std(a) or not np.std(b):
        return "n/a"
    return f"{float(np.corrcoef(a, b)[0, 1]):+.2f}"


def step_correlations(runs: list[Path], step: str, others: list[str]) -> list[str]:
    """Per figure, the correlation over every block of ``step``'s log ratio with each of ``others``'."""
    def ratios(name: str, figure: str) -> np.ndarray:
        out: list[float] = []
        for path in runs:
            plain, config = block_pairs(path, name)[figure]
            out += list(np.log(config / plain))
        return np.array(out)

    lines = []
    for figure in ("elapsed", "cpu", "wait_per_read"):
        mine = ratios(step, figure)
        cells = [f"{o} {correlation(mine, ratios(o, figure))}" for o in others]
        lines.append(f"  {figure} of {step} with the same block's: {', '.join(cells)} ({mine.size} blocks)")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="run directories (TPC-H, pages from the disk)")
    ap.add_argument("--step", default="total", help="a power-test step, e.g. q14 (default: the power total)")
    ap.add_argument("--against", default="", help="comma-separated steps to correlate --step's ratios with")
    ap.add_argument("--interval", choices=("t", "rule"), default="t",
                    help="t: the paired t-interval of a run of fixed --trials; rule: ar1-upper, as --precision")
    args = ap.parse_args()
    for path in args.runs:
        if not (path / "measurements.csv").is_file():
            ap.error(f"{path} holds no measurements.csv: give tdebench run directories")
    results = [r for r in (show_run(p, args.step, args.interval) for p in args.runs) if r is not None]
    print(per_read_differences(args.runs, args.step))
    if args.against:
        print("\n".join(step_correlations(args.runs, args.step, args.against.split(","))))
    if len(results) > 1:
        print(f"\nover {len(results)} runs (for A/A runs: intervals that exclude 0):")
        for name in ("elapsed", "at_common_wait"):
            print(f"  {name}: {false_positive_rate([r[name] for r in results]).text()}")


if __name__ == "__main__":
    main()
