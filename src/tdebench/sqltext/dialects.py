"""The SQL dialects tdebench reads and writes, and sqlglot's name for each: the one place where a family of
tdebench's own SQL texts (``sqlite``, ``mariadb``, ``postgres``) or a server's dialect meets sqlglot's."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SqlDialect:
    """A server's SQL dialect as tdebench writes SQL for it (manual-mode scripts, translated targets)."""

    #: tdebench's name for it
    name: str
    #: sqlglot's name for it
    sqlglot: str
    #: the engine name runs imported from its logs are recorded under (manual mode)
    engine: str
    #: the family of tdebench's own SQL texts (:data:`tdebench.api.dialect.FAMILIES`) it runs as they are,
    #: "" when canonical SQL is transpiled for it
    family: str = ""
    #: the family whose DDL it runs (MySQL runs MariaDB's InnoDB DDL), "" when canonical DDL is transpiled
    schema_family: str = ""
    #: how its date literals are written (``{}``: ``YYYY-MM-DD``)
    date_literal: str = "DATE '{}'"
    #: the URL scheme of ``tdebench run --target`` for it, "" when none
    url_scheme: str = ""
    #: dates are ISO texts read by date functions (SQLite): standard date expressions are rewritten for them
    dates_as_text: bool = False
    #: its family's engines read the standard forms of tdebench's canonical texts as written (``EXTRACT``,
    #: ``SUBSTRING ... FROM ... FOR``); False (SQLite): a canonical text is rewritten for it where sqlglot writes
    #: it differently
    standard_forms: bool = True


#: every dialect tdebench writes SQL for, in the order help texts list them
SQL_DIALECTS: tuple[SqlDialect, ...] = (
    SqlDialect("tsql", "tsql", "sqlserver", date_literal="CAST('{}' AS DATE)", url_scheme="mssql"),
    SqlDialect("oracle", "oracle", "oracle", url_scheme="oracle"),
    SqlDialect("mysql", "mysql", "mysql", schema_family="mariadb", url_scheme="mysql"),
    SqlDialect("mariadb", "mysql", "mariadb", family="mariadb", schema_family="mariadb", url_scheme="mariadb"),
    SqlDialect("postgres", "postgres", "postgres", family="postgres", schema_family="postgres",
               url_scheme="postgresql"),
    SqlDialect("sqlite", "sqlite", "sqlite", family="sqlite", schema_family="sqlite", dates_as_text=True,
               standard_forms=False),
)
_BY_NAME = {d.name: d for d in SQL_DIALECTS}
#: tdebench's dialect names -> sqlglot's
SQLGLOT_OF = {d.name: d.sqlglot for d in SQL_DIALECTS}


def sql_dialect(name: str) -> SqlDialect:
    """The dialect called ``name``; ValueError naming the known ones otherwise."""
    if name not in _BY_NAME:
        raise ValueError(f"unknown SQL dialect {name!r}; known: {', '.join(_BY_NAME)}")
    return _BY_NAME[name]


def family_dialect(family: str) -> SqlDialect:
    """The dialect whose engines run the texts of SQL family ``family`` (:data:`tdebench.api.dialect.FAMILIES`);
    ValueError naming the families otherwise."""
    for dialect in SQL_DIALECTS:
        if dialect.family == family:
            return dialect
    raise ValueError(f"unknown SQL family {family!r}; known: {', '.join(d.family for d in SQL_DIALECTS if d.family)}")


def family_sqlglot(family: str) -> str:
    """sqlglot's dialect for the SQL family ``family``; ValueError naming the families otherwise."""
    return family_dialect(family).sqlglot
