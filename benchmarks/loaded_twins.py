"""MariaDB twins loaded with the same TPC-H data, for the benchmarks that compare two of them
(benchmarks/twin_instances.py, benchmarks/twin_plans.py). Imported by them, not run on its own."""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tdebench.api.engine import Config, Instance  # noqa: E402
from tdebench.engines import get_engine  # noqa: E402
from tdebench.workloads.tpch.datagen import ensure_data  # noqa: E402
from tdebench.workloads.tpch.loader import load_tpch  # noqa: E402


@contextlib.contextmanager
def loaded_twins(configs: list[Config], sf: float, prefix: str, label: str) -> Iterator[list[Instance]]:
    """MariaDB instances of ``configs`` in a new directory under /var/tmp (named ``prefix``...), started and loaded
    with TPC-H at ``sf``; a line says how long that took (``label``: what was loaded). At the end every instance
    is destroyed and the directory removed."""
    engine = get_engine("mariadb")
    data, _ = ensure_data(sf)
    work = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    twins: list[Instance] = []
    started = time.monotonic()
    try:
        for config in configs:
            twin = engine.create_instance(config, work, "tpch")
            twins.append(twin)
            twin.start()
            load_tpch(twin, twin.dialect, data)
        print(f"MariaDB {engine.version()}, SF {sf}, {label} loaded in {time.monotonic() - started:.0f} s")
        yield twins
    finally:
        for twin in twins:
            twin.destroy()
        with contextlib.suppress(OSError):
            work.rmdir()
