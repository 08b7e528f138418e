"""SQL for external targets: the workload's canonical SQL rewritten for the target's dialect.

tdebench's workloads speak one of the dialects its own engines run (``postgres`` is the canonical one:
``queries/qNN.sql`` is written in it). An external target may speak ``tsql``, ``oracle``, ``mysql``,
``mariadb`` or ``postgres``; :class:`TranslatingConnection` sits between the workload and the driver and
rewrites each statement once (cached):

* a TPC-H query is recognised by its canonical template, its parameter values are read back from the
  rendered text, and the query is rendered again for the target by :mod:`tdebench.manual.dialects` (the same
  text ``tdebench script`` writes: sqlglot transpilation plus per-dialect overrides, computed dates, no NULL
  ordering emulation);
* a statement with driver parameters (the refresh functions' INSERT/DELETE) only gets the target driver's
  parameter markers (``:1, :2, ...`` for oracledb);
* anything else is transpiled with sqlglot from ``postgres`` to the target dialect.

Table DDL: MySQL and MariaDB get tdebench's ``mariadb`` DDL (InnoDB, one ALTER per table; valid MySQL 8);
SQL Server and Oracle get the ``postgres`` DDL transpiled with sqlglot.
"""

from __future__ import annotations

import re
import threading
from datetime import date
from decimal import Decimal
from functools import lru_cache
from typing import Any

from tdebench.manual import dialects
from tdebench.workloads.tpch import params, schema

WORKLOAD_DIALECT = "postgres"  # what the workload hands to an external instance
TARGET_DIALECTS = ("mysql", "mariadb", "postgres", "tsql", "oracle")
_LITERAL = r"date '\d{4}-\d{2}-\d{2}'|'(?:[^']|'')*'|-?\d+(?:\.\d+)?"
_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_PARAM = re.compile(r"%s")


# DDL --------------------------------------------------------------------------------------------------------

def _native(target: str) -> str | None:
    """The schema dialect that a target speaks natively, if any."""
    return {"mysql": "mariadb", "mariadb": "mariadb", "postgres": "postgres"}.get(target)


@lru_cache(maxsize=None)
def create_table_sql(target: str) -> tuple[str, ...]:
    """CREATE TABLE statements (no keys) in load order for ``target``."""
    native = _native(target)
    if native:
        return tuple(schema.create_table_sql(native))
    return tuple(dialects.transpile(s, target) for s in schema.create_table_sql(WORKLOAD_DIALECT))


@lru_cache(maxsize=None)
def constraint_sql(target: str) -> tuple[str, ...]:
    """Primary keys, indexes and foreign keys (after the load) for ``target``."""
    native = _native(target)
    if native:
        return tuple(schema.constraint_and_index_sql(native))
    return tuple(dialects.transpile(s, target) for s in schema.constraint_and_index_sql(WORKLOAD_DIALECT))


def drop_table_sql(target: str, tables: list[str]) -> list[str]:
    """Statements dropping ``tables`` (children first) if they exist; Oracle's is a PL/SQL block per table."""
    ordered = list(reversed(tables))
    if target in ("mysql", "mariadb"):
        return [f"DROP TABLE IF EXISTS {', '.join(ordered)}"]
    if target == "postgres":
        return [f"DROP TABLE IF EXISTS {', '.join(ordered)} CASCADE"]
    if target == "tsql":  # SQL Server 2016+
        return [f"DROP TABLE IF EXISTS {t}" for t in ordered]
    return [f"BEGIN EXECUTE IMMEDIATE 'DROP TABLE {t} CASCADE CONSTRAINTS PURGE'; "
            f"EXCEPTION WHEN OTHERS THEN IF SQLCODE != -942 THEN RAISE; END IF; END;" for t in ordered]


# queries ----------------------------------------------------------------------------------------------------

def _template_regex(template: str) -> re.Pattern[str]:
    """A regex matching ``template`` rendered with any literals; one named group per placeholder."""
    out, seen = [], set()
    for i, part in enumerate(_PLACEHOLDER.split(template)):
        if i % 2 == 0:
            out.append(re.escape(part))
        elif part in seen:
            out.append(f"(?P={part})")
        else:
            seen.add(part)
            out.append(f"(?P<{part}>{_LITERAL})")
    return re.compile("".join(out), re.S)


@lru_cache(maxsize=1)
def _query_patterns() -> tuple[tuple[int, re.Pattern[str]], ...]:
    return tuple((n, _template_regex(params.query_text(n, WORKLOAD_DIALECT))) for n in params.QUERY_NUMBERS)


def _value(text: str) -> params.Value:
    """A rendered postgres literal back as a parameter value."""
    if text.startswith("date '"):
        return date.fromisoformat(text[6:-1])
    if text.startswith("'"):
        return text[1:-1].replace("''", "'")
    return Decimal(text) if "." in text else int(text)


def recognise_query(sql: str) -> tuple[int, dict[str, params.Value]] | None:
    """(number, parameter values) if ``sql`` is a rendered canonical TPC-H query."""
    text = sql.strip()
    for number, pattern in _query_patterns():
        match = pattern.fullmatch(text)
        if match:
            return number, {k: _value(v) for k, v in match.groupdict().items()}
    return None


@lru_cache(maxsize=None)
def _target_template(number: int, target: str) -> str:
    if target == "mariadb":
        return params.query_text(number, "mariadb")
    return dialects.override_text(number, target) or dialects.transpile(dialects.canonical_text(number), target)


def render_for(number: int, values: dict[str, params.Value], target: str) -> str:
    """Query ``number`` with ``values`` in the target dialect (what ``tdebench script`` writes for it)."""
    template = _target_template(number, target)
    if target == "mariadb":
        return _PLACEHOLDER.sub(lambda m: params.literal(values[m.group(1)], "mariadb"), template)
    return dialects.fill(template, values, target, number)


# statements -------------------------------------------------------------------------------------------------

class Translator:
    """Rewrites workload statements for one target dialect; results are cached (thread-safe)."""

    def __init__(self, target: str) -> None:
        if target not in TARGET_DIALECTS:
            raise ValueError(f"unknown target dialect {target!r}")
        self.target = target
        self._cache: dict[tuple[str, bool], str] = {}
        self._lock = threading.Lock()
        self.sources: dict[str, int] = {"query": 0, "parameters": 0, "sqlglot": 0}

    @property
    def identity(self) -> bool:
        return self.target == WORKLOAD_DIALECT

    def __call__(self, sql: str, has_params: bool = False) -> str:
        if self.identity:
            return sql
        key = (sql, has_params)
        with self._lock:
            cached = self._cache.get(key)
        if cached is None:
            cached = self._translate(sql, has_params)
            with self._lock:
                self._cache[key] = cached
        return cached

    def _translate(self, sql: str, has_params: bool) -> str:
        if has_params:
            self.sources["parameters"] += 1
            return self.markers(sql)
        found = recognise_query(sql)
        if found is not None:
            self.sources["query"] += 1
            return render_for(found[0], found[1], self.target)
        self.sources["sqlglot"] += 1
        return dialects.transpile(sql, self.target)

    def markers(self, sql: str) -> str:
        """``%s`` markers as the target driver wants them (oracledb: ``:1``, ``:2``, ...)."""
        if self.target != "oracle":
            return sql
        counter = iter(range(1, 10_000))
        return _PARAM.sub(lambda _: f":{next(counter)}", sql)


class TranslatingCursor:
    """A DB-API cursor whose ``execute``/``executemany`` translate the statement first."""

    def __init__(self, cursor: Any, translate: Translator) -> None:
        self._cursor = cursor
        self._translate = translate

    def execute(self, sql: str, args: Any = None) -> Any:
        statement = self._translate(sql, args is not None)
        return self._cursor.execute(statement) if args is None else self._cursor.execute(statement, args)

    def executemany(self, sql: str, rows: Any) -> Any:
        return self._cursor.executemany(self._translate(sql, True), rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)

    def __iter__(self) -> Any:
        return iter(self._cursor)

    def __enter__(self) -> "TranslatingCursor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TranslatingConnection:
    """A DB-API connection handing out translating cursors; ``raw`` is the driver's connection.

    ``autocommit`` reads False: the drivers open transactions implicitly, so the workload never sends
    a dialect-specific ``BEGIN``.
    """

    autocommit = False

    def __init__(self, raw: Any, translate: Translator) -> None:
        self.raw = raw
        self.translate = translate

    def cursor(self) -> TranslatingCursor:
        return TranslatingCursor(self.raw.cursor(), self.translate)

    def commit(self) -> None:
        self.raw.commit()

    def rollback(self) -> None:
        self.raw.rollback()

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> "TranslatingConnection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def raw_connection(conn: Any) -> Any:
    """The driver connection behind a :class:`TranslatingConnection` (or ``conn`` itself)."""
    return conn.raw if isinstance(conn, TranslatingConnection) else conn


__all__ = ["TARGET_DIALECTS", "TranslatingConnection", "Translator", "constraint_sql", "create_table_sql",
           "drop_table_sql", "raw_connection", "recognise_query", "render_for"]
