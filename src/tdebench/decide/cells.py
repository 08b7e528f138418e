"""The texts of a decision page's cells, shared by every view (terminal, summary.md, index.html): one quantity,
one text. Numbers are those of the runs' CSVs, formatted once here."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tdebench.decide.switching import Ratio
from tdebench.report.fmt import DASH, fmt_difference, fmt_pct
from tdebench.stats.overhead import Overhead
from tdebench.stats.wording import direction, metric_kind

NOT_RESOLVED = "not resolved"


@dataclass(frozen=True)
class Cell:
    """A cell's text, a word after it (a verdict such as "not resolved"), and how the word (or, without one, the
    text) is marked: good, bad, warn, neutral or "" (plain text)."""

    text: str
    kind: str = ""
    word: str = ""

    @property
    def full(self) -> str:
        """The text with its word, as Markdown and the terminal show it."""
        return f"{self.text} {self.word}" if self.word else self.text


@dataclass
class Table:
    headers: list[str]
    rows: list[list[Cell]]
    right: set[int] = field(default_factory=set)
    caption: str = ""


@dataclass
class Section:
    """One part of the page: paragraphs, tables, a list, and details (evidence) shown folded in HTML."""

    id: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    bullets: list[str] = field(default_factory=list)
    details: list[tuple[str, Table]] = field(default_factory=list)
    note: str = ""


def signed(x: float | None) -> str:
    """``+14.5``, ``-9.8`` (one decimal, no %)."""
    if x is None or not math.isfinite(x):
        return DASH
    text = f"{x:+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def resolution(o: Overhead) -> str:
    """slower / faster / higher / lower when the interval excludes 0, else not resolved."""
    d = direction(o.ci_low_pct, o.ci_high_pct)
    if d == "none":
        return NOT_RESOLVED
    if metric_kind(o.metric, o.unit) == "time":
        return "slower" if d == "up" else "faster"
    return "higher" if d == "up" else "lower"


def cost(o: Overhead | None) -> Cell:
    """``+26.1% [+14.5, +38.9] slower`` or ``+4.3% [-9.8, +13.8] not resolved``; — when not measured."""
    if o is None:
        return Cell(DASH)
    interval = f" [{signed(o.ci_low_pct)}, {signed(o.ci_high_pct)}]" if o.ci_low_pct is not None else ""
    word = resolution(o)
    worse = word in ("slower",) or (word == "lower" and metric_kind(o.metric, o.unit) == "throughput")
    kind = "warn" if word == NOT_RESOLVED else ("bad" if worse else "good")
    return Cell(f"{fmt_pct(o.overhead_pct)}{interval}", kind, word)


def added(o: Overhead | None) -> Cell:
    """``+6.13 ms [+5.90, +6.36]``: what the mechanism adds to the plain twin's time, paired by block; — when
    unpaired or not measured."""
    if o is None or o.difference is None:
        return Cell(DASH)
    return Cell(fmt_difference(o.difference, o.difference_low, o.difference_high, o.unit))


def n_text(o: Overhead | None) -> str:
    """``n = 3 blocks`` (the pairing unit named)."""
    if o is None:
        return DASH
    unit = o.pairing_unit or "block"
    return f"n = {o.n} {unit}{'s' if o.n != 1 else ''}"


def ratio(r: Ratio | None) -> Cell:
    """``0.61× [0.54, 0.69]``; ``not resolved`` beside an interval that spans 1 or rests on fewer than 3 trials."""
    if r is None:
        return Cell(DASH)
    interval = f" [{r.low:.2f}, {r.high:.2f}]" if r.low is not None and r.high is not None else ""
    return Cell(f"{r.mean:.2f}×{interval}", "" if r.resolved else "warn", "" if r.resolved else NOT_RESOLVED)


STATUS_KINDS = {"protected": "good", "exposed": "bad", "not checked": "warn", "not applicable": "neutral",
                "stops": "good", "does not stop": "bad", "not known": "warn"}


def status(text: str, plain: bool = False) -> Cell:
    """A threat-model status (or a rule verdict) as a marked cell; the plain twin's exposed rows are neutral."""
    kind = STATUS_KINDS.get(text, "")
    return Cell(text, "neutral" if plain and kind == "bad" else kind)
