"""summary.md: the verdicts, warnings and tables of a run as Markdown (deterministic)."""

from __future__ import annotations

from tdebench.report import curve, extras, layers_view, precision_view, texts, threats_view, warnings_view
from tdebench.report.counters_view import CounterIndex
from tdebench.report.fmt import DASH, fmt_bytes, fmt_ci, fmt_p, fmt_pct, fmt_value, fmt_value_ci
from tdebench.report.mdkit import md_table
from tdebench.report.model import EngineSummary, RunSummary
from tdebench.stats.anova import ALL_CONFIGS
from tdebench.stats.describe import Summary


def _med(s: Summary | None) -> str:
    return fmt_value(s.median, s.unit) if s else DASH


def summary_lines(es: EngineSummary, counters: CounterIndex | None = None) -> list[str]:
    """The per-engine summary table."""
    hl = texts.headline_label(es.headline)
    step = es.headline.step if es.headline else ""
    figures = list(es.rows[0].figures) if es.rows else []
    headers = ["config", "encryption", f"n ({es.n_unit})", f"{hl} (median)", "95% CI", "overhead", "95% CI",
               "p", "verdict", "server CPU overhead", "CPU 95% CI", texts.WAIT_COL, "wait 95% CI", "counters",
               *figures, "storage", "encrypted on disk"]
    rows = []
    for r in es.rows:
        h, o = r.headline, r.overhead
        cpu = None if r.is_baseline else r.cpu_overhead
        wait = None if r.is_baseline else r.wait_overhead
        storage = fmt_bytes(r.storage_bytes) if r.storage_bytes else DASH
        storage += " (catalog)" if r.storage_bytes and r.storage_scope == "catalog" else ""
        storage += f" ({fmt_pct(r.storage_pct)})" if r.storage_pct is not None else ""
        rows.append([
            r.label, r.shown_encryption if r.encryption else DASH, str(h.n) if h else DASH, _med(h),
            fmt_value_ci(h.median_ci_low, h.median_ci_high, h.unit) if h else DASH,
            "plain twin" if r.is_baseline else (fmt_pct(o.overhead_pct) if o else DASH),
            fmt_ci(o.ci_low_pct, o.ci_high_pct) if o and not r.is_baseline else DASH,
            fmt_p(o.p_value) if o and not r.is_baseline else DASH,
            r.verdict or DASH, fmt_pct(cpu.overhead_pct) if cpu else DASH,
            fmt_ci(cpu.ci_low_pct, cpu.ci_high_pct) if cpu else DASH,
            fmt_pct(wait.overhead_pct) if wait else DASH, fmt_ci(wait.ci_low_pct, wait.ci_high_pct) if wait else DASH,
            (counters.brief(r.label, step) or DASH) if counters else DASH,
            *(_med(r.figures.get(f)) for f in figures), storage, r.verification.verdict])
    right = {*(headers[i] for i in (2, 3, 4, 5, 6, 7, 9, 10, 11, 12)), *figures, "storage"}
    optional = (*figures, "storage", "server CPU overhead", "CPU 95% CI", texts.WAIT_COL, "wait 95% CI",
                "counters")
    keep = [i for i, h in enumerate(headers) if h not in optional or any(r[i] != DASH for r in rows)]
    headers = [headers[i] for i in keep]
    rows = [[r[i] for i in keep] for r in rows]
    return md_table(headers, rows, {i for i, h in enumerate(headers) if h in right})


def query_lines(es: EngineSummary, counters: CounterIndex | None = None) -> list[str]:
    """Per-query medians and overheads, with the engine's counters when it counts them."""
    counters = counters if counters and any(c in counters.configs() for c in es.configs) else None
    headers, right = ["query"], set()
    for r in es.rows:
        right.add(len(headers))
        headers.append(r.shown_label)
        if not r.is_baseline:
            right.update(range(len(headers), len(headers) + 3))
            headers += ["overhead", "95% CI", "p"]
        if counters:
            headers.append("counters")
    rows = []
    for q in es.queries:
        row = [q.step]
        for r in es.rows:
            s = q.summaries.get(r.label)
            med = _med(s) + (f" (n = {s.n})" if s and (s.n_failed or s.n_timeout) else "")
            row.append(med)
            if not r.is_baseline:
                o = q.overheads.get(r.label)
                row += ([fmt_pct(o.overhead_pct), fmt_ci(o.ci_low_pct, o.ci_high_pct),
                         fmt_p(o.p_value)] if o else [DASH] * 3)
            if counters:
                row.append(counters.brief(r.label, q.step) or DASH)
        rows.append(row)
    return md_table(headers, rows, right)


def verification_lines(rs: RunSummary) -> list[str]:
    """Verification table."""
    rows = []
    for es in rs.engines:
        for r in es.rows:
            v = r.verification
            rows.append([r.label, r.label_status.text, texts.status_text(v), v.verdict,
                         DASH if v.marker_hits is None else str(v.marker_hits),
                         DASH if v.files_scanned is None else str(v.files_scanned),
                         texts.yes_no(v.answers_equal)])
    return md_table(["config", "label", "status query", "encrypted on disk", "canary hits", "files scanned",
                     "answers equal"], rows, {4, 5})


def methods_lines(rs: RunSummary) -> list[str]:
    """Machine, plan, configs, trial order, statistics."""
    m = rs.manifest
    out = ["## Methods", ""]
    out += [f"- **{k}**: {v}" for k, v in texts.host_facts(m) + texts.plan_facts(m)
            if v not in (None, "")]
    out += [f"- **measurements**: {texts.measurement_counts(rs)}", ""]
    out += md_table(["config", "engine version", "settings"],
                    [[r.shown_label, r.engine_version or DASH, texts.settings_text(r.settings)]
                     for es in rs.engines for r in es.rows], set()) + [""]
    out += ["Schedule, stopping and machine state:", ""]
    out += [f"- {t}" for t in precision_view.methods_paragraphs(rs)] + [""]
    blocks = texts.blocks(m)
    if blocks:
        out += ["Trial order (randomized blocks):", ""]
        out += md_table(["block", "order"], blocks, set()) + [""]
    out += texts.verification_method(rs) + [""]
    out += [f"- {t}" for t in texts.stats_methods(rs.analysis.settings)]
    return out


def render(rs: RunSummary) -> str:
    """The complete summary.md."""
    out = [f"# Encryption at rest: {rs.files.run_id}", ""]
    out += ["## Verdict", ""]
    for es in rs.engines:
        out += [f"- **{es.engine}** ({texts.headline_label(es.headline)}): {v}" for v in es.verdicts]
        out += [f"- **{es.engine}** (precision target): {s}" for s in es.precision]
        out += [f"- **{es.engine}** (memory regime): {s}" for s in es.regimes]
        out += [f"- **{es.engine}** (threat model): {s}" for s in threats_view.sentences(rs, es)]
    headline = [r.overhead for es in rs.engines for r in es.rows if r.overhead]
    out += ["", f"_Median over trials; {texts.overhead_note(headline)}_", ""]
    out += warnings_view.md_top(rs)
    out += curve.md_lines(rs)
    counters = CounterIndex(rs.analysis.measurements)
    section = rs.presentation.section("queries")
    for es in rs.engines:
        out += [f"## Summary: {es.engine}", ""] + summary_lines(es, counters) + [""]
        if es.queries:
            out += [f"## Per query: {es.engine}" + (f" ({section.title})" if section else ""), ""]
            out += query_lines(es, counters) + [""]
        if es.anovas():
            out += [f"## Across configs: {es.engine}", ""]
            unit = next((r.headline.unit for r in es.rows if r.headline and r.headline.unit), "")
            for a in es.anovas():
                over = ("" if a.scope == ALL_CONFIGS
                        else f" (the {len(a.configs)} encrypted configs only, plain left out)")
                out += [f"{a.test}/{a.step}{over}: ANOVA {fmt_p(a.p_anova)}, eta² = "
                        f"{DASH if a.eta_squared is None else f'{a.eta_squared:.2f}'}; Kruskal–Wallis "
                        f"{fmt_p(a.p_kruskal)}; read {a.primary_test}.", ""]
                out += md_table(["config A", "config B", f"mean B − A ({unit or 'value'})", "p (Tukey)"],
                                [[t.config_a, t.config_b, f"{t.mean_diff:+.4g}", fmt_p(t.p_value)]
                                 for t in a.tukey], {2, 3}) + [""]
    out += layers_view.md_lines(rs)
    out += extras.md_lines(rs)
    out += threats_view.md_lines(rs)
    out += warnings_view.md_section(rs)
    out += ["## Verification", ""] + verification_lines(rs) + [""]
    out += methods_lines(rs)
    return "\n".join(out).rstrip() + "\n"
