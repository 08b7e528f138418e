"""The sqlite dialect (schema DDL and rendered queries) gives the bundled reference answers at SF 0.01."""

import shutil
import sqlite3
import subprocess

import pytest

from tdebench.workloads.tpch.answers import compare_answers, read_answer_csv, reference_dir
from tdebench.workloads.tpch.params import QUERY_NUMBERS, render_query
from tdebench.workloads.tpch.schema import TABLES, column_names, constraint_and_index_sql, create_table_sql

SF = 0.01


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    if shutil.which("tpchgen-cli") is None:
        pytest.skip("tpchgen-cli is not installed")
    data = tmp_path_factory.mktemp("tpch-sf0.01")
    subprocess.run(["tpchgen-cli", "-s", str(SF), "--output-dir", str(data)], check=True, capture_output=True)
    conn = sqlite3.connect(":memory:")
    for statement in create_table_sql("sqlite"):
        conn.execute(statement)
    for table in TABLES:
        names = column_names(table.name)
        insert = f"INSERT INTO {table.name} VALUES ({', '.join('?' * len(names))})"
        with (data / f"{table.name}.tbl").open(encoding="utf-8") as f:
            conn.executemany(insert, (line.rstrip("\n").removesuffix("|").split("|") for line in f))
    for statement in constraint_and_index_sql("sqlite"):
        conn.execute(statement)
    conn.commit()
    yield conn
    conn.close()


def test_types_follow_affinity(db):
    row = db.execute("SELECT typeof(l_orderkey), typeof(l_discount), typeof(l_shipdate) FROM lineitem LIMIT 1")
    assert row.fetchone() == ("integer", "real", "text")


@pytest.mark.parametrize("number", QUERY_NUMBERS)
def test_sqlite_answer_matches_reference(db, number):
    folder = reference_dir(SF)
    assert folder is not None
    _, expected = read_answer_csv(folder / f"q{number:02d}.csv")
    actual = db.execute(render_query(number, "sqlite", SF)).fetchall()
    assert compare_answers(number, expected, actual) == []
