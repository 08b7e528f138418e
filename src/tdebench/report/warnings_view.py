"""Warnings a DBA can read: one line at the top of every view (how many, of which kinds, where they are), the
warnings folded per kind in a section of their own, and every one of them in report/warnings.md.

A TPC-C run raises dozens (a CV above the limit for every noisy counter, an unresolved interval for every
latency percentile); listed at the top they buried the verdict.
"""

from __future__ import annotations

from collections import Counter

from tdebench.report.htmlkit import Safe, esc, join, tag
from tdebench.report.model import RunSummary
from tdebench.stats.caveats import Caveat

WARNINGS_FILE = "warnings.md"
# kind -> (what one is, what several are), as the summary line counts them
_KINDS = {
    "input": ("problem reading the run's files", "problems reading the run's files"),
    "label": ("label the server does not confirm", "labels the server does not confirm"),
    "noise_spike": ("noise spike during the trials", "noise spikes during the trials"),
    "failures": ("series with failed or timed-out values", "series with failed or timed-out values"),
    "small_n": ("series with too few values", "series with too few values"),
    "noise": ("series with a CV above {cv:g}%", "series with a CV above {cv:g}%"),
    "no_effect": ("comparison with no difference resolved", "comparisons with no difference resolved"),
    "small_n_ci": ("note on intervals from few trials", "notes on intervals from few trials"),
}
_HEADINGS = {"input": "Input", "label": "Labels", "noise_spike": "Machine noise", "failures": "Failed values",
             "small_n": "Too few values", "noise": "Noisy series", "no_effect": "No difference resolved",
             "small_n_ci": "Intervals from few trials"}


def _kinds(warnings: list[Caveat]) -> list[tuple[str, int]]:
    counts = Counter(w.kind for w in warnings)
    order = [k for k in _KINDS if k in counts] + sorted(k for k in counts if k not in _KINDS)
    return [(k, counts[k]) for k in order]


def one_line(rs: RunSummary) -> str:
    """``Read with care: 86 warnings (54 series with a CV above 5%, 31 comparisons with no difference resolved,
    …); each one in report/warnings.md``; "" when there are none."""
    every = rs.all_warnings
    if not every:
        return ""
    cv = rs.analysis.settings.cv_limit_pct
    parts = []
    for kind, n in _kinds(every):
        one, several = _KINDS.get(kind, (kind, kind))
        parts.append(f"{n} {(one if n == 1 else several).format(cv=cv)}")
    total = len(every)
    return (f"Read with care: {total} warning{'s' if total != 1 else ''} ({', '.join(parts)}); each one in "
            f"report/{WARNINGS_FILE}")


def md_file(rs: RunSummary) -> str:
    """report/warnings.md: every warning of the run, by kind (nothing folded)."""
    out = [f"# Warnings: {rs.files.run_id}", ""]
    line = one_line(rs)
    out += [line + ".", ""] if line else ["No warnings.", ""]
    for kind, _ in _kinds(rs.all_warnings):
        out += [f"## {_HEADINGS.get(kind, kind)}", ""]
        out += [f"- {w.message}" for w in rs.all_warnings if w.kind == kind] + [""]
    return "\n".join(out).rstrip() + "\n"


def md_top(rs: RunSummary) -> list[str]:
    """The one line under the verdict in summary.md."""
    line = one_line(rs)
    return [f"**{line.replace(f'report/{WARNINGS_FILE}', f'[{WARNINGS_FILE}]({WARNINGS_FILE})')}**, the main "
            "ones under Warnings below.", ""] if line else []


def md_section(rs: RunSummary) -> list[str]:
    """The warnings folded per kind (the headline's own one by one), near the end of summary.md."""
    if not rs.warnings:
        return []
    out = ["## Warnings", "", f"Folded per kind; every one is in [{WARNINGS_FILE}]({WARNINGS_FILE}).", ""]
    return out + [f"- {'Note' if w.severity == 'info' else '**Warning**'}: {w.message}" for w in rs.warnings] + [""]


def html_top(rs: RunSummary) -> Safe:
    """The one line under the verdict in index.html, with links to the section and the file."""
    line = one_line(rs)
    if not line:
        return Safe("")
    text = line.removesuffix(f"; each one in report/{WARNINGS_FILE}")
    body = join([esc(text + "; the main ones under "), tag("a", "Warnings", href="#warnings"),
                 esc(", each one in "), tag("a", f"report/{WARNINGS_FILE}", href=WARNINGS_FILE), esc(".")])
    return tag("section", tag("p", body), class_="alerts", id="read-with-care")


def html_section(rs: RunSummary) -> Safe:
    """The warnings folded per kind, near the end of index.html."""
    if not rs.warnings:
        return Safe("")
    items = [tag("li", join([tag("span", "note" if w.severity == "info" else "warning", class_="tag"),
                             w.message]), class_=w.severity) for w in rs.warnings]
    note = tag("p", join([esc("Folded per kind; every one is in "), tag("a", WARNINGS_FILE, href=WARNINGS_FILE),
                          esc(".")]), class_="note")
    return tag("section", join([tag("h2", f"Warnings ({len(rs.all_warnings)})"), note, tag("ul", join(items))]),
               class_="alerts", id="warnings")
