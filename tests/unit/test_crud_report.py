"""Report sections for CRUD runs: per-operation tables with CIs, cipher floor, AES vs 3DES, storage (synthetic runs)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from tdebench.measure.cipherspeed import CipherSpeed, floor_for_spec, save_table
from tdebench.report import build_report, summarize
from tdebench.report.extras import compute

COLS = ["run_id", "block", "trial", "config", "engine", "encryption", "workload", "test", "stream", "step", "metric",
        "value", "unit", "started_at", "status"]
CONFIGS = (("pg-none", "none", 1.0), ("pg-aes", "column:aes-128", 1.5), ("pg-3des", "column:3des", 2.4))
GB = 1e9
# made-up but plausible speeds (bytes per second), one table for all tests: no timing in unit tests
SPEEDS = [CipherSpeed("AES-128-CBC", "encrypt", 1.4 * GB, 16384), CipherSpeed("AES-128-CBC", "decrypt", 8 * GB, 16384),
          CipherSpeed("3DES-CBC", "encrypt", 0.03 * GB, 16384), CipherSpeed("3DES-CBC", "decrypt", 0.03 * GB, 16384),
          CipherSpeed("AES-256-CTR", "encrypt", 8.2 * GB, 16384), CipherSpeed("AES-256-CTR", "decrypt", 8.2 * GB, 16384)]


def _write_run(run: Path, configs=CONFIGS, engine: str = "postgres") -> None:
    run.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(3)
    rows = []
    for block in range(0, 4):
        for config, enc, factor in configs:
            def add(test: str, step: str, metric: str, value: float, unit: str) -> None:
                rows.append({"run_id": "crud-test", "block": block, "trial": block, "config": config, "engine": engine,
                             "encryption": enc, "workload": "crud", "test": test, "stream": "", "step": step,
                             "metric": metric, "value": value, "unit": unit, "started_at": "",
                             "status": "warmup" if block == 0 else "ok"})
            total = 0.0
            for op, base in (("select", 0.5), ("insert", 1.0), ("delete", 0.8)):
                step = f"{op}_100000"
                t = base * factor * float(np.exp(rng.normal(0, 0.01)))
                total += t
                add("crud", step, "elapsed", t, "s")
                add("crud", step, "server_cpu", t * 0.8, "s")
                add("crud", step, "bytes", 6_200_000, "bytes")
                add("crud", step, "mb_per_s", 6_200_000 / t / 1024 ** 2, "MB/s")
                add("resources", step, "server_read_bytes", 50_000_000, "bytes")
                add("resources", step, "server_write_bytes", 20_000_000 if op != "select" else 0, "bytes")
            add("crud", "total", "elapsed", total, "s")
    with (run / "measurements.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLS)
        w.writeheader()
        w.writerows(rows)
    storage = {"none": 1.0, "column:aes-128": 1.8, "column:3des": 1.35, "tde:aes-256-ctr": 1.0}
    manifest = {"run_id": "crud-test", "plan": {"workload": "crud"}, "configs": [
        {"label": c, "engine": engine, "encryption": e, "storage_bytes": int(5e7 * storage[e]),
         "storage_tables": {"tables": {"persons": {"rows": 100, "table_bytes": int(1e7 * storage[e]),
                                                   "index_bytes": 2_000_000, "total_bytes": 0}},
                            "data_dir_bytes": int(5e7 * storage[e])}} for c, e, _ in configs]}
    (run / "manifest.json").write_text(json.dumps(manifest))
    save_table(run / "ciphers.json", SPEEDS)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("crud") / "run"
    _write_run(run)
    build_report(run)
    return run


@pytest.fixture(scope="module")
def summary(run: Path):
    return summarize(run)


def test_per_operation_tables_show_elapsed_cpu_and_mb_per_s_with_cis(run: Path) -> None:
    md = (run / "report" / "summary.md").read_text()
    for title in ("CRUD operations, elapsed", "CRUD operations, server CPU", "CRUD operations, MB/s"):
        assert f"## postgres: {title}" in md
    line = next(l for l in md.splitlines() if l.startswith("| insert_100000 |") and "MB/s" in l)
    assert line.count("–") >= 3 and "-33." in line  # medians with CIs; 1.5x slower -> -33% MB/s
    html = (run / "report" / "index.html").read_text()
    assert 'id="operations"' in html and 'href="#operations"' in html


def test_cipher_floor_uses_the_runs_table_and_the_resources_bytes(run: Path, summary) -> None:
    x = compute(summary)
    assert x.ciphers is not None and x.ciphers.source == "the run's ciphers.json"
    (ef,) = x.floors
    row = next(r for r in ef.rows if r.config == "pg-3des" and r.step == "insert_100000")
    assert row.floor_s == pytest.approx(floor_for_spec("column:3des", SPEEDS, 50_000_000, 20_000_000))
    assert row.overhead_s == pytest.approx(1.4, rel=0.05) and row.plain_s == pytest.approx(1.0, rel=0.05)
    md = (run / "report" / "summary.md").read_text()
    assert "## Cipher floor" in md and "3DES-CBC" in md and "the run's ciphers.json" in md


def test_aes_vs_3des_section_compares_like_the_study(run: Path, summary) -> None:
    (pair,) = compute(summary).pairs
    assert (pair.aes, pair.des) == ("pg-aes", "pg-3des")
    select = next(r for r in pair.rows if r.step == "select_100000")
    assert select.ratio == pytest.approx(1.6, rel=0.03) and select.ci_low < 1.6 < select.ci_high
    assert pair.cipher_ratio == pytest.approx(1.4 / 0.03)
    md = (run / "report" / "summary.md").read_text()
    assert "## AES vs 3DES" in md and "column:3des took" in md and "where the difference is resolved" in md


def test_storage_section_shows_growth_vs_plain(run: Path) -> None:
    md = (run / "report" / "summary.md").read_text()
    assert "## Storage: postgres" in md and "(×1.800)" in md and "(×1.350)" in md


def test_no_3des_no_comparison_and_report_time_cipher_table_is_kept(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _write_run(run, configs=(("m-none", "none", 1.0), ("m-ctr", "tde:aes-256-ctr", 1.05)), engine="mariadb")
    (run / "ciphers.json").unlink()
    build_report(run)
    md = (run / "report" / "summary.md").read_text()
    assert "## AES vs 3DES" not in md and "## Cipher floor" in md and "measured when this report" in md
    kept = (run / "report" / "ciphers.json").read_bytes()
    build_report(run)
    assert (run / "report" / "ciphers.json").read_bytes() == kept
    assert (run / "report" / "summary.md").read_text() == md


def test_html_with_the_new_sections_is_well_formed_and_self_contained(run: Path) -> None:
    from tests.unit.test_report_build import _Checker

    html = (run / "report" / "index.html").read_text()
    for anchor in ("operations", "storage", "cipher-floor", "aes-3des"):
        assert f'id="{anchor}"' in html and f'href="#{anchor}"' in html
    assert "http://" not in html and "https://" not in html and "<script" not in html.lower()
    checker = _Checker()
    checker.feed(html)
    assert checker.errors == [] and checker.stack == []
    assert len(checker.ids) == len(set(checker.ids))
