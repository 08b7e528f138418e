"""Simulation: a known +10% effect in lognormal noise; the 95% CI must cover it ~95% of the time.

The full comparison of methods is ``benchmarks/stats_coverage.py``; these tests pin the default
method at a few n and show that the bootstrap it replaced at small n would fail the same check.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from tdebench.stats import overhead_interval, welch_p
from tdebench.stats.interval import IntervalMethod

TRUE_EFFECT = 0.10
REPS = 200
SMALL_N_REPS = 1000  # the t-interval is cheap; 1000 runs give a standard error of 0.7 points


def draw(rng: np.random.Generator, n: int, block_sd: float) -> tuple[np.ndarray, np.ndarray]:
    """Plain and encrypted values of n blocks (machine drift shared within a block)."""
    block = np.exp(rng.normal(0.0, block_sd, n))
    plain = 2.0 * block * np.exp(rng.normal(0.0, 0.05, n))
    enc = 2.0 * (1 + TRUE_EFFECT) * block * np.exp(rng.normal(0.0, 0.05, n))
    return plain, enc


def coverage(n: int, paired: bool, method: IntervalMethod, *, block_sd: float, seed: int,
             reps: int = REPS) -> tuple[float, set[str]]:
    """Share of repetitions whose CI contains the true effect, and the methods that gave the CIs."""
    rng = np.random.default_rng(seed)
    hits, used = 0, set()
    for rep in range(reps):
        plain, enc = draw(rng, n, block_sd)
        iv = overhead_interval(plain, enc, paired=paired, method=method, seed=rep, n_resamples=1000)
        used.add(iv.ci_method)
        hits += iv.ci is not None and iv.ci[0] <= TRUE_EFFECT <= iv.ci[1]
    return hits / reps, used


@pytest.mark.parametrize(("n", "paired", "expected"), [
    (3, True, "t-log-paired"), (2, True, "t-log-paired"), (3, False, "welch-log"),
    (5, True, "t-log-paired"),
])
def test_default_interval_is_honest_at_small_n(n: int, paired: bool, expected: str) -> None:
    cov, used = coverage(n, paired, "auto", block_sd=0.03, seed=11, reps=SMALL_N_REPS)
    assert used == {expected}
    assert 0.90 <= cov <= 0.99, f"coverage {cov:.3f} at n={n} paired={paired}"


def test_the_old_bootstrap_fails_the_same_check_at_n3() -> None:
    # same data and seed as the default at n = 3 above: the percentile bootstrap covers ~75%
    cov, used = coverage(3, True, "percentile", block_sd=0.03, seed=11, reps=SMALL_N_REPS)
    assert used == {"bootstrap-percentile-paired"}
    assert not 0.90 <= cov <= 0.99, f"bootstrap coverage {cov:.3f} at n=3 paired"


@pytest.mark.parametrize(("n", "paired", "block_sd"), [
    (10, True, 0.0),
    (10, False, 0.0),
    (12, True, 0.03),
    (20, True, 0.03),
])
def test_default_bootstrap_from_ten_trials_covers(n: int, paired: bool, block_sd: float) -> None:
    start = time.perf_counter()
    cov, used = coverage(n, paired, "auto", block_sd=block_sd, seed=11)
    assert used == {"bootstrap-percentile-paired" if paired else "bootstrap-percentile"}
    assert 0.90 <= cov <= 0.99, f"coverage {cov:.3f} for n={n} paired={paired}"
    assert time.perf_counter() - start < 20


def test_default_p_rejects_a_real_effect_and_rarely_a_null() -> None:
    rng = np.random.default_rng(5)

    def p(effect: float) -> float:
        plain, enc = draw(rng, 10, 0.03)
        iv = overhead_interval(plain, enc * (1 + effect) / (1 + TRUE_EFFECT), paired=True,
                               n_resamples=100)
        assert iv.p_method == "t-log-paired"
        return iv.p_value

    false_pos = sum(p(0.0) < 0.05 for _ in range(REPS))
    power = sum(p(0.10) < 0.05 for _ in range(REPS))
    assert false_pos / REPS < 0.10
    assert power / REPS > 0.9


def test_welch_rejects_a_real_effect_and_rarely_a_null() -> None:
    rng = np.random.default_rng(5)
    false_pos = sum(welch_p(np.exp(rng.normal(0, 0.05, 10)), np.exp(rng.normal(0, 0.05, 10))) < 0.05
                    for _ in range(REPS))
    power = sum(welch_p(np.exp(rng.normal(0, 0.05, 10)),
                        1.1 * np.exp(rng.normal(0, 0.05, 10))) < 0.05 for _ in range(REPS))
    assert false_pos / REPS < 0.10
    assert power / REPS > 0.9
