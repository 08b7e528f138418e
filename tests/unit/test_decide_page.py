"""The decision page read back as a DBA sees it: every figure in summary.md equals the sub-runs' CSVs (the cost run's
report/overhead.csv, each switching run's report/switching.csv), index.html and the terminal show the same cells,
and ``tdebench report DECISION_DIR`` rebuilds the page from the directory alone."""

from __future__ import annotations

import csv
import io
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from rich.console import Console

from tdebench.cli.app import main
from tdebench.decide import build_page, load_decision, print_page
from tests.decisiondir import make_decision

COST = re.compile(r"^([+-]?\d+\.\d)% \[([+-]?\d+\.\d), ([+-]?\d+\.\d)\] (slower|faster|not resolved)$")
RATIO = re.compile(r"^(\d+\.\d\d)× \[(\d+\.\d\d), (\d+\.\d\d)\]( not resolved)?$")
UNITS = {"ms": 1e-3, "s": 1.0, "MiB": 2 ** 20, "GiB": 2 ** 30, "KiB": 2 ** 10}


@pytest.fixture(scope="module")
def decision(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = make_decision(tmp_path_factory.mktemp("page") / "d")
    build_page(path)
    return path


def md_tables(text: str) -> dict[str, list[list[list[str]]]]:
    """Per ``## `` section, its pipe tables as rows of cells (header first, the rule line left out)."""
    out: dict[str, list[list[list[str]]]] = {}
    section, current = "", None
    for line in text.splitlines():
        if line.startswith("## "):
            section, current = line[3:].split(" (")[0], None
        elif line.startswith("|"):
            if current is None:
                current = []
                out.setdefault(section, []).append(current)
            if not set(line) <= set("|-: "):
                current.append([c.strip() for c in line.strip("|").split(" | ")])
        else:
            current = None
    return out


def csv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def quantity(text: str) -> float:
    number, unit = text.split()
    return float(number.replace(",", "")) * UNITS[unit]


def one_decimal(x: str) -> str:
    text = f"{float(x):+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def test_cost_figures_equal_overhead_csv(decision: Path) -> None:
    overheads = csv_rows(decision / "cost" / "report" / "overhead.csv")
    [table] = md_tables((decision / "report" / "summary.md").read_text())["What it costs on your workload"]
    header, rows = table[0], table[1:]
    mechanisms = header[3:-1]
    checked = 0
    for row in rows:
        step = "total" if row[0].endswith("(total)") else row[0]
        for spec, cell in zip(mechanisms, row[3:-1]):
            o = next(r for r in overheads if r["encryption"] == spec and r["step"] == step and r["test"] == "sql"
                     and r["metric"] == "elapsed")
            pct, low, high, word = COST.match(cell).groups()
            assert (pct, low, high) == (one_decimal(o["overhead_pct"]).replace("0.0", "0.0"),
                                        one_decimal(o["ci_low_pct"]), one_decimal(o["ci_high_pct"]))
            spans = float(o["ci_low_pct"]) <= 0 <= float(o["ci_high_pct"])
            assert (word == "not resolved") == spans
            assert row[-1] == f"n = {o['n']} blocks"
            checked += 1
        plain = next(r for r in overheads if r["step"] == step and r["test"] == "sql")
        assert quantity(row[2]) == pytest.approx(float(plain["median_plain"]), rel=5e-3)
    assert checked == len(rows) * len(mechanisms) == 12


def test_switching_figures_equal_switching_csv(decision: Path) -> None:
    [table] = md_tables((decision / "report" / "summary.md").read_text())["Switching it on"]
    header = table[0]
    by_spec = {row[0]: dict(zip(header, row)) for row in table[1:]}
    assert set(by_spec) == {"tde:aes-256-ctr", "fs:fscrypt"}
    for spec, run in (("tde:aes-256-ctr", "switch-tde-aes-256-ctr"), ("fs:fscrypt", "switch-fs-fscrypt")):
        [row] = [r for r in csv_rows(decision / run / "report" / "switching.csv") if r["action"] == "on"]
        shown = by_spec[spec]
        assert quantity(shown["time to done (offline: downtime)"]) == pytest.approx(float(row["time_to_done_s"]),
                                                                                 rel=1e-3)
        if row["tpm_during_ratio"]:
            mean, low, high, _ = RATIO.match(shown["throughput meanwhile ÷ before"]).groups()
            assert (mean, low, high) == tuple(f"{float(row[k]):.2f}" for k in (
                "tpm_during_ratio", "tpm_during_ci95_low", "tpm_during_ci95_high"))
        if row["peak_extra_bytes"]:
            assert f"{float(row['peak_extra_bytes']) / 2 ** 20:.1f} MiB" == shown["peak extra disk"]
    assert by_spec["tde:aes-256-ctr"]["restart"] == "2.200 s"  # the median of its restart_seconds rows


def test_the_answer_repeats_the_cost_tables_figures(decision: Path) -> None:
    tables = md_tables((decision / "report" / "summary.md").read_text())
    [answer] = tables["The answer"]
    [cost] = tables["What it costs on your workload"]
    total = dict(zip(cost[0], cost[1]))
    for row in answer[1:]:
        assert row[4] == total[row[1]]
    assert [row[1] for row in answer[1:]] == ["fs:fscrypt", "tde:aes-256-ctr", "fs:gocryptfs"]


class _Cells(HTMLParser):
    """The text of every table cell of a page, per table, pills and text joined as the other views show them."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_html_and_terminal_show_the_same_cells(decision: Path) -> None:
    md = [t for tables in md_tables((decision / "report" / "summary.md").read_text()).values() for t in tables]
    parser = _Cells()
    parser.feed((decision / "report" / "index.html").read_text())
    html = [[row for row in t if row] for t in parser.tables]
    shown = [t for t in html if t]
    assert [t for t in shown if t[0][0] != "attacker" or t[0][1] != "verdict"][:len(md)] == [
        [[c.replace("\\|", "|") for c in row] for row in t] for t in md if t[0][:2] != ["attacker", "verdict"]]
    console = Console(file=io.StringIO(), width=1000, record=True)
    print_page(load_decision(decision), console)
    text = console.export_text()
    cost = md_tables((decision / "report" / "summary.md").read_text())["What it costs on your workload"][0]
    assert all(cell in text for row in cost for cell in row)


def test_report_command_rebuilds_the_page(decision: Path, capfd: pytest.CaptureFixture[str]) -> None:
    page = decision / "report" / "index.html"
    page.unlink()
    with pytest.raises(SystemExit) as info:
        main(["report", str(decision)])
    assert info.value.code == 0 and page.is_file()
    assert "Which encryption at rest for orders-sql on mariadb?" in page.read_text()
    assert "<script" not in page.read_text().lower()
