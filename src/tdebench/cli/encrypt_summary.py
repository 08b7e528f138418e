"""The terminal summary of an ``encrypt`` run: the report's switching table (per config, cycle and switch: the time
to done, what the background felt meanwhile and after against the steady phase just before, the plaintext left),
with the same numbers as summary.md, index.html and switching.csv (docs/workloads/encrypt.md)."""

from __future__ import annotations

from rich.table import Table

from tdebench.report import encrypt_view
from tdebench.stats.load import Measurements


def encrypt_table(measurements: Measurements, labels: list[str], test: str) -> Table:
    """One row per config, cycle and switch of the switching ``test`` (:func:`tdebench.report.encrypt_view.switch_rows`)."""
    rows = encrypt_view.switch_rows(measurements, labels, test)
    keep = encrypt_view.shown_columns(rows) if rows else list(range(4))
    background = any(r.background for r in rows)
    table = Table(title="Switching on, re-keying and back " + (
        "under the background (median over trials; ratio to the steady phase just before, paired per trial: "
        "geomean [95% CI])" if background else "with no background running (median over trials)"),
        title_justify="left")
    texts = [encrypt_view.cells(row) for row in rows]
    for i in keep:
        column = encrypt_view.COLUMNS[i]
        named = i < 3  # config, method, switch: whole on one line (never cut); figures wrap in a narrow terminal
        widest = max([len(t[i]) for t in texts] + [1]) if named else None
        table.add_column(column, justify="right" if column in encrypt_view.NUMERIC else "left", min_width=widest,
                         no_wrap=named)
    for t in texts:
        table.add_row(*[t[i] for i in keep])
    return table
