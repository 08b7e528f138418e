"""The slice arithmetic of the interleaved OLTP schedules (workloads/slicing.py)."""

from __future__ import annotations

import pytest

from tdebench.workloads.slicing import (WARMUP_SECONDS, check_slice, precision_series, rounds_for,
                                        slice_seconds, warmup_rounds_for)


def test_rounds_give_every_config_its_duration():
    assert rounds_for(1.0, 60.0) == 60
    assert rounds_for(None, 60.0, default=1.0) == 60
    assert rounds_for(7.0, 60.0) == 9  # the last slice is whole: never less measured time than asked
    assert rounds_for(None, 3.0) == 1 and slice_seconds(None, 3.0) == 3.0  # the default slice fits the step


def test_a_warm_up_block_is_shorter_than_a_measured_one():
    assert warmup_rounds_for(1.0, 60.0) == int(WARMUP_SECONDS) < rounds_for(1.0, 60.0)
    assert warmup_rounds_for(None, 60.0, default=5.0) == int(WARMUP_SECONDS / 5)
    # never more than a measured block, never none
    assert warmup_rounds_for(1.0, 10.0) == rounds_for(1.0, 10.0) == 10
    assert warmup_rounds_for(10.0, 600.0) >= 1


def test_too_short_a_slice_is_refused_with_the_fix():
    with pytest.raises(ValueError, match="use e.g. --slice"):
        check_slice(0.5)


def test_an_oltp_workload_watches_its_headline_cpu_per_transaction_or_a_latency_percentile():
    headline = ("tpcc", "vu8", "tpm")
    watched = {t: precision_series(t, headline, "tpcc", "vu8", "vu8.new_order") for t in ("headline", "cpu", "p95")}
    assert watched == {"headline": headline, "cpu": ("tpcc", "vu8", "server_cpu_per_txn"),
                       "p95": ("tpcc", "vu8.new_order", "latency_p95")}
    assert precision_series("p90", headline, "tpcc", "vu8", "vu8.new_order") is None
    assert precision_series("power", headline, "tpcc", "vu8", "vu8.new_order") is None
