"""The terminal summary of an ``encrypt`` run: the report's switching tables (per config, cycle and switch: what the
switch took, and what the background felt meanwhile and after against the steady phase just before), with the same
numbers as summary.md, index.html and switching.csv (docs/workloads/encrypt.md)."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table

from tdebench.report import encrypt_view
from tdebench.stats.load import Measurements


def encrypt_table(measurements: Measurements, labels: list[str], test: str) -> Group:
    """Two tables of one row per config, cycle and switch of the switching ``test``
    (:func:`tdebench.report.encrypt_view.switch_rows`, :data:`tdebench.report.encrypt_view.TABLES`)."""
    rows = encrypt_view.switch_rows(measurements, labels, test)
    background = any(r.background for r in rows)
    texts = [encrypt_view.cells(row) for row in rows]
    tables = []
    for title, columns in encrypt_view.TABLES:
        if not background and len(tables):
            break  # no background ran: nothing to show of what it felt
        keep = encrypt_view.shown_columns(rows, columns) if rows else list(columns[:4])
        where = "under the background" if background else "with no background running"
        table = Table(title=f"Switching on, re-keying and back {where}: {title} (median over trials" + (
            "; ratios paired per trial: geomean [95% CI], not resolved below 3 trials)" if len(tables) else ")"),
            title_justify="left")
        for i in keep:
            column = encrypt_view.COLUMNS[i]
            named = i < 3  # config, method, switch: whole on one line (never cut); figures wrap in a narrow terminal
            widest = max([len(t[i]) for t in texts] + [1]) if named else None
            table.add_column(column, justify="right" if column in encrypt_view.NUMERIC else "left",
                             min_width=widest, no_wrap=named)
        for t in texts:
            table.add_row(*[t[i] for i in keep])
        tables.append(table)
    return Group(*tables)
