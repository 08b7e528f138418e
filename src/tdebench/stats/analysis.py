"""Everything the statistics layer computes for one run, in one call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from tdebench.stats.anova import AnovaResult, anova_by_step
from tdebench.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from tdebench.stats.caveats import CV_LIMIT_PCT, MIN_TRIALS, Caveat, all_caveats
from tdebench.stats.describe import Summary, summarize_series
from tdebench.stats.interval import DEFAULT_METHOD, IntervalMethod
from tdebench.stats.load import Measurements, SeriesKey, load_measurements
from tdebench.stats.overhead import Overhead, compute_overheads, default_baselines
from tdebench.stats.seqinterval import apply_sequential
from tdebench.stats.sequential import RULES, StoppingRule


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
    #: a --precision run: its stopping rule, and the (test, step, metric) series it watched, whose overhead rows
    #: carry the rule's interval (stats/seqinterval.py): the first, and the others when it watched several
    sequential: StoppingRule | None = None
    sequential_series: tuple[str, str, str] | None = None
    sequential_more: tuple[tuple[str, str, str], ...] = ()

    @property
    def sequential_all(self) -> tuple[tuple[str, str, str], ...]:
        """Every series the stopping rule watched."""
        return ((self.sequential_series,) if self.sequential_series else ()) + self.sequential_more


def settings_for_run(manifest: Mapping[str, Any]) -> StatsSettings:
    """The statistics a run's own views (terminal, report) use: the defaults, plus a --precision run's rule."""
    entry = manifest.get("precision") if isinstance(manifest, Mapping) else None
    if not isinstance(entry, Mapping) or not isinstance(entry.get("rule"), Mapping):
        return StatsSettings()
    rule, head = entry["rule"], entry.get("headline") or {}
    try:
        name = rule.get("name") if rule.get("name") in RULES else "ar1-upper"
        seq = StoppingRule(float(rule["target_half_width_pp"]), min_n=int(rule.get("min_n", 10)),
                           max_n=rule.get("max_n"), confidence=float(rule.get("confidence", 0.95)), rule=name)
        series = (str(head["test"]), str(head["step"]), str(head["metric"]))
        watched = [(str(w["test"]), str(w["step"]), str(w["metric"])) for w in entry.get("watched") or []]
    except (KeyError, TypeError, ValueError, ArithmeticError):
        return StatsSettings()
    except Exception:  # noqa: BLE001 - a damaged entry (UsageError from the rule): the default statistics
        return StatsSettings()
    return StatsSettings(sequential=seq, sequential_series=series,
                         sequential_more=tuple(w for w in dict.fromkeys(watched) if w != series))


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
    if s.sequential is not None and s.sequential_series is not None:
        overheads = apply_sequential(overheads, m, s.sequential, s.sequential_all)
    return Analysis(
        measurements=m, settings=s, baselines=base, summaries=summaries, overheads=overheads,
        anovas=anova_by_step(m),
        caveats=all_caveats(summaries, overheads, cv_limit=s.cv_limit_pct, min_n=s.min_trials, measurements=m),
    )


def analyze_run(run_dir: Path, **kwargs: object) -> Analysis:
    """Load ``run_dir/measurements.csv`` and :func:`analyze` it."""
    return analyze(load_measurements(Path(run_dir) / "measurements.csv"), **kwargs)  # type: ignore[arg-type]
