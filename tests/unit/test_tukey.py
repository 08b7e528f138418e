"""The tabled Tukey HSD against scipy's own: p-values within the stated error, intervals identical."""

import numpy as np
import pytest
from scipy import stats

from tdebench.stats import tukey


@pytest.mark.parametrize(("k", "df"), [(3, 2.0), (3, 6.0), (6, 18.0), (12, 36.0), (4, 100.0)])
def test_the_table_matches_scipys_studentized_range(k, df):
    q = np.sort(np.random.default_rng(k).uniform(0, 12, 40))
    exact = stats.studentized_range.sf(q, k, df)
    tabled = tukey._table(k, df).sf(q)
    assert np.abs(tabled - exact).max() < 2e-4
    big = exact > 1e-5
    assert big.sum() > 10 and (np.abs(tabled - exact)[big] / exact[big]).max() < 1e-3


def test_tukey_hsd_equals_scipys_after_the_table_is_built():
    rng = np.random.default_rng(5)
    groups = [rng.normal(0.4 * i, 1.0, 4) for i in range(6)]
    ref = stats.tukey_hsd(*groups)
    ci = ref.confidence_interval(0.95)
    for _ in range(tukey.EXACT_CALLS + 1):  # the last call reads the table
        ours = tukey.tukey_hsd(groups)
    np.testing.assert_allclose(ours.statistic, ref.statistic, rtol=1e-12)
    np.testing.assert_allclose(ours.low, ci.low, rtol=1e-9)
    np.testing.assert_allclose(ours.high, ci.high, rtol=1e-9)
    assert np.abs(ours.pvalue - ref.pvalue).max() < 2e-4


def test_each_pair_is_evaluated_once(monkeypatch):
    """The studentized range is asked about each pair once, not about both orders and the diagonal: an exact
    value is a numerical double integral (k = 12: 66 values a step, not 144)."""
    asked: list[int] = []

    class Counting:
        ppf = staticmethod(stats.studentized_range.ppf)  # the critical q, not a p-value

        @staticmethod
        def sf(q, k, df):
            asked.append(np.size(q))
            return stats.studentized_range.sf(q, k, df)

    monkeypatch.setattr(tukey, "_range_dist", lambda: Counting)
    monkeypatch.setattr(tukey, "_calls", {})
    rng = np.random.default_rng(8)
    groups = [rng.normal(0.3 * i, 1.0, 3) for i in range(7)]
    ours = tukey.tukey_hsd(groups)  # the first call of its (k, df): exact
    assert asked == [7 * 6 // 2]
    ref = stats.tukey_hsd(*groups)
    np.testing.assert_allclose(ours.pvalue, ref.pvalue, rtol=1e-9, atol=1e-12)
    assert np.array_equal(ours.pvalue, ours.pvalue.T) and (np.diag(ours.pvalue) == 1).all()
