"""Server-side transactions (``mode = procedures``): install them and call them, one round trip each.

HammerDB runs TPROC-C as stored procedures, so its client does little more than call them. tdebench
does the same on MariaDB and PostgreSQL by default: with client-side statements the Python driver
would burn about as much CPU per transaction as the server and compete with it for the cores.
SQLite has no stored procedures and always runs the client-side statements (``mode = statements``).
"""

from __future__ import annotations

from typing import Any

from tdebench.api.dialect import Dialect
from tdebench.api.engine import Connection
from tdebench.workloads.tpcc import procs_mariadb, procs_postgres
from tdebench.workloads.tpcc.session import Session
from tdebench.workloads.tpcc.txns import (DELIVERY, NEW_ORDER, ORDER_STATUS, PAYMENT, STOCK_LEVEL, Inputs, Terminal,
                                          now_text)

LANGUAGES = ("sql/psm", "plpgsql")  # the procedure languages the five transactions are written in


def has_procedures(dialect: Dialect) -> bool:
    """True when the five transactions exist in the dialect's procedure language."""
    return dialect.procedure_language in LANGUAGES


def resolve_mode(mode: str, dialect: Dialect) -> str:
    """``auto`` -> procedures where the dialect has them, statements elsewhere."""
    if mode == "auto":
        return "procedures" if has_procedures(dialect) else "statements"
    return mode


def install(conn: Connection, dialect: Dialect) -> None:
    """Create (or replace) the five procedures/functions."""
    psm = dialect.procedure_language == "sql/psm"
    statements = procs_mariadb.install_sql() if psm else procs_postgres.install_sql()
    cur = conn.cursor()
    for statement in statements:
        cur.execute(statement)
    conn.commit()


def _mariadb(t: Terminal, x: Inputs) -> tuple[str, tuple[Any, ...]]:
    w = t.w_id
    if x.kind == NEW_ORDER:
        all_local = int(all(sw == w for _, sw, _ in x.items))
        return ("CALL tpcc_new_order(%s, %s, %s, %s, %s, %s)",
                (w, x.d_id, x.c_id, procs_mariadb.encode_items(x.items), all_local, now_text()))
    if x.kind == PAYMENT:
        return ("CALL tpcc_payment(%s, %s, %s, %s, %s, %s, %s, %s)",
                (w, x.d_id, x.c_w_id, x.c_d_id, x.c_id, x.c_last, x.amount, now_text()))
    if x.kind == ORDER_STATUS:
        return "CALL tpcc_order_status(%s, %s, %s, %s)", (w, x.d_id, x.c_id, x.c_last)
    if x.kind == DELIVERY:
        return "CALL tpcc_delivery(%s, %s, %s)", (w, x.carrier, now_text())
    return "CALL tpcc_stock_level(%s, %s, %s)", (w, x.d_id, x.threshold)


def _postgres(t: Terminal, x: Inputs) -> tuple[str, tuple[Any, ...]]:
    w = t.w_id
    if x.kind == NEW_ORDER:
        all_local = int(all(sw == w for _, sw, _ in x.items))
        return ("SELECT tpcc_new_order(%s, %s, %s, %s::int[], %s::int[], %s::int[], %s, %s::timestamp)",
                (w, x.d_id, x.c_id, [i for i, _, _ in x.items], [s for _, s, _ in x.items],
                 [q for _, _, q in x.items], all_local, now_text()))
    if x.kind == PAYMENT:
        return ("SELECT tpcc_payment(%s, %s, %s, %s, %s, %s::text, %s::numeric, %s::timestamp)",
                (w, x.d_id, x.c_w_id, x.c_d_id, x.c_id, x.c_last, x.amount, now_text()))
    if x.kind == ORDER_STATUS:
        return "SELECT tpcc_order_status(%s, %s, %s, %s::text)", (w, x.d_id, x.c_id, x.c_last)
    if x.kind == DELIVERY:
        return "SELECT tpcc_delivery(%s, %s, %s::timestamp)", (w, x.carrier, now_text())
    if x.kind == STOCK_LEVEL:
        return "SELECT tpcc_stock_level(%s, %s, %s)", (w, x.d_id, x.threshold)
    raise ValueError(x.kind)


def call(s: Session, t: Terminal, x: Inputs) -> tuple[str, int]:
    """One transaction as one call: ("commit" | "rollback", districts skipped by Delivery)."""
    mariadb = s.dialect.procedure_language == "sql/psm"
    sql, params = _mariadb(t, x) if mariadb else _postgres(t, x)
    try:
        if mariadb and x.kind != DELIVERY:
            s.run(sql, params)  # no result set
            return "commit", 0
        row = s.one(sql, params)
    except Exception as exc:
        if _intended_rollback(exc):
            return "rollback", 0
        raise
    return "commit", int(row[0]) if row and x.kind == DELIVERY else 0


def _intended_rollback(exc: BaseException) -> bool:
    """New-Order's unused item: SQLSTATE TC001 (PostgreSQL) or error 30001 (MariaDB)."""
    if getattr(exc, "sqlstate", None) == procs_postgres.ROLLBACK_STATE:
        return True
    args = getattr(exc, "args", ())
    return bool(args) and args[0] == procs_mariadb.ROLLBACK_ERRNO
