"""Tiny HTML helpers: escaping, tables, pills, the page shell with inline CSS (no scripts)."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources


class Safe(str):
    """Text that is already HTML and must not be escaped again."""


def esc(x: object) -> Safe:
    """Escape text for HTML (``Safe`` values pass through unchanged)."""
    return x if isinstance(x, Safe) else Safe(html.escape("" if x is None else str(x)))


def tag(name: str, content: object = "", **attrs: object) -> Safe:
    """``<name attrs>content</name>``; ``class_`` sets the class attribute."""
    parts = [name]
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        parts.append(f'{key.rstrip("_").replace("_", "-")}="{html.escape(str(value))}"')
    return Safe(f"<{' '.join(parts)}>{esc(content)}</{name}>")


def join(items: Iterable[object], sep: str = "") -> Safe:
    """Concatenate escaped items."""
    return Safe(sep.join(esc(i) for i in items))


def pill(text: str, kind: str = "neutral") -> Safe:
    """A small rounded label: good, bad, warn or neutral."""
    return tag("span", text, class_=f"pill {kind}")


@dataclass(frozen=True)
class Col:
    """A table column: title and whether it holds numbers (right-aligned)."""

    title: str
    num: bool = False
    cls: str = ""


def table(cols: Sequence[Col], rows: Iterable[Sequence[object]], *, caption: str = "") -> Safe:
    """A responsive table; cells are escaped unless ``Safe``."""
    head = join(tag("th", c.title, class_="num" if c.num else None, scope="col") for c in cols)
    body = []
    for row in rows:
        cells = []
        for col, cell in zip(cols, row, strict=True):
            cls = " ".join(x for x in ("num" if col.num else "", col.cls) if x) or None
            cells.append(tag("td", cell, class_=cls))
        body.append(tag("tr", join(cells)))
    cap = tag("caption", caption, class_="note") if caption else ""
    return tag("div", tag("table", join([cap, tag("thead", tag("tr", head)),
                                         tag("tbody", join(body))])), class_="table-wrap")


def facts(items: Iterable[tuple[str, object]]) -> Safe:
    """A definition list of label → value, skipping empty values."""
    parts = [join([tag("dt", k), tag("dd", v)]) for k, v in items if v not in (None, "", [], {})]
    return tag("dl", join(parts), class_="facts") if parts else Safe("")


def css() -> str:
    """The inline stylesheet shipped with the package."""
    return resources.files("tdebench.report").joinpath("templates/style.css").read_text("utf-8")


def page(title: str, eyebrow: str, subtitle: str, nav: Sequence[tuple[str, str]],
         body: Iterable[object], footer: str) -> str:
    """A whole self-contained document: inline CSS, no scripts, no external resources."""
    links = join(tag("a", label, href=f"#{anchor}") for anchor, label in nav)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{esc(title)}</title>\n<style>\n{css()}</style>\n</head>\n<body>\n"
        + tag("header", tag("div", join([tag("p", eyebrow, class_="eyebrow"), tag("h1", title),
                                         tag("p", subtitle, class_="sub")]), class_="wrap"),
              class_="top")
        + "\n" + tag("nav", tag("div", links, class_="wrap"), class_="toc")
        + "\n<main class=\"wrap\">\n" + join(body, "\n")
        + "\n</main>\n" + tag("footer", tag("div", footer, class_="wrap")) + "\n</body>\n</html>\n"
    )
