"""The decision page in three views from the same sections: summary.md, index.html (self-contained, no scripts)
and the terminal (rich)."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table as RichTable
from rich.text import Text

from tdebench import __version__
from tdebench.decide.cells import Cell, Section, Table
from tdebench.report.htmlkit import Col, Safe, esc, join, page, tag
from tdebench.report.htmlkit import table as html_table
from tdebench.report.mdkit import md_table

# the decision's own look beside the report's stylesheet: the answer stands out, folded evidence is compact
_CSS = ("p.answer { font-size: 1.15rem; font-weight: 600; border-left: 5px solid var(--accent); padding: 8px 14px; "
        "background: var(--info-bg); border-radius: 6px; } details { margin: 8px 0; } details summary { cursor: "
        "pointer; color: var(--accent); } caption { text-align: left; font-weight: 600; color: var(--ink); "
        "padding: 4px 0; } section#cost td.num, section#answer td.num, section#switching td.num { white-space: "
        "normal; } td .pill { white-space: nowrap; } section#switching th { white-space: normal; }")


# Markdown ----------------------------------------------------------------------------------------------------
def _md_table(t: Table) -> list[str]:
    head = [f"_{t.caption}_", ""] if t.caption else []
    return head + md_table(t.headers, [[c.full for c in row] for row in t.rows], t.right) + [""]


def markdown(title: str, subtitle: str, sections: list[Section]) -> str:
    out = [f"# {title}", "", subtitle, ""]
    for s in sections:
        out += [f"## {s.title}", ""]
        for i, p in enumerate(s.paragraphs):
            out += [f"**{p}**" if s.id == "answer" and i == 0 else p, ""]
        for t in s.tables:
            out += _md_table(t)
        out += [f"- {b}" for b in s.bullets] + ([""] if s.bullets else [])
        for name, t in s.details:
            out += [f"### {name}", ""] + _md_table(t)
        if s.note:
            out += [f"_{s.note}_", ""]
    return "\n".join(out) + "\n"


# HTML --------------------------------------------------------------------------------------------------------
def _cell_html(c: Cell) -> Safe:
    if c.word:
        return join([esc(c.text), Safe(" "), tag("span", c.word, class_=f"pill {c.kind or 'neutral'}")])
    return tag("span", c.text, class_=f"pill {c.kind}") if c.kind else esc(c.text)


def _table_html(t: Table) -> Safe:
    cols = [Col(h, i in t.right) for i, h in enumerate(t.headers)]
    return html_table(cols, [[_cell_html(c) for c in row] for row in t.rows], caption=t.caption)


def _section_html(s: Section) -> Safe:
    parts: list[object] = [tag("h2", s.title)]
    for i, p in enumerate(s.paragraphs):
        parts.append(tag("p", p, class_="answer" if s.id == "answer" and i == 0 else None))
    parts += [_table_html(t) for t in s.tables]
    if s.bullets:
        parts.append(tag("ul", join(tag("li", b) for b in s.bullets)))
    parts += [tag("details", join([tag("summary", name), _table_html(t)])) for name, t in s.details]
    if s.note:
        parts.append(tag("p", s.note, class_="note"))
    return tag("section", join(parts), id=s.id)


def html(title: str, subtitle: str, sections: list[Section]) -> str:
    body = [Safe(f"<style>{_CSS}</style>")] + [_section_html(s) for s in sections]
    return page(title, "tdebench decide", subtitle, [(s.id, s.title.split(" (")[0]) for s in sections], body,
                f"tdebench {__version__} · built from decision.json and the runs' directories "
                "(tdebench report DIR rebuilds it)")


# terminal ----------------------------------------------------------------------------------------------------
_STYLES = {"good": "green", "bad": "red", "warn": "yellow", "neutral": "dim"}


def _rich_table(t: Table) -> RichTable:
    out = RichTable(title=t.caption or None, title_justify="left", show_lines=False)
    for i, h in enumerate(t.headers):
        out.add_column(h, justify="right" if i in t.right else "left", overflow="fold")
    for row in t.rows:
        out.add_row(*[Text(c.full, style=_STYLES.get(c.kind, "")) for c in row])
    return out


def terminal(console: Console, title: str, subtitle: str, sections: list[Section]) -> None:
    """The page on the terminal: every section but the evidence (folded in the HTML), which names its file."""
    console.print(Text(title, style="bold"), Text(subtitle, style="dim"))
    for s in sections:
        parts: list[object] = [Text(f"\n{s.title}", style="bold underline")]
        for i, p in enumerate(s.paragraphs):
            parts.append(Text(p, style="bold" if s.id == "answer" and i == 0 else ""))
        parts += [_rich_table(t) for t in s.tables]
        parts += [Text(f"- {b}") for b in s.bullets]
        if s.details:
            parts.append(Text("evidence per attacker: report/index.html and summary.md", style="dim"))
        console.print(Group(*parts), soft_wrap=False)
