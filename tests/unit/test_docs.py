"""The documentation checked against the code (as sqlite-utils tests its docs against its command registry):
a page per registered engine and workload, docs/result-format.md's checker catching what it does not list, and
no path of a development machine in docs, benchmarks, tests or the README."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tdebench.engines import engine_names
from tdebench.workloads import workload_names
from tests.resultdoc import DOC, read_format, undocumented

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_RUN = ROOT / "tests" / "fixtures" / "rundir_sqlite"
# a development machine's own places: its work tree and home directories, lock files, scratch folders in /tmp (the
# names tdebench itself makes there, tdebench-*, are the same on every machine)
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|root|home)/|/[\w./-]+\.lock\b|(?<![\w/.-])/t[m]p/(?!tdebench-)")


@pytest.mark.parametrize("name", engine_names())
def test_every_engine_has_its_page(name):
    page = ROOT / "docs" / "engines" / f"{name}.md"
    assert page.is_file(), f"engine {name} is registered but has no {page.relative_to(ROOT)}"
    assert f"`{name}`" in page.read_text(), f"{page.relative_to(ROOT)} never names the engine `{name}`"


@pytest.mark.parametrize("name", workload_names())
def test_every_workload_has_its_page(name):
    page = ROOT / "docs" / "workloads" / f"{name}.md"
    assert page.is_file(), f"workload {name} is registered but has no {page.relative_to(ROOT)}"
    assert f"--workload {name}" in page.read_text(), f"{page.relative_to(ROOT)} never shows `--workload {name}`"


def _fixture_run(tmp_path: Path) -> Path:
    """A copy of the fixture run's own files (the run directory format, without the script that made it)."""
    run = tmp_path / "run"
    run.mkdir()
    for name in ("manifest.json", "measurements.csv", "verification.json"):
        shutil.copy(FIXTURE_RUN / name, run / name)
    return run


def test_result_format_lists_the_files_and_columns_a_run_writes():
    fmt = read_format(DOC.read_text(encoding="utf-8"))
    assert {"manifest.json", "measurements.csv", "verification.json", "report/anova.csv"} <= set(fmt.files)
    assert "started_at" in fmt.columns["measurements.csv"] and "kind" in fmt.columns["samples/<config>/block<NNN>.csv"]


def test_result_format_check_passes_a_run_and_catches_what_the_page_lacks(tmp_path):
    run = _fixture_run(tmp_path)
    assert undocumented(run) == []
    measurements = run / "measurements.csv"
    lines = measurements.read_text().splitlines()
    measurements.write_text("\n".join([lines[0] + ",planted_column", *(line + ",1" for line in lines[1:])]) + "\n")
    (run / "report").mkdir()
    (run / "report" / "planted.csv").write_text("a,b\n1,2\n")
    problems = undocumented(run)
    assert problems == ["measurements.csv: column 'planted_column' is not in section '## measurements.csv' of "
                        "result-format.md",
                        "report/planted.csv: no row of the file table of result-format.md matches it"], problems


def test_no_doc_benchmark_or_test_names_a_path_of_a_development_machine():
    files = subprocess.run(["git", "ls-files", "docs", "benchmarks", "tests", "README.md"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    found = []
    for name in files:
        path = ROOT / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{name}:{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1)
                  if MACHINE_PATH.search(line)]
    assert not found, "name the repo's command or a placeholder instead:\n" + "\n".join(found)
