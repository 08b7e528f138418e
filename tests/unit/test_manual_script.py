"""``tdebench script``: one script per stream, markers, timing on, per-dialect details, README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tdebench.errors import UsageError
from tdebench.workloads.tpch.dialects import render_query
from tdebench.manual.plan import plan_scripts
from tdebench.manual.script import stream_script, write_scripts
from tdebench.workloads.tpch import params
from tdebench.workloads.tpch.streams import stream_order

TIMING_ON = {"tsql": "SET STATISTICS TIME ON;", "oracle": "SET TIMING ON", "postgres": "\\timing on"}


@pytest.mark.parametrize("dialect", ["tsql", "oracle", "mysql", "mariadb", "postgres"])
def test_power_script_has_markers_in_stream_order(dialect: str) -> None:
    plan = plan_scripts(dialect, "power", None, 1)
    assert plan.streams == (0,)
    text = stream_script(plan, 0)
    begins = [int(q) for q in re.findall(r"tdebench:begin q(\d\d) stream 0", text)]
    ends = [int(q) for q in re.findall(r"tdebench:end q(\d\d) stream 0", text)]
    assert begins == ends == list(stream_order(0))
    assert "tdebench:script v1 dialect=%s test=power stream=0 sf=1 q15=with" % dialect in text
    assert "tdebench:stream-begin 0" in text and "tdebench:stream-end 0" in text
    if dialect in TIMING_ON:
        assert TIMING_ON[dialect] in text


def test_throughput_streams_follow_appendix_a(tmp_path: Path) -> None:
    plan = plan_scripts("oracle", "throughput", 3, 10)
    assert plan.streams == (1, 2, 3)
    paths = write_scripts(plan, tmp_path)
    assert [p.name for p in paths] == ["stream01.sql", "stream02.sql", "stream03.sql", "README.md"]
    for stream in plan.streams:
        text = (tmp_path / f"stream{stream:02d}.sql").read_text()
        found = [int(q) for q in re.findall(rf"tdebench:begin q(\d\d) stream {stream}\b", text)]
        assert found == list(stream_order(stream))
        assert f"SPOOL stream{stream:02d}.log" in text
    readme = (tmp_path / "README.md").read_text()
    assert "sqlplus" in readme and "at the same time" in readme and "wait" in readme


def test_default_throughput_streams_is_the_spec_minimum() -> None:
    assert plan_scripts("tsql", "throughput", None, 1).streams == (1, 2)
    assert plan_scripts("tsql", "throughput", None, 100).streams == (1, 2, 3, 4, 5)


def test_tsql_batches_and_q15_view() -> None:
    text = stream_script(plan_scripts("tsql", "power", None, 1, "view"), 0)
    q15 = text[text.index("tdebench:begin q15"):text.index("tdebench:end q15")]
    statements = [s for s in re.split(r"\nGO\n", q15)[1:] if s.strip() and "PRINT" not in s]
    assert len(statements) == 3  # CREATE OR ALTER VIEW, SELECT, DROP VIEW: each in its own batch
    assert statements[0].lstrip().startswith("CREATE OR ALTER VIEW revenue0")
    assert "PRINT 'tdebench:begin q14 stream 0';\nGO" in text
    assert "SYSUTCDATETIME()" in text


def test_oracle_statements_have_no_blank_lines() -> None:
    text = stream_script(plan_scripts("oracle", "power", None, 1, "view"), 0)
    assert "SET SQLBLANKLINES ON" in text and "SET DEFINE OFF" in text and text.rstrip().endswith("EXIT")
    body = text[text.index("PROMPT tdebench:begin"):]
    for block in re.split(r"^PROMPT .*$", body, flags=re.M):
        statement = block.strip().split("\n\n")[0]
        assert "\n\n" not in statement
    assert "PROMPT tdebench:begin q14 stream 0" in text


def _statements_between_markers(text: str, dialect: str) -> dict[int, list[str]]:
    """The statements a client sends between each query's markers (comments and markers removed)."""
    begin = {"mysql": "SELECT 'tdebench:begin q{n} stream 0' AS tdebench;", "mariadb":
             "SELECT 'tdebench:begin q{n} stream 0' AS tdebench;", "postgres": "\\echo tdebench:begin q{n} stream 0"}
    end = {k: v.replace("begin", "end") for k, v in begin.items()}
    out = {}
    for number in range(1, 23):
        n = f"{number:02d}"
        chunk = text[text.index(begin[dialect].format(n=n)) + len(begin[dialect].format(n=n)):
                     text.index(end[dialect].format(n=n))]
        out[number] = [s.strip() for s in chunk.split(";\n") if s.strip()]
    return out


@pytest.mark.parametrize("dialect", ["mysql", "mariadb", "postgres"])
def test_power_script_runs_the_engine_texts(dialect: str) -> None:
    text = stream_script(plan_scripts(dialect, "power", None, 1), 0)
    statements = _statements_between_markers(text, dialect)
    assert sorted(statements) == list(range(1, 23))
    for number, found in statements.items():
        expected = params.render_query(number, dialect, 1) if dialect != "mysql" else render_query(number, "mysql", 1)
        lines = [line.rstrip() for line in expected.strip().rstrip(";").splitlines() if line.strip()]
        assert found == ["\n".join(lines)], f"q{number:02d}"


def test_readme_says_how_to_run_and_import(tmp_path: Path) -> None:
    write_scripts(plan_scripts("mysql", "power", None, 1), tmp_path)
    readme = (tmp_path / "README.md").read_text()
    assert "mysql -vvv --table --force --unbuffered --show-warnings" in readme
    assert "tdebench import --dialect mysql --config plain --encryption none" in readme
    assert "AES-256 only" in readme


@pytest.mark.parametrize("kwargs,match", [
    ({"dialect": "db2"}, "unknown dialect"),
    ({"test": "refresh"}, "unknown test"),
    ({"sf": 0}, "scale factor"),
    ({"test": "throughput", "streams": 0}, "--streams"),
    ({"q15": "table"}, "Q15"),
])
def test_bad_options_are_usage_errors(kwargs: dict, match: str) -> None:
    args = {"dialect": "tsql", "test": "power", "streams": None, "sf": 1.0, "q15": "with", **kwargs}
    with pytest.raises(UsageError, match=match):
        plan_scripts(**args)
