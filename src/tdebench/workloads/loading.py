"""What every workload's load does alike: tables bulk-loaded one by one, each timed, and timed steps after them."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tdebench.api.engine import Connection, Instance
from tdebench.api.events import RunListener
from tdebench.api.tables import TableSpec
from tdebench.api.trial import ConfigState, Recorder

OnTable = Callable[[str, int, float], None]


@dataclass
class TableLoads:
    """Rows and seconds per table, in load order."""

    tables: dict[str, tuple[int, float]] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(rows for rows, _ in self.tables.values())


@contextmanager
def shown_load(state: ConfigState, rec: Recorder, ui: RunListener, tables: int,
               input_bytes: Callable[[str], int] | None = None) -> Iterator[OnTable]:
    """The load of ``tables`` tables shown as a task, the ``on_table`` it yields recording each table's seconds
    and rows (and its input's bytes, given ``input_bytes``)."""
    key = f"load-{state.label}"
    ui.task_started(key, f"load {state.label}", tables)

    def on_table(table: str, rows: int, seconds: float) -> None:
        ui.task_advanced(key, 1, f"load {state.label}: {table}")
        rec.add("load", table, "elapsed", seconds, "s")
        rec.add("load", table, "rows", rows, "rows")
        if input_bytes is not None:
            rec.add("load", table, "input_bytes", input_bytes(table), "bytes")

    try:
        yield on_table
    finally:
        ui.task_finished(key)


def bulk_load_tables(instance: Instance, conn: Connection, files: Iterable[tuple[TableSpec, Sequence[Path]]],
                     into: TableLoads, on_table: OnTable | None = None) -> None:
    """Bulk-load each table from its data files, recording rows and seconds in ``into`` (and telling
    ``on_table``)."""
    for spec, paths in files:
        t0 = time.perf_counter()
        rows = sum(instance.bulk_load(conn, spec, path) for path in paths)
        seconds = time.perf_counter() - t0
        into.tables[spec.name] = (rows, seconds)
        if on_table:
            on_table(spec.name, rows, seconds)


def timed(step: Callable[[], object]) -> float:
    """Seconds ``step`` took."""
    t0 = time.perf_counter()
    step()
    return time.perf_counter() - t0
