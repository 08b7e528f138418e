"""Query texts for the manual-mode dialects: they parse in their dialect and keep TPC-H's semantics."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlglot

from tdebench.errors import UsageError
from tdebench.sqltext.dialects import SQL_DIALECTS, SQLGLOT_OF
from tdebench.workloads.tpch import dialects, params, templates
from tdebench.workloads.tpch.dialects import q15_view_statements, query_statements, render_query

QUERIES = range(1, 23)


@pytest.mark.parametrize("dialect", ["tsql", "oracle", "mysql"])
@pytest.mark.parametrize("number", QUERIES)
def test_every_query_parses_in_its_dialect(dialect: str, number: int) -> None:
    sql = render_query(number, dialect, 1)
    assert "{{" not in sql and "tdebenchparam" not in sql
    sqlglot.parse_one(sql, read=dialect)


@pytest.mark.parametrize("dialect", ["tsql", "oracle", "mysql", "mariadb", "postgres"])
def test_q15_view_statements_parse(dialect: str) -> None:
    create, select, drop = q15_view_statements(dialect, 1, 3)
    for sql in (create, select, drop):
        sqlglot.parse_one(sql, read=SQLGLOT_OF[dialect])
    assert "revenue3" in create and "revenue3" in select and drop.upper() == "DROP VIEW REVENUE3"
    assert ("CREATE OR ALTER VIEW" if dialect == "tsql" else "CREATE OR REPLACE VIEW") in create


@pytest.mark.parametrize("dialect", ["mariadb", "postgres"])
@pytest.mark.parametrize("number", QUERIES)
def test_engine_dialects_get_the_text_the_engines_run(dialect: str, number: int) -> None:
    assert render_query(number, dialect, 0.1) == params.render_query(number, dialect, 0.1)


@pytest.mark.parametrize("number,rows", [(2, 100), (3, 10), (10, 20), (18, 100), (21, 100)])
def test_row_limits_per_dialect(number: int, rows: int) -> None:
    assert re.search(rf"\bTOP {rows}\b", render_query(number, "tsql", 1))
    assert f"FETCH FIRST {rows} ROWS ONLY" in render_query(number, "oracle", 1)
    assert re.search(rf"\bLIMIT {rows}\b", render_query(number, "mysql", 1))
    assert "LIMIT" not in render_query(number, "tsql", 1) and "LIMIT" not in render_query(number, "oracle", 1)


def test_dates_per_dialect() -> None:
    tsql, oracle, mysql = (render_query(1, d, 1) for d in ("tsql", "oracle", "mysql"))
    assert "CAST('1998-09-02' AS DATE)" in tsql  # 1998-12-01 minus 90 days, computed in Python
    assert "DATE '1998-09-02'" in oracle and "CAST(" not in oracle  # no NLS_DATE_FORMAT dependence
    assert "DATE '1998-09-02'" in mysql
    assert "DATEPART(YEAR, l_shipdate)" in render_query(7, "tsql", 1)
    assert "EXTRACT(YEAR FROM l_shipdate)" in render_query(7, "oracle", 1)
    assert "SUBSTR(c_phone, 1, 2)" in render_query(22, "oracle", 1)
    assert "SUBSTRING(c_phone, 1, 2)" in render_query(22, "tsql", 1)


def test_oracle_table_aliases_have_no_as() -> None:
    sql = render_query(13, "oracle", 1)
    assert ") c_orders" in sql and " AS c_orders" not in sql
    assert "nation n1" in render_query(7, "oracle", 1)


@pytest.mark.parametrize("dialect", ["tsql", "oracle", "mysql"])
def test_no_null_ordering_emulation(dialect: str) -> None:
    for number in QUERIES:
        sql = render_query(number, dialect, 1)
        assert "IS NULL THEN 1" not in sql and "NULLS FIRST" not in sql and "NULLS LAST" not in sql
    assert re.search(r"ORDER BY\s+revenue DESC,\s+o_orderdate", render_query(3, "tsql", 1))


def test_parameters_follow_the_scale_factor() -> None:
    assert "* 0.00001" in render_query(11, "oracle", 10)
    assert "* 0.0001" in render_query(11, "tsql", 1)


def test_q15_forms() -> None:
    with_form = query_statements(15, "tsql", 1, 0, "with")
    view_form = query_statements(15, "tsql", 1, 0, "view")
    assert len(with_form.statements) == 1 and with_form.statements[0].startswith("WITH revenue")
    assert len(view_form.statements) == 3
    with pytest.raises(UsageError):
        query_statements(15, "tsql", 1, 0, "table")


def test_unknown_dialect_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown dialect"):
        render_query(1, "db2", 1)


def test_override_file_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "queries"
    (root / "oracle").mkdir(parents=True)
    (root / "sqlite").mkdir()
    (root / "q06.sql").write_text("select 1 from dual where x < {{date}}")
    (root / "q07.sql").write_text("select extract(year from {{date}})")
    (root / "oracle" / "q06.sql").write_text("SELECT /* override */ 2 FROM dual WHERE l_shipdate >= {{date}}")
    (root / "sqlite" / "q07.sql").write_text("SELECT /* override */ strftime('%Y', {{date}})")
    monkeypatch.setattr(templates, "queries_root", lambda: root)
    assert render_query(6, "oracle", 1) == "SELECT /* override */ 2 FROM dual WHERE l_shipdate >= DATE '1994-01-01'"
    assert dialects.query_source(6, "oracle") == "override"
    assert dialects.query_source(6, "tsql") == "sqlglot"
    assert params.query_text(7, "sqlite") == "SELECT /* override */ strftime('%Y', {{date}})"
    assert params.query_text(7, "mariadb") == "select extract(year from {{date}})"


def test_the_query_folder_holds_the_canonical_queries_and_no_copy() -> None:
    """The folder the code reads holds the 22 canonical queries; a per-dialect file is kept only for what sqlglot
    cannot derive from them, and parses in its dialect (none is needed today)."""
    root = Path(str(templates.queries_root()))
    assert sorted(p.name for p in root.glob("q*.sql")) == [f"q{n:02d}.sql" for n in QUERIES], root
    for path in sorted(root.glob("*/q*.sql")):
        dialect, number = path.parent.name, int(path.stem[1:])
        assert dialect in {d.name for d in SQL_DIALECTS}, f"{path}: no dialect reads it"
        text = path.read_text().strip()
        assert text != templates.transpile(templates.canonical_text(number), dialect), f"{path}: sqlglot derives it"
        filled = params.fill(text, params.parameters(number, 1), number, lambda v: dialects.literal(v, dialect))
        assert sqlglot.parse_one(filled, read=SQLGLOT_OF[dialect]) is not None, path


@pytest.mark.parametrize("number", QUERIES)
def test_sqlite_gets_the_canonical_text_rewritten_where_it_lacks_a_standard_form(number: int) -> None:
    """SQLite runs each canonical query as written, except those with EXTRACT or SUBSTRING ... FROM ... FOR, which
    it gets as sqlglot writes them for SQLite (the answers are checked in test_tpch_sqlite_answers.py)."""
    canonical, text = templates.canonical_text(number), params.query_text(number, "sqlite")
    standard_only = re.search(r"\bextract\s*\(|\bsubstring\s*\(", canonical, re.I) is None
    assert (text == canonical) is standard_only, text
    assert re.search(r"\bextract\s*\(|\bsubstring\s*\([^)]*\bfrom\b", text, re.I) is None, text
    sql = params.render_query(number, "sqlite", 1)
    assert "{{" not in sql and "tdebenchparam" not in sql
    assert sqlglot.parse_one(sql, read="sqlite") is not None
