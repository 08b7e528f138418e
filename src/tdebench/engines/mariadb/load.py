"""Loading a MariaDB instance: ``LOAD DATA LOCAL INFILE`` into key-less tables, constraints afterwards, dropping
and analyzing tables.

A mixin of :class:`tdebench.engines.mariadb.engine.MariadbInstance`: it uses the instance's ``config``, paths
(``_path``, ``log_path``) and ``_query``.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pymysql
from pymysql.constants.CR import CR_SERVER_LOST

from tdebench.api.engine import Config, Connection
from tdebench.api.tables import TableSpec
from tdebench.engines.mariadb.watchdog import full_disk_reason, log_size
from tdebench.engines.toolkit.bulkload import load_data_sql
from tdebench.errors import RunFailed


class MariadbLoading:
    """bulk_load / drop_tables / create_constraints / analyze of a MariaDB instance."""

    config: Config
    log_path: Path
    _path: Callable[..., Path]
    _query: Callable[[Any, str], list[tuple[Any, ...]]]

    def bulk_load(self, conn: Connection, table: TableSpec, path: Path) -> int:
        """``LOAD DATA LOCAL INFILE`` into an empty, key-less table; the trailing ``|`` goes to a variable.

        Plain row inserts: InnoDB's "bulk insert into an empty table" (unique_checks=0 and
        foreign_key_checks=0) costs twice the server CPU here on tables without keys, so it stays off.
        """
        cur = conn.cursor()
        since = log_size(self.log_path)
        try:
            cur.execute(load_data_sql(table.name, table.column_names), (str(path),))
        except pymysql.err.OperationalError as exc:
            full = full_disk_reason(self.log_path, self._path(), since) if exc.args[:1] == (CR_SERVER_LOST,) else None
            if full:  # the server dropped the connection of a LOAD DATA that failed mid-file on the full disk
                raise OSError(errno.ENOSPC, f"mariadbd ({self.config.label}) dropped the connection loading "
                                            f"{table}: {full}") from exc
            raise
        rows = int(cur.rowcount)
        warnings = self._query(cur, "SHOW WARNINGS LIMIT 3") if getattr(cur, "warning_count", 0) else []
        conn.commit()
        if warnings:
            raise RunFailed(f"loading {path.name} into {table.name} gave warnings: {warnings}",
                            "the .tbl file does not match the table; regenerate the data")
        return rows

    def drop_tables(self, conn: Connection, tables: Sequence[str]) -> None:
        """One DROP for all, foreign keys not checked (so the order does not matter)."""
        cur = conn.cursor()
        cur.execute("SET SESSION foreign_key_checks = 0")
        cur.execute("DROP TABLE IF EXISTS " + ", ".join(f"`{t}`" for t in reversed(tables)))
        cur.execute("SET SESSION foreign_key_checks = 1")
        conn.commit()

    def create_constraints(self, conn: Connection, statements: Sequence[str]) -> None:
        """Keys and indexes; foreign keys are added without re-checking dbgen's consistent data (no table copy)."""
        cur = conn.cursor()
        cur.execute("SET SESSION foreign_key_checks = 0")
        for statement in statements:
            cur.execute(statement)
        conn.commit()
        cur.execute("SET SESSION foreign_key_checks = 1")

    def analyze(self, conn: Connection) -> None:
        cur = conn.cursor()
        cur.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() "
                    "AND table_type = 'BASE TABLE' ORDER BY table_name")
        tables = [row[0] for row in cur.fetchall()]
        if tables:
            cur.execute("ANALYZE TABLE " + ", ".join(f"`{t}`" for t in tables))
            cur.fetchall()
        conn.commit()


__all__ = ["MariadbLoading"]
