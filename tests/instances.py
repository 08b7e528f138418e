"""Statements run on a started instance by tests that set up or read a few rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def run_sql(instance: Any, *statements: str | tuple[str, Sequence[Any]]) -> list[tuple[Any, ...]]:
    """Each statement (or ``(statement, parameters)``) on a connection of its own, committed and closed; the rows
    of the last one (none for a statement without a result)."""
    conn = instance.connect()
    try:
        cur = conn.cursor()
        rows: list[tuple[Any, ...]] = []
        for statement in statements:
            text, params = (statement, None) if isinstance(statement, str) else statement
            cur.execute(text, params) if params is not None else cur.execute(text)
            rows = [tuple(r) for r in cur.fetchall()] if cur.description else []
        conn.commit()
        return rows
    finally:
        conn.close()
