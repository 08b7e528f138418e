"""Plain-language warnings: when the data cannot support a claim, say so and say what would."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from tdebench.stats.coverage import COMMAND, NOMINAL, coverage_phrase, measured, method_name
from tdebench.stats.describe import Summary
from tdebench.stats.load import Measurements, SeriesKey
from tdebench.stats.overhead import Overhead
from tdebench.stats.power import mde_pct
from tdebench.stats.seqinterval import paired_blocks
from tdebench.stats.sequential import DEFAULT_MIN_N, MAX_NEEDED, StoppingRule
from tdebench.stats.wording import phrase_for

CV_LIMIT_PCT = 5.0
MIN_TRIALS = 3
GOOD_CI_TRIALS = 5
#: the half-width an unresolved comparison's hint speaks of: what --precision 2% would need at the run's noise
HINT_TARGET_PP = 2.0


@dataclass(frozen=True)
class Caveat:
    """One warning. ``kind``: noise, small_n, no_effect, failures or small_n_ci."""

    kind: str
    severity: str
    key: SeriesKey | None
    message: str
    score: float = 0.0  # how bad (CV, failures, ...), used to pick the worst when condensing


def series_name(key: SeriesKey) -> str:
    """Short name such as ``sqlite-none power/q05`` (metric added unless elapsed)."""
    name = f"{key.config} {key.test}/{key.step}"
    return name if key.metric in ("elapsed", key.step, "") else f"{name} ({key.metric})"


def noise_caveats(summaries: Iterable[Summary], cv_limit: float = CV_LIMIT_PCT) -> list[Caveat]:
    """CV above the limit: the series is too noisy for small differences."""
    out = []
    for s in summaries:
        if s.cv_pct is None or s.cv_pct <= cv_limit or s.key.test in ("counters", "duet"):  # counts and waits
            continue
        mde = mde_pct(s.cv_pct, s.n)
        tail = f"; differences under about {mde:.0f}% cannot be resolved at n = {s.n}" if mde else ""
        cv = f"{s.cv_pct:.1f}" if round(s.cv_pct, 1) > cv_limit else f"{s.cv_pct:.2f}"
        out.append(Caveat("noise", "warning", s.key,
                          f"{series_name(s.key)}: CV {cv}% is above {cv_limit:g}%{tail}.",
                          s.cv_pct))
    return out


def small_n_caveats(summaries: Iterable[Summary], min_n: int = MIN_TRIALS) -> list[Caveat]:
    """Fewer than ``min_n`` ok values in a series."""
    return [Caveat("small_n", "warning", s.key,
                   f"{series_name(s.key)}: only n = {s.n} ok value{'s' if s.n != 1 else ''}; "
                   f"at least {min_n} trials are needed for an interval worth reading.",
                   float(min_n - s.n))
            for s in summaries if s.n < min_n and not s.one_off]


def failure_caveats(summaries: Iterable[Summary]) -> list[Caveat]:
    """Failed or timed-out values, which are excluded from every statistic."""
    out = []
    for s in summaries:
        parts = [f"{s.n_failed} failed"] if s.n_failed else []
        parts += [f"{s.n_timeout} timed out"] if s.n_timeout else []
        if parts:
            out.append(Caveat("failures", "warning", s.key,
                              f"{series_name(s.key)}: {' and '.join(parts)} (excluded; n = {s.n}).",
                              float(s.n_failed + s.n_timeout)))
    return out


def resolution_hint(o: Overhead, measurements: Measurements, target_pp: float = HINT_TARGET_PP) -> str:
    """``; at this noise about N blocks would narrow it to ±2 points (80% range a–b)`` for an unresolved overhead.

    The prediction is the stopping rule's (:class:`tdebench.stats.sequential.StoppingRule`, what ``--precision
    2%`` would do) on the very values the interval pairs, per block: the noise of the paired log ratios, not of
    each arm (drift shared by the twins of a block cancels in a pair), and a fixed half-width, not the point
    estimate: an estimate that shrinks towards a true 0 as blocks are added made the old figure ("about N trials
    would resolve X%", X the estimate) grow with n without end (benchmarks/needed_estimate.py)."""
    shown = (max(o.ci_high_pct - o.overhead_pct, o.overhead_pct - o.ci_low_pct)
             if o.ci_low_pct is not None and o.ci_high_pct is not None else math.inf)
    plain, values = paired_blocks(measurements, o.key, o.plain_config)
    if shown <= target_pp or plain.size < 2 or (plain <= 0).any() or (values <= 0).any():
        return ""  # already within ±target (little left to resolve), or no paired values to predict from
    if np.allclose(np.log(values) - np.log(plain), np.log(values[0] / plain[0])):
        return "; the values do not vary at all, so the metric may be too coarse to show one"
    d = StoppingRule(target_pp, min_n=DEFAULT_MIN_N).check_paired(plain, values)  # as --precision would run
    if d.needed_n is None:
        return f"; at this noise even a ±{target_pp:g}-point interval would take more than {MAX_NEEDED:,} blocks"
    spread = (f"; 80% range {d.needed_low:,}–{d.needed_high:,}" if d.needed_low is not None
              and d.needed_high is not None and d.needed_low != d.needed_high
              else f"; at least {d.needed_low:,}" if d.needed_low is not None and d.needed_high is None else "")
    return (f"; at this noise about {d.needed_n:,} blocks in all would narrow it to ±{target_pp:g} points "
            f"(--precision {target_pp:g}%{spread})")


def unresolved_text(o: Overhead, measurements: Measurements | None, alpha: float = 0.05,
                    summaries: Mapping[SeriesKey, Summary] | None = None) -> str:
    """Plain words for an overhead whose CI spans zero (without the subject), worded as every view words it
    (:func:`tdebench.stats.wording.phrase_for`)."""
    hint = resolution_hint(o, measurements) if measurements is not None else ""
    phrase = phrase_for(o, summaries)
    if o.p_value is not None and o.p_value < alpha:
        return (f"{phrase}; the t-test's p={o.p_value:.3f} is below {alpha:g}, but the interval, which decides, "
                f"spans zero{hint}")
    p = "" if o.p_value is None else f", p={o.p_value:.3f}"
    return f"{phrase}{p}{hint}"


def no_effect_caveats(overheads: Iterable[Overhead], measurements: Measurements | None = None,
                      summaries: Mapping[SeriesKey, Summary] | None = None) -> list[Caveat]:
    """CI spanning zero: no difference resolved at this n, and what it would take to narrow it."""
    out = []
    for o in overheads:
        if not o.ci_spans_zero or o.ci_low_pct is None or o.ci_high_pct is None:
            continue
        msg = (f"{o.config} vs {o.plain_config}, {o.test}/{o.step}: "
               f"{unresolved_text(o, measurements, summaries=summaries)}.")
        out.append(Caveat("no_effect", "info", o.key, msg, float(abs(o.overhead_pct))))
    return out


def small_n_ci_caveat(overheads: Iterable[Overhead]) -> list[Caveat]:
    """One note when intervals rest on fewer than 5 trials: the measured coverage of their method."""
    groups = sorted({(o.n, o.ci_method) for o in overheads
                     if 2 <= o.n < GOOD_CI_TRIALS and o.ci_method})
    if not groups:
        return []
    ns = ", ".join(str(n) for n in sorted({n for n, _ in groups}))
    facts = "; ".join(f"n = {n}, {method_name(m)}: {coverage_phrase(m, n)}" for n, m in groups)
    narrow = any((f := measured(m, n)) is not None and f.low < NOMINAL - 0.05 for n, m in groups)
    tail = (" Intervals that cover well under 95% are too narrow: read them with the p-value."
            if narrow else "")
    return [Caveat("small_n_ci", "info", None,
                   f"Some intervals rest on n = {ns} trials per config. Measured coverage of a nominal "
                   f"95% interval around a known overhead in simulation (“{COMMAND}”; lognormal noise, "
                   f"CV 2–15%; outliers: 5% of values doubled): {facts}. With so few trials an honest "
                   f"interval is wide; {GOOD_CI_TRIALS} or more trials narrow it a lot.{tail}")]


def all_caveats(summaries: Mapping[SeriesKey, Summary], overheads: list[Overhead], *,
                cv_limit: float = CV_LIMIT_PCT, min_n: int = MIN_TRIALS,
                measurements: Measurements | None = None) -> list[Caveat]:
    """Every warning for a run: failures, small n, noise, no measurable effect, small-n CIs."""
    values = list(summaries.values())
    return (failure_caveats(values) + small_n_caveats(values, min_n)
            + noise_caveats(values, cv_limit) + no_effect_caveats(overheads, measurements, summaries)
            + small_n_ci_caveat(overheads))


_GROUP_TEXT = {
    "noise": "{count} series have a CV above {limit:g}% (worst: {worst}); small differences "
             "there cannot be resolved",
    "small_n": "{count} series have fewer than {min_n} ok values (e.g. {worst})",
    "failures": "{count} series have failed or timed-out values, excluded from the statistics "
                "(most: {worst})",
    "no_effect": "{count} comparisons have an interval spanning zero: no difference resolved "
                 "at this n (largest point estimate: {worst})",
}
_SEVERITY_ORDER = {"warning": 0, "info": 1}


def condense(caveats: Iterable[Caveat], keep: Callable[[SeriesKey], bool], *,
             cv_limit: float = CV_LIMIT_PCT, min_n: int = MIN_TRIALS,
             fold_above: int = 2) -> list[Caveat]:
    """Keep caveats whose key passes ``keep`` (e.g. headline steps); fold the rest per kind.

    A kind with at most ``fold_above`` remaining caveats is kept as is. Warnings come first.
    """
    kept: list[Caveat] = []
    folded: dict[str, list[Caveat]] = {}
    for c in caveats:
        if c.key is None or keep(c.key):
            kept.append(c)
        else:
            folded.setdefault(c.kind, []).append(c)
    for kind, group in folded.items():
        if len(group) <= fold_above:
            kept.extend(group)
            continue
        worst = max(group, key=lambda c: c.score)
        label = series_name(worst.key) if worst.key else ""
        if kind == "noise":
            label += f", CV {worst.score:.1f}%"
        text = _GROUP_TEXT.get(kind, "{count} more: {worst}").format(
            count=len(group), limit=cv_limit, min_n=min_n, worst=label)
        kept.append(Caveat(kind, group[0].severity, None, text + ".", worst.score))
    return sorted(kept, key=lambda c: (_SEVERITY_ORDER.get(c.severity, 2), c.kind == "small_n_ci"))
