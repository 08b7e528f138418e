"""Everything the statistics layer computes for one run, in one call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from tdebench.stats.anova import AnovaResult, anova_by_step
from tdebench.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from tdebench.stats.caveats import CV_LIMIT_PCT, MIN_TRIALS, Caveat, all_caveats
from tdebench.stats.describe import Summary, summarize_series
from tdebench.stats.interval import DEFAULT_METHOD, IntervalMethod
from tdebench.stats.load import Measurements, SeriesKey, load_measurements
from tdebench.stats.overhead import Overhead, compute_overheads, default_baselines


@dataclass(frozen=True)
class StatsSettings:
    """How the statistics were computed (reported in the methods section)."""

    seed: int = DEFAULT_SEED
    n_resamples: int = DEFAULT_RESAMPLES
    ci_method: IntervalMethod = DEFAULT_METHOD
    confidence: float = 0.95
    alpha: float = 0.05
    power: float = 0.8
    cv_limit_pct: float = CV_LIMIT_PCT
    min_trials: int = MIN_TRIALS


@dataclass
class Analysis:
    """Summaries, overheads, multi-config tests and warnings of one run."""

    measurements: Measurements
    settings: StatsSettings
    baselines: dict[str, str]
    summaries: dict[SeriesKey, Summary]
    overheads: list[Overhead]
    anovas: list[AnovaResult]
    caveats: list[Caveat] = field(default_factory=list)

    @cached_property
    def _overhead_index(self) -> dict[SeriesKey, Overhead]:
        return {o.key: o for o in self.overheads}

    def overhead(self, key: SeriesKey) -> Overhead | None:
        """The overhead row of a (config) series, if any."""
        return self._overhead_index.get(key)


def analyze(m: Measurements, *, baselines: Mapping[str, str] | None = None,
            settings: StatsSettings | None = None) -> Analysis:
    """Compute summaries, overheads vs the plain twins, ANOVA/Tukey and warnings."""
    s = settings or StatsSettings()
    base = dict(default_baselines(m) if baselines is None else baselines)
    summaries = summarize_series(m, seed=s.seed, n_resamples=s.n_resamples)
    overheads = compute_overheads(m, baselines=base, seed=s.seed, n_resamples=s.n_resamples,
                                  method=s.ci_method)
    return Analysis(
        measurements=m, settings=s, baselines=base, summaries=summaries, overheads=overheads,
        anovas=anova_by_step(m),
        caveats=all_caveats(summaries, overheads, cv_limit=s.cv_limit_pct, min_n=s.min_trials),
    )


def analyze_run(run_dir: Path, **kwargs: object) -> Analysis:
    """Load ``run_dir/measurements.csv`` and :func:`analyze` it."""
    return analyze(load_measurements(Path(run_dir) / "measurements.csv"), **kwargs)  # type: ignore[arg-type]
