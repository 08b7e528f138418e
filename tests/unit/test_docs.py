"""The documentation checked against the code (as sqlite-utils tests its docs against its command registry):
a page per registered engine and workload, docs/result-format.md's checker catching what it does not list, and
the repository speaking of itself alone: no path of a development machine, and no word of how its work was
organised (numbers of a tracker outside it, when and by whom the work was done, folders outside the repository),
in src, tests, docs, benchmarks, scripts or the README."""

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
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|root|home)/|/[\w./-]+\.lock\b|(?<![\w/.*-])/t[m]p/(?!tdebench-)")
# how the work on the repository was organised, which no reader has: the numbers of a tracker that is not the
# repository's, folders beside the clone (the studies and facts are cited by title instead), the sittings of work
# and who else ran what beside it (a database's "session" is fine: only these phrases are refused)
ORGANISATION = re.compile(
    r"(?i:\bissues? ?#?\d+)|\.\./shared\b|\bshared/(?:seeds|facts)\b|\b(?:seeds|facts)/(?:\d{3}\b|[\w-]+\.(?:md|txt)\b)"
    r"|(?i:\bsessions? \d+\b|\b(?:this|previous|earlier|next|last|development|work|working) session'?s?\b)"
    r"|(?i:\bwork(?:ing)? periods?\b|\bdevelopment brief\b|\bmust-show\b)|\bbrief's\b|\bagents?\b|\bthe lead(?:'s)?\b")
# where they are looked for: everything the repository ships and documents itself with
CHECKED = ("src", "tests", "docs", "benchmarks", "scripts", "README.md")


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


def offending_lines(name: str, text: str) -> list[str]:
    """``name:line: [what] text`` of every line naming a machine path or how the work was organised."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        match = MACHINE_PATH.search(line) or ORGANISATION.search(line)
        if match:
            found.append(f"{name}:{n}: [{match.group(0)}] {line.strip()}")
    return found


def test_the_repository_speaks_of_itself_alone():
    files = subprocess.run(["git", "ls-files", *CHECKED], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    assert len(files) > 300 and any(f.startswith("src/") for f in files), "git listed too few files to be the repo"
    found = []
    for name in files:
        path = ROOT / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += offending_lines(name, text)
    assert not found, ("name the repo's command or a placeholder instead of a machine's path; say what is true of "
                       "the code, not how its work was organised; cite a study by title, authors and year:\n"
                       + "\n".join(found))


@pytest.mark.parametrize("planted", [
    "measured for iss" + "ue #23", "see Iss" + "ue 41 item 2", "the seeds in ../sh" + "ared/seeds/",
    "as fac" + "ts/encryption.md says", "Study 001 (see" + "ds/001)", "left 0 in sess" + "ion 12",
    "while the development sess" + "ion ran its tests", "five other age" + "nts ran test suites",
    "the le" + "ad's larger run", "the bri" + "ef's limit", "its offline must" + "-show", "/wo" + "rk/main/src",
])
def test_the_check_catches_a_planted_word(planted):
    assert offending_lines("planted.md", f"text\n{planted} here\n") != []


def test_the_check_leaves_database_words_alone():
    text = ("one session per query stream; SET SESSION foreign_key_checks; the session's previous statement;\n"
            "SQL Server Agent; helper functions; it can lead planners astray; gocryptfs's bug "
            "https://github.com/rfjakob/gocryptfs/issues/892; seeds derived from --seed; results/tdebench-x\n")
    assert offending_lines("fine.md", text) == []
