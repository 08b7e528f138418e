"""Is "about N blocks would meet it" a fair prediction at every n? Simulated per-block log ratios, the blocks
seen so far, and where the stopping rule then really stopped.

For each noise family (normal, AR(1) with ρ = 0.3 across blocks, skewed: lognormal shape 0.5) and per-block sd,
``--reps`` streams of per-block log ratios d_i = σ·u_i (an A/A comparison) run under ``ar1-upper`` with the target
``--target`` and the default pilot (``DEFAULT_MIN_N`` blocks); the block each stream stopped at is its actual
n. At n = 3, 5, 10 and 20 blocks (for the streams not stopped yet) each predictor gives the blocks in all it expects:

  now    StoppingRule.check_log_ratios(d[:n]).needed_n (median of simulated continuations; 80% range)
  before the crossing of the half-width at the sd and lag-1 autocorrelation measured at n (the rule's formula
         with the bias correction of r evaluated at the future k), what tdebench said before
  hint   the report's old hint for an unresolved comparison: the trials that would resolve the point estimate
         (at least 1%) from the arms' pooled CV (the arms share a block effect of sd ``--block-sd``), two-sample
         power formula; it answers another question, and grows without end as the estimate shrinks towards 0

Printed per cell and n: for "now" and "before" the median of predicted / actual over the streams (and for "now"
the share of streams whose actual n fell inside the 80% range), for "hint" the median number it gave. A fair
predictor has a median ratio near 1 at every n; a figure that grows with n was not a prediction.

    python benchmarks/needed_estimate.py [--reps 200] [--target 2] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from tdebench.stats.power import trials_needed
from tdebench.stats.prefix import lag1, prefix_stats
from tdebench.stats.sequential import DEFAULT_MIN_N, StoppingRule, half_width_log, pp_half_width

FAMILIES = ("normal", "ar1", "skewed")
SDS = (0.03, 0.06)
AT = (3, 5, 10, 20)
HORIZON = 3000


def streams(family: str, sd: float, reps: int, rng: np.random.Generator) -> np.ndarray:
    if family == "normal":
        return rng.normal(0, sd, (reps, HORIZON))
    if family == "ar1":
        rho = 0.3
        e = rng.normal(0, sd * math.sqrt(1 - rho * rho), (reps, HORIZON))
        x = np.empty_like(e)
        prev = rng.normal(0, sd, reps)
        for j in range(HORIZON):
            prev = rho * prev + e[:, j]
            x[:, j] = prev
        return x
    z = np.exp(rng.normal(0, 0.5, (reps, HORIZON)))
    return (z - math.exp(0.125)) / math.sqrt(math.expm1(0.25) * math.exp(0.25)) * sd


def actual_stops(d: np.ndarray, target: float, min_n: int) -> np.ndarray:
    st, _ = prefix_stats(d)
    h = half_width_log("ar1-upper", st.n[:1], st.sd, st.r1)
    met = (pp_half_width(st.mean, h) <= target) & (st.n >= min_n)
    return np.where(met.any(axis=1), met.argmax(axis=1) + 1, HORIZON + 1)


def before(d: np.ndarray, target: float, min_n: int) -> int | None:
    """The crossing at today's sd and r1, with r1's bias corrected at the future k (tdebench before)."""
    n, m, sd, r1 = d.size, float(d.mean()), float(d.std(ddof=1)), lag1(d)
    for k in range(max(n, min_n), 10 * HORIZON):
        if float(pp_half_width(m, half_width_log("ar1-upper", k, sd, r1))) <= target:
            return k
    return None


def old_hint(d: np.ndarray, rng: np.random.Generator, block_sd: float) -> int | None:
    """The old report hint: arms with a shared block effect, the effect = the estimate (at least 1%)."""
    shared = rng.normal(0, block_sd, d.size)
    plain, config = np.exp(shared), np.exp(shared + d)
    cv = math.sqrt((np.std(plain, ddof=1) / plain.mean()) ** 2 / 2 + (np.std(config, ddof=1) / config.mean()) ** 2 / 2)
    effect = max(abs(math.expm1(float(d.mean()))) * 100, 1.0)
    return trials_needed(effect, cv * 100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--target", type=float, default=2.0)
    parser.add_argument("--block-sd", type=float, default=0.05, help="sd of the block effect the arms share (hint)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.perf_counter()
    print("$ python benchmarks/needed_estimate.py " + " ".join(sys.argv[1:]))
    print(f"{args.reps} streams per cell, target ±{args.target:g} points, pilot {DEFAULT_MIN_N} blocks, "
          "rule ar1-upper; "
          "median predicted/actual blocks (now: share of actual stops inside the 80% range)")
    rng = np.random.default_rng(args.seed)
    rule = StoppingRule(args.target)
    for family in FAMILIES:
        for sd in SDS:
            d = streams(family, sd, args.reps, rng)
            stops = actual_stops(d, args.target, rule.min_n)
            cells = []
            for n in AT:
                live = [i for i in range(args.reps) if stops[i] > n]
                now = [rule.check_log_ratios(d[i, :n]) for i in live]
                ratio_now = np.median([x.needed_n / stops[i] for x, i in zip(now, live) if x.needed_n])
                inside = np.mean([(x.needed_low or 0) <= stops[i] <= (x.needed_high or 10 ** 9)
                                  for x, i in zip(now, live)])
                ratio_before = np.median([(before(d[i, :n], args.target, rule.min_n) or 10 ** 6) / stops[i]
                                          for i in live])
                hints = [old_hint(d[i, :n], rng, args.block_sd) for i in live]
                hint = np.median([h or 10 ** 6 for h in hints])
                cells.append(f"n={n:>2}: now {ratio_now:4.2f} ({inside:.0%}) before {ratio_before:4.2f} "
                             f"hint {hint:5.0f}")
            print(f"{family:<7} sd {sd:.0%} (median stop {np.median(stops):.0f}) | " + " | ".join(cells), flush=True)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
