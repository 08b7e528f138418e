"""A two-run comparison written out: HTML, Markdown and comparison.csv (:func:`compare_runs`)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from tdebench import __version__
from tdebench.report import charts, texts
from tdebench.report.compare import CHANGE_FIELDS, Change, RunComparison, compare, headline_changes
from tdebench.report.fmt import DASH, fmt_ci, fmt_p, fmt_pct, fmt_value
from tdebench.report.htmlkit import Col, Safe, esc, join, page, pill, table, tag
from tdebench.report.render_html import figure, warnings_section
from tdebench.report.mdkit import md_table
from tdebench.report.tables import to_csv, write_text
from tdebench.stats.analysis import StatsSettings
from tdebench.stats.interval import BOOTSTRAP_MIN_N
from tdebench.stats.metrics import query_number

_KIND = {"no difference resolved": "neutral", "no interval": "warn"}  # a resolved change: "good"


def _change_cells(c: Change) -> list[str]:
    return [fmt_value(c.median_base, c.unit), fmt_value(c.median_other, c.unit),
            fmt_pct(c.change_pct), fmt_ci(c.ci_low_pct, c.ci_high_pct), fmt_p(c.p_value)]


def overhead_pairs(cmp: RunComparison) -> list[list[str]]:
    """Headline overhead vs plain of each encrypted config in run A and run B."""
    rows = []
    for es_a in cmp.base.engines:
        es_b = next((e for e in cmp.other.engines if e.engine == es_a.engine), None)
        for ra in es_a.rows:
            rb = next((r for r in es_b.rows if r.label == ra.label), None) if es_b else None
            if ra.is_plain or rb is None:
                continue
            cell = [fmt_pct(r.overhead.overhead_pct) + " (" + fmt_ci(r.overhead.ci_low_pct,
                    r.overhead.ci_high_pct) + ")" if r.overhead else DASH for r in (ra, rb)]
            rows.append([ra.label, texts.headline_label(es_a.headline), *cell])
    return rows


def query_changes(cmp: RunComparison) -> dict[str, list[Change]]:
    """Per config, the changes of the queries of the workload's queries section (run A's), in query order."""
    section = cmp.base.presentation.section("queries")
    if section is None:
        return {}
    out: dict[str, list[Change]] = {}
    for c in cmp.changes:
        if c.test == section.test and c.metric == "elapsed" and query_number(c.step) is not None:
            out.setdefault(c.config, []).append(c)
    return {k: sorted(out[k], key=lambda c: query_number(c.step) or 0)
            for k in cmp.matched if k in out}


def _charts(cmp: RunComparison) -> list[charts.Chart]:
    heads = headline_changes(cmp)
    out = []
    if heads:
        groups = []
        for c in heads:
            for tag_, rs in (("A", cmp.base), ("B", cmp.other)):
                sample = rs.analysis.measurements.sample(c.key)
                if sample is not None:
                    groups.append((f"{tag_}: {c.config}", sample.values))
        colors = {label: charts.PLAIN_COLOR if label.startswith("A") else charts.PALETTE[0]
                  for label, _ in groups}
        svg = charts.box_plot(groups, colors, unit=heads[0].unit or "s",
                              title=f"{texts.headline_label(heads[0].key)}: run A vs run B")
        if svg:
            out.append(charts.Chart("headline", "Each dot is one trial (grey: run A, orange: run B).", svg))
    qc = query_changes(cmp)
    if qc:
        steps = sorted({c.step for v in qc.values() for c in v}, key=lambda s: query_number(s) or 0)
        pct = [[next((c.change_pct for c in v if c.step == s), None) for s in steps] for v in qc.values()]
        sig = [[any(c.step == s and not c.ci_spans_zero and (c.p_value or 1) < 0.05 for c in v)
                for s in steps] for v in qc.values()]
        svg = charts.overhead_heatmap(steps, list(qc), pct, sig, title="Change per query, run B vs run A (%)")
        if svg:
            out.append(charts.Chart("heatmap", "Red: run B slower; blue: run B faster. Faded with "
                                    "“?”: no difference resolved.", svg))
    return out


def _facts_rows(cmp: RunComparison) -> list[list[str]]:
    def flat(rs: Any) -> dict[str, str]:
        items = texts.host_facts(rs.manifest) + texts.plan_facts(rs.manifest)
        items += [(f"version {r.label}", r.engine_version) for es in rs.engines for r in es.rows]
        return {k: "" if v is None else str(v) for k, v in items}
    a, b = flat(cmp.base), flat(cmp.other)
    return [[k, a.get(k, "") or DASH, b.get(k, "") or DASH, "differs" if a.get(k) != b.get(k) else ""]
            for k in dict.fromkeys([*a, *b])]


def run_names(cmp: RunComparison) -> tuple[str, str]:
    """Run ids of A and B (directory names when both runs carry the same id)."""
    a, b = cmp.base.files.run_id, cmp.other.files.run_id
    if a == b:
        a, b = f"{a} ({cmp.base.run_dir.name})", f"{b} ({cmp.other.run_dir.name})"
    return a, b


def render_html(cmp: RunComparison) -> str:
    """The complete HTML comparison document."""
    ida, idb = run_names(cmp)
    head = [tag("p", join([esc("Run A (baseline): "), tag("code", ida), esc(" · run B: "),
                           tag("code", idb)]))]
    head += [tag("p", v, class_="verdict") for v in cmp.verdicts] or [tag("p", "No common headline series.")]
    body: list[Safe] = [tag("section", join([tag("h2", "Verdict"), tag("div", join(head),
                                                                     class_="card slower")]), id="verdict"),
                        warnings_section(cmp.warnings)]
    cols = [Col("config"), Col("series"), Col("run A", True), Col("run B", True), Col("change", True),
            Col("95% CI", True), Col("p", True), Col("verdict")]
    rows = [[c.config, texts.headline_label(c.key), *_change_cells(c),
             pill(c.verdict, _KIND.get(c.verdict, "good"))] for c in headline_changes(cmp)]
    parts = [tag("h2", "Headline"), table(cols, rows)]
    if cmp.only_base or cmp.only_other:
        parts.append(tag("p", f"Only in run A: {', '.join(cmp.only_base) or '—'}; only in run B: "
                              f"{', '.join(cmp.only_other) or '—'}.", class_="note"))
    pairs = overhead_pairs(cmp)
    if pairs:
        parts += [tag("h3", "Overhead vs plain twin in each run"),
                  table([Col("config"), Col("series"), Col("run A", True), Col("run B", True)], pairs)]
    body.append(tag("section", join(parts), id="summary"))
    qparts = []
    for config, changes in query_changes(cmp).items():
        qparts += [tag("h3", config), table([Col("query"), Col("run A", True), Col("run B", True),
                                             Col("change", True), Col("95% CI", True), Col("p", True)],
                                            [[c.step, *_change_cells(c)] for c in changes])]
    if qparts:
        body.append(tag("section", join([tag("h2", "Per query")] + qparts), id="queries"))
    figs = [figure(c) for c in _charts(cmp)]
    if figs:
        body.append(tag("section", join([tag("h2", "Charts")] + figs), id="charts"))
    body.append(tag("section", join([tag("h2", "Methods"), table(
        [Col("fact"), Col("run A"), Col("run B"), Col("")], _facts_rows(cmp))] + [
        tag("p", "Runs are compared without pairing (their blocks are unrelated): Welch's interval "
                 f"and test on the log values below {BOOTSTRAP_MIN_N} trials, each run resampled on "
                 f"its own by the bootstrap from {BOOTSTRAP_MIN_N} on; comparison.csv names the "
                 "method of each row in ci_method.")] + [tag("p", t) for t in texts.stats_methods(
            cmp.base.analysis.settings)]), id="methods"))
    nav = [(a, label) for a, label in (("verdict", "Verdict"), ("warnings", "Warnings"),
                                       ("summary", "Headline"), ("queries", "Per query"),
                                       ("charts", "Charts"), ("methods", "Methods"))
           if f'id="{a}"' in "".join(body)]
    return page(f"Run comparison: {idb} vs {ida}", "tdebench comparison",
                "configs matched by label · run A is the baseline", nav, body,
                f"Generated by tdebench {__version__} from the two run directories alone.")


def render_md(cmp: RunComparison) -> str:
    """The comparison as Markdown."""
    ida, idb = run_names(cmp)
    out = [f"# Run comparison: {idb} vs {ida}", "",
           f"Run A (baseline): `{ida}`; run B: `{idb}`.", "",
           "## Verdict", ""] + [f"- {v}" for v in cmp.verdicts] + [""]
    if cmp.warnings:
        out += ["## Warnings", ""] + [f"- {w.message}" for w in cmp.warnings] + [""]
    out += ["## Headline", ""] + md_table(
        ["config", "series", "run A", "run B", "change", "95% CI", "p", "verdict"],
        [[c.config, texts.headline_label(c.key), *_change_cells(c), c.verdict]
         for c in headline_changes(cmp)], {2, 3, 4, 5, 6}) + [""]
    pairs = overhead_pairs(cmp)
    if pairs:
        out += ["## Overhead vs plain twin in each run", ""]
        out += md_table(["config", "series", "run A", "run B"], pairs, {2, 3}) + [""]
    for config, changes in query_changes(cmp).items():
        out += [f"## Per query: {config}", ""] + md_table(
            ["query", "run A", "run B", "change", "95% CI", "p"],
            [[c.step, *_change_cells(c)] for c in changes], {1, 2, 3, 4, 5}) + [""]
    out += ["## Methods", ""] + md_table(["fact", "run A", "run B", ""], _facts_rows(cmp), set())
    return "\n".join(out).rstrip() + "\n"


def compare_runs(d1: Path, d2: Path, out_dir: Path, settings: StatsSettings | None = None) -> Path:
    """Write a comparison report of run ``d2`` against baseline ``d1`` into ``out_dir``.

    Files: index.html, summary.md, comparison.csv. Returns the path of index.html.
    """
    cmp = compare(Path(d1), Path(d2), settings)
    out_dir = Path(out_dir)
    write_text(out_dir / "comparison.csv", to_csv(CHANGE_FIELDS, (asdict(c) for c in cmp.changes)))
    write_text(out_dir / "summary.md", render_md(cmp))
    return write_text(out_dir / "index.html", render_html(cmp))
