"""The terminal summary of a run: power-test totals, per-query medians, overhead vs plain.

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

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from tdebench.cli.encrypt_summary import encrypt_table
from tdebench.api.faults import KEYSERVER_DOWN, outage_text
from tdebench.report import keys_view
from tdebench.report.fmt import fmt_ci, fmt_pct
from tdebench.report.model import RunSummary, summarize
from tdebench.api.regime import ratio_of
from tdebench.results.labels import LabelStatus, label_status, manifest_label_status
from tdebench.results.rundir import RunDirectory
from tdebench.stats.load import Measurements, SeriesKey
from tdebench.stats.overhead import Overhead

Series = dict[tuple[str, str], list[float]]  # (config, step) -> values over trials


STEP_TESTS = {"crud": "crud", "load": "ingest", "backup": "backup", "sql": "sql", "replay": "replay"}  # workloads whose steps live in one test


def _elapsed_series(measurements: Measurements, test: str = "power") -> Series:
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
    """Overhead rows of the run's analysis, looked up by config and series."""

    def __init__(self, rs: RunSummary) -> None:
        self.analysis = rs.analysis
        self.engine = {k.config: k.engine for k in rs.analysis.measurements.all_keys()}

    def get(self, config: str, workload: str, test: str, step: str, metric: str = "elapsed") -> Overhead | None:
        key = SeriesKey(self.engine.get(config, ""), config, workload, test, step, metric)
        return self.analysis.overhead(key)

    def is_baseline(self, config: str) -> bool:
        return config not in self.analysis.baselines


_OLTP_METRICS = {"tpcc": ("tpm", "nopm"), "sysbench": ("tps",)}


def _oltp_table(measurements: Measurements, workload: str, configs: list[dict], ovh: _Overheads) -> Table:
    """tpcc/sysbench: median TPM and NOPM (or tps) per config and virtual-user step, overhead vs plain."""
    metrics = _OLTP_METRICS[workload]
    series: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for key, sample in measurements.series.items():
        if key.workload == workload and key.metric in metrics and key.step.startswith("vu") and "." not in key.step:
            series[(key.config, key.test, key.step, key.metric)].extend(sample.values.tolist())
    steps = sorted({(t, s) for _, t, s, _ in series}, key=lambda ts: (ts[0], int(ts[1][2:])))
    table = Table(title=f"{workload}: median {' / '.join(m.upper() for m in metrics)} per virtual-user step "
                        "(overhead vs plain, 95% CI)", title_justify="left")
    for column in ("config", "test", "step", "n", *metrics):
        table.add_column(column, justify="left" if column in ("config", "test", "step") else "right")
    for c in configs:
        for test, step in steps:
            cells = []
            for metric in metrics:
                values = series.get((c["label"], test, step, metric), [])
                text = f"{median(values):,.0f}" if values else "–"
                o = ovh.get(c["label"], workload, test, step, metric)
                if values and o is not None:
                    text += f" {overhead_text(o)}"
                cells.append(text)
            n = len(series.get((c["label"], test, step, metrics[0]), []))
            table.add_row(c.get("label_shown", c["label"]), test, step, str(n), *cells)
    return table


_LATENCY = {"tpcc": ("new_order", "payment", "order_status", "delivery", "stock_level")}


def _latency_table(measurements: Measurements, workload: str, configs: list[dict], ovh: _Overheads) -> Table | None:
    """tpcc: median p50 / p95 / p99 latency (ms) per transaction kind at the largest virtual-user step, with the
    overhead vs plain and its 95% CI (paired by round with the interleaved schedule)."""
    kinds = _LATENCY.get(workload)
    if not kinds:
        return None
    steps = {k.step.split(".")[0] for k in measurements.series if k.workload == workload and k.step.startswith("vu")}
    if not steps:
        return None
    step = max(steps, key=lambda s: int(s[2:]) if s[2:].isdigit() else -1)
    metrics = ("latency_p50", "latency_p95", "latency_p99")
    table = Table(title=f"{workload}: median latency per transaction kind at {step}, ms (overhead vs plain, 95% CI)",
                  title_justify="left")
    for column in ("config", "kind", "n", "p50", "p95", "p99"):
        table.add_column(column, justify="left" if column in ("config", "kind") else "right")
    for c in configs:
        for kind in kinds:
            cells, n = [], 0
            for metric in metrics:
                sample = measurements.sample(SeriesKey(ovh.engine.get(c["label"], ""), c["label"], workload,
                                                       workload, f"{step}.{kind}", metric))
                if sample is None:
                    cells.append("–")
                    continue
                n = sample.n
                text = f"{median(sample.values.tolist()) * 1000:.2f}"
                o = ovh.get(c["label"], workload, workload, f"{step}.{kind}", metric)
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
    """Rich tables for the terminal: one row per config, then per-query medians (``rs``: the run's summary when
    the caller has it already)."""
    rs = rs or summarize(Path(run_dir))
    manifest = rs.manifest
    verification = rs.files.verification or {}
    measurements = rs.analysis.measurements
    ovh = _Overheads(rs)
    series = _elapsed_series(measurements)
    labels = _labels(manifest, verification)
    everything = [{**c, "label_shown": _shown(c, labels)} for c in manifest.get("configs", [])]
    loaded = [c for c in everything if "base_label" not in c]  # a memory sweep measures its regime labels
    configs = [c for c in everything if "base_label" in c] or loaded
    storage = _storage_table(loaded, plain_twins(loaded))
    workload = (manifest.get("plan") or {}).get("workload", "tpch")
    if workload in _OLTP_METRICS:
        latency = _latency_table(measurements, workload, configs, ovh)
        tables = [_oltp_table(measurements, workload, configs, ovh), *([latency] if latency else [])]
        return Group(*tables, verdict_text(rs), storage)
    if workload == "encrypt":  # no plain twin: each cycle's own baseline (docs/workloads/encrypt.md)
        return Group(encrypt_table(measurements, [c["label"] for c in configs]), storage)
    if workload in STEP_TESTS:
        test = STEP_TESTS[workload]
        steps = _steps_table(configs, ovh, _elapsed_series(measurements, test), test, workload)
        return Group(steps, verdict_text(rs), storage)

    totals = Table(title="TPC-H power test (stream 0): total of its query times", title_justify="left")
    for column in ("config", "n", "median s", "min–max s", "overhead vs plain (95% CI)", "server CPU overhead",
                   "on disk", "answers"):
        totals.add_column(column, justify="right" if column not in ("config",) else "left")
    for c in configs:
        label = c["label"]
        values = series.get((label, "total"), [])
        ver = verification.get("configs", {}).get(c.get("base_label", label), {})
        disk = "encrypted" if ver.get("encrypted_on_disk") else ("plaintext" if "encrypted_on_disk" in ver else
                                                                 "n/a" if ver.get("at_rest") == "not possible" else "?")
        ok = {True: "equal", False: "DIFFER", None: "–"}[ver.get("answers_equal")]
        o, cpu = ovh.get(label, workload, "power", "total"), ovh.get(label, workload, "power", "total", "server_cpu")
        baseline = ovh.is_baseline(label)
        totals.add_row(c.get("label_shown", label), str(len(values)), f"{median(values):.3f}" if values else "–",
                       f"{min(values):.3f}–{max(values):.3f}" if values else "–",
                       "baseline" if baseline else overhead_text(o), "" if baseline else overhead_text(cpu), disk, ok)

    queries = Table(title="median seconds per query (overhead vs plain)", title_justify="left")
    queries.add_column("query")
    for c in configs:
        queries.add_column(c.get("label_shown", c["label"]), justify="right")
    for number in range(1, 23):
        step = f"q{number:02d}"
        cells = []
        for c in configs:
            values = series.get((c["label"], step), [])
            text = f"{median(values):.4f}" if values else "–"
            o = ovh.get(c["label"], workload, "power", step)
            if values and o is not None:
                text += f" ({fmt_pct(o.overhead_pct)})"
            cells.append(text)
        queries.add_row(step, *cells)
    return Group(totals, verdict_text(rs), queries, storage)


def verdict_text(rs: RunSummary) -> Text:
    """The report's verdict sentences (the same words as summary.md and index.html)."""
    return Text("\n".join(f"{es.engine}: {v}" for es in rs.engines for v in es.verdicts) + "\n")


def _steps_table(configs: list[dict], ovh: _Overheads, series: Series, test: str, workload: str) -> Table:
    """crud/load/backup: median seconds per step, with the overhead vs plain (95% CI)."""
    table = Table(title=f"{test}: median seconds per step (overhead vs plain, 95% CI)", title_justify="left")
    table.add_column("step")
    for c in configs:
        table.add_column(c.get("label_shown", c["label"]), justify="right")
    for step in dict.fromkeys(step for _, step in series):
        cells = []
        for c in configs:
            values = series.get((c["label"], step), [])
            text = f"{median(values):.4f}" if values else "–"
            o = ovh.get(c["label"], workload, test, step)
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
    for column in ("config", "tables+indexes", "growth", "on disk (all files)", "growth"):
        table.add_column(column, justify="left" if column == "config" else "right")
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
    """Print the summary tables, after a warning for every label the evidence does not confirm."""
    for line in label_warnings(run_dir):
        console.print(f"WARNING: {line}", style="bold red", markup=False, highlight=False, soft_wrap=True)
    console.print(build_summary(run_dir, rs))
    for line in fault_lines(rs.manifest if rs is not None else _manifest(run_dir)):
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


def _manifest(run_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((run_dir / "manifest.json").read_text())
    except (OSError, ValueError):
        return {}


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
