"""docs/result-format.md read as the list of files a run may write and the columns of each CSV, and a check of a
run directory against it (used by tests/engines/test_matrix.py on every run it makes)."""

from __future__ import annotations

import csv
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "result-format.md"
# CSVs whose header is data, not a format: a query's own result columns
DATA_HEADERS = ("answers/",)


@dataclass
class ResultFormat:
    """The files (name patterns: ``<N>``, ``<NNN>`` a number, any other ``<...>`` any part of a name) and, per CSV
    pattern, the documented columns."""

    files: dict[str, re.Pattern[str]] = field(default_factory=dict)
    columns: dict[str, set[str]] = field(default_factory=dict)

    def pattern_of(self, relative: str) -> str | None:
        return next((p for p, rx in self.files.items() if rx.fullmatch(relative)), None)


def _first_cell_names(row: str) -> list[str]:
    cells = row.strip().strip("|").split("|")
    return re.findall(r"`([^`]+)`", cells[0]) if cells else []


def _tables_after(lines: list[str], start: int) -> list[str]:
    """The rows of the first table after line ``start`` (before the next heading), header and rule left out."""
    rows: list[str] = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    return rows[2:]


def read_format(text: str) -> ResultFormat:
    """Parse the page: the table headed ``| file | content |`` and the sections named after a CSV pattern."""
    lines = text.splitlines()
    fmt = ResultFormat()
    header = next(i for i, line in enumerate(lines) if re.match(r"\|\s*file\s*\|\s*content\s*\|", line))
    for row in _tables_after(lines, header - 1):
        for name in _first_cell_names(row)[:1]:
            rx = re.escape(name).replace(r"\<", "<").replace(r"\>", ">")
            rx = re.sub(r"<N+>", r"\\d+", rx)  # <N>, <NNN>: a number
            fmt.files[name] = re.compile(re.sub(r"<[^>/]+>", r"[^/]+", rx))
    for i, line in enumerate(lines):
        title = html.unescape(line[3:].strip()) if line.startswith("## ") else ""
        if title in fmt.files and title.endswith(".csv"):
            fmt.columns[title] = {n for row in _tables_after(lines, i) for n in _first_cell_names(row)}
    return fmt


def undocumented(run_dir: Path, doc: Path = DOC) -> list[str]:
    """Every file of ``run_dir`` that the page does not list, and every CSV column it does not document."""
    fmt = read_format(doc.read_text(encoding="utf-8"))
    problems = []
    for path in sorted(p for p in run_dir.rglob("*") if p.is_file()):
        relative = path.relative_to(run_dir).as_posix()
        pattern = fmt.pattern_of(relative)
        if pattern is None:
            problems.append(f"{relative}: no row of the file table of {doc.name} matches it")
            continue
        if path.suffix != ".csv" or relative.startswith(DATA_HEADERS):
            continue
        if pattern not in fmt.columns:
            problems.append(f"{relative}: {doc.name} has no section '## {pattern}' listing its columns")
            continue
        with open(path, newline="", encoding="utf-8") as handle:
            header = next(csv.reader(handle), [])
        problems += [f"{relative}: column '{c}' is not in section '## {pattern}' of {doc.name}"
                     for c in header if c not in fmt.columns[pattern]]
    return problems
