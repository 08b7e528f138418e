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


def _arguments(t: Terminal, x: Inputs, psm: bool) -> tuple[str, list[tuple[Any, str]]]:
    """The procedure's name and its arguments, each with the PostgreSQL type it is cast to ("": none). MariaDB
    takes New-Order's items as one fixed-width string, PostgreSQL as three arrays."""
    w, now = t.w_id, (now_text(), "timestamp")
    if x.kind == NEW_ORDER:
        all_local = int(all(sw == w for _, sw, _ in x.items))
        items = ([(procs_mariadb.encode_items(x.items), "")] if psm else
                 [([line[part] for line in x.items], "int[]") for part in range(3)])
        return "new_order", [(w, ""), (x.d_id, ""), (x.c_id, ""), *items, (all_local, ""), now]
    if x.kind == PAYMENT:
        return "payment", [(w, ""), (x.d_id, ""), (x.c_w_id, ""), (x.c_d_id, ""), (x.c_id, ""),
                           (x.c_last, "text"), (x.amount, "numeric"), now]
    if x.kind == ORDER_STATUS:
        return "order_status", [(w, ""), (x.d_id, ""), (x.c_id, ""), (x.c_last, "text")]
    if x.kind == DELIVERY:
        return "delivery", [(w, ""), (x.carrier, ""), now]
    if x.kind == STOCK_LEVEL:
        return "stock_level", [(w, ""), (x.d_id, ""), (x.threshold, "")]
    raise ValueError(x.kind)


def _statement(t: Terminal, x: Inputs, psm: bool) -> tuple[str, tuple[Any, ...]]:
    """``CALL tpcc_<kind>(...)`` (MariaDB) or ``SELECT tpcc_<kind>(...)`` with typed arguments (PostgreSQL)."""
    name, args = _arguments(t, x, psm)
    marks = ", ".join("%s" if psm or not cast else f"%s::{cast}" for _, cast in args)
    return f"{'CALL' if psm else 'SELECT'} tpcc_{name}({marks})", tuple(value for value, _ in args)


def call(s: Session, t: Terminal, x: Inputs) -> tuple[str, int]:
    """One transaction as one call: ("commit" | "rollback", districts skipped by Delivery)."""
    mariadb = s.dialect.procedure_language == "sql/psm"
    sql, params = _statement(t, x, mariadb)
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
