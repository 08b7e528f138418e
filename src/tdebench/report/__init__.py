"""Reports of a run directory: self-contained HTML (inline SVG charts), Markdown and CSV.

Public API: :func:`build_report`, :func:`summarize`, :func:`compare_runs`.
"""

from tdebench.report.build import build_report, report_complete, write_report
from tdebench.report.compare import RunComparison, compare
from tdebench.report.render_compare import compare_runs
from tdebench.report.model import (
    ConfigRow, EngineSummary, QueryRow, RunSummary, VerificationRow, summarize,
)

__all__ = [
    "ConfigRow", "EngineSummary", "QueryRow", "RunComparison", "RunSummary", "VerificationRow",
    "build_report", "compare", "compare_runs", "report_complete", "summarize", "write_report",
]
