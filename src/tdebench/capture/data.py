"""Every captured table as ``data/<table>.csv`` in the format ``--workload sql`` reads: a header, comma-separated
values quoted where needed, ``\\N`` for NULL (workload.toml says ``null = "\\\\N"``), streamed from the source in
batches (a server-side cursor: never a whole table in memory)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

from tdebench.capture.catalog import Table
from tdebench.capture.source import Source

NULL = "\\N"
BATCH = 2000


@dataclass
class Dumped:
    table: str
    rows: int
    bytes: int
    cut: bool  # --max-rows left rows out
    skipped: int = 0  # rows a captured INSERT adds (left out so that it finds the table as before it ran)


def text(value: Any) -> str:
    """One value as the sql workload reads it."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def _cursor(src: Source) -> Any:
    """A cursor that streams (server side) rather than buffering the whole result."""
    if src.kind.cursor == "unbuffered":
        import pymysql.cursors

        return src.raw.cursor(pymysql.cursors.SSCursor)
    if src.kind.cursor == "named":
        return src.raw.cursor(name="tdebench_capture")
    return src.raw.cursor()


def select_sql(src: Source, table: Table, max_rows: int | None) -> str:
    quote = src.kind.ident
    order = f" ORDER BY {', '.join(quote(c) for c in table.primary_key)}" if table.primary_key else ""
    limit = f" LIMIT {max_rows + 1}" if max_rows is not None else ""
    return f"SELECT {', '.join(quote(c.name) for c in table.columns)} FROM {quote(table.name)}{order}{limit}"


def dump(src: Source, table: Table, folder: Path, max_rows: int | None,
         skip: set[tuple[str, ...]] = frozenset()) -> Dumped:  # type: ignore[assignment]
    """``folder/<table>.csv``, at most ``max_rows`` rows (by primary key order), without the rows whose primary
    key is in ``skip``."""
    path = folder / f"{table.name}.csv"
    rows, cut, skipped = 0, False, 0
    key_at = [[c.name for c in table.columns].index(k) for k in table.primary_key] if skip else []
    if src.kind.begin_read_only:  # PostgreSQL's connection is read-only itself
        src.raw.cursor().execute(src.kind.begin_read_only)
    cur = _cursor(src)
    try:
        cur.execute(select_sql(src, table, max_rows))
        with open(path, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow([c.name for c in table.columns])
            while True:
                batch = cur.fetchmany(BATCH)
                if not batch:
                    break
                for row in batch:
                    if max_rows is not None and rows >= max_rows:
                        cut = True
                        break
                    cells = [text(v) for v in row]
                    if key_at and tuple(cells[i] for i in key_at) in skip:
                        skipped += 1
                        continue
                    writer.writerow(cells)
                    rows += 1
                if cut:
                    break
    finally:
        cur.close()
        if src.kind.server:
            src.raw.rollback()
    return Dumped(table.name, rows, path.stat().st_size, cut, skipped)
