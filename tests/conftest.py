"""Shared fixtures: TPC-H data generated once per test session."""

from __future__ import annotations

import pytest

from tdebench.workloads.tpch.datagen import ensure_data


@pytest.fixture(scope="session")
def tpch_sf001(tmp_path_factory):
    """(directory, facts) of TPC-H SF 0.01 data, generated into the session's temp dir."""
    return ensure_data(0.01, tmp_path_factory.mktemp("tpch-data"))
