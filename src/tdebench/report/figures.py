"""Turn a :class:`RunSummary` into the charts of the report (each one skipped without data)."""

from __future__ import annotations

from tdebench.api.presentation import Rate
from tdebench.report import charts
from tdebench.report.charts import Chart
from tdebench.report.encrypt_timeline import timeline_charts
from tdebench.report.model import EngineSummary, RunSummary
from tdebench.stats.analysis import Analysis
from tdebench.stats.metrics import step_label, vu_count


def _names(es: EngineSummary) -> dict[str, str]:
    """Config label -> the name a chart shows: with its label status when the server does not confirm it."""
    shown = {r.label: r.shown_label for r in es.rows}
    return {c: shown.get(c, c) for c in es.configs}


def _colors(es: EngineSummary) -> dict[str, str]:
    names = _names(es)
    return charts.color_map([names[c] for c in es.configs], [names[r.label] for r in es.rows if r.is_plain])


def headline_box(rs: RunSummary, es: EngineSummary) -> Chart | None:
    """Box plot of the headline (power-test totals) per config."""
    if es.headline is None:
        return None
    groups = []
    for c in es.configs:
        sample = rs.analysis.measurements.sample(es.headline._replace(config=c))
        if sample is not None:
            groups.append((_names(es).get(c, c), sample.values))
    h = es.headline
    unit = rs.analysis.measurements.units.get(h._replace(config=es.configs[0]), "s") if es.configs else "s"
    each = es.n_unit.removesuffix("s")  # a trial, or a round of the interleaved schedule
    title = f"{es.engine}: {h.test} test {step_label(h.step)} per {each}"
    svg = charts.box_plot(groups, _colors(es), unit=unit or "s", title=title)
    caption = (f"Each dot is one {each}; the box spans the quartiles and the line marks the median. "
               "Interleaved blocks, warm-up discarded.")
    return Chart(title, caption, svg) if svg else None


def query_bars(es: EngineSummary, what: str = "") -> Chart | None:
    """Grouped bars: median per query and config with 95% bootstrap CI of the median (``what``: the workload's
    title of its queries section)."""
    if not es.queries:
        return None
    series = []
    for c in es.configs:
        sums = [q.summaries.get(c) for q in es.queries]
        if not any(s and s.n for s in sums):
            continue
        series.append((_names(es).get(c, c), [s.median if s else None for s in sums],
                       [s.median_ci_low if s else None for s in sums],
                       [s.median_ci_high if s else None for s in sums]))
    title = f"{es.engine}: median time per query" + (f" ({what})" if what else "")
    svg = charts.query_bars([q.step for q in es.queries], series, _colors(es), title=title)
    caption = ("Bars show the median over trials on a log scale; whiskers the 95% bootstrap "
               "interval of the median (with 3 trials it is close to the min–max range).")
    return Chart(title, caption, svg) if svg else None


def overhead_heatmap(es: EngineSummary) -> Chart | None:
    """Heatmap of overhead % per query × encrypted config."""
    configs = [r.label for r in es.rows if not r.is_baseline]
    if not es.queries or not configs:
        return None
    pct, sig = [], []
    for c in configs:
        row = [q.overheads.get(c) for q in es.queries]
        pct.append([o.overhead_pct if o else None for o in row])
        sig.append([bool(o and not o.ci_spans_zero and o.p_value is not None and o.p_value < 0.05)
                    for o in row])
    title = f"{es.engine}: overhead vs plain per query (%)"
    svg = charts.overhead_heatmap([q.step for q in es.queries], [_names(es).get(c, c) for c in configs], pct, sig,
                                  title=title)
    caption = ("Red: slower than the plain twin, blue: faster. Bold numbers are resolved (their 95% CI excludes 0, "
               "and p < 0.05); faded numbers with “?”: no difference resolved.")
    return Chart(title, caption, svg) if svg else None


def _vu_lines(a: Analysis, es: EngineSummary, test: str, metric: str) -> list[tuple]:
    lines = []
    for c in es.configs:
        pts = sorted(((vu_count(k.step) or 0, s) for k, s in a.summaries.items()
                      if k.config == c and k.test == test and k.metric == metric
                      and vu_count(k.step) is not None and s.median is not None), key=lambda p: p[0])
        if pts:
            lines.append((_names(es).get(c, c), [p[0] for p in pts], [p[1].median for p in pts],
                          [p[1].median_ci_low for p in pts], [p[1].median_ci_high for p in pts]))
    return lines


def one_writer(rs: RunSummary, es: EngineSummary) -> str:
    """The product name when the engine's dialect (as the manifest recorded it) lets one writer in at a time
    (:attr:`Dialect.concurrent_writes` False), else ""."""
    for label in es.configs:
        dialect = rs.files.manifest_config(label).get("dialect")  # imported runs name theirs (a string)
        # manifests written before concurrent_writes existed: only SQLite's dialect lacked row locks
        if isinstance(dialect, dict) and dialect.get("concurrent_writes", dialect.get("row_locks", True)) is False:
            return str(dialect.get("product") or es.engine)
    return ""


def throughput_vs_users(a: Analysis, es: EngineSummary, rates: tuple[Rate, ...],
                        single_writer: str = "") -> list[Chart]:
    """Each throughput the workload declares (``rates``: TPC-C's TPM and NOPM, sysbench's transactions/s) against
    virtual users, one line per config with CIs, a chart per test (named when the run has several);
    ``single_writer``: the product that lets one writer in at a time (:func:`one_writer`), said in the caption."""
    keys = [k for k in a.summaries if k.config in es.configs and vu_count(k.step) is not None]
    tests = sorted({k.test for k in keys if any(k.metric == r.metric for r in rates)})
    out = []
    for test in tests:
        metrics = {k.metric for k in keys if k.test == test}
        for rate in (r for r in rates if r.metric in metrics):
            lines = _vu_lines(a, es, test, rate.metric)
            title = f"{es.engine}: {rate.title} vs virtual users" + (f" ({test})" if len(tests) > 1 else "")
            svg = (charts.tpm_vs_users(lines, _colors(es), title=title, ylabel=f"{rate.title} (median)")
                   if lines else None)
            caption = (rate.caption + " " if rate.caption else "") + (
                "Median over trials with the 95% bootstrap CI of the median; interleaved blocks, warm-up discarded.")
            if single_writer:
                caption += (f" {single_writer} allows one writer at a time: virtual users queue on its lock "
                            "timeout, so throughput does not grow with them.")
            if svg:
                out.append(Chart(title, caption, svg))
    return out


def cipher_floor(a: Analysis) -> Chart | None:
    """Hook (later): raw cipher throughput, from rows of workload ``cipher`` if a run has them."""
    bars = sorted({k.step: s.median for k, s in a.summaries.items()
                   if k.workload == "cipher" and s.median is not None}.items())
    unit = next((a.measurements.units.get(k, "") for k in a.summaries if k.workload == "cipher"), "")
    svg = charts.cipher_floor(bars, unit=unit, title="Cipher floor: raw cipher speed") if bars else None
    return Chart("Cipher floor", "Median raw cipher speed measured on this host: the least "
                 "any encrypted engine pays.", svg) if svg else None


def engine_charts(rs: RunSummary, es: EngineSummary) -> list[Chart]:
    """All charts of one engine, in report order (absent data gives no chart)."""
    queries = rs.presentation.section("queries")
    made = [headline_box(rs, es), query_bars(es, queries.title if queries else ""), overhead_heatmap(es),
            *throughput_vs_users(rs.analysis, es, rs.presentation.rates, one_writer(rs, es)),
            *timeline_charts(rs.run_dir, es.configs)]
    return [c for c in made if c is not None]
