"""TPC-H's own SQL for servers that need it rewritten (external targets, a local MySQL).

The workload speaks canonical (``postgres``) SQL to such an instance; this translator gives it:

* the server's own DDL for TPC-H's tables and constraints (MySQL and MariaDB: tdebench's ``mariadb`` DDL,
  InnoDB, one ALTER per table, valid MySQL 8; SQL Server and Oracle: the ``postgres`` DDL transpiled);
* each TPC-H query recognised by its canonical template (its parameter values read back from the rendered
  text) and rendered again for the server by :mod:`tdebench.workloads.tpch.dialects` — the same text
  ``tdebench script`` writes: sqlglot transpilation plus per-dialect overrides, computed dates, no NULL
  ordering emulation.

Anything else is left to the instance's generic rewriting.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date
from decimal import Decimal
from functools import lru_cache

from tdebench.sqltext.dialects import sql_dialect
from tdebench.workloads.tpch import dialects, params, schema
from tdebench.workloads.tpch.templates import CANONICAL, PLACEHOLDER, canonical_text, override_text, transpile

_LITERAL = r"date '\d{4}-\d{2}-\d{2}'|'(?:[^']|'')*'|-?\d+(?:\.\d+)?"


def _native(target: str) -> str | None:
    """The family whose DDL a target runs as it is, if any."""
    return sql_dialect(target).schema_family or None


def _own_text(target: str) -> str | None:
    """The family of tdebench's engine texts a target runs as they are, when it is not the canonical one."""
    family = sql_dialect(target).family
    return family if family and family != CANONICAL else None


def _ddl(target: str, statements: Callable[[str], list[str]]) -> tuple[str, ...]:
    """``statements`` in the family whose DDL ``target`` runs, else canonical ones transpiled for it."""
    native = _native(target)
    if native:
        return tuple(statements(native))
    return tuple(transpile(s, target) for s in statements(CANONICAL))


@lru_cache(maxsize=None)
def create_table_sql(target: str) -> tuple[str, ...]:
    """CREATE TABLE statements (no keys) in load order for ``target``."""
    return _ddl(target, schema.create_table_sql)


@lru_cache(maxsize=None)
def constraint_sql(target: str) -> tuple[str, ...]:
    """Primary keys, indexes and foreign keys (after the load) for ``target``."""
    return _ddl(target, schema.constraint_and_index_sql)


def _template_regex(template: str) -> re.Pattern[str]:
    """A regex matching ``template`` rendered with any literals; one named group per placeholder."""
    out, seen = [], set()
    for i, part in enumerate(PLACEHOLDER.split(template)):
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
    return tuple((n, _template_regex(params.query_text(n, CANONICAL))) for n in params.QUERY_NUMBERS)


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
    family = _own_text(target)
    if family:
        return params.query_text(number, family)
    return override_text(number, target) or transpile(canonical_text(number), target)


def render_for(number: int, values: dict[str, params.Value], target: str) -> str:
    """Query ``number`` with ``values`` in the target dialect (what ``tdebench script`` writes for it)."""
    template = _target_template(number, target)
    family = _own_text(target)
    if family:
        return PLACEHOLDER.sub(lambda m: params.literal(values[m.group(1)], family), template)
    return dialects.fill(template, values, target, number)


class TpchTranslator:
    """:class:`tdebench.api.engine.SqlTranslator` for TPC-H."""

    def statements(self, statements: Sequence[str], target: str) -> list[str] | None:
        """The target's own DDL for TPC-H's canonical table or constraint DDL; None for anything else."""
        given = list(statements)
        if given == schema.create_table_sql(CANONICAL):
            return list(create_table_sql(target))
        if given == schema.constraint_and_index_sql(CANONICAL):
            return list(constraint_sql(target))
        return None

    def statement(self, sql: str, target: str) -> str | None:
        """A rendered TPC-H query re-rendered for ``target``; None for anything else."""
        found = recognise_query(sql)
        return render_for(found[0], found[1], target) if found is not None else None
