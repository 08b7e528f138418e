"""Coverage and cost of the sequential stopping rules behind ``--precision`` (stats/sequential.py).

Each repetition streams per-block log ratios d_i = log(1 + true overhead) + σ·u_i, σ = √2·CV (two
arms with independent noise of that CV; drift shared by the arms of a block cancels in d), and
every rule stops at the first n ≥ the pilot whose CI half-width (the larger distance from the
estimate, in percentage points of the overhead) is ≤ P. The rules are computed by the same
functions tdebench uses (``prefix_stats``, ``half_width_log``, ``pp_half_width``).

Noise u (mean 0, sd 1):
  normal      N(0, 1)
  t3          Student t with 3 df, scaled (heavy tails, infinite kurtosis)
  skewed      lognormal with shape 0.5, centred and scaled (skewness 1.75)
  ar1         Gaussian AR(1) with ρ = 0.3 across blocks (drift the pairing does not cancel)
  skewed-x    lognormal with shape 1.0 (skewness 6.2): an extreme case, shown apart

Per cell: coverage of the final interval (share of repetitions whose interval at the stop contains
the true overhead), mean and 95th percentile of n at the stop. With a true overhead of 0 a miss is
a false positive (the interval excludes 0), so the false-positive rate is 1 − coverage there; the
summary gives it with its exact (Clopper–Pearson) interval. A run that reaches --max-n without
meeting P stops there with its interval (counted in "not met").

    python benchmarks/sequential_coverage.py [--reps 2000] [--min-n 10] [--max-n 20000] [--seed 1]

Figures quoted in src/tdebench/stats/sequential.py and docs/precision-statistics.md come from
this script; update them after a rerun.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from tdebench.stats.aa import false_positive_rate
from tdebench.stats.prefix import prefix_stats
from tdebench.stats.sequential import (
    DEFAULT_MIN_N, RULES, RuleName, cs_mixing, half_width_log, pp_half_width, welch_half_width_log,
)

FAMILIES = ("normal", "t3", "skewed", "ar1", "skewed-x")
MAIN = FAMILIES[:4]
CORRELATED = ("ar1",)  # where a wider interval is the price of coverage, not a cost
CVS = (0.01, 0.03, 0.10)
TRUTHS = (0.0, 0.03)
TARGETS = (1.0, 2.0)
RHO = 0.3
SKEW_SHAPE = {"skewed": 0.5, "skewed-x": 1.0}
CONFIDENCE = 0.95
FIRST_CHUNK, MAX_CHUNK = 64, 2048


class Noise:
    """A stream of standardized noise for ``reps`` repetitions, drawn chunk by chunk."""

    def __init__(self, family: str, rng: np.random.Generator, reps: int) -> None:
        self.family, self.rng, self.reps = family, rng, reps
        self.prev = rng.normal(size=reps)  # AR(1) starts stationary

    def draw(self, m: int) -> np.ndarray:
        shape = (self.reps, m)
        if self.family == "normal":
            return self.rng.normal(size=shape)
        if self.family == "t3":
            return self.rng.standard_t(3, size=shape) / math.sqrt(3)
        if self.family in SKEW_SHAPE:
            s = SKEW_SHAPE[self.family]
            mean, sd = math.exp(s * s / 2), math.sqrt(math.expm1(s * s) * math.exp(s * s))
            return (np.exp(self.rng.normal(0, s, shape)) - mean) / sd
        if self.family == "ar1":
            e = self.rng.normal(size=shape) * math.sqrt(1 - RHO * RHO)
            out = np.empty(shape)
            for j in range(m):
                self.prev = RHO * self.prev + e[:, j]
                out[:, j] = self.prev
            return out
        raise ValueError(self.family)


class Result(NamedTuple):
    """One rule in one cell."""

    cover: float
    mean_n: float
    p95_n: float
    not_met: float
    misses: int
    reps: int


@dataclass
class Tracker:
    """Where each repetition stopped and whether its interval there covered the truth."""

    reps: int

    def __post_init__(self) -> None:
        self.n = np.zeros(self.reps, dtype=int)
        self.lo = np.full(self.reps, np.nan)
        self.hi = np.full(self.reps, np.nan)
        self.met = np.zeros(self.reps, dtype=bool)

    @property
    def done(self) -> bool:
        return bool((self.n > 0).all())

    def update(self, n: np.ndarray, mean: np.ndarray, h: np.ndarray, target: float, min_n: int,
               max_n: int) -> None:
        hw = pp_half_width(mean, h)
        met = (hw <= target) & (n >= min_n)
        stop = (met | (n >= max_n)) & (self.n == 0)[:, None]
        rows = np.flatnonzero(stop.any(axis=1))
        cols = stop[rows].argmax(axis=1)
        self.n[rows] = np.broadcast_to(n, stop.shape)[rows, cols]
        self.lo[rows], self.hi[rows] = mean[rows, cols] - h[rows, cols], mean[rows, cols] + h[rows, cols]
        self.met[rows] = met[rows, cols]

    def result(self, truth: float) -> Result:
        mu = math.log1p(truth)
        with np.errstate(invalid="ignore"):
            cover = (self.lo <= mu) & (mu <= self.hi)
        return Result(float(cover.mean()), float(self.n.mean()), float(np.percentile(self.n, 95)),
                      float(1 - self.met.mean()), int((~cover).sum()), self.reps)


def paired_cell(family: str, cv: float, truth: float, target: float, reps: int, min_n: int,
                max_n: int, seed: int) -> dict[str, Result]:
    """Every rule on the same simulated streams."""
    rng = np.random.default_rng([seed, FAMILIES.index(family), int(cv * 1000), int(truth * 1000),
                                 int(target * 10)])
    noise, mu, sigma = Noise(family, rng, reps), math.log1p(truth), math.sqrt(2) * cv
    trackers = {r: Tracker(reps) for r in RULES}
    carry, g, start, chunk = None, None, 0, FIRST_CHUNK
    while start < max_n and not all(t.done for t in trackers.values()):
        m = min(chunk, max_n - start)
        st, carry = prefix_stats(mu + sigma * noise.draw(m), carry)
        if g is None and start + m >= min_n:  # the CS fixes its mixing variance from the pilot
            j = min_n - 1 - start
            g = cs_mixing(st.mean[:, j], st.sd[:, j], target, min_n)[:, None]
        n = st.n[:1]
        for rule, tracker in trackers.items():
            h = half_width_log(rule, n, st.sd, st.r1, confidence=CONFIDENCE,
                               g=g if g is not None else 1.0)
            tracker.update(n, st.mean, h, target, min_n, max_n)
        start, chunk = start + m, min(chunk * 2, MAX_CHUNK)
    return {r: t.result(truth) for r, t in trackers.items()}


def unpaired_cell(family: str, cv: float, truth: float, target: float, reps: int, min_n: int,
                  max_n: int, seed: int, rules: tuple[RuleName, ...]) -> dict[str, Result]:
    """Two independent arms (log sd = CV each), Welch on the logs, both growing one per block."""
    rng = np.random.default_rng([seed, 99, FAMILIES.index(family), int(cv * 1000),
                                 int(target * 10)])
    arms = Noise(family, rng, reps), Noise(family, rng, reps)
    trackers = {r: Tracker(reps) for r in rules}
    carries: list = [None, None]
    start, chunk = 0, FIRST_CHUNK
    while start < max_n and not all(t.done for t in trackers.values()):
        m = min(chunk, max_n - start)
        s = []
        for i, (arm, shift) in enumerate(zip(arms, (0.0, math.log1p(truth)))):
            st, carries[i] = prefix_stats(shift + cv * arm.draw(m), carries[i])
            s.append(st)
        n = s[0].n[:1]
        for rule, tracker in trackers.items():
            h = welch_half_width_log(rule, n, s[0].sd, s[0].r1, n, s[1].sd, s[1].r1, CONFIDENCE)
            tracker.update(n, s[1].mean - s[0].mean, h, target, min_n, max_n)
        start, chunk = start + m, min(chunk * 2, MAX_CHUNK)
    return {r: t.result(truth) for r, t in trackers.items()}


class _CI(NamedTuple):
    ci_low_pct: float
    ci_high_pct: float


def fp_text(misses: int, reps: int) -> str:
    """``5.1% (4.2–6.2%)``: false-positive rate with its exact 95% interval."""
    rows = [_CI(1.0, 2.0)] * misses + [_CI(-1.0, 1.0)] * (reps - misses)
    f = false_positive_rate(rows)
    return f"{f.rate:.1%} ({f.ci_low:.1%}–{f.ci_high:.1%})"


def cell_text(r: Result) -> str:
    nm = "*" if r.not_met else " "
    return f"{r.cover:6.3f} {r.mean_n:7.1f} {r.p95_n:6.0f}{nm}"


def header(rules: tuple[str, ...]) -> str:
    top = f"{'noise':<10}{'CV':>4}{'true':>6}{'P':>4} |" + "".join(f" {r:<22}|" for r in rules)
    sub = f"{'':<24} |" + "".join(f" {'cover':>6} {'mean n':>7} {'p95 n':>6} |" for _ in rules)
    return top + "\n" + sub


def summarize(results: dict[tuple, dict[str, Result]], families: tuple[str, ...]) -> list[str]:
    """Per rule: lowest coverage, false positives at truth 0, blocks relative to fixed-width-t."""
    lines = []
    cells = {k: v for k, v in results.items() if k[0] in families}
    for rule in RULES:
        low_key = min(cells, key=lambda k: cells[k][rule].cover)
        low = cells[low_key][rule]
        nulls = [v[rule] for k, v in cells.items() if k[2] == 0.0]
        worst = max(nulls, key=lambda r: r.misses)
        pooled = fp_text(sum(r.misses for r in nulls), sum(r.reps for r in nulls))
        ratios = [v[rule].mean_n / v["fixed-width-t"].mean_n for k, v in cells.items()
                  if k[0] not in CORRELATED]
        fam, cv, truth, target = low_key
        lines.append(
            f"{rule:<14} coverage {min(v[rule].cover for v in cells.values()):.3f}–"
            f"{max(v[rule].cover for v in cells.values()):.3f} (lowest: {fam}, CV {cv:.0%}, "
            f"true {truth:+.0%}, P {target:g}); false positives at true 0: pooled {pooled}, worst "
            f"cell {fp_text(worst.misses, worst.reps)}; mean n ×{min(ratios):.2f}–×{max(ratios):.2f} "
            f"that of fixed-width-t with independent noise"
            + (f"; {low.not_met:.1%} not met" if low.not_met else ""))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="repetitions per cell")
    parser.add_argument("--min-n", type=int, default=DEFAULT_MIN_N, help="pilot blocks")
    parser.add_argument("--max-n", type=int, default=20_000, help="max-trials of every run")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.reps < 10 or args.min_n < 3 or args.max_n < args.min_n:
        parser.error("need --reps >= 10, --min-n >= 3 and --max-n >= --min-n")
    start = time.perf_counter()
    print("$ python " + shlex.join(["benchmarks/sequential_coverage.py", *sys.argv[1:]]))
    print(f"{args.reps} repetitions per cell; pilot {args.min_n} blocks; max {args.max_n} blocks; "
          f"{CONFIDENCE:.0%} intervals; per-block log-ratio sd = √2·CV")
    print("cover: share of final intervals containing the true overhead; n at the stop "
          "(* = some runs reached --max-n)\n")
    results: dict[tuple, dict[str, Result]] = {}
    print(header(RULES))
    for family in FAMILIES:
        for cv in CVS:
            for truth in TRUTHS:
                for target in TARGETS:
                    cell = paired_cell(family, cv, truth, target, args.reps, args.min_n,
                                       args.max_n, args.seed)
                    results[(family, cv, truth, target)] = cell
                    print(f"{family:<10}{cv:>4.0%}{truth:>+6.0%}{target:>4g} |"
                          + "".join(f" {cell_text(cell[r])}|" for r in RULES), flush=True)
    print(f"\nSummary over {', '.join(MAIN)} (24 cells at true 0 and 24 at +3%):")
    print("\n".join(summarize(results, MAIN)))
    print("\nSummary over skewed-x alone (lognormal shape 1, skewness 6.2):")
    print("\n".join(summarize(results, ("skewed-x",))))

    unpaired: tuple[RuleName, ...] = ("fixed-width-t", "ar1-upper")
    print("\nUnpaired (Welch on the logs, each arm's log sd = CV, true 0):")
    print(header(unpaired))
    for family in ("normal", "ar1"):
        for cv in (0.01, 0.03):
            for target in TARGETS:
                cell = unpaired_cell(family, cv, 0.0, target, args.reps, args.min_n, args.max_n,
                                     args.seed, unpaired)
                print(f"{family:<10}{cv:>4.0%}{0:>+6.0%}{target:>4g} |"
                      + "".join(f" {cell_text(cell[r])}|" for r in unpaired), flush=True)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
