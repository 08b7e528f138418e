"""Actual coverage and width of 95% intervals for the overhead, by method, n, noise and pairing.

Simulates a known +10% effect: every value is 2 · lognormal noise (given CV), the encrypted one
× 1.10. Paired cases add a block effect shared by both configs of a block (lognormal, sd = CV), as
tdebench's randomized blocks do; unpaired cases draw both samples independently. The heavy-tailed
cases (CV 5%) also double each value independently with probability 5%. In every case the true
overhead is 10% for all estimands (ratio of medians, of geometric means, median of paired ratios),
because the noise is the same on both sides and symmetric on the log scale.

Methods (paired cases):
  boot-pct / boot-bca   tdebench's bootstrap of the ratio of medians, blocks resampled as pairs
  t-log                 t-interval on the paired log ratios log(enc_b / plain_b), exp(·) − 1
  welch-log             Welch interval on log values, ignoring the pairing
  sign-med              sign-test (binomial order-statistic) interval for the median of the paired
                        ratios; below n = 6 it can only be [min, max] (confidence 1 − 2^(1−n))
  boot-t                studentized bootstrap of the mean paired log ratio
Unpaired cases: boot-pct, boot-bca (each sample resampled on its own) and welch-log.

Each cell prints coverage (share of repetitions whose interval contains +10%) and the median width
of the interval in percentage points. A missing interval counts as a miss.

    python benchmarks/stats_coverage.py [--reps 2000] [--resamples 2000] [--seed 1]

The report quotes these figures from src/tdebench/stats/coverage.py; update it after a rerun.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from tdebench.stats import bootstrap_ratio_ci
from tdebench.stats.logt import log_t

EFFECT = 0.10
NS = (2, 3, 5, 10, 20)
OUTLIER_P, OUTLIER_X = 0.05, 2.0
Interval = tuple[float, float] | None
Method = Callable[[np.ndarray, np.ndarray, int], Interval]


@dataclass(frozen=True)
class Case:
    """One noise model."""

    name: str
    paired: bool
    cv: float
    outliers: bool = False

    def draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        sigma = math.sqrt(math.log1p(self.cv ** 2))  # lognormal sd giving this CV
        plain = 2.0 * np.exp(rng.normal(0, sigma, n))
        enc = 2.0 * (1 + EFFECT) * np.exp(rng.normal(0, sigma, n))
        if self.paired:
            block = np.exp(rng.normal(0, sigma, n))
            plain, enc = plain * block, enc * block
        if self.outliers:
            plain = np.where(rng.random(n) < OUTLIER_P, plain * OUTLIER_X, plain)
            enc = np.where(rng.random(n) < OUTLIER_P, enc * OUTLIER_X, enc)
        return plain, enc


def boot(method: str, paired: bool, resamples: int) -> Method:
    def ci(plain: np.ndarray, enc: np.ndarray, seed: int) -> Interval:
        return bootstrap_ratio_ci(plain, enc, paired=paired, seed=seed, n_resamples=resamples,
                                  method=method)  # type: ignore[arg-type]
    return ci


def t_log(paired: bool) -> Method:
    def ci(plain: np.ndarray, enc: np.ndarray, seed: int) -> Interval:
        r = log_t(plain, enc, paired=paired)
        return r.ci if r else None
    return ci


def sign_median(plain: np.ndarray, enc: np.ndarray, seed: int) -> Interval:
    """Order-statistic interval [r_(k), r_(n+1−k)] with P(Binom(n, ½) < k) ≤ 2.5%, k ≥ 1."""
    r = np.sort(enc / plain)
    n = r.size
    k = 1
    while stats.binom.cdf(k, n, 0.5) <= 0.025:
        k += 1
    return float(r[k - 1]) - 1, float(r[n - k]) - 1


def boot_t(resamples: int) -> Method:
    def ci(plain: np.ndarray, enc: np.ndarray, seed: int) -> Interval:
        d = np.log(enc / plain)
        n = d.size
        se = d.std(ddof=1) / math.sqrt(n)
        x = d[np.random.default_rng(seed).integers(0, n, (resamples, n))]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (x.mean(axis=1) - d.mean()) / (x.std(axis=1, ddof=1) / math.sqrt(n))
        t = np.sort(np.nan_to_num(t, nan=0.0, posinf=np.inf, neginf=-np.inf))
        lo_t, hi_t = t[int(0.025 * (resamples - 1))], t[int(math.ceil(0.975 * (resamples - 1)))]
        with np.errstate(over="ignore", invalid="ignore"):
            return (float(np.expm1(d.mean() - hi_t * se)), float(np.expm1(d.mean() - lo_t * se)))
    return ci


def methods(paired: bool, resamples: int) -> dict[str, Method]:
    if not paired:
        return {"boot-pct": boot("percentile", False, resamples),
                "boot-bca": boot("bca", False, resamples), "welch-log": t_log(False)}
    return {"boot-pct": boot("percentile", True, resamples), "boot-bca": boot("bca", True, resamples),
            "t-log": t_log(True), "welch-log": t_log(False), "sign-med": sign_median,
            "boot-t": boot_t(resamples)}


def run_cell(case: Case, n: int, ms: dict[str, Method], reps: int,
             seed: int) -> dict[str, tuple[float, float]]:
    """Coverage and median width (percentage points) of every method on the same data."""
    rng = np.random.default_rng([seed, n, int(case.cv * 1000), int(case.paired), int(case.outliers)])
    hits = {m: 0 for m in ms}
    widths: dict[str, list[float]] = {m: [] for m in ms}
    for rep in range(reps):
        plain, enc = case.draw(rng, n)
        for name, ci_of in ms.items():
            ci = ci_of(plain, enc, rep)
            if ci is None:
                widths[name].append(math.inf)
                continue
            hits[name] += ci[0] <= EFFECT <= ci[1]
            widths[name].append((ci[1] - ci[0]) * 100)
    return {m: (hits[m] / reps, float(np.median(widths[m]))) for m in ms}


def fmt_width(w: float) -> str:
    return "inf" if not math.isfinite(w) else (f"{w:.0f}" if w >= 99.5 else f"{w:.1f}")


CASES = (Case("paired CV 2%", True, 0.02), Case("paired CV 5%", True, 0.05),
         Case("paired CV 15%", True, 0.15), Case("paired CV 5% +2x", True, 0.05, True),
         Case("unpaired CV 2%", False, 0.02), Case("unpaired CV 5%", False, 0.05),
         Case("unpaired CV 15%", False, 0.15), Case("unpaired CV 5% +2x", False, 0.05, True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="repetitions per cell")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    start = time.perf_counter()
    print("$ python " + shlex.join(["benchmarks/stats_coverage.py", *sys.argv[1:]]))
    print(f"true overhead +{EFFECT:.0%}; {args.reps} repetitions per cell, {args.resamples} bootstrap "
          f"resamples; +2x = each value doubled with p = {OUTLIER_P:g}")
    print("cells: coverage / median width in percentage points (nominal 95%)")
    for paired in (True, False):
        ms = methods(paired, args.resamples)
        print()
        print(f"{'case':<20}{'n':>3}  " + "".join(f"{m:>15}" for m in ms))
        for case in (c for c in CASES if c.paired == paired):
            for n in NS:
                cell = run_cell(case, n, ms, args.reps, args.seed)
                print(f"{case.name:<20}{n:>3}  " + "".join(
                    f"{f'{cov:.3f} / {fmt_width(w)}':>15}" for cov, w in cell.values()), flush=True)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
