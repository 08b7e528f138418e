"""Descriptive statistics per series: n, mean, median, stddev, CV, min, max."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from tdebench.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_median_ci
from tdebench.stats.load import Measurements, SeriesKey

SUMMARY_FIELDS = (
    "engine", "config", "encryption", "workload", "test", "step", "metric", "unit", "n",
    "n_failed", "n_timeout", "mean", "median", "stddev", "cv_pct", "min", "max",
    "median_ci_low", "median_ci_high",
)


@dataclass(frozen=True)
class Summary:
    """Descriptive statistics of one series (None where undefined, e.g. stddev at n < 2)."""

    key: SeriesKey
    encryption: str
    unit: str
    n: int
    n_failed: int = 0
    n_timeout: int = 0
    mean: float | None = None
    median: float | None = None
    stddev: float | None = None
    cv_pct: float | None = None
    min: float | None = None
    max: float | None = None
    median_ci_low: float | None = None
    median_ci_high: float | None = None
    one_off: bool = False
    #: what n counts: "rounds" (values per round of the interleaved OLTP schedule) or "trials"
    n_unit: str = "trials"

    def as_row(self) -> dict[str, object]:
        """Flat dict with the columns of ``summary.csv``."""
        d = asdict(self)
        d.update(self.key._asdict())
        return {k: d[k] for k in SUMMARY_FIELDS}


def describe(values: np.ndarray) -> dict[str, float | None]:
    """n, mean, median, stddev (ddof=1), CV in %, min and max of one sample."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return {"n": 0, "mean": None, "median": None, "stddev": None, "cv_pct": None,
                "min": None, "max": None}
    mean = float(v.mean())
    sd = float(v.std(ddof=1)) if v.size > 1 else None
    cv = sd / abs(mean) * 100.0 if sd is not None and mean != 0 else None
    return {"n": int(v.size), "mean": mean, "median": float(np.median(v)), "stddev": sd,
            "cv_pct": cv, "min": float(v.min()), "max": float(v.max())}


def summarize_series(m: Measurements, *, seed: int = DEFAULT_SEED,
                     n_resamples: int = DEFAULT_RESAMPLES) -> dict[SeriesKey, Summary]:
    """A :class:`Summary` for every series, including series that only failed (n = 0)."""
    out: dict[SeriesKey, Summary] = {}
    for key in m.all_keys():
        sample = m.sample(key)
        values = sample.values if sample is not None else np.empty(0)
        d = describe(values)
        ci = bootstrap_median_ci(values, seed=seed, n_resamples=n_resamples) if values.size > 1 else None
        out[key] = Summary(
            key=key, encryption=m.encryption.get(key.config, ""), unit=m.units.get(key, ""),
            n=int(d.pop("n")), n_failed=m.failed.get(key, 0), n_timeout=m.timeouts.get(key, 0),
            median_ci_low=ci[0] if ci else None, median_ci_high=ci[1] if ci else None,
            one_off=bool(sample is not None and sample.one_off),
            n_unit="rounds" if sample is not None and sample.rounds is not None and sample.rounds.any() else "trials",
            **d,
        )
    return out


def pooled_cv_pct(summaries: list[Summary]) -> float | None:
    """CV pooled over groups: sqrt(Σ(n−1)·CV² / Σ(n−1)); None when no group has n ≥ 2."""
    num = sum((s.n - 1) * s.cv_pct ** 2 for s in summaries if s.cv_pct is not None and s.n > 1)
    den = sum(s.n - 1 for s in summaries if s.cv_pct is not None and s.n > 1)
    return float(np.sqrt(num / den)) if den > 0 else None
