"""``tdebench run --workload sql``: a malformed workload directory is refused with exit 2 and one line naming the
file and the fix, before anything is created or provisioned (no run directory, no work directory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.refusal import refused_before_work
from tests.sqlworkload import make_workload_dir

pytestmark = pytest.mark.usefixtures("no_work_possible")


def refused(capfd, tmp_path, *args: str) -> str:
    """``tdebench run ARGS`` refused before any work (:func:`tests.cli.refusal.refused_before_work`)."""
    return refused_before_work(capfd, tmp_path, "run", *args)


@pytest.mark.parametrize("change, fragments", [
    (lambda r: (r / "schema.sql").unlink(), ["shop/schema.sql: is missing"]),
    (lambda r: (r / "queries" / "notes.sql").write_text("SELECT id\nFROM customers WHERE\n"),
     ["shop/queries/notes.sql: syntax error", "line 2"]),
    (lambda r: (r / "data" / "customers.csv").write_text("id,name,city,note\n1,Ada,London,x\n2,Bob,Paris\n"),
     ["shop/data/customers.csv: line 3: 3 fields, expected 4"]),
    (lambda r: (r / "queries" / "notes.pg.sql").write_text("SELECT 1"),
     ["shop/queries/notes.pg.sql: unknown dialect override 'pg'"]),
], ids=["missing-schema", "syntax-error", "csv-column-count", "unknown-override"])
def test_malformed_directory(change, fragments, tmp_path, capfd):
    shop = make_workload_dir(tmp_path / "shop")
    change(shop)
    line = refused(capfd, tmp_path, "--workload", "sql", "--workload-dir", "shop")
    assert all(f in line for f in fragments), line


def test_the_directory_is_required(tmp_path, capfd):
    line = refused(capfd, tmp_path, "--workload", "sql")
    assert "needs the directory of your workload" in line and "--workload-dir" in line


def test_sql_of_an_engine_family_is_checked_when_the_plan_is_built(tmp_path, capfd):
    shop = make_workload_dir(tmp_path / "shop")
    (shop / "queries" / "notes.sql").write_text("SELECT id FROM customers WHERE id = 1 FOR UPDATE")  # no SQLite
    line = refused(capfd, tmp_path, "--workload", "sql", "--workload-dir", "shop", "--engine", "sqlite")
    assert "shop/queries/notes.sql: cannot be rewritten for sqlite" in line and "queries/notes.sqlite.sql" in line


def test_snapshot_restore_needs_the_snapshot_reset(tmp_path, capfd):
    shop = make_workload_dir(tmp_path / "shop", toml='[writes]\nrestore = "snapshot"\n')
    (shop / "writes" / "add_order.undo.sql").unlink()
    line = refused(capfd, tmp_path, "--workload", "sql", "--workload-dir", "shop")
    assert "needs" in line and "--reset snapshot" in line


def test_experiment_file_dir_is_relative_to_the_file(tmp_path, capfd):
    """A file's ``[run.options] dir`` is found next to the file, whatever the current directory; the flag
    --workload-dir overrides it."""
    from tdebench.cli.run import load_plan_file

    folder = tmp_path / "exp"
    make_workload_dir(folder / "shop")
    (folder / "x.toml").write_text('[run]\nworkload = "sql"\n[run.options]\ndir = "shop"\n'
                                   '[[engines]]\nname = "sqlite"\n')
    plan, _ = load_plan_file(folder / "x.toml")
    assert plan.workload_options["dir"] == str((folder / "shop").resolve())
    other = make_workload_dir(tmp_path / "other")
    plan, _ = load_plan_file(folder / "x.toml", options={"dir": str(other)})
    assert plan.workload_options["dir"] == str(other.resolve())
    (folder / "shop" / "schema.sql").unlink()
    line = refused(capfd, tmp_path, str(folder / "x.toml"))
    assert "exp/shop/schema.sql: is missing" in line
