"""The crud workload's ``persons`` table filled on a started SQLite instance, for tests that need data in one."""

from __future__ import annotations

from typing import Any

from tdebench.workloads.crud import data, schema


def fill_persons(instance: Any, rows: int, seed: int) -> None:
    """Create ``persons`` and insert ``rows`` generated rows (seed ``seed``) in one transaction."""
    conn = instance.connect()
    try:
        conn.execute(schema.create_table_sql("sqlite", "persons"))
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO persons VALUES (?,?,?,?,?,?,?,?)", list(data.persons(1, rows, seed)))
        conn.execute("COMMIT")
    finally:
        conn.close()
