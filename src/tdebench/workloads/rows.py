"""Small reads many workloads make alike: the rows of some tables, and the one row a query returns."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def count_rows(conn: Any, tables: Iterable[str], relation: Callable[[str], str] = str) -> dict[str, int]:
    """The rows of each of ``tables`` (``relation``: its name in the statement, e.g. quoted or schema-qualified),
    read on ``conn``, which is then committed (and left open)."""
    cur = conn.cursor()
    out = {}
    for table in tables:
        cur.execute(f"SELECT COUNT(*) FROM {relation(table)}")
        out[table] = int(cur.fetchone()[0])
    conn.commit()
    return out


def query_one(conn: Any, sql: str) -> tuple[Any, ...]:
    """The first row ``sql`` returns on ``conn``, which is then committed."""
    cur = conn.cursor()
    cur.execute(sql)
    row = cur.fetchone()
    conn.commit()
    return tuple(row)
