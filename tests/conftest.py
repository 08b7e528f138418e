"""Shared fixtures: TPC-H and TPC-C data generated once per test session, into one data directory.

Both live under the same root, so a run given ``--data-dir <root>`` (``Path(tpch_sf001[0]).parent``) finds
either data set already generated instead of generating it again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tdebench.workloads.tpch.datagen import ensure_data


def pytest_addoption(parser):
    parser.addoption("--heavy", action="store_true",
                     help="also run the tests marked heavy: long scenarios left out of the default suite")


def pytest_configure(config):
    """pytest-xdist workers export COLUMNS=80 and LINES=24: the runs tests start must see the environment a serial
    run gives them (rich sizes its output by these)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ.pop("COLUMNS", None)
        os.environ.pop("LINES", None)


@pytest.fixture(scope="session")
def data_root(tmp_path_factory):
    """The session's data directory (what tests pass as ``--data-dir``). Under pytest-xdist every worker is a
    session of its own: they share one directory (next to their temp dirs), so data are generated once."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = tmp_path_factory.getbasetemp().parent / "tpch-data"
        shared.mkdir(exist_ok=True)
        return shared
    return tmp_path_factory.mktemp("tpch-data")


@pytest.fixture(scope="session", autouse=True)
def bootstrap_templates(tmp_path_factory) -> Iterator[None]:
    """Private MariaDB and PostgreSQL instances copy their bootstrap templates (tdebench.engines.toolkit.templates)
    from a directory of the session, shared by the pytest-xdist workers, never from the user's cache; a
    ``TDEBENCH_TEMPLATE_DIR`` given to pytest (``off``: bootstrap every instance) is kept."""
    from tdebench.engines.toolkit.templates import ENV

    if ENV in os.environ:
        yield
        return
    base = tmp_path_factory.getbasetemp()
    os.environ[ENV] = str((base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "templates")
    try:
        yield
    finally:
        os.environ.pop(ENV, None)


@contextlib.contextmanager
def _generating(root: Path, what: str) -> Iterator[None]:
    """One worker at a time generates ``what`` into ``root`` (the others wait, then find it there)."""
    with open(root / f".{what}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def tpch_sf001(data_root):
    """(directory, facts) of TPC-H SF 0.01 data, generated into the session's data directory."""
    with _generating(data_root, "tpch-sf0.01"):
        return ensure_data(0.01, data_root)


@pytest.fixture(scope="session")
def tpcc_w1(data_root):
    """(directory, facts) of the TPC-C population for 1 warehouse and the default seed (what a tpcc run
    with ``--warehouses 1 --data-dir <data_root>`` uses), generated into the session's data directory."""
    from tdebench.workloads.tpcc.datagen import ensure_data as ensure_tpcc
    from tdebench.workloads.tpcc.options import TpccOptions

    with _generating(data_root, "tpcc-w1"):
        return ensure_tpcc(1, TpccOptions().seed, data_root)


def _slow_seconds(item: pytest.Item) -> tuple[float, float]:
    """(seconds of ``slow`` marks on the test itself, the largest of those on its class or module)."""
    own, whole = 0.0, 0.0
    for node, mark in item.iter_markers_with_node("slow"):
        seconds = float(mark.kwargs.get("seconds", 30))
        if node is item:
            own += seconds
        else:
            whole = max(whole, seconds)
    return own, whole


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without ``--heavy`` the tests marked heavy are deselected (reported as such). Under pytest-xdist (scripts/test.sh: ``--dist loadscope --no-loadscope-reorder``) a class, else a module,
    is a unit of work that stays on one worker with its fixtures; the units are handed out in the order of the
    items. The longest by their ``slow`` marks go first (a long unit started last would be the run's tail); the
    others keep the files' order, as does a serial run."""
    if not config.getoption("--heavy"):
        heavy = [item for item in items if item.get_closest_marker("heavy")]
        if heavy:
            config.hook.pytest_deselected(items=heavy)
            items[:] = [item for item in items if not item.get_closest_marker("heavy")]
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    tests: dict[str, float] = {}
    whole: dict[str, float] = {}
    for item in items:
        unit = item.nodeid.rsplit("::", 1)[0]  # how loadscope groups
        own, marked = _slow_seconds(item)
        tests[unit] = tests.get(unit, 0.0) + own
        whole[unit] = max(whole.get(unit, 0.0), marked)
    items.sort(key=lambda item: -(tests[item.nodeid.rsplit("::", 1)[0]] + whole[item.nodeid.rsplit("::", 1)[0]]))
