"""TPC-H query texts for the manual-mode dialects (tsql, oracle, mysql, mariadb, postgres).

``mariadb`` and ``postgres`` get exactly the text tdebench's own engines run
(:func:`tdebench.workloads.tpch.params.render_query`). ``tsql``, ``oracle`` and ``mysql`` get the canonical
query (``queries/qNN.sql``) transpiled with sqlglot (read ``postgres``), unless a per-dialect override
``queries/<dialect>/qNN.sql`` exists.

Parameters are substituted *after* transpiling: each ``{{name}}`` first becomes a sentinel string literal,
sqlglot leaves it alone, and the sentinel is then replaced by the dialect's literal. So dates come out as
``DATE 'YYYY-MM-DD'`` for Oracle (a ``CAST('…' AS DATE)`` would depend on ``NLS_DATE_FORMAT``) and as
``CAST('YYYY-MM-DD' AS DATE)`` for SQL Server (language-independent for the ``date`` type). All derived dates
are computed in Python (see ``params.py``), so no ``dateadd``/``add_months``/``interval`` arithmetic is needed.

sqlglot's emulation of PostgreSQL's NULL ordering (extra ``CASE WHEN x IS NULL`` sort keys) is switched off:
no TPC-H sort key is ever NULL, and the extra keys would change the plans being measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from tdebench.errors import UsageError
from tdebench.sqltext.dialects import SQL_DIALECTS, sql_dialect
from tdebench.workloads.tpch import params
from tdebench.workloads.tpch.templates import canonical_text, override_text, transpile

#: the manual-mode dialects: every SQL dialect with a URL scheme (servers tdebench reaches but does not run)
DIALECTS = tuple(d.name for d in SQL_DIALECTS if d.url_scheme)
TRANSPILED = tuple(name for name in DIALECTS if not sql_dialect(name).family)
Q15_MODES = ("with", "view")


# The spec's Q15 with a view (named revenue<stream>), in canonical (PostgreSQL-readable) syntax.
_Q15_VIEW = (
    "create or replace view revenue{{stream}} (supplier_no, total_revenue) as\n"
    "select l_suppkey, sum(l_extendedprice * (1 - l_discount))\n"
    "from lineitem\n"
    "where l_shipdate >= {{date}} and l_shipdate < {{date_end}}\n"
    "group by l_suppkey",
    "select s_suppkey, s_name, s_address, s_phone, total_revenue\n"
    "from supplier, revenue{{stream}}\n"
    "where s_suppkey = supplier_no\n"
    "  and total_revenue = (select max(total_revenue) from revenue{{stream}})\n"
    "order by s_suppkey",
    "drop view revenue{{stream}}",
)


@dataclass(frozen=True)
class QueryText:
    """One query ready for a script: one or more statements (Q15's view variant has three)."""

    number: int
    statements: tuple[str, ...]
    source: str  # "engine" (same text as tdebench's engine), "sqlglot" or "override"


def check_dialect(dialect: str) -> str:
    """The dialect name in lower case; UsageError if manual mode does not know it."""
    name = dialect.strip().lower()
    if name not in DIALECTS:
        raise UsageError(f"unknown dialect '{dialect}'", f"use one of: {', '.join(DIALECTS)}")
    return name


def literal(value: params.Value, dialect: str) -> str:
    """``value`` as an SQL literal in a manual-mode dialect."""
    if isinstance(value, date):
        text = value.isoformat()
        return sql_dialect(dialect).date_literal.format(text)
    return params.literal(value, dialect)


def fill(template: str, values: dict[str, params.Value], dialect: str, number: int) -> str:
    """Replace every ``{{name}}`` with the dialect literal of its value."""
    return params.fill(template, values, number, lambda v: literal(v, dialect))


def render_query(number: int, dialect: str, sf: float) -> str:
    """Query ``number`` (Q15 in its WITH form) for ``dialect`` at scale factor ``sf``."""
    dialect = check_dialect(dialect)
    params.check_query_number(number)
    family = sql_dialect(dialect).family
    if family:
        return params.render_query(number, family, sf)
    template = override_text(number, dialect) or transpile(canonical_text(number), dialect)
    return fill(template, params.parameters(number, sf), dialect, number)


def query_source(number: int, dialect: str) -> str:
    """Where the text of query ``number`` comes from for ``dialect``."""
    if sql_dialect(dialect).family:
        return "engine"
    return "override" if override_text(number, dialect) is not None else "sqlglot"


def q15_view_statements(dialect: str, sf: float, stream: int) -> tuple[str, ...]:
    """Q15 as the spec writes it: create view revenue<stream>, select from it, drop it."""
    dialect = check_dialect(dialect)
    values: dict[str, params.Value] = {**params.parameters(15, sf)}
    out = []
    for template in _Q15_VIEW:
        template = template.replace("{{stream}}", str(int(stream)))
        out.append(fill(transpile(template, dialect), values, dialect, 15))
    return tuple(out)


def query_statements(number: int, dialect: str, sf: float, stream: int, q15: str = "with") -> QueryText:
    """The statements to run for query ``number`` in ``stream`` (several only for Q15 with ``q15="view"``)."""
    if q15 not in Q15_MODES:
        raise UsageError(f"unknown Q15 form '{q15}'", "use --q15 with (one statement) or --q15 view")
    if number == 15 and q15 == "view":
        return QueryText(15, q15_view_statements(dialect, sf, stream), "sqlglot")
    return QueryText(number, (render_query(number, dialect, sf),), query_source(number, dialect))
