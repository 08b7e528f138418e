"""Bulk load of a tdebench data file: parsed rows inserted with ``executemany`` in one transaction."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tdebench.api.engine import Connection
from tdebench.api.tables import ColumnSpec, TableSpec, split_line

_BATCH = 20_000
_NUMBERS: dict[str, Callable[[str], Any]] = {"int": int, "bigint": int, "bool": int, "decimal": float,
                                              "float": float}


def converter(column: ColumnSpec) -> Callable[[str | None], Any]:
    """Data-file text -> the value SQLite stores: integers, REAL for decimals, text for the rest (NULL stays)."""
    number = _NUMBERS.get(column.kind)
    if number is None:
        return lambda text: text

    def convert(text: str | None) -> Any:
        return None if text is None or text == "" else number(text)
    return convert


def load_file(conn: Connection, table: TableSpec, path: Path) -> int:
    """Rows of ``path`` inserted into ``table``; returns how many."""
    converters = [converter(c) for c in table.columns]
    sql = (f"INSERT INTO {table.name} ({', '.join(table.column_names)}) "
           f"VALUES ({', '.join('?' for _ in converters)})")
    cur = conn.cursor()
    rows = 0
    cur.execute("BEGIN")
    with open(path, newline="", encoding="utf-8") as handle:
        batch: list[list[Any]] = []
        for line in handle:
            fields = split_line(line.rstrip("\n"))
            batch.append([conv(v) for conv, v in zip(converters, fields)])
            if len(batch) >= _BATCH:
                cur.executemany(sql, batch)
                rows += len(batch)
                batch.clear()
        if batch:
            cur.executemany(sql, batch)
            rows += len(batch)
    cur.execute("COMMIT")
    return rows
