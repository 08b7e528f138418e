"""Validation on freshly loaded data: every transaction once with fixed inputs, and a digest of the data.

The inputs come from a fixed seed, so twins apply exactly the same changes and their digests (row
counts and column sums, no timestamps) must be equal; a difference means the twins do not hold the
same data. Errors here stop a config before any timed trial.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Connection, Instance
from tdebench.workloads.tpcc import schema
from tdebench.workloads.tpcc.options import TpccOptions
from tdebench.workloads.tpcc.procs import resolve_mode
from tdebench.workloads.tpcc.rand import C_LAST_RUN, TpccRandom
from tdebench.workloads.tpcc.session import Session
from tdebench.workloads.tpcc.txns import INVALID_ITEM, KINDS, NEW_ORDER, Terminal, draw
from tdebench.workloads.tpcc.vu import execute

SMOKE_SEED = 4242
_SUMS = (("warehouse", "w_ytd"), ("district", "d_ytd"), ("district", "d_next_o_id"), ("customer", "c_balance"),
         ("customer", "c_payment_cnt"), ("stock", "s_quantity"), ("stock", "s_order_cnt"), ("orders", "o_carrier_id"),
         ("order_line", "ol_amount"), ("history", "h_amount"))


def smoke_test(instance: Instance, dialect: Dialect, opts: TpccOptions) -> list[str]:
    """Run New-Order, a rolled-back New-Order, Payment, Order-Status, Delivery and Stock-Level once."""
    rng = TpccRandom(SMOKE_SEED, c_last=C_LAST_RUN)
    terminal = Terminal(1, opts.warehouses)
    plan = [(NEW_ORDER, False), (NEW_ORDER, True), *((kind, False) for kind in KINDS[1:])]
    session = Session(instance.connect(), dialect, opts.lock_wait, resolve_mode(opts.mode, dialect) == "procedures")
    failures: list[str] = []
    try:
        for kind, invalid in plan:
            x = draw(kind, rng, terminal)
            if invalid:
                x.items[-1] = (INVALID_ITEM, *x.items[-1][1:])
            expect = "rollback" if invalid else "commit"
            try:
                outcome, _ = execute(session, terminal, x, {}, opts.max_retries)
            except Exception as exc:  # noqa: BLE001 - reported as a validation failure
                failures.append(f"{kind}: {type(exc).__name__}: {exc}")
                continue
            if outcome != expect:
                failures.append(f"{kind}: ended with {outcome}, expected {expect}")
    finally:
        session.close()
    return failures


def data_digest(conn: Connection) -> dict[str, Any]:
    """Row counts of every table and sums of the columns transactions change (money rounded to cents)."""
    cur = conn.cursor()
    out: dict[str, Any] = {}
    for table in schema.TABLE_NAMES:
        cur.execute(f"SELECT COUNT(*) FROM {table}")
        out[f"{table}.rows"] = int(cur.fetchone()[0])
    for table, column in _SUMS:
        cur.execute(f"SELECT SUM({column}) FROM {table}")
        value = cur.fetchone()[0]
        out[f"{table}.sum({column})"] = str(Decimal(str(value or 0)).quantize(Decimal("0.01")))
    conn.commit()
    return out
