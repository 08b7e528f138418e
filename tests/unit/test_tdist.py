"""tdebench.stats.tdist gives what scipy.stats gives, without importing it in every run."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from tdebench.stats import tdist


@pytest.mark.parametrize("df", [1, 2, 3.7, 9, 59, 400])
def test_quantiles_and_tails_equal_scipy_stats(df):
    for q in (0.025, 0.5, 0.8, 0.975, 0.995):
        assert float(tdist.t_ppf(q, df)) == pytest.approx(float(stats.t.ppf(q, df)), rel=1e-10)
    for x in (-3.0, 0.0, 0.4, 2.2, 9.0):
        assert float(tdist.t_sf(x, df)) == pytest.approx(float(stats.t.sf(x, df)), rel=1e-10, abs=1e-300)
    assert float(tdist.norm_ppf(0.975)) == pytest.approx(float(stats.norm.ppf(0.975)), rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_paired_and_welch_equal_scipy_tests(seed):
    rng = np.random.default_rng(seed)
    n, m = 3 + seed, 2 + 2 * seed
    base, other = rng.lognormal(0, 0.1, n), rng.lognormal(0.05, 0.2, n)
    ours, theirs = tdist.paired(other, base, 0.9), stats.ttest_rel(other, base)
    ci = theirs.confidence_interval(0.9)
    assert (ours.pvalue, ours.low, ours.high) == pytest.approx((theirs.pvalue, ci.low, ci.high), rel=1e-9)
    other = rng.lognormal(0.05, 0.3, m)
    ours, theirs = tdist.welch(other, base), stats.ttest_ind(other, base, equal_var=False)
    ci = theirs.confidence_interval(0.95)
    assert (ours.pvalue, ours.low, ours.high) == pytest.approx((theirs.pvalue, ci.low, ci.high), rel=1e-9)


def test_no_spread_gives_no_test():
    assert math.isnan(tdist.paired(np.ones(4), np.ones(4)).pvalue)
    assert math.isnan(tdist.welch(np.ones(3), np.ones(5)).pvalue)
    assert math.isnan(tdist.welch(np.ones(1), np.arange(5.0)).pvalue)


def test_a_run_does_not_import_scipy_stats():
    """The run path (CLI, orchestrator, statistics, report) leaves scipy.stats to the few analyses that need it."""
    code = ("import sys, tdebench.cli.app, tdebench.cli.run, tdebench.runner.orchestrator, tdebench.report.build; "
            "print('scipy.stats' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        == "False"
