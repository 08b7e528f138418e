"""docs/examples/*.toml for the tests: which test runs each one end to end, and test-sized copies of them.

Every example is run end to end by exactly one test: by ``test_runner.py::test_examples_run``, or, when a
workload's own end-to-end test needs that very run (same engine, configs and workload), by that test, which
then also makes the example's checks (:func:`check_example_run`). ``test_runner.py`` checks the mapping.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.resultdoc import undocumented

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*.toml"))

# example (file stem) -> (test module, test or fixture function) that runs it end to end
RUN_BY_OTHER_TESTS: dict[str, tuple[str, str]] = {
    "sqlite-power": ("tests.e2e.test_run_sqlite", "run_dir"),
    "tpcc-sqlite": ("tests.e2e.test_tpcc_e2e", "test_sqlite"),
    "tpcc-mariadb": ("tests.e2e.test_tpcc_e2e", "mariadb_run"),
    "crud-mariadb": ("tests.e2e.test_crud", "test_mariadb_tde_crud"),
    "orders-sql": ("tests.e2e.test_sql_workload", "test_the_example_on_sqlite"),
    "mariadb-memory-curve": ("tests.e2e.test_memory_curve", "test_mariadb_memory_curve_example"),
    "layers": ("tests.e2e.test_fscrypt", "test_layers_example"),
    "sqlite-full-tpch": ("tests.e2e.test_runner", "test_throughput_and_refresh_metrics"),
}


def example(stem: str) -> Path:
    path = ROOT / "docs" / "examples" / f"{stem}.toml"
    assert path.is_file(), f"{path} is gone: update tests/e2e/examples.py"
    return path


def validate(path: Path, scratch: Path) -> None:
    """The file exactly as shipped: parsed and validated by tdebench (plan and workload options), no run."""
    from tdebench.cli.run import load_plan_file
    from tdebench.results.rundir import RunDirectory
    from tdebench.workloads import make_workload

    plan, _ = load_plan_file(path)
    make_workload(plan, RunDirectory.create(scratch / f"validate-{path.stem}"))


def sized_copy(path: Path, directory: Path, **values: object) -> Path:
    """``path`` with the value of each ``key = ...`` line named in ``values`` replaced (e.g. a shorter
    ``duration``); every other byte of the file is kept. The original is checked with :func:`validate`."""
    text = path.read_text()
    for key, value in values.items():
        literal = json.dumps(value)  # str, int and lists of them are written the same way in TOML
        text, count = re.subn(rf"(?m)^({re.escape(key)}\s*=\s*).*$", lambda m: m.group(1) + literal, text)
        assert count == 1, f"{path.name}: expected one '{key} = ...' line to resize, found {count}"
    validate(path, directory)
    copy = directory / path.name
    copy.write_text(text)
    return copy


def check_example_run(out: Path) -> None:
    """What running an example must give: a completed run with its report."""
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed", manifest["status"]
    assert (out / "report" / "index.html").is_file(), "the example's run has no report"
    # every file and CSV column is in docs/result-format.md (a helper module: pytest does not rewrite its asserts,
    # so the message names what is missing)
    problems = undocumented(out)
    assert problems == [], problems
