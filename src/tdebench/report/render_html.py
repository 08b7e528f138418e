"""The HTML report of one run: verdicts, warnings, tables, charts, verification, methods."""

from __future__ import annotations

import re

from tdebench import __version__
from tdebench.report import curve, extras, layers_view, precision_view, texts, threats_view, warnings_view
from tdebench.report.counters_view import CounterIndex
from tdebench.report.charts import Chart
from tdebench.report.figures import cipher_floor, engine_charts
from tdebench.report.fmt import DASH, fmt_bytes, fmt_ci, fmt_p, fmt_pct, fmt_value, fmt_value_ci
from tdebench.report.htmlkit import Col, Safe, esc, facts, join, page, pill, table, tag
from tdebench.report.model import ConfigRow, EngineSummary, QueryRow, RunSummary
from tdebench.stats.anova import ALL_CONFIGS, AnovaResult
from tdebench.stats.caveats import Caveat
from tdebench.stats.describe import Summary
from tdebench.stats.overhead import Overhead

# the claim of a verdict (stats/wording.py): "12.3% slower", "TPM 5.7% higher", "no difference resolved"
_CLAIM = re.compile(r"((?:[\w@/.-]+ )*?\d+\.\d% (?:slower|faster|lower|higher)|no difference resolved(?: in [^:]+)?)")
_SIG_KIND = {"no difference resolved": "neutral", "no interval": "warn"}  # a resolved change: "good"


def _verdict_html(sentence: str) -> Safe:
    return Safe(_CLAIM.sub(r"<strong>\1</strong>", esc(sentence), count=1))


def _card_class(es: EngineSummary) -> str:
    if any(r.verification.good is False or r.label_status.status in ("overridden", "not confirmed")
           for r in es.rows):
        return "bad"
    if any(r.overhead and not r.overhead.ci_spans_zero for r in es.rows if not r.is_baseline):
        return "slower"
    return "none"


def verdict_section(rs: RunSummary) -> Safe:
    """One card per engine with its verdict sentences."""
    cards = []
    for es in rs.engines:
        n = max((r.headline.n for r in es.rows if r.headline), default=0)
        note = (f"{texts.headline_label(es.headline)}, median of {n} {es.n_unit} per config; "
                + texts.overhead_note(r.overhead for r in es.rows if r.overhead))
        bad = [f"{r.label}: {r.verification.verdict}" for r in es.rows if r.verification.good is False]
        labels = [r for r in es.rows if r.label_status.flagged]
        body = [tag("h3", es.engine)] + [tag("p", _verdict_html(v), class_="verdict") for v in es.verdicts]
        body += [tag("p", _verdict_html(s), class_="verdict precision") for s in es.precision]
        body += [tag("p", s, class_="verdict regime") for s in es.regimes]
        body += [tag("p", s, class_="verdict") for s in threats_view.sentences(rs, es)]
        body += [tag("p", pill("verification failed", "bad") + esc(" " + b)) for b in bad]
        body += [tag("p", join([pill(r.label_status.text, "bad" if r.label_status.status != "unverifiable" else "warn"),
                                esc(" " + r.label_status.warning(r.label, r.encryption))])) for r in labels]
        cards.append(tag("div", join(body + [tag("p", note, class_="note")]),
                         class_=f"card {_card_class(es)}"))
    return tag("section", join([tag("h2", "Verdict"), tag("div", join(cards), class_="cards")]),
               id="verdict")


def warnings_section(warnings: list[Caveat]) -> Safe:
    """The warnings box (nothing when there are none)."""
    if not warnings:
        return Safe("")
    items = [tag("li", join([tag("span", "note" if w.severity == "info" else "warning", class_="tag"),
                             w.message]), class_=w.severity) for w in warnings]
    return tag("section", join([tag("h2", f"Read with care ({len(warnings)})"), tag("ul", join(items))]),
               class_="alerts", id="warnings")


def _sig_cell(o: Overhead | None, word: str) -> Safe:
    """The p-value and the verdict's word (the interval decides it, as in the verdict's sentence)."""
    if o is None:
        return esc(DASH)
    return join([esc(fmt_p(o.p_value) + " "), pill(word, _SIG_KIND.get(word, "good"))])


def _label_cell(r: ConfigRow) -> Safe:
    parts = [esc(r.encryption or r.label)]
    if r.label_status.flagged:  # the server does not confirm (all of) the label: said beside it, every time
        parts += [esc(" "), pill(r.label_status.text, "bad" if r.label_status.status != "unverifiable" else "warn")]
    return join([*parts, tag("span", r.label, class_="sub")])


def _verif_cell(r: ConfigRow) -> Safe:
    v = r.verification
    kind = {True: "good", False: "bad", None: "neutral"}[v.good]
    return pill(v.verdict, kind)


def _median_cell(s: Summary | None) -> str:
    return fmt_value(s.median, s.unit) if s else DASH


def _with_sub(main: str, sub: str) -> Safe:
    return join([esc(main), tag("span", sub, class_="sub")]) if sub and sub != DASH else esc(main)


def drop_empty(cols: list[Col], rows: list[list[object]],
               optional: set[str]) -> tuple[list[Col], list[list[object]]]:
    """Drop the optional columns that hold nothing but dashes."""
    keep = [i for i, c in enumerate(cols)
            if c.title not in optional or any(str(r[i]) not in (DASH, "") for r in rows)]
    return [cols[i] for i in keep], [[r[i] for i in keep] for r in rows]


def _beside_cell(r: ConfigRow, o: Overhead | None) -> object:
    """A figure shown beside the headline's overhead (server CPU time, time at a common read wait), with its CI."""
    return DASH if r.is_baseline or o is None else _with_sub(fmt_pct(o.overhead_pct), fmt_ci(o.ci_low_pct,
                                                                                            o.ci_high_pct))


def summary_table(es: EngineSummary, counters: CounterIndex | None = None) -> Safe:
    """The per-engine summary: headline median and overhead with CIs, the engine's counters over the headline's
    steps (hit ratio, bytes decrypted), metrics, storage, proof."""
    hl = texts.headline_label(es.headline)
    step = es.headline.step if es.headline else ""
    figures = list(es.rows[0].figures) if es.rows else []  # the workload's official figures (TPC-H's Power@Size)
    cols = [Col("config", cls="label"), Col(f"n ({es.n_unit})", True), Col(f"{hl} (median, 95% CI)", True),
            Col("overhead (95% CI)", True), Col("verdict"), Col("server CPU overhead (95% CI)", True),
            Col(texts.WAIT_COL, True), Col(COUNTERS_COL), *(Col(f, True) for f in figures),
            Col("storage", True),
            Col("encrypted on disk")]
    rows: list[list[object]] = []
    for r in es.rows:
        h, o = r.headline, r.overhead
        storage = fmt_bytes(r.storage_bytes) if r.storage_bytes else DASH
        storage += " (catalog)" if r.storage_bytes and r.storage_scope == "catalog" else ""
        failed = (h.n_failed + h.n_timeout) if h else 0
        rows.append([
            _label_cell(r),
            _with_sub(str(h.n), f"+{failed} failed" if failed else "") if h else DASH,
            _with_sub(_median_cell(h), fmt_value_ci(h.median_ci_low, h.median_ci_high, h.unit))
            if h else DASH,
            esc("plain twin") if r.is_baseline else (
                _with_sub(fmt_pct(o.overhead_pct), fmt_ci(o.ci_low_pct, o.ci_high_pct)) if o else DASH),
            _sig_cell(o, r.verdict),
            _beside_cell(r, r.cpu_overhead), _beside_cell(r, r.wait_overhead),
            (counters.brief(r.label, step) or DASH) if counters else DASH,
            *(_median_cell(r.figures.get(f)) for f in figures),
            _with_sub(storage, fmt_pct(r.storage_pct) + " vs plain" if r.storage_pct is not None else ""),
            _verif_cell(r),
        ])
    cols, rows = drop_empty(cols, rows, {*figures, "storage", "server CPU overhead (95% CI)", texts.WAIT_COL,
                                         COUNTERS_COL})
    return table(cols, rows)


COUNTERS_COL = "engine counters (median per trial)"
COUNTERS_NOTE = ("Counters: the engine's own, over the query (median over trials): hit = its cache's hit ratio, "
                 "decrypted/encrypted = bytes that crossed the encryption boundary (pages × page size; ≈ estimated; "
                 "0 B for plain configs); see the cipher floor section and docs/engines.")


def _query_cells(q: QueryRow, config: str, plain: bool, counters: CounterIndex | None = None) -> list[object]:
    """The median (with the failed values and the engine's counters under it) and, for an encrypted config, the
    overhead with its interval and p-value under it: two columns per config, so that a run of six configs fits a
    1,400-px window."""
    s = q.summaries.get(config)
    under = [f"n = {s.n}, {s.n_failed + s.n_timeout} failed"] if s and (s.n_failed or s.n_timeout) else []
    under += [counters.brief(config, q.step)] if counters and counters.brief(config, q.step) else []
    med = _with_sub(_median_cell(s), " · ".join(under))
    if plain:
        return [med]
    o = q.overheads.get(config)
    if o is None:
        return [med, DASH]
    cls = "sig" if not o.ci_spans_zero and o.p_value is not None and o.p_value < 0.05 else "nsig"
    return [med, join([tag("span", fmt_pct(o.overhead_pct), class_=cls),
                       tag("span", fmt_ci(o.ci_low_pct, o.ci_high_pct), class_="sub"),
                       tag("span", fmt_p(o.p_value), class_="sub")])]


def query_table(es: EngineSummary, counters: CounterIndex | None = None) -> Safe:
    """Median per config for each query with overhead, CI and p-value per encrypted config, and the engine's
    counters of the query (cache hit ratio, bytes decrypted) when it counts them."""
    counters = counters if counters and any(c in counters.configs() for c in es.configs) else None
    cols = [Col("query")]
    for r in es.rows:
        cols.append(Col(r.shown_label, True))
        if not r.is_baseline:
            cols.append(Col("overhead (95% CI · p)", True))
    rows = [[q.step] + [c for r in es.rows for c in _query_cells(q, r.label, r.is_baseline, counters)]
            for q in es.queries]
    return table(cols, rows)


def anova_block(res: AnovaResult, unit: str) -> Safe:
    """ANOVA / Kruskal–Wallis line and the Tukey HSD pairs of one step."""
    over = (f"{len(res.configs)} configs" if res.scope == ALL_CONFIGS
            else f"the {len(res.configs)} encrypted configs only (plain left out)")
    line = (f"{res.test}/{res.step} over {over}: ANOVA F = "
            f"{'—' if res.f_stat is None else f'{res.f_stat:.2f}'}, {fmt_p(res.p_anova)}, "
            f"eta² = {'—' if res.eta_squared is None else f'{res.eta_squared:.2f}'}; Kruskal–Wallis "
            f"H = {'—' if res.h_stat is None else f'{res.h_stat:.2f}'}, {fmt_p(res.p_kruskal)}. "
            f"Test to read: {res.primary_test}" + (f" (skewed: {res.skew_reason})." if res.skewed else "."))
    cols = [Col("config A"), Col("config B"), Col(f"mean B − A ({unit or 'value'})", True),
            Col("95% CI", True),
            Col("p (Tukey)", True)]
    rows = [[t.config_a, t.config_b, f"{t.mean_diff:+.4g}", f"{t.ci_low:+.4g} to {t.ci_high:+.4g}",
             fmt_p(t.p_value)] for t in res.tukey]
    return join([tag("p", line), table(cols, rows) if rows else Safe("")])


def figure(chart: Chart) -> Safe:
    """A chart with its caption."""
    return tag("figure", join([Safe(chart.svg), tag("figcaption", chart.caption)]))


def engine_sections(rs: RunSummary) -> list[Safe]:
    """Summary, per-query, charts and ANOVA of every engine."""
    summary, queries, charts_, anova = [], [], [], []
    counters = CounterIndex(rs.analysis.measurements)
    section = rs.presentation.section("queries")
    for es in rs.engines:
        summary += [tag("h3", es.engine), summary_table(es, counters)]
        if es.queries:
            queries += [tag("h3", f"{es.engine}: {section.title + ', ' if section else ''}median per query"),
                        query_table(es, counters)]
        charts_ += [figure(c) for c in engine_charts(rs, es)]
        if es.anovas():
            unit = next((r.headline.unit for r in es.rows if r.headline and r.headline.unit), "")
            anova += [tag("h3", es.engine)] + [anova_block(res, unit) for res in es.anovas()]
    floor = cipher_floor(rs.analysis)
    charts_ += [figure(floor)] if floor else []
    out = [tag("section", join([tag("h2", "Summary")] + summary), id="summary")]
    if queries:
        out.append(tag("section", join([tag("h2", "Per query")] + queries + [tag(
            "p", "Bold overheads are resolved (their 95% CI excludes 0, and p < 0.05); under each overhead its "
                 "95% CI and p-value. " + COUNTERS_NOTE,
            class_="note")]), id="queries"))
    if charts_:
        out.append(tag("section", join([tag("h2", "Charts")] + charts_), id="charts"))
    if anova:
        out.append(tag("section", join([tag("h2", "Across configs")] + anova), id="anova"))
    return out


def verification_section(rs: RunSummary) -> Safe:
    """Per config: status query, at-rest scan, answer equality."""
    cols = [Col("config"), Col("status query"), Col("encrypted on disk"), Col("canary hits", True),
            Col("files scanned", True), Col("answers equal")]
    rows = []
    for es in rs.engines:
        for r in es.rows:
            v = r.verification
            rows.append([_label_cell(r), texts.status_text(v), _verif_cell(r),
                         DASH if v.marker_hits is None else str(v.marker_hits),
                         DASH if v.files_scanned is None else str(v.files_scanned),
                         pill(texts.yes_no(v.answers_equal), {True: "good", False: "bad"}.get(
                             v.answers_equal, "neutral"))])
    note = tag("p", "How this was checked is described under Methods.", class_="note")
    return tag("section", join([tag("h2", "Verification"), table(cols, rows), note]),
               id="verification")


def methods_section(rs: RunSummary) -> Safe:
    """Machine, versions, settings, trial order, cache, warm-up, verification and statistics."""
    m = rs.manifest
    config_rows = [[_label_cell(r), r.engine_version or DASH, texts.settings_text(r.settings)]
                   for es in rs.engines for r in es.rows]
    block_rows = [[b, tag("span", order, class_="order")] for b, order in texts.blocks(m)]
    cmd = m.get("command_line")
    parts = [
        tag("h2", "Methods"), tag("h3", "Machine"), facts(texts.host_facts(m)),
        tag("h3", "Plan"), facts(texts.plan_facts(m) + [
            ("command line", tag("code", " ".join(map(str, cmd))) if isinstance(cmd, list) else None),
            ("measurements", texts.measurement_counts(rs))]),
        tag("h3", "Configs"),
        table([Col("config"), Col("engine version"), Col("settings")], config_rows),
    ]
    parts += [tag("h3", "Schedule, stopping and machine state")]
    parts += [tag("p", t) for t in precision_view.methods_paragraphs(rs)]
    if block_rows:
        parts += [tag("h3", "Trial order (randomized blocks)"),
                  table([Col("block"), Col("order")], block_rows)]
    parts += [tag("h3", "Verification")] + [tag("p", t) for t in texts.verification_method(rs)]
    parts += [tag("h3", "Statistics")] + [tag("p", t) for t in texts.stats_methods(rs.analysis.settings)]
    return tag("section", join(parts), id="methods")


def _workload_text(plan: dict) -> str:
    """The workload's name with its scale factor (``SF 0.1``) when it has one."""
    sf = texts.workload_option(plan, "sf")
    return f"{plan.get('workload')} SF {sf:g}" if isinstance(sf, (int, float)) else str(plan.get("workload"))


def render(rs: RunSummary) -> str:
    """The complete HTML document of one run."""
    m = rs.manifest
    plan = m.get("plan") if isinstance(m.get("plan"), dict) else {}
    host = (m.get("host") or {}).get("hostname") if isinstance(m.get("host"), dict) else None
    sub = " · ".join(str(x) for x in (
        plan.get("workload") and _workload_text(plan),
        plan.get("trials") and f"{plan.get('trials')} trials per config",
        plan.get("cache") and f"{plan.get('cache')} cache", host and f"on {host}",
        m.get("status")) if x)
    body = [verdict_section(rs), warnings_view.html_top(rs), curve.html_section(rs)] + engine_sections(rs)
    body.append(layers_view.html_section(rs))
    body += extras.html_sections(rs) + [threats_view.html_section(rs), warnings_view.html_section(rs),
                                        verification_section(rs), methods_section(rs)]
    nav = [("verdict", "Verdict"), ("memory-curve", "Cost curve"), ("summary", "Summary"),
           ("queries", "Per query"), ("charts", "Charts"), ("anova", "Across configs"),
           ("layers", "Layers"), *extras.NAV,
           ("threats", "Threat model"), ("warnings", "Warnings"), ("verification", "Verification"),
           ("methods", "Methods")]
    present = "".join(body)
    nav = [(a, label) for a, label in nav if f'id="{a}"' in present]
    footer = (f"Generated by tdebench {__version__} from the run directory alone (manifest.json, "
              "measurements.csv, verification.json). Rebuild any time with “tdebench report”.")
    return page(f"Encryption at rest: {rs.files.run_id}", "tdebench report", sub, nav, body, footer)
