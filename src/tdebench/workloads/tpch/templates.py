"""TPC-H's query templates (``{{name}}`` placeholders): the canonical text ``queries/qNN.sql`` (standard SQL that
PostgreSQL and MariaDB read as written), a dialect's own file ``queries/<dialect>/qNN.sql`` where one is needed,
and a template rewritten for a dialect by sqlglot with its placeholders kept.

A family that does not read the canonical texts' standard forms (SQLite: no ``EXTRACT``, no ``SUBSTRING ... FROM
... FOR``) gets each query as sqlglot writes it for the family where that differs from how sqlglot writes
canonical SQL, and the canonical text as written elsewhere: no copy of a query is kept for one changed line.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from tdebench.sqltext import transpile as sqltext
from tdebench.sqltext.dialects import family_dialect

#: the dialect the canonical texts are read in
CANONICAL = "postgres"
PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_SENTINEL = "tdebenchparam_"


def queries_root():  # noqa: ANN201 - importlib Traversable
    return resources.files("tdebench.workloads.tpch").joinpath("queries")


def canonical_text(number: int) -> str:
    """The canonical template ``queries/qNN.sql`` (never a dialect's own file)."""
    return queries_root().joinpath(f"q{number:02d}.sql").read_text(encoding="utf-8").strip()


def override_text(number: int, dialect: str) -> str | None:
    """The template ``queries/<dialect>/qNN.sql`` of query ``number``, if one exists."""
    path = queries_root().joinpath(dialect, f"q{number:02d}.sql")
    return path.read_text(encoding="utf-8").strip() if path.is_file() else None


def transpile(template: str, dialect: str) -> str:
    """A canonical template rewritten for ``dialect`` (:mod:`tdebench.sqltext.transpile`), placeholders kept: each
    ``{{name}}`` is a sentinel string literal while sqlglot rewrites the text."""
    marked = PLACEHOLDER.sub(lambda m: f"'{_SENTINEL}{m.group(1)}'", template)
    sql = sqltext.transpile(marked, dialect)
    return re.sub(rf"'{_SENTINEL}(\w+)'", lambda m: "{{" + m.group(1) + "}}", sql)


def family_text(number: int, family: str) -> str:
    """The template a family's engines run: the family's own file if there is one, else the canonical text,
    rewritten by sqlglot for a family that does not read its standard forms where sqlglot writes it differently
    for the family than for canonical SQL."""
    own = override_text(number, family)
    if own is not None:
        return own
    canonical, dialect = canonical_text(number), family_dialect(family)
    if dialect.name == CANONICAL or dialect.standard_forms:
        return canonical
    return _rewritten(canonical, dialect.name)


@lru_cache(maxsize=64)
def _rewritten(canonical: str, dialect: str) -> str:
    """``canonical`` as sqlglot writes it for ``dialect`` where that differs from how it writes canonical SQL,
    else ``canonical`` itself (each query is rendered once per run, not once per execution)."""
    rewritten = transpile(canonical, dialect)
    return canonical if rewritten == transpile(canonical, CANONICAL) else rewritten
