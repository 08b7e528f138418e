"""The decision page from a decision directory alone: ``report/index.html`` and ``report/summary.md``, and the same
sections on a terminal."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from tdebench.decide import page, render
from tdebench.decide.model import Decision, load_decision
from tdebench.report.tables import write_text


def write_page(d: Decision) -> Path:
    """Write report/summary.md and report/index.html of decision ``d``; the path of index.html."""
    sections = page.sections(d)
    title, subtitle = page.title(d), page.subtitle(d)
    out = d.path / "report"
    write_text(out / "summary.md", render.markdown(title, subtitle, sections))
    return write_text(out / "index.html", render.html(title, subtitle, sections))


def build_page(path: Path) -> Path:
    """(Re)build the page of the decision directory ``path``."""
    return write_page(load_decision(Path(path)))


def print_page(d: Decision, console: Console) -> None:
    render.terminal(console, page.title(d), page.subtitle(d), page.sections(d))
