"""A/A false-positive rate with its exact (Clopper–Pearson) interval."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from tdebench.stats.aa import excludes_zero, false_positive_rate
from tdebench.stats.overhead import Overhead
from tdebench.stats.sequential import StoppingRule


def row(lo: float | None, hi: float | None) -> Overhead:
    """An A/A overhead row with the given interval (percent)."""
    return Overhead("mariadb", "mariadb-none-2", "tpch", "total", 10, 10.0, 10.0,
                    0.0 if lo is None else (lo + hi) / 2, lo, hi, None, test="power",
                    metric="elapsed", plain_config="mariadb-none")


def test_rate_and_clopper_pearson_interval_match_scipy() -> None:
    rows = [row(0.2, 1.4)] + [row(-0.6, 0.8)] * 19
    f = false_positive_rate(rows)
    ci = stats.binomtest(1, 20, 0.05).proportion_ci(0.95, method="exact")
    assert (f.false_positives, f.comparisons, f.rate) == (1, 20, 0.05)
    assert (f.ci_low, f.ci_high) == pytest.approx((ci.low, ci.high))
    assert f.consistent_with_nominal
    assert f.text().startswith("1 of 20 A/A comparisons (5.0%, 95% CI 0.1%–24.9%)")
    assert "consistent with the nominal 5%" in f.text()


def test_a_tool_that_invents_differences_is_caught() -> None:
    rows = [row(0.5, 2.0)] * 6 + [row(-2.5, -0.1)] * 3 + [row(-1.0, 1.0)] * 11
    f = false_positive_rate(rows)
    assert f.rate == pytest.approx(0.45) and f.ci_low > 0.05 and not f.consistent_with_nominal
    assert f.p_value < 0.001 and "above the nominal" in f.text()


def test_rows_without_interval_are_counted_apart() -> None:
    f = false_positive_rate([row(None, None), row(-1.0, 1.0), row(0.0, 1.0)])
    assert (f.comparisons, f.without_interval, f.false_positives) == (2, 1, 0)  # 0 on the edge: spans
    assert "1 without an interval left out" in f.text()
    assert excludes_zero(row(None, None)) is None
    with pytest.raises(ValueError, match="no A/A comparison has an interval"):
        false_positive_rate([row(None, None)])


def test_sequential_decisions_are_judged_like_rows() -> None:
    rng = np.random.default_rng(2)
    rule = StoppingRule(2.0, rule="fixed-width-t")
    decisions = [rule.check_log_ratios(rng.normal(0, 0.02, 15)) for _ in range(200)]
    f = false_positive_rate(decisions)
    assert f.comparisons == 200 and 0.0 <= f.rate <= 0.12  # fixed n = 15, iid: nominal 5%
