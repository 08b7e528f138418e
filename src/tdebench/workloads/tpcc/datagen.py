"""The initial TPC-C population (clause 4.3.3.1) as ``|``-separated ``.tbl`` files, generated once and cached.

One file per table and warehouse (``stock.w00001.tbl``; ``item.tbl`` once), each line ending in ``|`` like
TPC-H's, so every engine's ``bulk_load`` reads them. Values come from a RNG seeded by (seed, warehouse):
the same seed gives byte-identical files on every machine, and so identical data in every twin.
Warehouses are generated in parallel processes. A ``manifest.json`` written last marks a complete set.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tdebench.engines.toolkit.process import own_children
from tdebench.errors import UsageError
from tdebench.lifeline import forked_child
from tdebench.workloads.tpcc import schema
from tdebench.workloads.tpcc.rand import (CUSTOMERS, DISTRICTS, ITEMS, NEW_ORDERS_FROM, ORDERS, TpccRandom,
                                          last_name)
from tdebench.workloads.tpch.datagen import default_cache_root, publish


FORMAT_VERSION = 1
LOAD_TIME = "2024-01-01 00:00:00"  # C_SINCE, O_ENTRY_D, H_DATE of the initial population (fixed: identical data)
_MANIFEST = "manifest.json"
Row = tuple[Any, ...]


def data_dir_for(warehouses: int, seed: int, root: Path | None) -> Path:
    """Where the data for ``warehouses`` and ``seed`` lives (``--data-dir`` or the user cache)."""
    base = root if root is not None else default_cache_root().parent / "tpcc"
    return base / f"tpcc-w{warehouses}-seed{seed}-v{FORMAT_VERSION}"


def file_name(table: str, warehouse: int | None) -> str:
    return f"{table}.tbl" if warehouse is None else f"{table}.w{warehouse:05d}.tbl"


def files_of(table: str, warehouses: int) -> list[str]:
    """The files holding ``table``, in load order."""
    if table == "item":
        return [file_name("item", None)]
    return [file_name(table, w) for w in range(1, warehouses + 1)]


# generators ---------------------------------------------------------------------------------------
def item_rows(seed: int) -> Iterator[Row]:
    r = TpccRandom(seed * 7919 + 1)
    for i in range(1, ITEMS + 1):
        yield (i, r.uniform_int(1, 10000), r.astring(14, 24), r.money(1, 100), r.data_with_original(26, 50))


def _address(r: TpccRandom) -> Row:
    return (r.astring(10, 20), r.astring(10, 20), r.astring(10, 20), r.state(), r.zip_code())


def warehouse_tables(r: TpccRandom, w: int) -> dict[str, Iterator[Row]]:
    """Row generators of every per-warehouse table, in file order."""
    return {
        "warehouse": iter([(w, r.astring(6, 10), *_address(r), r.rate(0.2), "300000.00")]),
        "district": iter([(w, d, r.astring(6, 10), *_address(r), r.rate(0.2), "30000.00", ORDERS + 1)
                          for d in range(1, DISTRICTS + 1)]),
        "customer": _customers(r, w),
        "history": ((c, d, w, d, w, LOAD_TIME, "10.00", r.astring(12, 24))
                    for d in range(1, DISTRICTS + 1) for c in range(1, CUSTOMERS + 1)),
        "stock": ((w, i, r.uniform_int(10, 100), *(r.astring(24, 24) for _ in range(10)), 0, 0, 0,
                   r.data_with_original(26, 50)) for i in range(1, ITEMS + 1)),
    }


def _customers(r: TpccRandom, w: int) -> Iterator[Row]:
    for d in range(1, DISTRICTS + 1):
        for c in range(1, CUSTOMERS + 1):
            last = last_name(c - 1 if c <= 1000 else r.nurand(255, 0, 999, r.c_last))
            credit = "BC" if r.uniform_int(1, 10) == 1 else "GC"
            yield (w, d, c, r.astring(8, 16), "OE", last, *_address(r), r.nstring(16, 16), LOAD_TIME, credit,
                   "50000.00", r.rate(0.5), "-10.00", "10.00", 1, 0, r.astring(300, 500))


def order_tables(r: TpccRandom, w: int) -> tuple[list[Row], list[Row], list[Row]]:
    """(orders, order_line, new_order) rows of one warehouse."""
    orders, lines, new_orders = [], [], []
    for d in range(1, DISTRICTS + 1):
        for o, c in enumerate(r.permutation(CUSTOMERS), start=1):
            delivered = o < NEW_ORDERS_FROM
            count = r.uniform_int(5, 15)
            carrier = r.uniform_int(1, 10) if delivered else schema.UNDELIVERED_CARRIER
            orders.append((w, d, o, c, LOAD_TIME, carrier, count, 1))
            for n in range(1, count + 1):
                lines.append((w, d, o, n, r.uniform_int(1, ITEMS), w,
                              LOAD_TIME if delivered else schema.UNDELIVERED_DATE, 5,
                              "0.00" if delivered else r.money(0.01, 9999.99), r.astring(24, 24)))
            if not delivered:
                new_orders.append((w, d, o))
    return orders, lines, new_orders


# files --------------------------------------------------------------------------------------------
def write_rows(path: Path, rows: Iterator[Row] | list[Row]) -> int:
    """Write rows as ``a|b|c|`` lines; returns the row count."""
    count = 0
    buffer: list[str] = []
    with open(path, "w", encoding="ascii", newline="\n") as handle:
        for row in rows:
            buffer.append("|".join(map(str, row)) + "|\n")
            if len(buffer) >= 20_000:
                handle.writelines(buffer)
                count += len(buffer)
                buffer.clear()
        handle.writelines(buffer)
        count += len(buffer)
    return count


def generate_part(target: Path, seed: int, warehouse: int | None) -> dict[str, int]:
    """Write the item file (``warehouse`` None) or every file of one warehouse; rows per file."""
    if warehouse is None:
        return {file_name("item", None): write_rows(target / file_name("item", None), item_rows(seed))}
    r = TpccRandom(f"{seed}-w{warehouse}")
    counts = {file_name(t, warehouse): write_rows(target / file_name(t, warehouse), rows)
              for t, rows in warehouse_tables(r, warehouse).items()}
    for t, rows in zip(("orders", "order_line", "new_order"), order_tables(r, warehouse)):
        counts[file_name(t, warehouse)] = write_rows(target / file_name(t, warehouse), rows)
    return counts


def _generate_part_args(args: tuple[str, int, int | None]) -> dict[str, int]:
    return generate_part(Path(args[0]), args[1], args[2])


def _generate_all(staging: Path, warehouses: int, seed: int, workers: int) -> dict[str, int]:
    parts: list[int | None] = [None, *range(1, warehouses + 1)]
    jobs = [(str(staging), seed, w) for w in parts]
    if workers <= 1:
        results = [_generate_part_args(j) for j in jobs]
    else:
        with multiprocessing.get_context("fork").Pool(workers, initializer=forked_child) as pool:
            own_children()
            results = pool.map(_generate_part_args, jobs, chunksize=1)
    counts: dict[str, int] = {}
    for part in results:
        counts.update(part)
    return counts


def ensure_data(warehouses: int, seed: int, root: Path | None = None, workers: int = 0,
                progress: Callable[[str], None] | None = None) -> tuple[Path, dict[str, Any]]:
    """Directory with the population for ``warehouses`` and its facts; generates it if missing."""
    target = data_dir_for(warehouses, seed, root)
    manifest = target / _MANIFEST
    if manifest.is_file():
        facts = json.loads(manifest.read_text())
        if all((target / f).is_file() for t in schema.TABLE_NAMES for f in files_of(t, warehouses)):
            return target, facts
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    except OSError as exc:
        raise UsageError(f"cannot write the TPC-C data directory {target.parent}: {exc.strerror}",
                         "pass --data-dir with a writable directory") from exc
    workers = workers or min(warehouses + 1, os.cpu_count() or 1)
    try:
        if progress:
            progress(f"generating TPC-C data for {warehouses} warehouse(s) with {workers} process(es)")
        counts = _generate_all(staging, warehouses, seed, workers)
        rows = {t: sum(counts[f] for f in files_of(t, warehouses)) for t in schema.TABLE_NAMES}
        facts = {"generator": f"tdebench tpcc datagen v{FORMAT_VERSION}", "warehouses": warehouses, "seed": seed,
                 "rows": rows, "bytes": sum(p.stat().st_size for p in staging.glob("*.tbl"))}
        publish(staging, target, facts)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target, facts
