"""One phrase per overhead, worded for what the estimate is."""

from __future__ import annotations

import pytest

from tdebench.stats.overhead import Overhead
from tdebench.stats.wording import (
    direction, is_worse, metric_kind, metric_label, overhead_phrase, phrase_for,
)


def test_times_are_slower_or_faster_with_the_interval_in_the_same_sense() -> None:
    assert overhead_phrase(12.34, 10.1, 14.6, n=10) == "12.3% slower (95% CI 10.1% to 14.6%, n = 10)"
    assert overhead_phrase(-4.1, -6.2, -2.0, n=8) == "4.1% faster (95% CI 2.0% to 6.2%, n = 8)"


def test_throughput_up_is_higher_never_an_overhead() -> None:
    text = overhead_phrase(5.7, 2.0, 9.6, kind="throughput", label="TPM", n=8)
    assert text == "TPM 5.7% higher (95% CI 2.0% to 9.6%, n = 8)"
    assert "overhead" not in text and "slower" not in text
    assert overhead_phrase(-3.2, -5.0, -1.1, kind="throughput", label="TPM") == \
        "TPM 3.2% lower (95% CI 1.1% to 5.0%)"


def test_unresolved_says_so_with_signed_numbers() -> None:
    assert overhead_phrase(0.4, -0.6, 1.4, n=30) == \
        "no difference resolved: +0.4% (95% CI -0.6% to +1.4%, n = 30)"
    assert overhead_phrase(5.7, -29.5, 58.7, kind="throughput", label="TPM", n=2) == \
        "no difference resolved in TPM: +5.7% (95% CI -29.5% to +58.7%, n = 2)"
    assert overhead_phrase(0.6, 0.0, 1.2).startswith("no difference resolved")  # 0 on the edge
    assert overhead_phrase(-0.04, -1.0, 0.9).startswith("no difference resolved: 0.0% ")


def test_no_interval_claims_no_direction() -> None:
    text = overhead_phrase(5.7, None, None, kind="throughput", label="TPM", n=1)
    assert text == "TPM +5.7%, no interval at n = 1 (at least 2 trials per config are needed)"
    assert overhead_phrase(float("nan"), None, None).startswith("no estimate")


def test_confidence_and_digits_are_shown_as_given() -> None:
    assert overhead_phrase(1.234, 0.512, 1.987, confidence=0.9, digits=2) == \
        "1.23% slower (90% CI 0.51% to 1.99%)"


def test_kind_and_label_follow_the_metric() -> None:
    assert metric_kind("elapsed", "s") == "time"
    assert metric_kind("tpm") == metric_kind("qphh_at_size") == metric_kind("x", "tps") == "throughput"
    assert metric_kind("server_cpu", "s") == metric_kind("bytes", "bytes") == "amount"
    assert (metric_label("tpm"), metric_label("qphh_at_size"), metric_label("server_cpu")) == \
        ("TPM", "QphH@Size", "server CPU time")
    assert overhead_phrase(8.0, 6.0, 10.0, kind="amount", label="server CPU time") == \
        "server CPU time 8.0% higher (95% CI 6.0% to 10.0%)"


@pytest.mark.parametrize(("lo", "hi", "kind", "worse"), [
    (1, 2, "time", True), (-2, -1, "time", False), (1, 2, "throughput", False),
    (-2, -1, "throughput", True), (-1, 1, "time", None), (None, None, "amount", None)])
def test_worse_depends_on_the_metric(lo, hi, kind, worse) -> None:
    assert is_worse(lo, hi, kind) is worse
    assert direction(lo, hi) in ("up", "down", "none")


def test_phrase_for_an_overhead_row() -> None:
    row = Overhead("mariadb", "mariadb-tde", "tpcc", "vu2", 8, 1000.0, 1057.0, 5.7, 2.0, 9.6, 0.01,
                   test="tpcc", metric="tpm", unit="tpm")
    assert phrase_for(row) == "TPM 5.7% higher (95% CI 2.0% to 9.6%, n = 8)"
    power = Overhead("sqlite", "sqlite-sqlcipher", "tpch", "total", 5, 10.0, 11.2, 12.0, 10.1,
                     14.6, 0.001, test="power", metric="elapsed", unit="s")
    assert phrase_for(power) == "12.0% slower (95% CI 10.1% to 14.6%, n = 5)"
