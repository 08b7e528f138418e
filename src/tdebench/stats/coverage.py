"""Measured coverage of each overhead interval method, and plain names for the methods.

Figures are copied from the output of :data:`COMMAND` (2000 simulated runs per cell, a true overhead
of +10%): the share of runs whose nominal 95% interval contained it. ``low``–``high`` spans lognormal
noise with CV 2%, 5% and 15% (paired cases with a block effect shared by both configs);
``outliers`` is CV 5% with each value doubled with probability 5%; ``width_pp`` and
``width_outliers_pp`` are the median widths in percentage points at CV 5% without and with them.
Rerun the command after changing a method.
"""

from __future__ import annotations

from dataclasses import dataclass

COMMAND = "python benchmarks/stats_coverage.py --reps 2000"
NOMINAL = 0.95


@dataclass(frozen=True)
class Measured:
    """Coverage of one method at one n (fractions)."""

    low: float
    high: float
    outliers: float
    width_pp: float
    width_outliers_pp: float


COVERAGE: dict[str, dict[int, Measured]] = {
    "t-log-paired": {
        2: Measured(0.949, 0.956, 0.952, 97.2, 123.0),
        3: Measured(0.947, 0.957, 0.968, 32.6, 40.3),
        5: Measured(0.948, 0.949, 0.964, 18.1, 24.3),
        10: Measured(0.944, 0.960, 0.979, 10.7, 34.8),
        20: Measured(0.953, 0.958, 0.975, 7.2, 21.9),
    },
    "welch-log": {
        2: Measured(0.972, 0.975, 0.979, 66.5, 78.4),
        3: Measured(0.962, 0.968, 0.972, 26.2, 32.1),
        5: Measured(0.956, 0.960, 0.975, 16.0, 20.4),
        10: Measured(0.942, 0.957, 0.983, 10.2, 34.8),
        20: Measured(0.950, 0.958, 0.973, 7.0, 22.5),
    },
    "bootstrap-percentile-paired": {
        2: Measured(0.491, 0.503, 0.508, 7.4, 9.2),
        3: Measured(0.740, 0.755, 0.761, 12.4, 15.5),
        5: Measured(0.932, 0.942, 0.926, 17.8, 24.1),
        10: Measured(0.956, 0.968, 0.966, 13.3, 15.5),
        20: Measured(0.975, 0.977, 0.975, 9.9, 10.8),
    },
    "bootstrap-percentile": {
        2: Measured(0.655, 0.691, 0.662, 12.1, 13.3),
        3: Measured(0.890, 0.907, 0.886, 17.8, 22.0),
        5: Measured(0.966, 0.971, 0.974, 18.1, 23.3),
        10: Measured(0.962, 0.967, 0.969, 11.8, 13.1),
        20: Measured(0.963, 0.972, 0.972, 8.6, 9.1),
    },
    "bootstrap-bca-paired": {
        2: Measured(0.491, 0.503, 0.508, 7.4, 9.2),
        3: Measured(0.703, 0.716, 0.729, 12.0, 15.1),
        5: Measured(0.840, 0.857, 0.853, 15.9, 20.1),
        10: Measured(0.905, 0.927, 0.920, 13.1, 15.2),
        20: Measured(0.934, 0.947, 0.933, 9.8, 10.8),
    },
    "bootstrap-bca": {
        2: Measured(0.655, 0.691, 0.662, 12.1, 13.3),
        3: Measured(0.890, 0.907, 0.886, 17.8, 22.0),
        5: Measured(0.959, 0.964, 0.969, 17.7, 22.4),
        10: Measured(0.950, 0.955, 0.961, 11.6, 13.0),
        20: Measured(0.953, 0.957, 0.953, 8.5, 9.1),
    },
}

METHOD_NAMES = {
    "t-log-paired": "t-interval on the paired log ratios",
    "welch-log": "Welch interval on the log values",
    "bootstrap-percentile-paired": "percentile bootstrap, blocks resampled as pairs",
    "bootstrap-percentile": "percentile bootstrap",
    "bootstrap-bca-paired": "BCa bootstrap, blocks resampled as pairs",
    "bootstrap-bca": "BCa bootstrap",
}
P_METHOD_NAMES = {
    "t-log-paired": "paired t-test on the log ratios",
    "welch-log": "Welch t-test on the log values",
    "welch": "Welch t-test on the raw values",
}


def method_name(ci_method: str) -> str:
    """Plain name of an interval method (the code itself when unknown)."""
    return METHOD_NAMES.get(ci_method, ci_method or "no interval")


def estimate_name(ci_method: str) -> str:
    """What ``overhead_pct`` is for rows with this interval method."""
    if ci_method == "t-log-paired":
        return "geometric mean of the per-block ratios − 1"
    if ci_method == "welch-log":
        return "ratio of geometric means − 1"
    return "ratio of medians − 1"


def measured(ci_method: str, n: int) -> Measured | None:
    """The figures for a method at n, if that n was simulated."""
    return COVERAGE.get(ci_method, {}).get(n)


def span_text(m: Measured) -> str:
    """``94.7–95.7%`` (lowest to highest coverage over the lognormal CVs)."""
    if m.low == m.high:
        return f"{m.low * 100:.1f}%"
    return f"{m.low * 100:.1f}–{m.high * 100:.1f}%"


def coverage_phrase(ci_method: str, n: int) -> str:
    """``94.7–95.7% (96.8% with outliers), median width 33 points at CV 5%`` or the neighbours'."""
    m = measured(ci_method, n)
    if m is not None:
        return (f"{span_text(m)} ({m.outliers * 100:.1f}% with outliers), median width "
                f"{m.width_pp:.0f} points at CV 5%")
    ns = sorted(COVERAGE.get(ci_method, {}))
    near = [k for k in ns if k < n][-1:] + [k for k in ns if k > n][:1]
    if not near:
        return "not simulated"
    return f"not simulated at n = {n} (" + ", ".join(
        f"n = {k}: {span_text(COVERAGE[ci_method][k])}" for k in near) + ")"
