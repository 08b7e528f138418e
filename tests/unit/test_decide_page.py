"""The decision page read back as a DBA sees it: every figure in summary.md equals the sub-runs' CSVs (the cost run's
report/overhead.csv, each switching run's report/switching.csv), index.html and the terminal show the same cells,
and ``tdebench report DECISION_DIR`` rebuilds the page from the directory alone."""

from __future__ import annotations

import io
from html.parser import HTMLParser
from pathlib import Path

import pytest
from rich.console import Console

from tdebench.cli.app import main
from tdebench.decide import build_page, load_decision, print_page
from tests.decidepage import check_cost, check_switching, md_tables, page_tables
from tests.decisiondir import make_decision
from tests.unit.test_report_chromium import BAD_LOG, CHROMIUM, chromium


@pytest.fixture(scope="module")
def decision(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = make_decision(tmp_path_factory.mktemp("page") / "d")
    build_page(path)
    return path


def test_cost_figures_equal_overhead_csv(decision: Path) -> None:
    assert check_cost(decision) == 4 * 3 * 2  # each figure's overhead, then the time it adds


def test_switching_figures_equal_switching_csv(decision: Path) -> None:
    assert check_switching(decision) == 2
    [table] = page_tables(decision)["Switching it on"]
    by_spec = {row[0]: dict(zip(table[0], row)) for row in table[1:]}
    assert by_spec["tde:aes-256-ctr"]["restart"] == "2.200 s"  # the median of its restart_seconds rows
    assert by_spec["fs:fscrypt"]["method"] == "offline (service stopped)"


def test_the_answer_repeats_the_cost_tables_figures(decision: Path) -> None:
    tables = page_tables(decision)
    [answer] = tables["The answer"]
    cost, added = tables["What it costs on your workload"]
    total = dict(zip(cost[0], cost[1]))
    assert added[0] == ["figure", "tde:aes-256-ctr", "fs:fscrypt", "fs:gocryptfs"]
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


@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed (apt install chromium)")
def test_the_page_renders_in_chromium(decision: Path, tmp_path: Path) -> None:
    from PIL import Image

    png = tmp_path / "page.png"
    proc = chromium(f"--screenshot={png}", "--window-size=1400,2400", (decision / "report" / "index.html").as_uri(),
                    profile=tmp_path / "profile")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [line for line in proc.stderr.splitlines() if BAD_LOG.search(line)] == []
    with Image.open(png) as img:
        colors = img.convert("RGB").getcolors(maxcolors=1_000_000)
        assert colors is None or len(colors) > 50, "screenshot is (nearly) one color"
    dom = chromium("--dump-dom", (decision / "report" / "index.html").as_uri(), profile=tmp_path / "profile2").stdout
    assert "<script" not in dom.lower() and "fs:fscrypt: the cheapest mechanism measured" in dom


def _section(text: str, heading: str) -> list[str]:
    """The lines of one ``## `` section of summary.md."""
    lines = text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0].splitlines()
    return [line for line in lines[1:] if line.strip()]


def test_statistical_warnings_fold_into_one_line_per_run(decision: Path) -> None:
    """A DBA's caveats are what the runs found (backups, old copies, O_DIRECT); the runs' noise warnings, each in its
    own report/warnings.md, are one line per run (a real decision listed 107 of them among 8 findings)."""
    caveats = _section((decision / "report" / "summary.md").read_text(), "Caveats the runs found")
    noisy = [line for line in caveats if "CV" in line and "is above" in line]
    folded = [line for line in caveats if "statistical warning" in line]
    assert not noisy, noisy
    assert folded and all("/report/warnings.md" in line for line in folded), caveats
    runs = [line.rsplit("(", 1)[-1] for line in folded]
    assert len(runs) == len(set(runs)), folded  # one line per run
