"""Loading TPC-H tables through the client, as an application would, and dropping them again.

Client path: parameterized ``INSERT … VALUES`` through the driver's ``executemany`` in batches of
``batch_rows`` rows, one transaction per batch, values typed as an application holds them (int, Decimal --
float for SQLite --, dates as ISO text). Engines that encrypt columns through views (PostgreSQL ``column:*``)
take the inserts through their INSTEAD OF trigger, i.e. through pgcrypto, row by row.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from tdebench.engines.base import Connection, Instance
from tdebench.workloads.tpch import schema
from tdebench.workloads.tpch.refresh import insert_sql


def converters(table: str, dialect: str) -> list[Callable[[str], Any]]:
    """Text -> the Python value an application would bind, per column."""
    decimal: Callable[[str], Any] = float if dialect == "sqlite" else Decimal
    kinds: dict[str, Callable[[str], Any]] = {"int": int, "bigint": int, "decimal": decimal}
    return [kinds.get(c.type.split("(")[0], str) for c in schema.table(table).columns]


def read_rows(path: Path, table: str, dialect: str) -> Iterator[list[Any]]:
    conv = converters(table, dialect)
    with open(path, newline="", encoding="utf-8") as handle:
        for record in csv.reader(handle, delimiter="|", quoting=csv.QUOTE_NONE):
            yield [c(v) for c, v in zip(conv, record)]


def insert_batches(conn: Connection, dialect: str, table: str, path: Path, batch_rows: int) -> int:
    """executemany per batch, commit per batch; returns rows inserted."""
    sql = insert_sql(table, dialect)
    cur = conn.cursor()
    rows, batch = 0, []
    explicit = dialect == "sqlite"  # autocommit connection: one explicit transaction per batch

    def flush() -> None:
        if explicit:
            cur.execute("BEGIN")
        cur.executemany(sql, batch)
        if explicit:
            cur.execute("COMMIT")
        else:
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


def drop_tpch(instance: Instance, conn: Connection, dialect: str) -> None:
    """Drop every TPC-H table (children first), including an engine's base tables, views and triggers."""
    cur = conn.cursor()
    names = [t.name for t in reversed(schema.TABLES)]
    if dialect == "mariadb":
        cur.execute("SET SESSION foreign_key_checks = 0")
        cur.execute("DROP TABLE IF EXISTS " + ", ".join(names))
        cur.execute("SET SESSION foreign_key_checks = 1")
    elif dialect == "postgres":
        for name in names:
            cur.execute("SELECT relkind FROM pg_class WHERE relname = %s AND relnamespace = 'public'::regnamespace",
                        [name])
            found = cur.fetchone()
            if found and found[0] == "v":
                cur.execute(f"DROP VIEW {name} CASCADE")
            elif found:
                cur.execute(f"DROP TABLE {name} CASCADE")
            base = getattr(instance, "relation_name", lambda t: t)(name)
            if base != name:
                cur.execute(f"DROP TABLE IF EXISTS {base} CASCADE")
                cur.execute(f"DROP FUNCTION IF EXISTS {name}_encrypt_insert() CASCADE")
    else:
        for name in names:
            cur.execute(f"DROP TABLE IF EXISTS {name}")
    conn.commit()
