"""The terminal summary reads measurements.csv through the same loader as the report."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path
from statistics import median

import pytest
from rich.console import Console

from tdebench.cli.summary import build_summary
from tdebench.results.rundir import COLUMNS
from tdebench.stats.load import SeriesKey, load_measurements

FIXTURE_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "rundir_sqlite"
PLAIN = "sqlite-none"


def render(run: Path) -> str:
    console = Console(record=True, width=200, color_system=None)
    console.print(build_summary(run))
    return console.export_text()


def totals_row(text: str, label: str) -> list[str]:
    """The cells of ``label``'s row in the power-test totals table (the first table)."""
    line = next(line for line in text.splitlines() if line.startswith(f"│ {label} "))
    return [cell.strip() for cell in line.strip("│").split("│")]


def append_rows(run: Path, *rows: dict[str, str]) -> None:
    template = next(r for r in csv.DictReader(open(run / "measurements.csv", newline="", encoding="utf-8"))
                    if r["test"] == "power" and r["config"] == PLAIN and r["step"] == "total")
    with open(run / "measurements.csv", "a", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        for row in rows:
            writer.writerow({**template, **row})


@pytest.fixture
def run(tmp_path: Path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(FIXTURE_RUN, target)
    return target


def test_fixture_summary_is_unchanged(run: Path) -> None:
    text = render(run)
    assert totals_row(text, PLAIN)[:4] == [PLAIN, "3", "0.586", "0.576–0.615"]
    # the report's estimate and interval (geometric mean of the paired ratios, t-interval at n = 3), not the
    # ratio of medians with min…max the terminal once showed (+11.1% (+9.1…+14.1))
    assert totals_row(text, "sqlite-sqlcipher-aes-256-cbc")[4] == "+10.3% (7.1–13.6%)"


def test_summary_keeps_the_rows_the_report_keeps(run: Path) -> None:
    """A block-0 row marked ok, an aborted row, a failed row and a value that is not a number: the summary
    counts exactly the values the report's loader keeps."""
    append_rows(run,
                {"block": "0", "trial": "0", "value": "99.0", "status": "ok"},       # warm-up block
                {"block": "3", "trial": "3", "value": "77.0", "status": "aborted"},  # redone after a resume
                {"block": "3", "trial": "3", "value": "55.0", "status": "failed"},
                {"block": "3", "trial": "3", "value": "", "status": "ok"})           # nothing measured
    kept = load_measurements(run).series[SeriesKey("sqlite", PLAIN, "tpch", "power", "total", "elapsed")].values
    row = totals_row(render(run), PLAIN)
    assert row[1] == str(len(kept)) == "3"
    assert row[2] == f"{median(kept):.3f}" == "0.586"
