"""Stream query orders (TPC-H Appendix A) and the minimum number of streams."""

from __future__ import annotations

import pytest

from tdebench.workloads.tpch.streams import STREAM_ORDERS, min_streams, stream_order


def test_every_row_is_a_permutation_of_the_22_queries():
    assert len(STREAM_ORDERS) == 41
    for order in STREAM_ORDERS:
        assert sorted(order) == list(range(1, 23))


def test_power_stream_and_first_throughput_streams_match_the_spec():
    assert stream_order(0) == (14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12)
    assert stream_order(1)[:4] == (21, 3, 18, 5)
    assert stream_order(2)[:4] == (6, 17, 14, 16)
    assert stream_order(41) == stream_order(0) and stream_order(43) == stream_order(2)
    with pytest.raises(ValueError):
        stream_order(-1)


@pytest.mark.parametrize("sf, streams", [(0.01, 2), (1, 2), (10, 3), (30, 4), (100, 5), (300, 6), (1000, 7)])
def test_min_streams(sf, streams):
    assert min_streams(sf) == streams
