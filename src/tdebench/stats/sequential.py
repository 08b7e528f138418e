"""Sequential stopping for ``--precision P``: add blocks until the overhead's CI is narrow enough.

The input is one value per block, in block (time) order: the paired log ratios
``d_i = log(config_i / plain_i)`` of the headline metric, or, when pairing is impossible, the two
samples on their own (Welch). The overhead is ``exp(mean d) − 1``, so its interval is asymmetric in
percent; the **half-width** compared with ``P`` is the larger distance from the estimate to an end of
the interval, in percentage points of the overhead: ``100 · exp(m) · (exp(h) − 1)`` for a log-scale
interval ``m ± h``.

Rules (all stop at the first n ≥ ``min_n`` whose half-width is ≤ P, and report that interval):

``fixed-width-t``  Chow–Robbins: the t-interval ``m ± t(n−1) · s / √n``.
``ar1-point``      the same with the variance multiplied by ``(1 + r) / (1 − r)``, r the lag-1
                   autocorrelation of d (bias-corrected ``r̂ + (1 + 4 r̂) / n``, clipped to 0…0.9).
``ar1-upper``      (default) as ``ar1-point`` with r a one-sided 95% upper confidence bound,
                   ``r_bc + 1.645 · √((1 − r_bc²) / n)``, clipped to 0…0.9.
``t-mixture-cs``   Lai's anytime-valid confidence sequence for a normal mean with unknown variance
                   (normal mixture over the standardized effect, mixing variance g chosen from the
                   pilot so the sequence is tightest near the expected stopping n).

Why ``ar1-upper``, from ``python benchmarks/sequential_coverage.py --reps 2000`` (per-block
log-ratio noise with sd √2·CV for per-arm CV 1%, 3%, 10%; true overheads 0 and +3%; P = 1 and 2
points; pilot 8 blocks; the whole table is in docs/precision-statistics.md):

- ``fixed-width-t`` covers 92.6–96.3% with normal and t3 noise, but 89.6–95.2% with skewed noise
  (lognormal shape 0.5) and 81.6–87.8% with AR(1) ρ = 0.3 noise: an A/A test would see up to 18%
  false positives at the nominal 5%.
- ``ar1-point`` estimates the correlation too noisily at the n where a rule stops: 87.7–99.2%
  with AR(1) noise, 90.9–95.3% with skewed noise.
- ``ar1-upper`` covers 94.8–98.9% in all 48 cells (false positives at true 0: 3.2% pooled, 4.9%
  in the worst cell) at 1.11–1.72 times the blocks of ``fixed-width-t`` with independent noise,
  the most at small n, where a block count is small anyway.
- ``t-mixture-cs`` covers 96.4–100% but needs up to 2.75 times the blocks of ``fixed-width-t`` once
  the pilot is not enough (CV ≥ 3%).

A pilot of 10 blocks gives ``ar1-upper`` the same lowest coverage (94.8–99.2%, 3.0% pooled false
positives), one of 6 lowers it to 94.2%, one of 5 to 92.8% (``--min-n``).

No rule covers 94% when the per-block log ratios are extremely skewed (lognormal shape 1,
skewness 6.2) and the rule stops within about a hundred blocks: ``ar1-upper`` 84.3–94.5%,
``t-mixture-cs`` 88.6–99.6%.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import special

from tdebench.errors import UsageError
from tdebench.stats.prefix import SIM_CAP, PrefixStats, first_passages, lag1
from tdebench.stats.tdist import t_ppf

RuleName = Literal["fixed-width-t", "ar1-point", "ar1-upper", "t-mixture-cs"]
RULES: tuple[RuleName, ...] = ("fixed-width-t", "ar1-point", "ar1-upper", "t-mixture-cs")
DEFAULT_RULE: RuleName = "ar1-upper"
DEFAULT_MIN_N = 8         # pilot blocks; with 10 the same lowest coverage, with 6 it falls to 94.2%, with 5 to 92.8%
DEFAULT_CONFIDENCE = 0.95
AR1_BOUND_Z = 1.645       # one-sided 95% upper bound of the lag-1 autocorrelation
R_MAX = 0.9               # caps the variance factor (1 + r) / (1 − r) at 19
#: the AR(1) factor of rounds inside one block (the interleaved OLTP schedule). Every round runs the configs in an
#: order drawn afresh, so a round's log ratio is d_k = τ + s_k·Δ_k, with s_k = ±1 a fair coin independent of the
#: machine's drift Δ_k between the round's two slices: consecutive d_k are uncorrelated and symmetric about τ by
#: design; ``ar1-point`` keeps a factor for the correlation carry-over would make. Across blocks, the block is the
#: unit (stats/load.per_block): the rounds of one block share its servers' and clients' state
ROUND_RULE: RuleName = "ar1-point"
CS_MIX_X = 7.5            # n·g at which the t-mixture boundary is tightest (α = 0.05)
CS_PILOT_T = 3.03         # that boundary's multiplier of s/√n, to guess the stopping n
MAX_NEEDED = 1_000_000    # beyond this many blocks "needed" is reported as unknown
PREDICTION_RANGE = 0.8    # the range given with a prediction of the blocks needed (predicted_sd)
COMMAND = "python benchmarks/sequential_coverage.py --reps 2000"
HALF_WIDTH_TEXT = ("the larger distance from the estimate to an end of the interval, in "
                   "percentage points of the overhead")
RULE_NAMES = {
    "fixed-width-t": "fixed-width t-interval (Chow–Robbins)",
    "ar1-point": "t-interval with an AR(1) variance correction",
    "ar1-upper": "t-interval with an upper-bound AR(1) variance correction",
    "t-mixture-cs": "t-mixture confidence sequence (Lai)",
}


def t_quantile(n: np.ndarray | float, confidence: float = DEFAULT_CONFIDENCE) -> np.ndarray:
    """Two-sided t critical value with n − 1 degrees of freedom (inf below n = 2)."""
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        q = t_ppf(0.5 + confidence / 2, np.maximum(n - 1, 1))
    return np.where(n >= 2, q, np.inf)


def variance_factor(rule: RuleName, r1: np.ndarray | float, n: np.ndarray | float,
                    observed_n: np.ndarray | float | None = None) -> np.ndarray:
    """(1 + r) / (1 − r) for the AR(1) rules (r bias-corrected, bounded as the rule says), else 1.

    ``observed_n``: predict the factor the rule will apply at ``n`` blocks from an ``r1`` measured at
    ``observed_n`` blocks: the bias of r1 is that of ``observed_n`` values (−(1 + 4ρ)/observed_n), and the
    upper bound's margin that of ``n``. Without it, ``r1`` is taken as measured at ``n``."""
    r1, n = np.asarray(r1, dtype=float), np.maximum(np.asarray(n, dtype=float), 1.0)
    if rule not in ("ar1-point", "ar1-upper"):
        return np.ones(np.broadcast(r1, n).shape)
    if observed_n is None:
        r = r1 + (1 + 4 * np.clip(r1, -1, 1)) / n  # E r̂ ≈ ρ − (1 + 4ρ)/n
    else:  # the same correction with a floor: at a few blocks 1 + 4r̂ is often negative, where E r̂ = −1/n for ρ = 0
        seen = np.maximum(np.asarray(observed_n, dtype=float), 1.0)
        r = np.clip(r1 + (1 + 4 * np.clip(r1, 0, 1)) / seen, 0.0, R_MAX)
    if rule == "ar1-upper":
        r = r + AR1_BOUND_Z * np.sqrt(np.maximum(1 - np.clip(r, -1, 1) ** 2, 0) / n)
    r = np.clip(r, 0.0, R_MAX)
    return (1 + r) / (1 - r)


def cs_multiplier(n: np.ndarray | float, g: np.ndarray | float,
                  confidence: float = DEFAULT_CONFIDENCE) -> np.ndarray:
    """Lai's t-mixture boundary: the CS is m ± multiplier · s/√n at every n at once.

    The mixture of the scale-invariant likelihood ratio over a N(0, g) standardized effect is
    (1 + ng)^(−½) · [(1 + t²/ν) / (1 + t²/((1 + ng)ν))]^((ν+1)/2), ν = n − 1; the CS is where it
    stays below 1/α. inf where the set is still unbounded.
    """
    n, g = np.asarray(n, dtype=float), np.asarray(g, dtype=float)
    alpha = 1 - confidence
    nu, a = n - 1, 1 + n * g
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        q = np.exp(2 * (0.5 * np.log(a) - math.log(alpha)) / (nu + 1))
        t2 = nu * (q - 1) / (1 - q / a)
        return np.where((n >= 2) & (q < a), np.sqrt(np.maximum(t2, 0)), np.inf)


def cs_mixing(pilot_mean: np.ndarray | float, pilot_sd: np.ndarray | float, target_pp: float,
              min_n: int) -> np.ndarray:
    """Mixing variance g from the pilot: tightest near the n where the CS would reach the target."""
    h = np.log1p(target_pp / 100 / np.exp(np.asarray(pilot_mean, dtype=float)))
    with np.errstate(divide="ignore", invalid="ignore"):
        guess = (CS_PILOT_T * np.asarray(pilot_sd, dtype=float) / h) ** 2
    n_star = np.clip(np.nan_to_num(guess, nan=min_n, posinf=MAX_NEEDED), min_n, MAX_NEEDED)
    return CS_MIX_X / n_star


def half_width_log(rule: RuleName, n: np.ndarray | float, sd: np.ndarray | float,
                   r1: np.ndarray | float, *, confidence: float = DEFAULT_CONFIDENCE,
                   g: np.ndarray | float | None = None,
                   observed_n: np.ndarray | float | None = None) -> np.ndarray:
    """Half-width h of the log-scale interval m ± h of a paired rule (broadcasts over arrays);
    ``observed_n``: predicted for ``n`` blocks from ``sd`` and ``r1`` measured at ``observed_n``
    (:func:`variance_factor`)."""
    n, sd = np.asarray(n, dtype=float), np.asarray(sd, dtype=float)
    if rule == "t-mixture-cs":
        if g is None:
            raise ValueError("t-mixture-cs needs the mixing variance g (see cs_mixing)")
        mult = cs_multiplier(n, g, confidence)
    else:
        mult = t_quantile(n, confidence) * np.sqrt(variance_factor(rule, r1, n, observed_n))
    with np.errstate(invalid="ignore"):
        return np.where(sd == 0, 0.0, mult * sd / np.sqrt(n))


def welch_half_width_log(rule: RuleName, n1: np.ndarray | float, sd1: np.ndarray | float,
                         r1a: np.ndarray | float, n2: np.ndarray | float, sd2: np.ndarray | float,
                         r1b: np.ndarray | float,
                         confidence: float = DEFAULT_CONFIDENCE,
                         observed: tuple[float, float] | None = None) -> np.ndarray:
    """Log-scale half-width for two unpaired samples (Welch), each variance corrected on its own;
    ``observed``: the sizes the r1 were measured at, for a prediction (:func:`variance_factor`)."""
    if rule == "t-mixture-cs":
        raise ValueError("t-mixture-cs needs paired blocks; use a t rule for unpaired samples")
    n1, n2 = np.asarray(n1, dtype=float), np.asarray(n2, dtype=float)
    sd1, sd2 = np.asarray(sd1, dtype=float), np.asarray(sd2, dtype=float)
    seen1, seen2 = observed if observed is not None else (None, None)
    with np.errstate(invalid="ignore", divide="ignore"):
        v1 = sd1 ** 2 * variance_factor(rule, r1a, n1, seen1) / n1
        v2 = sd2 ** 2 * variance_factor(rule, r1b, n2, seen2) / n2
        df = (v1 + v2) ** 2 / (v1 ** 2 / np.maximum(n1 - 1, 1) + v2 ** 2 / np.maximum(n2 - 1, 1))
        h = t_ppf(0.5 + confidence / 2, np.nan_to_num(df, nan=1.0)) * np.sqrt(v1 + v2)
    h = np.where(v1 + v2 == 0, 0.0, h)
    return np.where(np.minimum(n1, n2) < 2, np.inf, h)


def predicted_sd(sd: float, n: int, quantile: float = 0.5) -> float:
    """The noise to predict further blocks with, from the sample sd of ``n`` values: σ such that ``sd``
    is the ``quantile``-th quantile of a sample sd from σ (chi-square with n − 1 degrees of freedom).

    At 0.5 the prediction of the blocks needed (∝ σ²) is median-unbiased: s² is unbiased for σ², but
    its distribution is skewed, so at small n the sample sd is below σ more often than not (n = 3: in
    63% of samples), and a prediction from s itself came out too low in most runs (the number of
    blocks it asked for then grew with n). Quantiles 0.9 and 0.1 give the ends of an 80% range."""
    if n < 2 or not math.isfinite(sd):
        return sd
    df = n - 1
    return sd * math.sqrt(df / float(special.chdtri(df, 1 - quantile)))


def pp_half_width(mean_log: np.ndarray | float, h: np.ndarray | float) -> np.ndarray:
    """Half-width in percentage points of exp(m ± h) − 1: the upper side, 100·e^m·(e^h − 1)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return 100.0 * np.exp(mean_log) * np.expm1(h)


def parse_precision(text: str) -> float:
    """``1%``, ``0.5`` or ``2 %`` → target half-width in percentage points (UsageError otherwise)."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*%?\s*", str(text))
    value = float(match.group(1)) if match else math.nan
    if not match or not 0 < value <= 100:
        raise UsageError(f"--precision {text!r} is not a half-width between 0 and 100%",
                         "give the 95% CI half-width you need in percent, e.g. --precision 1%")
    return value


@dataclass(frozen=True)
class Decision:
    """Whether the target half-width is met after n blocks, and what the interval is now.

    Percentages are of the overhead (``estimate_pct`` = exp(mean log ratio) − 1, × 100).
    ``needed_n`` is the total number of blocks at which the half-width would reach the target if
    the next blocks vary like these (None when it cannot be estimated or exceeds a million): a
    prediction (:func:`predicted_sd`), median-unbiased at every n, with ``needed_low`` and
    ``needed_high`` its 80% range from the uncertainty of the sd measured so far.
    """

    rule: RuleName
    target_pp: float
    confidence: float
    min_n: int
    max_n: int | None
    paired: bool
    n: int
    estimate_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    half_width_pp: float
    needed_n: int | None
    needed_low: int | None = None
    needed_high: int | None = None

    @property
    def met(self) -> bool:
        """The target is reached (never during the pilot)."""
        return self.n >= self.min_n and self.half_width_pp <= self.target_pp

    @property
    def out_of_trials(self) -> bool:
        """``max_n`` blocks are done without meeting the target."""
        return not self.met and self.max_n is not None and self.n >= self.max_n

    @property
    def stop(self) -> bool:
        """Stop adding blocks (target met, or max-trials reached); --max-time is the runner's."""
        return self.met or self.out_of_trials

    @property
    def more_needed(self) -> int | None:
        """Blocks still to add to reach the target (0 when met)."""
        if self.met:
            return 0
        return None if self.needed_n is None else max(self.needed_n - self.n, 1)

    def _range(self) -> str:
        """`` (80% range 31–160)``: how far the prediction may be off from the noise seen so far."""
        if self.needed_low is None or self.needed_low == self.needed_high == self.needed_n:
            return ""
        high = f"{self.needed_high:,}" if self.needed_high is not None else f"over {MAX_NEEDED:,}"
        return f"; 80% range {self.needed_low:,}–{high}"

    def _ci(self) -> str:
        if self.estimate_pct is None or self.ci_low_pct is None or self.ci_high_pct is None:
            return "no interval yet"
        return (f"{self.estimate_pct:+.2f}% ({self.confidence:.0%} CI {self.ci_low_pct:+.2f}% to "
                f"{self.ci_high_pct:+.2f}%)")

    def progress(self) -> str:
        """One line for the progress display after a block."""
        hw = "—" if not math.isfinite(self.half_width_pp) else f"±{self.half_width_pp:.2f}%"
        state = ("met" if self.met else "pilot" if self.n < self.min_n
                 else "not met" if self.out_of_trials else "continuing")
        tail = ("" if self.met or not math.isfinite(self.half_width_pp) else
                f", about {self.needed_n} blocks in all{self._range()}" if self.needed_n is not None else
                f", more than {MAX_NEEDED:,} blocks needed")
        return f"n = {self.n}: half-width {hw} (target ±{self.target_pp:g}%, {state}){tail}"

    def outcome(self, stopped_by: str | None = None) -> str:
        """The report's plain sentence: met or not, the half-width reached, and what more is needed.

        ``stopped_by`` names what ended the run when the target was not met (e.g. ``--max-time``).
        """
        hw = "no interval" if not math.isfinite(self.half_width_pp) else \
            f"a half-width of {self.half_width_pp:.2f} points"
        if self.met:
            return (f"Precision target ±{self.target_pp:g}% met after {self.n} blocks: {hw}, "
                    f"overhead {self._ci()}.")
        by = stopped_by or ("--max-trials" if self.out_of_trials else "the run ending")
        if self.needed_n is not None:
            more = (f"about {self.more_needed} more blocks ({self.needed_n} in all{self._range()}) would meet it "
                    f"if the next blocks vary like these")
        elif math.isfinite(self.half_width_pp):
            more = f"more than {MAX_NEEDED:,} blocks would be needed at this noise"
        else:
            more = "at least 2 blocks are needed before the number that would meet it can be estimated"
        early = f", before the rule's pilot of {self.min_n} had ended," if self.n < self.min_n else ""
        return (f"Precision target ±{self.target_pp:g}% NOT met: stopped by {by} after {self.n} "
                f"blocks{early} with {hw}; overhead {self._ci()}; {more}.")

    def as_dict(self) -> dict[str, object]:
        """The state recorded per config in the manifest."""
        return {"met": self.met, "n": self.n, "half_width_pp": self.half_width_pp
                if math.isfinite(self.half_width_pp) else None,
                "estimate_pct": self.estimate_pct, "ci_low_pct": self.ci_low_pct,
                "ci_high_pct": self.ci_high_pct, "needed_n": self.needed_n, "needed_low": self.needed_low,
                "needed_high": self.needed_high, "paired": self.paired,
                "unit": "blocks"}


@dataclass(frozen=True)
class StoppingRule:
    """``--precision``: stop when the CI half-width of the overhead is at most ``target_pp`` points."""

    target_pp: float
    min_n: int = DEFAULT_MIN_N
    max_n: int | None = None
    confidence: float = DEFAULT_CONFIDENCE
    rule: RuleName = DEFAULT_RULE

    def __post_init__(self) -> None:
        if not (math.isfinite(self.target_pp) and self.target_pp > 0):
            raise UsageError(f"precision {self.target_pp!r} must be a positive half-width in percent",
                             "e.g. --precision 1%")
        if self.min_n < 3:
            raise UsageError(f"the pilot of the stopping rule must be at least 3 blocks, not "
                             f"{self.min_n}", "raise the minimum number of trials")
        if self.max_n is not None and self.max_n < self.min_n:
            raise UsageError(f"--max-trials {self.max_n} is below the pilot of {self.min_n} blocks "
                             "the stopping rule needs", f"use --max-trials {self.min_n} or more")
        if not 0.5 <= self.confidence < 1:
            raise UsageError(f"confidence {self.confidence!r} must be in [0.5, 1)", "e.g. 0.95")
        if self.rule not in RULES:
            raise UsageError(f"unknown stopping rule {self.rule!r}", f"use one of {', '.join(RULES)}")

    def check_log_ratios(self, d: np.ndarray) -> Decision:
        """Decision from the paired log ratios log(config_b / plain_b), in block order."""
        d = np.asarray(d, dtype=float)
        if d.ndim != 1 or not np.isfinite(d).all():
            raise ValueError("log ratios must be a 1-d array of finite values in block order")
        n = d.size
        if n < 2:
            return self._decision(True, n, float(d.mean()) if n else None, math.inf, (None, None, None))
        m, sd, r1 = float(d.mean()), float(d.std(ddof=1)), lag1(d)
        g = self._g(d)
        h = float(half_width_log(self.rule, n, sd, r1, confidence=self.confidence, g=g))

        def h_at(k: float, q: float) -> float:  # predicted: sd and r1 measured at n, the rule applied at k
            return float(half_width_log(self.rule, k, predicted_sd(sd, n, q), r1, confidence=self.confidence,
                                        g=g, observed_n=n))

        return self._decision(True, n, m, h, self._paired_predictions(d, h, g, h_at))

    def _paired_predictions(self, d: np.ndarray, h: float, g: float | None,
                            h_at: Callable[[float, float], float]) -> tuple[int | None, int | None, int | None]:
        """(needed, low, high) for paired blocks: where the rule would first stop if the blocks went on
        (:func:`tdebench.stats.prefix.first_passages`: median and 80% range), or beyond
        :data:`~tdebench.stats.prefix.SIM_CAP` blocks where the half-width at these estimates crosses the target."""
        n, m = d.size, float(d.mean())
        if float(pp_half_width(m, h)) <= self.target_pp:
            return (max(n, self.min_n),) * 3
        far = self._predictions(m, h_at, n)
        if far[0] is None or far[0] > SIM_CAP:
            return far

        def met(st: PrefixStats) -> np.ndarray:
            hw = half_width_log(self.rule, st.n[:1], st.sd, st.r1, confidence=self.confidence, g=g)  # one t per n
            return (pp_half_width(st.mean, hw) <= self.target_pp) & (st.n >= self.min_n)

        stops = np.minimum(first_passages(d, met, r_max=R_MAX), SIM_CAP + 1)  # SIM_CAP + 1: not within it
        low, mid, high = (int(x) for x in np.percentile(
            stops, [50 - 50 * PREDICTION_RANGE, 50, 50 + 50 * PREDICTION_RANGE], method="nearest"))
        return (mid if mid <= SIM_CAP else far[0], low if low <= SIM_CAP else far[1],
                high if high <= SIM_CAP else None)

    def check_paired(self, plain: np.ndarray, config: np.ndarray) -> Decision:
        """Decision from the two arms' values of the same blocks, both in block order."""
        p, c = _positive(plain, "plain"), _positive(config, "config")
        if p.size != c.size:
            raise ValueError(f"paired values need one per block on both sides ({p.size} vs {c.size})")
        return self.check_log_ratios(np.log(c) - np.log(p))

    def check_unpaired(self, plain: np.ndarray, config: np.ndarray) -> Decision:
        """Decision from two samples that cannot be paired (Welch on the logs), each in time order."""
        lp, lc = np.log(_positive(plain, "plain")), np.log(_positive(config, "config"))
        n1, n2 = lp.size, lc.size
        n = min(n1, n2)
        if n < 2:
            mean = float(lc.mean() - lp.mean()) if n else None
            return self._decision(False, n, mean, math.inf, (None, None, None))
        m = float(lc.mean() - lp.mean())
        s1, s2, ra, rb = float(lp.std(ddof=1)), float(lc.std(ddof=1)), lag1(lp), lag1(lc)
        h = float(welch_half_width_log(self.rule, n1, s1, ra, n2, s2, rb, self.confidence))

        def h_at(k: float, q: float) -> float:  # both samples grown to k (same block count per arm)
            return float(welch_half_width_log(self.rule, max(k, n1), predicted_sd(s1, n1, q), ra, max(k, n2),
                                              predicted_sd(s2, n2, q), rb, self.confidence, (n1, n2)))

        return self._decision(False, n, m, h, self._predictions(m, h_at, n))

    def _predictions(self, m: float, h_at: Callable[[float, float], float],
                     n: int) -> tuple[int | None, int | None, int | None]:
        """(needed, low, high): the blocks needed at the median-unbiased sd and at the ends of its 80% range."""
        return (self._needed(m, lambda k: h_at(k, 0.5), n),
                self._needed(m, lambda k: h_at(k, 0.5 + PREDICTION_RANGE / 2), n),
                self._needed(m, lambda k: h_at(k, 0.5 - PREDICTION_RANGE / 2), n))

    def _g(self, d: np.ndarray) -> float | None:
        """The CS mixing variance, fixed from the pilot (or from what there is before it ends)."""
        if self.rule != "t-mixture-cs":
            return None
        pilot = d[: self.min_n]
        return float(cs_mixing(pilot.mean(), pilot.std(ddof=1), self.target_pp, self.min_n))

    def _needed(self, m: float, h_at: Callable[[float], float], n: int) -> int | None:
        """Smallest total n ≥ max(n, min_n) whose half-width at these m and sd meets the target."""
        def ok(k: int) -> bool:
            return float(pp_half_width(m, h_at(k))) <= self.target_pp

        lo = max(n, self.min_n)
        if ok(lo):
            return lo
        hi = lo
        while not ok(hi):
            if hi >= MAX_NEEDED:
                return None
            lo, hi = hi, min(hi * 2, MAX_NEEDED)
        while hi - lo > 1:  # ok(hi), not ok(lo)
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        return hi

    def _decision(self, paired: bool, n: int, m: float | None, h: float,
                  needed: tuple[int | None, int | None, int | None]) -> Decision:
        est = lo = hi = None
        hw = math.inf
        if m is not None:
            est = math.expm1(m) * 100
            if math.isfinite(h):
                lo, hi = math.expm1(m - h) * 100, math.expm1(m + h) * 100
                hw = float(pp_half_width(m, h))
        return Decision(self.rule, self.target_pp, self.confidence, self.min_n, self.max_n, paired,
                        n, est, lo, hi, hw, *needed)

    def describe(self) -> str:
        """The stopping rule in one paragraph, for the report's methods section."""
        conf = f"{self.confidence:.0%}"
        cap = f" or {self.max_n} blocks" if self.max_n is not None else ""
        head = (f"Stopping rule (--precision {self.target_pp:g}%): after a pilot of {self.min_n} "
                f"blocks, blocks were added until the {conf} confidence interval of every encrypted "
                f"config's headline overhead had a half-width of at most {self.target_pp:g} "
                f"percentage point{'' if self.target_pp == 1 else 's'}{cap}, or until the time "
                f"limit. The half-width is "
                f"{HALF_WIDTH_TEXT}, because exp(·) − 1 makes the interval asymmetric. ")
        how = {
            "fixed-width-t": "The interval is the t-interval on the per-block log ratios "
                             "log(config/plain), mean ± t(n−1)·sd/√n, then exp(·) − 1.",
            "ar1-point": "The interval is the t-interval on the per-block log ratios "
                         "log(config/plain), with the variance multiplied by (1 + r)/(1 − r) for "
                         "the correlation between consecutive blocks (r: the bias-corrected lag-1 "
                         f"autocorrelation, clipped to 0–{R_MAX:g}), then exp(·) − 1.",
            "ar1-upper": "The interval is the t-interval on the per-block log ratios "
                         "log(config/plain), mean ± t(n−1)·sd·√f/√n, then exp(·) − 1, where "
                         "f = (1 + r)/(1 − r) allows for correlation between consecutive blocks "
                         "(drift that the pairing does not cancel) and r is a one-sided 95% upper "
                         "confidence bound of the lag-1 autocorrelation (bias-corrected, clipped "
                         f"to 0–{R_MAX:g}); without pairing, Welch's interval on the log values "
                         "with each sample's variance corrected the same way.",
            "t-mixture-cs": "The interval is Lai's t-mixture confidence sequence on the per-block "
                            "log ratios, valid at every n at once, so stopping on a narrow interval "
                            "cannot bias it.",
        }[self.rule]
        low, high, fp = MEASURED[self.rule]
        why = (" Stopping as soon as an interval looks narrow enough favours lucky stretches. In "
               f"simulation (“{COMMAND}”: normal, heavy-tailed, skewed and autocorrelated noise, "
               "per-arm CV 1–10%, true overheads 0 and +3%, targets 1 and 2 points) this rule's "
               f"final interval covered the true overhead in {low:.1%}–{high:.1%} of runs, and "
               f"with no true overhead it excluded 0 in {fp:.1%} of them (nominal 5%).")
        return head + how + why

    def manifest(self) -> dict[str, object]:
        """Name and parameters of the rule, for the manifest."""
        out: dict[str, object] = {
            "name": self.rule, "title": RULE_NAMES[self.rule],
            "target_half_width_pp": self.target_pp, "min_n": self.min_n,
            "max_n": self.max_n, "confidence": self.confidence, "half_width": HALF_WIDTH_TEXT, "unit": "blocks",
            "estimate": "exp(mean of log(config/plain)) - 1", "coverage_command": COMMAND,
        }
        if self.rule in ("ar1-point", "ar1-upper"):
            out.update(r_max=R_MAX, ar1_bound_z=AR1_BOUND_Z if self.rule == "ar1-upper" else 0.0)
        if self.rule == "t-mixture-cs":
            out.update(mixing="g = 7.5 / n*, n* from the pilot")
        return out


def all_met(decisions: dict[str, Decision]) -> bool:
    """True when every encrypted config's decision meets its target (False when there are none)."""
    return bool(decisions) and all(d.met for d in decisions.values())


def _positive(values: np.ndarray, side: str) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or not np.isfinite(v).all() or (v <= 0).any():
        raise ValueError(f"{side} values must be finite and positive (a log ratio needs them)")
    return v


# Lowest and highest coverage of the final interval over the 48 simulated cells (normal, t3,
# lognormal shape 0.5, AR(1) ρ = 0.3; CV 1/3/10%; truth 0/+3%; P 1/2 points) and the pooled
# false-positive rate at truth 0, copied from the output of COMMAND (docs/precision-statistics.md).
MEASURED: dict[str, tuple[float, float, float]] = {
    "fixed-width-t": (0.816, 0.963, 0.085),
    "ar1-point": (0.877, 0.973, 0.059),
    "ar1-upper": (0.948, 0.989, 0.032),
    "t-mixture-cs": (0.964, 1.000, 0.011),
}
