"""The canonical SQL of a workload directory as every engine family runs it: the family's variant file where
there is one, else the canonical statements rewritten with sqlglot from the dialect they are written in
(``workload.toml`` ``dialect``) into the family's, SQLite's date expressions included
(:mod:`tdebench.sqltext.sqlite`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tdebench.api.tables import TableSpec
from tdebench.sqltext.statements import SqlSyntaxError, parse_statements
from tdebench.sqltext.transpile import SqlglotError, transpile


class Untranslatable(ValueError):
    """A canonical statement has no equivalent in a family's SQL (``str()`` says which construct)."""


def date_columns(tables: Iterable[TableSpec]) -> frozenset[str]:
    """Lower-case names of the columns that hold dates only (a name that is a timestamp elsewhere is left out:
    date arithmetic on it keeps the time of day)."""
    dates = {c.name.lower() for t in tables for c in t.columns if c.kind == "date"}
    others = {c.name.lower() for t in tables for c in t.columns if c.kind != "date"}
    return frozenset(dates - others)


def translate(statements: list[str], source: str, family: str, dates: frozenset[str]) -> list[str]:
    """``statements`` (canonical text written in family ``source``) as family ``family`` runs them."""
    if family == source:
        return list(statements)
    out = []
    for statement in statements:
        try:
            out.append(transpile(statement, family, read=source, pretty=False, date_columns=dates))
        except (SqlglotError, ValueError) as exc:  # sqlglot's UnsupportedError, or sqltext.sqlite's
            raise Untranslatable(str(exc).splitlines()[0] or type(exc).__name__) from None
    return out


def read_translated(path: Path, source: str, family: str, dates: frozenset[str]) -> list[str]:
    """The statements of the canonical file ``path`` for ``family``; Untranslatable, or SqlSyntaxError when
    the rewritten text does not parse in the family's dialect (sqlglot wrote what it cannot read back)."""
    statements = [s.text for s in parse_statements(path.read_text(encoding="utf-8"), source)]
    out = translate(statements, source, family, dates)
    if family != source:
        parse_statements(";\n".join(out), family)  # SqlSyntaxError if sqlglot's output is not the family's SQL
    return out


__all__ = ["SqlSyntaxError", "Untranslatable", "date_columns", "read_translated", "translate"]
