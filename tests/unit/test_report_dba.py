"""A report a DBA reads: each defect a new user met in a report, as a test (warnings, the verification table,
footnotes, one verdict vocabulary, n with its unit)."""

from __future__ import annotations

from pathlib import Path

from tdebench.report import build_report
from tests.unit.test_crud_report import _write_run as write_crud_run
from tests.unit.test_one_number import write_precision_run, write_tpcc_rounds_run


def _md(run: Path) -> str:
    return build_report(run).with_name("summary.md").read_text()


def _section(md: str, title: str) -> str:
    return next(s for s in md.split("\n## ") if s.startswith(title))


# footnotes belong to the run's workload ----------------------------------------------------------------------
def test_a_non_tpch_runs_footnotes_speak_of_its_own_workload(tmp_path: Path) -> None:
    crud = tmp_path / "crud"
    write_crud_run(crud)
    floor = _section(_md(crud), "Cipher floor")
    assert "Cipher floor = bytes decrypted" in floor
    assert "22 queries" not in floor and "power test" not in floor
    tpcc = tmp_path / "tpcc"
    write_tpcc_rounds_run(tpcc)
    methods = _section(_md(tpcc), "Methods")
    assert "Query schedule" in methods and "round" in methods
    assert "22 queries" not in methods and "power test" not in methods and "power total" not in methods
    tpch = tmp_path / "tpch"
    write_precision_run(tpch, second=("mariadb-tde-aes-256-ctr", "tde:aes-256-ctr", 1.04))
    assert "one pass over the 22 queries is one paired observation of the power total" in _md(tpch)
