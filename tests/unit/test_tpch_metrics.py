"""TPC-H official metrics: rounding, clamping and the three formulas, checked against hand computations."""

import math

import pytest

from tdebench.workloads.tpch.metrics import (
    power_at_size,
    power_intervals,
    qphh_at_size,
    round_interval,
    throughput_at_size,
)


def queries(seconds: float, **overrides: float) -> dict[int, float]:
    times = {q: seconds for q in range(1, 23)}
    times.update({int(k[1:]): v for k, v in overrides.items()})
    return times


@pytest.mark.parametrize(("raw", "reported"), [
    (0.0, 0.1), (0.01, 0.1), (0.049, 0.1),  # under 0.05 s counts as 0.1 s
    (0.05, 0.1), (0.149, 0.1), (0.15, 0.2), (0.25, 0.3),  # to 0.1 s, half up (not banker's, not binary)
    (1.04, 1.0), (1.05, 1.1), (12.345, 12.3), (59.96, 60.0), (3600.0, 3600.0),
])
def test_round_interval(raw, reported):
    assert round_interval(raw) == reported


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "1.0", None])
def test_round_interval_rejects_nonsense(bad):
    with pytest.raises(ValueError):
        round_interval(bad)


def test_power_all_one_second_is_3600_sf():
    assert power_at_size(queries(1.0), 1.0, 1.0, 1) == pytest.approx(3600.0)
    assert power_at_size(queries(2.0), 2.0, 2.0, 10) == pytest.approx(18000.0)  # 36000 / 2


def test_power_counts_tiny_intervals_as_a_tenth():
    # every interval 0.01 s -> 0.1 s: 3600 * 0.01 / 0.1 = 360
    assert power_at_size(queries(0.01), 0.01, 0.01, 0.01) == pytest.approx(360.0)


def test_power_rounds_each_interval_before_the_mean():
    # 1.04 -> 1.0 and 1.96 -> 2.0: geometric mean of 11 x 1.0, 11 x 2.0, RF 1.0 and 2.0 is 2^(12/24)
    times = {q: (1.04 if q <= 11 else 1.96) for q in range(1, 23)}
    assert power_at_size(times, 1.04, 1.96, 1) == pytest.approx(3600 / math.sqrt(2))


def test_power_clamps_queries_below_a_thousandth_of_the_longest():
    # Q1 200 s, the other 21 queries 0.01 s (-> 0.1 s); 200/0.1 > 1000 so they count as 200/1000 = 0.2 s
    times = queries(0.01, q1=200.0)
    intervals, rf1, rf2 = power_intervals(times, 1.0, 1.0)
    assert intervals[1] == 200.0
    assert all(intervals[q] == pytest.approx(0.2) for q in range(2, 23))
    assert (rf1, rf2) == (1.0, 1.0)
    expected = 3600 * 1 / (200 * 0.2 ** 21 * 1.0 * 1.0) ** (1 / 24)
    assert power_at_size(times, 1.0, 1.0, 1) == pytest.approx(expected)
    assert power_at_size(times, 1.0, 1.0, 1) == pytest.approx(11803.5, abs=0.5)
    assert times == queries(0.01, q1=200.0)  # raw timings untouched


def test_power_does_not_clamp_at_exactly_1000():
    intervals, _, _ = power_intervals(queries(0.1, q1=100.0), 1.0, 1.0)
    assert intervals[2] == 0.1


def test_power_does_not_clamp_refresh_functions():
    intervals, rf1, rf2 = power_intervals(queries(0.01, q1=500.0), 0.01, 0.2)
    assert intervals[2] == 0.5 and (rf1, rf2) == (0.1, 0.2)


def test_power_needs_exactly_22_queries():
    times = queries(1.0)
    del times[22]
    with pytest.raises(ValueError, match="missing: \\[22\\]"):
        power_at_size(times, 1.0, 1.0, 1)
    with pytest.raises(ValueError, match="unexpected: \\[23\\]"):
        power_at_size({**queries(1.0), 23: 1.0}, 1.0, 1.0, 1)
    with pytest.raises(ValueError):
        power_at_size(queries(1.0), -1.0, 1.0, 1)
    with pytest.raises(ValueError):
        power_at_size(queries(1.0), 1.0, 1.0, 0)


def test_throughput():
    # 2 streams, Ts 100.04 s -> 100.0 s: 2 * 22 * 3600 / 100 * SF
    assert throughput_at_size(2, 100.04, 1) == pytest.approx(1584.0)
    assert throughput_at_size(2, 100.04, 0.1) == pytest.approx(158.4)
    assert throughput_at_size(3, 0.01, 1) == pytest.approx(3 * 22 * 3600 / 0.1)  # Ts floored at 0.1 s
    with pytest.raises(ValueError):
        throughput_at_size(0, 100.0, 1)


def test_qphh_is_the_geometric_mean():
    assert qphh_at_size(3600.0, 1584.0) == pytest.approx(math.sqrt(3600.0 * 1584.0))
    assert qphh_at_size(100.0, 400.0) == pytest.approx(200.0)
    with pytest.raises(ValueError):
        qphh_at_size(0.0, 1.0)


def test_metrics_return_floats():
    for value in (power_at_size(queries(1.0), 1.0, 1.0, 1), throughput_at_size(2, 10.0, 1),
                  qphh_at_size(1, 4), round_interval(3)):
        assert type(value) is float
