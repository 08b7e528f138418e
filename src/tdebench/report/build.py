"""build_report: the whole report of one run directory."""

from __future__ import annotations

from pathlib import Path

from tdebench.report import encrypt_view, render_html, render_md, warnings_view
from tdebench.report.model import RunSummary, summarize
from tdebench.report.tables import to_csv, write_tables, write_text
from tdebench.stats.analysis import StatsSettings


#: written last into report/: a report without it is partial (the process died while writing it)
COMPLETE = ".complete"


def report_complete(run_dir: Path) -> bool:
    """True when ``run_dir/report/`` was written to the end (its last file, :data:`COMPLETE`, is there)."""
    return (Path(run_dir) / "report" / COMPLETE).is_file()


def write_report(rs: RunSummary, out_dir: Path) -> Path:
    """Write index.html, summary.md and the CSV tables of a summary into ``out_dir``; the marker
    :data:`COMPLETE` goes first and comes back last, so a report cut short is known to be partial."""
    out_dir = Path(out_dir)
    (out_dir / COMPLETE).unlink(missing_ok=True)
    write_tables(rs.analysis, out_dir, {r.label: r.label_status.status for es in rs.engines for r in es.rows})
    switches = rs.switches()
    if switches:  # an encrypt run: its switching table's numbers (docs/result-format.md)
        write_text(out_dir / "switching.csv", to_csv(encrypt_view.CSV_FIELDS, encrypt_view.csv_rows(switches)))
    write_text(out_dir / warnings_view.WARNINGS_FILE, warnings_view.md_file(rs))
    write_text(out_dir / "summary.md", render_md.render(rs))
    index = write_text(out_dir / "index.html", render_html.render(rs))
    write_text(out_dir / COMPLETE, "the report was written to the end\n")
    return index


def build_report(run_dir: Path, settings: StatsSettings | None = None) -> Path:
    """Build ``run_dir/report/`` (index.html, summary.md, overhead.csv, summary.csv) and
    return the path of index.html. Uses only files in the run directory."""
    run_dir = Path(run_dir)
    return write_report(summarize(run_dir, settings), run_dir / "report")
