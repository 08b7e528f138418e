"""The one phrase every view shows for an overhead: what the estimate says, in the metric's sense.

A change is named by its direction only when the interval excludes 0; otherwise the phrase says
that no difference was resolved and gives the signed estimate. Times get "slower"/"faster";
throughputs (TPM, tps, QphH, …) and other amounts get "higher"/"lower" after the metric's name, so
a throughput that went up is never called an overhead. Resolved changes are given as magnitudes
with the interval in the same sense: ``4.1% faster (95% CI 2.0% to 6.2%, n = 12)``.
"""

from __future__ import annotations

import math
from typing import Literal

from collections.abc import Mapping

from tdebench.stats.describe import Summary
from tdebench.stats.load import SeriesKey
from tdebench.stats.metrics import higher_is_better, step_label
from tdebench.stats.overhead import Overhead

Kind = Literal["time", "throughput", "amount"]
TIME_METRICS = frozenset({"elapsed", "latency", "response_time"})
METRIC_LABELS = {
    "server_cpu": "server CPU time", "client_cpu": "client CPU time", "tool_cpu": "tool CPU time",
    "bytes": "size", "mb_per_s": "MB/s", "rows_per_s": "rows/s", "bytes_per_s": "bytes/s",
    "server_read_bytes": "server bytes read", "server_write_bytes": "server bytes written",
    "at_common_wait": "time at a common wait per page read",
}


def metric_kind(metric: str, unit: str = "") -> Kind:
    """``time`` for elapsed times, ``throughput`` where higher is better, else ``amount``."""
    if higher_is_better(metric, unit):
        return "throughput"
    return "time" if metric.lower() in TIME_METRICS else "amount"


def metric_label(metric: str) -> str:
    """``TPM``, ``QphH@Size``, ``server CPU time`` …: the name a phrase puts before higher/lower."""
    if metric in METRIC_LABELS:
        return METRIC_LABELS[metric]
    label = step_label(metric)
    return label.upper() if label == metric and len(label) <= 4 else label


def _signed(x: float, digits: int) -> str:
    text = f"{x:+.{digits}f}%"
    return f"{0:.{digits}f}%" if float(text[:-1]) == 0 else text


def _magnitude(x: float, digits: int) -> str:
    return f"{abs(x):.{digits}f}%"


def direction(ci_low_pct: float | None, ci_high_pct: float | None) -> Literal["up", "down", "none"]:
    """``up``/``down`` when the interval excludes 0 on that side, ``none`` when it spans 0 or is missing."""
    if ci_low_pct is None or ci_high_pct is None:
        return "none"
    if ci_low_pct > 0:
        return "up"
    return "down" if ci_high_pct < 0 else "none"


def is_worse(ci_low_pct: float | None, ci_high_pct: float | None, kind: Kind) -> bool | None:
    """True when the resolved change is for the worse (slower, more, or less throughput)."""
    d = direction(ci_low_pct, ci_high_pct)
    if d == "none":
        return None
    return (d == "down") if kind == "throughput" else (d == "up")


def n_unit_of(o: Overhead, summaries: Mapping[SeriesKey, Summary] | None = None) -> str:
    """What an overhead's n counts: ``rounds`` (paired round by round), ``blocks`` (values of rounds, counted per
    block: fewer than the values its series has) or ``trials``."""
    if o.pairing_unit == "round":
        return "rounds"
    summary = (summaries or {}).get(o.key)
    if o.pairing_unit == "block" and summary is not None and summary.n > o.n_config:
        return "blocks"
    return "trials"


def n_text(n: int, unit: str = "") -> str:
    """``n = 3 blocks``, ``n = 1 trial``; without a unit ``n = 3``."""
    if not unit:
        return f"n = {n}"
    return f"n = {n} {unit[:-1] if n == 1 and unit.endswith('s') else unit}"


def overhead_phrase(estimate_pct: float | None, ci_low_pct: float | None,
                    ci_high_pct: float | None, *, kind: Kind = "time", label: str = "",
                    n: int | None = None, confidence: float = 0.95, digits: int = 1, n_unit: str = "") -> str:
    """The phrase for one comparison (config vs its plain twin), without a subject.

    ``label`` names the metric for throughputs and amounts (``TPM 5.7% higher``); times need none.
    Examples: ``12.3% slower (95% CI 10.1% to 14.6%, n = 10)``, ``4.1% faster (…)``,
    ``TPM 5.7% higher (…)``, ``no difference resolved: +0.4% (95% CI -0.6% to +1.4%, n = 30)``,
    ``+5.7%, no interval at n = 1 (at least 2 trials per config are needed)``.
    """
    if estimate_pct is None or not math.isfinite(estimate_pct):
        return "no estimate (no successful trials to compare)"
    subject = f"{label} " if label and kind != "time" else ""
    n_part = f", {n_text(n, n_unit)}" if n is not None else ""
    has_ci = (ci_low_pct is not None and ci_high_pct is not None
              and math.isfinite(ci_low_pct) and math.isfinite(ci_high_pct))
    if not has_ci:
        at = f" at {n_text(n, n_unit)}" if n is not None else ""
        return (f"{subject}{_signed(estimate_pct, digits)}, no interval{at} "
                "(at least 2 trials per config are needed)")
    conf = f"{confidence:.0%} CI"
    d = direction(ci_low_pct, ci_high_pct)
    if d == "none":
        where = f" in {label}" if label and kind != "time" else ""
        return (f"no difference resolved{where}: {_signed(estimate_pct, digits)} ({conf} "
                f"{_signed(ci_low_pct, digits)} to {_signed(ci_high_pct, digits)}{n_part})")
    if kind == "time":
        word = "slower" if d == "up" else "faster"
    else:
        word = "higher" if d == "up" else "lower"
    lo, hi = (ci_low_pct, ci_high_pct) if d == "up" else (-ci_high_pct, -ci_low_pct)
    size = estimate_pct if d == "up" else -estimate_pct
    return (f"{subject}{size:.{digits}f}% {word} ({conf} {_magnitude(lo, digits)} to "
            f"{_magnitude(hi, digits)}{n_part})")


#: every word :func:`verdict_word` says: the verdict's own, in every view (tests/unit/test_report_dba.py)
VERDICT_WORDS = ("slower", "faster", "higher", "lower", "no difference resolved", "no interval")


def outcome_word(ci_low_pct: float | None, ci_high_pct: float | None, *, kind: Kind = "time",
                 label: str = "") -> str:
    """The verdict of one comparison in the words of its phrase (:func:`overhead_phrase`): ``slower``/``faster``
    for times, ``TPM higher``/``TPM lower`` for throughputs and amounts when the interval excludes 0, ``no
    difference resolved`` when it spans 0 (whatever the p-value says: the interval decides), ``no interval``
    without one. The summary tables, overhead.csv's ``verdict`` and the run comparison all use it."""
    if ci_low_pct is None or ci_high_pct is None or not (math.isfinite(ci_low_pct) and math.isfinite(ci_high_pct)):
        return "no interval"
    d = direction(ci_low_pct, ci_high_pct)
    if d == "none":
        return "no difference resolved"
    if kind == "time":
        return "slower" if d == "up" else "faster"
    return f"{label} higher".strip() if d == "up" else f"{label} lower".strip()


def verdict_word(o: Overhead) -> str:
    """:func:`outcome_word` for an ``overhead.csv`` row (kind and label from its metric)."""
    return outcome_word(o.ci_low_pct, o.ci_high_pct, kind=metric_kind(o.metric, o.unit), label=metric_label(o.metric))


def phrase_for(o: Overhead, summaries: Mapping[SeriesKey, Summary] | None = None, *, confidence: float = 0.95,
               digits: int = 1) -> str:
    """:func:`overhead_phrase` for an ``overhead.csv`` row (kind and label from its metric; with ``summaries``,
    n says what it counts: :func:`n_unit_of`)."""
    return overhead_phrase(o.overhead_pct, o.ci_low_pct, o.ci_high_pct,
                           kind=metric_kind(o.metric, o.unit), label=metric_label(o.metric), n=o.n,
                           confidence=confidence, digits=digits,
                           n_unit=n_unit_of(o, summaries) if summaries is not None else "")
