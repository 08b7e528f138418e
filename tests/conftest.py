"""Shared fixtures: TPC-H and TPC-C data generated once per test session, into one data directory.

Both live under the same root, so a run given ``--data-dir <root>`` (``Path(tpch_sf001[0]).parent``) finds
either data set already generated instead of generating it again.
"""

from __future__ import annotations

import pytest

from tdebench.workloads.tpch.datagen import ensure_data


@pytest.fixture(scope="session")
def data_root(tmp_path_factory):
    """The session's data directory (what tests pass as ``--data-dir``)."""
    return tmp_path_factory.mktemp("tpch-data")


@pytest.fixture(scope="session")
def tpch_sf001(data_root):
    """(directory, facts) of TPC-H SF 0.01 data, generated into the session's data directory."""
    return ensure_data(0.01, data_root)


@pytest.fixture(scope="session")
def tpcc_w1(data_root):
    """(directory, facts) of the TPC-C population for 1 warehouse and the default seed (what a tpcc run
    with ``--warehouses 1 --data-dir <data_root>`` uses), generated into the session's data directory."""
    from tdebench.workloads.tpcc.datagen import ensure_data as ensure_tpcc
    from tdebench.workloads.tpcc.options import TpccOptions

    return ensure_tpcc(1, TpccOptions().seed, data_root)
