"""Statistics over trials: summaries, overhead CIs (log t / bootstrap), t-tests, ANOVA/Tukey, warnings.

Pure functions over ``measurements.csv``; see :func:`analyze` for everything at once. Names are imported from
their modules when first used: reading a run directory (``stats.load``) does not import SciPy, which the tests
and intervals need (most of the start-up time of ``tdebench run``).
"""

from importlib import import_module

# a function named as its module: bound now, so that importing the module later leaves the name to the function
from tdebench.stats.describe import describe

# name -> the module of this package that defines it
_WHERE = {
    "Analysis": "analysis", "StatsSettings": "analysis", "analyze": "analysis", "analyze_run": "analysis",
    "AnovaResult": "anova", "TukeyPair": "anova", "anova_by_step": "anova", "eta_squared": "anova",
    "DEFAULT_RESAMPLES": "bootstrap", "DEFAULT_SEED": "bootstrap", "bootstrap_median_ci": "bootstrap",
    "bootstrap_ratio_ci": "bootstrap",
    "Caveat": "caveats", "all_caveats": "caveats", "condense": "caveats",
    "SUMMARY_FIELDS": "describe", "Summary": "describe", "describe": "describe", "pooled_cv_pct": "describe",
    "summarize_series": "describe",
    "BOOTSTRAP_MIN_N": "interval", "DEFAULT_METHOD": "interval", "Interval": "interval",
    "IntervalMethod": "interval", "overhead_interval": "interval", "welch_p": "interval",
    "Measurements": "load", "Row": "load", "Sample": "load", "SeriesKey": "load", "is_plain": "load",
    "load_measurements": "load", "parse_rows": "load",
    "LogT": "logt", "log_t": "logt",
    "higher_is_better": "metrics", "query_number": "metrics", "step_label": "metrics", "vu_count": "metrics",
    "OVERHEAD_FIELDS": "overhead", "Comparison": "overhead", "Overhead": "overhead", "compare_samples": "overhead",
    "compute_overheads": "overhead", "default_baselines": "overhead",
    "mde_pct": "power", "trials_needed": "power",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> object:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
