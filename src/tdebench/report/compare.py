"""Compare two runs (configs matched by label; the first run is the baseline)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from tdebench.report.fmt import fmt_ci, fmt_p
from tdebench.report.model import RunSummary, headline_keys, summarize
from tdebench.stats.analysis import StatsSettings
from tdebench.stats.caveats import Caveat, condense
from tdebench.stats.load import SeriesKey
from tdebench.stats.metrics import higher_is_better
from tdebench.stats.overhead import SeriesInterval, compare_samples
from tdebench.stats.wording import metric_kind, metric_label, outcome_word


@dataclass(frozen=True)
class Change(SeriesInterval):
    """One series of one config: run B against run A in percent (estimate and CI as in ``ci_method``)."""

    engine: str
    config: str
    workload: str
    test: str
    step: str
    metric: str
    unit: str
    n_base: int
    n_other: int
    median_base: float
    median_other: float
    change_pct: float
    ci_low_pct: float | None
    ci_high_pct: float | None
    p_value: float | None
    ci_method: str = ""

    @property
    def verdict(self) -> str:
        """The verdict's word, as for overheads (stats.wording.outcome_word)."""
        return outcome_word(self.ci_low_pct, self.ci_high_pct, kind=metric_kind(self.metric, self.unit),
                            label=metric_label(self.metric))


CHANGE_FIELDS = tuple(f.name for f in fields(Change))


@dataclass
class RunComparison:
    """Two run summaries and the per-series changes between them."""

    base: RunSummary
    other: RunSummary
    changes: list[Change]
    matched: list[str]
    only_base: list[str]
    only_other: list[str]
    verdicts: list[str]
    warnings: list[Caveat]

    def change(self, key: SeriesKey) -> Change | None:
        """The change of one series, if both runs have it."""
        return next((c for c in self.changes if c.key == key), None)


def _changes(base: RunSummary, other: RunSummary, matched: list[str],
             settings: StatsSettings) -> list[Change]:
    ma, mb = base.analysis.measurements, other.analysis.measurements
    out = []
    for key, sa in ma.series.items():
        sb = mb.sample(key)
        if key.config not in matched or sb is None:
            continue
        c = compare_samples(sa, sb, seed=settings.seed, n_resamples=settings.n_resamples,
                            method=settings.ci_method, allow_pairing=False)
        out.append(Change(*key[:6], ma.units.get(key, ""), c.n_base, c.n_other, c.median_base,
                          c.median_other, c.pct, c.ci_low_pct, c.ci_high_pct, c.p_value,
                          c.ci_method))
    return out


def change_sentence(c: Change) -> str:
    """One plain sentence about the headline change of one config."""
    if c.ci_low_pct is None:
        return (f"{c.config}: run B differs by {c.change_pct:+.1f}% at n = {c.n_base} vs "
                f"{c.n_other}, too few trials for an interval.")
    if c.ci_spans_zero:
        return (f"{c.config}: no measurable change between the runs ({c.change_pct:+.1f}%, 95% CI "
                f"{fmt_ci(c.ci_low_pct, c.ci_high_pct)}, {fmt_p(c.p_value)}, "
                f"n = {c.n_base} vs {c.n_other}).")
    up = c.change_pct > 0
    if higher_is_better(c.metric, c.unit):
        word = "higher" if up else "lower"
    else:
        word = "slower" if up else "faster"
    lo, hi = (c.ci_low_pct, c.ci_high_pct) if up else (-c.ci_high_pct, -c.ci_low_pct)
    return (f"{c.config}: run B is {abs(c.change_pct):.1f}% {word} than run A (95% CI "
            f"{fmt_ci(lo, hi)}, {fmt_p(c.p_value)}, n = {c.n_base} vs {c.n_other}).")


def headline_changes(cmp: RunComparison) -> list[Change]:
    """The change of each matched config on its engine's headline series (in config order)."""
    out = []
    for es in cmp.base.engines:
        for label in es.configs:
            c = cmp.change(es.headline._replace(config=label)) if es.headline else None
            if c is not None:
                out.append(c)
    return out


def _merged_warnings(base: RunSummary, other: RunSummary) -> list[Caveat]:
    """Warnings of both runs, each prefixed with its run; identical ones said once."""
    in_b = {w.message for w in other.warnings}
    out = [Caveat(w.kind, w.severity, w.key,
                  f"{'runs A and B' if w.message in in_b else 'run A'}: {w.message}", w.score)
           for w in base.warnings]
    in_a = {w.message for w in base.warnings}
    out += [Caveat(w.kind, w.severity, w.key, f"run B: {w.message}", w.score)
            for w in other.warnings if w.message not in in_a]
    return out


def compare(base_dir: Path, other_dir: Path, settings: StatsSettings | None = None) -> RunComparison:
    """Summarize both runs and compute the changes of every matched series."""
    s = settings or StatsSettings()
    base, other = summarize(Path(base_dir), s), summarize(Path(other_dir), s)
    la = base.analysis.measurements.config_order
    lb = other.analysis.measurements.config_order
    matched = [c for c in la if c in lb]
    cmp = RunComparison(base, other, _changes(base, other, matched, s), matched,
                        [c for c in la if c not in lb], [c for c in lb if c not in la], [], [])
    cmp.verdicts = [change_sentence(c) for c in headline_changes(cmp)]
    cmp.warnings = _merged_warnings(base, other)
    if not matched:
        cmp.warnings.insert(0, Caveat("input", "warning", None,
                                      "The runs have no config label in common: nothing to compare."))
    cmp.warnings = condense(cmp.warnings, headline_keys(base.presentation))
    return cmp
