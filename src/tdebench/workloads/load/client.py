"""Loading tables through the client, as an application would.

Client path: parameterized ``INSERT … VALUES`` through the driver's ``executemany`` in batches of
``batch_rows`` rows, one transaction per batch, values typed as an application holds them (int, Decimal --
float where the driver has no decimals (SQLite) --, dates as ISO text). Engines that encrypt columns through
views (PostgreSQL ``column:*``) take the inserts through their INSTEAD OF trigger, i.e. through pgcrypto, row
by row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Connection
from tdebench.api.tables import TableSpec, split_line
from tdebench.workloads.tpch.refresh import placeholder


def converters(table: TableSpec, dialect: Dialect) -> list[Callable[[str | None], Any]]:
    """Data-file text -> the Python value an application would bind, per column."""
    decimal: Callable[[str], Any] = Decimal if dialect.typed_values else float
    kinds: dict[str, Callable[[str], Any]] = {"int": int, "bigint": int, "decimal": decimal, "float": float}

    def one(kind: str) -> Callable[[str | None], Any]:
        convert = kinds.get(kind)
        return (lambda v: v) if convert is None else (lambda v: None if v is None else convert(v))
    return [one(c.kind) for c in table.columns]


def read_rows(path: Path, table: TableSpec, dialect: Dialect) -> Iterator[list[Any]]:
    conv = converters(table, dialect)
    with open(path, newline="", encoding="utf-8") as handle:
        for line in handle:
            yield [c(v) for c, v in zip(conv, split_line(line.rstrip("\n")))]


def insert_batches(conn: Connection, dialect: Dialect, table: TableSpec, path: Path, batch_rows: int) -> int:
    """executemany per batch, commit per batch; returns rows inserted."""
    marks = ", ".join(placeholder(dialect) for _ in table.columns)
    sql = f"INSERT INTO {table.name} ({', '.join(table.column_names)}) VALUES ({marks})"
    cur = conn.cursor()
    rows, batch = 0, []

    def flush() -> None:
        if dialect.autocommit:  # one explicit transaction per batch
            cur.execute(dialect.begin_sql)
            cur.executemany(sql, batch)
            cur.execute("COMMIT")
        else:
            cur.executemany(sql, batch)
            conn.commit()

    for row in read_rows(path, table, dialect):
        batch.append(row)
        if len(batch) >= batch_rows:
            flush()
            rows, batch = rows + len(batch), []
    if batch:
        flush()
        rows += len(batch)
    return rows
