"""Statistics over trials: summaries, overhead CIs (log t / bootstrap), t-tests, ANOVA/Tukey, warnings.

Pure functions over ``measurements.csv``; see :func:`analyze` for everything at once.
"""

from tdebench.stats.analysis import Analysis, StatsSettings, analyze, analyze_run
from tdebench.stats.anova import AnovaResult, TukeyPair, anova_by_step, eta_squared
from tdebench.stats.bootstrap import (
    DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_median_ci, bootstrap_ratio_ci,
)
from tdebench.stats.caveats import Caveat, all_caveats, condense
from tdebench.stats.describe import SUMMARY_FIELDS, Summary, describe, pooled_cv_pct, summarize_series
from tdebench.stats.interval import (
    BOOTSTRAP_MIN_N, DEFAULT_METHOD, Interval, IntervalMethod, overhead_interval, welch_p,
)
from tdebench.stats.load import (
    Measurements, Row, Sample, SeriesKey, is_plain, load_measurements, parse_rows,
)
from tdebench.stats.logt import LogT, log_t
from tdebench.stats.metrics import higher_is_better, query_number, step_label, vu_count
from tdebench.stats.overhead import (
    OVERHEAD_FIELDS, Comparison, Overhead, compare_samples, compute_overheads, default_baselines,
    significance,
)
from tdebench.stats.power import mde_pct, trials_needed

__all__ = [
    "Analysis", "AnovaResult", "BOOTSTRAP_MIN_N", "Caveat", "Comparison", "DEFAULT_METHOD",
    "DEFAULT_RESAMPLES", "DEFAULT_SEED", "Interval", "IntervalMethod", "LogT", "Measurements",
    "OVERHEAD_FIELDS", "Overhead", "Row", "SUMMARY_FIELDS", "Sample", "SeriesKey",
    "StatsSettings", "Summary", "TukeyPair", "all_caveats", "analyze", "analyze_run",
    "anova_by_step", "bootstrap_median_ci", "bootstrap_ratio_ci", "compare_samples",
    "compute_overheads", "condense", "default_baselines", "describe", "eta_squared",
    "higher_is_better", "is_plain", "load_measurements", "log_t", "mde_pct", "overhead_interval",
    "parse_rows", "pooled_cv_pct", "query_number", "significance", "step_label",
    "summarize_series", "trials_needed", "vu_count", "welch_p",
]
