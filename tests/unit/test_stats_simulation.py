"""Simulation: a known +10% effect in lognormal noise; the 95% CI must cover it ~95% of the time."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tdebench.stats import bootstrap_ratio_ci, welch_p

TRUE_EFFECT = 0.10
REPS = 200


def coverage(n: int, paired: bool, method: str, *, block_sd: float, seed: int) -> float:
    """Share of repetitions whose CI contains the true effect."""
    rng = np.random.default_rng(seed)
    hits = 0
    for rep in range(REPS):
        block = np.exp(rng.normal(0.0, block_sd, n))  # machine drift shared within a block
        plain = 2.0 * block * np.exp(rng.normal(0.0, 0.05, n))
        enc = 2.0 * (1 + TRUE_EFFECT) * block * np.exp(rng.normal(0.0, 0.05, n))
        ci = bootstrap_ratio_ci(plain, enc, paired=paired, seed=rep, n_resamples=1000,
                                method=method)  # type: ignore[arg-type]
        hits += ci is not None and ci[0] <= TRUE_EFFECT <= ci[1]
    return hits / REPS


@pytest.mark.parametrize(("n", "paired", "method", "block_sd"), [
    (10, True, "percentile", 0.0),
    (10, False, "percentile", 0.0),
    (12, True, "percentile", 0.03),
    (20, True, "bca", 0.03),
])
def test_ci_covers_a_known_effect(n: int, paired: bool, method: str, block_sd: float) -> None:
    start = time.perf_counter()
    cov = coverage(n, paired, method, block_sd=block_sd, seed=11)
    assert 0.90 <= cov <= 0.99, f"coverage {cov:.3f} for n={n} paired={paired} {method}"
    assert time.perf_counter() - start < 20


def test_welch_rejects_a_real_effect_and_rarely_a_null() -> None:
    rng = np.random.default_rng(5)
    false_pos = sum(welch_p(np.exp(rng.normal(0, 0.05, 10)), np.exp(rng.normal(0, 0.05, 10))) < 0.05
                    for _ in range(REPS))
    power = sum(welch_p(np.exp(rng.normal(0, 0.05, 10)),
                        1.1 * np.exp(rng.normal(0, 0.05, 10))) < 0.05 for _ in range(REPS))
    assert false_pos / REPS < 0.10
    assert power / REPS > 0.9
