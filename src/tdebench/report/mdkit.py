"""Markdown pieces shared by every view of the report (no view imports the renderer that gathers them)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def md_table(headers: Sequence[str], rows: Iterable[Sequence[str]], right: set[int]) -> list[str]:
    """A pipe table; columns in ``right`` are right-aligned."""
    def cell(x: str) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")
    out = ["| " + " | ".join(cell(h) for h in headers) + " |",
           "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|"]
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return out
