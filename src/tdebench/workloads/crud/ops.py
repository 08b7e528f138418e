"""One CRUD operation on one batch: sizes before, the timed statement (with full fetch), bytes, sizes after."""

from __future__ import annotations

from dataclasses import dataclass

from tdebench.api.engine import Connection
from tdebench.measure.storage import sqlite_total, table_sizes
from tdebench.api.trial import ConfigState, Recorder
from tdebench.workloads.crud import schema
from tdebench.workloads.crud.meter import measured
from tdebench.workloads.rows import query_one

MIB = 1024 * 1024
TEST = "crud"


@dataclass
class OpResult:
    """What one operation did and cost."""

    step: str
    rows: int
    expected_rows: int
    seconds: float
    server_cpu: float | None
    bytes: int
    table_bytes_before: int | None
    table_bytes_after: int | None

    @property
    def mb_per_s(self) -> float:
        """Throughput as the study defines it: bytes processed / elapsed / 1024²."""
        return self.bytes / self.seconds / MIB if self.seconds > 0 else 0.0


def persons_bytes(state: ConfigState, conn: Connection) -> int | None:
    """Data + index bytes of ``persons`` (SQLite: pages in use of the whole database file); None if unknown."""
    try:
        if state.dialect.storage_catalog == "dbstat":
            return sqlite_total(conn)
        sizes = table_sizes(state.instance, ["persons"], conn)
    except Exception:  # noqa: BLE001 - a size is a side fact; an engine without these catalogs has none
        conn.rollback()
        return None
    return sizes["persons"]["total_bytes"] if "persons" in sizes else None


def batch_range(op: str, k: int, rows: int) -> tuple[str, int, int]:
    """(table whose rows the operation processes, first id, last id)."""
    if op == "insert":
        return "persons_stage", rows + 1, rows + k
    return "persons", 1, k


def _execute(conn: Connection, op: str, first: int, last: int, fetch_size: int) -> int:
    """Run the statement; SELECT fetches every row (in chunks); returns rows processed."""
    cur = conn.cursor()
    if op == "select":
        cur.execute(schema.select_sql(first, last))
        count = 0
        while True:
            chunk = cur.fetchmany(fetch_size)
            if not chunk:
                break
            count += len(chunk)
        conn.commit()
        return count
    cur.execute(schema.insert_sql(first, last) if op == "insert" else schema.delete_sql(first, last))
    count = int(cur.rowcount)
    conn.commit()
    return count


def run_op(state: ConfigState, conn: Connection, op: str, k: int, rows: int, fetch_size: int) -> OpResult:
    """Measure one operation of ``k`` rows; the bytes come from the DBMS before the statement runs."""
    table, first, last = batch_range(op, k, rows)
    count, nbytes, _, _ = query_one(conn, schema.measure_sql(state.dialect, table, first, last))
    before = persons_bytes(state, conn)
    counted = op != "select" and not state.dialect.rowcount
    held = int(query_one(conn, schema.count_range_sql(first, last))[0]) if counted else 0
    with measured(state, f"{op}_{k}") as timing:
        done = _execute(conn, op, first, last, fetch_size)
    if counted:  # the driver's rowcount tells nothing (Dialect.rowcount): the rows the statement added or removed
        done = abs(int(query_one(conn, schema.count_range_sql(first, last))[0]) - held)
    after = persons_bytes(state, conn)
    return OpResult(timing.step, done, int(count), timing.seconds, timing.server_cpu, int(nbytes), before, after)


def record(rec: Recorder, res: OpResult) -> None:
    """The operation's measurements under test ``crud``."""
    rec.add(TEST, res.step, "elapsed", res.seconds, "s")
    if res.server_cpu is not None:
        rec.add(TEST, res.step, "server_cpu", res.server_cpu, "s")
    rec.add(TEST, res.step, "bytes", res.bytes, "bytes")
    rec.add(TEST, res.step, "mb_per_s", res.mb_per_s, "MB/s")
    rec.add(TEST, res.step, "rows", res.rows, "rows")
    if res.table_bytes_before is not None:
        rec.add(TEST, res.step, "table_bytes_before", res.table_bytes_before, "bytes")
    if res.table_bytes_after is not None:
        rec.add(TEST, res.step, "table_bytes_after", res.table_bytes_after, "bytes")
