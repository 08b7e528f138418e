"""One number everywhere: the terminal summary, summary.md, index.html and overhead.csv give the same estimate and
interval for every comparison, for a block-schedule run, a --precision run with an A/A twin, and
a run with a plain config alone (whose verdict still says what was measured)."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from tdebench.cli.summary import build_summary, overhead_text
from tdebench.report import build_report, write_report
from tdebench.report.model import RunSummary, summarize
from tdebench.report.fmt import fmt_ci, fmt_pct
from tdebench.results.rundir import COLUMNS
from tdebench.stats.sequential import StoppingRule

FIXTURE_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "rundir_sqlite"
QUERIES = [f"q{n:02d}" for n in range(1, 23)]
#: the terminal table's column of each of the power total's figures
COLUMN = {"elapsed": 4, "server_cpu": 5, "at_common_wait": 6}


def write_measurements(run: Path, rows: list[dict]) -> None:
    """measurements.csv of a synthetic run directory ``run`` (created)."""
    run.mkdir(parents=True)
    with open(run / "measurements.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def terminal(run: Path, rs: RunSummary | None = None) -> str:
    console = Console(record=True, width=250, color_system=None)
    console.print(build_summary(run, rs))
    return console.export_text()


def overhead_rows(run: Path) -> list[dict[str, str]]:
    with open(run / "report" / "overhead.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def _num(text: str) -> float | None:
    return float(text) if text not in ("", None) else None


def figure(row: dict[str, str]) -> tuple[str, str]:
    """(estimate, interval) of an overhead.csv row, formatted as every view formats them."""
    lo, hi = _num(row["ci_low_pct"]), _num(row["ci_high_pct"])
    return fmt_pct(float(row["overhead_pct"])), fmt_ci(lo, hi)


def cells(text: str, first: str) -> list[str]:
    """The cells of the terminal table row whose first cell is ``first``."""
    line = next(line for line in text.splitlines() if line.startswith(f"│ {first} "))
    return [c.strip() for c in line.strip("│").split("│")]


def check_every_figure(run: Path) -> list[dict[str, str]]:
    """Every headline and per-query overhead of overhead.csv, in the terminal, summary.md and index.html."""
    rs = summarize(run)
    write_report(rs, run / "report")
    text = terminal(run, rs)
    md = (run / "report" / "summary.md").read_text()
    html = (run / "report" / "index.html").read_text()
    rows = overhead_rows(run)
    checked = []
    for row in rows:
        est, ci = figure(row)
        if row["test"] == "power" and row["step"] == "total" and row["metric"] in COLUMN:
            column = COLUMN[row["metric"]]
            assert cells(text, row["config"])[column] == f"{est} ({ci})", (row, text)
            md_row = next(line for line in md.splitlines() if line.startswith(f"| {row['config']} |"))
            assert f"| {est} | {ci} |" in md_row, (row, md_row)
            assert f"{est}<span class=\"sub\">{ci}</span>" in html, row
            checked.append(row)
        elif row["test"] == "power" and row["step"] in QUERIES and row["metric"] == "elapsed":
            assert f"({est})" in cells(text, row["step"])[1 + _config_index(text, row["config"])], row
            md_row = next(line for line in md.splitlines() if line.startswith(f"| {row['step']} |"))
            assert f"| {est} | {ci} |" in md_row, (row, md_row)
            checked.append(row)
    section = md.split("## Verdict")[1].split("\n## ")[0]
    verdicts = [line[2:] for line in section.splitlines() if line.startswith("- **") and "threat model" not in line]
    assert verdicts
    for line in verdicts:  # "**engine** (headline): sentence" in summary.md, "engine: sentence" in the terminal
        engine, sentence = re.match(r"\*\*(\S+)\*\* \([^)]*\): (.*)", line).groups()
        assert f"{engine}: {sentence}" in " ".join(text.split()), sentence
    return checked


def _config_index(text: str, config: str) -> int:
    header = next(line for line in text.splitlines() if line.startswith("┃ query "))
    names = [c.strip() for c in header.strip("┃").split("┃")][1:]
    return next(i for i, n in enumerate(names) if n.startswith(config))


def test_block_schedule_fixture(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE_RUN, run)
    checked = check_every_figure(run)
    assert {r["step"] for r in checked} >= {"total", *QUERIES}


# a synthetic --precision run: plain, a second plain twin (A/A) and an encrypted config, 12 blocks -------------
def write_precision_run(run: Path, blocks: int = 12, second: tuple[str, str, float] | None = None,
                        wait: bool = False) -> None:
    """Two configs (three would add an ANOVA with Tukey HSD per step, seconds each): plain and ``second``; with
    ``wait``, the power total's time at a common wait per page read too (pages read from the disk)."""
    rng = np.random.default_rng(7)
    configs = [("mariadb-none", "none", 1.0)] + ([second] if second else [])
    plain_only = second is None
    rows = []
    for block in range(0, blocks + 1):
        drift = 1 + 0.05 * math.sin(block)
        for label, enc, factor in configs:
            base = {"run_id": "p", "block": block, "trial": block, "config": label, "engine": "mariadb",
                    "encryption": enc, "workload": "tpch", "stream": "", "started_at": "",
                    "status": "warmup" if block == 0 else "ok"}
            total = cpu = 0.0
            for i, step in enumerate(QUERIES):
                t = (0.2 + 0.02 * i) * factor * drift * math.exp(rng.normal(0, 0.01))
                c = t * 0.9 * math.exp(rng.normal(0, 0.005))
                total, cpu = total + t, cpu + c
                rows.append({**base, "test": "power", "step": step, "metric": "elapsed", "value": t, "unit": "s"})
                rows.append({**base, "test": "power", "step": step, "metric": "server_cpu", "value": c, "unit": "s"})
            rows.append({**base, "test": "power", "step": "total", "metric": "elapsed", "value": total, "unit": "s"})
            rows.append({**base, "test": "power", "step": "total", "metric": "server_cpu", "value": cpu, "unit": "s"})
            if wait:
                rows.append({**base, "test": "power", "step": "total", "metric": "at_common_wait",
                             "value": cpu + (total - cpu) / drift, "unit": "s"})
    write_measurements(run, rows)
    rule = StoppingRule(1.0, min_n=10, max_n=None)
    manifest = {"schema_version": 2, "run_id": "p", "status": "completed",
                "plan": {"workload": "tpch", "schedule": "query", "repeat": 1, "trials": 10, "warmup_trials": 1,
                         "workload_options": {"sf": 0.1}, "precision": 1.0},
                "configs": [{"label": c, "engine": "mariadb", "encryption": e} for c, e, _ in configs],
                "schedule": {"name": "query", "effective": "query", "repeat": 1},
                "conditions": [{"block": b, "config": c, "steal_pct": 0.5 + (9 if b == 7 else 0),
                                "foreign_cores": 0.1, "load1": 1.0, "mhz_changed": False}
                               for b in range(1, blocks + 1) for c, _, _ in configs],
                "blocks_run": blocks}
    if not plain_only:
        manifest["precision"] = {"rule": rule.manifest(), "stopped_by": "target met",
                                 "headline": {"test": "power", "step": "total", "metric": "elapsed"}}
    (run / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("second", [("mariadb-none-2", "none", 1.0),  # an A/A twin is compared like any config
                                    ("mariadb-tde-aes-256-ctr", "tde:aes-256-ctr", 1.04)])
def test_precision_run(tmp_path: Path, second: tuple[str, str, float]) -> None:
    run = tmp_path / "precise"
    write_precision_run(run, second=second)
    checked = check_every_figure(run)
    heads = {r["config"]: r for r in checked if r["step"] == "total" and r["metric"] == "elapsed"}
    assert set(heads) == {second[0]}
    assert {r["ci_method"] for r in heads.values()} == {"seq-ar1-upper"}  # the interval the rule checked
    md = (run / "report" / "summary.md").read_text()
    assert "Stopping rule (--precision 1%)" in md and "stopped by target met" in md
    assert re.search(rf"{second[0]}: Precision target ±1% (met|NOT met)", md)
    assert "half-width of" in md
    assert "Query schedule" in md and "block 7 mariadb-none: steal time" in md  # the spike is flagged, kept


def test_the_time_at_a_common_wait_per_read_is_one_number_everywhere_and_explained(tmp_path: Path) -> None:
    run = tmp_path / "disk"
    write_precision_run(run, second=("mariadb-tde-aes-256-ctr", "tde:aes-256-ctr", 1.04), wait=True)
    checked = check_every_figure(run)
    [row] = [r for r in checked if r["metric"] == "at_common_wait"]
    est, _ = figure(row)
    md = (run / "report" / "summary.md").read_text()
    assert f"Time at a common wait per page read {est[1:]} higher (95% CI " in md
    assert "| at a common read wait | wait 95% CI |" in md and "charges every twin the same wait" in md
    assert "at a common read wait" in (run / "report" / "index.html").read_text()


def test_plain_only_run_has_a_verdict(tmp_path: Path) -> None:
    run = tmp_path / "plain"
    write_precision_run(run, blocks=4)
    build_report(run)
    md = (run / "report" / "summary.md").read_text()
    verdict = md.split("## Verdict")[1].split("##")[0]
    assert "alone was measured: power total median" in verdict and "n = 4 trials" in verdict
    assert "alone was measured" in " ".join(terminal(run).split())


@pytest.mark.parametrize("o_pct, lo, hi", [(3.21, 1.0, 5.5), (-0.4, -1.2, 0.4)])
def test_terminal_cell_is_the_report_cell(o_pct: float, lo: float, hi: float) -> None:
    from tdebench.stats.overhead import Overhead

    o = Overhead("e", "c", "tpch", "total", 10, 1.0, 1.0, o_pct, lo, hi, 0.01, test="power", metric="elapsed")
    assert overhead_text(o) == f"{fmt_pct(o_pct)} ({fmt_ci(lo, hi)})"


# a synthetic interleaved TPC-C run: rounds are the pairing unit ---------------------------------------------
KINDS = ("new_order", "payment", "order_status", "delivery", "stock_level")


def write_tpcc_rounds_run(run: Path, blocks: int = 3, rounds: int = 6) -> None:
    """Plain and TDE twins, one VU step, ``rounds`` slices per block, TPM and latency percentiles per slice."""
    rng = np.random.default_rng(11)
    configs = [("mariadb-none", "none", 1.0), ("mariadb-tde-aes-256-ctr", "tde:aes-256-ctr", 0.95)]
    rows = []
    for block in range(0, blocks + 1):
        for r in range(1, rounds + 1):
            drift = 1 + 0.1 * math.sin(block * rounds + r)
            for label, enc, factor in configs:
                base = {"run_id": "t", "block": block, "trial": block, "config": label, "engine": "mariadb",
                        "encryption": enc, "workload": "tpcc", "test": "tpcc", "stream": "", "started_at": "",
                        "status": "warmup" if block == 0 else "ok", "round": r}
                tpm = 60000 * factor * drift * math.exp(rng.normal(0, 0.02))
                rows.append({**base, "step": "vu4", "metric": "tpm", "value": tpm, "unit": "tpm"})
                rows.append({**base, "step": "vu4", "metric": "nopm", "value": tpm * 0.45, "unit": "nopm"})
                for i, kind in enumerate(KINDS):
                    for pct, scale in ((50, 1.0), (95, 2.5), (99, 4.0)):
                        v = 0.002 * (1 + i) * scale / factor / drift * math.exp(rng.normal(0, 0.03))
                        rows.append({**base, "step": f"vu4.{kind}", "metric": f"latency_p{pct}", "value": v,
                                     "unit": "s"})
    write_measurements(run, rows)
    manifest = {"schema_version": 3, "run_id": "t", "status": "completed",
                "plan": {"workload": "tpcc", "schedule": "query", "repeat": 1, "trials": blocks, "warmup_trials": 1,
                         "workload_options": {"vus": [4], "duration": 30, "slice": 5}},
                "headline": {"test": "tpcc", "step": "vu4", "metric": "tpm"},
                "configs": [{"label": c, "engine": "mariadb", "encryption": e} for c, e, _ in configs],
                "schedule": {"name": "query", "effective": "query", "repeat": 1, "slice_s": 5.0,
                             "rounds_per_step": rounds}, "blocks_run": blocks}
    (run / "manifest.json").write_text(json.dumps(manifest))


def _md_section(md: str, title_part: str) -> str:
    return next(s for s in md.split("\n## ") if title_part in s.splitlines()[0])


def test_tpcc_rounds_run_shows_one_number_for_tpm_and_latency(tmp_path: Path) -> None:
    """TPM and every latency percentile of every kind: round-paired intervals, the same in every view."""
    run = tmp_path / "tpcc"
    write_tpcc_rounds_run(run)
    rs = summarize(run)
    write_report(rs, run / "report")
    text = " ".join(terminal(run, rs).split())
    md = (run / "report" / "summary.md").read_text()
    html = (run / "report" / "index.html").read_text()
    rows = [r for r in overhead_rows(run) if r["config"] == "mariadb-tde-aes-256-ctr"]
    checked = 0
    for row in rows:
        est, ci = figure(row)
        # paired per round, counted per block: the block is the independent unit (stats/load.per_block)
        assert row["pairing_unit"] == "block" and row["n"] == "3" and row["ci_method"] == "t-log-paired", row
        if row["metric"] == "tpm":
            assert f"{est} ({ci})" in text
            assert f"| {est} | {ci} |" in md.split("## Summary")[1].split("\n## ")[0]
        elif row["metric"].startswith("latency_p"):
            kind = row["step"].split(".")[1]
            cell = next(line for line in terminal(run, rs).splitlines() if "mariadb-tde" in line and f" {kind} " in line)
            assert f"{est} ({ci})" in " ".join(cell.split()), (row, cell)
            section = _md_section(md, f"p{row['metric'][-2:]} latency")
            line = next(line for line in section.splitlines() if line.startswith(f"| {row['step']} |"))
            assert re.search(re.escape(f"{est} ({ci}") + r"(\)| · )", line), (row, line)  # then the time it adds
        else:
            continue
        assert f"{est}<span class=\"sub\">{ci}" in html, row
        checked += 1
    assert checked == 1 + len(KINDS) * 3
    assert "trials would resolve" not in md  # paired per block, the hint counts blocks


# a synthetic encrypt run: MariaDB online (two thread counts, each after a restart that loads the key plugin,
# re-keying, the way back and the restart after it), SQLCipher offline, fscrypt offline by a copy ---------------
ENCRYPT_CONFIGS = [("mariadb-tde-aes-256-ctr", "mariadb", "tde:aes-256-ctr", ("t1", "t4")),
                   ("sqlite-sqlcipher-aes-256-cbc", "sqlite", "sqlcipher:aes-256-cbc", ("offline",)),
                   ("mariadb-fs-fscrypt", "mariadb", "fs:fscrypt", ("offline",))]
ONLINE_PHASES = ("before", "after_restart", "during_on", "after_on", "before_rekey", "during_rekey", "after_rekey",
                 "before_off", "during_off", "after_off")
OFFLINE_PHASES = ("before", "after_on", "after_rekey", "after_off")


def write_encrypt_run(run: Path, blocks: int = 3) -> None:
    """Per trial: every phase's TPM and p95 (the switch and the re-keying slow the background), each switch's
    time to done, an offline method's peak extra disk, the scans."""
    rng = np.random.default_rng(27)
    rows = []
    for block in range(1, blocks + 1):
        for label, engine, enc, cycles in ENCRYPT_CONFIGS:
            base = {"run_id": "e", "block": block, "trial": block, "config": label, "engine": engine,
                    "encryption": enc, "workload": "encrypt", "test": "encrypt", "stream": "", "started_at": "",
                    "status": "ok", "round": 0}

            def add(step: str, metric: str, value: float, unit: str) -> None:
                rows.append({**base, "step": step, "metric": metric, "value": value, "unit": unit})

            for cycle in cycles:
                phases = OFFLINE_PHASES if cycle == "offline" else ONLINE_PHASES
                for phase in phases:
                    slow = 0.5 if phase.startswith("during") else 0.9 if phase.startswith("after") else 1.0
                    tpm = 3000 * slow * math.exp(rng.normal(0, 0.05))
                    add(f"{cycle}.{phase}", "tpm", tpm, "tpm")
                    add(f"{cycle}.{phase}", "latency_p95", 0.02 / slow * math.exp(rng.normal(0, 0.05)), "s")
                    add(f"{cycle}.{phase}", "latency_max", 0.3 / slow * math.exp(rng.normal(0, 0.1)), "s")
                copies = enc.startswith("fs:")
                actions = ("on", "off") if copies else ("restart_on", "on", "rekey", "off", "restart_off") \
                    if cycle != "offline" else ("on", "rekey", "off")
                for action in actions:
                    seconds = 8.0 * math.exp(rng.normal(0, 0.1))
                    add(f"{cycle}.{action}", "time_to_done", seconds, "s")
                    if cycle == "offline" or action.startswith("restart"):
                        add(f"{cycle}.{action}", "downtime", seconds, "s")
                    if cycle == "offline":
                        add(f"{cycle}.{action}", "peak_extra_bytes", 80e6 * math.exp(rng.normal(0, 0.02)), "bytes")
                    if copies:
                        add(f"{cycle}.{action}", "copy_bytes_per_s", 90e6 * math.exp(rng.normal(0, 0.05)), "bytes/s")
                        add(f"{cycle}.{action}", "removed_bytes", 75e6, "bytes")
                if copies:
                    add(f"{cycle}.on.old_copy.scan", "canary_hits_in_scope", 8, "count")
                    add(f"{cycle}.on.old_copy.scan", "known_plaintext_hits_in_scope", 40000, "count")
                for scan in ("on", "rekey") if not copies else ("on",):
                    add(f"{cycle}.{scan}.scan", "canary_hits_in_scope", 0, "count")
                    add(f"{cycle}.{scan}.scan", "known_plaintext_hits_in_scope", 0, "count")
                    add(f"{cycle}.{scan}.scan", "hits_outside_scope", 12 if engine == "mariadb" else 0, "count")
    write_measurements(run, rows)
    manifest = {"schema_version": 3, "run_id": "e", "status": "completed",
                "plan": {"workload": "encrypt", "schedule": "block", "trials": blocks, "warmup_trials": 0,
                         "workload_options": {"threads": [1, 4], "steady": 30}},
                "headline": {"test": "encrypt", "step": "t4.on", "metric": "time_to_done"},
                "configs": [{"label": c, "engine": e, "encryption": s} for c, e, s, _ in ENCRYPT_CONFIGS],
                "blocks_run": blocks}
    (run / "manifest.json").write_text(json.dumps(manifest))


def test_encrypt_run_shows_one_number_for_every_switch(tmp_path: Path) -> None:
    """Time to done, TPM just before, and TPM and p95 meanwhile and after against it with their intervals: the
    same text in the terminal, summary.md, index.html and switching.csv, for the switch on, the re-keying (latency
    during vs before) and the way back."""
    from tdebench.report.encrypt_view import ratio_text
    from tdebench.stats.switching import ACTIONS
    from tdebench.report.fmt import fmt_bytes, fmt_value
    from tdebench.stats.paired import PairedRatio

    run = tmp_path / "encrypt"
    write_encrypt_run(run)
    rs = summarize(run)
    write_report(rs, run / "report")
    text = terminal(run, rs)
    md = (run / "report" / "summary.md").read_text()
    html = (run / "report" / "index.html").read_text()
    section = _md_section(md, "Switching encryption")
    with open(run / "report" / "switching.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * 5 + 3 + 2  # (t1, t4) x (restart, on, rekey, off, restart); sqlcipher 3; fscrypt 2

    def ratio(row: dict[str, str], prefix: str) -> str:
        mean = _num(row[f"{prefix}_ratio"])
        return ratio_text(None if mean is None else PairedRatio(int(row["trials"]), mean,
                                                                _num(row[f"{prefix}_ci95_low"]),
                                                                _num(row[f"{prefix}_ci95_high"])))
    names = {a: shown for a, (shown, *_) in ACTIONS.items()}
    for row in rows:
        offline = row["method"] == "offline"
        method = f"online, {row['threads']} thread(s)"
        if offline:
            method = "offline: service stopped" + (f", cycle {row['cycle']}" if row["cycle"] != "offline" else "")
        shown = [fmt_value(float(row["time_to_done_s"]), "s"), fmt_value(_num(row["tpm_baseline"]), "tpm")]
        if row["action"] != "restart_off":  # nothing runs after the last restart
            shown.append(ratio(row, "tpm_after"))
        if offline:
            shown.append(fmt_value(float(row["downtime_s"]), "s"))
        if row["cycle"] == "offline":
            shown.append(fmt_bytes(float(row["peak_extra_bytes"])))
        if row["copy_bytes_per_s"]:
            shown.append(f"{fmt_bytes(float(row['copy_bytes_per_s']))}/s")
        if not offline:
            shown += [ratio(row, "tpm_during"), ratio(row, "p95_during")]
            assert "[" in shown[-1] and row["p95_during_ci95_low"]  # an interval over the 3 trials
        # two tables (what the switch took, what the background felt): the row's cells are in one or the other
        md_lines = [line for line in section.splitlines()
                    if line.startswith(f"| {row['config']} | {method} | {names[row['action']]} |")]
        term_lines = [line for line in text.splitlines() if f"│ {row['config']} " in line and f" {method} " in line
                      and f" {names[row['action']]} " in line]
        html_rows = [r for r in html.split("<tr>") if f">{method}<" in r and f">{names[row['action']]}<" in r
                     and f">{row['config']}<" in r]
        for cell in shown:
            assert cell != "—", row
            assert any(f"| {cell} |" in line for line in md_lines), (cell, md_lines)
            assert any(f" {cell} " in line for line in term_lines), (cell, term_lines)
            assert any(f">{cell}<" in r for r in html_rows), (cell, html_rows)
    rekey = next(r for r in rows if r["cycle"] == "t4" and r["action"] == "rekey")
    assert rekey["baseline_phase"] == "t4.before_rekey" and float(rekey["p95_during_ratio"]) > 1.5
    # the verdict (no plain twin: the plaintext phases are the baseline) says each switch on in the same words
    verdict = _md_section(md, "Verdict")
    for row in (r for r in rows if r["action"] == "on"):
        said = f"switched on in {fmt_value(float(row['time_to_done_s']), 's')} (median of 3 trials)"
        if row["method"] != "offline":
            restart = next(r for r in rows if (r["config"], r["cycle"], r["action"]) == (row["config"], row["cycle"],
                                                                                         "restart_on"))
            said += f", after a restart with the service down {fmt_value(float(restart['downtime_s']), 's')}"
            said += f", TPM meanwhile {ratio(row, 'tpm_during')} of just before"
        assert said in verdict and said in html, said
    assert "no plain config (encryption none)" not in md
