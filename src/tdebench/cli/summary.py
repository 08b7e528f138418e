"""The terminal summary of a run, laid out as its workload declares (tdebench.api.presentation): the headline
total per config and the steps of its queries, throughput per virtual-user step and latency per transaction
kind, a table of steps, or the switching table; then the verdict and the storage.

Every overhead it shows comes from the report's own analysis (:func:`tdebench.report.model.summarize`, with the
run's statistics settings), formatted as the report formats it, so the terminal, summary.md, index.html and
overhead.csv give the same estimate and interval for the same comparison (tests/unit/test_one_number.py).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from statistics import median
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from tdebench.api.presentation import COMMON_WAIT, Presentation
from tdebench.cli.encrypt_summary import encrypt_table
from tdebench.api.faults import KEYSERVER_DOWN, outage_text
from tdebench.report import keys_view
from tdebench.report.fmt import fmt_ci, fmt_pct
from tdebench.report.model import RunSummary, summarize
from tdebench.report.texts import WAIT_COL
from tdebench.report.warnings_view import one_line
from tdebench.api.regime import ratio_of
from tdebench.results.labels import LabelStatus, label_status, manifest_label_status
from tdebench.results.rundir import RunDirectory
from tdebench.stats.load import Measurements, SeriesKey
from tdebench.stats.metrics import vu_count
from tdebench.stats.overhead import Overhead

Series = dict[tuple[str, str], list[float]]  # (config, step) -> values over trials
LATENCIES = ("latency_p50", "latency_p95", "latency_p99")


def _elapsed_series(measurements: Measurements, test: str) -> Series:
    """Seconds per (config, step) of ``test``: the rows the report keeps (ok, warm-up block 0 left out)."""
    series: Series = defaultdict(list)
    for key, sample in measurements.series.items():
        if key.test == test and key.metric == "elapsed":
            series[(key.config, key.step)].extend(sample.values.tolist())
    return series


def overhead_text(o: Overhead | None) -> str:
    """The report's figure for one comparison: ``+11.1% (9.1–14.1%)``, or a dash."""
    if o is None:
        return "–"
    ci = fmt_ci(o.ci_low_pct, o.ci_high_pct)
    return fmt_pct(o.overhead_pct) + (f" ({ci})" if o.ci_low_pct is not None else "")


class _Overheads:
    """Overhead rows of the run's analysis, looked up by config and series (test, step, metric)."""

    def __init__(self, rs: RunSummary) -> None:
        self.analysis = rs.analysis
        self.by = {(o.config, o.test, o.step, o.metric): o for o in rs.analysis.overheads}

    def get(self, config: str, test: str, step: str, metric: str = "elapsed") -> Overhead | None:
        return self.by.get((config, test, step, metric))

    def is_baseline(self, config: str) -> bool:
        return config not in self.analysis.baselines


NAMING = ("config", "test", "step", "kind", "query")


def _add_columns(table: Table, columns: tuple[str, ...] | list[str], names: list[str]) -> None:
    """The naming columns (config, test, step, kind, query) left-aligned and never cut (as wide as the longest of
    ``names``, the config labels and steps they hold); the figures right-aligned, wrapped and, in a terminal too
    narrow for a figure, folded onto the next line rather than cut."""
    widest = max((len(n) for n in names), default=0)
    for column in columns:
        if column in NAMING:
            table.add_column(column, no_wrap=True, min_width=max(widest if column == "config" else 0, len(column)))
        else:
            table.add_column(column, justify="right", overflow="fold")  # folded, never cut with an ellipsis


def _n_column(measurements: Measurements, keys: list[SeriesKey]) -> str:
    """``n (rounds)`` when the values counted are rounds of the interleaved schedule, else ``n (trials)``."""
    rounds = any((s := measurements.sample(k)) is not None and s.rounds is not None and s.rounds.any() for k in keys)
    return f"n ({'rounds' if rounds else 'trials'})"


def _rates_table(measurements: Measurements, shown: Presentation, configs: list[dict], ovh: _Overheads) -> Table:
    """Median of each declared throughput (TPM and NOPM, transactions/s) per config and virtual-user step, with
    the overhead vs plain."""
    metrics = tuple(r.metric for r in shown.rates)
    series: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    keys = [k for k in measurements.series if k.metric in metrics and vu_count(k.step) is not None]
    for key in keys:
        series[(key.config, key.test, key.step, key.metric)].extend(measurements.series[key].values.tolist())
    steps = sorted({(t, s) for _, t, s, _ in series}, key=lambda ts: (ts[0], vu_count(ts[1]) or 0))
    table = Table(title=f"{shown.title}: median {' / '.join(r.title for r in shown.rates)} per virtual-user step "
                        "(overhead vs plain, 95% CI)", title_justify="left")
    _add_columns(table, ("config", "test", "step", _n_column(measurements, keys), *metrics),
                 [c.get("label_shown", c["label"]) for c in configs])
    for c in configs:
        for test, step in steps:
            cells = []
            for metric in metrics:
                values = series.get((c["label"], test, step, metric), [])
                text = f"{median(values):,.0f}" if values else "–"
                o = ovh.get(c["label"], test, step, metric)
                if values and o is not None:
                    text += f" {overhead_text(o)}"
                cells.append(text)
            n = len(series.get((c["label"], test, step, metrics[0]), []))
            table.add_row(c.get("label_shown", c["label"]), test, step, str(n), *cells)
    return table


def _latency_table(measurements: Measurements, shown: Presentation, configs: list[dict],
                   ovh: _Overheads) -> Table | None:
    """Median p50 / p95 / p99 latency (ms) per declared transaction kind at the largest virtual-user step, with
    the overhead vs plain and its 95% CI (paired by round with the interleaved schedule)."""
    kinds = shown.latency_kinds
    found = {(k.config, k.step, k.metric): k for k in measurements.series if k.metric in LATENCIES}
    steps = {step.split(".")[0] for _, step, _ in found if step.split(".")[-1] in kinds}
    if not kinds or not steps:
        return None
    step = max(steps, key=lambda s: vu_count(s) or -1)
    table = Table(title=f"{shown.title}: median latency per transaction kind at {step}, ms (overhead vs plain, "
                        "95% CI)", title_justify="left")
    _add_columns(table, ("config", "kind", _n_column(measurements, list(found.values())), "p50", "p95", "p99"),
                 [c.get("label_shown", c["label"]) for c in configs])
    for c in configs:
        for kind in kinds:
            cells, n = [], 0
            for metric in LATENCIES:
                key = found.get((c["label"], f"{step}.{kind}", metric))
                sample = measurements.sample(key) if key is not None else None
                if key is None or sample is None:
                    cells.append("–")
                    continue
                n = sample.n
                text = f"{median(sample.values.tolist()) * 1000:.2f}"
                o = ovh.get(c["label"], key.test, key.step, metric)
                if o is not None:
                    text += f" {overhead_text(o)}"
                cells.append(text)
            table.add_row(c.get("label_shown", c["label"]), kind, str(n), *cells)
    return table


def plain_twins(configs: list[dict]) -> dict[str, str]:
    """Config label -> the label of its plain twin: the first plain config of its engine at the same memory ratio."""
    first: dict[tuple[str, float | None], str] = {}
    for c in configs:
        if c.get("encryption") == "none":
            first.setdefault((c["engine"], ratio_of(c["label"])), c["label"])
    return {c["label"]: first[(c["engine"], ratio_of(c["label"]))] for c in configs
            if (c["engine"], ratio_of(c["label"])) in first}


def _labels(manifest: dict, verification: dict) -> dict[str, LabelStatus]:
    """Config label -> its label status (recorded in the manifest, else derived from verification.json)."""
    out = {}
    for c in manifest.get("configs", []):
        entry = verification.get("configs", {}).get(c.get("base_label", c["label"]))
        out[c["label"]] = manifest_label_status(c) or label_status(entry, c.get("encryption") == "none")
    return out


def label_warnings(run_dir: Path) -> list[str]:
    """One line per config whose label the evidence does not confirm (overridden, unverifiable)."""
    rundir = RunDirectory(run_dir)
    manifest = rundir.read_manifest()
    verification = json.loads(rundir.verification_path.read_text()) if rundir.verification_path.exists() else {}
    labels = _labels(manifest, verification)
    return [labels[c["label"]].warning(c["label"], c.get("encryption", "")) for c in manifest.get("configs", [])
            if labels[c["label"]].flagged]


def _shown(c: dict, labels: dict[str, LabelStatus]) -> str:
    """The config as the console shows it: label and, unless confirmed, its encryption and label status."""
    status = labels.get(c["label"])
    if status is None or not status.flagged:
        return c["label"]
    return f"{c['label']} ({c.get('encryption', '?')}, {status.text})"


def build_summary(run_dir: Path, rs: RunSummary | None = None) -> Group:
    """Rich tables for the terminal, laid out as the workload declares (``rs``: the run's summary when the caller
    has it already)."""
    rs = rs or summarize(Path(run_dir))
    manifest = rs.manifest
    verification = rs.files.verification or {}
    measurements = rs.analysis.measurements
    ovh = _Overheads(rs)
    labels = _labels(manifest, verification)
    everything = [{**c, "label_shown": _shown(c, labels)} for c in manifest.get("configs", [])]
    loaded = [c for c in everything if "base_label" not in c]  # a memory sweep measures its regime labels
    configs = [c for c in everything if "base_label" in c] or loaded
    if not configs:  # measurements without a manifest: the configs they name
        configs = [{"label": c, "label_shown": c} for c in measurements.config_order]
    storage = _storage_table(loaded, plain_twins(loaded))
    shown = rs.presentation
    if shown.layout == "switching":  # no plain twin: each cycle's own baseline
        section = shown.section("switching")
        return Group(encrypt_table(measurements, [c["label"] for c in configs], section.test if section else ""),
                     storage)
    if shown.layout == "rates" and shown.rates:
        latency = _latency_table(measurements, shown, configs, ovh)
        tables: list[RenderableType] = [_rates_table(measurements, shown, configs, ovh), *([latency] if latency else [])]
        return Group(*tables, verdict_text(rs), storage)
    if shown.layout == "steps" and shown.step_groups:
        test = next((g.test for g in shown.step_groups
                     if any(k.test == g.test for k in measurements.series)), shown.step_groups[0].test)
        steps = _steps_table(configs, ovh, _elapsed_series(measurements, test), test)
        return Group(steps, verdict_text(rs), storage)
    return Group(_totals_table(rs, configs, ovh), verdict_text(rs), *_queries_table(rs, configs), storage)


def _totals_table(rs: RunSummary, configs: list[dict], ovh: _Overheads) -> Table:
    """The headline per config: n, median, range, overhead vs plain with its CI, the server CPU overhead, the
    at-rest verdict and answer equality."""
    shown, verification = rs.presentation, rs.files.verification or {}
    head = next((es.headline for es in rs.engines if es.headline), None)
    what = shown.headlines[0].title if shown.headlines else (f"{head.step} {head.metric}" if head else "")
    totals = Table(title=f"{shown.title}: {what}" if what else shown.title, title_justify="left")
    n_column = _n_column(rs.analysis.measurements, [head._replace(config=c["label"]) for c in configs] if head else [])
    waits = {c["label"]: ovh.get(c["label"], head.test, head.step, COMMON_WAIT) if head else None for c in configs}
    shown_waits = any(waits.values())
    _add_columns(totals, ("config", n_column, "median s", "min–max s", "overhead vs plain (95% CI)",
                          "server CPU overhead", *([WAIT_COL] if shown_waits else []), "on disk", "answers"),
                 [c.get("label_shown", c["label"]) for c in configs])
    series = _elapsed_series(rs.analysis.measurements, head.test) if head else {}
    for c in configs:
        label = c["label"]
        values = series.get((label, head.step), []) if head else []
        ver = verification.get("configs", {}).get(c.get("base_label", label), {})
        disk = "encrypted" if ver.get("encrypted_on_disk") else ("plaintext" if "encrypted_on_disk" in ver else
                                                                 "n/a" if ver.get("at_rest") == "not possible" else "?")
        ok = {True: "equal", False: "DIFFER", None: "–"}[ver.get("answers_equal")]
        o = ovh.get(label, head.test, head.step) if head else None
        cpu = ovh.get(label, head.test, head.step, "server_cpu") if head else None
        baseline = ovh.is_baseline(label)
        wait = [] if not shown_waits else ["" if baseline else overhead_text(waits[label])]
        totals.add_row(c.get("label_shown", label), str(len(values)), f"{median(values):.3f}" if values else "–",
                       f"{min(values):.3f}–{max(values):.3f}" if values else "–",
                       "baseline" if baseline else overhead_text(o), "" if baseline else overhead_text(cpu), *wait,
                       disk, ok)
    return totals


def _queries_table(rs: RunSummary, configs: list[dict]) -> list[Table]:
    """Median seconds per query of the workload's queries section, with the overhead vs plain (the report's
    per-query rows); nothing when it has none."""
    order = list(dict.fromkeys(q.step for es in rs.engines for q in es.queries))
    if not order:
        return []
    rows = {(q.step, config): q for es in rs.engines for q in es.queries for config in q.summaries}
    queries = Table(title="median seconds per query (overhead vs plain)", title_justify="left")
    queries.add_column("query", no_wrap=True)
    for c in configs:
        queries.add_column(c.get("label_shown", c["label"]), justify="right", overflow="fold")
    for step in order:
        cells = []
        for c in configs:
            q = rows.get((step, c["label"]))
            s = q.summaries[c["label"]] if q else None
            o = q.overheads.get(c["label"]) if q else None
            text = f"{s.median:.4f}" if s is not None and s.median is not None else "–"
            cells.append(text + (f" ({fmt_pct(o.overhead_pct)})" if o is not None and text != "–" else ""))
        queries.add_row(step, *cells)
    return [queries]


def verdict_text(rs: RunSummary) -> Text:
    """The report's verdict sentences (the same words as summary.md and index.html)."""
    return Text("\n".join(f"{es.engine}: {v}" for es in rs.engines for v in (*es.verdicts, *es.precision,
                                                                                 *es.regimes)) + "\n")


def _steps_table(configs: list[dict], ovh: _Overheads, series: Series, test: str) -> Table:
    """Median seconds per step of ``test``, with the overhead vs plain (95% CI)."""
    table = Table(title=f"{test}: median seconds per step (overhead vs plain, 95% CI)", title_justify="left")
    table.add_column("step", no_wrap=True)
    for c in configs:
        table.add_column(c.get("label_shown", c["label"]), justify="right", overflow="fold")
    for step in dict.fromkeys(step for _, step in series):
        cells = []
        for c in configs:
            values = series.get((c["label"], step), [])
            text = f"{median(values):.4f}" if values else "–"
            o = ovh.get(c["label"], test, step)
            if values and o is not None:
                text += f" ({overhead_text(o)})"
            cells.append(text)
        table.add_row(step, *cells)
    return table


def _mib(n: float | None) -> str:
    return f"{n / 1024**2:,.1f} MiB" if n else "–"


def _growth(value: float | None, base: float | None) -> str:
    return f"{value / base:.2f}×" if value and base else "–"


def _storage_table(configs: list[dict], plain: dict[str, str]) -> Table:
    """Storage per config with the growth factor vs the plain twin, as the studies reported it."""
    table = Table(title="storage after load (growth vs plain)", title_justify="left")
    _add_columns(table, ("config", "tables+indexes", "growth", "on disk (all files)", "growth"),
                 [c.get("label_shown", c["label"]) for c in configs])
    by_label = {c["label"]: c for c in configs}
    for c in configs:
        base = by_label.get(plain.get(c["label"], ""), {})
        catalog = (c.get("storage") or c.get("storage_tables") or {}).get("totals", {}).get("total_bytes")
        base_catalog = (base.get("storage") or base.get("storage_tables") or {}).get("totals", {}).get("total_bytes")
        if _catalog_only(c):  # a server whose files are not visible: its catalog is all there is
            table.add_row(c.get("label_shown", c["label"]), f"{_mib(catalog)} (catalog)",
                          _growth(catalog, base_catalog), "n/a: files not visible", "–")
            continue
        table.add_row(c.get("label_shown", c["label"]), _mib(catalog), _growth(catalog, base_catalog),
                      _mib(c.get("storage_bytes")), _growth(c.get("storage_bytes"), base.get("storage_bytes")))
    return table


def _catalog_only(c: dict) -> bool:
    storage = c.get("storage")
    return isinstance(storage, dict) and storage.get("scope") == "catalog"


def print_summary(run_dir: Path, console: Console, rs: RunSummary | None = None) -> None:
    """Print the summary tables, after a warning for every label the evidence does not confirm; then the run's
    warnings in one line and the faults injected."""
    for line in label_warnings(run_dir):
        console.print(f"WARNING: {line}", style="bold red", markup=False, highlight=False, soft_wrap=True)
    rs = rs or summarize(Path(run_dir))
    console.print(build_summary(run_dir, rs))
    line = one_line(rs)
    if line:  # how many, of which kinds, and where each one is: never the list itself
        console.print(line + ".", markup=False, highlight=False, soft_wrap=True)
    for line in fault_lines(rs.manifest):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if rs is not None and keys_view.keyed(rs):  # the key server's section, as the report has it
        table = Table(title="key server", title_justify="left")
        for i, header in enumerate(keys_view.HEADERS):
            table.add_column(header, justify="right" if i in keys_view.NUMERIC else "left")
        for row in keys_view.rows(rs):
            table.add_row(*row)
        console.print(table)
        for line in keys_view.lines(rs):
            console.print(line, markup=False, highlight=False, soft_wrap=True)


def fault_lines(manifest: dict[str, Any]) -> list[str]:
    """One line per trial ``--fault`` hit: how the node came back, and that the trial is flagged."""
    out = []
    for f in manifest.get("faults") or []:
        rejoined = (outage_text(f) if str(f.get("fault", "")).startswith(KEYSERVER_DOWN) else
                    f"rejoined by {f.get('transfer')} in {f.get('seconds_to_synced')} s")
        how = rejoined if f.get("injected") else f.get("error") or f.get("note") or "not injected"
        flag = "flagged, left out of n and of the intervals" if f.get("flagged") else "not flagged"
        out.append(f"fault: {f.get('config')} block {f.get('block')}: {f.get('fault')}: {f.get('node')} {how}; "
                   f"trial {flag}")
    return out
